"""The core claims' experiments, measured (:func:`measure_claims`) and judged
(:func:`judge_claims`) apart.

Each architecture's experiment (an :class:`~gpuconcepts.claims.plan.Experiment`) lives beside
its judges, in :mod:`~gpuconcepts.claims.dlrm`, :mod:`~gpuconcepts.claims.mlp`,
:mod:`~gpuconcepts.claims.cnn`, :mod:`~gpuconcepts.claims.rnn` and
:mod:`~gpuconcepts.claims.transformer`; the registry
(:func:`~gpuconcepts.results.registry.experiments`) names the one each claim needs. When a run
is collected, a :class:`~gpuconcepts.lab.Lab` measures them all first. Judging then loops over
the registry's core entries: each entry's judge is called through its experiment, which reads
what that judge needs from the measurements
(:class:`~gpuconcepts.results.measured.Measured`), the same way whether the run was measured
now or loaded from disk. The roofline claims (:mod:`~gpuconcepts.claims.roofline`) are judged
the same way, on the kernels each experiment times beside its roofs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING

from gpuconcepts.claims.accuracy import unjudged
from gpuconcepts.claims.plan import Experiment, dispatched
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.hardware import dtype_name
from gpuconcepts.results.claim import ClaimResult
from gpuconcepts.results.claim_sizes import ClaimSizes
from gpuconcepts.results.measured import Comparison, Measured, second_looks
from gpuconcepts.results.registry import experiments

if TYPE_CHECKING:
    from gpuconcepts.lab import Lab


def chosen(only: Sequence[str] | None = None) -> tuple[Experiment, ...]:
    """The experiments in the order of the post, or those of the architectures ``only`` names
    (``"DLRM"``, ``"MLP"``, ...)."""
    every: tuple[Experiment, ...] = experiments()
    if only is None:
        return every
    known = [e.name for e in every]
    unknown = [name for name in only if name not in known]
    if unknown:
        raise GpuConceptsError(
            f"unknown architecture {unknown[0]!r}; choose from {', '.join(known)}"
        )
    return tuple(e for e in every if e.name in only)


def measure_claims(lab: Lab, sizes: ClaimSizes, *, only: Sequence[str] | None = None) -> Measured:
    """Measure what every claim needs (each experiment's facts, then its comparisons) in
    ``lab``, and return what it measured, as the judges read it."""
    for experiment in chosen(only):
        facts = {name: partial(find, lab.device, sizes) for name, find in experiment.facts.items()}
        lab.measure_experiment(experiment.name, facts, partial(_planned, experiment, sizes))
    return lab.measured()


def _planned(experiment: Experiment, sizes: ClaimSizes, m: Measured) -> tuple[Comparison, ...]:
    return experiment.comparisons(m, sizes)


def judge_claims(
    measured: Measured, sizes: ClaimSizes, *, only: Sequence[str] | None = None
) -> tuple[ClaimResult, ...]:
    """Every core claim, judged from a run's measurements (measured now, or saved in a Run).

    Args:
        measured: the run's measurements (:meth:`~gpuconcepts.lab.Lab.measured`, or a run
            read back: :func:`~gpuconcepts.claims.judge.measured_of`).
        sizes: the experiments' sizes (a run's :attr:`~gpuconcepts.sizing.RunSizes.claims`,
            or the ones a saved run recorded).
        only: architectures to judge (``"DLRM"``, ``"MLP"``, ...); all when None. The roofline
            claims cover the workloads of the architectures judged.

    Returns:
        One :class:`ClaimResult` per claim, in the registry's order (the roofline claims
        last): each entry's judge called through its experiment
        (:meth:`~gpuconcepts.claims.plan.Experiment.judged`; entries that share both, as the
        roofline claims of one experiment do, are judged once). An anomalous one says
        what its comparison's second look found, if one was taken
        (:data:`~gpuconcepts.results.measured.SECOND_LOOK`).
    """
    picked = chosen(only)
    names = {e.name for e in picked}
    results = [
        r
        for judge, experiment in dispatched("core", Experiment)
        if experiment.name in names
        for r in experiment.judged(judge, measured, sizes)
    ]
    comparisons = [c for e in picked for c in e.comparisons(measured, sizes)]
    looks = second_looks(measured, comparisons)
    judged = tuple(
        replace(r, second_look=looks[r.key]) if r.anomalous and r.key in looks else r
        for r in results
    )  # the verdicts read the rounds fixed in advance; a second look is only shown beside them
    # a verdict that reads a GEMM sweep of another precision than the kernels' is not judged
    sweep = measured.sweep_dtype or dtype_name(measured.peaks.dtype)
    return unjudged(judged, sweep, measured.measurements)
