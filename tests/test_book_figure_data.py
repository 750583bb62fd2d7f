"""The book's run figures plot the runs' own numbers (issue 46): the bf16-against-TF32 figure
of the GPU chapter, the comparison's five families on intensity × parallelism, and the MLP
lead's points told apart by batch; and the GPU chapter's account of the TF32 prefill reads
its numbers from the two recorded runs.

Each test recomputes the expected values from the recorded runs by their definitions (time
over time, FLOPs over bytes, FLOPs over dependent steps), not through the page's code, and
compares them with what the figure holds.
"""

from __future__ import annotations

import dataclasses
import re
from functools import cache

import pytest

pytest.importorskip("matplotlib")

from book_pages import DOCS
from matplotlib.lines import Line2D
from matplotlib.text import Annotation

from gpuconcepts import units
from gpuconcepts.book import recorded_runs
from gpuconcepts.claims.judge import profile_of
from gpuconcepts.render.pages import comparison, lead
from gpuconcepts.render.pages.gpu_dtype import dtype_pair, dtype_story
from gpuconcepts.render.pages.gpu_prefill import prefill_pair, prefill_story
from gpuconcepts.run import Run
from gpuconcepts.workloads import chapter_of


@cache
def _runs() -> tuple[Run, ...]:
    return tuple(recorded_runs(DOCS))


def _points(fig, filled: bool) -> set[tuple[float, float]]:
    """The (x, y) of every single-marker line of the figure, filled or hollow."""
    found = set()
    for line in fig.axes[0].lines:
        xs, ys = line.get_xdata(), line.get_ydata()
        if len(xs) != 1 or line.get_marker() != "o":
            continue
        if (line.get_markerfacecolor() == "none") != filled:
            found.add((round(float(xs[0]), 6), round(float(ys[0]), 6)))
    return found


def _same_kernel(one, two) -> bool:
    def sizes(m):
        return {k: v for k, v in m.params.items() if k not in {"dtype", "s"}}

    return one.workload == two.workload and sizes(one) == sizes(two)


def test_the_dtype_figure_plots_each_kernels_time_ratio_at_its_intensity() -> None:
    pair = dtype_pair(_runs())
    assert pair is not None, "the recorded H200 bf16 and tf32 runs"
    base, other = pair
    expected = {
        (round(one.flops / one.bytes, 6), round(two.seconds / one.seconds, 6))
        for one in profile_of(base)
        for two in profile_of(other)
        if _same_kernel(one, two)
    }
    fig = dtype_story(_runs())["dtype_fig"]
    assert len(expected) >= 15
    assert _points(fig, filled=True) == expected
    # the dashed lines across: the ratio of the bytes per value and of the measured peaks
    levels = {round(float(line.get_ydata()[0]), 6) for line in fig.axes[0].lines if
              len(line.get_xdata()) == 2}  # fmt: skip
    assert round(base.peaks.flops_per_s / other.peaks.flops_per_s, 6) in levels
    assert {2.0, 1.0} <= levels  # 4 bytes against 2, and no change


def test_the_dtype_figure_would_show_a_changed_time() -> None:
    base, other = dtype_pair(_runs())  # type: ignore[misc]
    slower = tuple(
        dataclasses.replace(m, raw_seconds=tuple(3 * t for t in m.raw_seconds))
        if m.workload == "mlp"
        else m
        for m in other.measurements
    )
    planted = dataclasses.replace(other, measurements=slower)
    before = _points(dtype_story([base, other])["dtype_fig"], filled=True)
    after = _points(dtype_story([base, planted])["dtype_fig"], filled=True)
    assert before != after


def test_the_comparison_places_every_kernel_by_intensity_and_flops_per_step() -> None:
    run = next(r for r in _runs() if r.peaks.device == "cuda")
    expected: dict[str, set[tuple[float, float]]] = {}
    for m in profile_of(run):
        if m.flops > 0 and m.bytes > 0:
            point = (round(m.flops / m.bytes, 6), round(m.flops / (m.steps or 1), 6))
            expected.setdefault(chapter_of(m.workload) or "other", set()).add(point)
    fig = comparison.families_figure(list(_runs()))["families_fig"]
    plotted = {
        str(line.get_label()): {
            (round(float(x), 6), round(float(y), 6))
            for x, y in zip(line.get_xdata(), line.get_ydata(), strict=True)
        }
        for line in fig.axes[0].lines
        if isinstance(line, Line2D) and not str(line.get_label()).startswith("_")
    }
    assert set(expected) >= {"dlrm", "mlp", "cnn", "rnn", "transformer"}
    assert plotted == expected
    # parallelism tells the families apart: the RNN's dependent steps leave it the least work
    # per step of the chapters' products, the MLP at its largest batch the most
    assert min(y for _, y in expected["rnn"]) < max(y for _, y in expected["mlp"])


def test_the_mlp_lead_labels_each_point_by_its_batch() -> None:
    run = next(r for r in _runs() if r.peaks.device == "cuda" and r.peaks.dtype == "bfloat16")
    kernels = lead.lead_kernels(run, "mlp")
    fig = lead.lead_figure(run, "mlp", kernels)
    texts = [t.get_text() for t in fig.axes[0].texts if isinstance(t, Annotation)]
    wanted = [f"B={units.plain_number(m.size('B'))}" for m in kernels]
    assert len(wanted) >= 3
    assert sorted(t for t in texts if t.startswith("B=")) == sorted(wanted)
    assert "mlp" not in texts  # no point is left with the kernel's bare name


def test_point_labels_name_the_kernel_when_several_are_shown() -> None:
    run = next(r for r in _runs() if r.peaks.device == "cuda")
    kernels = lead.lead_kernels(run, "transformer")
    labels = lead.point_labels(kernels)
    assert len(set(labels)) == len(labels), labels  # every point told apart
    assert any(label.startswith("transformer-prefill S=") for label in labels)


# -- the TF32 prefill, in words from the two runs -------------------------------------------
def _numbers(text: str) -> list[str]:
    return re.findall(r"\d[\d,.]*", text)


def test_the_prefill_passage_reads_its_ratios_and_roofs_from_the_runs() -> None:
    found = prefill_pair(_runs())
    assert found is not None
    text = prefill_story(_runs())["prefill_text"]
    ratios = [two.seconds / one.seconds for one, two in found.pairs]
    assert min(ratios) > 4, "the TF32 prefill took several times as long as in bf16"
    assert f"{units.times(min(ratios))} to {units.times(max(ratios))} as long" in text
    shares = [two.flops_per_s / found.other.peaks.flops_per_s for _, two in found.pairs]
    assert f"only {units.percent(min(shares))} to {units.percent(max(shares))}" in text
    assert "4 bytes against 2" in text
    assert "the compute roof binds in both runs" in text
    assert units.significant(found.other.peaks.ridge_point) in text
    assert "TFLOP/s" in text
    assert "FP32" in text


def test_the_prefill_passage_changes_with_the_runs() -> None:
    base, other = dtype_pair(_runs())  # type: ignore[misc]
    faster = tuple(
        dataclasses.replace(m, raw_seconds=tuple(t / 5 for t in m.raw_seconds))
        if m.workload.startswith("transformer-prefill")
        else m
        for m in other.measurements
    )
    planted = prefill_story([base, dataclasses.replace(other, measurements=faster)])
    assert planted["prefill_text"] != prefill_story([base, other])["prefill_text"]
    assert prefill_story([base])["prefill_text"] == units.NOTHING
