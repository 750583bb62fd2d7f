"""Figures drawn from the recorded runs (issue 46, item 4): the RNN's time against S, bf16
against tf32, the five families placed; each titled in words, each from the run's own data."""

from __future__ import annotations

import pytest

pytest.importorskip("matplotlib")

from book_pages import DOCS

from gpuconcepts.book import recorded_runs
from gpuconcepts.render.pages import rnn


@pytest.fixture(scope="module")
def runs():
    return recorded_runs(DOCS)


def test_the_rnn_figure_draws_every_kernel_against_s_from_the_run(runs) -> None:
    for run in runs:
        fig = rnn.central_figure(run)["rnn_central"]
        ax = fig.axes[0]
        title = ax.get_title()
        assert "cuda" not in title
        assert "cpu" not in title
        assert title.startswith("The ")
        drawn = {
            (float(x), float(y))
            for line in ax.lines
            for x, y in zip(line.get_xdata(), line.get_ydata(), strict=True)
        }
        for m in run.measurements:
            if m.workload == "rnn-loop":  # every step loop the run timed is a point
                assert (float(m.size("S")), m.seconds) in drawn
        legend = ax.get_legend()
        assert legend is not None
        texts = [t.get_text() for t in legend.get_texts()]
        assert texts[0] == "the Python step loop"
        assert any(t.startswith("nn.RNN") for t in texts)


def test_the_bf16_runs_rnn_figure_says_nn_rnn_ran_in_float16(runs) -> None:
    (bf16,) = [r for r in runs if r.peaks.dtype == "bfloat16"]
    legend = rnn.central_figure(bf16)["rnn_central"].axes[0].get_legend()
    assert "nn.RNN (ran in float16)" in [t.get_text() for t in legend.get_texts()]
    assert rnn.central_figure(bf16)["rnn_central"].axes[0].get_title() == (
        "The H200 bf16 run's RNN: time against sequence length"
    )
