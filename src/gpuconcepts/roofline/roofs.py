r"""The post's model as a registry of roofs, and the verdict it gives a kernel.

A kernel's time is at least :math:`\max(F/P,\ Q/\beta,\ \text{overhead})`: its FLOPs at the
compute ceiling P, its bytes at the bandwidth β of the memory level its working set fits in,
and its calls and operations at their latency floors. Each ceiling is measured once, by a
microbenchmark apart from every kernel (:class:`~gpuconcepts.roofline.peaks.Peaks`). The
longest bound is the kernel's **bound**; bound ÷ measured time is the fraction of that roof it
**attained**, a finding whatever its value: a kernel at 30 % of its roof is shown at 30 %.

Each roof is one small class (:class:`ComputeRoof`, :class:`MemoryRoof`, :class:`OverheadRoof`)
with its :attr:`~Roof.kind`, the :attr:`~Roof.needs` (the fields of ``Peaks`` it reads) and its
:meth:`~Roof.bound`; :data:`ROOFS` lists them and :func:`verdict` loops over the list. Adding a
roof is one class here and the sweep that measures its ceiling. What explains a gap below the
roof is :mod:`~gpuconcepts.roofline.diagnosis`'s business, never this module's.

>>> from gpuconcepts.measure import Measurement
>>> from gpuconcepts.roofline.peaks import Peaks
>>> p = Peaks("cpu", flops_per_s=1e11, bytes_per_s=1e10, dtype="float32")
>>> slow = Measurement("mlp", "cpu", {}, (0.029, 0.03, 0.031), 1e9, 1e6)  # roof 10 ms, took 30
>>> v = verdict(slow, p)
>>> v.kind, v.name, round(v.attained, 3), [round(a, 3) for a in v.attained_interval]
('compute', 'compute', 0.333, [0.328, 0.339])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Literal

from gpuconcepts.roofline.counts import moved_bytes, random_table_bytes, working_set_bytes
from gpuconcepts.roofline.references import paired_peaks

if TYPE_CHECKING:
    from gpuconcepts.measurement import Measurement
    from gpuconcepts.roofline.peaks import MemoryLevel, Peaks

RoofKind = Literal["compute", "memory", "overhead"]
"""The three regimes of the post's model; renderers read a roof's kind, never its name."""

OVERHEAD = "overhead"
"""The overhead roof's name: a call's and an operation's latency, however many there are."""


@dataclass(frozen=True)
class Bound:
    """One roof's lower bound on a kernel's time: the roof, its name for people (``compute``,
    a memory level's name such as ``L2`` or ``DRAM``, ``overhead``) and the seconds.
    ``random``: the bound of rows fetched at random addresses, at the random-access rate of
    that level rather than its streaming bandwidth (a reader must not take one for the other)."""

    roof: Roof
    name: str
    seconds: float
    random: bool = False

    @property
    def kind(self) -> RoofKind:
        """The regime of the roof that sets this bound."""
        return self.roof.kind


class Roof:
    """One roof of the model: its kind, the ``Peaks`` fields it needs, and its bound (a
    mechanism of :data:`~gpuconcepts.roofline.mechanisms.MODEL` whose role is the prediction)."""

    role: ClassVar[Literal["roof", "diagnosis"]] = "roof"
    kind: ClassVar[RoofKind]
    needs: ClassVar[tuple[str, ...]]
    """The fields of :class:`~gpuconcepts.roofline.peaks.Peaks` the bound reads: ceilings
    measured once by microbenchmarks, never a sweep of the kernel's own operations."""

    def bound(self, m: Measurement, peaks: Peaks) -> Bound | None:
        """The least time ``m`` can take under this roof; None when ``peaks`` lacks it."""
        raise NotImplementedError

    def times(self, m: Measurement, peaks: Peaks) -> tuple[tuple[str, float], ...]:
        """This roof's bound on ``m`` by its name, as every mechanism gives its times."""
        found = self.bound(m, peaks)
        return () if found is None else ((found.name, found.seconds),)


class ComputeRoof(Roof):
    """F/P: the kernel's FLOPs at the measured compute peak (a large GEMM).

    >>> from gpuconcepts.measure import Measurement
    >>> from gpuconcepts.roofline.peaks import Peaks
    >>> ComputeRoof().bound(Measurement("x", "cpu", {}, (1.0,), 2e9, 1), Peaks("cpu", 1e11, 1e10, "f")).seconds
    0.02
    """

    kind = "compute"
    needs = ("flops_per_s",)

    def bound(self, m: Measurement, peaks: Peaks) -> Bound:
        return Bound(self, "compute", m.flops / peaks.flops_per_s)


class MemoryRoof(Roof):
    """Q/β: the bytes the kernel's code moves at the bandwidth of the level that holds its
    working set (:func:`level`); for a kernel timed right after a cache flush, at least its
    working set at DRAM's bandwidth too, since every distinct byte first comes from there.
    Rows fetched at random addresses (``random_rows`` of ``row_bytes``) cost their whole lines
    at the rate the memory serves lines at random (:meth:`Peaks.random_lines_per_s
    <gpuconcepts.roofline.peaks.Peaks.random_lines_per_s>`, the gather sweep on tables at
    least 2x away from every judged one), never at the streaming β: a random line waits for
    its own latency (since 2026-12-07; the change log says after which run). The longest
    names the level.

    >>> from gpuconcepts.measure import Measurement
    >>> from gpuconcepts.roofline.peaks import MemoryLevel, Peaks
    >>> p = Peaks("cpu", 1e11, 1e10, "float32", levels=(MemoryLevel("L2", 2**20, 1e11),))
    >>> MemoryRoof().bound(Measurement("x", "cpu", {}, (1.0,), 0, 1e5), p)
    Bound(roof=MemoryRoof(), name='L2', seconds=1e-06, random=False)
    >>> MemoryRoof().bound(Measurement("x", "cpu", {}, (1.0,), 0, 1e5, flush=True), p).name
    'DRAM'
    """

    kind = "memory"
    needs = ("bytes_per_s", "levels", "random_sweep", "line_bytes")

    def bound(self, m: Measurement, peaks: Peaks) -> Bound:
        bounds = self.streaming(m, peaks)
        random = random_seconds(m, peaks)
        if random is not None:
            bounds.append(Bound(self, table_level(m, peaks).name, random, random=True))
        return max(bounds, key=lambda b: b.seconds)

    def streaming(self, m: Measurement, peaks: Peaks) -> list[Bound]:
        """The bounds of ``m``'s bytes at the levels' streaming bandwidths, whatever order it
        reads them in: its moved bytes at the level holding its working set and, after a
        flush, every distinct byte at DRAM's."""
        held = level(m, peaks)
        bounds = [Bound(self, held.name, moved_bytes(m) / held.bytes_per_s)]
        if m.flush:
            dram = peaks.memory_roofs[-1]
            bounds.append(Bound(self, dram.name, working_set_bytes(m) / dram.bytes_per_s))
        return bounds

    def __repr__(self) -> str:
        return "MemoryRoof()"


class OverheadRoof(Roof):
    """The overhead floor: each call Python makes at the latency floor (the first at the cold
    one after a flush), each operation the framework dispatches inside at the per-operation
    floor; at least one call. None when no floor was measured.

    >>> from gpuconcepts.measure import Measurement
    >>> from gpuconcepts.roofline.peaks import Peaks
    >>> p = Peaks("cpu", 1e11, 1e10, "float32", latency_seconds=2e-6, op_seconds=1e-6)
    >>> loop = Measurement("rnn-loop", "cpu", {}, (5e-3,), 2e6, 1e5, ops=4096, steps=1024)
    >>> OverheadRoof().bound(loop, p).seconds
    0.004096
    """

    kind = "overhead"
    needs = ("latency_seconds", "cold_latency_seconds", "op_seconds")

    def bound(self, m: Measurement, peaks: Peaks) -> Bound | None:
        seconds = overhead_seconds(m, peaks)
        return None if seconds is None else Bound(self, OVERHEAD, seconds)


ROOFS: tuple[Roof, ...] = (ComputeRoof(), MemoryRoof(), OverheadRoof())
"""Every roof of the model, in the order a tie is named by."""


def level(m: Measurement, peaks: Peaks) -> MemoryLevel:
    """The memory level that holds ``m``'s working set
    (:func:`~gpuconcepts.roofline.counts.working_set_bytes`): the first measured level it
    fits in, DRAM (HBM) when none."""
    return peaks.memory_roofs[peaks.level_of(int(working_set_bytes(m)))]


def table_level(m: Measurement, peaks: Peaks) -> MemoryLevel:
    """The memory level that holds the table ``m``'s random rows come from; the level of its
    working set (:func:`level`) when the table's size is unknown."""
    table = random_table_bytes(m)
    return peaks.memory_roofs[peaks.level_of(int(table))] if table else level(m, peaks)


def random_lines(m: Measurement, peaks: Peaks) -> int | None:
    """The whole lines (``peaks.line_bytes``) ``m``'s random rows touch, ⌈row_bytes / line⌉
    a row; None for a kernel without random rows or a run without a line size."""
    if not (m.random_rows and m.row_bytes and peaks.line_bytes):
        return None
    return m.random_rows * -(-m.row_bytes // peaks.line_bytes)


def random_seconds(m: Measurement, peaks: Peaks) -> float | None:
    """The least time of ``m``'s rows fetched at random addresses: each row's lines
    (⌈row_bytes / line⌉) at the random-access line rate for rows of its width from a table of
    its size (:meth:`Peaks.random_lines_per_s
    <gpuconcepts.roofline.peaks.Peaks.random_lines_per_s>`). None for a kernel without random
    rows, or without that sweep or a line size.

    >>> from gpuconcepts.measure import Measurement
    >>> from gpuconcepts.roofline.peaks import Peaks
    >>> p = Peaks("cpu", 1e11, 1e10, "float32", line_bytes=64, random_sweep=((2**28, 16, 5e7),))
    >>> rows = Measurement("dlrm-random", "cpu", {"N": 2**24, "d": 4, "s": 4}, (1.0,), 0, 2**20,
    ...                    random_rows=10**6, row_bytes=16)
    >>> random_seconds(rows, p)  # a million lines at 50 million a second
    0.02
    """
    lines = random_lines(m, peaks)
    if lines is None or not (m.row_bytes and peaks.random_sweep):
        return None
    table = random_table_bytes(m)
    rate = peaks.random_lines_per_s(m.row_bytes, int(table) if table else None, m.random_rows)
    return lines / rate if rate else None


def overhead_seconds(m: Measurement, peaks: Peaks) -> float | None:
    """The overhead floor of ``m`` under ``peaks`` (:class:`OverheadRoof`)."""
    warm = peaks.latency_seconds
    if warm is None and peaks.op_seconds is None:
        return None
    cold = peaks.cold_latency_seconds if m.flush else None
    first = cold if cold is not None else warm
    calls = (m.calls or 0) if warm is not None else 0
    inner = max((m.ops or 0) - calls, 0)
    dispatch = calls * (warm or 0.0) + inner * (peaks.op_seconds or 0.0)
    if calls and first is not None and warm is not None:
        dispatch += first - warm  # the first call starts cold
    return max(dispatch, first or 0.0)


@dataclass(frozen=True)
class Verdict:
    """A kernel's place in the model: every roof's bound, the one that binds, and the fraction
    of it attained with its spread (the bound over the third and first quartiles of the time).
    ``beaten``: even the slow end of the spread is faster than the roof allows, shown with its
    numbers and never raising the ceiling: an anomaly (a faulty measurement, or a ceiling
    measured in a busy moment), or a kernel on a faster path than the ceiling's (a oneDNN
    convolution beside ``torch.mm``'s square GEMM on a CPU), a finding."""

    bounds: tuple[Bound, ...]
    seconds: float
    interval_seconds: tuple[float, float]

    @property
    def binding(self) -> Bound:
        """The longest bound (the earlier roof of :data:`ROOFS` on a tie)."""
        return max(self.bounds, key=lambda b: b.seconds)

    @property
    def kind(self) -> RoofKind:
        return self.binding.kind

    @property
    def name(self) -> str:
        return self.binding.name

    @property
    def roof_seconds(self) -> float:
        return self.binding.seconds

    @property
    def attained(self) -> float:
        """Roof time over the median time."""
        return self.roof_seconds / self.seconds

    @property
    def attained_interval(self) -> tuple[float, float]:
        """The attained fraction at the third and the first quartile of the time."""
        fast, slow = self.interval_seconds
        return self.roof_seconds / slow, self.roof_seconds / fast

    @property
    def beaten(self) -> bool:
        return self.roof_seconds > self.interval_seconds[1]


def verdict(m: Measurement, peaks: Peaks) -> Verdict:
    """``m`` under the roofs of :data:`ROOFS`: the one placement of the book, the CLI,
    ``compare`` and ``analyze``. The floors ``m`` was timed beside replace those of ``peaks``
    (:func:`~gpuconcepts.roofline.references.paired_peaks`)."""
    ceilings = paired_peaks(m, peaks)
    bounds = tuple(b for roof in ROOFS if (b := roof.bound(m, ceilings)) is not None)
    return Verdict(bounds, m.seconds, m.interval_seconds)
