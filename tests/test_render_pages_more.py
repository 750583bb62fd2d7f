"""What the DLRM, MLP, RNN, analyze and roofline pages compute (gpuconcepts.render.pages),
checked against the recorded run and against runs changed to take each branch."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest

from gpuconcepts import formulas, units
from gpuconcepts.analysis import examples
from gpuconcepts.book import chapter
from gpuconcepts.claims.judge import profile_of
from gpuconcepts.claims.thresholds import RNN_MIN_LOOP_SLOWDOWN
from gpuconcepts.exercises import linear_compute_bound_batch
from gpuconcepts.hardware import datasheet_peaks
from gpuconcepts.questions import question
from gpuconcepts.render import why_unexplained
from gpuconcepts.render.pages import Math, analyze, dlrm, mlp, rnn, roofline
from gpuconcepts.roofline import changes_side, place
from gpuconcepts.run import Run, load

RECORDED = Path(__file__).resolve().parents[1] / "docs" / "runs" / "cpu-amd-epyc-float32.json"


@pytest.fixture(scope="module")
def recorded() -> Run:
    return load(RECORDED)


def test_mlp_houses_work_out_each_price() -> None:
    X = np.array([[1000, 2], [1500, 3], [2000, 4]])
    W = np.array([[5], [10]])
    glue = mlp.houses(X, W, X @ W)
    assert glue["houses"] == "3"
    assert glue["uses"] == "3"  # every weight serves each of the three houses
    assert glue["big_uses"] == units.plain_number(mlp.MANY_HOUSES)
    house3 = glue["house3"]
    assert isinstance(house3, Math)
    assert house3.latex == r"\text{house 3: } 5 \times 2000 + 10 \times 4 = 10040"


def test_mlp_sweep_ends(recorded: Run) -> None:
    sweep = chapter(recorded, "mlp")
    glue = mlp.measured(recorded, sweep)
    assert glue["bound_small"] == place(sweep[0], recorded.peaks).bound
    assert glue["B_large"] == units.plain_number(sweep[-1].size("B"))
    assert glue["speedup"] == units.how_many(sweep[-1].flops_per_s / sweep[0].flops_per_s)


def test_dlrm_lookups_sit_left_of_every_ridge() -> None:
    glue = dlrm.lookups()
    assert glue["intensity_cap"] == "0.25"  # one addition per 4-byte value
    assert glue["ridge_low"].endswith(")")  # names the GPU and the data type
    assert glue["narrow_waste"] == "75%"  # a 16-byte row of a 64-byte line


def test_dlrm_measured_and_hot_rows(recorded: Run) -> None:
    runs = chapter(recorded, "dlrm")
    glue = dlrm.measured(recorded, runs)
    random, dense = runs[0], runs[-1]
    kinds = {place(random, recorded.peaks).bound, place(dense, recorded.peaks).bound}
    assert glue["both_kinds"].startswith("One model, two kinds") == (kinds == {"memory", "compute"})
    hot = dlrm.hot_rows(recorded, runs)
    assert hot["hot_rows"] == units.plain_number(min(runs[2].size("N"), dlrm.HOT_ROWS))
    # a run whose DRAM is faster than every lookup: no cache to credit
    slow = [dataclasses.replace(m, raw_seconds=tuple(t * 100 for t in m.raw_seconds)) for m in runs]
    assert dlrm.hot_rows(recorded, slow)["hot_served"].startswith("the roof that explains")


def test_dlrm_row_order_reads_the_claim(recorded: Run) -> None:
    glue = dlrm.row_order(recorded)
    claim = recorded.claim("dlrm-random-vs-sequential")
    assert glue["judged_verdict"] == claim.verdict
    assert glue["order_table"].startswith("| Bytes per row |")
    beyond = glue["judged_beyond"].startswith("The gap is wider than the model's")
    assert beyond == (claim.test.measured > claim.test.predicted)


def test_dlrm_exercises_from_the_formulas() -> None:
    glue = dlrm.exercises()
    assert glue["ex_lookup_never"] == "Never"  # the batch cancels out of the intensity
    assert glue["ex_fp16_fits"].startswith("It fits")
    sizes = {k: v for k, v in question(11).steps[0].values.items() if k not in ("L", "s")}
    limit = formulas.embedding_intensity.supremum("L", **sizes, s=2)  # asked in BF16
    assert glue["ex_lookup_rows_limit"] == units.significant(limit)


def test_rnn_measured_against_the_gemm(recorded: Run) -> None:
    runs = chapter(recorded, "rnn")
    _, loop, hoisted, gemm = runs
    glue = rnn.measured(recorded, runs)
    assert glue["slowdown"] == units.how_many(loop.seconds / gemm.seconds)
    assert glue["hoisted_gain"] == rnn.hoisted_gain(loop.seconds / hoisted.seconds)
    assert rnn.chain(RNN_MIN_LOOP_SLOWDOWN).startswith("That is the dependency chain")
    assert rnn.chain(1.5).startswith("The loop was slower, but by less than the 2×")
    assert "{doc}`the claims chapter <claims>`" in rnn.chain(1.5)


def test_rnn_module_against_the_python_loops(recorded: Run) -> None:
    runs = chapter(recorded, "rnn")
    text = rnn.module_vs_python(recorded, runs)["module_vs_python"]
    assert text.startswith("slower than" if runs[0].seconds > runs[1].seconds else "not slower")
    assert "On a CPU, PyTorch's `nn.RNN`" in text
    # the difference per step with its bootstrap interval over the rounds, never bare
    assert (
        "that bookkeeping is what it adds: 41.8 µs a step (interval [29 µs, 50 µs]), "
        "50.4 latency floors or 8.4% of its time, a cost per step" in text
    )
    # nn.RNN slower by a median 13.7 µs a step, but its interval straddles zero: no cost shown
    module, loop, hoisted, gemm = runs
    factors = ((0.8, 1.03, 1.25) * len(hoisted.raw_seconds))[: len(hoisted.raw_seconds)]
    noisy = dataclasses.replace(
        module, raw_seconds=tuple(t * f for t, f in zip(hoisted.raw_seconds, factors, strict=True))
    )
    straddles = rnn.module_vs_python(recorded, [noisy, loop, hoisted, gemm])["module_vs_python"]
    assert straddles.endswith(
        "here its bookkeeping cost nothing measurable: the two differed by 13.7 µs a step "
        "(interval [-91.4 µs, 107 µs]), 16.5 latency floors or 2.9% of its time."
    )
    on_gpu = dataclasses.replace(recorded, peaks=dataclasses.replace(recorded.peaks, device="cuda"))
    assert "cuDNN" in rnn.module_vs_python(on_gpu, runs)["module_vs_python"]
    no_floor = dataclasses.replace(
        recorded, peaks=dataclasses.replace(recorded.peaks, latency_seconds=None)
    )
    assert "latency floors" not in rnn.module_vs_python(no_floor, runs)["module_vs_python"]


def test_rnn_module_faster_than_the_loops_is_said_from_the_loops_side() -> None:
    # the H200 bf16 run: cuDNN's nn.RNN beats both loops; each loop took so many times as long
    # as it, and the difference is a share of the slower one's time (not "560% of its time")
    gpu = load(RECORDED.with_name("nvidia-h200-bfloat16.json"))
    text = rnn.module_vs_python(gpu, chapter(gpu, "rnn"))["module_vs_python"]
    assert text.startswith(
        "not slower than the Python loop here: the naive loop took 17 times as long as nn.RNN "
        "and the hoisted one 6.6 times as long as nn.RNN."
    )
    assert text.endswith(
        "the difference was 35.1 µs a step (interval [34.8 µs, 35.8 µs]), 2.59 latency floors "
        "or 85% of the hoisted loop's time."
    )


def test_rnn_step_costs_give_each_measured_time_its_spread(recorded: Run) -> None:
    glue = rnn.step_costs(recorded.measurements, recorded.peaks)
    # the GEMM's share of a step: its median and IQR divided by the 256 steps alike
    assert glue["small_gemm_step"] == "1.59 µs ± 80 ns"
    # a difference of two times: its bootstrap interval, the claims' rule
    assert glue["small_extra"] == "12.4 µs (interval [12.3 µs, 12.5 µs])"
    assert glue["large_extra"] == "74.5 µs (interval [69.5 µs, 82 µs])"
    assert "| 12.4 µs (interval [12.3 µs, 12.5 µs]) | 8.8× |" in str(glue["step_table"])


def test_rnn_exercises_from_the_formulas() -> None:
    glue = rnn.exercises()
    S = question(15).steps[0].values["S"]
    assert glue["ex_steps"] == units.plural(S, "step")


def test_analyze_shows_the_example_models_code() -> None:
    code = analyze.models(examples)
    assert code.startswith("```python\nimport torch\n")
    assert code.endswith("return score\n```")
    assert "from __future__" not in code
    assert ">>>" not in code  # no docstring, so no doctests
    for name in ("def small_cnn", "class TransformerBlock", "class TinyDLRM"):
        assert name in code


def test_analyze_glues_one_model_and_the_machine(recorded: Run) -> None:
    torch = pytest.importorskip("torch")
    from gpuconcepts.analysis import analyze as run_analysis

    torch.manual_seed(0)
    x = torch.randn(1, 3, 8, 8)
    report = run_analysis(examples.small_cnn(), x, device="cpu", peaks=recorded.peaks, repeats=1)
    glue = analyze.model("cnn", report)
    assert all(key.startswith("cnn_") for key in glue)
    assert glue["cnn_calls"] == units.plain_number(len(report.layers))
    assert glue["cnn_check"].startswith("`FlopCounterMode` counts")
    # the calls' sum is a derived time: with its interval; the forward pass: median ± IQR
    layers = tuple(
        dataclasses.replace(layer, raw_seconds=(1e-3, 1e-3, 2e-3)) for layer in report.layers[:2]
    )
    timed = dataclasses.replace(
        report, layers=layers, forward_raw_seconds=(1e-3, 2e-3, 3e-3, 4e-3, 5e-3)
    )
    glue = analyze.model("cnn", timed)
    # each call's median resamples to 1 ms or 2 ms: the sum spans 2 ms to 4 ms
    assert glue["cnn_seconds"] == "2 ms (interval [2 ms, 4 ms])"
    assert glue["cnn_forward"] == "3 ms ± 2 ms"
    untimed = analyze.model("cnn", dataclasses.replace(timed, layers=(), forward_raw_seconds=()))
    assert (untimed["cnn_seconds"], untimed["cnn_forward"]) == (units.NOTHING, units.NOTHING)
    machine = analyze.machine({"cnn": report})
    assert machine["reference"] == analyze.REFERENCE
    assert machine["ridge"] == units.significant(report.ridge_point)


def test_analyze_exercises_match_the_library() -> None:
    glue = analyze.exercises()
    fp32 = linear_compute_bound_batch(d_in=4096, d_out=4096, gpu="H100 SXM", dtype="fp32")
    assert fp32 is not None
    assert glue["ex_an_fp32_batch"] == units.plural(fp32, "sample")


def test_roofline_page_against_the_recorded_run(recorded: Run) -> None:
    measurements = profile_of(recorded)
    peaks = recorded.peaks
    glue = roofline.explained(measurements, peaks)
    unexplained = [m for m in measurements if why_unexplained(m, peaks) is not None]
    assert glue["n_explained"] == f"{len(measurements) - len(unexplained)} of {len(measurements)}"
    assert roofline.explained([], peaks)["unexplained"].startswith("Every measurement")
    sides = roofline.families(recorded, measurements)
    assert sides["both_families"].startswith("Here ")
    none = roofline.families(recorded, [])
    assert none["memory_families"] == "none of the five"
    assert none["both_families"] == "Here no workload has kernels on both sides of the ridge."
    no_limit = dataclasses.replace(
        recorded, peaks=dataclasses.replace(peaks, physical_flops_per_s=None)
    )
    assert roofline.machine(no_limit, measurements)["physical"].startswith("This machine's")


def test_roofline_page_on_the_datasheet_gpus(recorded: Run) -> None:
    measurements = profile_of(recorded)
    glue = roofline.on_gpus(measurements, recorded.peaks)
    changed = changes_side(measurements, recorded.peaks, datasheet_peaks(recorded.peaks.dtype))
    assert glue["n_changed"].startswith(f"{len(changed)} of the ")
    assert glue["changed"].count("\n") == max(len(changed) - 1, 0)
    assert roofline.on_gpus([], recorded.peaks)["changed"].startswith("* none:")
    text = roofline.recorded_peaks(recorded)
    assert text.startswith(f"**Recorded** on {recorded.provenance.summary}. ")
    assert units.significant(recorded.peaks.ridge_point) in text


def test_dlrm_row_order_without_a_model_gap_says_so(recorded: Run) -> None:
    # a run whose ceilings give no gap (a prediction not judged, or not measured) shows a dash
    # for the model and never compares the measurement with a missing number
    claim = recorded.claim("dlrm-random-vs-sequential")
    unknown = dataclasses.replace(claim, test=dataclasses.replace(claim.test, predicted=math.nan))
    run = dataclasses.replace(
        recorded,
        claims=tuple(unknown if c.key == claim.key else c for c in recorded.claims),
        stored_claims=None,
    )
    glue = dlrm.row_order(run)
    assert glue["judged_model"] == "—"
    assert glue["judged_beyond"] == "The model gives no gap to set it against here."
