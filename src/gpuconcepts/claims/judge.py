"""The one function through which every claim is judged: :func:`judge_all`.

A run holds three kinds of claim (:data:`~gpuconcepts.results.registry.CLAIMS` lists them by
key): the core claims, judged from the five workloads' measurements that a
:class:`~gpuconcepts.lab.Lab` gives (a live lab measures them now, a replaying one reads a
saved run); the whole model's, from what its experiments measured; and the distributed ones,
from the measured collectives. Collecting a run and judging a saved one again both come
here, so a verdict never depends on which path produced it.

This module sits above the three judges it calls and is not re-exported by
:mod:`gpuconcepts.claims` (the distributed report imports the package for its result type).

>>> from gpuconcepts.lab import Lab
>>> from gpuconcepts.roofline import Peaks
>>> lab = Lab("cpu", Peaks("cpu", 1e11, 1e10, "float32"), repeats=1, cache_bytes=2**25,
...           free_bytes=2**33)
>>> judge_all(lab)
()
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from gpuconcepts.claims.experiments import judge_claims
from gpuconcepts.claims.sizes import ClaimSizes
from gpuconcepts.claims.wholemodel import judge_wholemodel
from gpuconcepts.lab import Lab
from gpuconcepts.results.claim import ClaimResult

if TYPE_CHECKING:
    from gpuconcepts.distributed.report import DistributedReport
    from gpuconcepts.results.wholemodel import WholeModelResults


def judge_all(
    lab: Lab,
    sizes: ClaimSizes | None = None,
    *,
    wholemodel: WholeModelResults | None = None,
    distributed: DistributedReport | None = None,
    only: Sequence[str] | None = None,
) -> tuple[ClaimResult, ...]:
    """Every claim that ``lab`` and the parts' results can decide, in the book's order: the
    core claims (when ``sizes`` are given), then the whole model's, then beyond one device.

    Args:
        lab: the measurements (a live lab runs the core experiments' kernels, each size once;
            a replaying one runs nothing), with the machine's peaks, last-level cache and
            name, which the whole-model judges read too.
        sizes: the core experiments' sizes; None judges no core claim.
        wholemodel: what the whole-model experiments measured (None: not measured).
        distributed: the distributed run's report (None: not measured).
        only: the core architectures to judge (:func:`~gpuconcepts.claims.judge_claims`).
    """
    results: list[ClaimResult] = []
    if sizes is not None:
        results += judge_claims(lab, sizes, only=only)
    if wholemodel is not None:
        results += judge_wholemodel(
            wholemodel, lab.peaks, cache_bytes=lab.cache_bytes, device=lab.label
        )
    if distributed is not None:
        results += distributed.claims
    return tuple(results)
