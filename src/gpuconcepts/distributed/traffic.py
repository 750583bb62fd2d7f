"""The loopback interface's byte counter: what the gloo processes sent, read from Linux.

On loopback every byte sent is also received, so the transmit counter alone is the traffic.
The values it fills (:class:`~gpuconcepts.results.distributed.Collective` and the sizes of the
workloads) live in :mod:`gpuconcepts.results.distributed`, which a Run reads without torch.

>>> parse_loopback("  lo: 3193 29 0 0 0 0 0 0 4200 29 0 0 0 0 0 0\\n eth0: 1 2 0 0 0 0 0 0 3 4 0 0 0 0 0 0")
4200
"""

from __future__ import annotations

from pathlib import Path

from gpuconcepts.errors import GpuConceptsError

NET_DEV = Path("/proc/net/dev")
"""Linux's per-interface byte counters."""


def parse_loopback(text: str) -> int:
    """Bytes the loopback interface ``lo`` has transmitted, from the text of /proc/net/dev.

    On loopback every byte sent is also received, so the transmit counter alone is the
    traffic: each byte counted once, with the TCP/IP headers it travelled in.
    """
    for line in text.splitlines():
        name, sep, counters = line.partition(":")
        if sep and name.strip() == "lo":
            return int(counters.split()[8])
    raise GpuConceptsError("no loopback interface 'lo' in /proc/net/dev")


def loopback_bytes(path: Path = NET_DEV) -> int:
    """The loopback interface's transmitted bytes now."""
    return parse_loopback(path.read_text(encoding="ascii"))


def loopback_available(path: Path = NET_DEV) -> bool:
    """True when this machine exposes loopback counters (Linux)."""
    try:
        loopback_bytes(path)
    except (OSError, GpuConceptsError):
        return False
    return True
