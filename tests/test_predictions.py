"""The two ledgers' rules (issues 36 and 45): a pass region built around a prediction lies
within [p/2, 2p] of it and leaves the alternative out; the post's claims are tested as stated
(a bound by its roof, a direction by a fixed effect, an exponent by its tolerance), facts and
the model's own predictions stay out of the tally; ledger 2 scores each kernel against the
post's model, in or out of sample by the model's version. No test pins a count of passes: a
count is measured and reported, never asserted."""

from __future__ import annotations

import dataclasses
import math
from functools import cache
from pathlib import Path

import pytest

from gpuconcepts.claims import judge
from gpuconcepts.claims.accuracy import accuracy, flips, sample_of, summary, within
from gpuconcepts.claims.predict import (
    numeric,
    prediction_region,
    region_within,
    share_within,
    within_prediction,
)
from gpuconcepts.claims.thresholds import PREDICTION_FACTOR
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.measure import Measurement
from gpuconcepts.results.claim import ClaimResult, example
from gpuconcepts.results.ledger import in_ledger, tally
from gpuconcepts.results.registry import CLAIMS
from gpuconcepts.results.twosided import TwoSided
from gpuconcepts.roofline import Peaks
from gpuconcepts.roofline.version import model_version
from gpuconcepts.run import Provenance, Run, load

RUNS = Path(__file__).resolve().parent.parent / "docs" / "runs"
RECORDED = sorted(path.name for path in RUNS.glob("*.json"))


@cache
def rejudged(name: str) -> tuple[ClaimResult, ...]:
    """A recorded run's claims, judged again with the current code."""
    return judge.rejudged(load(RUNS / name))


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
    assert within_prediction(example(4.0)) is True  # measured ÷ predicted 0.5: the edge
    zero = TwoSided("error", 0.0, "half", 0.5, 0.0, 0.0, 0.0, (0.0, 0.0))
    assert not numeric(zero)  # an exact check predicting 0 has no ratio
    assert share_within([example(8.0), example(30.0), example(1.0)]) == (1, 3)


# -- the registry's labels ---------------------------------------------------------------------
def test_the_post_claims_facts_and_the_model_s_own_are_apart() -> None:
    model = [key for key, claim in CLAIMS.items() if claim.tests == "model"]
    # the post says nothing of a backward pass, a decode floor, sharded lookups or pipelines:
    # those claims are the book's own, never tallied as the post's
    assert model == [
        "mlp-crossover",
        "backward-pass",
        "decode-knee",
        "decode-floor",
        "decode-long-context",
        "tablewise-columnwise-same-exchange",
        "alpha-beta-predicts",
        "pipeline-bubble",
        "pipeline-bubble-shrinks",
    ]
    post_keys = [key for key, claim in CLAIMS.items() if claim.ledger == "post"]
    assert all(CLAIMS[key].kind == "core" for key in post_keys)  # the post covers five kernels
    bound = {key for key, claim in CLAIMS.items() if claim.tests == "bound"}
    assert {key for key in CLAIMS if key.startswith("roofline-")} <= bound
    claims = rejudged(RECORDED[0])
    post, facts, own = (in_ledger(claims, which) for which in ("post", "fact", "model"))
    assert len(post) + len(facts) + len(own) == len(claims)
    assert sum(tally(claims).values()) == len(post)  # facts and the model's are not tallied
    assert {r.key for r in own} == set(model)


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
def test_every_predicted_number_s_region_lies_within_twice_it(name: str) -> None:
    wide = []
    for result in rejudged(name):
        tests = CLAIMS[result.key].tests
        if tests not in ("prediction", "model") or not numeric(result.test):
            continue  # a bound, a direction or an exponent has a rule of its own
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


# -- ledger 2: the rules, never a count ------------------------------------------------------
def _run(seconds: float, version: str) -> Run:
    """A made-up run of one MLP layer whose DRAM roof is 1 µs, measured at ``seconds``."""
    m = Measurement(
        "mlp",
        "cpu",
        {"B": 4, "d_in": 8, "d_out": 16, "s": 4, "dtype": "float32"},
        (seconds, seconds, seconds),
        1024,
        896,
    )
    provenance = dataclasses.replace(Provenance.example(), model_version=version)
    return Run(provenance, Peaks("cpu", 1e12, 896e6, "float32"), (m,), {}, ())


def test_a_kernel_at_three_times_its_prediction_is_not_within_twice() -> None:
    (row,) = accuracy(_run(3e-6, model_version()))
    assert math.isclose(row.ratio, 3.0)
    assert row.bound == "memory"
    assert not within(row)
    (row,) = accuracy(_run(1.5e-6, model_version()))
    assert within(row)
    found = summary(accuracy(_run(3e-6, model_version())))
    assert found.share_within == 0.0
    assert math.isclose(found.median_abs_log2, math.log2(3))
    assert math.isclose(found.worst_ratio, 3.0)


def test_sample_is_out_for_this_model_version_and_in_for_an_older_one() -> None:
    assert sample_of(_run(1e-6, model_version())) == "out"
    assert sample_of(_run(1e-6, "")) == "in"  # recorded before versions were kept
    assert {row.sample for row in accuracy(_run(1e-6, "0123456789abcdef"))} == {"in"}
    for name in RECORDED:  # every recorded run predates the version: in sample
        assert sample_of(load(RUNS / name)) == "in"


def test_a_flip_is_listed_with_its_stored_and_current_verdicts() -> None:
    held, failed = example(4.0), example(1.5)
    run = dataclasses.replace(_run(1e-6, ""), claims=(failed,), stored_claims=(held,))
    (flip,) = flips(run)
    assert (flip.key, flip.stored, flip.now) == ("demo", "holds", "fails")
    assert flips(dataclasses.replace(run, stored_claims=None)) == ()


def test_a_recorded_run_judged_again_keeps_its_saved_verdicts() -> None:
    run = load(RUNS / RECORDED[2])
    now = judge.judged_now(run)
    assert now.saved_claims == run.claims
    assert now.claims == judge.rejudged(run)
    assert {f.key for f in flips(now)} == {
        r.key for r, s in zip(now.claims, run.claims, strict=True) if r.verdict != s.verdict
    }
