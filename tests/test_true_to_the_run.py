"""Prose generated from a run is true for that run (issue 38): each sentence that states a
relation between two of the run's numbers is checked against those numbers, on every recorded
run and on runs made to contradict it."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from gpuconcepts.book import chapter
from gpuconcepts.claims.thresholds import RNN_MIN_LOOP_SLOWDOWN
from gpuconcepts.render.pages import dlrm as dlrm_page
from gpuconcepts.render.pages import rnn as rnn_page
from gpuconcepts.render.pages.claims import dlrm_table
from gpuconcepts.roofline import place
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


# -- the RNN chapter: the loop, nn.RNN and the GEMM, as each run measured them ----------------
def rnn_sentences(run: Run) -> tuple[dict[str, object], dict[str, object], list[float]]:
    runs = chapter(run, "rnn")
    module, loop, hoisted, gemm = runs
    seconds = [module.seconds, loop.seconds, hoisted.seconds, gemm.seconds]
    return rnn_page.measured(run, runs), rnn_page.module_vs_python(run, runs), seconds


def check_rnn_sentences(run: Run) -> None:
    measured, python, (module, loop, hoisted, gemm) = rnn_sentences(run)
    chain = str(measured["chain"])
    if loop <= gemm:
        assert "was not slower than the single product" in chain
    elif loop / gemm >= RNN_MIN_LOOP_SLOWDOWN:
        assert "That is the dependency chain" in chain
    else:
        assert "The loop was slower, but by less than" in chain
    gain = str(measured["hoisted_gain"])
    if loop / hoisted >= 1.1:
        assert gain.endswith("times faster than the naive loop"), gain
    elif loop / hoisted <= 1 / 1.1:
        assert gain.endswith("times slower than the naive loop"), gain
    else:
        assert gain == "about as fast as the naive loop"
    said = str(python["module_vs_python"])
    assert said.startswith("slower than" if module > loop else "not slower than"), said


@pytest.mark.parametrize("run", RUNS, ids=[r.label for r in RUNS])
def test_the_rnn_chapter_sentences_of_every_recorded_run(run: Run) -> None:
    check_rnn_sentences(run)


def with_times(run: Run, factors: dict[str, float]) -> Run:
    """``run`` with every repetition of the named workloads multiplied by its factor."""
    measurements = tuple(
        replace(m, raw_seconds=tuple(t * factors[m.workload] for t in m.raw_seconds))
        if m.workload in factors
        else m
        for m in run.measurements
    )
    return replace(run, measurements=measurements)


@pytest.mark.parametrize(
    ("factors", "words"),
    [
        ({"rnn-loop": 1e-3}, "was not slower than the single product"),  # the loop beat the GEMM
        ({"rnn-module": 1e3}, "slower than the Python loop"),
        ({"rnn-module": 1e-3}, "not slower than the Python loop"),
        ({"rnn-hoisted": 1e3}, "times slower than the naive loop"),
    ],
)
def test_the_rnn_chapter_sentences_follow_a_run_made_to_contradict_them(
    run: Run, factors: dict[str, float], words: str
) -> None:
    made = with_times(run, factors)
    measured, python, _ = rnn_sentences(made)
    assert words in " ".join(str(v) for v in (*measured.values(), *python.values()))
    check_rnn_sentences(made)


# -- the DLRM chapter: the hot rows, served by a cache only when they beat DRAM -----------------
def check_hot_rows(run: Run) -> None:
    runs = chapter(run, "dlrm")
    hot = next(m for m in runs if m.workload == "dlrm-hot")
    text = str(dlrm_page.hot_rows(run, runs)["hot_served"])
    caches = {level.name for level in run.peaks.levels}
    if place(hot, run.peaks).observed in caches:
        assert "its rows came from that cache" in text, text
    elif hot.bytes_per_s > run.peaks.bytes_per_s:
        assert "faster than DRAM can deliver" in text, text
    elif "came from the" in text:  # a level that holds the rows, but that the run never timed
        assert "the run measured no roof for" in text, text
    else:
        assert "came from" not in text, text
        assert "faster than DRAM" not in text, text


@pytest.mark.parametrize("run", RUNS, ids=[r.label for r in RUNS])
def test_the_hot_rows_sentence_of_every_recorded_run(run: Run) -> None:
    check_hot_rows(run)


def test_hot_rows_slowed_below_dram_are_not_said_to_come_from_a_cache(run: Run) -> None:
    slow = with_times(run, {"dlrm-hot": 1e3})
    check_hot_rows(slow)
    text = str(dlrm_page.hot_rows(slow, chapter(slow, "dlrm"))["hot_served"])
    assert "came from" not in text
