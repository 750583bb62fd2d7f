"""The appendix "The model scored, kernel by kernel" (issue 45, item 2): every kernel of every
run in one table per run, read from the rows ``gpuconcepts verify --json`` prints."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from gpuconcepts.book import recorded_runs
from gpuconcepts.claims.accuracy import AccuracyRow, accuracy
from gpuconcepts.render.pages import scored
from gpuconcepts.run import Run

DOCS = Path(__file__).resolve().parents[1] / "docs"


@pytest.fixture(scope="module")
def runs() -> list[Run]:
    found = recorded_runs(DOCS)
    if not found:
        pytest.skip("no run recorded in docs/runs/")
    return found


def test_every_kernel_of_every_run_has_its_row(runs: list[Run]) -> None:
    glue = scored.kernels(runs[0], runs[1:])
    text = glue["scored_runs"]
    assert text.count(":::{dropdown}") == len(runs)
    rows = [row for run in runs for row in accuracy(run)]
    assert glue["n_scored"] == f"{len(rows):,}"
    body = [line for line in text.splitlines() if line.startswith("| ") and "---" not in line]
    headers = [line for line in body if line.startswith("| Kernel |")]
    assert len(body) - len(headers) == len(rows)


def test_a_not_judged_row_says_why_and_a_miss_its_diagnosis() -> None:
    row = AccuracyRow("mlp at B=4", 1e-6, 3e-6, 3.0, (2.9, 3.1), "compute", "abc", "in")
    missed = dataclasses.replace(row, diagnosis="cold start", diagnosis_seconds=1.5e-6)
    unjudged = dataclasses.replace(row, not_judged="not judged: its GEMM sweep ran in float32")
    assert scored.note(missed) == "diagnosis: cold start, 1.5 µs (50% of its time)"
    assert scored.note(unjudged) == "not judged: its GEMM sweep ran in float32"
    assert scored.note(row) == ""


def test_the_stored_prediction_is_shown_only_where_a_run_stored_one() -> None:
    row = AccuracyRow("mlp at B=4", 1e-6, 3e-6, 3.0, (2.9, 3.1), "compute", "abc", "out")
    table = scored.run_table("run A", [row])
    if any(f.name == "stored_predicted_seconds" for f in dataclasses.fields(AccuracyRow)):
        stored = dataclasses.replace(row, stored_predicted_seconds=2e-6)  # ratio: 3 ÷ 2
        with_stored = scored.run_table("run A", [stored])
        assert all(column in with_stored for column in scored.STORED)
        assert "| 2 µs | 1.5× |" in with_stored
    assert not any(column in table for column in scored.STORED)
    assert scored.cells(row, stored=True)[5:7] == ["—", "—"]  # a row that stored none
