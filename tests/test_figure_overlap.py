"""No figure of the book prints text over text or a legend over a data point (issue 46,
item 4): every page's cells run against the recorded runs (tests/book_pages.py), and each
figure a page glues or displays is laid out as its SVG is and checked
(tests/figure_overlap.py); the figures drawn from runs are checked on every recorded run."""

from __future__ import annotations

from functools import cache

import pytest

pytest.importorskip("matplotlib")

from book_pages import DOCS, executed_pages, render_page
from figure_overlap import problems
from run_states import real_runs

from gpuconcepts import book
from gpuconcepts.render.pages import gpu, rnn
from gpuconcepts.run import Run


@cache
def _runs() -> tuple[Run, ...]:
    return tuple(real_runs())


@pytest.mark.parametrize("page", executed_pages(), ids=lambda p: p.stem)
def test_no_figure_of_the_page_overlaps_its_texts(page, monkeypatch) -> None:
    *recorded, quick = _runs()
    found: list[str] = []

    def checked(fig) -> str:
        title = fig.axes[0].get_title() if fig.axes else ""
        found.extend(f"[{title}] {problem}" for problem in problems(fig))
        return "<svg></svg>"

    monkeypatch.setattr(book, "svg_text", checked)  # render_page's draw calls it per figure
    render_page(page, quick, recorded, draw=True)
    assert not found, "\n".join(found)


def test_the_run_figures_are_clean_on_every_recorded_run() -> None:
    from gpuconcepts.book import recorded_runs

    for run in recorded_runs(DOCS):
        for fig in (rnn.central_figure(run)["rnn_central"], *_gpu_figures(run)):
            assert not problems(fig), (run.label, problems(fig))


def _gpu_figures(run: Run) -> list[object]:
    return [gpu.overlay(run)] if run.peaks.device == "cuda" else []


def test_the_checker_sees_overlapping_texts_and_a_covered_point() -> None:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(5, 4))
    ax = fig.add_subplot()
    ax.plot([0.5], [0.5], "o", label="a point")
    ax.text(0.1, 0.9, "one label", transform=ax.transAxes)
    ax.text(0.12, 0.9, "another label", transform=ax.transAxes)
    ax.legend(loc="center")
    found = problems(fig)
    assert any("'one label' overlaps" in p for p in found)
    assert any("the legend covers a data point" in p for p in found)
