"""The one function through which every claim is judged: :func:`judge_all`.

A run holds three kinds of claim (:data:`~gpuconcepts.results.registry.CLAIMS` lists them by
key): the core claims, judged from the run's measurements
(:class:`~gpuconcepts.results.measured.Measured`: a lab's, just measured, or a saved run's,
:func:`measured_of`); the whole model's, from what its experiments measured; and the
distributed ones, from the measured collectives. Each kind is judged by looping over its
registry entries, each entry's judge called through the experiment it names
(:func:`~gpuconcepts.results.registry.dispatch`). Collecting a run and judging a saved one
again both come here, through the same lookup, so a verdict never depends on which path
produced it: no judge runs a kernel.

This module sits above the three loops it calls (the core claims'
:func:`~gpuconcepts.claims.judge_claims`, the whole model's and
:func:`~gpuconcepts.claims.distributed.judge_distributed`) and is not re-exported by
:mod:`gpuconcepts.claims`.

>>> from gpuconcepts.results.measured import Measured
>>> from gpuconcepts.roofline import Peaks
>>> judge_all(Measured("cpu", Peaks("cpu", 1e11, 1e10, "float32"), ()))
()
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from gpuconcepts.claims.accuracy import gemm_sweep_dtype
from gpuconcepts.claims.distributed import judge_distributed
from gpuconcepts.claims.experiments import judge_claims
from gpuconcepts.claims.wholemodel import judge_wholemodel
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.results.claim import ClaimResult
from gpuconcepts.results.claim_sizes import ClaimSizes
from gpuconcepts.results.measured import Measured

if TYPE_CHECKING:
    from gpuconcepts.measure import Measurement
    from gpuconcepts.results.distributed import DistributedReport
    from gpuconcepts.results.wholemodel import WholeModelResults
    from gpuconcepts.run.run import Run


def judge_all(
    measured: Measured,
    sizes: ClaimSizes | None = None,
    *,
    wholemodel: WholeModelResults | None = None,
    distributed: DistributedReport | None = None,
    only: Sequence[str] | None = None,
) -> tuple[ClaimResult, ...]:
    """Every claim that ``measured`` and the parts' results can decide, in the book's order:
    the core claims (when ``sizes`` are given), then the whole model's, then beyond one device.

    Args:
        measured: the run's measurements (nothing is measured here), with the machine's
            peaks, last-level cache and name, which the whole-model judges read too.
        sizes: the core experiments' sizes; None judges no core claim.
        wholemodel: what the whole-model experiments measured (None: not measured).
        distributed: the distributed run's report (None: not measured).
        only: the core architectures to judge (:func:`~gpuconcepts.claims.judge_claims`).
    """
    results: list[ClaimResult] = []
    if sizes is not None:
        results += judge_claims(measured, sizes, only=only)
    if wholemodel is not None:
        results += judge_wholemodel(
            wholemodel, measured.peaks, cache_bytes=measured.cache_bytes, device=measured.label
        )
    if distributed is not None:
        results += judge_distributed(distributed)
    return tuple(results)


# -- a saved run, read by the judges (the Run is a value: it holds no lab and no judge) ----------
def measured_of(run: Run) -> Measured:
    """``run``'s measurements and facts as the judges read them, with the machine they were
    measured on (and the precision its GEMM sweep ran in:
    :func:`~gpuconcepts.claims.accuracy.gemm_sweep_dtype`)."""
    provenance = run.provenance
    return Measured(
        provenance.device,
        run.peaks,
        run.measurements,
        run.facts,
        cache_bytes=provenance.cache_bytes,
        free_bytes=provenance.free_bytes,
        largest_array_bytes=provenance.sizes.get("budget", {}).get("largest_array_bytes"),
        label=provenance.device_name,
        sweep_dtype=gemm_sweep_dtype(run),
    )


def profile_of(run: Run) -> list[Measurement]:
    """``run``'s profile (the five workloads at its preset sizes) in the order of the book
    (:meth:`~gpuconcepts.results.measured.Measured.profile`): it needs no torch and measures
    nothing."""
    sizes = run.provenance.sizes
    return measured_of(run).profile(sizes["presets"], sizes["sweeps"])


def part_claims(run: Run) -> tuple[ClaimResult, ...]:
    """The whole-model and distributed claims, judged from ``run``'s stored results by the
    same judges that judged them when it was collected (:func:`judge_all`); nothing runs."""
    return judge_all(measured_of(run), wholemodel=run.wholemodel, distributed=run.distributed)


def rejudged(run: Run) -> tuple[ClaimResult, ...]:
    """Every claim judged again from ``run``'s measurements and stored results by this
    version's judges (:func:`judge_all`): the core claims (when the run recorded their
    sizes), then those of :func:`part_claims`."""
    if not run.judgeable:
        raise GpuConceptsError(f"{run.label}: this run records no claim sizes")
    recorded = run.provenance.sizes.get("claims")
    sizes = ClaimSizes.from_table(recorded) if isinstance(recorded, Mapping) else None
    return judge_all(
        measured_of(run), sizes, wholemodel=run.wholemodel, distributed=run.distributed
    )


def judged_now(run: Run) -> Run:
    """``run`` with every claim judged again by this version's judges (:func:`rejudged`), as
    the book and ``verify --run`` show a recorded run: its verdicts follow the code that reads
    it, not the code that recorded it. A run that records neither the claims' sizes nor a part
    keeps the claims it was saved with."""
    if not run.judgeable:
        return run
    return replace(run, claims=rejudged(run), stored_claims=run.claims)
