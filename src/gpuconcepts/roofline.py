r"""The roofline model: a device's measured peaks, and measurements placed under them.

Every number comes from the catalogue (``formulas.ridge_point``, ``roofline_seconds``,
``attainable_flops``); this module only decides which side of the ridge a kernel sits on
and which roof served it. A :class:`~gpuconcepts.measure.Measurement` knows nothing of any
machine model: :func:`place` puts it under a set of :class:`Peaks`, so one measurement can
be read against this machine's roofs or another's. The picture is drawn by
:mod:`gpuconcepts.render.plots.roofline`.

>>> peaks = Peaks(device="cpu", flops_per_s=1e11, bytes_per_s=1e10, dtype="float32")
>>> ridge(peaks.flops_per_s, peaks.bytes_per_s)
10.0
>>> classify(0.25, peaks), classify(10, peaks), classify(60, peaks)
('memory', 'compute', 'compute')
>>> predicted_seconds(flops=2e9, bytes=1e8, peaks=peaks)
0.02
>>> attainable(1.0, peaks)
10000000000.0
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from gpuconcepts import formulas
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.records import POSITIVE, to_record
from gpuconcepts.sweeps import GEMM_SWEEP_ROWS, GEMM_SWEEP_WIDTHS
from gpuconcepts.workloads import WORKLOADS, GemmProduct

if TYPE_CHECKING:
    from gpuconcepts.measure import Measurement

Bound = Literal["memory", "compute"]


@dataclass(frozen=True)
class MemoryLevel:
    """One level of the memory hierarchy and the bandwidth measured from it.

    ``size_bytes`` is the cache's size (None for DRAM, the last level).
    """

    name: str
    size_bytes: Annotated[int, POSITIVE] | None
    bytes_per_s: Annotated[float, POSITIVE]


@dataclass(frozen=True)
class Peaks:
    """Measured ceilings of one device: compute (large GEMM), bandwidth (STREAM-like) and,
    when measured, one bandwidth per cache level and a latency floor.

    ``bytes_per_s`` is DRAM's: the best of the read, copy and triad bandwidths, each kept
    when known. ``op_seconds`` is the floor of one operation dispatched from inside the
    framework (the chain roof's unit), ``cold_latency_seconds`` the latency floor of a call
    that follows a cache flush (the floor of a kernel timed flushed); ``random_sweep`` holds the random-access sweep as
    (table bytes, row bytes, rows per call, line fetches per second), read in whole transfer
    units of ``line_bytes`` (:meth:`random_lines_per_s`; a point of three entries, saved
    before calls of several sizes were swept, was measured in calls of
    :data:`RANDOM_ROWS_BEFORE` rows); ``cold_sweep`` the seconds of reading
    an array once right after a cache flush, as (bytes, seconds) (:meth:`cold_seconds`);
    ``gemm_sweep`` the library's matrix product at small shapes, as (rows, width, flushed,
    FLOP/s) of a rows × width by width × width product (:meth:`gemm_point`);
    ``activation_per_s`` the elements per second of an activation (``tanh``) over an array a
    cache holds, the rate of the work a product kernel does beside its products. ``physical_flops_per_s`` is the hardware's limit (cores × vector lanes × FMA
    units × 2 × clock, or a GPU's datasheet), drawn above the measured roof; ``threads`` the CPU
    threads the ceilings were measured on (None on a GPU). ``levels`` lists the caches measured by the working-set sweep (fastest first, the
    points of the sweep in ``sweep`` as (bytes, bytes/s)); ``latency_seconds`` is the time of
    a minimal kernel (launch overhead included on a GPU): nothing runs faster.

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

    DERIVED_KEYS: ClassVar[frozenset[str]] = frozenset({"ridge_point"})
    """Written for readers of the file (see :meth:`to_dict`); reading ignores it."""

    def __post_init__(self) -> None:
        if not self.name:  # runs saved before the field was added: the device kind
            object.__setattr__(self, "name", self.device)
        optional = (
            "copy_bytes_per_s",
            "triad_bytes_per_s",
            "latency_seconds",
            "read_bytes_per_s",
            "physical_flops_per_s",
            "op_seconds",
            "cold_latency_seconds",
            "line_bytes",
            "activation_per_s",
            "threads",
        )
        for name in ("flops_per_s", "bytes_per_s", *optional):
            value = getattr(self, name)
            if value is None and name in optional:
                continue
            if isinstance(value, bool) or not (
                isinstance(value, int | float) and math.isfinite(value) and value > 0
            ):
                raise GpuConceptsError(
                    f"Peaks: {name} must be a positive finite number; got {value!r}"
                )

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

    def gemm_call_seconds(self, *, flush: bool = False) -> float | None:
        """Seconds of the GEMM sweep's smallest product (the fewest FLOPs) timed as ``flush``
        says: next to no work, so what one call of the library's product costs beside its
        arithmetic (Python's call, the dispatch, a cold start after a flush). None without
        such a point.

        >>> p = Peaks("cpu", 1e11, 1e10, "float32", gemm_sweep=(
        ...     (1, 16, False, 2e8), (4, 16, False, 8e8), (1, 16, True, 1e7)))
        >>> p.gemm_call_seconds(), p.gemm_call_seconds(flush=True)
        (2.56e-06, 5.12e-05)
        """
        timed = [point for point in self.gemm_sweep if point[2] == flush]
        if not timed:
            return None
        # the fewest FLOPs (rows × width², the slower of a tie), counted once: every placement
        # of a product kernel asks, and the exact formula takes a fraction of a millisecond
        rows, width, _, rate = min(timed, key=lambda point: (point[0] * point[1] ** 2, point[3]))
        return float(formulas.mlp_flops(B=rows, d_in=width, d_out=width)) / rate

    def gemm_point(
        self, shape: tuple[int, int, int], *, flush: bool = False
    ) -> tuple[int, int, bool, float] | None:
        """The point of the GEMM sweep that bounds a product of ``shape`` (rows, columns,
        depth): the smallest swept product at least as large in every dimension, whose FLOP
        rate a smaller product does not exceed (a library tiles a larger product at least as
        well), timed as the kernel was (``flush``: after a cache flush; a warm product when no
        flushed one holds it, which only loosens the bound). A product larger than the sweep
        is bounded by the sweep's fastest warm product (the library's product no longer speeds
        up with size there; a faster path such as the peak's is not the one it runs). None
        without a sweep.

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

    def best_of(self, again: Peaks) -> Peaks:
        """These peaks and ``again`` (the same device measured once more) as one set of
        ceilings: each rate the higher of the two, the latency floor the lower, since a
        ceiling is the fastest the machine was seen to go.

        >>> first = Peaks("cpu", 1e11, 1e10, "float32", latency_seconds=3e-6)
        >>> second = Peaks("cpu", 1.2e11, 0.9e10, "float32", latency_seconds=2e-6)
        >>> best = first.best_of(second)
        >>> best.flops_per_s, best.bytes_per_s, best.latency_seconds
        (120000000000.0, 10000000000.0, 2e-06)
        """

        def higher(a: float | None, b: float | None) -> float | None:
            return b if a is None else a if b is None else max(a, b)

        faster = {level.name: level for level in again.levels}
        levels = tuple(
            level
            if level.name not in faster or faster[level.name].bytes_per_s <= level.bytes_per_s
            else faster[level.name]
            for level in self.levels
        )
        floors = [f for f in (self.latency_seconds, again.latency_seconds) if f is not None]
        op_floors = [f for f in (self.op_seconds, again.op_seconds) if f is not None]
        cold = [f for f in (self.cold_latency_seconds, again.cold_latency_seconds) if f is not None]
        quicker = dict(again.cold_sweep)
        cold_sweep = tuple(
            (size, min(seconds, quicker.get(size, seconds))) for size, seconds in self.cold_sweep
        )
        return replace(
            self,
            gemm_sweep=_faster_points(self.gemm_sweep, again.gemm_sweep),
            random_sweep=_faster_points(self.random_sweep, again.random_sweep),
            flops_per_s=max(self.flops_per_s, again.flops_per_s),
            bytes_per_s=max(self.bytes_per_s, again.bytes_per_s),
            copy_bytes_per_s=higher(self.copy_bytes_per_s, again.copy_bytes_per_s),
            triad_bytes_per_s=higher(self.triad_bytes_per_s, again.triad_bytes_per_s),
            read_bytes_per_s=higher(self.read_bytes_per_s, again.read_bytes_per_s),
            activation_per_s=higher(self.activation_per_s, again.activation_per_s),
            levels=levels,
            latency_seconds=min(floors, default=None),
            op_seconds=min(op_floors, default=None),
            cold_latency_seconds=min(cold, default=None),
            cold_sweep=cold_sweep or again.cold_sweep,
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict: the fields, and the ridge point for readers of the file."""
        return {**to_record(self), "ridge_point": self.ridge_point}


Point = tuple[Any, ...]


def _faster_points(ours: tuple[Point, ...], theirs: tuple[Point, ...]) -> tuple[Any, ...]:
    """Two measurements of one sweep as one: at each point (every entry but the last, a rate)
    the higher rate, in the order of ``ours`` and then the points only ``theirs`` has.

    >>> _faster_points(((1, 2, 5.0), (2, 2, 1.0)), ((2, 2, 3.0), (4, 2, 9.0)))
    ((1, 2, 5.0), (2, 2, 3.0), (4, 2, 9.0))
    """
    best: dict[Point, Point] = {}
    for point in (*ours, *theirs):
        seen = best.get(point[:-1])
        if seen is None or point[-1] > seen[-1]:
            best[point[:-1]] = point
    return tuple(best.values())


RANDOM_ROWS_BEFORE = 2**18
"""The rows per call of every point of a random-access sweep saved before calls of several
sizes were swept (2026-12-04): one call size, 2**18 rows in bags of 16."""


def random_rows_per_call(point: tuple[int, int, float] | tuple[int, int, int, float]) -> int:
    """How many rows one call of a random-access sweep point fetched: its third entry, or
    :data:`RANDOM_ROWS_BEFORE` for a point saved before the sweep had several call sizes.

    >>> random_rows_per_call((2**28, 16, 2**16, 3e7)), random_rows_per_call((2**28, 16, 3e7))
    (65536, 262144)
    """
    return point[2] if len(point) == 4 else RANDOM_ROWS_BEFORE


@dataclass(frozen=True)
class Placement:
    """A measurement read against a set of peaks.

    ``bound`` is the formulas' prediction (the side of the DRAM ridge the intensity falls on);
    ``observed`` is the measurement's own verdict: the roof — ``compute``, a cache level,
    ``DRAM`` (``HBM``) or ``latency`` — that best explains the measured time, i.e. the tightest
    one the kernel did not beat, and ``attained`` the fraction of that roof it reached.

    >>> from gpuconcepts.measure import Measurement
    >>> p = Peaks(device="cpu", flops_per_s=1e11, bytes_per_s=1e10, dtype="float32",
    ...           levels=(MemoryLevel("L3", 32 * 2**20, 4e10),))
    >>> m = Measurement("mlp", "cpu", {"B": 64}, (0.011, 0.010, 0.012), 1e9, 2e7)
    >>> where = place(m, p)
    >>> where.bound, where.predicted_seconds, round(where.ratio, 2), where.observed
    ('compute', 0.01, 1.1, 'compute')
    >>> hot = Measurement("dlrm-hot", "cpu", {}, (1e-3,), 1e6, 2e7)  # 20 GB/s: 2× DRAM's roof
    >>> place(hot, p).bound, place(hot, p).observed, place(hot, p).attained
    ('memory', 'L3', 0.5)
    """

    predicted_seconds: float
    ratio: float
    bound: Bound
    observed: str
    attained: float


ABOVE_EVERY_ROOF = "above every roof"
"""The observed bound of a kernel faster than every measured roof (a measurement to doubt)."""

RANDOM_ACCESS = "random access"
"""The roof of rows fetched at random addresses: line fetches per second, not bytes."""

CHAIN = "chain"
"""The roof of dependent steps: each step's operations at the per-operation floor, in turn."""

PER_CALL = "per-call"
"""The floor of one call: its operations at the per-operation floor, or one call's latency."""

GEMM_SHAPE = "GEMM shape"
"""The roof of a kernel whose time rests on matrix products: its work at the rate the library's
product of that shape reached, bare, in the GEMM sweep (a product of few rows cannot fill the
vector units, and one of few FLOPs per byte streams its weights at the rate the product reads
them, not the streaming kernels'), and on a CPU its activation's elements (an RNN's tanh) at the
measured activation rate after them."""


def gemm_products(m: Measurement) -> tuple[GemmProduct, ...]:
    """The matrix products ``m``'s time rests on, as (count, (rows, columns, depth)), from its
    workload's descriptor (:meth:`~gpuconcepts.workloads.Workload.gemm_products`); none for
    other kernels, and for a call ``analyze`` timed.

    >>> from gpuconcepts.measure import Measurement
    >>> gemm_products(Measurement("mlp", "cpu", {"B": 2, "d_in": 8, "d_out": 4, "s": 4}, (1.0,), 1, 1))
    ((1, (2, 4, 8)),)
    """
    found = WORKLOADS.get(m.workload)
    return () if found is None else found.gemm_products(m.params)


@dataclass(frozen=True)
class Reference:
    """One roof of a kernel's own kind, timed in the same rounds as the kernel
    (:attr:`Measurement.references <gpuconcepts.measure.Measurement.references>`, under
    :attr:`key`): a floor or rate of :class:`Peaks` by its field's name (``latency_seconds``,
    ``cold_latency_seconds``, ``op_seconds``, ``activation_per_s``), one of the kernel's
    matrix products run bare (``product``, ``sizes`` its rows, columns and depth, in seconds
    of one call; ``flush``: right after a cache flush, as the kernel's first product starts),
    or the random-access sweep's point that bounds its lookup (``random``, ``sizes`` the
    point's table bytes, row bytes and rows per call, in line fetches per second).

    >>> Reference("product", (1024, 16, 32), flush=True).key
    'product 1024 16 32 flushed'
    >>> Reference.from_key("random 262144 16 65536")
    Reference(peak='random', sizes=(262144, 16, 65536), flush=False)
    >>> Reference.from_key("product 4 8")
    Traceback (most recent call last):
    ...
    gpuconcepts.errors.GpuConceptsError: reference 'product 4 8': a product names its rows, columns and depth (3 sizes), a random point its table, row and call (3), a floor or rate none
    """

    peak: str
    sizes: tuple[int, ...] = ()
    flush: bool = False

    SCALARS: ClassVar[tuple[str, ...]] = (
        "latency_seconds",
        "cold_latency_seconds",
        "op_seconds",
        "activation_per_s",
    )

    @property
    def key(self) -> str:
        """The name a measurement stores this reference under."""
        return " ".join([self.peak, *map(str, self.sizes), *(["flushed"] if self.flush else [])])

    @classmethod
    def from_key(cls, key: str) -> Reference:
        """The reference a measurement stored under ``key``; a clear error for a key that
        names none."""
        words = key.split()
        flush = bool(words) and words[-1] == "flushed"
        words = words[:-1] if flush else words
        if not words or words[0] not in (*cls.SCALARS, "product", "random"):
            raise GpuConceptsError(
                f"reference {key!r} names no roof: it starts with one of "
                f"{', '.join((*cls.SCALARS, 'product', 'random'))}"
            )
        sizes = words[1:]
        wanted = 0 if words[0] in cls.SCALARS else 3
        if len(sizes) != wanted or not all(size.isdigit() and int(size) > 0 for size in sizes):
            raise GpuConceptsError(
                f"reference {key!r}: a product names its rows, columns and depth (3 sizes), a "
                "random point its table, row and call (3), a floor or rate none"
            )
        return cls(words[0], tuple(int(size) for size in sizes), flush)


CALL_PRODUCT = (GEMM_SWEEP_ROWS[0], GEMM_SWEEP_WIDTHS[0], GEMM_SWEEP_WIDTHS[0])
"""The product whose time is next to all call, the GEMM sweep's smallest (one row by a 16 × 16
weight): timed beside a kernel's products, it is what each of their calls costs beside its
arithmetic, which a kernel whose dispatch is counted apart does not pay twice. A bare
product's call costs more than the latency floor's (2026-12-04: 1.8 µs against 0.75 on the
2-core CPU), so the floor alone left nn.RNN of width 16 beating its roof by 13 %."""


def references_of(m: Measurement, peaks: Peaks) -> tuple[Reference, ...]:
    """What the roofs of ``m``'s own kind read (:data:`OWN_ROOFS`), to be timed beside it: the
    floors of its calls and operations, its products bare and the activation's rate (the GEMM
    shape), and the random-access point of its lookup. Timed in the same rounds, they slow
    down and speed up with the machine as the kernel does, so the share of them it attained
    does not change with the load (:func:`roof_times`).

    >>> from gpuconcepts.measure import Measurement
    >>> p = Peaks("cpu", 1e11, 1e10, "float32")
    >>> m = Measurement("rnn-module", "cpu", {"B": 2, "S": 8, "d_in": 4, "d_h": 4},
    ...                 (1e-4,), 1, 1, flush=True, ops=30, calls=2, steps=8)
    >>> [r.key for r in references_of(m, p)]
    ['latency_seconds', 'cold_latency_seconds', 'op_seconds', 'activation_per_s', 'product 16 4 4 flushed', 'product 2 4 4', 'product 1 16 16']
    """
    wanted = [Reference("latency_seconds")]
    if m.flush:
        wanted.append(Reference("cold_latency_seconds"))
    if (m.ops or 0) > (m.calls or 0):
        wanted.append(Reference("op_seconds"))
    products = bare_products(m)
    if products and activation_elements(m) and m.device == "cpu":
        wanted.append(Reference("activation_per_s"))
    for i, (count, shape) in enumerate(products):
        cold = m.flush and i == 0  # only the kernel's first product finds the caches flushed
        if cold:
            wanted.append(Reference("product", shape, flush=True))
        if count > 1 or not cold:
            wanted.append(Reference("product", shape))
    if products and m.device == "cpu":  # what each product's call costs beside its arithmetic
        wanted.append(Reference("product", CALL_PRODUCT))
    if m.random_rows and m.row_bytes:
        point = peaks.random_point(m.row_bytes, random_table_bytes(m), m.random_rows)
        if point is not None:
            sizes = (point[0], point[1], random_rows_per_call(point))
            wanted.append(Reference("random", sizes))
    return tuple(dict.fromkeys(wanted))


def bare_products(m: Measurement) -> tuple[GemmProduct, ...]:
    """``m``'s products (:func:`gemm_products`) that a bare product of the same shape bounds:
    none for a fused kernel (:attr:`~gpuconcepts.workloads.Workload.fused`), whose products
    never run whole, so that the sweep's products that hold them bound it instead.

    >>> from gpuconcepts.measure import Measurement
    >>> sizes = {"B": 1, "S": 8, "d": 8, "heads": 2}
    >>> bare_products(Measurement("transformer-prefill", "cpu", sizes, (1.0,), 1, 1))
    ()
    """
    found = WORKLOADS.get(m.workload)
    return () if found is not None and found.fused else gemm_products(m)


def products_beside(m: Measurement) -> bool:
    """Whether ``m``'s products were timed bare beside it (:func:`references_of`), rather than
    read from the GEMM sweep.

    >>> from gpuconcepts.measure import Measurement
    >>> m = Measurement("mlp", "cpu", {"B": 2, "d_in": 8, "d_out": 4}, (1.0,), 1, 1,
    ...                 references={"product 2 4 8": (0.5,)})
    >>> products_beside(m), products_beside(replace(m, references={}))
    (True, False)
    """
    return bool(bare_products(m)) and any(
        Reference.from_key(key).peak == "product" for key in m.references
    )


def _best_references(
    m: Measurement, peaks: Peaks
) -> tuple[Peaks, dict[tuple[tuple[int, ...], bool], float]]:
    """``peaks`` with each of ``m``'s references at its best over the rounds (the least
    seconds, the highest rate) in place of the value measured with the peaks, and the best
    seconds of its products run bare, by (shape, flushed)."""
    fields: dict[str, Any] = {}
    products = {}
    for key, values in m.references.items():
        ref = Reference.from_key(key)
        if ref.peak == "product":
            products[(ref.sizes, ref.flush)] = min(values)
        elif ref.peak == "random":
            fields["random_sweep"] = ((*ref.sizes, max(values)),)
        else:
            fields[ref.peak] = max(values) if ref.peak.endswith("_per_s") else min(values)
    return replace(peaks, **fields), products


def paired_peaks(m: Measurement, peaks: Peaks) -> Peaks:
    """``peaks`` with the floors and rates ``m`` timed beside it (its references, each at its
    best over the rounds) in place of the ones measured with the peaks: what a page quotes
    beside the roof it read ``m`` against.

    >>> from gpuconcepts.measure import Measurement
    >>> p = Peaks("cpu", 1e11, 1e10, "float32", latency_seconds=1e-6)
    >>> m = Measurement("mlp", "cpu", {}, (1.0, 1.0, 1.0), 1, 1,
    ...                 references={"latency_seconds": (2e-6, 3e-6, 4e-6)})
    >>> paired_peaks(m, p).latency_seconds
    2e-06
    """
    return _best_references(m, peaks)[0] if m.references else peaks


def own_bound(m: Measurement, peaks: Peaks, name: str) -> tuple[float, float]:
    """The bound the roof ``name`` of ``m``'s own kind (:data:`OWN_ROOFS`) sets, and the time
    of ``m`` it is read against: for a kernel timed beside its references, the roof at their
    best over the rounds against its own best round; else the roof of ``peaks`` against its
    median. The share, bound over time, is what :func:`observe` reads either way.

    >>> from gpuconcepts.measure import Measurement
    >>> p = Peaks("cpu", 1e11, 1e10, "float32", latency_seconds=5e-7)
    >>> call = Measurement("mlp", "cpu", {}, (2e-6, 3e-6, 8e-6), 0, 1, ops=1, calls=1,
    ...                    references={"latency_seconds": (1e-6, 1e-6, 4e-6)})
    >>> own_bound(call, p, "per-call")
    (1e-06, 2e-06)
    """
    if not m.references:
        return dict(roof_times(m, peaks))[name], m.seconds
    return _paired_roofs(m, peaks)[name], min(m.raw_seconds)


def _paired_roofs(m: Measurement, peaks: Peaks) -> dict[str, float]:
    """Every roof of ``m`` with its references at their best over the rounds (unscaled: each
    a bound on its best round)."""
    best, products = _best_references(m, peaks)
    return dict(roofs_at(m, best, products))


def roof_times(m: Measurement, peaks: Peaks) -> list[tuple[str, float]]:
    """Each roof's lower bound on ``m``'s time, by name (:func:`roofs_at` works them out): the
    machine's roofs from ``peaks``, and those of its own kind (:data:`OWN_ROOFS`) from its
    references when it was timed beside them (:attr:`Measurement.references
    <gpuconcepts.measure.Measurement.references>`).

    Such a roof is then worked out from the references at their best over the rounds, and its
    share of the kernel's best round is its share of the kernel's median: a stretch of load
    slows the kernel and the references it ran beside alike, and both bests come from the
    rounds the load spared.

    >>> from gpuconcepts.measure import Measurement
    >>> p = Peaks("cpu", 1e11, 1e10, "float32", latency_seconds=5e-7)  # a quieter moment
    >>> call = Measurement("mlp", "cpu", {}, (2e-6, 3e-6, 8e-6), 0, 1, ops=1, calls=1)
    >>> dict(roof_times(call, p))["per-call"]
    5e-07
    >>> beside = replace(call, references={"latency_seconds": (1e-6, 1e-6, 4e-6)})
    >>> dict(roof_times(beside, p))["per-call"]  # half its best round: half its median
    1.5e-06
    """
    base = roofs_at(m, peaks)
    if not m.references:
        return base
    scale = m.seconds / min(m.raw_seconds)
    own = [
        (name, bound * scale)
        for name, bound in _paired_roofs(m, peaks).items()
        if name in OWN_ROOFS
    ]
    return [(name, bound) for name, bound in base if name not in OWN_ROOFS] + own


def roofs_at(
    m: Measurement,
    peaks: Peaks,
    products: Mapping[tuple[tuple[int, ...], bool], float] | None = None,
) -> list[tuple[str, float]]:
    """Each roof's lower bound on ``m``'s time under ``peaks``, by name: compute, each memory
    level (fastest first), and, where ``m`` and ``peaks`` know enough, the GEMM shape
    (:data:`GEMM_SHAPE`: its products as long as ``products`` says, the seconds of each run
    bare by (shape, flushed), else at the rate of the GEMM sweep's product that holds it),
    random access and the chain or per-call floor. A kernel timed after a cache flush reads DRAM from
    a cold start, so its DRAM bound is the longer of the streaming one and
    :meth:`Peaks.cold_seconds` of its bytes.

    On a CPU one thread dispatches each operation and then runs it, so a kernel's dispatch and
    its arithmetic add (``formulas.serial_chain_seconds``); a GPU runs a kernel while the next
    one is launched, so there the longer of the two bounds it (``formulas.chain_seconds``).

    >>> from gpuconcepts.measure import Measurement
    >>> p = Peaks("cpu", 1e11, 1e10, "float32", latency_seconds=2e-6, op_seconds=1e-6)
    >>> loop = Measurement("rnn-loop", "cpu", {}, (5e-3,), 2e6, 1e5, ops=4096, steps=1024)
    >>> [(name, round(t * 1e6, 1)) for name, t in roof_times(loop, p)]
    [('compute', 20.0), ('DRAM', 10.0), ('chain', 4116.0)]
    >>> on_gpu = Measurement("rnn-loop", "cuda", {}, (5e-3,), 2e6, 1e5, ops=4096, steps=1024)
    >>> roof_times(on_gpu, p)[-1]
    ('chain', 0.004096)
    """
    times = [("compute", m.flops / peaks.flops_per_s)]
    moved = moved_bytes(m)
    times += [(level.name, moved / level.bytes_per_s) for level in peaks.memory_roofs]
    cold = peaks.cold_seconds(moved) if m.flush else None
    if cold is not None:  # a flushed kernel starts cold: DRAM's bound is a cold read's
        name, streaming = times[-1]
        times[-1] = (name, max(streaming, cold))
    # A flushed call starts cold: its first operation waits on DRAM for what a warm one finds
    # in cache, so it costs the cold floor and the rest of its operations the warm one.
    warm = peaks.latency_seconds
    first = peaks.cold_latency_seconds if m.flush else None
    first = first if first is not None else warm
    # Python's calls pay the latency floor (argument parsing and all); the operations the
    # framework dispatches from inside C++ pay the per-operation floor.
    calls = (m.calls or 0) if warm is not None else 0
    inner = (m.ops or 0) - calls
    dispatch = inner * (peaks.op_seconds or 0.0) + calls * (warm or 0.0)
    serial = m.device == "cpu" and dispatch > 0
    product = _product_seconds(m, peaks, net_of_call=serial, timed=products or {})
    # the first call cold, the others warm: what a flushed kernel's calls cost beside its work;
    # a product run bare right after a flush holds that cold start already (its code, data and
    # page tables fetched again: more than the cold floor's one-element call)
    started_cold = any(flushed for _, flushed in (products or {}))
    cold_extra = (
        first - warm
        if m.flush and first is not None and warm is not None and calls and not started_cold
        else 0.0
    )
    elements = activation_elements(m)
    if product is not None and elements and peaks.activation_per_s and m.device == "cpu":
        # one thread runs the activation after the product (a GPU may fuse the two)
        product += elements / peaks.activation_per_s
    if product is not None:  # no product of its shape ran faster than the sweep's
        # its products' time is net of their calls (cold for the first after a flush), so
        # its calls are added back as they ran
        times.append((GEMM_SHAPE, product + (dispatch + cold_extra if serial else 0.0)))
    if m.random_rows is not None and m.row_bytes is not None and peaks.line_bytes is not None:
        rate = peaks.random_lines_per_s(m.row_bytes, random_table_bytes(m), m.random_rows)
        if rate is not None:
            seconds = formulas.random_access_seconds(
                R=m.random_rows, d=m.row_bytes, s=1, c=peaks.line_bytes, r_line=rate
            )
            times.append((RANDOM_ACCESS, float(seconds)))
    floor = [first] if first is not None else []
    steps = m.steps or 1
    dram = times[len(peaks.memory_roofs)][1]  # the last memory roof: DRAM's
    arithmetic = max(times[0][1], product or 0.0)
    if dispatch > max(arithmetic, dram):
        # Where dispatch outweighs the arithmetic and the traffic, the chain's formula
        # (formulas.chain_seconds, or serial_chain_seconds on a CPU) bounds the kernel: S steps
        # of inner/S operations and calls/S calls at their floors, plus each step's arithmetic
        # on a CPU (tests/test_roofline.py checks they agree); elsewhere the roofline's own
        # roofs name the bound.
        floor.append(dispatch + cold_extra + (arithmetic if serial else 0.0))
    if floor:
        times.append((CHAIN if steps > 1 else PER_CALL, max(floor)))
    return times


def moved_bytes(m: Measurement) -> float:
    """The bytes ``m``'s code moves, which the memory roofs read: its minimal bytes and what
    its workload's traffic adds to them
    (:meth:`~gpuconcepts.workloads.Workload.extra_bytes`: a lookup's int64 indices).

    >>> from gpuconcepts.measure import Measurement
    >>> moved_bytes(Measurement("dlrm-sequential", "cpu", {"B": 2, "L": 3, "d": 4, "s": 4}, (1.0,), 24, 128))
    192
    >>> moved_bytes(Measurement("mlp", "cpu", {}, (1.0,), 1, 128))
    128
    """
    found = WORKLOADS.get(m.workload)
    return m.bytes + (0 if found is None else found.extra_bytes(m.params))


def activation_elements(m: Measurement) -> int | None:
    """How many elements ``m`` passes through an activation beside its products, from its
    workload's descriptor (:meth:`~gpuconcepts.workloads.Workload.activation_elements`).

    >>> from gpuconcepts.measure import Measurement
    >>> activation_elements(Measurement("rnn-gemm", "cpu", {"B": 1, "S": 4, "d_in": 2, "d_h": 8}, (1.0,), 1, 1))
    32
    """
    found = WORKLOADS.get(m.workload)
    return None if found is None else found.activation_elements(m.params)


def random_table_bytes(m: Measurement) -> int | None:
    """The bytes of the table ``m``'s random rows come from, from its workload's descriptor
    (:meth:`~gpuconcepts.workloads.Workload.random_table_bytes`); None when unknown.

    >>> from gpuconcepts.measure import Measurement
    >>> random_table_bytes(Measurement("dlrm-hot", "cpu", {"N": 10**6, "d": 64, "s": 4}, (1.0,), 1, 1))
    262144
    """
    found = WORKLOADS.get(m.workload)
    return None if found is None else found.random_table_bytes(m.params)


def _product_seconds(
    m: Measurement,
    peaks: Peaks,
    *,
    net_of_call: bool,
    timed: Mapping[tuple[tuple[int, ...], bool], float],
) -> float | None:
    """The least time of ``m``'s matrix products (:func:`gemm_products`), each as long as the
    same product run bare beside the kernel (``timed``, by shape and flushed), else at the rate
    of the GEMM sweep's product that holds it (:meth:`Peaks.gemm_point`); None without them.
    A kernel timed after a flush starts cold once: its first product is read against a
    flushed one and the products after it against warm ones. ``net_of_call``: each product's
    own call taken off its time, for a kernel whose dispatch is counted beside it (for a bare
    product, :data:`CALL_PRODUCT` timed warm beside it, else the latency floor, so that a
    flushed one keeps its cold start; for a swept one, the sweep's smallest product started as
    it was, :meth:`Peaks.gemm_call_seconds`); never below the compute peak's time.
    """

    def seconds(shape: tuple[int, int, int], flush: bool) -> float | None:
        bare = timed.get((shape, flush))
        if bare is not None:
            rows, columns, depth = shape
            flops = float(formulas.mlp_flops(B=rows, d_in=depth, d_out=columns))
            # its call as it costs warm: a flushed product keeps its cold start, which the
            # kernel's first call pays (roofs_at counts no cold floor beside it)
            call = timed.get((CALL_PRODUCT, False), peaks.latency_seconds)
            least = flops / peaks.flops_per_s
            return max(bare - (call or 0.0), least) if net_of_call else bare
        point = peaks.gemm_point(shape, flush=flush)
        if point is None:
            return None
        swept_rows, width, flushed, flops_per_s = point
        swept = float(formulas.mlp_flops(B=swept_rows, d_in=width, d_out=width))
        took = swept / flops_per_s
        if net_of_call:
            call = peaks.gemm_call_seconds(flush=flushed)
            took = max(took - (call or 0.0), swept / peaks.flops_per_s)
        rows, columns, depth = shape
        return float(formulas.mlp_flops(B=rows, d_in=depth, d_out=columns)) * took / swept

    total = 0.0
    products = gemm_products(m)
    for i, (count, shape) in enumerate(products):
        cold = m.flush and i == 0  # only the kernel's first product finds the caches flushed
        first = seconds(shape, cold)
        rest = seconds(shape, False) if count > 1 else 0.0  # the same product, warm
        if first is None or rest is None:
            return None
        total += first + (count - 1) * rest
    return total if products else None


def observe(m: Measurement, peaks: Peaks) -> tuple[str, float]:
    """The roof that best explains ``m``'s time, and the fraction of it attained: the one
    placement rule of the book, the CLI, ``compare`` and ``analyze``.

    Each roof gives a lower bound on the time (:func:`roof_times`). A kernel beat a roof only
    when even the slow end of its spread (the third quartile of its time) is under it: within
    the spread it may reach a little over 100% of the roof that served it. A roof of its own
    kind (:data:`OWN_ROOFS`) is beaten only by more than :data:`OWN_ROOF_TOLERANCE` beyond
    that. The bytes came
    from the slowest memory level whose roof the kernel did not beat (beating DRAM's roof
    means a cache served them). Of the compute bound, that level's bound and every other roof the kernel did
    not beat (the GEMM shape, random access, the chain or per-call floor), the longest is the observed bound;
    on a tie the earlier roof of :func:`roof_times` names it. A kernel that beat the compute
    roof or every memory roof is "above every roof". The cold read of a flushed kernel's bytes
    is a measured reference too: a kernel that beat it by no more than a roof of its own kind
    may read its bytes from DRAM all the same (a read that streams as well as the cold sweep's
    did), and is read against DRAM's streaming roof; beyond that, a cache served them.

    >>> from gpuconcepts.measure import Measurement
    >>> p = Peaks("cpu", 1e11, 1e10, "float32", levels=(MemoryLevel("L3", 2**25, 1e11),),
    ...           cold_sweep=((10**7, 1.6e-3),))  # a cold read of 10 MB: 1.6 ms; streaming: 1 ms
    >>> observe(Measurement("x", "cpu", {}, (1.5e-3,), 0, 10**7, flush=True), p)
    ('DRAM', 0.6666666666666666)
    >>> observe(Measurement("x", "cpu", {}, (1.2e-3,), 0, 10**7, flush=True), p)[0]
    'L3'
    """
    times = roof_times(m, peaks)
    memory_names = {level.name for level in peaks.memory_roofs}
    compute = times[0][1]
    memory = [(name, t) for name, t in times if name in memory_names]
    slowest = m.interval_seconds[1]  # a roof is beaten only beyond the spread
    dram, streaming = memory[-1][0], moved_bytes(m) / peaks.bytes_per_s
    if slowest < memory[-1][1] <= slowest * OWN_ROOF_TOLERANCE and streaming <= slowest:
        memory[-1] = (dram, streaming)  # it beat the cold read a little, not the stream
    if compute > slowest:
        return ABOVE_EVERY_ROOF, compute / m.seconds
    if memory[0][1] > slowest:
        return ABOVE_EVERY_ROOF, memory[0][1] / m.seconds
    served = [(name, t) for name, t in memory if t <= slowest][-1]
    own = slowest * OWN_ROOF_TOLERANCE  # a roof of its own kind: another measurement
    others = [(name, t) for name, t in times[1:] if name not in memory_names and t <= own]
    name, floor = max([times[0], served, *others], key=lambda pair: pair[1])
    return name, floor / m.seconds


OWN_ROOFS = (GEMM_SHAPE, RANDOM_ACCESS, CHAIN, PER_CALL)
"""The roofs measured for a kind of kernel rather than for every kernel: a sweep point or a
floor, each from a few repetitions of its own reference."""

OWN_ROOF_TOLERANCE = 1.1
"""How far beyond the slow end of its spread a kernel must beat a roof of its own kind
(:data:`OWN_ROOFS`) before that roof cannot place it. Such a roof is the same operation
measured at another moment (the sweep's product of the kernel's shape, a floor's reference
call), and two measurements of one operation differ by a few percent on a busy machine:
2026-12-03, the MLP at B = 1,024 (one ``F.linear`` of 1,024 x 2,048 x 2,048) ran at 190
GFLOP/s with a 2 % spread while the sweep's best of nine rounds of that very product was 183,
so the rule sent it to the compute peak at 43 %. Issue 21 allows a kernel 10 % over its roof;
so does this rule, and no more (``benchmarks/bench_roofs.py`` counts any beyond)."""


def beaten_roofs(m: Measurement, peaks: Peaks, *, tolerance: float = 1.0) -> tuple[str, ...]:
    """The roofs of :data:`OWN_ROOFS` that bound ``m`` and that it beat beyond its spread. Each
    is a sweep point or a floor measured slower than the machine can go (a busy moment during
    its few repetitions), so the run measures it again; one beaten still by more than
    :data:`OWN_ROOF_TOLERANCE` then does not place the kernel (:func:`observe` leaves it
    out), and the roofline page says why (``tolerance=OWN_ROOF_TOLERANCE`` names those).

    >>> from gpuconcepts.measure import Measurement
    >>> p = Peaks("cpu", 1e11, 1e10, "float32", latency_seconds=2e-6, op_seconds=1e-6)
    >>> loop = Measurement("rnn-loop", "cpu", {}, (2e-3, 2e-3), 2e6, 1e5, ops=4096, steps=1024)
    >>> beaten_roofs(loop, p)
    ('chain',)
    """
    slowest = m.interval_seconds[1] * tolerance
    return tuple(name for name, t in roof_times(m, peaks) if name in OWN_ROOFS and t > slowest)


def beats_every_roof(m: Measurement, peaks: Peaks) -> bool:
    """True when ``m`` beat every roof by more than its spread: even its third-quartile time is
    faster than the roofs allow. A faulty measurement or a missing roof, never a verdict.

    >>> from gpuconcepts.measure import Measurement
    >>> p = Peaks(device="cpu", flops_per_s=1e11, bytes_per_s=1e10, dtype="float32")
    >>> beats_every_roof(Measurement("mlp", "cpu", {}, (0.008, 0.009, 0.0095), 1e9, 1e6), p)
    True
    >>> beats_every_roof(Measurement("mlp", "cpu", {}, (0.008, 0.009, 0.014), 1e9, 1e6), p)
    False
    """
    return observe(m, peaks)[0] == ABOVE_EVERY_ROOF


def place(m: Measurement, peaks: Peaks) -> Placement:
    """Where ``m`` sits under ``peaks``: its roofline time, measured ÷ roofline, the predicted
    side of the ridge (by the formulas' intensity), and the observed bound."""
    predicted = predicted_seconds(m.flops, m.bytes, peaks)
    observed, attained = observe(m, peaks)
    return Placement(
        predicted_seconds=predicted,
        ratio=m.seconds / predicted,
        bound=classify(m.intensity, peaks),
        observed=observed,
        attained=attained,
    )


def changes_side(
    measurements: Sequence[Measurement], here: Peaks, elsewhere: Sequence[Peaks]
) -> list[tuple[Measurement, tuple[str, ...]]]:
    """The measurements whose predicted bound under ``here`` is not their bound under some of
    ``elsewhere`` (other machines' peaks), each with the names of the peaks where it changes
    side.

    A kernel's intensity is the same everywhere; only the ridge point it is read against moves.

    >>> cpu = Peaks("cpu", 1e11, 1e10, "float32")  # ridge 10 FLOP/byte
    >>> gpus = [Peaks("cuda", 2e13, 2e12, "float32", name="A"),
    ...         Peaks("cuda", 8e13, 1e12, "float32", name="B")]  # ridges 10 and 80
    >>> from gpuconcepts.measure import Measurement
    >>> kernels = [Measurement(name, "cpu", {}, (1.0,), flops, 1.0)
    ...            for name, flops in (("lookup", 0.25), ("mlp", 40.0), ("gemm", 200.0))]
    >>> [(m.workload, where) for m, where in changes_side(kernels, cpu, gpus)]
    [('mlp', ('B',))]
    """
    changed = []
    for m in measurements:
        verdict = classify(m.intensity, here)
        where = tuple(p.name for p in elsewhere if classify(m.intensity, p) != verdict)
        if where:
            changed.append((m, where))
    return changed


@dataclass(frozen=True)
class GapSplit:
    """The FLOP-rate gap between two kernels, split into what their roofs explain and the rest.

    ``measured`` is the faster kernel's FLOP/s over the slower one's. ``roofline`` is the ratio of
    their roofs at their intensities (``attainable_flops``): the part that data reuse alone
    explains. ``rest`` = ``measured`` / ``roofline``, the part the roofline does not: it equals
    ``fast_attained`` / ``slow_attained``, each kernel's measured FLOP/s over its own roof.
    """

    measured: float
    roofline: float
    rest: float
    fast_attained: float
    slow_attained: float


def gap_split(fast: Measurement, slow: Measurement, peaks: Peaks) -> GapSplit:
    """Split the FLOP-rate gap between ``fast`` and ``slow`` under ``peaks`` (see GapSplit).

    A dense kernel at its compute roof against one at half of a bandwidth roof a quarter as
    high: the gap of eight is four from reuse and two from the slow kernel's own inefficiency.

    >>> from gpuconcepts.measure import Measurement
    >>> peaks = Peaks("cpu", 1e11, 1e10, "float32")  # ridge 10 FLOP/byte
    >>> dense = Measurement("cnn-conv", "cpu", {}, (1.0,), 1e11, 1e9)  # I = 100, at 100 GFLOP/s
    >>> depthwise = Measurement("cnn-depthwise", "cpu", {}, (1.0,), 1.25e10, 5e9)  # I = 2.5
    >>> split = gap_split(dense, depthwise, peaks)
    >>> split.measured, split.roofline, split.rest, split.fast_attained, split.slow_attained
    (8.0, 4.0, 2.0, 1.0, 0.5)
    """
    fast_roof = attainable(fast.intensity, peaks)
    slow_roof = attainable(slow.intensity, peaks)
    fast_attained = fast.flops_per_s / fast_roof
    slow_attained = slow.flops_per_s / slow_roof
    return GapSplit(
        measured=fast.flops_per_s / slow.flops_per_s,
        roofline=fast_roof / slow_roof,
        rest=fast_attained / slow_attained,
        fast_attained=fast_attained,
        slow_attained=slow_attained,
    )


def ridge(flops_per_s: float, bytes_per_s: float) -> float:
    """Ridge point in FLOP/byte: ``formulas.ridge_point(P, beta)``."""
    return float(formulas.ridge_point(P=flops_per_s, beta=bytes_per_s))


def classify(intensity: float, peaks: Peaks) -> Bound:
    """``"memory"`` when the intensity is below the ridge point, else ``"compute"``."""
    return "memory" if intensity < peaks.ridge_point else "compute"


def predicted_seconds(flops: float, bytes: float, peaks: Peaks) -> float:
    """Roofline lower bound on run time: ``formulas.roofline_seconds(F, Q, P, beta)``."""
    return float(
        formulas.roofline_seconds(F=flops, Q=bytes, P=peaks.flops_per_s, beta=peaks.bytes_per_s)
    )


def attainable(intensity: float, peaks: Peaks) -> float:
    """The roof at an intensity: ``formulas.attainable_flops(I, P, beta)``."""
    return float(
        formulas.attainable_flops(I=intensity, P=peaks.flops_per_s, beta=peaks.bytes_per_s)
    )


def own_roof_flops_per_s(m: Measurement, peaks: Peaks) -> float | None:
    """The FLOP/s that the roof which served ``m`` allows, when that roof is no line in
    intensity (the chain, the per-call floor, the GEMM shape, random access, or DRAM read from
    a cold start),
    so that a figure can draw it at the kernel's own intensity; None otherwise, and for a
    kernel that does no arithmetic (it has no place on a FLOP/s axis).

    >>> from gpuconcepts.measure import Measurement
    >>> p = Peaks("cpu", 1e11, 1e10, "float32", latency_seconds=2e-6, op_seconds=1e-6)
    >>> loop = Measurement("rnn-loop", "cpu", {}, (8e-3,), 2e6, 1e5, ops=4096, steps=1024)
    >>> round(own_roof_flops_per_s(loop, p) / 1e6)
    486
    >>> own_roof_flops_per_s(Measurement("mlp", "cpu", {}, (0.02,), 1e9, 1e6), p) is None
    True
    """
    name, attained = observe(m, peaks)
    moved = moved_bytes(m)
    cold_seconds = peaks.cold_seconds(moved) if m.flush else None
    dram = peaks.memory_roofs[-1]
    cold = (
        name == dram.name and cold_seconds is not None and cold_seconds > moved / dram.bytes_per_s
    )
    if m.flops == 0 or not (name in (CHAIN, PER_CALL, GEMM_SHAPE, RANDOM_ACCESS) or cold):
        return None
    return m.flops_per_s / attained
