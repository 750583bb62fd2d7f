"""What a distributed run measured, as values a Run saves and reads back: the sizes of its
workloads, each measured collective, the latency-bandwidth (α-β) fit of the all-reduce sweep,
and the whole report.

:mod:`gpuconcepts.distributed` measures them (spawned processes, torch),
:mod:`gpuconcepts.claims.distributed` judges them and :mod:`gpuconcepts.render.text.distributed`
writes them for people; none of those is needed to read or write them: importing this module
loads neither torch nor a judge. Pure values and arithmetic (numpy): what the processes
measured arrives as plain records and becomes :class:`Collective` values, which know their
statistics.

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
from typing import Annotated, Any, Literal

import numpy as np

from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.measurement import block_bounds, quartiles
from gpuconcepts.records import POSITIVE, at_least, to_record
from gpuconcepts.units import number, plural

PHASES = ("pack", "exchange", "unpack")
"""The parts of a sharded lookup timed apart: the copies into one buffer per destination, the
all-to-all itself, and the reassembly of what arrived."""


SWEEPS = ("size sweep", "world-size sweep", "pipeline sweep")
"""Kinds of collective measured to fit or sweep, not shown as a collective of their own."""


def _multiple(value: int, world: int) -> int:
    """``value`` rounded up to a multiple of ``world``."""
    return world * math.ceil(value / world)


@dataclass(frozen=True)
class Sizes:
    """The sizes of every workload; the embedding sizes are rounded to multiples of W.

    >>> from gpuconcepts.distributed import quick_sizes
    >>> quick_sizes().embedding(3)
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
    timed_blocks: int = 1
    """The independent blocks each workload's repetitions are split into, each after its own
    warm-up (:class:`~gpuconcepts.distributed.meter.Meter`): at least
    :data:`~gpuconcepts.claims.thresholds.MIN_BLOCKS` in the presets, so an interval includes
    the variation from one moment of the run to the next (runs recorded before run schema 8
    timed one)."""

    def __post_init__(self) -> None:
        if isinstance(self.timed_blocks, bool) or not 1 <= self.timed_blocks <= self.repeats:
            raise GpuConceptsError(
                f"Sizes: timed_blocks must be from 1 to the repeats ({self.repeats}); "
                f"got {self.timed_blocks!r}"
            )

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
    blocks: int = 1
    """The independent blocks the repetitions were timed in, each after its own warm-up: every
    per-repetition sequence above (``seconds``, ``loopback_bytes``, ``bubble``,
    ``busy_seconds``, each of ``phases``, ``order``) is cut into them the same way, in
    consecutive slices (:func:`~gpuconcepts.measurement.block_bounds`). A judge's bootstrap
    resamples the blocks, then the repetitions inside them. Runs recorded before run schema 8
    timed one block."""

    def __post_init__(self) -> None:
        sequences = {
            "seconds": self.seconds,
            "loopback_bytes": self.loopback_bytes or (),
            "bubble": self.bubble,
            "busy_seconds": self.busy_seconds,
            "order": self.order,
            **{f"phases[{k!r}]": v for k, v in self.phases.items()},
        }
        short = {name: len(v) for name, v in sequences.items() if 0 < len(v) < self.blocks}
        if isinstance(self.blocks, bool) or self.blocks < 1 or short:
            raise GpuConceptsError(
                f"Collective {self.name!r}: blocks must be at least 1 and at most the "
                f"repetitions of each of its sequences; got {self.blocks!r} (repetitions {short})"
            )

    @property
    def timed_in(self) -> str:
        """How the repetitions were timed, said beside an interval drawn from them.

        >>> one = Collective("x", "pipeline", "f", {}, 1.0, 1, None, (1.0, 2.0), 0.0)
        >>> one.timed_in
        'timed in one block: its interval misses the variation from moment to moment'
        >>> from dataclasses import replace
        >>> replace(one, seconds=(1.0,) * 10, blocks=3).timed_in
        'timed in 3 blocks of 3 to 4 repetitions'
        """
        if self.blocks == 1:
            return "timed in one block: its interval misses the variation from moment to moment"
        bounds = block_bounds(len(self.seconds), self.blocks)
        low, high = min(e - s for s, e in bounds), max(e - s for s, e in bounds)
        each = str(low) if low == high else f"{low} to {high}"
        return f"timed in {self.blocks} blocks of {each} repetition{'s' * (high > 1)}"

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
        """First and third quartile of the times (:func:`gpuconcepts.measurement.quartiles`)."""
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
                "blocks": self.blocks,
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


@dataclass(frozen=True)
class DistributedReport:
    """Everything one ``gpuconcepts distributed`` run measured, with the α-β fit of its sweep
    (the claims are judged from it by :func:`gpuconcepts.claims.distributed.judge_distributed`)."""

    world_size: Annotated[int, at_least(2)]
    backend: Literal["gloo", "nccl"]
    quick: bool
    device: str
    sizes: Sizes
    collectives: tuple[Collective, ...]
    fit: AlphaBeta | None
    cores: Annotated[int, POSITIVE]
    seconds: float
    timings: Mapping[str, float]
    fit_problem: str = ""
    """Why there is no fit (``fit`` is None): the sweep's times did not grow with size."""

    def of_kind(self, kind: str) -> tuple[Collective, ...]:
        """The collectives of one kind (``"sharded embedding"``, ``"size sweep"``, ...)."""
        return tuple(c for c in self.collectives if c.kind == kind)

    def collective(self, formula: str) -> Collective:
        """The main (not sweep) collective measured against ``formula``."""
        for c in self.main:
            if c.formula == formula:
                return c
        raise GpuConceptsError(f"no collective measured against {formula!r} in this run")

    @property
    def main(self) -> tuple[Collective, ...]:
        """The collectives the book shows: every kind but the sweeps."""
        return tuple(c for c in self.collectives if c.kind not in SWEEPS)

    @property
    def crowded(self) -> str:
        """Why this run's times are not read (its processes shared cores); "" when they are."""
        if self.cores >= self.world_size:
            return ""
        return (
            f"the {self.world_size} processes shared {plural(self.cores, 'free core')}, so "
            "their times measure the scheduler, not the exchange (the bytes are still counted)"
        )

    @property
    def growth(self) -> tuple[Collective, ...]:
        """The all-reduce of the same gradient at each group size, one per W (smallest first):
        the world-size sweep, else the data-parallel all-reduce."""
        by_world: dict[int, Collective] = {}
        for c in (*self.of_kind("world-size sweep"), *self.of_kind("data parallel")):
            by_world.setdefault(c.inputs["W"], c)
        return tuple(by_world[w] for w in sorted(by_world))

    @property
    def pipelines(self) -> tuple[Collective, ...]:
        """The pipeline and its sweep over the micro-batches, fewest micro-batches first."""
        swept = (*self.of_kind("pipeline"), *self.of_kind("pipeline sweep"))
        return tuple(sorted(swept, key=lambda c: c.schedule["m"]))

    def predicted_seconds(self, c: Collective) -> float | None:
        """The fit's time for ``c``; None for the pipeline, whose time is mostly arithmetic."""
        if c.kind == "pipeline" or self.fit is None:
            return None
        return self.fit.seconds(c.formula_bytes, c.collectives)

    def record(self) -> dict[str, Any]:
        """Every measured value as plain JSON, losslessly: what a Run saves. (:meth:`to_dict`
        is the CLI's view: statistics and predictions.)"""
        return to_record(self)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form for ``gpuconcepts distributed --json``: every collective with
        formula bytes, loopback bytes, time and the fit's prediction (the command adds the
        claims)."""
        return {
            "world_size": self.world_size,
            "backend": self.backend,
            "quick": self.quick,
            "device": self.device,
            "cores": self.cores,
            "seconds": self.seconds,
            "timings": dict(self.timings),
            "sizes": self.sizes.to_dict(),
            "fit": None if self.fit is None else self.fit.to_dict(),
            "fit_problem": self.fit_problem,
            "collectives": [
                c.to_dict() | {"predicted_seconds": self.predicted_seconds(c)}
                for c in self.collectives
            ],
        }
