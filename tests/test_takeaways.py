"""Each chapter's takeaways are true to the runs it shows (issue 46, item 6): the measured ones
are computed from the run the chapter leads with, so every recorded run is fed to them and
checked against its own numbers, and a run made to contradict a takeaway changes its words."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from gpuconcepts.claims.thresholds import RNN_MIN_LOOP_SLOWDOWN
from gpuconcepts.render import EXPLAINED
from gpuconcepts.render.pages import cnn as cnn_page
from gpuconcepts.render.pages import dlrm as dlrm_page
from gpuconcepts.render.pages import mlp as mlp_page
from gpuconcepts.render.pages import rnn as rnn_page
from gpuconcepts.render.pages import transformer as transformer_page
from gpuconcepts.render.pages.gpu import chapter
from gpuconcepts.roofline import place
from gpuconcepts.run import Run, load_all
from gpuconcepts.units import percent

RUNS = load_all(Path(__file__).parents[1] / "docs" / "runs")
IDS = [r.label for r in RUNS]
GPU = next(r for r in RUNS if r.peaks.dtype == "bfloat16")


def with_times(run: Run, factor: object) -> Run:
    """``run`` with each repetition of a kernel multiplied by ``factor(m)`` (1 keeps it)."""
    measurements = tuple(
        replace(m, raw_seconds=tuple(t * factor(m) for t in m.raw_seconds))  # type: ignore[operator]
        for m in run.measurements
    )
    return replace(run, measurements=measurements)


# -- MLP -------------------------------------------------------------------------------------
def check_mlp(run: Run) -> None:
    said = mlp_page.takeaways(run)
    sweep = chapter(run, "mlp")
    left = [m for m in sweep if place(m, run.peaks).bound == "memory"]
    if len(left) >= 2:
        ratio = left[-1].seconds / left[0].seconds
        flat = ratio < mlp_page.FLAT_RATIO
        assert said["take_flat"].startswith("Left of the ridge point") is flat, said
        assert ("did not share one read" in said["take_flat"]) is not flat, said
    else:
        assert "fewer than two batches" in said["take_flat"]
    reached = [
        m
        for m in sweep
        if place(m, run.peaks).kind == "compute" and place(m, run.peaks).attained >= EXPLAINED[0]
    ]
    assert said["take_compute"].startswith("Batching turns") is bool(reached), said
    if reached:
        assert f"batch of {reached[0].size('B'):,}" in said["take_compute"]


@pytest.mark.parametrize("run", RUNS, ids=IDS)
def test_the_mlp_takeaways_of_every_recorded_run(run: Run) -> None:
    check_mlp(run)


def test_the_mlp_takeaways_follow_a_run_made_to_contradict_them() -> None:
    # the biggest batch left of the ridge took 3x as long: the batches shared no one read
    left = [m for m in chapter(GPU, "mlp") if place(m, GPU.peaks).bound == "memory"][-1]
    slow = with_times(GPU, lambda m: 3.0 if m is left else 1.0)
    assert "did not share one read" in mlp_page.takeaways(slow)["take_flat"]
    check_mlp(slow)
    # every batch 10x slower: none reaches half of the compute roof
    crawling = with_times(GPU, lambda m: 10.0 if m.workload == "mlp" else 1.0)
    assert "no batch reached half" in mlp_page.takeaways(crawling)["take_compute"]
    check_mlp(crawling)


def test_no_run_gives_dashes() -> None:
    assert set(mlp_page.takeaways(None).values()) == {"—"}


# -- CNN -------------------------------------------------------------------------------------
def check_cnn(run: Run) -> None:
    said = cnn_page.takeaways(run)
    found = {m.workload: m for m in chapter(run, "cnn")}
    conv, depth = found["cnn-conv"], found["cnn-depthwise"]
    dense, thin = place(conv, run.peaks), place(depth, run.peaks)
    sides = dense.bound == "compute" and thin.bound == "memory"
    assert said["take_bounds"].startswith("The same filter size, two sides") is sides, said
    if sides:
        assert f"{dense.attained:.0%}"[:-1] in said["take_bounds"]
    faster = conv.flops_per_s / depth.flops_per_s >= cnn_page.FASTER
    assert said["take_rate"].startswith("Reuse, not the filter") is faster, said
    assert ("no more FLOPs per second" in said["take_rate"]) is not faster, said


@pytest.mark.parametrize("run", RUNS, ids=IDS)
def test_the_cnn_takeaways_of_every_recorded_run(run: Run) -> None:
    check_cnn(run)


def test_the_cnn_takeaways_follow_a_run_made_to_contradict_them() -> None:
    # the dense convolution 200x slower: no faster than the depthwise one
    slow = with_times(GPU, lambda m: 200.0 if m.workload == "cnn-conv" else 1.0)
    assert "no more FLOPs per second" in cnn_page.takeaways(slow)["take_rate"]
    check_cnn(slow)
    # a machine whose ridge point lies left of the depthwise layer: both on one side
    flat = replace(GPU, peaks=replace(GPU.peaks, flops_per_s=GPU.peaks.bytes_per_s))
    assert "side of the ridge point" in cnn_page.takeaways(flat)["take_bounds"]
    check_cnn(flat)


# -- DLRM ------------------------------------------------------------------------------------
def check_dlrm(run: Run) -> None:
    said = dlrm_page.takeaways(run)
    found = {m.workload: m for m in chapter(run, "dlrm")}
    rand, hot = found["dlrm-random"], found["dlrm-hot"]
    where = place(rand, run.peaks)
    memory = where.bound == "memory"
    assert said["take_roof"].startswith("Bytes, not arithmetic") is memory, said
    if memory:
        # random rows read against their level's random-access rate say so
        random = f"the random-access roof of {where.observed}"
        roof = random if where.at_random else f"the {where.observed} roof"
        assert f"reached {percent(where.attained)} of {roof}." in said["take_roof"]
    faster = rand.seconds / hot.seconds >= dlrm_page.FASTER
    assert said["take_hot"].startswith("A cache helps") is faster, said
    assert ("ran no faster" in said["take_hot"]) is not faster, said


@pytest.mark.parametrize("run", RUNS, ids=IDS)
def test_the_dlrm_takeaways_of_every_recorded_run(run: Run) -> None:
    check_dlrm(run)


def test_the_dlrm_takeaways_follow_a_run_made_to_contradict_them() -> None:
    # hot rows as slow as random ones: a cache that did not help
    slow = with_times(GPU, lambda m: 2.0 if m.workload == "dlrm-hot" else 1.0)
    assert "ran no faster" in dlrm_page.takeaways(slow)["take_hot"]
    check_dlrm(slow)
    # a machine whose ridge point lies left of the lookup: not memory's side
    flat = replace(GPU, peaks=replace(GPU.peaks, flops_per_s=GPU.peaks.bytes_per_s / 100))
    assert "on the compute side" in dlrm_page.takeaways(flat)["take_roof"]
    check_dlrm(flat)


# -- Transformer -----------------------------------------------------------------------------
def check_transformer(run: Run) -> None:
    said = transformer_page.takeaways(run)
    found = chapter(run, "transformer")
    big = [m for m in found if m.workload == "transformer-prefill"][-1]
    step = next(m for m in found if m.workload == "transformer-decode")
    at, there = place(big, run.peaks), place(step, run.peaks)
    arithmetic = at.bound == "compute" and at.attained >= EXPLAINED[0]
    assert said["take_prefill"].startswith("Reading a long prompt") is arithmetic, said
    assert ("does not explain its time" in said["take_prefill"]) is not arithmetic, said
    reading = there.bound == "memory" and there.attained >= EXPLAINED[0]
    assert said["take_decode"].startswith("Generating is reading") is reading, said
    assert ("does not explain its time" in said["take_decode"]) is not reading, said


@pytest.mark.parametrize("run", RUNS, ids=IDS)
def test_the_transformer_takeaways_of_every_recorded_run(run: Run) -> None:
    check_transformer(run)


def test_the_transformer_takeaways_follow_a_run_made_to_contradict_them() -> None:
    # prefill and decode 5x slower: neither explained by its roof
    slow = with_times(GPU, lambda m: 5.0 if m.workload.startswith("transformer") else 1.0)
    said = transformer_page.takeaways(slow)
    assert "does not explain its time" in said["take_prefill"]
    assert "does not explain its time" in said["take_decode"]
    check_transformer(slow)


# -- RNN -------------------------------------------------------------------------------------
def check_rnn(run: Run) -> None:
    said = rnn_page.takeaways(run)
    found = {m.workload: m for m in chapter(run, "rnn")}
    loop, gemm, module = found["rnn-loop"], found["rnn-gemm"], found["rnn-module"]
    chained = loop.seconds / gemm.seconds >= RNN_MIN_LOOP_SLOWDOWN
    assert said["take_loop"].startswith("The chain, not the arithmetic") is chained, said
    assert ("the chain cost little" in said["take_loop"]) is not chained, said
    between = (
        loop.seconds / module.seconds >= rnn_page.FASTER
        and module.seconds / gemm.seconds >= rnn_page.FASTER
    )
    assert said["take_module"].startswith("A fused kernel") is between, said


@pytest.mark.parametrize("run", RUNS, ids=IDS)
def test_the_rnn_takeaways_of_every_recorded_run(run: Run) -> None:
    check_rnn(run)


def test_the_rnn_takeaways_follow_a_run_made_to_contradict_them() -> None:
    # the loop as fast as the GEMM, nn.RNN slower than the loop
    fast = with_times(GPU, lambda m: {"rnn-loop": 1e-3, "rnn-module": 10.0}.get(m.workload, 1.0))
    said = rnn_page.takeaways(fast)
    assert "the chain cost little" in said["take_loop"]
    assert not said["take_module"].startswith("A fused kernel")
    check_rnn(fast)
