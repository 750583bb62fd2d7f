"""The one place kernels are measured, when a run is collected: each (workload, sizes) once.

The profile and every claim's experiments ask a :class:`Lab` for a workload at some sizes
(:meth:`Lab.measure`) or for kernels timed side by side (:meth:`Lab.compare`). The lab runs
the kernel the first time and hands back the same measurement every later time, so one build
times each kernel at each size once, and every page quotes the same number. Judging reads
what it measured through :meth:`Lab.measured`, the same read-only lookup
(:class:`~gpuconcepts.results.measured.Measured`) that a run loaded from disk gives: no lab
ever replays a saved run. torch is imported only when a lab measures.
"""

# torch is imported inside functions on purpose (README, Rules: 3).
# ruff: noqa: PLC0415

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.hardware import dtype_name
from gpuconcepts.measure import Measurement
from gpuconcepts.measure.timing import time_in_blocks
from gpuconcepts.results.measured import (
    SECOND_LOOK,
    Check,
    Comparison,
    Fact,
    Measured,
    Wanted,
    distinct,
    profile_sizes,
    shown,
    whole_group,
)
from gpuconcepts.roofline import Peaks
from gpuconcepts.workloads import WORKLOADS

LOAD_SAMPLE_SECONDS = 0.05
"""How long a live lab samples the cores' load before it times a kernel or a comparison (five
of Linux's 10 ms ticks): long enough to see a core another program keeps busy."""

LOAD_SAMPLE_EVERY = 2.0
"""Seconds a live lab keeps what its last sample of the cores found: a load that starts is
seen within them, and a quick run of some hundred kernels and comparisons samples a few dozen
times rather than before each."""

TIMED_ON_FEWER_CORES = "timed-on-fewer-cores"
"""The fact a live run records when it found a core busy with another program before some of
its kernels and comparisons, and timed those on the other cores (``groups``: how many)."""

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Budget:
    """How a comparison measures (``timing`` table of ``conf/presets.toml``): a fixed number of
    paired ``rounds``, in ``blocks`` independent blocks, set before it runs.

    The rounds do not depend on what they show: rounds added until every claim was decided
    (optional stopping, as runs recorded before 2026-12-07 did) would make a wrong verdict more
    likely than the interval's coverage says; with a fixed number the error rate is the one
    :data:`~gpuconcepts.claims.thresholds.WRONG_VERDICT_RATE` states. The blocks (at least
    :data:`~gpuconcepts.claims.thresholds.MIN_BLOCKS`) are timed one after the other, each
    warmed up again (:meth:`~gpuconcepts.measure.Rounds.new_block`), and a claim's interval
    resamples them first (:func:`~gpuconcepts.claims.quantities.block_resample`), so it
    includes the variation from one moment to the next.
    """

    rounds: int = 12
    blocks: int = 3

    def __post_init__(self) -> None:
        if not 1 <= self.blocks <= self.rounds:
            raise GpuConceptsError(
                f"Budget: blocks must be from 1 to the rounds ({self.rounds}); got {self.blocks}"
            )

    @classmethod
    def from_timing(cls, timing: Mapping[str, int]) -> Budget:
        """The budget of a presets ``timing`` table (``compare_rounds``, ``compare_blocks``).

        >>> Budget.from_timing({"repeats": 7, "compare_rounds": 15, "compare_blocks": 3})
        Budget(rounds=15, blocks=3)
        """
        default = cls()
        return cls(
            rounds=int(timing.get("compare_rounds", default.rounds)),
            blocks=int(timing.get("compare_blocks", default.blocks)),
        )


Key = tuple[str, tuple[tuple[str, object], ...]]


def _key(workload: str, sizes: Mapping[str, object]) -> Key:
    return workload, tuple(sorted(sizes.items()))


class Lab:
    """Measurements by workload and sizes, each measured once, when a run is collected.

    Args:
        device: the resolved device (``"cpu"`` or ``"cuda"``) the measurements belong to.
        label: the device for people, e.g. ``"cpu (AMD EPYC 9R14, 2 threads)"``.
        dtype: the data type every kernel runs in, by name or alias (``bf16``); None: each
            kernel's default, see
            :func:`~gpuconcepts.kernels.default_dtype`).
        budget: the fixed rounds and blocks of each comparison (:meth:`compare`); a kernel
            measured alone takes ``repeats`` rounds in as many of its blocks as fit.
        peaks: its measured peaks (kernels use the ridge point to decide whether to flush).
        repeats: timed repetitions of each kernel.
        cache_bytes, free_bytes: the device's last-level cache (as the measured hierarchy
            found it, :class:`~gpuconcepts.measure.hierarchy.Sizing`) and free memory when the
            run was collected; experiments size themselves from these, never from the machine
            that happens to read a saved run.
        largest_array_bytes: the largest array the run's memory budget allows (None: no cap).
        progress: called with a line of text before each kernel runs.
    """

    def __init__(
        self,
        device: str,
        peaks: Peaks,
        repeats: int,
        *,
        cache_bytes: int,
        free_bytes: int,
        label: str = "",
        dtype: str | None = None,
        progress: Progress | None = None,
        budget: Budget | None = None,
        largest_array_bytes: int | None = None,
    ) -> None:
        self.device = device
        self.label = label or device
        self.dtype = None if dtype is None else dtype_name(dtype)
        self.peaks = peaks
        self.repeats = repeats
        self.cache_bytes = cache_bytes
        self.free_bytes = free_bytes
        self.largest_array_bytes = largest_array_bytes
        self.budget = budget or Budget()
        self._groups = 0
        self._sampled = -math.inf  # when the cores' load was last sampled
        self._busy: frozenset[int] = frozenset()
        self._paired_again: list[Measurement] = []
        self._second_looks: list[Measurement] = []
        self.say: Progress = progress or (lambda _line: None)
        """Report progress: a line of text before each step."""
        self._measured: dict[Key, Measurement] = {}
        self._facts: dict[str, Fact] = {}

    @property
    def measurements(self) -> tuple[Measurement, ...]:
        """Every measurement handed out so far, each once, in the order first asked for; a
        size timed in two comparisons answers with the later one, the earlier coming after,
        and the comparisons' second looks come last."""
        return (*self._measured.values(), *self._paired_again, *self._second_looks)

    @property
    def facts(self) -> dict[str, Fact]:
        """Every fact computed so far, by name."""
        return {k: dict(v) for k, v in self._facts.items()}

    def measured(self) -> Measured:
        """What this lab has measured so far, as the judges read it: the same lookup a run
        loaded from disk gives."""
        return Measured(
            self.device,
            self.peaks,
            self.measurements,
            self.facts,
            cache_bytes=self.cache_bytes,
            free_bytes=self.free_bytes,
            largest_array_bytes=self.largest_array_bytes,
            label=self.label,
        )

    def measure(self, workload: str, **sizes: object) -> Measurement:
        """The measurement of ``workload`` at ``sizes``: measured the first time it is asked
        for, the same measurement every later time."""
        key = _key(workload, sizes)
        if key in self._measured:
            return self._measured[key]
        self.say(f"{workload}: {shown(sizes)}")
        found: Measurement
        with self._free_cores():
            beside = self._beside([self._kernel(workload, sizes)])
            blocks = min(self.budget.blocks, self.repeats)
            time_in_blocks(beside, self.repeats, blocks)
            (found,) = (replace(m, blocks=blocks) for m in beside.measurements())
        self._measured[key] = found
        return found

    def _beside(self, kernels: Sequence[Any]) -> Any:
        """``kernels`` ready to time in rounds beside the floors of their overhead roofs
        (:class:`~gpuconcepts.kernels.references.Beside`)."""
        from gpuconcepts.kernels.references import Beside

        return Beside(kernels, seed=self._groups)

    def _kernel(self, workload: str, sizes: Mapping[str, object]) -> Any:
        from gpuconcepts.kernels import KERNELS

        own = self.dtype and WORKLOADS[workload].fixed_dtype is None
        chosen = {"dtype": self.dtype} if own else {}
        return KERNELS[workload](self.device, self.peaks, **chosen, **sizes)

    def compare(
        self, wanted: Sequence[Wanted], check: Check | None = None
    ) -> tuple[Measurement, ...]:
        """The measurements of kernels that a claim compares, timed side by side.

        A live lab prepares every kernel, then times them in interleaved rounds (each round
        runs each kernel once, in a shuffled order: :class:`~gpuconcepts.measure.Rounds`), so
        their ``raw_seconds`` pair up round by round and share a ``group``: the budget's fixed
        number of rounds, in its blocks (:class:`Budget`), whatever they show. Those rounds are
        what it returns, and all a verdict reads. When ``check`` (the claims these measurements
        decide) finds an anomaly in them, the whole comparison is timed once more in as many
        rounds, a second look kept apart (its group ends in
        :data:`~gpuconcepts.results.measured.SECOND_LOOK`, which says why it never replaces
        the first) and shown beside the verdict; ``check`` is read for that only: the verdicts
        are judged later, from the run's measurements.

        A size already measured elsewhere is timed again here, since its rounds could not pair
        with the new ones; :meth:`measure` answers with the paired measurement from then on.
        """
        keys = [_key(workload, sizes) for workload, sizes in wanted]
        again = whole_group(self.measurements, wanted)
        if again:  # asked again (measuring some architectures twice): the same rounds
            return again
        self._groups += 1
        group = f"{wanted[0][0]}-{self._groups}"
        kernels = []
        for workload, sizes in wanted:
            self.say(f"{workload}: {shown(sizes)}")
            kernels.append(self._kernel(workload, sizes))
        with self._free_cores():
            found = self._rounds(kernels, group)
        if check is not None and any(result.anomalous for result in check(found)):
            self.say(f"anomaly in {group}: a second look, shown beside the verdict")
            with self._free_cores():
                self._second_looks += self._rounds(kernels, group + SECOND_LOOK)
        return self._keep(keys, found)

    @contextlib.contextmanager
    def _free_cores(self) -> Iterator[None]:
        """Time the block on the cores no other program is keeping busy now
        (:func:`~gpuconcepts.measure.free_cores`; the cores sampled for
        :data:`LOAD_SAMPLE_SECONDS`, at most every :data:`LOAD_SAMPLE_EVERY`): a load that
        starts part-way through a run would otherwise share a core with one of the kernel's
        threads, which then waits a whole time slice at every barrier. The groups timed so are
        counted in the fact :data:`TIMED_ON_FEWER_CORES`."""
        from gpuconcepts.measure import busy_cores, free_cores

        if self.device == "cpu" and time.perf_counter() - self._sampled >= LOAD_SAMPLE_EVERY:
            self._busy = busy_cores(LOAD_SAMPLE_SECONDS)
            self._sampled = time.perf_counter()
        with free_cores(self.device, self._busy) as busy:
            yield
        if busy:
            fact = self._facts.setdefault(TIMED_ON_FEWER_CORES, {"groups": 0})
            fact["groups"] += 1

    def _keep(self, keys: Sequence[Key], found: tuple[Measurement, ...]) -> tuple[Measurement, ...]:
        """Record a comparison's measurements under their sizes."""
        for key, m in zip(keys, found, strict=True):
            # the paired measurement answers measure() from now on; one that an earlier
            # comparison timed is kept beside it, so that a replay finds every group whole
            replaced = self._measured.get(key)
            if replaced is not None and replaced.group:
                self._paired_again.append(replaced)
            self._measured[key] = m
        return found

    def _rounds(self, kernels: Sequence[Any], group: str) -> tuple[Measurement, ...]:
        """The budget's fixed paired rounds of ``kernels``, in its blocks, beside the floors of
        their overhead roofs (see :meth:`compare`): how many never depends on what they show."""
        budget = self.budget
        rounds = self._beside(kernels)
        time_in_blocks(rounds, budget.rounds, budget.blocks)
        return tuple(replace(m, blocks=budget.blocks) for m in rounds.measurements(group))

    def fact(self, name: str, compute: Callable[[], Fact]) -> Fact:
        """A non-timing result (a count, a size) under ``name``: computed once."""
        if name not in self._facts:
            self._facts[name] = dict(compute())
        return dict(self._facts[name])

    def measure_experiment(
        self,
        name: str,
        facts: Mapping[str, Callable[[], Fact]],
        comparisons: Callable[[Measured], Iterable[Comparison]],
    ) -> None:
        """Measure what an experiment needs: its ``facts`` first, then each of its
        ``comparisons``, which may read those facts (a table's element size, the faster GEMM
        path) from what the lab has measured so far."""
        self.say(f"claims: {name}")
        for fact_name, compute in facts.items():
            self.fact(fact_name, compute)
        for comparison in comparisons(self.measured()):
            self.compare(comparison.wanted, comparison.check)


def profile_all(
    lab: Lab,
    presets: Mapping[str, Mapping[str, int]],
    sweeps: Mapping[str, tuple[int, ...]],
) -> list[Measurement]:
    """Measure the profile: the five workloads at the preset sizes, and the MLP batch and
    prefill length sweeps (:func:`~gpuconcepts.results.measured.profile_sizes`), each size
    once, in the order of the book (a size met twice is one measurement, listed once)."""
    return distinct(
        lab.measure(workload, **sizes) for workload, sizes in profile_sizes(presets, sweeps)
    )
