"""Text that keeps clear of other text and of the data: point labels placed where nothing
else is (:func:`place_labels`, a small collision-avoiding pass) and legends beside the axes,
where they cover no data point (:func:`legend_beside`).
"""

# matplotlib is imported inside functions on purpose (README, Rules: 3).
# ruff: noqa: PLC0415

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, cast

from gpuconcepts.render.style import laid_out

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.backend_bases import RendererBase
    from matplotlib.figure import Figure
    from matplotlib.legend import Legend
    from matplotlib.text import Annotation

_DIRECTIONS: tuple[tuple[float, float, Literal["left", "right"]], ...] = (
    (1, 1, "left"),
    (1, -1, "left"),
    (-1, 1, "right"),
    (-1, -1, "right"),
    (1, 0, "left"),
    (-1, 0, "right"),
)
"""Where a label may sit around its point, in order of preference: right and above first."""

_RINGS = (4.0, 12.0, 22.0, 34.0, 48.0)
"""Distances (points) from the point, tried nearest first."""


def _offsets() -> list[tuple[float, float, Literal["left", "right"]]]:
    """Every offset the pass tries: each direction at each distance, nearest first; a label
    below its point sits a text height lower (its offset is its baseline's)."""
    tried = []
    for ring in _RINGS:
        for dx, dy, align in _DIRECTIONS:
            tried.append(
                (dx * (ring + 1), dy * ring - (7 if dy < 0 else 3 if dy == 0 else 0), align)
            )
    return tried


def legend_beside(ax: Axes, handles: Sequence[Any] | None = None, texts: Sequence[str] | None = None,
                  fontsize: float = 8) -> Legend:  # fmt: skip
    """The axes' legend to the right of its frame, where it covers no data point (constrained
    layout makes room for it)."""
    if handles is None or texts is None:
        handles, texts = ax.get_legend_handles_labels()
    return ax.legend(
        list(handles), list(texts), loc="upper left", bbox_to_anchor=(1.02, 1.0),
        fontsize=fontsize, frameon=False,
    )  # fmt: skip


def place_labels(fig: Figure, ax: Axes, labels: Sequence[Annotation]) -> None:
    """Move each point label to the nearest spot that overlaps no earlier label, no point and
    no other text of the axes.

    A greedy pass in display coordinates: each label is tried at offsets around its point,
    nearest first (right and above first), and keeps the first spot inside the axes free of
    the legend, the points, the axes' other texts and the labels already placed; a label
    moved further than the first ring gets a thin line to its point. A label with no free
    spot keeps its first offset.

    The figure is laid out once, as its SVG will be (:func:`~gpuconcepts.render.style.laid_out`),
    with the labels left out of the layout: a label ends inside the axes, where it takes no
    room, so the layout is the one the placed labels would give, and no draw is needed.
    """
    for label in labels:
        label.set_in_layout(False)
    with laid_out(fig) as renderer:
        _place_in(ax, labels, renderer)
    for label in labels:  # one left outside (no free spot) still counts for the tight box
        label.set_in_layout(True)


def _leader(label: Annotation) -> None:
    """A thin grey line from a label to its point (what ``annotate(arrowprops=...)`` makes)."""
    from matplotlib.patches import FancyArrowPatch

    props: dict[str, Any] = {
        "arrowstyle": "-", "lw": 0.5, "color": "0.45", "shrinkA": 1, "shrinkB": 3,
    }  # fmt: skip
    label.arrowprops = props
    label._arrow_relpos = (0.5, 0.5)  # type: ignore[attr-defined]
    label.arrow_patch = FancyArrowPatch((0, 0), (1, 1), **props)


def _place_in(ax: Axes, labels: Sequence[Annotation], renderer: RendererBase) -> None:
    """The greedy pass of :func:`place_labels`, in the display units of ``renderer``."""
    from matplotlib import rcParams
    from matplotlib.text import Text
    from matplotlib.transforms import Bbox

    offsets = _offsets()
    taken: list[Bbox] = []
    marker = float(rcParams["lines.markersize"])  # the points are drawn at its default size
    side = cast(float, renderer.points_to_pixels(marker))
    scale = cast(float, renderer.points_to_pixels(1.0))
    for label in labels:  # each label's own point, a square the size of its marker
        x, y = label._get_xy_display()  # type: ignore[attr-defined]  # its point, whatever coordinates it is given in
        taken.append(Bbox.from_bounds(x - side / 2, y - side / 2, side, side))
    legend = ax.get_legend()
    if legend is not None:
        taken.append(legend.get_window_extent(renderer))
    ours = {id(label) for label in labels}
    taken += [t.get_window_extent(renderer) for t in ax.texts if id(t) not in ours and t.get_text()]
    frame = ax.get_window_extent(renderer)
    for label in labels:
        chosen = None
        for dx, dy, align in offsets:
            label.set_position((dx, dy))
            label.set_horizontalalignment(align)
            label.update_positions(renderer)
            box = Text.get_window_extent(label, renderer)  # the text alone, not its line
            inside = frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0
            if inside and box.y1 <= frame.y1 and not any(box.overlaps(o) for o in taken):
                chosen = box
                break
        if chosen is None:
            dx, dy, align = offsets[0]
            label.set_position((dx, dy))
            label.set_horizontalalignment(align)
            label.update_positions(renderer)
            chosen = Text.get_window_extent(label, renderer)
        elif max(abs(dx), abs(dy)) > _RINGS[1] + 2:  # far from its point: a line to it
            _leader(label)
        taken.append(chosen.padded(1.0 * scale))
