"""Predictions that can fail (issue 36): every pass region lies within [p/2, 2p] of its
prediction and leaves the alternative out, at most three claims test a direction only and say
so, and on each recorded run the claims measure within 2x of their predictions, re-judged
with the current code."""

from __future__ import annotations

import math
from functools import cache
from pathlib import Path

import pytest

from gpuconcepts.claims.predict import (
    measured_over_predicted,
    numeric,
    prediction_region,
    region_within,
    share_within,
    within_prediction,
)
from gpuconcepts.claims.registry import CLAIMS
from gpuconcepts.claims.result import ClaimResult, TwoSided, example
from gpuconcepts.claims.thresholds import MAX_DIRECTION_ONLY, PREDICTION_FACTOR
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.run import load

RUNS = Path(__file__).resolve().parent.parent / "docs" / "runs"
RECORDED = sorted(path.name for path in RUNS.glob("*.json"))


@cache
def rejudged(name: str) -> tuple[ClaimResult, ...]:
    """A recorded run's claims, judged again with the current code."""
    return load(RUNS / name).rejudged()


def test_the_recorded_runs_are_the_three_the_book_shows() -> None:
    assert RECORDED == [
        "cpu-amd-epyc-float32.json",
        "nvidia-h200-bfloat16.json",
        "nvidia-h200-tf32.json",
    ]


# -- the rule itself --------------------------------------------------------------------------
def test_prediction_region_is_a_factor_of_two_either_side() -> None:
    assert PREDICTION_FACTOR == 2.0
    assert prediction_region(3.0) == (1.5, 6.0)
    for bad in (0.0, -2.0, math.inf, math.nan):
        with pytest.raises(GpuConceptsError, match="predicted must be a positive finite number"):
            prediction_region(bad)


def test_region_within_refuses_open_and_wide_regions() -> None:
    def test(low: float | None, high: float | None) -> TwoSided:
        return TwoSided("r", 4.0, "none", 1.0, low, high, 3.0, (3.0, 3.0))

    assert region_within(test(2.0, 8.0))
    assert region_within(test(3.0, 5.0))
    assert not region_within(test(2.0, None))  # open: any large value would pass
    assert not region_within(test(1.9, 8.0))
    assert not region_within(test(2.0, 8.1))


def test_within_prediction_counts_numbers_only() -> None:
    assert within_prediction(example(16.0)) is True  # the example predicts 8
    assert within_prediction(example(16.5)) is False
    assert within_prediction(example(3.9)) is False
    assert measured_over_predicted(example(4.0).test) == 0.5
    zero = TwoSided("error", 0.0, "half", 0.5, 0.0, 0.0, 0.0, (0.0, 0.0))
    assert not numeric(zero)  # an exact check predicting 0 has no ratio
    assert share_within([example(8.0), example(30.0), example(1.0)]) == (1, 3)


# -- the registry's labels ---------------------------------------------------------------------
def test_at_most_three_claims_test_a_direction_only_and_say_so() -> None:
    direction = [key for key, claim in CLAIMS.items() if claim.tests == "direction"]
    assert len(direction) <= MAX_DIRECTION_ONLY == 3
    assert direction == ["rnn-batch-vs-critical-path"]
    for result in rejudged(RECORDED[0]):
        if result.key in direction:
            assert "a direction only" in result.claim


def test_exact_checks_are_labelled_facts() -> None:
    facts = {key for key, claim in CLAIMS.items() if claim.tests == "fact"}
    assert {"cnn-weight-sharing", "kv-cache-exact", "training-memory"} <= facts
    assert {key for key in CLAIMS if key.startswith("traffic-")} <= facts
    for result in rejudged(RECORDED[0]):
        if result.key in facts:  # a count has no spread
            assert result.test.interval[0] == result.test.interval[1] or result.key.startswith(
                ("traffic-", "allreduce-", "rowwise-")
            )


# -- every pass region, on every recorded run ---------------------------------------------------
@pytest.mark.parametrize("name", RECORDED)
def test_every_pass_region_lies_within_twice_its_prediction(name: str) -> None:
    wide = []
    for result in rejudged(name):
        tests = CLAIMS[result.key].tests
        if tests == "direction" or not numeric(result.test):
            continue  # labelled direction-only, or an exact check of 0 (kv-cache-exact)
        if result.verdict == "not visible" and not math.isfinite(result.test.predicted):
            continue
        if not region_within(result.test):
            wide.append((result.key, result.test.predicted, result.test.low, result.test.high))
    assert wide == []


@pytest.mark.parametrize("name", RECORDED)
def test_every_visible_region_leaves_the_alternative_out(name: str) -> None:
    for result in rejudged(name):
        test = result.test
        if result.verdict != "not visible" and math.isfinite(test.alternative_value):
            assert not test.contains(test.alternative_value), result.key


# -- measured within 2x of the prediction ------------------------------------------------------
WITHIN = {
    "cpu-amd-epyc-float32.json": (35, 35),
    "nvidia-h200-bfloat16.json": (32, 35),
    "nvidia-h200-tf32.json": (26, 35),
}
"""Claims measured within 2x of their prediction, of those whose prediction and measurement
are numbers, on each recorded run re-judged with the current code (2026-12-06). Before the
predictions were made numbers (issue 36): 24, 22 and 21 of 35. rnn-linear-in-S, judged by its
cost per step since the same day, measures 0.61x its prediction on the H200 in bf16 (the
products of cuDNN's fused steps charged without a launch each) and 0.42x in tf32. Since the
pipeline's messages are priced by the α-β fit (2026-12-06, docs/changes.toml), its bubble
measures 1.28x, 1.70x and 1.50x its prediction (2.54x, 5.27x and 4.98x of GPipe's alone).
Since the decode knee reads the weights at the rate a batch-1 product read them, it measures
0.72x, 0.77x and 1.63x its prediction (2.99x, 1.78x and 3.61x before)."""


@pytest.mark.parametrize("name", RECORDED)
def test_within_twice_counts_on_the_recorded_runs(name: str) -> None:
    assert share_within(rejudged(name)) == WITHIN[name]


@pytest.mark.parametrize(
    "name",
    [
        RECORDED[0],
        RECORDED[1],
        pytest.param(
            RECORDED[2],
            marks=pytest.mark.xfail(
                strict=True,
                reason="26 of 35: this run's GEMM sweep ran its products in FP32 (49 TFLOP/s "
                "at best) against a 410 TFLOP/s peak in TF32, so every prediction that reads it "
                "misses; to be recorded again (docs/changes.toml, precision of the ceilings)",
            ),
        ),
    ],
)
def test_nine_in_ten_numeric_claims_measure_within_twice_their_prediction(name: str) -> None:
    within, numbers = share_within(rejudged(name))
    assert within >= 0.9 * numbers
