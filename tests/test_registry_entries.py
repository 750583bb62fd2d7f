"""Each registry entry names its thresholds and its page, and the page marks it (issue 45, item 9).

The thresholds stay defined once, in :mod:`gpuconcepts.claims.thresholds`; an entry names the
ones its verdict is compared with, and these tests check that each name is defined there and is
read by the code that judges the claim. The page's anchor is checked in the Markdown here, and
in the built site by ``tests/site/test_claim_anchors.py``.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from dataclasses import replace
from pathlib import Path

import pytest

from gpuconcepts.claims import thresholds
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.results.registry import CLAIMS, Claim, anchor, dispatch

DOCS = Path(__file__).resolve().parents[1] / "docs"

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


def test_every_claim_is_marked_on_its_page() -> None:
    for key, claim in CLAIMS.items():
        page = DOCS / claim.page
        assert page.is_file(), f"{key}: no page {claim.page}"
        labels = re.findall(r"^\(([^)]+)\)=$", page.read_text(encoding="utf-8"), re.MULTILINE)
        assert anchor(key) in labels, f"{key}: {claim.page} has no label ({anchor(key)})="


# -- judging loops over the entries --------------------------------------------------------------
def test_every_part_claim_names_a_part_experiment_of_its_kind() -> None:
    from gpuconcepts.claims.plan import PartExperiment

    for kind, module in (("whole model", "wholemodel"), ("distributed", "distributed")):
        pairs = dispatch(kind)
        keys = [key for key, claim in CLAIMS.items() if claim.kind == kind]
        assert len(pairs) == len(
            dict.fromkeys((CLAIMS[k].judge, CLAIMS[k].experiment) for k in keys)
        )
        for key in keys:
            assert (CLAIMS[key].experiment or "").startswith(f"gpuconcepts.claims.{module}:"), key
        assert all(isinstance(experiment, PartExperiment) for _, experiment in pairs)


def test_a_part_judges_what_its_registry_entries_name(monkeypatch: pytest.MonkeyPatch) -> None:
    """Dropping an entry drops its verdict, and moving one moves it: no judge is called by
    name."""
    from synthetic import synthetic_run

    from gpuconcepts.claims.distributed import judge_distributed
    from gpuconcepts.claims.wholemodel import judge_wholemodel
    from gpuconcepts.results import registry

    run = synthetic_run()
    assert run.wholemodel is not None
    assert run.distributed is not None

    def whole() -> list[str]:
        assert run.wholemodel is not None
        found = judge_wholemodel(run.wholemodel, run.peaks, cache_bytes=2**20, device="cpu")
        return [r.key for r in found]

    keys = whole()
    assert keys == [k for k, c in CLAIMS.items() if c.kind == "whole model" and k in keys]
    assert "decode-floor" in keys
    entries = {k: c for k, c in CLAIMS.items() if k != "decode-floor"}
    entries["decode-floor"] = CLAIMS["decode-floor"]  # now the last entry
    monkeypatch.setattr(registry, "CLAIMS", entries)
    assert whole() == [*(k for k in keys if k != "decode-floor"), "decode-floor"]
    monkeypatch.setattr(
        registry, "CLAIMS", {k: c for k, c in CLAIMS.items() if c.kind != "distributed"}
    )
    assert judge_distributed(run.distributed) == ()


def test_an_entry_whose_experiment_is_not_a_part_experiment_is_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from gpuconcepts.claims.plan import judged_part
    from gpuconcepts.results import registry

    wrong = replace(CLAIMS["backward-pass"], experiment="gpuconcepts.claims.cnn:EXPERIMENT")
    monkeypatch.setattr(registry, "CLAIMS", {"backward-pass": wrong})
    with pytest.raises(GpuConceptsError, match=r"judge_backward name .*needs a PartExperiment"):
        judged_part("whole model", None)


def test_a_core_entry_whose_experiment_cannot_read_for_its_judge_is_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A core entry that names an experiment holding no reading for its judge (the MLP's trend
    through the CNN's experiment) stops judging with both named; one that names a part's
    experiment is refused as the parts refuse a core experiment."""
    from synthetic import PEAKS
    from test_claims import TINY

    from gpuconcepts.claims.experiments import judge_claims
    from gpuconcepts.results import registry
    from gpuconcepts.results.measured import Measured

    measured = Measured("cpu", PEAKS, ())
    wrong = replace(CLAIMS["mlp-batch-trend"], experiment="gpuconcepts.claims.cnn:EXPERIMENT")
    monkeypatch.setattr(registry, "CLAIMS", {"mlp-batch-trend": wrong})
    reads = "judge_weight_sharing, judge_conv_vs_depthwise, judge_roles"
    with pytest.raises(
        GpuConceptsError,
        match=rf"the CNN experiment has no reading for the judge "
        rf"gpuconcepts\.claims\.mlp:judge_mlp_trend \(it reads for {reads}\)",
    ):
        judge_claims(measured, TINY)
    part = replace(wrong, experiment="gpuconcepts.claims.wholemodel:BACKWARD")
    monkeypatch.setattr(registry, "CLAIMS", {"mlp-batch-trend": part})
    with pytest.raises(GpuConceptsError, match=r"judge_mlp_trend name .*needs an Experiment"):
        judge_claims(measured, TINY)


def test_the_core_claims_are_judged_through_their_registry_entries(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Judging calls the judge each core entry names, through its experiment's reading: a stub
    put in the trend's entry is called once, on the batch sweep the MLP's experiment read, and
    its verdict takes the entry's place; the two roofline entries that share the MLP's
    experiment are judged in one call, each once."""
    from synthetic import PEAKS, synthetic_lab
    from test_claims import TINY

    from gpuconcepts.claims import mlp
    from gpuconcepts.claims.experiments import judge_claims, measure_claims
    from gpuconcepts.measure import Measurement
    from gpuconcepts.results import registry
    from gpuconcepts.results.claim import ClaimResult, example
    from gpuconcepts.roofline import Peaks

    measured = measure_claims(synthetic_lab(PEAKS, "synthetic"), TINY, only=["MLP"])
    seen = []

    def stub(sweep: tuple[Measurement, ...], *, peaks: Peaks, device: str) -> ClaimResult:
        seen.append((tuple(m.params["B"] for m in sweep), peaks, device))
        return example()

    monkeypatch.setattr(mlp, "stub_judge", stub, raising=False)
    entry = replace(CLAIMS["mlp-batch-trend"], judge="gpuconcepts.claims.mlp:stub_judge")
    monkeypatch.setitem(registry.CLAIMS, "mlp-batch-trend", entry)
    readings = mlp.EXPERIMENT.readings
    monkeypatch.setitem(readings, stub, readings[mlp.judge_mlp_trend])  # type: ignore[index]
    keys = [r.key for r in judge_claims(measured, TINY, only=["MLP"])]
    assert keys == ["demo", "mlp-crossover", "roofline-mlp-small-batch", "roofline-mlp-large-batch"]
    assert seen == [(TINY.mlp_batches, PEAKS, "synthetic")]
