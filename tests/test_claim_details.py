"""Every measured time a claim's detail quotes carries its spread, "median ± IQR"
(:func:`~gpuconcepts.claims.quantities.time_each`): a median alone hides how much the
repetitions moved. A fitted line's coefficients are a fit, not timings, and stay as they are."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuconcepts import formulas
from gpuconcepts.claims.judge import judged_now
from gpuconcepts.claims.rnn_steps import judge_rnn_loop_vs_gemm
from gpuconcepts.measure import Measurement
from gpuconcepts.results.claim import ClaimResult
from gpuconcepts.roofline import Peaks
from gpuconcepts.run import load

RUNS = Path(__file__).resolve().parents[1] / "docs" / "runs"


@pytest.fixture(scope="module")
def cpu_details() -> dict[str, str]:
    claims: tuple[ClaimResult, ...] = judged_now(load(RUNS / "cpu-amd-epyc-float32.json")).claims
    return {c.key: c.detail for c in claims}


def test_the_recorded_cpu_run_s_details_give_each_time_with_its_spread(
    cpu_details: dict[str, str],
) -> None:
    assert cpu_details["rnn-loop-vs-gemm"] == "step loop 3.57 ms ± 60 µs, one GEMM 407 µs ± 20 µs"
    assert cpu_details["attention-doubling"] == "105 ms ± 3.6 ms → 423 ms ± 11 ms"
    # a time per token or per step: each repetition divided, so the spread divides alike
    assert cpu_details["prefill-vs-decode"] == (
        "prefill 17.3 µs ± 630 ns per token, decode 476 µs ± 180 µs per token (28×)"
    )
    assert cpu_details["rnn-batch-vs-critical-path"].endswith(
        "; time per step 4.68 µs ± 480 ns → 78.3 µs ± 1.6 µs"
    )
    assert cpu_details["attention-quadratic"] == (
        "fitted over S = 1,024 … 4,096 (R² 1); 2.14 ms ± 64 µs at S=256, 423 ms ± 11 ms at S=4,096"
    )
    # the fitted line keeps its coefficients bare; the ends of the sweep are timings
    assert cpu_details["rnn-linear-in-S"].startswith(
        "time = 270 µs + 3.25 µs × S over S = 32 … 1,024 (R² 0.994); "
    )
    assert (
        "; 448 µs ± 64 µs at S=32, 3.62 ms ± 160 µs at S=1,024; "
        in (cpu_details["rnn-linear-in-S"])
    )


def test_a_synthetic_pair_s_detail_reads_its_repetitions_spread() -> None:
    sizes = {"B": 1, "S": 128, "d_in": 32, "d_h": 32, "s": 4}
    flops = formulas.rnn_flops(B=1, S=128, d_in=32, d_h=32)
    loop = Measurement("rnn-loop", "cpu", sizes, (0.011, 0.01, 0.012), flops, 1.0)
    gemm = Measurement("rnn-gemm", "cpu", sizes, (1e-3, 1.2e-3, 0.8e-3), flops, 1.0)
    peaks = Peaks("cpu", 1e11, 1e10, "float32", latency_seconds=5e-6)
    result = judge_rnn_loop_vs_gemm(loop, gemm, peaks=peaks, device="demo")
    assert result.detail == "step loop 11 ms ± 1 ms, one GEMM 1 ms ± 200 µs"
