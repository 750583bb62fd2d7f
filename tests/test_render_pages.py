"""What the book's pages compute (gpuconcepts.render.pages), checked against the recorded run
and against runs made to take each branch."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from gpuconcepts import formulas, units
from gpuconcepts.book import chapter, claim_measurement
from gpuconcepts.claims.accuracy import flips
from gpuconcepts.hardware import GPUS
from gpuconcepts.render.pages import Math, claims, cnn, devices, execution, hardware, transformer
from gpuconcepts.render.text import preset_rows
from gpuconcepts.results.registry import anchor, ledger
from gpuconcepts.roofline import Peaks, gap_split, place
from gpuconcepts.run import Run, load

RECORDED = Path(__file__).resolve().parents[1] / "docs" / "runs" / "cpu-amd-epyc-float32.json"


@pytest.fixture(scope="module")
def recorded() -> Run:
    return load(RECORDED)


def test_limited_by_follows_classify_and_ties_to_compute() -> None:
    p = Peaks("cuda", 1e12, 1e10, "fp16")  # ridge 100 FLOP/byte
    assert hardware.limited_by(100 * 10**6, 10**6, p) == "FLOPs"  # at the ridge: compute
    assert hardware.limited_by(99 * 10**6, 10**6, p) == "bytes"
    assert hardware.limited_by(101 * 10**6, 10**6, p) == "FLOPs"


def test_small_layers_against_the_floors(recorded: Run) -> None:
    glue = hardware.small_layers(recorded, [])
    floor = recorded.peaks.latency_seconds
    assert floor is not None
    # issue 37: a CPU's floor is never set beside the GPUs' roofline times
    assert glue["build_floor"].startswith("The machine that built this book, ")
    assert "has no GPU" in glue["build_floor"]
    assert units.si(floor, "s") in glue["build_floor"]
    assert "times the longest" not in glue["build_floor"]
    assert glue["small_verdict"].startswith("With no GPU floor measured")
    assert "No run on a GPU is recorded" in glue["gpu_floors"]
    # a GPU floor shorter than every roofline time: bandwidth still sets the time
    fast = hardware.small_layers(recorded, [("cuda (NVIDIA H200)", 1e-12)])
    assert fast["gpu_floors"].startswith("On a GPU the floor includes launching")
    assert fast["small_verdict"].startswith("A measured GPU floor is shorter")
    no_floor = dataclasses.replace(
        recorded, peaks=dataclasses.replace(recorded.peaks, latency_seconds=None)
    )
    glue = hardware.small_layers(no_floor, [])
    assert glue["build_floor"].endswith("measured no latency floor.")
    assert glue["small_verdict"].startswith("With no GPU floor measured")
    assert glue["small_table"].count("\n") == 1 + len(
        [g for g in GPUS.values() if g.peak("fp16") is not None]
    )


def test_exercises_answer_from_the_datasheet() -> None:
    glue = hardware.exercises()
    ridge = GPUS["H200"].ridge_point("fp16")
    first = formulas.mlp_intensity.reaches(ridge, "B", **hardware.Q12_SHAPE, s=2)
    assert glue["ex_h200_answer"] == (
        "Never" if first is None else f"From a batch of {units.plain_number(first)}"
    )
    assert glue["ex_h200_ridge"] == units.significant(GPUS["H200"].ridge_point("fp16"))
    assert isinstance(hardware.ceiling()["q12_limit_eq"], Math)


def test_transformer_measured_parts(recorded: Run) -> None:
    *sweep, causal, m = chapter(recorded, "transformer")
    glue = transformer.prefill(recorded, sweep, causal)
    assert glue["S_first"] == units.plain_number(sweep[0].size("S"))
    assert glue["flop_ratio"] == units.how_many(sweep[-1].flops / sweep[0].flops)
    decode = transformer.decode(recorded, sweep, m)
    assert decode["cache_match"] == "equals"  # the measured cache is the formula's
    assert decode["decode_bound"] == place(m, recorded.peaks).bound
    assert decode["steps"] == units.plain_number(len(m.series["lengths"]))


def test_attention_example_refuses_rows_that_do_not_sum_to_one() -> None:
    tokens = ["The", "cat", "sat", "on", "mat"]
    scores = [[0.2] * 5 for _ in tokens]
    glue = transformer.attention_example(tokens, scores)
    assert glue["top_cat"] == "“The” and “sat” and “on” and “mat” equally"
    assert glue["n_scores"] == "25"
    scores[2] = [0.2, 0.2, 0.2, 0.2, 0.3]
    with pytest.raises(ValueError, match=r"row 3 sums to 1\.1; each row of attention weights"):
        transformer.attention_example(tokens, scores)


def test_cnn_gap_split(recorded: Run) -> None:
    dense, depthwise = chapter(recorded, "cnn")
    glue = cnn.measured(recorded, [dense, depthwise])
    assert glue["rate_ratio"] == units.how_many(dense.flops_per_s / depthwise.flops_per_s)
    split = gap_split(dense, depthwise, recorded.peaks)
    assert glue["split_roof"] == units.how_many(split.roofline)
    reuse_more = split.roofline > 1.1 * split.rest
    assert glue["split_verdict"].startswith("Reuse accounts for more") == reuse_more
    assert (glue["above_roof"] == "") == (split.fast_attained <= 1)
    assert cnn.edge_hits([[1, 2]] * 2, (5, 7))["hits"] == "(1, 2) and (1, 2)"


def test_claims_page_glues_each_claim(recorded: Run) -> None:
    glue = claims.each_claim(recorded)
    assert {k for k in glue if not k.startswith("fig-")} == {r.key for r in recorded.claims}
    # it draws the figures the page shows, and only those (each costs the build a draw)
    page = (RECORDED.parents[1] / "claims.md").read_text()
    shown = set(re.findall(r"\{glue:figure\} (fig-[\w-]+)", page)) - {"fig-roofline-claims"}
    assert {k for k in glue if k.startswith("fig-")} == shown
    summary = claims.summary(recorded, [recorded])
    # the post's claims only: the facts and the model's own predictions are not tallied
    post = [r for r in recorded.claims if ledger(r.key) == "post"]
    assert summary["n_claims"] == str(len(post)) == str(sum(recorded.counts.values()))
    assert len(post) < len(recorded.claims)
    glue = claims.ledgers(recorded, [recorded])
    assert glue["n_post"] == str(len(post))
    # a run judged again lists each flip; one with no saved verdict changed says so
    found = flips(recorded)
    rows = glue["flips_table"].splitlines()[2:]
    assert len(rows) == 2 * len(found)  # once as this machine's run, once as a recorded one
    said = {r.key: r.claim for r in (*recorded.saved_claims, *recorded.claims)}
    assert all(  # each claim in words, linked to its place in the book, never by its key
        f"{{ref}}`{said[flip.key]} <{anchor(flip.key)}>` | {flip.stored} → {flip.now} |"
        in glue["flips_table"]
        for flip in found
    )
    if not found:
        assert glue["flips_table"].startswith("No verdict of a recorded run changed")
    kv = next(r for r in recorded.claims if r.key == "kv-cache-exact")
    assert (
        f"| {{ref}}`{kv.claim} <claim-kv-cache-exact>` | an exact check (a fact) |"
        in glue["tests_table"]
    )
    assert "`kv-cache-exact`" not in glue["tests_table"]
    assert glue["accuracy_table"].splitlines()[2].startswith("| This machine (live) | ")
    assert summary["recorded_runs"] == f"* {recorded.provenance.summary}"
    assert claims.summary(recorded, [])["recorded_runs"] == "* none yet"
    behind = [claim_measurement(recorded, r) for r in claims.roofline_claims(recorded)]
    assert claims.rooflines(recorded, behind)["roofline_table"].startswith("|")


def test_devices_side_by_side(recorded: Run) -> None:
    glue = devices.side_by_side([recorded, recorded])
    assert glue["n_runs"] == "2"
    assert glue["ridge_spread"] == "1"
    assert glue["machines"].splitlines()[2].startswith("| This machine (live) |")
    # one row per workload, each run's first measurement of it with its sizes in the cell
    workloads = list(dict.fromkeys(m.workload for m in recorded.measurements))
    rows = glue["workloads"].splitlines()[2:]
    assert [row.split("|")[1].strip() for row in rows] == [f"`{w}`" for w in workloads]
    first = recorded.measurements[0]
    assert rows[0].count(f"<small>{preset_rows([recorded])[0]['runs'][0]['sizes']}</small>") == 2
    assert f"{units.si(first.seconds, 's')} ± " in rows[0]
    # issue 37: claims are named in words, not by their registry slugs
    claims = glue["claims"].splitlines()[2:]
    assert [row.split("|")[1].strip() for row in claims] == [r.claim for r in recorded.claims]
    assert not any(f"`{r.key}`" in glue["claims"] for r in recorded.claims)


def test_execution_table_names_the_hash() -> None:
    table = execution.machine_table("cpu", "0123abcd")
    assert "| hash of the executed sources (cache key) | `0123abcd` |" in table
    assert table.count("\n") == 1 + 5 + len(execution.PACKAGES)
