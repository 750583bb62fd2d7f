"""The GPU chapter says what each recorded run's compute peak measured, from the day the run
was recorded against the change log's dates (gpu_tables.peak_definition), never typed per run."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from gpuconcepts.changelog import load_changes
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.render.pages import gpu_recorded, gpu_tables
from gpuconcepts.run import Run, load_all

DOCS = Path(__file__).resolve().parents[1] / "docs"
CHANGES = load_changes(DOCS / "changes.toml")
OLDEST, *_, NEWEST = (definition for _, definition in gpu_tables.PEAK_DEFINITIONS)


@pytest.fixture(scope="module")
def first() -> Run:
    found = gpu_recorded.gpu_runs(load_all(DOCS / "runs"))
    if not found:
        pytest.skip("no GPU run recorded in docs/runs/")
    return found[0]


def _recorded(run: Run, day: str) -> Run:
    provenance = dataclasses.replace(run.provenance, created_utc=f"{day}T12:00:00Z")
    return dataclasses.replace(run, provenance=provenance)


def test_every_definition_is_dated_in_the_change_log() -> None:
    topics = {c.topic for c in CHANGES}
    assert all(topic in topics for topic, _ in gpu_tables.PEAK_DEFINITIONS[1:])


def test_a_run_is_told_the_definition_of_its_day(first: Run) -> None:
    last = max(c.date for c in CHANGES if c.topic == gpu_tables.PEAK_DEFINITIONS[-1][0])
    assert gpu_tables.peak_definition(_recorded(first, "2026-01-01"), CHANGES) == OLDEST
    assert gpu_tables.peak_definition(_recorded(first, "2099-01-01"), CHANGES) == NEWEST
    assert gpu_tables.peak_definition(_recorded(first, last.isoformat()), CHANGES) == ""


def test_the_paragraph_says_an_older_definition_once(first: Run) -> None:
    old = _recorded(first, "2026-01-01")
    both = gpu_tables.peaks_paragraph([old, old], CHANGES)
    assert both.startswith(
        f"Both runs were recorded when the compute peak was {OLDEST}; it is now {NEWEST}. In "
    )
    assert both.count(OLDEST) == 1
    new = _recorded(first, "2099-01-01")
    mixed = gpu_tables.peaks_paragraph([old, new], CHANGES)
    assert mixed.startswith(
        f"The NVIDIA H200's {first.peaks.dtype} run was recorded when the compute peak was "
        f"{OLDEST}; it is now {NEWEST}. "
    )
    assert gpu_tables.peaks_paragraph([new], CHANGES) == gpu_tables.peaks_sentence(
        new, say_why=True
    )
    assert "convolution" not in gpu_tables.peaks_sentence(old)


def test_without_a_log_the_paragraph_names_no_definition(first: Run) -> None:
    assert "convolution" not in gpu_tables.peaks_paragraph([first], ())


def test_a_log_without_the_entry_is_refused(first: Run) -> None:
    with pytest.raises(GpuConceptsError, match="PEAK_DEFINITIONS"):
        gpu_tables.peak_definition(first, CHANGES[:1])
