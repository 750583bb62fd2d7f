"""Device choice and what a run probes of its processor: the device, its model, threads and
clock, and the cores other programs keep busy. Its caches and memory are in
:mod:`~gpuconcepts.measure.memory`."""

# torch is imported inside functions on purpose (README, Rules: 3).
# ruff: noqa: PLC0415

from __future__ import annotations

import contextlib
import os
import platform
import time
from collections.abc import Iterator
from pathlib import Path

from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.units import plural

DEVICES = ("auto", "cpu", "cuda")
"""Device specs the CLI and :func:`resolve_device` accept."""


# -- devices ---------------------------------------------------------------------------------
def _cuda_available() -> bool:
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is an optional extra
        return False
    return bool(torch.cuda.is_available())


def resolve_device(spec: str = "auto") -> str:
    """The device a spec names: ``"auto"`` picks CUDA when a GPU is present, else the CPU.

    >>> resolve_device("cpu")
    'cpu'
    >>> resolve_device("tpu")
    Traceback (most recent call last):
    ...
    gpuconcepts.errors.GpuConceptsError: device 'tpu' is not one of auto, cpu, cuda

    Raises:
        GpuConceptsError: for an unknown spec, or ``"cuda"`` when no CUDA device is usable.
    """
    text = spec.strip().lower()
    if text not in DEVICES:
        raise GpuConceptsError(f"device {spec!r} is not one of {', '.join(DEVICES)}")
    if text == "cpu":
        return "cpu"
    if _cuda_available():
        return "cuda"
    if text == "cuda":
        raise GpuConceptsError(
            "device 'cuda' was asked for, but torch sees no CUDA device "
            "(no GPU, no driver, or a CPU-only torch build)"
        )
    return "cpu"


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo (falls back to :func:`platform.processor`)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def cpu_threads() -> int:
    """Threads torch uses for CPU kernels (all cores unless the user said otherwise)."""
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is an optional extra
        return os.cpu_count() or 1
    return int(torch.get_num_threads())


def device_name(device: str) -> str:
    """A human description of a resolved device.

    >>> device_name("cpu").startswith("cpu (")
    True
    """
    if device == "cpu":
        return f"cpu ({cpu_model()}, {plural(cpu_threads(), 'thread')})"
    if device == "cuda":
        import torch

        return f"cuda ({torch.cuda.get_device_name(torch.cuda.current_device())})"
    raise GpuConceptsError(f"device {device!r} is not a resolved device (cpu or cuda)")


# -- clock and busy cores --------------------------------------------------------------------
def _cpuinfo_mhz(cpuinfo: Path) -> list[float]:
    """Each core's "cpu MHz" in /proc/cpuinfo (none when unreadable)."""
    try:
        lines = cpuinfo.read_text().splitlines()
    except OSError:
        return []
    mhz: list[float] = []
    for line in lines:
        key, _, value = line.partition(":")
        if key.strip() == "cpu MHz":
            try:
                mhz.append(float(value))
            except ValueError:
                continue
    return mhz


def cpu_mhz(cpuinfo: Path = Path("/proc/cpuinfo"), *, fastest: bool = False) -> float | None:
    """The mean clock of the CPU's cores from /proc/cpuinfo ("cpu MHz"), or the fastest core's
    with ``fastest``, when it says (a clock of the moment: boost may pass it)."""
    mhz = _cpuinfo_mhz(cpuinfo)
    if not mhz:
        return None
    return max(mhz) if fastest else sum(mhz) / len(mhz)


BUSY_CORE_FRACTION = 0.5
"""A core another program kept busy more than half of a short sample is left to it: a kernel
whose threads share a busy core runs at the pace of its slowest thread, which would slow some
kernels far more than others and decide verdicts by the load rather than by the hardware."""


def parse_proc_stat(text: str) -> dict[int, tuple[int, int]]:
    r"""(busy, total) jiffies of each core from the text of /proc/stat.

    >>> parse_proc_stat("cpu  9 0 9 9 0\ncpu0 10 0 5 80 5\ncpu1 1 0 1 98 0\n")
    {0: (15, 100), 1: (2, 100)}
    """
    out = {}
    for line in text.splitlines():
        name, *fields = line.split()
        if not name.startswith("cpu") or name == "cpu":
            continue
        values = [int(v) for v in fields]
        idle = values[3] + (values[4] if len(values) > 4 else 0)  # idle and iowait
        out[int(name[3:])] = (sum(values) - idle, sum(values))
    return out


def busy_cores(sample_seconds: float = 0.5, stat: Path = Path("/proc/stat")) -> frozenset[int]:
    """The cores of this process's affinity that other programs kept busy over a short sample
    (more than :data:`BUSY_CORE_FRACTION`; empty where /proc/stat cannot be read)."""
    try:
        before = parse_proc_stat(stat.read_text())
        time.sleep(sample_seconds)
        after = parse_proc_stat(stat.read_text())
        mine = os.sched_getaffinity(0)
    except (OSError, AttributeError, ValueError):
        return frozenset()
    busy = set()
    for core in mine & before.keys() & after.keys():
        worked = after[core][0] - before[core][0]
        elapsed = after[core][1] - before[core][1]
        if elapsed > 0 and worked / elapsed > BUSY_CORE_FRACTION:
            busy.add(core)
    return frozenset(busy)


@contextlib.contextmanager
def free_cores(device: str, busy: frozenset[int] | None = None) -> Iterator[frozenset[int]]:
    """Run the block on the cores no other program keeps busy (``busy``, else
    :func:`busy_cores` now): this process's affinity and torch's threads are narrowed to them
    (at least one core), then restored. On a GPU (whose kernels do not share the CPU's cores)
    or a quiet machine, nothing changes. Yields the cores left out."""
    import torch

    if device != "cpu":
        busy = frozenset()
    elif busy is None:
        busy = busy_cores()
    mine = os.sched_getaffinity(0) if busy else set()
    free = mine - busy
    if not busy or not free:
        yield frozenset()
        return
    threads = torch.get_num_threads()
    os.sched_setaffinity(0, free)
    torch.set_num_threads(min(threads, len(free)))
    try:
        yield busy
    finally:
        torch.set_num_threads(threads)
        os.sched_setaffinity(0, mine)
