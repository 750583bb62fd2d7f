"""What an architecture's experiment needs measured, and how it hands each judge what it reads.

An :class:`Experiment` says which facts and which comparisons (kernels timed side by side) its
claims need; a :class:`~gpuconcepts.lab.Lab` measures them when a run is collected
(:func:`~gpuconcepts.claims.experiments.measure_claims`). Judging loops over the registry's
core entries (:func:`~gpuconcepts.claims.experiments.judge_claims`): each names its judge and
its experiment, whose :meth:`Experiment.judged` reads what that judge needs from a
:class:`~gpuconcepts.results.measured.Measured` (the same whether the run was measured now or
loaded from disk) and calls it there. A comparison whose kernels a roofline claim reads also
times the reference kernel of each roof (:class:`WithRoofs`); the roofline claims' judge is
called with the roles of the experiment its entry names (:func:`roles_reading`).

A whole-model or distributed claim reads its part's results instead (the whole-model
experiments' :class:`~gpuconcepts.results.wholemodel.WholeModelResults`, a distributed run's
:class:`~gpuconcepts.results.distributed.DistributedReport`): its registry entry names its
judge and a :class:`PartExperiment`, which says what the judge reads of those results and how
many verdicts it gives (one per collective, one per pipeline, none when the part did not
measure it). :func:`judged_part` calls each entry's judge through its experiment, in the
registry's order. For every kind a claim joins by its registry line and its experiment's
reading alone: no function lists the judges to call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from gpuconcepts.claims.roofline import (
    ROOF_REFERENCES,
    ROOFLINE_EXPECTATIONS,
    Roles,
    judge_roles,
)
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.measure import COLUMNS, Measurement, stream_array_bytes, stream_rows
from gpuconcepts.results.claim import ClaimResult
from gpuconcepts.results.claim_sizes import ClaimSizes
from gpuconcepts.results.measured import Comparison, Fact, Measured, Wanted
from gpuconcepts.results.registry import Kind, dispatch
from gpuconcepts.units import MiB

FactSource = Callable[[str, ClaimSizes], Fact]
"""How a fact is found on the device (``"cpu"``, ``"cuda"``) at the claims' sizes."""

Judge = Callable[[tuple[Measurement, ...], Mapping[str, Measurement]], list[ClaimResult]]
"""The claims a comparison decides, from its own kernels' measurements and the roofs'
references timed beside them (by roof kind: ``"compute"``, ``"memory"``)."""


CoreJudge = Callable[..., Any]
"""A core claim's judge (its registry entry's): what its experiment reads for it in, its verdict
out (the roofline claims' judge gives a list, one verdict per role)."""

Reading = Callable[[CoreJudge, Measured, ClaimSizes], list[ClaimResult]]
"""How an experiment calls one of its judges: on what it reads of a run's measurements at the
claims' sizes, giving that judge's verdicts."""


@dataclass(frozen=True)
class Experiment:
    """One architecture's experiment: its ``name`` (``"MLP"``), the ``facts`` it needs found
    first, the ``comparisons`` to measure (which may read those facts) and, for each judge of
    a claim that names it in the registry, its ``readings``: how that judge is called on what
    the experiment measured. A claim joins an architecture by its registry line and its
    reading here; several judges may share one reading (the MLP's two read the same sweep)."""

    name: str
    comparisons: Callable[[Measured, ClaimSizes], tuple[Comparison, ...]]
    readings: Mapping[CoreJudge, Reading]
    facts: Mapping[str, FactSource] = field(default_factory=dict)

    def judged(self, judge: CoreJudge, m: Measured, z: ClaimSizes) -> list[ClaimResult]:
        """``judge``'s verdicts, on what this experiment reads of ``m`` for it (each call
        reads its kernels from ``m`` again: nothing is kept between judges).

        Raises:
            GpuConceptsError: the experiment holds no reading for ``judge`` (a registry entry
                names an experiment that does not measure what its judge reads).
        """
        reading = self.readings.get(judge)
        if reading is None:
            known = ", ".join(j.__name__ for j in self.readings) or "none"
            raise GpuConceptsError(
                f"the {self.name} experiment has no reading for the judge "
                f"{judge.__module__}:{judge.__qualname__} (it reads for {known}); a core "
                "claim's registry entry must name the experiment whose readings hold its judge"
            )
        return reading(judge, m, z)


def _library_gemm(_device: str, _z: ClaimSizes) -> Fact:
    """The compute roof's path: the library's own product, ``torch.mm``, as the peak's
    (:func:`~gpuconcepts.kernels.peaks.gemm_flops`)."""
    return {"backend": "mm"}


ROOF_FACTS: Mapping[str, FactSource] = {"peak-gemm-backend": _library_gemm}
"""The fact the roofs' reference kernels need: the GEMM path of the compute roof's reference (a
fact of the run, so a run read back asks for the same path it was timed through: runs recorded
before 2026-12-07 timed the faster of torch.mm and oneDNN)."""


def references(m: Measured, z: ClaimSizes) -> dict[str, Wanted]:
    """The roofs' reference kernels at the claims' sizes (see
    :data:`~gpuconcepts.claims.roofline.ROOF_REFERENCES`): a square GEMM through the run's GEMM
    path (:data:`ROOF_FACTS`), and the STREAM triad on arrays of at least
    4x the last-level cache, within the run's memory budget."""
    array = stream_array_bytes(
        z.roof_triad_mib * MiB, m.cache_bytes, m.free_bytes, m.largest_array_bytes
    )
    return {
        "compute": (
            ROOF_REFERENCES["compute"],
            {"n": z.roof_gemm_n, "backend": m.fact("peak-gemm-backend")["backend"]},
        ),
        "memory": (ROOF_REFERENCES["memory"], {"N": stream_rows(array), "d": COLUMNS}),
    }


@dataclass(frozen=True)
class WithRoofs:
    """Kernels compared side by side with the reference of each roof their roofline claims
    read: ``roles`` maps a role of :data:`~gpuconcepts.claims.roofline.ROOFLINE_EXPECTATIONS`
    to the index in ``own`` of the kernel it reads; ``refs`` holds the reference kernel of
    each roof kind those roles expect, in ``kinds``' order."""

    own: tuple[Wanted, ...]
    roles: Mapping[str, int]
    kinds: tuple[str, ...]
    refs: tuple[Wanted, ...]

    @classmethod
    def of(
        cls, m: Measured, z: ClaimSizes, own: Sequence[Wanted], roles: Mapping[str, int]
    ) -> WithRoofs:
        """``own`` with the references its ``roles`` read, at the claims' sizes."""
        kinds = tuple(sorted({ROOFLINE_EXPECTATIONS[role][0] for role in roles}))
        found = references(m, z)
        return cls(tuple(own), dict(roles), kinds, tuple(found[kind] for kind in kinds))

    @property
    def wanted(self) -> tuple[Wanted, ...]:
        """Every kernel timed in the comparison: its own, then the references."""
        return (*self.own, *self.refs)

    def split(
        self, ms: Sequence[Measurement]
    ) -> tuple[tuple[Measurement, ...], Roles, dict[str, Measurement]]:
        """The comparison's measurements as its own kernels', the roles (each with its
        roof's reference) and the references by roof kind."""
        n = len(self.own)
        own, reference = tuple(ms[:n]), dict(zip(self.kinds, ms[n:], strict=True))
        roles = {
            role: (own[i], reference[ROOFLINE_EXPECTATIONS[role][0]])
            for role, i in self.roles.items()
        }
        return own, roles, reference

    def comparison(self, judge: Judge, m: Measured) -> Comparison:
        """The comparison to measure, whose check is ``judge``'s claims and the roofline claims
        of its roles."""

        def check(ms: tuple[Measurement, ...]) -> list[ClaimResult]:
            own, roles, reference = self.split(ms)
            return [*judge(own, reference), *judge_roles(roles, m.peaks, m.label)]

        return Comparison(self.wanted, check)

    def read(self, m: Measured) -> tuple[tuple[Measurement, ...], Roles]:
        """Its own kernels' measurements and its roles, read from ``m``."""
        own, roles, _ = self.split(m.compared(self.wanted))
        return own, roles


def roles_reading(plans: Callable[[Measured, ClaimSizes], Sequence[WithRoofs]]) -> Reading:
    """The reading of the roofline claims' judge
    (:func:`~gpuconcepts.claims.roofline.judge_roles`) in an experiment whose kernels ``plans``
    time beside their roofs: the roles of every plan, in its order, with the machine's peaks
    and name. Every roofline entry that names the experiment is judged by this one call."""

    def reading(judge: CoreJudge, m: Measured, z: ClaimSizes) -> list[ClaimResult]:
        roles: dict[str, tuple[Measurement, Measurement | None]] = {}
        for plan in plans(m, z):
            roles.update(plan.read(m)[1])
        return list(judge(roles, m.peaks, m.label))

    return reading


# -- the whole model's and the distributed claims: judged from their part's results -------------
PartJudge = Callable[..., ClaimResult]
"""A whole-model or distributed claim's judge (its registry entry's): what its experiment hands
it in, one verdict out."""


@dataclass(frozen=True)
class PartExperiment:
    """What the claims of a part (the whole model, or beyond one device) need measured, as their
    judge reads it: ``judged(judge, results, context)`` calls ``judge`` on what it reads of
    ``results`` (with the machine's facts in ``context``, where the part needs them) and gives
    its verdicts, none when ``results`` did not measure it."""

    name: str
    judged: Callable[[PartJudge, Any, Any], Sequence[ClaimResult]]


_Kind = TypeVar("_Kind", Experiment, PartExperiment)
_ARTICLE = {Experiment: "an", PartExperiment: "a"}


def dispatched(kind: Kind, wanted: type[_Kind]) -> Iterator[tuple[CoreJudge, _Kind]]:
    """Each judge of the claims of ``kind`` with its experiment, in the registry's order
    (:func:`~gpuconcepts.results.registry.dispatch`: entries that share both, as the traffic
    claims and the roofline claims of one experiment do, give one pair, judged once).

    Raises:
        GpuConceptsError: an entry names an experiment that is not a ``wanted``.
    """
    for judge, experiment in dispatch(kind):
        if not isinstance(experiment, wanted):
            raise GpuConceptsError(
                f"the {kind} claims judged by {judge.__name__} name {type(experiment).__name__} "
                f"{getattr(experiment, 'name', experiment)!r} as their experiment; a {kind} "
                f"claim needs {_ARTICLE[wanted]} {wanted.__name__}"
            )
        yield judge, experiment


def judged_part(kind: Kind, results: object, context: object = None) -> list[ClaimResult]:
    """Every claim of ``kind`` that ``results`` can decide, in the registry's order: each
    entry's judge called through the experiment it names (:func:`dispatched`).

    >>> from gpuconcepts.results.registry import CLAIMS
    >>> CLAIMS["decode-floor"].experiment
    'gpuconcepts.claims.wholemodel:DECODE_CACHED'
    """
    found: list[ClaimResult] = []
    for judge, experiment in dispatched(kind, PartExperiment):
        found.extend(experiment.judged(judge, results, context))
    return found
