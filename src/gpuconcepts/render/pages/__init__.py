"""What the book's pages compute, one module per page, as values a page's cells glue.

A page's code cells stay short: they ask a module here for a :data:`Glue` (name to value) and
hand it to :func:`gpuconcepts.book.glue_all`. The logic lives here, where doctests and
``tests/test_render_pages.py`` check it; nothing here imports :mod:`gpuconcepts.book`.
A value is Markdown (``str``), :class:`Math` (LaTeX for ``{glue:math}``) or a matplotlib
figure (for ``{glue:figure}``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias

from gpuconcepts.roofline import place
from gpuconcepts.units import plain_number

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from gpuconcepts.measure import Measurement
    from gpuconcepts.run import Run


@dataclass(frozen=True)
class Math:
    """LaTeX for a ``{glue:math}`` block (a plain ``str`` is glued as Markdown).

    >>> Math(r"x^2").latex
    'x^2'
    """

    latex: str


Glue: TypeAlias = "dict[str, str | Math | Figure]"
"""What a page glues: each name of its ``{glue}`` references and its value."""


def bound(m: Measurement, run: Run) -> str:
    """The bound that served ``m`` under its run's roofs (``roofline.place``)."""
    return place(m, run.peaks).bound


def from_batch(batch: int | None, never: str = "Never", prefix: str = "From a batch of ") -> str:
    """An exercise's answer: the first batch that reaches a ridge point, or ``never``.

    >>> from_batch(None), from_batch(1024), from_batch(8, "No batch", "from ")
    ('Never', 'From a batch of 1,024', 'from 8')
    """
    return never if batch is None else f"{prefix}{plain_number(batch)}"
