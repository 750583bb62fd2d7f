"""What the judges read: a run's measurements and facts, looked up by workload and sizes.

Measuring and judging are apart. When a run is collected, a :class:`~gpuconcepts.lab.Lab`
measures every experiment the claims need (:class:`Comparison`: the kernels timed side by
side) into the run's measurements; every judge then reads a :class:`Measured`, the same
lookup whether the run was measured a moment ago or loaded from disk. A lookup never runs a
kernel: what the run lacks is an error that names the workload and its sizes.

>>> from gpuconcepts.measure import Measurement
>>> from gpuconcepts.roofline import Peaks
>>> saved = Measurement("mlp", "cpu", {"B": 4, "d_in": 8, "d_out": 8, "s": 4, "dtype": "float32"},
...                     (1e-6,), 256, 384)
>>> measured = Measured("cpu", Peaks("cpu", 1e11, 1e10, "float32"), (saved,), {"n": {"x": 1}},
...                     cache_bytes=2**25, free_bytes=2**34)
>>> measured.time("mlp", B=4, d_in=8, d_out=8) is saved
True
>>> measured.fact("n")
{'x': 1}
>>> measured.time("mlp", B=8, d_in=8, d_out=8)
Traceback (most recent call last):
...
gpuconcepts.errors.GpuConceptsError: this run holds no mlp measurement at B=8, d_in=8, d_out=8; it was recorded with other sizes (record it again with this version: gpuconcepts profile --save)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.measurement import Measurement
from gpuconcepts.roofline import Peaks
from gpuconcepts.workloads import WORKLOADS

Fact = dict[str, Any]
"""A non-timing result of a run (a count, a size, the faster GEMM path), by field."""

Wanted = tuple[str, Mapping[str, object]]
"""A kernel an experiment asks for: its workload and its sizes."""


class Judged(Protocol):
    """What a comparison's check returns for each claim it decides (a
    :class:`~gpuconcepts.results.claim.ClaimResult` is one)."""

    @property
    def key(self) -> str: ...

    @property
    def anomalous(self) -> bool: ...


Check = Callable[[tuple[Measurement, ...]], Iterable[Judged]]
"""The claims a comparison's measurements decide: read while it is measured, only to take an
anomalous comparison's second look (:data:`SECOND_LOOK`)."""

SECOND_LOOK = "-again"
"""The end of a comparison's group name when the group is its second look (DESIGN.md,
"Anomalies").

A comparison is timed in the rounds fixed in advance, and the claims' verdicts read those
rounds only. When its check finds an anomaly in them (a kernel above its roof, an order that
contradicts physics), the lab times the whole comparison once more in as many rounds, kept
apart from the first. That second look never replaces the data a verdict reads: were the later
rounds to stand whenever the first showed an anomaly, the verdict would rest on a rule that
stops when the data please (optional stopping), and the error rate the interval states would no
longer hold. It is shown beside the verdict instead: the anomaly was "measured again and
persisting", or "gone on a second look"
(:attr:`~gpuconcepts.results.claim.ClaimResult.second_look`)."""


@dataclass(frozen=True)
class Comparison:
    """Kernels an experiment needs timed side by side (in one group of paired rounds), and the
    check of the claims they decide (None: no claim is read while measuring)."""

    wanted: tuple[Wanted, ...]
    check: Check | None = None


def shown(sizes: Mapping[str, object]) -> str:
    """Sizes as a message names them: ``B=4, d_in=8``."""
    return ", ".join(f"{k}={v}" for k, v in sizes.items())


def matching(
    measurements: Iterable[Measurement], workload: str, sizes: Mapping[str, object]
) -> Measurement | None:
    """The first of ``measurements`` of ``workload`` at ``sizes`` (None when none is); sizes
    a measurement holds beyond those asked for (its dtype, its element size) do not matter."""
    for m in measurements:
        if m.workload == workload and all(m.params.get(k) == v for k, v in sizes.items()):
            return m
    return None


def whole_group(
    measurements: Sequence[Measurement], wanted: Sequence[Wanted]
) -> tuple[Measurement, ...]:
    """The measurements of the one group, timed in the rounds fixed in advance (never a second
    look: :data:`SECOND_LOOK`), that holds every kernel ``wanted``, in its order; () when no
    group holds them all."""
    groups = [g for g in dict.fromkeys(m.group for m in measurements) if g]
    return _group_of(measurements, wanted, [g for g in groups if not g.endswith(SECOND_LOOK)])


def fixed_rounds(measurements: Iterable[Measurement]) -> tuple[Measurement, ...]:
    """``measurements`` without the second looks (:data:`SECOND_LOOK`): what a verdict or a
    score may read, since only anomalies were measured twice."""
    return tuple(m for m in measurements if not is_second_look(m))


def is_second_look(m: Measurement) -> bool:
    """Whether ``m`` was timed in a second look at an anomaly (:data:`SECOND_LOOK`), which no
    verdict and no score of the model reads."""
    return m.group.endswith(SECOND_LOOK)


def second_look(
    measurements: Sequence[Measurement], wanted: Sequence[Wanted]
) -> tuple[Measurement, ...]:
    """The second look (:data:`SECOND_LOOK`) at the comparison of the kernels ``wanted``, in
    their order; () when it was not measured again."""
    first = whole_group(measurements, wanted)
    return _group_of(measurements, wanted, [first[0].group + SECOND_LOOK] if first else [])


def _group_of(
    measurements: Sequence[Measurement], wanted: Sequence[Wanted], groups: Sequence[str]
) -> tuple[Measurement, ...]:
    """The measurements of the first of ``groups`` that holds every kernel ``wanted``."""
    for group in groups:
        members = [m for m in measurements if m.group == group]
        found = [matching(members, workload, sizes) for workload, sizes in wanted]
        if all(m is not None for m in found):
            return tuple(m for m in found if m is not None)
    return ()


def second_looks(measured: Measured, comparisons: Iterable[Comparison]) -> dict[str, bool]:
    """Each claim whose anomaly a comparison's check found in the rounds fixed in advance, when
    that comparison was measured again (:data:`SECOND_LOOK`): True when the anomaly persisted in
    the second look (in any such comparison the claim reads), False when it was gone."""
    looks: dict[str, bool] = {}
    for comparison in comparisons:
        again = measured.second_look(comparison.wanted)
        if comparison.check is None or not again:
            continue
        first = measured.compared(comparison.wanted)
        flagged = {r.key for r in comparison.check(first) if r.anomalous}
        for r in comparison.check(again):
            if r.key in flagged:
                looks[r.key] = looks.get(r.key, False) or r.anomalous
    return looks


def profile_sizes(
    presets: Mapping[str, Mapping[str, int]], sweeps: Mapping[str, Sequence[int]]
) -> tuple[Wanted, ...]:
    """The profile's kernels in the order of the book (:data:`gpuconcepts.workloads.WORKLOADS`):
    each workload at its preset's sizes, then along its sweep (the MLP's batch, the
    prefill's length), from :func:`~gpuconcepts.kernels.load_presets` and
    :func:`~gpuconcepts.kernels.load_sweeps` (a saved run keeps the ones it used)."""
    out: list[Wanted] = []
    for w in WORKLOADS.values():  # the registry's order is the book's
        if not w.chapter:
            continue  # the roofs' reference kernels: timed beside the claims, not profiled
        out.append((w.name, dict(presets[w.preset])))
        if w.sweep is not None:
            sweep, size = w.sweep
            out += [(w.name, {**presets[w.preset], size: value}) for value in sweeps.get(sweep, ())]
    return tuple(out)


def distinct(measurements: Iterable[Measurement]) -> list[Measurement]:
    """``measurements`` with each one listed once, where it first comes."""
    out: list[Measurement] = []
    for m in measurements:
        if all(m is not seen for seen in out):
            out.append(m)
    return out


@dataclass(frozen=True)
class Measured:
    """A run's measurements and facts, with the machine they describe: a read-only lookup.

    Args:
        device: the resolved device (``"cpu"`` or ``"cuda"``) the measurements belong to.
        peaks: the run's measured peaks.
        measurements: the run's measurements; for a size measured in two comparisons, the
            later first, and the second looks (:data:`SECOND_LOOK`) last (as
            :attr:`~gpuconcepts.lab.Lab.measurements` lists them).
        facts: its non-timing results by name.
        cache_bytes, free_bytes: the device's last-level cache and free memory when the run
            was collected (experiments size themselves from these).
        largest_array_bytes: the largest array the run's memory budget allowed (None: no cap).
        label: the device for people (the device when empty).
        sweep_dtype: the precision the peaks' GEMM sweep ran in, when a run says it ran in
            another than its kernels (None: the peaks' own).
    """

    device: str
    peaks: Peaks
    measurements: tuple[Measurement, ...]
    facts: Mapping[str, Fact] = field(default_factory=dict)
    cache_bytes: int = 0
    free_bytes: int = 0
    largest_array_bytes: int | None = None
    label: str = ""

    sweep_dtype: str | None = None

    def __post_init__(self) -> None:
        if not self.label:
            object.__setattr__(self, "label", self.device)

    def time(self, workload: str, **sizes: object) -> Measurement:
        """The measurement of ``workload`` at ``sizes``."""
        found = matching(self.measurements, workload, sizes)
        if found is None:
            raise GpuConceptsError(
                f"this run holds no {workload} measurement at {shown(sizes)}; it was recorded "
                "with other sizes (record it again with this version: gpuconcepts profile --save)"
            )
        return found

    def compared(self, wanted: Sequence[Wanted]) -> tuple[Measurement, ...]:
        """The measurements of a comparison: the group of rounds fixed in advance that holds
        every kernel ``wanted`` (never its second look), else each kernel as :meth:`time` finds
        it (a run whose rounds were not paired)."""
        return whole_group(self.measurements, wanted) or tuple(
            self.time(workload, **sizes) for workload, sizes in wanted
        )

    def second_look(self, wanted: Sequence[Wanted]) -> tuple[Measurement, ...]:
        """The comparison's second look (:data:`SECOND_LOOK`); () when none was taken."""
        return second_look(self.measurements, wanted)

    def profile(
        self, presets: Mapping[str, Mapping[str, int]], sweeps: Mapping[str, Sequence[int]]
    ) -> list[Measurement]:
        """The profile (:func:`profile_sizes`), each measurement listed once."""
        return distinct(
            self.time(workload, **sizes) for workload, sizes in profile_sizes(presets, sweeps)
        )

    def fact(self, name: str) -> Fact:
        """The fact ``name`` (a copy)."""
        if name not in self.facts:
            raise GpuConceptsError(
                f"this run holds no fact {name!r}; record it again with this version"
            )
        return dict(self.facts[name])
