"""Every recorded run read through the one migration map (issue 45, item 4): what a stored
run's shape lacks, or holds from a retired rule, is settled there, once, by its schema version
(by its date only where the schema cannot tell), so that no judge or page keeps a branch for
an old run. Never by rewriting docs/runs/*.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuconcepts.claims.accuracy import gemm_sweep_dtype
from gpuconcepts.results.wholemodel import BATCH_1_PRODUCT
from gpuconcepts.run import SCHEMA, Run, load
from gpuconcepts.run.run import MIGRATIONS

RUNS = Path(__file__).resolve().parents[1] / "docs" / "runs"
RECORDED = sorted(RUNS.glob("*.json"))


@pytest.mark.parametrize("path", RECORDED, ids=[p.name for p in RECORDED])
def test_every_recorded_run_reaches_this_schema_through_the_map(path: Path) -> None:
    data = json.loads(path.read_text())
    assert data["schema"] < SCHEMA  # recorded before the last migration: it is exercised
    while data["schema"] in MIGRATIONS:
        data = MIGRATIONS[data["schema"]](data)
    assert data["schema"] == SCHEMA
    run = load(path)
    raw = json.loads(path.read_text())
    if run.peaks.device == "cpu":  # drawn by the retired rule (nominal clock, any AVX-512)
        assert raw["peaks"]["physical_flops_per_s"] is not None
        assert run.peaks.physical_flops_per_s is None
    else:  # a GPU's is its datasheet's, kept
        assert run.peaks.physical_flops_per_s == raw["peaks"]["physical_flops_per_s"]
    # the precision its GEMM sweep ran in is in the run once it is read, never guessed later
    assert "gemm_sweep_dtype" not in raw["provenance"]["sizes"]
    assert run.provenance.sizes["gemm_sweep_dtype"] == gemm_sweep_dtype(run)
    # its decode sweeps read their weights' floor from a batch-1 product (schema 7 names it)
    assert "reference_kernel" not in raw["wholemodel"]["decode"]
    assert run.wholemodel is not None
    assert run.wholemodel.decode.reference_kernel == BATCH_1_PRODUCT


def test_the_recorded_runs_sweeps_ran_in_these_precisions() -> None:
    found = {p.name: gemm_sweep_dtype(load(p)) for p in RECORDED}
    assert found == {
        "cpu-amd-epyc-float32.json": "float32",
        "nvidia-h200-bfloat16.json": "bfloat16",
        "nvidia-h200-tf32.json": "float32",  # before the ceilings ran in the run's precision
    }


def _cpu_file(schema: int, limit: float) -> dict[str, object]:
    """The recorded CPU run's file at ``schema`` with a physical limit of ``limit``."""
    data = json.loads((RUNS / "cpu-amd-epyc-float32.json").read_text())
    while data["schema"] < schema:
        data = MIGRATIONS[data["schema"]](data)
    data["peaks"]["physical_flops_per_s"] = limit
    return data


def test_a_cpu_limit_stored_before_schema_6_is_dropped_and_one_stored_since_is_kept() -> None:
    assert Run.from_dict(_cpu_file(5, 3.3e11)).peaks.physical_flops_per_s is None
    assert Run.from_dict(_cpu_file(6, 3.3e11)).peaks.physical_flops_per_s == 3.3e11


def test_a_distributed_part_stored_before_schema_8_reads_as_one_block() -> None:
    from gpuconcepts.claims.distributed import judge_distributed

    data = json.loads((RUNS / "cpu-amd-epyc-float32.json").read_text())
    while data["schema"] < 7:
        data = MIGRATIONS[data["schema"]](data)
    stored = data["distributed"]
    assert "timed_blocks" not in stored["sizes"]
    assert all("blocks" not in c for c in stored["collectives"])
    migrated = MIGRATIONS[7](data)
    assert migrated["schema"] == 8
    assert migrated["distributed"]["sizes"]["timed_blocks"] == 1
    assert {c["blocks"] for c in migrated["distributed"]["collectives"]} == {1}
    report = Run.from_dict(data).distributed
    assert report is not None
    assert report.sizes.timed_blocks == 1
    assert {c.blocks for c in report.collectives} == {1}
    # judged again: the timed claims read their one block as before and say so
    by_key = {r.key: r for r in judge_distributed(report)}
    one_block = "timed in one block: its interval misses the variation from moment to moment"
    for key in ("pipeline-bubble", "tablewise-columnwise-same-exchange", "alpha-beta-predicts"):
        assert one_block in by_key[key].detail, key
