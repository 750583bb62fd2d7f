"""The GPU chapter (gpuconcepts.render.pages.gpu and its parts, gpu_*): every sentence comes
from the recorded runs.

The tests read the runs committed in docs/runs/ and change them (a claim's verdict, a kernel's
time) to check that the words follow the data: nothing here is typed from a run.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from gpuconcepts import units
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.hardware import lookup
from gpuconcepts.measure import Measurement
from gpuconcepts.render.pages import gpu, gpu_dtype, gpu_recorded, gpu_story, gpu_tables
from gpuconcepts.results.claim import example
from gpuconcepts.run import Run, load_all

RUNS = Path(__file__).resolve().parents[1] / "docs" / "runs"


@pytest.fixture(scope="module")
def runs() -> list[Run]:
    return load_all(RUNS)


@pytest.fixture(scope="module")
def first(runs: list[Run]) -> Run:
    found = gpu_recorded.gpu_runs(runs)
    if not found:
        pytest.skip("no GPU run recorded in docs/runs/")
    return found[0]


def _slower(run: Run, workload: str, factor: float) -> Run:
    """``run`` with every ``workload`` measurement ``factor`` times as slow."""
    measurements = tuple(
        dataclasses.replace(m, raw_seconds=tuple(t * factor for t in m.raw_seconds))
        if m.workload == workload
        else m
        for m in run.measurements
    )
    return dataclasses.replace(run, measurements=measurements)


def test_only_gpu_runs_are_told(runs: list[Run]) -> None:
    assert all(run.peaks.device == "cuda" for run in gpu_recorded.gpu_runs(runs))
    assert len(gpu_recorded.gpu_runs(runs)) == sum(run.peaks.device == "cuda" for run in runs)


def test_the_page_glues_every_name_it_uses(runs: list[Run], first: Run) -> None:
    glue = gpu.page(runs)
    text = (Path(__file__).resolve().parents[1] / "docs" / "gpu.md").read_text()
    for name in glue:
        assert name in text, f"{name} is glued but docs/gpu.md never shows it"
    assert gpu_recorded.gpu_name(first.provenance.device_name) == glue["gpu"]


def test_the_page_needs_a_gpu_run(runs: list[Run]) -> None:
    cpu_only = [run for run in runs if run.peaks.device != "cuda"]
    with pytest.raises(GpuConceptsError, match="needs a run recorded on a GPU"):
        gpu.page(cpu_only)


def test_the_datasheet_share_is_computed(first: Run) -> None:
    sheet = lookup(first.provenance.device_name)
    assert sheet is not None
    peak = sheet.peak(first.peaks.dtype)
    assert peak is not None
    said = gpu_tables.peaks_sentence(first)
    assert f"{units.si(first.peaks.flops_per_s, 'FLOP/s')} of " in said
    assert f"({units.percent(first.peaks.flops_per_s / peak)})" in said
    assert f"({units.percent(first.peaks.bytes_per_s / sheet.bytes_per_s)})" in said


def test_a_recorded_floor_without_repetitions_says_why_once(runs: list[Run]) -> None:
    """The recorded runs kept no repetitions of their floors: each floor is a single figure,
    and the paragraph says why beside the first of them only."""
    found = gpu_recorded.gpu_runs(runs)
    text = gpu_tables.peaks_paragraph(found, ())
    assert text.count("kept no repetitions of their floors") == 1
    assert "the smallest kernel took 13.5 µs (a single figure: runs recorded before" in text


def _sweep_at(run: Run, share: float) -> Run:
    """``run`` with its GEMM sweep scaled so that its best point is ``share`` of the peak."""
    peaks = run.peaks
    scale = share * peaks.flops_per_s / max(point[3] for point in peaks.gemm_sweep)
    sweep = tuple((r, w, f, rate * scale) for r, w, f, rate in peaks.gemm_sweep)
    return dataclasses.replace(run, peaks=dataclasses.replace(peaks, gemm_sweep=sweep))


def test_a_sweep_far_below_the_peak_is_said_with_its_cause(first: Run) -> None:
    # The H200's tf32 run: a sweep at 12 % of the peak, under the FP32 datasheet rate
    fp32 = lookup(first.provenance.device_name).peak("fp32")  # type: ignore[union-attr]
    slow = gpu_tables.sweep_sentence(_sweep_at(first, 0.9 * fp32 / first.peaks.flops_per_s))
    assert "predictions that read the sweep expect slower products" in slow
    assert "its products ran in FP32" in slow
    # under half of the peak but above the FP32 rate: off, with no cause named
    half = gpu_tables.sweep_sentence(_sweep_at(first, 0.45))
    assert "expect slower products" in half
    assert "FP32" not in half
    assert "45%" in half
    # a float32 run whose sweep ran in FP32 did what it should: no cause to name
    slow_fp32 = _sweep_at(first, 0.9 * fp32 / first.peaks.flops_per_s)
    slow_fp32 = dataclasses.replace(
        slow_fp32, peaks=dataclasses.replace(slow_fp32.peaks, dtype="float32")
    )
    assert "FP32" not in gpu_tables.sweep_sentence(slow_fp32)
    fine = gpu_tables.sweep_sentence(_sweep_at(first, 0.87))
    assert fine.endswith("87% of that peak.")
    assert fine in gpu_tables.peaks_sentence(_sweep_at(first, 0.87))


def test_the_rnn_sentence_follows_the_times(first: Run) -> None:
    loop = gpu_recorded.first_kernel(first, "rnn-loop")
    gemm = gpu_recorded.first_kernel(first, "rnn-gemm")
    assert loop is not None
    assert gemm is not None
    said = gpu_story.SENTENCES["rnn"](first)
    assert units.seconds(loop.seconds) in said
    assert units.seconds(gemm.seconds) in said
    slower = gpu_story.SENTENCES["rnn"](_slower(first, "rnn-loop", 3.0))
    assert units.seconds(loop.seconds * 3.0) in slower
    assert slower != said


def test_the_mlp_sentence_names_the_memory_bound_batches(first: Run) -> None:
    said = gpu_story.SENTENCES["mlp"](first)
    assert "B = " in said
    assert "HBM" in said or "DRAM" in said or "L2" in said


def test_every_chapter_names_the_gpu(runs: list[Run], first: Run) -> None:
    name = gpu_recorded.gpu_name(first.provenance.device_name)
    for family in gpu_recorded.FAMILIES:
        passage = gpu_story.chapter_passage(runs, family)
        assert name in passage, family
        assert "{doc}`GPU chapter <gpu>`" in passage
    assert "no GPU" in gpu_story.chapter_passage([], "dlrm")


def test_failures_follow_the_verdicts(first: Run) -> None:
    failing = [r for r in first.claims if r.verdict != "holds"]
    listed = gpu_story.failures([first])
    for result in failing:  # each statement as its sentences (a colon ends the first)
        assert result.claim.replace(": ", ". ").rstrip(".").split(". ")[0] in listed
    held = example()  # a claim that holds
    assert held.verdict == "holds"
    all_held = dataclasses.replace(first, claims=(held,))
    assert gpu_story.failures([all_held]) == "Every claim held on every recorded GPU run."
    failed = dataclasses.replace(first, claims=(example(1.5),))
    assert example(1.5).claim in gpu_story.failures([failed])
    assert "1 failed" in gpu_story.tally([failed])
    # the reason is a sentence of its own, after the pass region's
    why = example(1.5).why
    assert why[0].islower()
    assert f". {why[0].upper()}{why[1:]}" in gpu_story.failures([failed])


def test_random_rows_table_reads_the_claim(first: Run) -> None:
    glue = gpu_tables.random_rows(first)
    values = first.claim(gpu_tables.RANDOM_CLAIM).values
    assert f"{values['transfer_bytes']} bytes" in str(glue["rows_text"])
    assert str(glue["rows_table"]).count("\n") >= 3


def test_distributed_results_on_the_host_are_labelled(runs: list[Run]) -> None:
    for run in runs:
        column = gpu_recorded.distributed_column(run)
        on_host = (
            run.peaks.device == "cuda"
            and run.distributed is not None
            and run.distributed.backend == "gloo"
        )
        assert ("host CPU" in column) == on_host, column
        if on_host:
            assert run.distributed is not None
            assert run.distributed.device in column
    note = gpu_recorded.distributed_note(runs)
    assert ("gloo" in note) == any(
        run.peaks.device == "cuda" and run.distributed is not None for run in runs
    )


def test_the_families_table_has_every_chapter_kernel(first: Run) -> None:
    table = gpu_tables.families_table(first)
    kernels = [m for family in gpu_recorded.FAMILIES for m in gpu_recorded.chapter(first, family)]
    assert table.count("\n") == len(kernels) + 1
    assert all(f"`{m.workload}`" in table for m in kernels)


def test_a_run_without_the_kernels_says_nothing(first: Run) -> None:
    bare = dataclasses.replace(first, measurements=(first.measurements[0],), registered=None)
    assert gpu_story.SENTENCES["rnn"](bare) == ""
    assert isinstance(first.measurements[0], Measurement)


def test_sweeps_are_in_the_order_of_their_size(first: Run) -> None:
    batches = [m.size("B") for m in gpu_recorded.chapter(first, "mlp")]
    assert batches == sorted(batches)
    prefill = [m.size("S") for m in gpu_recorded.chapter(first, "transformer")
               if m.workload == "transformer-prefill"]  # fmt: skip
    assert prefill == sorted(prefill)


def test_the_loop_per_operation_carries_the_loops_spread(runs: list[Run]) -> None:
    said = str(gpu_dtype.dtype_story(runs)["dtype_loop"])
    # 26.5 ms ± 3.3 ms over 1,025 operations: the median and the IQR each divided by them
    assert "That is 25.8 µs ± 3.2 µs against 17.3 µs ± 670 ns per operation" in said


def test_random_rows_are_read_against_the_random_access_roof_not_the_streaming_one(
    first: Run,
) -> None:
    """A random lookup's roof is its level's random-access rate: 110% of it is a finding
    beyond that rate, never 110% of HBM's streaming bandwidth, and a kernel above its roof
    beyond its spread "ran above" it rather than "landed on" it."""
    rows = gpu_recorded.first_kernel(first, "dlrm-random")
    assert rows is not None
    assert (
        gpu_recorded.roof_phrase(rows, first)
        == "ran above the random-access roof of HBM (110% of it)"
    )
    streamed = gpu_recorded.first_kernel(first, "dlrm-sequential")
    assert streamed is not None
    assert gpu_recorded.roof_phrase(streamed, first).startswith("reached only 38% of the HBM roof")
    slow = _slower(first, "dlrm-random", 2.0)
    halved = gpu_recorded.first_kernel(slow, "dlrm-random")
    assert halved is not None
    assert (
        gpu_recorded.roof_phrase(halved, slow)
        == "landed on the random-access roof of HBM (53% of it)"
    )
