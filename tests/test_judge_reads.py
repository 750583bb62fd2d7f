"""One path for a measured time (issue 47, item 6): the Lab measures what the registry says each
claim needs, and every judge reads measurements (:class:`~gpuconcepts.results.measured.Measured`),
the same lookup whether the run was measured now or loaded from disk; nothing replays a run."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest
from synthetic import PEAKS, synthetic_lab
from test_claims import TINY

from gpuconcepts.claims.experiments import judge_claims, measure_claims
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.measure import Measurement
from gpuconcepts.results.measured import Measured
from gpuconcepts.results.registry import CLAIMS, judge

CLAIMS_DIR = Path(__file__).resolve().parents[1] / "src" / "gpuconcepts" / "claims"


def _mlp(B: int, seconds: float, group: str = "") -> Measurement:
    sizes = {"B": B, "d_in": 8, "d_out": 8, "s": 4, "dtype": "float32"}
    return Measurement("mlp", "cpu", sizes, (seconds,) * 3, 512.0 * B, 256.0, group=group)


def test_no_judge_reaches_the_lab() -> None:
    """Only the step that measures the claims' experiments (experiments.measure_claims) names
    the Lab; every other module of the claims package reads measurements."""
    reaching = [
        path.name
        for path in sorted(CLAIMS_DIR.glob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ImportFrom) and node.module == "gpuconcepts.lab"
    ]
    assert reaching == ["experiments.py"]


def test_a_comparison_reads_its_fixed_rounds_never_its_second_look_else_each_kernel() -> None:
    first = (_mlp(1, 1e-6, "mlp-1"), _mlp(2, 2e-6, "mlp-1"))
    again = (_mlp(1, 3e-6, "mlp-1-again"), _mlp(2, 4e-6, "mlp-1-again"))
    alone = _mlp(4, 5e-6)
    measured = Measured("cpu", PEAKS, (*first, *again, alone))
    wanted = [("mlp", {"B": 1}), ("mlp", {"B": 2})]
    assert measured.compared(wanted) == first  # measured once more: the first rounds stand
    assert measured.second_look(wanted) == again  # shown beside the verdict
    assert measured.second_look([("mlp", {"B": 2}), ("mlp", {"B": 4})]) == ()
    assert measured.compared([("mlp", {"B": 2}), ("mlp", {"B": 4})]) == (first[1], alone)
    assert measured.time("mlp", B=1) is first[0]  # the first listed (a Lab lists the later first)
    with pytest.raises(GpuConceptsError, match="holds no mlp measurement at B=8, d_in=8"):
        measured.compared([("mlp", {"B": 1}), ("mlp", {"B": 8, "d_in": 8})])
    with pytest.raises(GpuConceptsError, match="holds no fact 'cnn-weights'"):
        measured.fact("cnn-weights")


def test_every_core_claim_names_the_experiment_that_judges_it() -> None:
    """The registry's experiment of each core claim measures what its judge reads and hands it
    in: the entry's judge, called through that experiment, gives the entry's verdict."""
    lab = synthetic_lab(PEAKS, "cpu (synthetic)")
    measured = measure_claims(lab, TINY)
    for key, claim in CLAIMS.items():
        if claim.kind != "core":  # a part's: tests/test_registry_entries checks its experiment
            continue
        assert claim.experiment is not None
        module, name = claim.experiment.split(":")
        experiment = getattr(importlib.import_module(module), name)
        found = experiment.judged(judge(key), measured, TINY)
        assert key in {r.key for r in found}, (key, experiment.name)


def test_judging_measures_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Judging a measured run again runs no kernel: the verdicts come from the measurements."""
    from gpuconcepts import kernels

    lab = synthetic_lab(PEAKS, "cpu (synthetic)")
    measured = measure_claims(lab, TINY)
    first = judge_claims(measured, TINY)

    def boom(*_: object, **__: object) -> object:
        raise AssertionError("a judge ran a kernel")

    monkeypatch.setattr(kernels, "KERNELS", dict.fromkeys(kernels.KERNELS, boom))
    assert judge_claims(lab.measured(), TINY) == first
    assert len(lab.measurements) == len(measured.measurements)  # nothing measured again
