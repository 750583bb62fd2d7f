"""A device's measured ceilings: :class:`Peaks` (compute, DRAM, each cache level, the latency
floors) and the sweeps measured with them, each once, by microbenchmarks apart from any kernel.

>>> peaks = Peaks(device="cpu", flops_per_s=1e11, bytes_per_s=1e10, dtype="float32")
>>> peaks.ridge_point
10.0
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from typing import Annotated, Any, ClassVar, Literal

from gpuconcepts import formulas
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.records import POSITIVE, to_record
from gpuconcepts.roofline.points import cold_key, random_key, random_rows_per_call


@dataclass(frozen=True)
class MemoryLevel:
    """One level of the memory hierarchy and the bandwidth measured from it.

    ``size_bytes`` is the cache's size (None for DRAM, the last level).
    """

    name: str
    size_bytes: Annotated[int, POSITIVE] | None
    bytes_per_s: Annotated[float, POSITIVE]


@dataclass(frozen=True)
class RateSweep:
    """A diagnosis's sweep, measured once with the peaks and apart from every kernel: the rate
    one canonical call of a mechanism reached at each working set, as (bytes, work per
    second); the ``workload`` whose kernels it diagnoses; the ``count`` of such a kernel it
    rates (its ``flops`` or its ``bytes``); and ``source``, what measured it, in words.

    >>> s = RateSweep("cnn-depthwise", "flops", ((2**20, 4e10), (2**26, 1e10)), "a stencil")
    >>> s.rate_at(2**21, Peaks("cpu", 1e11, 1e10, "f")), s.rate_at(2**25, Peaks("cpu", 1e11, 1e10, "f"))
    (40000000000.0, 10000000000.0)
    >>> RateSweep("cnn-depthwise", "flops", (), "a stencil")
    Traceback (most recent call last):
    ...
    gpuconcepts.errors.GpuConceptsError: RateSweep: points must hold at least one (bytes, rate) point; got ()
    """

    workload: str
    count: Literal["flops", "bytes"]
    points: tuple[tuple[Annotated[int, POSITIVE], Annotated[float, POSITIVE]], ...]
    source: str

    def __post_init__(self) -> None:
        if not self.points:
            raise GpuConceptsError(
                f"RateSweep: points must hold at least one (bytes, rate) point; got {self.points!r}"
            )
        for size, rate in self.points:
            if not (size > 0 and math.isfinite(rate) and rate > 0):
                raise GpuConceptsError(
                    f"RateSweep: each point's bytes and rate must be positive and finite; "
                    f"got {(size, rate)!r}"
                )

    def rate_at(self, working_set: float, peaks: Peaks) -> float:
        """The rate of the point nearest ``working_set`` (on a log scale) among those the same
        memory level serves (:meth:`Peaks.level_of`), or among all when that level has none:
        a mechanism runs at the rate of the memory that feeds it."""
        level = peaks.level_of(int(working_set))
        same = [p for p in self.points if peaks.level_of(p[0]) == level] or list(self.points)
        nearest = min(same, key=lambda p: abs(math.log(p[0] / max(working_set, 1.0))))
        return nearest[1]


@dataclass(frozen=True)
class Peaks:
    """Measured ceilings of one device: compute (large GEMM), bandwidth (STREAM-like) and,
    when measured, one bandwidth per cache level and a latency floor.

    ``bytes_per_s`` is DRAM's: the STREAM triad's median on arrays far beyond every cache (runs
    recorded before 2026-12-07 hold the best of a read, a copy and a triad); the three are each
    kept when known. ``op_seconds`` is the floor of one operation dispatched from inside the
    framework (the chain roof's unit), ``cold_latency_seconds`` the latency floor of a call that
    follows a cache flush (the floor of a kernel timed flushed); ``random_sweep`` holds the
    random-access sweep as (table bytes, row bytes, rows per call, line fetches per second),
    read in whole transfer units of ``line_bytes`` (:meth:`random_lines_per_s`; a point of three
    entries, saved before calls of several sizes were swept, was measured in calls of
    :data:`~gpuconcepts.roofline.points.RANDOM_ROWS_BEFORE` rows); ``cold_sweep`` the seconds of
    reading an array once right after a cache flush, as (bytes, seconds) (:meth:`cold_seconds`);
    ``gemm_sweep`` the library's matrix product at small shapes, as (rows, width, flushed,
    FLOP/s) of a rows × width by width × width product (:meth:`gemm_point`);
    ``activation_per_s`` the elements per second of an activation (``tanh``) over an array a
    cache holds, the rate of the work a product kernel does beside its products.
    ``physical_flops_per_s`` is the hardware's limit (cores × vector lanes × FMA units × 2 ×
    clock, or a GPU's datasheet), drawn above the measured roof; ``threads`` the CPU threads the
    ceilings were measured on (None on a GPU), ``sweep_rounds`` the rounds of each sweep.
    ``levels`` lists the caches measured by the working-set sweep (fastest first, the points of
    the sweep in ``sweep`` as (bytes, bytes/s)); ``latency_seconds`` is the time of a minimal
    kernel (launch overhead included on a GPU): nothing runs faster.

    ``device`` is the kind of device (``cpu`` or ``cuda``), which names the memory roof
    (``HBM`` on ``cuda``, else ``DRAM``); ``name`` says whose roofs these are for people (a
    datasheet GPU's name), the device kind when not given.

    >>> Peaks(device="cuda", flops_per_s=989e12, bytes_per_s=3.35e12, dtype="bfloat16").ridge_point
    295.2238805970149
    >>> Peaks("cuda", 989e12, 3.35e12, "bf16", name="H100 SXM").memory_roofs[-1].name
    'HBM'
    """

    device: str
    flops_per_s: float
    bytes_per_s: float
    dtype: str
    copy_bytes_per_s: float | None = None
    triad_bytes_per_s: float | None = None
    levels: tuple[MemoryLevel, ...] = ()
    sweep: tuple[tuple[int, float], ...] = ()
    latency_seconds: float | None = None
    read_bytes_per_s: float | None = None
    physical_flops_per_s: float | None = None
    op_seconds: float | None = None
    cold_latency_seconds: float | None = None
    line_bytes: int | None = None
    random_sweep: tuple[tuple[int, int, float] | tuple[int, int, int, float], ...] = ()
    name: str = ""
    cold_sweep: tuple[tuple[int, float], ...] = ()
    gemm_sweep: tuple[tuple[int, int, bool, float], ...] = ()
    activation_per_s: float | None = None
    threads: int | None = None
    sweep_rounds: int | None = None
    """Interleaved rounds each sweep took (the presets' ``timing.sweep_rounds``; None in runs
    saved before it was recorded)."""
    rate_sweeps: dict[str, RateSweep] = field(default_factory=dict, hash=False)
    """The diagnoses' own sweeps by name (:class:`RateSweep`), each measured apart from the
    kernels it diagnoses; empty in runs saved before 2026-12-07. A new diagnosis adds its sweep
    here, and the fields above stay as they are."""
    ceiling_seconds: dict[str, tuple[float, ...]] = field(default_factory=dict, hash=False)
    """The seconds of each repetition a ceiling was taken from, by its key (:meth:`ceiling`), so
    that ledger 2 reads the prediction's interval by the rule it reads a kernel's (a rate is its
    work over their median, a floor or a cold point their median) and a page gives a spread.
    Empty in runs saved before 2026-12-07 (schema 9), whose ceilings are read as exact."""

    DERIVED_KEYS: ClassVar[frozenset[str]] = frozenset({"ridge_point"})
    """Written for readers of the file (see :meth:`to_dict`); reading ignores it."""

    def __post_init__(self) -> None:
        if not self.name:  # runs saved before the field was added: the device kind
            object.__setattr__(self, "name", self.device)
        for name, optional in self.scalar_fields():
            value = getattr(self, name)
            if value is None and optional:
                continue
            if not _positive(value):
                raise GpuConceptsError(
                    f"Peaks: {name} must be a positive finite number; got {value!r}"
                )
        for key, seconds in self.ceiling_seconds.items():
            if self.ceiling(key) is None:
                raise GpuConceptsError(
                    f"Peaks: ceiling_seconds[{key!r}] names no ceiling these peaks hold "
                    "(a rate or floor field, 'level <name>', 'random <table> <row> <rows>' "
                    "or 'cold <bytes>')"
                )
            if not seconds or not all(_positive(t) for t in seconds):
                raise GpuConceptsError(
                    f"Peaks: ceiling_seconds[{key!r}] must hold at least one time, each a "
                    f"positive finite number of seconds; got {seconds!r}"
                )

    @classmethod
    def scalar_fields(cls) -> tuple[tuple[str, bool], ...]:
        """Every field that holds one measured number, with whether it may be None: each must
        be positive and finite (checked on construction, whoever measured it).

        >>> ("flops_per_s", False) in Peaks.scalar_fields(), ("op_seconds", True) in Peaks.scalar_fields()
        (True, True)
        """
        kinds = {"float": False, "float | None": True, "int | None": True}
        return tuple((f.name, kinds[str(f.type)]) for f in fields(cls) if str(f.type) in kinds)

    def ceiling(self, key: str) -> float | None:
        """The ceiling a key of :attr:`ceiling_seconds` names: a rate or floor field, ``level <name>``
        a cache level's bandwidth, ``random <table> <row> <rows>`` a random-access point's rate,
        ``cold <bytes>`` a cold sweep point's seconds; None where there is none.

        >>> p = Peaks("cpu", 1e11, 1e10, "f", levels=(MemoryLevel("L2", 2**20, 4e10),),
        ...           random_sweep=((2**28, 16, 3e7),), cold_sweep=((2**20, 3e-4),))
        >>> p.ceiling("level L2"), p.ceiling("random 268435456 16 262144"), p.ceiling("cold 1048576")
        (40000000000.0, 30000000.0, 0.0003)
        >>> p.ceiling("level L3"), p.ceiling("threads"), p.ceiling("op_seconds"), p.ceiling("cold 1")
        (None, None, None, None)
        """
        kind, _, name = key.partition(" ")
        if kind == "level":
            return next((lv.bytes_per_s for lv in self.levels if lv.name == name), None)
        if kind == "random":
            return self._random_rates.get(key)
        if kind == "cold":
            return next((s for size, s in self.cold_sweep if cold_key(size) == key), None)
        rates = (n for n, _ in self.scalar_fields() if n.endswith(("_per_s", "_seconds")))
        value = getattr(self, key) if key in rates else None
        return None if value is None else float(value)

    def with_rate_sweeps(self, sweeps: Mapping[str, RateSweep]) -> Peaks:
        """These peaks with ``sweeps`` merged into :attr:`rate_sweeps` (a sweep of a name
        already held replaces it: it was measured again).

        >>> p = Peaks("cpu", 1e11, 1e10, "f").with_rate_sweeps(
        ...     {"stencil": RateSweep("cnn-depthwise", "flops", ((2**20, 4e10),), "a stencil")})
        >>> sorted(p.rate_sweeps)
        ['stencil']
        """
        return replace(self, rate_sweeps={**self.rate_sweeps, **sweeps})

    @cached_property
    def _random_rates(self) -> dict[str, float]:
        """Each random-access point's rate by its key (:func:`random_key`), found once."""
        return {random_key(point): point[-1] for point in self.random_sweep}

    @cached_property
    def ridge_point(self) -> float:
        """Intensity (FLOP/byte) where the compute and bandwidth ceilings meet (worked out
        once: the exact formula takes a fraction of a millisecond, and every placement asks)."""
        return ridge(self.flops_per_s, self.bytes_per_s)

    def random_point(
        self, row_bytes: int, table_bytes: int | None = None, rows: int | None = None
    ) -> tuple[int, int, float] | tuple[int, int, int, float] | None:
        """The point of the random-access sweep that stands for ``rows`` rows of ``row_bytes``
        drawn in one call from a table of ``table_bytes``, as it is stored (its rate last).
        The table: of the swept ones the same memory level serves (:meth:`level_of`), the
        largest no larger than the kernel's (a smaller table is served faster, its address
        translations too, so it is the tightest safe bound), else the smallest; when that
        level has none, the largest swept table a faster level serves; the sweep's largest
        table when the kernel's is not given. The call: of the swept numbers of rows per call,
        the smallest at least as many as the kernel's (the largest when none is, or when the
        kernel's are not given), since a call pays its cold start (the page-table entries and
        the index it reads after a flush) once, and the more rows share it, the faster each
        line. The row: the narrowest swept row at least as wide (the widest when none is),
        since the rate rises with the row's width. None without a sweep, or when every swept
        table sits further out than the kernel's.

        >>> p = Peaks("cpu", 1e11, 1e10, "float32", line_bytes=64,
        ...           levels=(MemoryLevel("L2", 2**20, 1e11),),
        ...           random_sweep=((2**19, 16, 9e7), (2**28, 16, 3e7), (2**28, 256, 5e7)))
        >>> p.random_point(4), p.random_point(4096)
        ((268435456, 16, 30000000.0), (268435456, 256, 50000000.0))
        >>> p.random_point(16, 2**18), p.random_point(16, 2**29), p.random_point(16, 2**27)
        ((524288, 16, 90000000.0), (268435456, 16, 30000000.0), (268435456, 16, 30000000.0))
        >>> Peaks("cpu", 1e11, 1e10, "float32", levels=(MemoryLevel("L2", 2**20, 1e11),),
        ...       random_sweep=((2**28, 16, 3e7),)).random_point(16, 2**18) is None
        True
        >>> calls = Peaks("cpu", 1e11, 1e10, "float32", line_bytes=64, random_sweep=(
        ...     (2**28, 16, 2**16, 2e7), (2**28, 16, 2**20, 4e7)))
        >>> calls.random_point(16, 2**28, 2**16), calls.random_point(16, 2**28, 2**17)
        ((268435456, 16, 65536, 20000000.0), (268435456, 16, 1048576, 40000000.0))
        """
        if not self.random_sweep:
            return None
        tables = sorted({point[0] for point in self.random_sweep})
        if table_bytes is None:
            table = tables[-1]
        else:
            level = self.level_of(table_bytes)
            same = [t for t in tables if self.level_of(t) == level]
            faster = [t for t in tables if self.level_of(t) < level]
            if not same and not faster:
                return None
            within = [t for t in same if t <= table_bytes]
            table = (within[-1] if within else same[0]) if same else faster[-1]
        at_table = [point for point in self.random_sweep if point[0] == table]
        calls = sorted({random_rows_per_call(point) for point in at_table})
        call = next((c for c in calls if rows is not None and c >= rows), calls[-1])
        points = sorted(
            (point for point in at_table if random_rows_per_call(point) == call),
            key=lambda point: point[1],
        )
        return next((point for point in points if point[1] >= row_bytes), points[-1])

    def level_of(self, nbytes: int) -> int:
        """The index in :attr:`memory_roofs` of the level that holds ``nbytes``: the first
        cache at least as large, else DRAM (the last).

        >>> Peaks("cpu", 1e11, 1e10, "float32", levels=(MemoryLevel("L2", 2**20, 1e11),
        ...       MemoryLevel("L3", 2**25, 5e10))).level_of(2**21)
        1
        """
        sizes = [level.size_bytes for level in self.levels]
        return next((i for i, size in enumerate(sizes) if size and nbytes <= size), len(sizes))

    def random_lines_per_s(
        self, row_bytes: int, table_bytes: int | None = None, rows: int | None = None
    ) -> float | None:
        """The random-access roof for ``rows`` rows of ``row_bytes`` a call from a table of
        ``table_bytes``: the line fetches per second of :meth:`random_point`.

        >>> p = Peaks("cpu", 1e11, 1e10, "float32", line_bytes=64,
        ...           random_sweep=((2**20, 16, 9e7), (2**28, 16, 3e7), (2**28, 256, 5e7)))
        >>> p.random_lines_per_s(4), p.random_lines_per_s(64), p.random_lines_per_s(4096)
        (30000000.0, 50000000.0, 50000000.0)
        """
        point = self.random_point(row_bytes, table_bytes, rows)
        return None if point is None else point[-1]

    def gemm_point(
        self, shape: tuple[int, int, int], *, flush: bool = False
    ) -> tuple[int, int, bool, float] | None:
        """The point of the GEMM sweep that bounds a product of ``shape`` (rows, columns,
        depth): the smallest swept product at least as large in every dimension, whose FLOP
        rate a smaller product does not exceed (a library tiles a larger product at least as
        well), timed as the kernel was (``flush``: after a cache flush; a warm product when no
        flushed one holds it, which only loosens the bound). A product larger than the sweep
        is bounded by the sweep's fastest warm product (the library's product no longer speeds
        up with size there). None without a sweep.

        >>> p = Peaks("cpu", 1e11, 1e10, "float32", gemm_sweep=(
        ...     (1, 64, False, 2e9), (4, 64, False, 8e9), (4, 64, True, 4e9), (1, 256, False, 3e9)))
        >>> p.gemm_point((2, 64, 32)), p.gemm_point((2, 64, 32), flush=True)
        ((4, 64, False, 8000000000.0), (4, 64, True, 4000000000.0))
        >>> p.gemm_point((1, 100, 64), flush=True), p.gemm_point((8, 64, 64))
        ((1, 256, False, 3000000000.0), (4, 64, False, 8000000000.0))
        """
        rows, columns, depth = shape
        holding = [p for p in self.gemm_sweep if p[0] >= rows and p[1] >= max(columns, depth)]
        if not holding:
            return max((p for p in self.gemm_sweep if not p[2]), key=lambda p: p[3], default=None)
        started_alike = [p for p in holding if p[2] == flush]
        return min(
            started_alike or [p for p in holding if not p[2]],
            key=lambda p: (p[0] * p[1] * p[1], p[0]),
            default=None,
        )

    def cold_seconds(self, nbytes: float) -> float | None:
        """The least time in which DRAM delivers ``nbytes`` to a call that starts cold (right
        after a cache flush), from the cold sweep: read off the sweep's line between its
        points, along the line from nothing to its first point below it, and at DRAM's
        bandwidth beyond its last. A larger read never counts as quicker than a smaller one,
        so each point is the least time of itself and every larger read (what noise did to
        one point cannot lower the bound). None when no cold sweep was measured.

        >>> p = Peaks("cpu", 1e11, 1e10, "float32",
        ...           cold_sweep=((2**20, 3e-4), (2**21, 2.5e-4), (2**22, 6e-4)))
        >>> [round(p.cold_seconds(b) * 1e6) for b in (2**19, 2**20, 1.5 * 2**20, 2**22, 2**23)]
        [125, 250, 250, 600, 1019]
        """
        if not self.cold_sweep:
            return None
        points = sorted(self.cold_sweep)
        least: list[tuple[int, float]] = []
        floor = math.inf
        for size, seconds in reversed(points):
            floor = min(floor, seconds)
            least.insert(0, (size, floor))
        below: tuple[int, float] = (0, 0.0)
        for size, seconds in least:
            if nbytes <= size:
                share = (nbytes - below[0]) / (size - below[0])
                return below[1] + share * (seconds - below[1])
            below = (size, seconds)
        return below[1] + (nbytes - below[0]) / self.bytes_per_s

    @property
    def memory_roofs(self) -> tuple[MemoryLevel, ...]:
        """Every measured memory roof, fastest first, DRAM last (DRAM alone when no cache
        level was measured)."""
        dram = "HBM" if self.device == "cuda" else "DRAM"
        return (*self.levels, MemoryLevel(dram, None, self.bytes_per_s))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict: the fields, and the ridge point for readers of the file. A run saved
        before the sweeps' rounds, the diagnoses' sweeps or the ceilings' repetitions were
        recorded is written back as it was, without them."""
        record = to_record(self)
        if record.get("sweep_rounds") is None:
            record.pop("sweep_rounds", None)
        for name in ("rate_sweeps", "ceiling_seconds"):
            if not record.get(name):
                record.pop(name, None)
        return {**record, "ridge_point": self.ridge_point}


def _positive(value: object) -> bool:
    """Whether ``value`` is a positive finite number (a bool is not one)."""
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value > 0
    )


def ridge(flops_per_s: float, bytes_per_s: float) -> float:
    """Ridge point in FLOP/byte: ``formulas.ridge_point(P, beta)``."""
    return float(formulas.ridge_point(P=flops_per_s, beta=bytes_per_s))
