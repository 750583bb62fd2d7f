""":func:`judge_claims`, which runs the experiments in the post's order.

Each architecture's experiment (what it asks the lab for) lives beside its judges, in
:mod:`~gpuconcepts.claims.dlrm`, :mod:`~gpuconcepts.claims.mlp`, :mod:`~gpuconcepts.claims.cnn`,
:mod:`~gpuconcepts.claims.rnn` and :mod:`~gpuconcepts.claims.transformer`; the roofline claims
(:mod:`~gpuconcepts.claims.roofline`) judge the measurements those experiments return. Their
sizes are :class:`~gpuconcepts.results.claim_sizes.ClaimSizes`. Measurements are asked of a
:class:`~gpuconcepts.lab.Lab`, so no experiment runs a kernel itself: a live lab measures, a
replaying one reads a saved run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from gpuconcepts.claims import cnn, dlrm, mlp, rnn, transformer
from gpuconcepts.claims.accuracy import unjudged
from gpuconcepts.claims.roofline import Found, judge_roles
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.hardware import dtype_name
from gpuconcepts.lab import Lab
from gpuconcepts.measure import Measurement
from gpuconcepts.results.claim import ClaimResult
from gpuconcepts.results.claim_sizes import ClaimSizes

EXPERIMENTS: tuple[tuple[str, Callable[[Lab, ClaimSizes], Found]], ...] = (
    ("DLRM", dlrm.experiment),
    ("MLP", mlp.experiment),
    ("CNN", cnn.experiment),
    ("RNN", rnn.experiment),
    ("Transformer", transformer.experiment),
)
"""The experiments in the order of the post."""


def judge_claims(
    lab: Lab, sizes: ClaimSizes, *, only: Sequence[str] | None = None
) -> tuple[ClaimResult, ...]:
    """Every claim, judged from the measurements a lab gives (measured now, or saved in a Run).

    Args:
        lab: a live :class:`~gpuconcepts.lab.Lab` (kernels run, each size once) or one that
            replays a saved run (nothing runs).
        sizes: the experiments' sizes (:func:`claim_sizes`, or the ones a saved run recorded).
        only: architectures to judge (``"DLRM"``, ``"MLP"``, ...); all when None. The roofline
            claims cover the workloads of the architectures that ran.

    Returns:
        One :class:`ClaimResult` per claim, the roofline claims last.
    """
    known = [name for name, _ in EXPERIMENTS]
    if only is not None:
        unknown = [name for name in only if name not in known]
        if unknown:
            raise GpuConceptsError(
                f"unknown architecture {unknown[0]!r}; choose from {', '.join(known)}"
            )
    results: list[ClaimResult] = []
    roofline: dict[str, tuple[Measurement, Measurement | None]] = {}
    for name, experiment in EXPERIMENTS:
        if only is not None and name not in only:
            continue
        lab.say(f"claims: {name}")
        found, measured = experiment(lab, sizes)
        results.extend(found)
        roofline.update(measured)
    judged = (*results, *judge_roles(roofline, lab.peaks, lab.label))
    # a verdict that reads a GEMM sweep of another precision than the kernels' is not judged
    sweep = lab.sweep_dtype or dtype_name(lab.peaks.dtype)
    return unjudged(judged, sweep, lab.measurements)
