"""The schedule, ring, budget, CNN and datasheet figures (gpuconcepts.render.plots.schedules,
budgets, cnn_diagrams, gpu_diagrams): the pure parts agree with the formulas they illustrate,
and every figure draws."""

from __future__ import annotations

import itertools

import pytest

from gpuconcepts import formulas, units
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.render.pages import figures
from gpuconcepts.render.plots import budgets, cnn_diagrams, gpu_diagrams, schedules

SHAPES = [(1, 1), (2, 1), (2, 2), (4, 4), (4, 8), (4, 12), (8, 16)]


@pytest.mark.parametrize(("p", "m"), SHAPES)
@pytest.mark.parametrize("kind", ["GPipe", "1F1B"])
def test_the_simulated_bubble_is_the_formulas(kind: schedules.Schedule, p: int, m: int) -> None:
    ops = schedules.simulate(kind, p, m)
    assert len(ops) == 2 * p * m
    expected = float(formulas.pipeline_bubble_fraction(p=p, m=m))
    assert schedules.idle_share(ops, p) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(("p", "m", "v"), [(2, 2, 2), (4, 4, 2), (4, 8, 2), (4, 8, 4), (2, 6, 3)])
def test_the_interleaved_bubble_is_megatrons(p: int, m: int, v: int) -> None:
    ops = schedules.simulate("interleaved", p, m, v)
    assert len(ops) == 2 * p * m * v
    expected = float(formulas.pipeline_bubble_fraction_interleaved(p=p, m=m, v=v))
    assert schedules.bubble_over_ideal(ops, p) == pytest.approx(expected, abs=1e-12)


def test_every_pass_waits_for_its_input() -> None:
    ops = schedules.simulate("1F1B", p=4, m=8)
    end = {(op.backward, op.micro, op.device): op.end for op in ops}
    for op in ops:
        if not op.backward and op.device > 0:
            assert op.start >= end[(False, op.micro, op.device - 1)]
        if op.backward and op.device < 3:
            assert op.start >= end[(True, op.micro, op.device + 1)]
    for device in range(4):
        mine = sorted((op for op in ops if op.device == device), key=lambda o: o.start)
        assert all(a.end <= b.start for a, b in itertools.pairwise(mine))


def test_1f1b_keeps_fewer_micro_batches_in_flight_than_gpipe() -> None:
    def most_in_flight(kind: schedules.Schedule) -> int:
        ops = [op for op in schedules.simulate(kind, p=4, m=8) if op.device == 0]
        ops.sort(key=lambda o: o.start)
        live = peak = 0
        for op in ops:
            live += -1 if op.backward else 1
            peak = max(peak, live)
        return peak

    assert most_in_flight("1F1B") < most_in_flight("GPipe")


def test_bad_shapes_are_refused() -> None:
    with pytest.raises(GpuConceptsError, match="multiple of p"):
        schedules.simulate("interleaved", p=4, m=6)
    with pytest.raises(GpuConceptsError, match="at least 1"):
        schedules.simulate("GPipe", p=0, m=4)
    with pytest.raises(GpuConceptsError, match="W ≥ 2"):
        schedules.ring_allreduce(W=1)
    with pytest.raises(GpuConceptsError, match="leave nothing"):
        cnn_diagrams.cnn_architecture(H=2, K=3)


@pytest.mark.parametrize("stage", [0, 1, 2, 3])
def test_the_budget_parts_add_up_to_zero(stage: int) -> None:
    parts = budgets.zero_parts(70_000_000_000, 64, stage, k_opt=12)
    expected = formulas.zero_memory_per_device(
        n_params=70_000_000_000, N_d=64, stage=stage, k_opt=12
    )
    assert sum(parts.values()) == pytest.approx(float(expected))


def test_the_ring_title_is_the_formulas() -> None:
    fig = schedules.ring_allreduce(W=8, n_params=1000, s=4)
    sent = formulas.ring_allreduce_bytes(n_params=1000, W=8, s=4)
    assert units.decimal_bytes(sent) in fig.axes[0].get_title()


def test_the_pages_figures_draw() -> None:
    glue = {**figures.cnn(), **figures.model(), **figures.distributed(), **figures.hardware()}
    assert sorted(glue) == ["budget_fig", "cnn_arch", "overlay_fig", "pipeline_fig", "ring_fig"]
    titles = [ax.get_title(loc="left") for ax in glue["pipeline_fig"].axes]
    assert all("formula" in title for title in titles)


def test_the_overlay_places_every_example_on_the_roof() -> None:
    from gpuconcepts.hardware import datasheet_peaks
    from gpuconcepts.roofline import attainable

    peaks = datasheet_peaks("fp16")
    examples = [("low", 0.5), ("high", 1000.0)]
    fig = gpu_diagrams.datasheet_overlay(peaks, examples)
    (dots,) = fig.axes[0].collections
    placed = [tuple(xy) for xy in dots.get_offsets()]
    assert placed == [(x, attainable(x, peaks[0])) for _, x in examples]
    with pytest.raises(GpuConceptsError, match="at least one"):
        gpu_diagrams.datasheet_overlay(peaks, [])
