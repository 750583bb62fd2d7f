"""Sizes, the loopback byte counter, measured collectives and the latency-bandwidth fit.

Pure values and arithmetic (numpy, no torch): what the spawned processes measured arrives
here as plain records and becomes :class:`Collective` values, which know their statistics.

>>> parse_loopback("  lo: 3193 29 0 0 0 0 0 0 4200 29 0 0 0 0 0 0\\n eth0: 1 2 0 0 0 0 0 0 3 4 0 0 0 0 0 0")
4200
>>> fit = fit_alpha_beta([1e3, 1e6, 1e7], [1.01e-4, 1.1e-3, 1.01e-2])
>>> round(fit.alpha_s * 1e6), round(fit.bytes_per_s / 1e9, 2)
(100, 1.0)
>>> round(fit.seconds(4e6), 4)
0.0041
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.measure import quartiles
from gpuconcepts.records import from_record
from gpuconcepts.sizes import load_part_sizes
from gpuconcepts.units import number

NET_DEV = Path("/proc/net/dev")
"""Linux's per-interface byte counters."""


PHASES = ("pack", "exchange", "unpack")
"""The parts of a sharded lookup timed apart: the copies into one buffer per destination, the
all-to-all itself, and the reassembly of what arrived."""


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


def _multiple(value: int, world: int) -> int:
    """``value`` rounded up to a multiple of ``world``."""
    return world * math.ceil(value / world)


@dataclass(frozen=True)
class Sizes:
    """The sizes of every workload; the embedding sizes are rounded to multiples of W.

    >>> QUICK.embedding(3)
    (6, 2049, 20001, 66, 8)
    """

    repeats: int
    dp_width: int
    dp_batch: int
    sweep: tuple[int, ...]
    emb_batch: int
    emb_rows: int
    emb_width: int
    emb_lookups: int
    tables_per_process: int
    tp_batch: int
    tp_seq: int
    tp_width: int
    pp_batch: int
    pp_width: int
    pp_micro: int
    pp_layers: int
    pp_sweep: tuple[int, ...] = ()
    """Micro-batch counts m the pipeline also runs, each micro-batch of pp_batch / pp_micro
    rows as at pp_micro, so that only m changes (none: the pipeline at pp_micro alone)."""

    def embedding(self, world: int) -> tuple[int, int, int, int, int]:
        """(n_tables, B, N, d, L) for W processes: whole tables, rows, columns per process."""
        return (
            self.tables_per_process * world,
            _multiple(self.emb_batch, world),
            _multiple(self.emb_rows, world),
            _multiple(self.emb_width, world),
            self.emb_lookups,
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self) | {"sweep": list(self.sweep), "pp_sweep": list(self.pp_sweep)}


QUICK = from_record(Sizes, load_part_sizes("distributed", quick=True), "[distributed.quick]")
"""Sizes for ``--quick`` (``conf/presets.toml``, ``[distributed.quick]`` over
``[distributed]``): every message at least a few hundred kB, so headers stay small."""

FULL = from_record(Sizes, load_part_sizes("distributed", quick=False), "[distributed]")
"""The default sizes (``conf/presets.toml``, ``[distributed]``)."""


@dataclass(frozen=True)
class Collective:
    """One measured workload: the formula's bytes per device, the loopback's, and the time.

    ``loopback_bytes`` holds the bytes each sending process sent in each repetition (None
    where the traffic does not cross the loopback interface, as with NCCL). Other programs'
    traffic can only add bytes, so the smallest repetition is the estimate.
    """

    name: str
    kind: str
    formula: str
    inputs: Mapping[str, int]
    formula_bytes: float
    senders: int
    loopback_bytes: tuple[float, ...] | None
    seconds: tuple[float, ...]
    max_error: float
    bubble: tuple[float, ...] = ()
    schedule: Mapping[str, int] = field(default_factory=dict)
    busy_seconds: tuple[float, ...] = ()
    solo_seconds: float | None = None
    phases: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    """Seconds of each of :data:`PHASES` per repetition (a sharded lookup; empty otherwise)."""
    order: tuple[int, ...] = ()
    """Where the lookup ran in each shuffled round (0: first), paired with the repetitions."""

    @property
    def measured_bytes(self) -> float | None:
        """Bytes per sending device: the smallest repetition (noise only adds)."""
        return None if self.loopback_bytes is None else min(self.loopback_bytes)

    @property
    def bytes_ratio(self) -> float | None:
        """Measured over formula bytes; a little above 1 is the TCP/IP headers."""
        measured = self.measured_bytes
        return None if measured is None else measured / self.formula_bytes

    @property
    def bytes_interval(self) -> tuple[float, float] | None:
        """Smallest and largest repetition, bytes per sending device."""
        raw = self.loopback_bytes
        return None if raw is None else (min(raw), max(raw))

    @property
    def bubble_median(self) -> float:
        """The middle of the measured bubbles, sorted (of an even count, the upper middle one)."""
        return sorted(self.bubble)[len(self.bubble) // 2]

    @property
    def median_seconds(self) -> float:
        """Median time of one repetition (the slowest process's)."""
        return float(np.median(self.seconds))

    @property
    def exchange_seconds(self) -> tuple[float, ...]:
        """The collective's own time per repetition: the all-to-all alone where the packing
        and unpacking around it were timed apart, else the whole repetition."""
        return self.phases.get("exchange", self.seconds)

    @property
    def iqr_seconds(self) -> tuple[float, float]:
        """First and third quartile of the times (:func:`gpuconcepts.measure.quartiles`)."""
        return quartiles(self.seconds)

    @property
    def slowdown(self) -> float | None:
        """A pipeline stage's median busy time in the pipeline over its time alone: near 1
        when the stages really ran side by side."""
        if not self.busy_seconds or not self.solo_seconds:
            return None
        return float(np.median(self.busy_seconds)) / self.solo_seconds

    @property
    def collectives(self) -> int:
        """Collective calls per repetition: the tensor-parallel step makes two."""
        return 2 if self.kind == "tensor parallel" else 1

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form with the statistics."""
        interval = self.bytes_interval
        return {
            "name": self.name,
            "kind": self.kind,
            "formula": self.formula,
            "inputs": dict(self.inputs),
            "formula_bytes": self.formula_bytes,
            "loopback_bytes": self.measured_bytes,
            "loopback_interval": None if interval is None else list(interval),
            "bytes_ratio": self.bytes_ratio,
            "seconds": self.median_seconds,
            "seconds_iqr": list(self.iqr_seconds),
            "max_error": self.max_error,
            **dict(self.schedule),
            **({"slowdown": self.slowdown} if self.slowdown is not None else {}),
            "repetitions": {
                "loopback_bytes": None
                if self.loopback_bytes is None
                else list(self.loopback_bytes),
                "seconds": list(self.seconds),
                **({"bubble": list(self.bubble)} if self.bubble else {}),
                **({"busy_seconds": list(self.busy_seconds)} if self.busy_seconds else {}),
                **({"phases": {k: list(v) for k, v in self.phases.items()}} if self.phases else {}),
                **({"order": list(self.order)} if self.order else {}),
            },
        }


@dataclass(frozen=True)
class AlphaBeta:
    """Latency-bandwidth model of a collective: ``seconds = calls·alpha + bytes / bandwidth``."""

    alpha_s: float
    bytes_per_s: float
    points: int

    def seconds(self, bytes_per_device: float, calls: int = 1) -> float:
        """Predicted time of ``calls`` collectives that send ``bytes_per_device`` in all."""
        return calls * self.alpha_s + bytes_per_device / self.bytes_per_s

    def to_dict(self) -> dict[str, float]:
        """JSON-ready form."""
        return {"alpha_s": self.alpha_s, "bytes_per_s": self.bytes_per_s, "points": self.points}


def fit_alpha_beta(bytes_per_device: Sequence[float], seconds: Sequence[float]) -> AlphaBeta:
    """Least squares of ``t = alpha + beta·bytes`` in relative error, so that the small
    messages (which fix alpha) weigh as much as the large ones (which fix beta)."""
    x = np.asarray(bytes_per_device, dtype=float)
    t = np.asarray(seconds, dtype=float)
    if x.size < 2 or np.ptp(x) == 0:
        raise GpuConceptsError(
            f"an alpha-beta fit needs at least 2 message sizes; got {x.size} ({x.tolist()})"
        )
    design = np.column_stack([1 / t, x / t])
    (alpha, beta), *_ = np.linalg.lstsq(design, np.ones_like(t), rcond=None)
    if beta <= 0:
        raise GpuConceptsError(
            "alpha-beta fit: time does not grow with message size "
            f"(slope {number(beta)} s/byte over {x.size} sizes)"
        )
    return AlphaBeta(alpha_s=float(max(alpha, 0.0)), bytes_per_s=float(1 / beta), points=x.size)
