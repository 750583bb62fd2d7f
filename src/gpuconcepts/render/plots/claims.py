# ruff: noqa: PLC0415
# (matplotlib is imported inside the functions: README, Rules: 3)
"""Draw a claim's :class:`~gpuconcepts.results.plot.PlotSpec` with matplotlib.

One renderer for every claim: line plots (log axes by default) or grouped bars, measured
series solid with markers, predictions dashed, fits dotted, reference lines in grey. A series
with a spread (its ``low`` and ``high``) gets error bars. The verdict is written into the
figure from the result, never by hand.

>>> from gpuconcepts.results.plot import PlotSpec, Series
>>> spec = PlotSpec("demo", "S", "seconds", (Series("measured", (1.0, 2.0), (1.0, 4.0)),))
>>> fig = draw(spec)
>>> fig.axes[0].get_xlabel(), fig.axes[0].get_xscale()
('S', 'log')
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpuconcepts.render.plots.labels import legend_beside
from gpuconcepts.render.style import VERDICT_COLOURS
from gpuconcepts.results.claim import ClaimResult
from gpuconcepts.results.plot import PlotSpec, Series

if TYPE_CHECKING:
    from matplotlib.figure import Figure

_STYLE: dict[str, dict[str, Any]] = {
    "measured": {"marker": "o", "linestyle": "-", "linewidth": 1.8},
    "predicted": {"marker": "", "linestyle": "--", "linewidth": 1.5},
    "threshold": {"marker": "", "linestyle": ":", "linewidth": 1.5},
}
_CAPSIZE = 3


def _yerr(series: Series) -> list[list[float]] | None:
    """Matplotlib's ``yerr`` (distances below and above each point), None without a spread.

    A quartile a rounding error past the median would give a negative distance, which
    matplotlib refuses: it is drawn as zero.
    """
    if series.low is None or series.high is None:
        return None
    return [
        [max(y - lo, 0.0) for y, lo in zip(series.y, series.low, strict=True)],
        [max(hi - y, 0.0) for y, hi in zip(series.y, series.high, strict=True)],
    ]


def _bars(ax: Any, spec: PlotSpec) -> None:
    count = len(spec.series)
    width = 0.8 / max(count, 1)
    for i, series in enumerate(spec.series):
        offsets = [x + (i - (count - 1) / 2) * width for x in series.x]
        hatch = "//" if series.role != "measured" else None
        ax.bar(
            offsets,
            series.y,
            width=width,
            label=series.label,
            hatch=hatch,
            alpha=0.9 if series.role == "measured" else 0.5,
            edgecolor="black",
            yerr=_yerr(series),
            capsize=_CAPSIZE,
        )
    ax.set_xticks(range(len(spec.categories)), spec.categories)


def draw(spec: PlotSpec, ax: Any = None) -> Figure:
    """Draw ``spec`` into ``ax`` (a new Figure when None) and return the Figure."""
    if ax is None:
        from matplotlib.figure import Figure

        fig = Figure(figsize=(8.4, 4.2), layout="constrained")
        ax = fig.add_subplot()
    else:
        fig = ax.figure
    if spec.categories:
        _bars(ax, spec)
    else:
        for series in spec.series:
            yerr = _yerr(series)
            if yerr is None:
                ax.plot(series.x, series.y, label=series.label, **_STYLE[series.role])
            else:
                ax.errorbar(
                    series.x,
                    series.y,
                    yerr=yerr,
                    capsize=_CAPSIZE,
                    label=series.label,
                    **_STYLE[series.role],
                )
        if spec.log_x:
            ax.set_xscale("log", base=2)
    if spec.log_y:
        ax.set_yscale("log")
    for i, (label, value) in enumerate(spec.hlines):
        ax.axhline(
            value, color="0.35", linestyle=("-", "-.", ":")[i % 3], linewidth=0.9, label=label
        )
    for i, (label, value) in enumerate(spec.vlines):
        ax.axvline(value, color=f"C{i + 3}", linestyle="-.", linewidth=1.2, label=label)
    ax.set_title(spec.title, fontsize=10)
    ax.set_xlabel(spec.x_label)
    ax.set_ylabel(spec.y_label)
    ax.grid(True, which="both", linewidth=0.3, alpha=0.5)
    legend_beside(ax, fontsize=7)  # beside the axes: it covers no point
    return fig


def draw_result(result: ClaimResult, ax: Any = None) -> Figure | None:
    """Draw a result's plot with its computed verdict above it; None when it has no plot.

    On a new figure the verdict is the figure's super-title (so it never covers the data);
    drawn into a given ``ax``, it is written in the axes' top-left corner.
    """
    if result.plot is None:
        return None
    fig = draw(result.plot, ax)
    text = f"{result.verdict} · {result.device}"
    color = VERDICT_COLOURS[result.verdict]
    if ax is None:
        fig.suptitle(text, x=0.99, ha="right", fontsize=8, color=color)
    else:
        ax.text(
            0.01, 0.99, text, transform=ax.transAxes, ha="left", va="top", fontsize=7, color=color
        )
    return fig


def unmeasured_figure(why: str) -> Figure:
    r"""A figure that says, in words, why its run measured nothing to draw (a part skipped on
    a busy or small machine): the page keeps its place and the reader reads the reason.

    >>> fig = unmeasured_figure("torch.distributed could not start here")
    >>> fig.axes[0].texts[0].get_text()
    'Not measured on this machine:\ntorch.distributed could not start here'
    """
    import textwrap

    from gpuconcepts.render.style import figure

    fig, (ax,) = figure(5.0, 1.2)
    ax.set_axis_off()
    ax.text(
        0.5, 0.5, "Not measured on this machine:\n" + textwrap.fill(why, 70),
        ha="center", va="center", fontsize=9, transform=ax.transAxes,
    )  # fmt: skip
    return fig
