"""Issue 45, item 7: a prediction that reads a ceiling measured in another precision than its
kernel ran in is not judged, with the reason, read from the run's data (the precision its GEMM
sweep ran in, its peaks' and its kernels' dtypes, the day it was recorded), never from a
file's name."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from gpuconcepts.claims.accuracy import (
    READS_GEMM_SWEEP,
    accuracy,
    gemm_sweep_dtype,
    summary,
    sweep_mismatch,
    unjudged,
)
from gpuconcepts.claims.judge import judged_now
from gpuconcepts.measure import Measurement
from gpuconcepts.results.claim import example
from gpuconcepts.roofline import Peaks
from gpuconcepts.run import Provenance, Run, load
from gpuconcepts.run._migrations import PRECISION_SINCE

RUNS = Path(__file__).resolve().parents[1] / "docs" / "runs"
SWEEP = ((1, 64, False, 1e9), (64, 256, False, 5e10))


def _mlp(dtype: str, *, B: int = 4) -> Measurement:
    params = {"B": B, "d_in": 64, "d_out": 64, "s": 4, "dtype": dtype}
    return Measurement("mlp", "cuda", params, (1e-6,) * 3, 2 * B * 64 * 64, 64 * 64 * 4)


def _run(dtype: str, created: str, *, recorded: str | None = None) -> Run:
    sizes = {} if recorded is None else {"gemm_sweep_dtype": recorded}
    provenance = replace(Provenance.example(), device="cuda", created_utc=created, sizes=sizes)
    peaks = Peaks("cuda", 4e14, 4e12, dtype, gemm_sweep=SWEEP)
    return Run(provenance, peaks, (_mlp(dtype),), {}, ())


def _as_schema_3(run: Run) -> Run:
    """``run`` saved as a version 3 file (which did not record its sweep's precision) and read
    back through the migrations (without its kernels, whose made-up counts a file refuses)."""
    data = json.loads(replace(run, measurements=()).to_json())
    data["schema"] = 3
    data["provenance"].pop("model_version")
    return Run.from_dict(data)


def test_the_sweep_precision_is_read_from_the_run() -> None:
    before, after = "2026-12-04T17:26:27Z", "2026-12-07T00:00:00Z"
    assert before < PRECISION_SINCE < after
    # a version 3 tf32 run recorded before the ceilings ran in the run's precision: an FP32
    # sweep, told by its migration from the day it was recorded (the schema cannot tell)
    assert gemm_sweep_dtype(_as_schema_3(_run("tf32", before))) == "float32"
    assert gemm_sweep_dtype(_as_schema_3(_run("tf32", after))) == "tf32"
    assert gemm_sweep_dtype(_as_schema_3(_run("bfloat16", before))) == "bfloat16"
    # what a run records wins over the rule; a run made now is read as it is, with no date
    assert gemm_sweep_dtype(_as_schema_3(_run("tf32", before, recorded="tf32"))) == "tf32"
    assert gemm_sweep_dtype(_run("tf32", before)) == "tf32"
    assert (
        gemm_sweep_dtype(replace(_run("tf32", before), peaks=Peaks("cuda", 1, 1, "tf32"))) is None
    )


def test_a_sweep_of_another_precision_leaves_the_claims_that_read_it_unjudged() -> None:
    reason = sweep_mismatch("float32", [_mlp("tf32")])
    assert reason.startswith("not judged")
    assert "ran in float32 while its kernels ran in tf32" in reason
    assert sweep_mismatch("tf32", [_mlp("tf32")]) == ""
    reads, other = replace(example(), key="mlp-crossover"), example()
    assert reads.key in READS_GEMM_SWEEP
    judged = unjudged((reads, other), "float32", [_mlp("tf32")])
    assert [r.verdict for r in judged] == ["not visible", other.verdict]
    assert judged[0].why == reason
    assert unjudged((reads, other), "tf32", [_mlp("tf32")]) == (reads, other)
    # only the kernels the claim reads count: an RNN in float16 leaves the MLP's knee judged
    rnn = replace(_mlp("float16"), workload="rnn-gemm")
    assert unjudged((reads,), "tf32", [_mlp("tf32"), rnn]) == (reads,)


def test_a_compute_bound_row_read_from_a_peak_of_another_precision_is_not_scored() -> None:
    big = _mlp("float32", B=4096)  # compute-bound, in FP32, against a TF32 peak
    run = replace(_run("tf32", "2026-12-07T00:00:00Z"), measurements=(big, _mlp("tf32")))
    rows = accuracy(run)
    assert rows[0].bound == "compute"
    assert "tf32" in rows[0].not_judged
    assert rows[0].to_dict()["judged"] is False
    assert rows[1].not_judged == ""
    assert summary(rows).kernels == 1  # the unjudged row is in no number


def test_the_recorded_tf32_run_leaves_its_sweep_readers_unjudged() -> None:
    run = load(RUNS / "nvidia-h200-tf32.json")
    assert gemm_sweep_dtype(run) == "float32"
    claims = {c.key: c for c in judged_now(run).claims}
    for key in set(READS_GEMM_SWEEP) & set(claims):
        assert claims[key].verdict == "not visible"
        assert "GEMM sweep ran in float32" in claims[key].why
    # the bfloat16 run's sweep ran in its own precision: judged
    bf16 = load(RUNS / "nvidia-h200-bfloat16.json")
    assert gemm_sweep_dtype(bf16) == "bfloat16"
    assert all("not judged" not in c.why for c in judged_now(bf16).claims)
