"""What a claim draws: :class:`Series` (one line of a plot) and :class:`PlotSpec`.

Plain frozen values; :mod:`gpuconcepts.render.plots.claims` turns them into figures.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Literal

from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.records import ANY_SIGN, to_record

SeriesRole = Literal["measured", "predicted", "threshold"]
Points = Annotated[tuple[int | float, ...], ANY_SIGN]
"""A plot's coordinates: any sign (an exponent, a difference); a whole number stays whole."""


@dataclass(frozen=True)
class Series:
    """One line of a plot: ``x`` against ``y``, measured or predicted.

    A measured series may carry its spread: ``low`` and ``high`` give, for each point, the
    ends of its interval (for a time, the first and third quartiles of the repetitions), drawn
    as error bars. Both or neither, each as long as ``y``.

    >>> Series("time", (1.0, 2.0), (3.0, 4.0)).role
    'measured'
    >>> Series("time", (1.0, 2.0), (3.0, 4.0), low=(2.5, 3.5), high=(3.5, 5.0)).to_dict()["low"]
    [2.5, 3.5]
    """

    label: str
    x: Points
    y: Points
    role: SeriesRole = "measured"
    low: Points | None = None
    high: Points | None = None

    OPTIONAL_KEYS: ClassVar[frozenset[str]] = frozenset({"low", "high"})
    """Written only for a series with a spread."""

    def __post_init__(self) -> None:
        if len(self.x) != len(self.y):
            raise GpuConceptsError(
                f"series {self.label!r}: x and y differ in length ({len(self.x)} vs {len(self.y)})"
            )
        if (self.low is None) != (self.high is None):
            raise GpuConceptsError(
                f"series {self.label!r}: give both low and high (the spread's two ends) or neither"
            )
        if self.low is None or self.high is None:
            return
        for name, ends in (("low", self.low), ("high", self.high)):
            if len(ends) != len(self.y):
                raise GpuConceptsError(
                    f"series {self.label!r}: {name} and y differ in length "
                    f"({len(ends)} vs {len(self.y)})"
                )
        for i, (lo, y, hi) in enumerate(zip(self.low, self.y, self.high, strict=True)):
            slack = 1e-9 * abs(y)  # quartiles computed apart from the median may differ by an ulp
            if not lo - slack <= y <= hi + slack:
                raise GpuConceptsError(
                    f"series {self.label!r}: point {i} must lie within its spread "
                    f"(low ≤ y ≤ high); got {lo!r} ≤ {y!r} ≤ {hi!r}"
                )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (``low`` and ``high`` only when the series has a spread)."""
        return to_record(self)


@dataclass(frozen=True)
class PlotSpec:
    """What to draw for a claim; :func:`gpuconcepts.render.plots.claims.draw` turns it into a figure.

    With ``categories`` the plot is a bar chart: each series gives one bar per category
    (its ``x`` are the category positions 0, 1, ...).
    """

    title: str
    x_label: str
    y_label: str
    series: tuple[Series, ...]
    log_x: bool = True
    log_y: bool = True
    hlines: tuple[tuple[str, Annotated[float, ANY_SIGN]], ...] = ()
    vlines: tuple[tuple[str, Annotated[float, ANY_SIGN]], ...] = ()
    categories: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return to_record(self)
