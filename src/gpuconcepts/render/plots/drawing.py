"""The shapes the diagrams are drawn with: a labelled box, an arrow, and a blank canvas.

matplotlib is imported inside them, so importing this module stays light.
"""

# matplotlib is imported inside functions on purpose (README, Rules: 3).
# ruff: noqa: PLC0415

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuconcepts.render.style import INK, PALE

if TYPE_CHECKING:
    from matplotlib.axes import Axes


def box(
    ax: Axes,
    x: float,
    y: float,
    text: str,
    *,
    width: float = 2.2,
    colour: str = PALE,
    fontsize: float = 10.5,
) -> None:
    """A rounded box centred on (x, y) with a label."""
    from matplotlib.patches import FancyBboxPatch

    height = 0.9
    ax.add_patch(
        FancyBboxPatch(
            (x - width / 2, y - height / 2),
            width,
            height,
            boxstyle="round,pad=0.05,rounding_size=0.15",
            facecolor=colour,
            edgecolor=INK,
            linewidth=1.2,
        )
    )
    ax.text(x, y, text, ha="center", va="center", fontsize=fontsize, color=INK, wrap=True)


def arrow(
    ax: Axes, start: tuple[float, float], end: tuple[float, float], colour: str = INK
) -> None:
    """An arrow from ``start`` to ``end``, its head at ``end``."""
    ax.annotate(
        "",
        xy=end,
        xytext=start,
        arrowprops={
            "arrowstyle": "-|>",
            "color": colour,
            "linewidth": 1.3,
            "shrinkA": 0,
            "shrinkB": 0,
        },
    )


def blank(ax: Axes, xlim: tuple[float, float], ylim: tuple[float, float]) -> None:
    """Axes with these limits, equal scales and no frame: a canvas to draw shapes on."""
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    ax.set_aspect("equal")
    ax.axis("off")
