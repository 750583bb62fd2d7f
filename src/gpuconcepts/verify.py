"""``gpuconcepts verify``: judge every claim, measured now or from a saved run, as text or JSON.

Exit status: 0 whenever the claims were judged, whatever the verdicts. A claim that does not
hold on this machine is a measured result, not a failure of the program; scripts read the
verdicts from ``--json``. Bad input (an unknown device, CUDA without a GPU, a bad run file)
raises :class:`~gpuconcepts.errors.GpuConceptsError`, which the CLI prints as one line (exit 2).

It sits at the top of the layers (issue 47), beside :mod:`gpuconcepts.collect`, which it calls
to measure a run; the judges it reads a run with sit below it, in :mod:`gpuconcepts.claims`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpuconcepts.claims.accuracy import accuracy, flips, summary
from gpuconcepts.claims.judge import judged_now
from gpuconcepts.collect import collect
from gpuconcepts.measure import resolve_device
from gpuconcepts.peaks_cache import this_machine_peaks
from gpuconcepts.results.claim import ClaimResult
from gpuconcepts.results.ledger import in_ledger, tally
from gpuconcepts.roofline.version import model_version
from gpuconcepts.run import Run, load
from gpuconcepts.sizing import RunSizes


def verify_dict(run: Run, claims: tuple[ClaimResult, ...]) -> dict[str, Any]:
    """The ``--json`` payload, both ledgers (issue 45): the device, its provenance and peaks,
    the tally of the post's claims; ``claims`` (the post's, each with its ``verdict`` now and
    its ``stored_verdict``, the one the run was saved with), ``facts`` (exact checks, not
    tallied), ``predictions`` (the model's own claims, scored with ledger 2, not tallied),
    ``accuracy`` (every kernel against the post's model, :mod:`~gpuconcepts.claims.accuracy`;
    each row with ``stored_predicted_seconds`` and ``stored_ratio``, the prediction the run
    registered when it was measured, null where it stored none) with its ``accuracy_summary``
    (``stored_share_within_2x`` and ``stored_median_abs_log2`` over the ``stored_kernels``
    beside today's numbers), and ``flips``. Every number is finite or null."""
    stored = {r.key: r.verdict for r in run.saved_claims}

    def entry(result: ClaimResult) -> dict[str, Any]:
        return {**result.to_dict(), "stored_verdict": stored.get(result.key, result.verdict)}

    rows = accuracy(run)
    return {
        "device": run.provenance.device,
        "device_label": run.label,
        "quick": run.provenance.quick,
        "provenance": run.provenance.to_dict(),
        "peaks": run.peaks.to_dict(),
        "model_version": model_version(),
        "counts": tally(claims),
        "claims": [entry(r) for r in in_ledger(claims, "post")],
        "facts": [entry(r) for r in in_ledger(claims, "fact")],
        "predictions": [entry(r) for r in in_ledger(claims, "model")],
        "accuracy": [row.to_dict() for row in rows],
        "accuracy_summary": summary(rows).to_dict(),
        "flips": [flip.to_dict() for flip in flips(run)],
    }


def judged(
    device: str,
    quick: bool,
    *,
    run_path: str | None = None,
    progress: Callable[[str], None] | None = None,
    fresh: bool = False,
) -> tuple[Run, tuple[ClaimResult, ...]]:
    """A run and its claims' verdicts: a saved run (``run_path``) judged again, nothing
    measured, or a run measured now on ``device`` (auto, cpu or cuda), reporting each phase
    to ``progress``, against this machine's peaks kept from an earlier measurement
    (:func:`~gpuconcepts.peaks_cache.this_machine_peaks`; ``fresh`` measures them again). The CLI's ``verify`` renders what this returns.

    Its JSON form (:func:`verify_dict`) has, per claim (see
    :meth:`~gpuconcepts.results.claim.ClaimResult.to_dict`): ``claim``, ``prediction`` (text)
    and ``predicted`` (the value), ``quantity``, ``alternative`` and ``alternative_value``,
    ``pass_region`` ([low, high], null for an open end), ``measured``, ``interval``,
    ``verdict`` ("holds", "fails", "undecided" or "not visible") with its ``reason``, ``gates``,
    ``detail``, ``values`` and ``plot``.
    """
    if run_path is not None:  # judged by this version's judges, the saved verdicts kept
        run = judged_now(load(run_path))
        return run, run.claims
    resolved = resolve_device(device)
    sizes = RunSizes.resolve(resolved, quick)  # the command's one sizing decision
    peaks, _source = this_machine_peaks(sizes, fresh=fresh, progress=progress)
    run = collect(resolved, quick, sizes=sizes, progress=progress, peaks=peaks)
    return run, run.claims
