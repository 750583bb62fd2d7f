"""What a reader cannot read in a figure: two texts printed over each other, or a legend laid
over a data point. The figure is laid out as the book's SVG is (render/style.laid_out) and
drawn once without rendering, so every text stands where the page shows it.

Every text counts: titles, axis labels, tick labels, offset texts, annotations, the figure's
own texts and the legend's; two boxes that share more than a sliver (``TOLERANCE`` pixels on
each side) overlap. A data point is a marker of a line or a scatter's point; a line without
markers may pass under a legend.
"""

from __future__ import annotations

import itertools
from typing import Any

TOLERANCE = 1.0
"""Pixels (at the SVG's 72 dpi) two boxes may share at their edges: glyph boxes include some
blank space above and below the letters."""


def _shown(text: Any) -> bool:
    return bool(text.get_visible() and text.get_text().strip())


def _ticks(axis: Any) -> list[Any]:
    """The tick labels drawn on one axis (those inside its view), both sides, both kinds."""
    drawn = axis._update_ticks()  # the ticks a draw draws: those inside the view
    return [label for tick in drawn for label in (tick.label1, tick.label2) if _shown(label)]


def _texts(fig: Any) -> list[tuple[str, Any]]:
    """Every visible text of ``fig`` with a name that says where it is."""
    found: list[tuple[str, Any]] = [("figure text", t) for t in fig.texts if _shown(t)]
    for index, ax in enumerate(fig.axes):
        if not ax.get_visible():
            continue
        where = f"axes {index}"
        for name, text in (
            ("title", ax.title),
            ("left title", ax._left_title),
            ("right title", ax._right_title),
            ("x label", ax.xaxis.label),
            ("y label", ax.yaxis.label),
            ("x offset", ax.xaxis.offsetText),
            ("y offset", ax.yaxis.offsetText),
        ):
            if _shown(text):
                found.append((f"{where} {name}", text))
        if ax.axison:
            for axis, name in ((ax.xaxis, "x tick"), (ax.yaxis, "y tick")):
                found += [(f"{where} {name}", label) for label in _ticks(axis)]
        for text in ax.texts:
            if _shown(text):
                found.append((f"{where} text", text))
        legend = ax.get_legend()
        if legend is not None and legend.get_visible():
            found += [(f"{where} legend", t) for t in legend.get_texts() if _shown(t)]
            title = legend.get_title()
            if _shown(title):
                found.append((f"{where} legend title", title))
    for legend in fig.legends:
        found += [("figure legend", t) for t in legend.get_texts() if _shown(t)]
    return found


def _points(ax: Any) -> list[tuple[float, float]]:
    """Every data point drawn in ``ax``, in display coordinates (markers and scatters)."""
    import numpy as np

    points: list[tuple[float, float]] = []
    for line in ax.lines:
        if not line.get_visible() or line.get_marker() in (None, "None", "", " ", "none"):
            continue
        xy = np.column_stack([line.get_xdata(), line.get_ydata()]).astype(float)
        points += [tuple(p) for p in line.get_transform().transform(xy)]
    for collection in ax.collections:
        offsets = collection.get_offsets()
        if not collection.get_visible() or len(offsets) == 0:
            continue
        transform = collection.get_offset_transform()
        points += [tuple(p) for p in transform.transform(np.asarray(offsets, dtype=float))]
    frame = ax.get_window_extent()
    return [(x, y) for x, y in points if frame.contains(x, y)]


def problems(fig: Any) -> list[str]:
    """What a reader cannot read in ``fig``: each pair of overlapping texts, and each data
    point under a legend (the texts quoted). Empty when the figure is clean."""
    from matplotlib.text import Text

    from gpuconcepts.render.style import laid_out, plain_log_labels

    plain_log_labels(fig)
    found: list[str] = []
    with laid_out(fig) as renderer:
        fig.draw_without_rendering()
        texts = _texts(fig)
        # a text's own box: an annotation's would take in the line to its point too
        boxes = [(name, t, Text.get_window_extent(t, renderer)) for name, t in texts]
        for (name, text, box), (other_name, other, other_box) in itertools.combinations(boxes, 2):
            if box.width == 0 or other_box.width == 0:
                continue
            shrunk = box.padded(-TOLERANCE)
            other_shrunk = other_box.padded(-TOLERANCE)
            if shrunk.overlaps(other_shrunk):
                found.append(
                    f"{name} {text.get_text()!r} overlaps {other_name} {other.get_text()!r}"
                )
        for index, ax in enumerate(fig.axes):
            legend = ax.get_legend()
            if legend is None or not legend.get_visible():
                continue
            frame = legend.get_window_extent(renderer)
            for x, y in _points(ax):
                if frame.contains(x, y):
                    found.append(
                        f"axes {index}: the legend covers a data point at {x:.0f}, {y:.0f}"
                    )
    return found
