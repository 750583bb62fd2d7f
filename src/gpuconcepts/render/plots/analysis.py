"""An analysis report (:class:`~gpuconcepts.analysis.Report`) drawn: this machine's roofline
with one numbered point per call, coloured by the bound observed here.

Drawn here, above the analysis, which imports no renderer; matplotlib is imported inside the
function.
"""

# matplotlib is imported inside functions on purpose (README, Rules: 3).
# ruff: noqa: PLC0415

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuconcepts.measure import Measurement
from gpuconcepts.render.plots.labels import legend_beside
from gpuconcepts.render.plots.roofline import roofline_chart

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from gpuconcepts.analysis.report import Report

COLOURS = {"compute": "C1", "memory": "C0", "overhead": "C7"}
"""Each observed bound's colour."""


def layers_figure(report: Report) -> Figure:
    """This machine's roofline with one numbered point per call that does arithmetic.

    The points are coloured by observed bound; a call without FLOPs has no place on a
    log axis and is left out (it is in the table).
    """
    from matplotlib.lines import Line2D

    shown = [layer for layer in report.layers if layer.flops > 0]
    # one point per layer, named by its row number (the measurement of its call)
    points = [
        Measurement(str(layer.index), "", {}, layer.raw_seconds, layer.flops, layer.bytes)
        for layer in shown
    ]
    fig = roofline_chart(report.peaks, points)
    ax = fig.axes[0]
    for layer, point in zip(shown, ax.lines[-len(shown) :] if shown else [], strict=True):
        point.set_color(COLOURS[layer.bound])
        point.set_markeredgecolor("black")
    handles, texts = ax.get_legend_handles_labels()
    for bound, colour in COLOURS.items():
        if any(layer.bound == bound for layer in shown):
            handles.append(Line2D([], [], marker="o", ls="", color=colour, markeredgecolor="black"))
            texts.append(f"{bound}-bound here")
    legend_beside(ax, handles, texts)
    ax.set_title(f"{report.model}'s layers under the measured roofs")
    return fig
