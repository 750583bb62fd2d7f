"""Prose generated from a run is true for that run (issue 38): each sentence that states a
relation between two of the run's numbers is checked against those numbers, on every recorded
run and on runs made to contradict it."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from gpuconcepts.render.pages.claims import dlrm_table
from gpuconcepts.run import Run, load_all

RUNS = load_all(Path(__file__).parents[1] / "docs" / "runs")
MiB = 2**20


def with_cache(run: Run, table_mib: int, cache_bytes: int) -> Run:
    sizes = {**run.provenance.sizes, "claims": {"dlrm_table_mib": table_mib}}
    return replace(run, provenance=replace(run.provenance, cache_bytes=cache_bytes, sizes=sizes))


def check_dlrm_sentence(run: Run) -> None:
    text = dlrm_table(run)["dlrm_table"]
    table = run.provenance.sizes["claims"]["dlrm_table_mib"] * MiB
    ratio = table / run.provenance.cache_bytes
    times = re.search(r", ([\d.,]+) times the ", text)
    if ratio >= 2:
        assert times is not None, text
        assert float(times.group(1).replace(",", "")) == pytest.approx(ratio, rel=0.05)
    elif ratio > 1:
        assert "a little larger than the" in text
    else:
        assert "no larger than the" in text
        assert "times the" not in text


@pytest.mark.parametrize("run", RUNS, ids=[r.label for r in RUNS])
def test_the_dlrm_table_sentence_of_every_recorded_run(run: Run) -> None:
    check_dlrm_sentence(run)


@pytest.mark.parametrize(
    ("table_mib", "cache_mib", "words"),
    [
        (256, 64, "4 times the"),
        (256, 200, "a little larger than the"),
        # a sysfs L3 of 480 MiB against the quick run's 256 MiB table: no "well above" now
        (256, 480, "no larger than the"),
    ],
)
def test_the_dlrm_table_sentence_follows_the_run(
    run: Run, table_mib: int, cache_mib: int, words: str
) -> None:
    made = with_cache(run, table_mib, cache_mib * MiB)
    assert words in dlrm_table(made)["dlrm_table"]
    check_dlrm_sentence(made)
