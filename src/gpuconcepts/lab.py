"""The one place experiments get their measurements from: measured once, or read from a Run.

The profile and every claim ask a :class:`Lab` for a workload at some sizes. A live lab runs
the kernel the first time and hands back the same measurement every later time, so one build
times each kernel at each size once, and every page quotes the same number. A replaying lab
(built with ``recorded=``, the measurements of a saved :class:`~gpuconcepts.run.Run`) answers
from them and never runs anything: that is how ``gpuconcepts verify --run`` judges a file,
and how the book shows runs recorded on other machines. torch is imported only when a live lab measures.

>>> from gpuconcepts.measure import Measurement
>>> from gpuconcepts.roofline import Peaks
>>> saved = Measurement("mlp", "cpu", {"B": 4, "d_in": 8, "d_out": 8, "s": 4, "dtype": "float32"},
...                     (1e-6,), 256, 384)
>>> lab = Lab("cpu", Peaks("cpu", 1e11, 1e10, "float32"), repeats=3, cache_bytes=2**25,
...           free_bytes=2**34, recorded=[saved])
>>> lab.measure("mlp", B=4, d_in=8, d_out=8) is saved
True
>>> lab.measure("mlp", B=8, d_in=8, d_out=8)
Traceback (most recent call last):
...
gpuconcepts.errors.GpuConceptsError: this run holds no mlp measurement at B=8, d_in=8, d_out=8; it was recorded with other sizes (record it again with this version: gpuconcepts profile --save)
"""

# torch is imported inside functions on purpose (README, Rules: 3).
# ruff: noqa: PLC0415

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.hardware import dtype_name
from gpuconcepts.measure import Measurement
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
Fact = dict[str, Any]
Wanted = tuple[str, Mapping[str, object]]
"""A kernel a comparison asks for: its workload and its sizes."""


class Judged(Protocol):
    """What a comparison's judge returns for each claim it decides (a
    :class:`~gpuconcepts.results.claim.ClaimResult` is one)."""

    @property
    def anomalous(self) -> bool: ...


Judge = Callable[[tuple[Measurement, ...]], Iterable[Judged]]
"""Judges a comparison's measurements so far: the claims they decide."""


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


def _matching(
    measurements: Sequence[Measurement], workload: str, sizes: Mapping[str, object]
) -> Measurement | None:
    """The first of ``measurements`` of ``workload`` at ``sizes`` (None when none is)."""
    for m in measurements:
        if m.workload == workload and all(m.params.get(k) == v for k, v in sizes.items()):
            return m
    return None


def _shown(sizes: Mapping[str, object]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sizes.items())


Key = tuple[str, tuple[tuple[str, object], ...]]


def _key(workload: str, sizes: Mapping[str, object]) -> Key:
    return workload, tuple(sorted(sizes.items()))


class Lab:
    """Measurements by workload and sizes: each measured once (live) or read back (replay).

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
        largest_array_bytes: the largest array the run's memory budget allows (None: no cap,
            as in runs saved before budgets).
        recorded: measurements of a saved run; when given, the lab only replays them.
        facts: non-timing results of a saved run (e.g. counted weights), by name.
        progress: called with a line of text before each kernel runs.
        sweep_dtype: the precision the peaks' GEMM sweep ran in, when a saved run says it
            ran in another than its kernels (a recorded tf32 run's FP32 sweep).
    """

    def __init__(
        self,
        device: str,
        peaks: Peaks,
        repeats: int,
        *,
        cache_bytes: int,
        free_bytes: int,
        recorded: Sequence[Measurement] | None = None,
        facts: Mapping[str, Fact] | None = None,
        label: str = "",
        dtype: str | None = None,
        progress: Progress | None = None,
        budget: Budget | None = None,
        largest_array_bytes: int | None = None,
        sweep_dtype: str | None = None,
    ) -> None:
        self.device = device
        self.sweep_dtype = None if sweep_dtype is None else dtype_name(sweep_dtype)
        """The precision the peaks' GEMM sweep ran in (None: the peaks' own); a claim whose
        verdict reads the sweep is not judged when the kernels ran in another
        (:func:`~gpuconcepts.claims.accuracy.sweep_mismatch`)."""
        self.label = label or device
        self.dtype = None if dtype is None else dtype_name(dtype)
        self.peaks = peaks
        self.repeats = repeats
        self.cache_bytes = cache_bytes
        self.free_bytes = free_bytes
        self.largest_array_bytes = largest_array_bytes
        self.replaying = recorded is not None
        self.budget = budget or Budget()
        self._groups = 0
        self._sampled = -math.inf  # when the cores' load was last sampled
        self._busy: frozenset[int] = frozenset()
        self._paired_again: list[Measurement] = []
        self._say = progress or (lambda _line: None)
        self._recorded = tuple(recorded or ())
        self._measured: dict[Key, Measurement] = {}
        self._facts: dict[str, Fact] = {k: dict(v) for k, v in (facts or {}).items()}

    def say(self, line: str) -> None:
        """Report progress (live labs only: a replay has nothing to wait for)."""
        if not self.replaying:
            self._say(line)

    @property
    def measurements(self) -> tuple[Measurement, ...]:
        """Every measurement handed out so far, each once, in the order first asked for; a
        size timed in two comparisons answers with the later one, the earlier coming last."""
        return (*self._measured.values(), *self._paired_again)

    @property
    def facts(self) -> dict[str, Fact]:
        """Every fact computed or replayed so far, by name."""
        return {k: dict(v) for k, v in self._facts.items()}

    def measure(self, workload: str, **sizes: object) -> Measurement:
        """The measurement of ``workload`` at ``sizes``: from the cache, the run, or the kernel."""
        key = _key(workload, sizes)
        if key in self._measured:
            return self._measured[key]
        if self.replaying:
            found = self._find(workload, sizes)
        else:
            self._say(f"{workload}: {_shown(sizes)}")
            with self._free_cores():
                beside = self._beside([self._kernel(workload, sizes)])
                blocks = min(self.budget.blocks, self.repeats)
                _time_blocks(beside, self.repeats, blocks)
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
        self, wanted: Sequence[Wanted], judge: Judge | None = None
    ) -> tuple[Measurement, ...]:
        """The measurements of kernels that a claim compares, timed side by side.

        A live lab prepares every kernel, then times them in interleaved rounds (each round
        runs each kernel once, in a shuffled order: :class:`~gpuconcepts.measure.Rounds`), so
        their ``raw_seconds`` pair up round by round and share a ``group``: the budget's fixed
        number of rounds, in its blocks (:class:`Budget`), whatever they show. When ``judge``
        finds an anomaly (a kernel above its roof, an order against physics: DESIGN.md,
        "Anomalies"), the whole comparison is measured once more with as many rounds (its
        group then ends in ``-again``) and the new rounds stand, anomaly or not; ``judge`` is
        read for that only. A replaying lab returns the recorded measurements.

        A size already measured elsewhere is timed again here, since its rounds could not pair
        with the new ones; :meth:`measure` answers with the paired measurement from then on.
        """
        keys = [_key(workload, sizes) for workload, sizes in wanted]
        if self.replaying:
            return self._keep(keys, self._find_group(self._recorded, wanted))
        again = self._find_group(self.measurements, wanted, whole_only=True)
        if again:  # asked again (judging some architectures twice): the same rounds
            return again
        self._groups += 1
        group = f"{wanted[0][0]}-{self._groups}"
        kernels = []
        for workload, sizes in wanted:
            self._say(f"{workload}: {_shown(sizes)}")
            kernels.append(self._kernel(workload, sizes))
        with self._free_cores():
            found = self._rounds(kernels, group)
        if judge is not None and any(result.anomalous for result in judge(found)):
            self._say(f"anomaly in {group}: measuring the comparison again")
            with self._free_cores():
                found = self._rounds(kernels, f"{group}-again")
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
        _time_blocks(rounds, budget.rounds, budget.blocks)
        return tuple(replace(m, blocks=budget.blocks) for m in rounds.measurements(group))

    def _find_group(
        self,
        measurements: Sequence[Measurement],
        wanted: Sequence[Wanted],
        *,
        whole_only: bool = False,
    ) -> tuple[Measurement, ...]:
        """The measurements of a comparison: one group that holds every kernel wanted (the last
        such group: a comparison measured again), else each kernel on its own (or nothing, with
        ``whole_only``)."""
        groups = dict.fromkeys(m.group for m in measurements if m.group)
        for group in reversed(groups):
            members = [m for m in measurements if m.group == group]
            found = [_matching(members, workload, sizes) for workload, sizes in wanted]
            if all(m is not None for m in found):
                return tuple(m for m in found if m is not None)
        if whole_only:
            return ()
        return tuple(self.measure(workload, **sizes) for workload, sizes in wanted)

    def _find(self, workload: str, sizes: Mapping[str, object]) -> Measurement:
        found = _matching(self._recorded, workload, sizes)
        if found is not None:
            return found
        raise GpuConceptsError(
            f"this run holds no {workload} measurement at {_shown(sizes)}; it was recorded with other "
            "sizes (record it again with this version: gpuconcepts profile --save)"
        )

    def fact(self, name: str, compute: Callable[[], Fact]) -> Fact:
        """A non-timing result (a count, a size) under ``name``: computed once, or replayed."""
        if name not in self._facts:
            if self.replaying:
                raise GpuConceptsError(f"this run holds no fact {name!r}; record it again")
            self._facts[name] = dict(compute())
        return dict(self._facts[name])


def _time_blocks(rounds: Any, count: int, blocks: int) -> None:
    """Time ``count`` rounds of ``rounds`` (a :class:`~gpuconcepts.kernels.references.Beside`)
    in ``blocks`` consecutive blocks (:func:`~gpuconcepts.measure.block_bounds`), each warmed
    up again before it starts."""
    from gpuconcepts.measure import block_bounds

    for i, (start, end) in enumerate(block_bounds(count, blocks)):
        if i:
            rounds.new_block()
        rounds.more(end - start)


def profile_all(
    lab: Lab,
    presets: Mapping[str, Mapping[str, int]],
    sweeps: Mapping[str, tuple[int, ...]],
) -> list[Measurement]:
    """The five workloads at the preset sizes, and the MLP batch and prefill length sweeps.

    Args:
        lab: where the measurements come from (live: each kernel runs once; or a saved run).
        presets, sweeps: sizes from :func:`~gpuconcepts.kernels.load_presets` and
            :func:`~gpuconcepts.kernels.load_sweeps` (a saved run keeps the ones it used).

    Returns:
        The measurements in the order of the book (:data:`gpuconcepts.workloads.WORKLOADS`):
        each workload at its preset's sizes, then along its sweep (the MLP's batch, the
        prefill's length). A size met twice is one measurement, listed once.
    """
    out: list[Measurement] = []

    def add(workload: str, **sizes: object) -> None:
        m = lab.measure(workload, **sizes)
        if all(m is not seen for seen in out):
            out.append(m)

    for w in WORKLOADS.values():  # the registry's order is the book's
        if not w.chapter:
            continue  # the roofs' reference kernels: timed beside the claims, not profiled
        add(w.name, **presets[w.preset])
        if w.sweep is not None:
            sweep, size = w.sweep
            for value in sweeps.get(sweep, ()):
                add(w.name, **{**presets[w.preset], size: value})
    return out
