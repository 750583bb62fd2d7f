"""The book's one plot style: every colour a figure draws with, the figure every diagram starts
from, and the one-line hint when matplotlib is missing."""

# matplotlib is imported inside functions on purpose (README, Rules: 3).
# ruff: noqa: PLC0415

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, ParamSpec, TypeVar

from gpuconcepts.errors import require

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.backend_bases import RendererBase
    from matplotlib.figure import Figure

    from gpuconcepts.results.claim import Verdict

_P = ParamSpec("_P")
_R = TypeVar("_R")


def needs_matplotlib(draw: Callable[_P, _R]) -> Callable[_P, _R]:
    """Say which extra to install, in one line, when matplotlib is missing."""

    @functools.wraps(draw)
    def checked(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        require("matplotlib", f"{draw.__module__}.{draw.__name__}", "plots")
        return draw(*args, **kwargs)

    return checked


INK = "#1f2933"
ACCENT = "#c2410c"
CALM = "#1d4ed8"
PALE = "#e5edf7"
WARM = "#fde7d6"
SLATE = "#64748b"
"""A fitted line (the α-β fit)."""

DEVICE_COLOURS = (CALM, ACCENT, "#15803d", "#7c3aed", "#b45309", "#0e7490", "#be123c")
"""One colour per device (process); more devices than colours reuse them."""

LEVEL_SHADES = ("#2563eb", "#0891b2", "#059669")
"""The roofs of the cache levels on a roofline, innermost first."""

FAMILY_COLOURS = {"dlrm": "C0", "mlp": "C1", "cnn": "C2", "rnn": "C3", "transformer": "C4"}
"""A workload family's points on a roofline (``C7`` for any other)."""

VERDICT_COLOURS: dict[Verdict, str] = {
    "holds": "#1a7f37",
    "fails": "#cf222e",
    "undecided": "#9a6700",
    "not visible": "#6e7781",
}
"""A colour for every verdict (a test checks that none is missing)."""


def figure(width: float, height: float, ncols: int = 1) -> tuple[Figure, list[Axes]]:
    """A constrained-layout Figure (no pyplot state) and its row of ``ncols`` axes."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), layout="constrained")
    axes = fig.subplots(1, ncols, squeeze=False)[0]
    return fig, list(axes)


SVG_DPI = 72
"""The resolution matplotlib draws every SVG at, whatever the figure's own."""


@contextmanager
def laid_out(fig: Figure) -> Iterator[RendererBase]:
    """Lay ``fig`` out once, as its SVG will be drawn, and keep that layout; yield a renderer
    that measures text as the SVG's does (its metrics, at :data:`SVG_DPI`).

    A figure's layout engine (constrained layout) runs again on every draw, and a draw is most
    of what an SVG costs: ``savefig(bbox_inches="tight")`` drew the figure once to lay it out
    and measure it, then again to write it, and placing a roofline's labels drew it once more
    before that. Laid out here once, the engine is removed, so later draws only draw; the
    positions are fractions of the figure and hold at any resolution. A figure without a
    layout engine (or one laid out already) is left as it is.
    """
    from io import StringIO

    from matplotlib.backends.backend_svg import FigureCanvasSVG, RendererSVG

    width, height = fig.get_size_inches() * SVG_DPI
    renderer = RendererSVG(width, height, StringIO())  # type: ignore[no-untyped-call,unused-ignore]

    class MeasuringCanvas(FigureCanvasSVG):
        """Hands the layout engine the one SVG renderer (it asks the canvas for one)."""

        def get_renderer(self) -> RendererSVG:
            return renderer

    canvas, dpi = fig.canvas, fig.dpi
    MeasuringCanvas(fig)  # makes itself the figure's canvas
    fig.dpi = SVG_DPI
    try:
        engine = fig.get_layout_engine()
        if engine is not None:
            engine.execute(fig)
            fig.set_layout_engine(None)
            for ax in fig.axes:
                _pin_title(ax)
        yield renderer
    finally:
        fig.dpi = dpi
        fig.set_canvas(canvas)


def _pin_title(ax: Axes) -> None:
    """Keep an axes' title where the layout left it, when nothing can move it again.

    Unless told where, an axes places its title above whatever sits over the axes (ticks
    on top, the y axis's offset text such as "1e9") on every draw, measuring the whole y axis
    to find that offset text: a fifth of what drawing a claim's plot cost. With the ticks
    below, no other title, no offset text, no twin and no inset, the title sits at the top of
    the axes (y = 1), where it is pinned; any other axes is left to place its title.
    """
    title = ax.title
    free = (
        title.get_text()
        and title.get_position()[1] == 1.0
        and not ax.get_title("left")
        and not ax.get_title("right")
        and not ax.yaxis.offsetText.get_text()
        and ax.xaxis.get_ticks_position() not in ("top", "unknown")
        and ax.xaxis.get_label_position() != "top"
        and not ax.child_axes
        and len(ax.get_shared_x_axes().get_siblings(ax)) == 1
        and len(ax.get_shared_y_axes().get_siblings(ax)) == 1
    )
    if free:  # set_title given y pins it; it resets the font and colour, given back here
        font, colour = title.get_fontproperties().copy(), title.get_color()
        ax.set_title(title.get_text(), y=1.0)
        title.set_fontproperties(font)
        title.set_color(colour)


_SUPERSCRIPTS = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")
_MATHTEXT_LABEL = re.compile(r"^\$\\mathdefault\{(?P<body>.*)\}\$$")
_POWER = re.compile(r"\^\{(?P<exponent>-?\d+)\}")


def plain_tick_label(label: str) -> str:
    r"""A log axis's mathtext tick label as the same text in plain Unicode.

    >>> plain_tick_label(r"$\mathdefault{10^{-3}}$"), plain_tick_label(r"$\mathdefault{2\times10^{1}}$")
    ('10⁻³', '2×10¹')
    >>> plain_tick_label(r"$\mathdefault{0.5}$"), plain_tick_label("")
    ('0.5', '')
    """
    found = _MATHTEXT_LABEL.match(label)
    if found is None:
        return label
    body = found["body"].replace(r"\times", "×")
    body = _POWER.sub(lambda power: power["exponent"].translate(_SUPERSCRIPTS), body)
    return body.replace("-", "−")  # mathtext draws a minus sign, not a hyphen


def plain_log_labels(fig: Figure) -> None:
    """Label every log axis of ``fig`` in plain text rather than mathtext: the same labels
    ("10⁻³"), but parsing mathtext cost about a tenth of a second per figure, most of the
    time a page with many plots takes to draw them."""
    from matplotlib.ticker import LogFormatterSciNotation

    class PlainLogFormatter(LogFormatterSciNotation):
        def __call__(self, x: float, pos: int | None = None) -> str:
            return plain_tick_label(super().__call__(x, pos))

    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            if axis.get_scale() != "log":
                continue
            base = float(getattr(axis.get_transform(), "base", 10))  # a LogTransform's
            for getter, setter in (
                (axis.get_major_formatter, axis.set_major_formatter),
                (axis.get_minor_formatter, axis.set_minor_formatter),
            ):
                old = getter()
                if isinstance(old, LogFormatterSciNotation) and not isinstance(
                    old, PlainLogFormatter
                ):
                    setter(
                        PlainLogFormatter(
                            base,
                            labelOnlyBase=old.labelOnlyBase,
                            minor_thresholds=old.minor_thresholds,
                        )
                    )
