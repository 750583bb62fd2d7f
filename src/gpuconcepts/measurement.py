"""The measured values: :class:`Measurement`, one timed kernel's raw repetition times and
counts, and its statistics (median and interquartile range), which knows nothing of any
machine; and :class:`NoiseProbe`, how busy the machine was at one moment. The timers and probes
that fill them are in :mod:`gpuconcepts.measure`, above this module."""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.records import to_record
from gpuconcepts.units import percent, plain_number, plural, si, significant

NOISE_THRESHOLD = 0.1
"""A measurement whose IQR exceeds this fraction of its median is flagged ``noisy``."""


# -- values ----------------------------------------------------------------------------------
def _positive(value: object) -> bool:
    """A finite number above zero (booleans and text are not numbers here)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return math.isfinite(value) and value > 0


def quartiles(values: Sequence[float]) -> tuple[float, float]:
    """The first and third quartiles of ``values``, the book's one spread statistic: inclusive
    (linear interpolation between the sorted values, as ``numpy.percentile`` does); a single
    value is both.

    >>> quartiles([1.0, 2.0, 3.0, 4.0, 5.0]), quartiles([1.0, 2.0]), quartiles([7.0])
    ((2.0, 4.0), (1.25, 1.75), (7.0, 7.0))
    """
    if len(values) < 2:
        return values[0], values[0]
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[0], q[2]


def seconds_spread(seconds: Sequence[float]) -> str:
    """Repetitions of a time as the book writes every measured time: the median (3 significant
    digits) ± the interquartile range (2, :func:`quartiles`). One home for the format, so a
    kernel's time, a whole forward pass's and a claim's detail read alike.

    >>> seconds_spread([1e-3, 2e-3, 3e-3, 4e-3, 5e-3])
    '3 ms ± 2 ms'
    >>> seconds_spread([])
    Traceback (most recent call last):
    ...
    gpuconcepts.errors.GpuConceptsError: seconds_spread: seconds must hold at least one repetition
    """
    if not seconds:
        raise GpuConceptsError("seconds_spread: seconds must hold at least one repetition")
    low, high = quartiles(seconds)
    return f"{si(statistics.median(seconds), 's')} ± {si(high - low, 's', digits=2)}"


def block_bounds(repetitions: int, blocks: int) -> tuple[tuple[int, int], ...]:
    """The (start, end) of each of ``blocks`` consecutive blocks of ``repetitions``: equal
    parts, the last holding what does not divide evenly.

    >>> block_bounds(7, 3), block_bounds(4, 1)
    (((0, 2), (2, 4), (4, 7)), ((0, 4),))
    """
    size = repetitions // blocks
    return tuple(
        (i * size, repetitions if i == blocks - 1 else (i + 1) * size) for i in range(blocks)
    )


ACCESS_FIELDS = ("ops", "calls", "steps", "random_rows", "row_bytes")
"""The optional counts of a :class:`Measurement` that the roofs beyond compute and bandwidth
read (see its docstring)."""


@dataclass(frozen=True)
class Measurement:
    """One timed kernel: its raw repetition times and its counts (from the formulas).

    The statistic, chosen here once for every table, plot and verdict, is the **median** of
    the repetitions, with the **interquartile range** as its spread. A measurement holds no
    machine model: :func:`gpuconcepts.roofline.place` reads it against a set of peaks.

    ``flush`` says whether the caches were flushed before each repetition; ``series`` holds
    what was observed alongside the timing (e.g. the KV-cache bytes after each decode step).
    ``group`` names the paired comparison the kernel was timed in ("" when it was timed
    alone): then ``raw_seconds[i]`` ran in round ``i``, beside the ``i``-th repetition of
    every other member of the group (see :class:`Rounds` and :func:`paired`).

    What the overhead roof and the diagnoses need (None when unknown or not applicable):
    ``ops``, the operations one call dispatches (counted from the code path,
    :func:`gpuconcepts.kernels.dispatch.count_dispatch`), and ``calls``, those of them that
    Python called (the rest ran inside the framework's C++); ``steps``, how many depend on
    each other in a chain (an RNN's S, a decode's steps); ``random_rows`` and ``row_bytes``,
    rows of that many bytes fetched at random addresses (a random embedding lookup).

    ``references`` holds the latency floors the kernel was timed beside, in the same rounds
    (empty when it was not): by the name of what each measured
    (:attr:`gpuconcepts.roofline.Reference.key`), its seconds in each round. Round ``i`` of a
    reference ran beside ``raw_seconds[i]``, so the overhead roof is read from the floors of
    the moment it ran (:func:`gpuconcepts.roofline.paired_peaks`). Runs saved before
    2026-12-06 also hold the kernel's own products and lookup point; they load, unread.
    ``threads``: the CPU threads it ran on (fewer than the run's when another program had
    taken a core before it was timed; None on a GPU and in runs saved before).
    ``blocks``: the independent blocks its repetitions were timed in (:func:`block_bounds`:
    consecutive parts of ``raw_seconds``, each block re-prepared and warmed up on its own, at
    another moment), so that an interval can include the variation from one block to the next
    and not only within one (:func:`gpuconcepts.claims.quantities.with_interval`); 1 in runs
    saved before blocks, whose intervals then see one block only.

    >>> m = Measurement("dlrm-random", "cpu", {"B": 8}, (2e-3, 4e-3, 3e-3), 1e6, 1e7)
    >>> m.seconds, m.iqr_seconds, m.interval_seconds, m.intensity
    (0.003, 0.001, (0.0025, 0.0035), 0.1)
    >>> m.noisy
    True
    >>> [round(rate / 1e6) for rate in m.interval_flops_per_s]
    [286, 400]
    """

    workload: str
    device: str
    params: Mapping[str, object]
    raw_seconds: tuple[float, ...]
    flops: int | float  # exact when whole (the formulas' count); records keep an int an int
    bytes: int | float
    flush: bool = False
    series: Mapping[str, tuple[int | float, ...]] = field(default_factory=dict)  # ints stay ints
    group: str = ""
    ops: int | None = None
    calls: int | None = None
    steps: int | None = None
    random_rows: int | None = None
    row_bytes: int | None = None
    references: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    threads: int | None = None
    blocks: int = 1

    OPTIONAL_KEYS: ClassVar[frozenset[str]] = frozenset(
        {"series", "group", "references", "threads", "blocks", *ACCESS_FIELDS}
    )
    """Written only when set, as saved runs have always stored them."""
    DERIVED_KEYS: ClassVar[frozenset[str]] = frozenset({"summary"})
    """A run writes its statistics beside the fields for readers of the file
    (``Run._measurement_record``); reading a measurement ignores them (the run keeps the
    registered prediction apart: :attr:`gpuconcepts.run.run.Run.registered`)."""

    def __post_init__(self) -> None:
        for name in (*ACCESS_FIELDS, "threads"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                      or value < 1):  # fmt: skip
                raise GpuConceptsError(
                    f"Measurement {self.workload!r}: {name} must be a positive integer; "
                    f"got {value!r}"
                )
        if not self.raw_seconds:
            raise GpuConceptsError(f"Measurement {self.workload!r}: raw_seconds is empty")
        if isinstance(self.blocks, bool) or not 1 <= self.blocks <= len(self.raw_seconds):
            raise GpuConceptsError(
                f"Measurement {self.workload!r}: blocks must be an integer from 1 to its "
                f"repetitions ({len(self.raw_seconds)}); got {self.blocks!r}"
            )
        for name, values in self.references.items():
            if len(values) != len(self.raw_seconds) or not all(_positive(v) for v in values):
                raise GpuConceptsError(
                    f"Measurement {self.workload!r}: reference {name!r} must hold one positive "
                    f"value per repetition ({len(self.raw_seconds)}); got {list(values)!r}"
                )
        bad = [t for t in self.raw_seconds if not _positive(t)]
        if bad:
            raise GpuConceptsError(
                f"Measurement {self.workload!r}: every raw time must be positive; got {bad[0]!r}"
            )
        # a pure data movement (a copy, a gather) does no arithmetic: FLOPs may be zero
        if not (_positive(self.flops) or self.flops == 0) or isinstance(self.flops, bool):
            raise GpuConceptsError(
                f"Measurement {self.workload!r}: flops must be zero or more; got {self.flops!r}"
            )
        if not _positive(self.bytes):
            raise GpuConceptsError(
                f"Measurement {self.workload!r}: bytes must be positive; got {self.bytes!r}"
            )

    @property
    def block_times(self) -> tuple[tuple[float, ...], ...]:
        """``raw_seconds`` cut into its :attr:`blocks` (:func:`block_bounds`).

        >>> Measurement("x", "cpu", {}, (1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0), 1, 1,
        ...             blocks=3).block_times
        ((1.0, 2.0), (3.0, 4.0), (5.0, 6.0, 7.0))
        """
        return tuple(
            self.raw_seconds[start:end]
            for start, end in block_bounds(len(self.raw_seconds), self.blocks)
        )

    @property
    def seconds(self) -> float:
        """Median of the repetitions: the one statistic of the book."""
        return float(statistics.median(self.raw_seconds))

    @property
    def interval_seconds(self) -> tuple[float, float]:
        """The first and third quartiles of the repetitions: the spread shown beside a time."""
        return quartiles(self.raw_seconds)

    @property
    def iqr_seconds(self) -> float:
        """Interquartile range of the repetitions (0 for a single one)."""
        low, high = self.interval_seconds
        return high - low

    @property
    def noisy(self) -> bool:
        """True when the IQR is over 10 % of the median (as torch.utils.benchmark warns)."""
        return self.iqr_seconds > NOISE_THRESHOLD * self.seconds

    @property
    def flops_per_s(self) -> float:
        """Achieved FLOP/s at the median time."""
        return self.flops / self.seconds

    @property
    def bytes_per_s(self) -> float:
        """Achieved bytes/s at the median time (model bytes, see the formulas' traffic model)."""
        return self.bytes / self.seconds

    @property
    def interval_flops_per_s(self) -> tuple[float, float]:
        """FLOP/s at the slow and fast quartile ends of the time: the spread of a rate."""
        fast, slow = self.interval_seconds
        return self.flops / slow, self.flops / fast

    @property
    def interval_bytes_per_s(self) -> tuple[float, float]:
        """Bytes/s at the slow and fast quartile ends of the time."""
        fast, slow = self.interval_seconds
        return self.bytes / slow, self.bytes / fast

    @property
    def intensity(self) -> float:
        """Arithmetic intensity, FLOPs per byte."""
        return self.flops / self.bytes

    def size(self, name: str) -> int:
        """An integer size of the kernel (``B``, ``S``, ``s``...), with a clear error if absent.

        >>> Measurement("mlp", "cpu", {"B": 4}, (1.0,), 1.0, 1.0).size("B")
        4
        """
        value = self.params.get(name)
        if isinstance(value, bool) or not isinstance(value, int):
            raise GpuConceptsError(
                f"measurement {self.workload!r} has no integer size {name!r}; "
                f"params: {dict(self.params)}"
            )
        return value

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict of the fields (what a saved Run stores; the statistics derive)."""
        return to_record(self)


@dataclass(frozen=True)
class NoiseProbe:
    """How busy the machine was at one moment: its load, its clock and the spread of a fixed
    reference kernel (a small matrix product timed :data:`REFERENCE_REPEATS` times).

    A run takes one before and one after its measurements and keeps both in its provenance,
    so a reader sees how much noise its verdicts had to get through.

    >>> probe = NoiseProbe(load_average=0.2, cores=2, cpu_mhz=None, reference_seconds=1e-4,
    ...                    reference_spread=0.35)
    >>> probe.busy, probe.text()
    (True, "load average 0.2 on 2 cores, a reference kernel's spread 35%")
    """

    load_average: float
    cores: int
    cpu_mhz: float | None
    reference_seconds: float
    reference_spread: float
    measured_mhz: float | None = None
    """One core's clock as measured (:func:`~gpuconcepts.measure.physical.measured_hz`), not
    the "cpu MHz" of /proc/cpuinfo (``cpu_mhz``, which boost clocks pass); None on a GPU, where
    it cannot run, and in runs recorded before 2026-12-07."""
    threads: int | None = None
    """The threads torch ran on at the probe (the run pins them:
    :func:`~gpuconcepts.measure.noise.pinned_threads`); None on a GPU and in runs recorded
    before 2026-12-07."""

    OPTIONAL_KEYS: ClassVar[frozenset[str]] = frozenset({"measured_mhz", "threads"})
    """Written only when set, so a run recorded before them saves as it was."""

    @property
    def busy(self) -> bool:
        """True when the reference kernel's spread (IQR over median) was over
        :data:`NOISE_THRESHOLD`, the level at which a single measurement is called noisy."""
        return self.reference_spread > NOISE_THRESHOLD

    def text(self) -> str:
        """The probe in words."""
        if self.measured_mhz:
            clock = f", a measured clock of {plain_number(round(self.measured_mhz))} MHz"
        else:
            clock = f", {plain_number(round(self.cpu_mhz))} MHz" if self.cpu_mhz else ""
        threads = f", {plural(self.threads, 'thread')}" if self.threads else ""
        return (
            f"load average {significant(self.load_average, 2)} on "
            f"{plural(self.cores, 'core')}{clock}{threads}, a reference kernel's spread "
            f"{percent(self.reference_spread)}"
        )
