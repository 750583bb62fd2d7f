"""What an architecture's experiment needs measured, and how its judge reads it back.

An :class:`Experiment` says which facts and which comparisons (kernels timed side by side) its
claims need; a :class:`~gpuconcepts.lab.Lab` measures them when a run is collected
(:func:`~gpuconcepts.claims.experiments.measure_claims`), and its ``judge`` reads them from a
:class:`~gpuconcepts.results.measured.Measured`, the same whether the run was measured now or
loaded from disk. A comparison whose kernels a roofline claim reads also times the reference
kernel of each roof (:class:`WithRoofs`).

A whole-model or distributed claim reads its part's results instead (the whole-model
experiments' :class:`~gpuconcepts.results.wholemodel.WholeModelResults`, a distributed run's
:class:`~gpuconcepts.results.distributed.DistributedReport`): its registry entry names its
judge and a :class:`PartExperiment`, which says what the judge reads of those results and how
many verdicts it gives (one per collective, one per pipeline, none when the part did not
measure it). :func:`judged_part` calls each entry's judge through its experiment, in the
registry's order, so a claim joins a part by its registry line and its experiment alone: no
function lists the judges by name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gpuconcepts.claims.roofline import (
    ROOF_REFERENCES,
    ROOFLINE_EXPECTATIONS,
    Found,
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


@dataclass(frozen=True)
class Experiment:
    """One architecture's experiment: its ``name`` (``"MLP"``), the ``facts`` it needs found
    first, the ``comparisons`` to measure (which may read those facts) and the ``judge`` that
    reads them back: its claims, and its measurements for the roofline claims."""

    name: str
    comparisons: Callable[[Measured, ClaimSizes], tuple[Comparison, ...]]
    judge: Callable[[Measured, ClaimSizes], Found]
    facts: Mapping[str, FactSource] = field(default_factory=dict)


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


def judged_part(kind: Kind, results: object, context: object = None) -> list[ClaimResult]:
    """Every claim of ``kind`` that ``results`` can decide, in the registry's order: each
    entry's judge called through the experiment it names (entries that share both, as the
    traffic claims do, are judged together, once).

    >>> from gpuconcepts.results.registry import CLAIMS
    >>> CLAIMS["decode-floor"].experiment
    'gpuconcepts.claims.wholemodel:DECODE_CACHED'
    """
    found: list[ClaimResult] = []
    for judge, experiment in dispatch(kind):
        if not isinstance(experiment, PartExperiment):
            raise GpuConceptsError(
                f"the {kind} claims judged by {judge.__name__} name {experiment!r} as their "
                "experiment; a whole-model or distributed claim needs a PartExperiment"
            )
        found.extend(experiment.judged(judge, results, context))
    return found
