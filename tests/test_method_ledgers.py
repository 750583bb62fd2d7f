"""The method page and the claims appendix state ledger 2's accuracy in and out of sample,
which runs each day's changes could have seen, every flip, and run-to-run variation only
where two runs of one machine exist (issue 45, item 10), from computed values."""

from __future__ import annotations

import dataclasses
import math
import statistics
from functools import cache

from book_pages import DOCS

from gpuconcepts import units
from gpuconcepts.book import recorded_runs
from gpuconcepts.changelog import load_changes
from gpuconcepts.claims.accuracy import accuracy, sample_of, within
from gpuconcepts.render.pages import claims, method
from gpuconcepts.run import Run


@cache
def _runs() -> tuple[Run, ...]:
    return tuple(recorded_runs(DOCS))


def _glue() -> dict[str, object]:
    return method.ledgers(list(_runs()), load_changes(DOCS / "changes.toml"))


def test_each_change_day_lists_the_runs_recorded_by_then() -> None:
    changes = load_changes(DOCS / "changes.toml")
    table = str(_glue()["changes_after"])
    rows = {line.split(" | ")[0].strip("| "): line for line in table.splitlines()[2:]}
    assert set(rows) == {c.date.isoformat() for c in changes}
    for day, row in rows.items():
        for run in _runs():
            seen = run.provenance.created_utc[:10] <= day
            assert (run.label in row) == seen, (day, run.label)
    for change in changes:  # every topic on its day
        assert change.topic in rows[change.date.isoformat()]


def test_ledger_2_is_pooled_in_and_out_of_sample_from_every_rows_ratio() -> None:
    table = str(_glue()["sample_table"])
    for sample, words in (("in", "in sample"), ("out", "out of sample")):
        rows = [r for run in _runs() if sample_of(run) == sample for r in accuracy(run)]
        judged = [r for r in rows if not r.not_judged]
        line = next(x for x in table.splitlines() if x.startswith(f"| {words} |"))
        if not judged:
            assert line.count(units.NOTHING) >= 3
            continue
        share = sum(within(r) for r in judged) / len(judged)
        median = statistics.median(abs(math.log2(r.ratio)) for r in judged)
        assert f"| {len(judged)} | {units.percent(share)} | {units.number(median)} |" in line
    # the claims appendix shows the same table, from the same function
    assert claims.ledgers(_runs()[0], list(_runs()[1:]))["sample_table"] == claims.sample_table(
        list(_runs())
    )


def test_the_method_page_lists_the_same_flips_as_the_claims_appendix() -> None:
    glue = _glue()
    named = [(run.label, run) for run in _runs()]
    assert glue["flips_table"] == claims.flips_table(claims.flip_rows(named))
    assert glue["n_flips"] == str(len(claims.flip_rows(named)))
    assert int(str(glue["n_flips"])) >= 1, "the recorded runs hold flips"


def test_run_to_run_variation_is_read_from_two_runs_of_one_machine() -> None:
    assert "cannot yet show" in method.run_to_run(list(_runs()))
    run = _runs()[0]
    again = dataclasses.replace(
        run,
        measurements=tuple(
            dataclasses.replace(m, raw_seconds=tuple(2 * t for t in m.raw_seconds))
            for m in run.measurements
        ),
    )
    said = method.run_to_run([run, again])
    assert "median factor of 2×" in said
    assert "at most 2×" in said


def test_the_method_page_says_the_blocks_hold_one_runs_variation_only() -> None:
    text = " ".join((DOCS / "method.md").read_text(encoding="utf-8").split())
    assert "holds the variation within that run only" in text
    for name in ("sample_table", "changes_after", "flips_table", "run_to_run"):
        assert f"{{glue:md}}`{name}`" in text or f"{{glue:md}} {name}" in text
