"""Each registry entry names its thresholds and its page, and the page marks it (issue 45, item 9).

The thresholds stay defined once, in :mod:`gpuconcepts.claims.thresholds`; an entry names the
ones its verdict is compared with, and these tests check that each name is defined there and is
read by the code that judges the claim.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re

import pytest

from gpuconcepts.claims import thresholds
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.results.registry import CLAIMS, Claim, anchor

RUN_WIDE = {"INTERVAL_COVERAGE", "INTERVAL_RESAMPLES", "MIN_BLOCKS", "WRONG_VERDICT_RATE"}
"""The thresholds that set how every interval is drawn, so that no one claim names them."""


def _sources(module_name: str) -> str:
    """The source of a claims module and of every claims module it imports from."""
    module = importlib.import_module(module_name)
    text = inspect.getsource(module)
    imported = [
        node.module
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.ImportFrom)
        and (node.module or "").startswith("gpuconcepts.claims.")
    ]
    found = [text, *(inspect.getsource(importlib.import_module(name)) for name in imported if name)]
    return "\n".join(found)


def test_each_threshold_is_defined_once_in_the_thresholds_module() -> None:
    for key, claim in CLAIMS.items():
        values = claim.threshold_values()
        assert list(values) == list(claim.thresholds), key
        assert values == {name: float(getattr(thresholds, name)) for name in claim.thresholds}


def test_known_values_are_reachable_from_the_entry() -> None:
    assert CLAIMS["attention-quadratic"].threshold_values() == {
        "ATTENTION_EXPONENT": 2.0,
        "ATTENTION_EXPONENT_TOLERANCE": 0.3,
    }
    assert CLAIMS["traffic-pipeline"].threshold_values() == {"BYTES_LOW": 0.98, "BYTES_HIGH": 1.15}
    assert CLAIMS["cnn-weight-sharing"].threshold_values() == {}  # an exact count


def test_each_named_threshold_is_read_by_the_claims_judge() -> None:
    for key, claim in CLAIMS.items():
        text = _sources(claim.judge.split(":")[0])
        for name in claim.thresholds:
            assert re.search(rf"\b{name}\b", text), f"{key}: its judge never reads {name}"


def test_every_threshold_belongs_to_a_claim_or_to_every_interval() -> None:
    named = {name for claim in CLAIMS.values() for name in claim.thresholds}
    defined = {name for name, _, _ in thresholds.described()}
    assert defined - named == RUN_WIDE
    assert named <= defined


def test_an_unknown_threshold_is_named_in_the_error() -> None:
    claim = Claim(
        "gpuconcepts.claims.cnn:judge_weight_sharing", "cnn", "core", "fact", None, ("NOPE",)
    )
    with pytest.raises(GpuConceptsError, match=r"'NOPE'.*gpuconcepts\.claims\.thresholds"):
        claim.threshold_values()


def test_an_anchor_is_lower_case_and_only_for_a_registered_claim() -> None:
    assert anchor("rnn-linear-in-S") == "claim-rnn-linear-in-s"
    with pytest.raises(GpuConceptsError, match="'no-such-claim' is not registered"):
        anchor("no-such-claim")
    assert len({anchor(key) for key in CLAIMS}) == len(CLAIMS)

