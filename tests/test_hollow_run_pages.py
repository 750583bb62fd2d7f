"""The pages this round touched render a run that decided nothing: every claim "not visible" or
"undecided", its measured values missing (a busy or cut-short build must still give a book)."""

from __future__ import annotations

import math
import re
from dataclasses import replace
from pathlib import Path

from gpuconcepts.book import recorded_runs
from gpuconcepts.claims.accuracy import AccuracyRow
from gpuconcepts.render.pages import claims as page
from gpuconcepts.render.pages.scored import run_table
from gpuconcepts.results.claim import ClaimResult
from gpuconcepts.run import Run

DOCS = Path(__file__).resolve().parents[1] / "docs"


def _hollow(result: ClaimResult, index: int) -> ClaimResult:
    """``result`` unmeasured: no value, no interval, no stored values; every other claim also
    not visible, the rest left to their region (undecided, as nothing lies inside it)."""
    test = replace(result.test, measured=math.nan, interval=(math.nan, math.nan))
    return replace(result, test=test, values={}, visible=index % 2 == 0, anomalies=())


def _hollow_run() -> Run:
    run = recorded_runs(DOCS)[0]
    claims = tuple(_hollow(r, i) for i, r in enumerate(run.claims))
    return replace(run, claims=claims, stored_claims=claims)


def test_a_run_that_decided_nothing_renders_its_claims_tables() -> None:
    run = _hollow_run()
    assert {r.verdict for r in run.claims} == {"not visible", "undecided"}
    glue = {**page.summary(run, []), **page.ledgers(run, [])}
    for name in ("summary", "summary_apart", "tally"):
        text = str(glue[name])
        assert not re.search(r"\b(nan|inf)\b", text), (name, text)
    assert "| undecided |" in glue["summary"]
    assert "| not visible |" in glue["summary"]
    assert "14 hold" not in glue["tally"]  # the tally counts this run, not the recorded one


def test_a_kernel_row_with_nothing_measured_renders_with_dashes() -> None:
    nan = math.nan
    row = AccuracyRow("mlp at B=4", nan, nan, nan, (nan, nan), "memory", "abc", "out")
    table = run_table("an empty run", [row])
    assert not re.search(r"\b(nan|inf)\b", table)
    assert "| mlp at B=4 | — | — [—, —] | — [—, —] | memory |" in table
