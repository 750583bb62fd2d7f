"""What the book's pages compute, one module per page, as values a page's cells glue.

A page's code cells stay short: they ask a module here for a :data:`Glue` (name to value) and
hand it to :func:`gpuconcepts.book.glue_all`. The logic lives here, where doctests and
``tests/test_render_pages.py`` check it; nothing here imports :mod:`gpuconcepts.book`.
A value is Markdown (``str``), :class:`Math` (LaTeX for ``{glue:math}``) or a matplotlib
figure (for ``{glue:figure}``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias

from gpuconcepts.roofline import place
from gpuconcepts.units import NOTHING, plain_number

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


def unmeasured(texts: Iterable[str], figures: Iterable[str], why: str) -> Glue:
    """A page section's glue when its run did not measure that part (skipped, left out, or
    nothing in it): "—" for each text, and for each figure one that says ``why``. The page
    builds, and its prose, which names the part's status first, tells the reader why.

    >>> glue = unmeasured(["world"], [], "torch.distributed could not start")
    >>> glue
    {'world': '—'}
    """
    from gpuconcepts.render.plots.claims import unmeasured_figure  # noqa: PLC0415  # matplotlib

    glue: Glue = dict.fromkeys(texts, NOTHING)
    for name in figures:
        glue[name] = unmeasured_figure(why)
    return glue
