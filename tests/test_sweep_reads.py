"""Which judges read the GEMM sweep, found by judging every recorded run with and without it
(issue 45, item 7): a claim whose prediction or verdict moves must be listed, so that a run
whose sweep ran in another precision than its kernels (the recorded H200 tf32 run's ran in
FP32) never shows a number read from it as judged."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest

from gpuconcepts.claims.accuracy import PREDICTION_READS_GEMM_SWEEP, READS_GEMM_SWEEP
from gpuconcepts.claims.experiments import judge_claims
from gpuconcepts.claims.judge import judged_now, measured_of
from gpuconcepts.render.markdown import audit_cell, markdown_claim
from gpuconcepts.results.claim import ClaimResult
from gpuconcepts.results.claim_sizes import ClaimSizes
from gpuconcepts.run import load

RUNS = Path(__file__).resolve().parents[1] / "docs" / "runs"
RECORDED = sorted(RUNS.glob("*.json"))
NOT_JUDGED = "prediction_not_judged"  # the entry of a claim's values that says why
MISMATCH = (
    "not judged: its GEMM sweep ran in float32 while its kernels ran in tf32 (record the run again)"
)


def _judged(path: Path, *, sweep: bool) -> dict[str, ClaimResult]:
    """The core claims of the run at ``path``, its sweep taken as run in its kernels'
    precision (nothing is left unjudged), with its GEMM sweep or without it."""
    run = load(path)
    measured = replace(measured_of(run), sweep_dtype=None)
    if not sweep:
        measured = replace(measured, peaks=replace(measured.peaks, gemm_sweep=()))
    sizes = ClaimSizes.from_table(run.provenance.sizes["claims"])
    return {r.key: r for r in judge_claims(measured, sizes)}


def _same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


def _test_but_prediction(r: ClaimResult) -> tuple[object, ...]:
    t = r.test
    return (r.verdict, r.visible, r.gates, t.measured, t.interval, t.low, t.high)


@pytest.mark.parametrize("path", RECORDED, ids=[p.stem for p in RECORDED])
def test_every_claim_that_reads_the_gemm_sweep_is_listed(path: Path) -> None:
    with_sweep, without = _judged(path, sweep=True), _judged(path, sweep=False)
    assert with_sweep.keys() == without.keys()
    moved = {
        key
        for key, r in with_sweep.items()
        if not _same(r.test.predicted, without[key].test.predicted)
    }
    verdicts = {
        key
        for key, r in with_sweep.items()
        if _test_but_prediction(r) != _test_but_prediction(without[key])
    }
    # the predictions shown beside a verdict, and the model's own claims that read the sweep
    assert moved <= set(PREDICTION_READS_GEMM_SWEEP) | set(READS_GEMM_SWEEP)
    assert "mlp-batch-trend" in moved  # every recorded run's sweep is read: the check is live
    # a verdict that reads the sweep is listed apart: the whole claim goes unjudged
    assert verdicts <= set(READS_GEMM_SWEEP)
    assert not verdicts & set(PREDICTION_READS_GEMM_SWEEP)


def test_the_tf32_run_marks_every_prediction_read_from_its_fp32_sweep_not_judged() -> None:
    run = judged_now(load(RUNS / "nvidia-h200-tf32.json"))
    claims = {r.key: r for r in run.claims}
    for key in PREDICTION_READS_GEMM_SWEEP:
        claim = claims[key]
        assert math.isnan(claim.test.predicted), key
        assert claim.values[NOT_JUDGED] == MISMATCH
        assert claim.prediction.endswith(f"(the measured ceilings' numbers here are {MISMATCH})")
        assert claim.verdict == "holds"  # its verdict reads no prediction: it stands
        assert audit_cell(claim) == "holds"  # no ratio to an FP32 sweep's number beside it
        assert f"({claim.test.quantity} = —)" in markdown_claim(claim)
    crossover = claims["mlp-crossover"]  # the model's, whose verdict reads the sweep
    assert (crossover.verdict, crossover.reason) == ("not visible", MISMATCH)


def test_a_sweep_in_the_kernels_precision_leaves_every_prediction_judged() -> None:
    run = judged_now(load(RUNS / "nvidia-h200-bfloat16.json"))
    claims = {r.key: r for r in run.claims}
    for key in PREDICTION_READS_GEMM_SWEEP:
        assert math.isfinite(claims[key].test.predicted), key
        assert NOT_JUDGED not in claims[key].values
    assert claims["mlp-crossover"].visible
