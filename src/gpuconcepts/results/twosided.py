"""A claim as a test: :class:`TwoSided`, the prediction, the alternative it must rule out, the
pass region and the measured value with its interval."""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.units import measured_or_dash, number


def _one_nan(x: float) -> float:
    """``math.nan`` itself for any nan (see :meth:`TwoSided.__post_init__`)."""
    return math.nan if math.isnan(x) else x


def short(x: float) -> str:
    """A claim's value for people: three significant digits (the values are ratios,
    exponents and fractions; the detail text shows the times behind them), "—" where the
    run measured none (see :func:`~gpuconcepts.units.measured_or_dash`)."""
    return measured_or_dash(x, number)


@dataclass(frozen=True)
class TwoSided:
    """A claim as a test: the prediction, the alternative it must rule out, the pass region,
    and the measured value with its interval.

    The pass region ``low ≤ quantity ≤ high`` (either end may be open: None) states the claim
    as the post does, fixed before the runs it judges (each change is dated in the change
    log), and leaves the alternative out. The claim holds
    only when the whole measured interval lies inside it. When the alternative falls inside
    the region, no measurement could tell the two apart: the claim is "not visible". The
    ``predicted`` value (the model's, from the measured ceilings) is shown beside the claim and
    never enters its verdict, "not visible" included (ledger 1, issue 45): how close it came
    is ledger 2's. A prediction outside the region is the model disagreeing with the post, a
    finding for ledger 2, not a reason to hide the measurement.

    >>> t = TwoSided("sequential ÷ random bandwidth", predicted=4.0,
    ...              alternative="random rows stream as fast as consecutive ones",
    ...              alternative_value=1.0, low=2.0, high=None,
    ...              measured=3.1, interval=(2.8, 3.4))
    >>> t.region_text(), t.inside, t.distinguishes
    ('sequential ÷ random bandwidth ≥ 2', True, True)
    >>> TwoSided("r", 4.0, "one", 1.0, 2.0, None, 2.5, (1.9, 2.7)).inside
    False
    >>> TwoSided("r", 1.4, "one", 1.0, 2.0, None, 1.3, (1.2, 1.4)).distinguishes  # a small model gap
    True
    """

    quantity: str
    predicted: float
    alternative: str
    alternative_value: float
    low: float | None
    high: float | None
    measured: float
    interval: tuple[float, float]

    def __post_init__(self) -> None:
        if self.low is None and self.high is None:
            raise GpuConceptsError(f"{self.quantity}: the pass region needs at least one bound")
        # "not measured" is one value: nan is unequal to itself but tuples compare by identity
        # first, so one shared nan lets a run read back from its file equal the run it was
        object.__setattr__(self, "measured", _one_nan(self.measured))
        object.__setattr__(self, "interval", tuple(_one_nan(x) for x in self.interval))
        if self.low is not None and self.high is not None and self.low > self.high:
            raise GpuConceptsError(
                f"{self.quantity}: the pass region needs low ≤ high; got {self.low}, {self.high}"
            )
        low, high = self.interval
        # nan: unmeasured; an end read back as nan was an infinity JSON could not hold (an
        # open end, "never"), which holds any value on its side
        above = math.isnan(low) or low <= self.measured
        below = math.isnan(high) or self.measured <= high
        if not math.isnan(self.measured) and not (above and below):
            raise GpuConceptsError(
                f"{self.quantity}: the interval [{number(low)}, {number(high)}] must hold the measured "
                f"value {number(self.measured)}"
            )

    def contains(self, x: float) -> bool:
        """True when ``x`` lies in the pass region (ends included)."""
        return (self.low is None or x >= self.low) and (self.high is None or x <= self.high)

    @property
    def inside(self) -> bool:
        """True when the whole measured interval lies in the pass region."""
        return self.contains(self.interval[0]) and self.contains(self.interval[1])

    @property
    def outside(self) -> bool:
        """True when the whole measured interval lies outside the pass region (on one side)."""
        low, high = self.interval
        return (self.low is not None and high < self.low) or (
            self.high is not None and low > self.high
        )

    @property
    def anomalous(self) -> bool:
        """True when the whole interval lies beyond the alternative, on the side away from the
        pass region: the measurement contradicts the post's statement more than the
        alternative does (e.g. consecutive rows slower than random ones), which is a faulty
        measurement or a missing piece of physics. The side is the region's, never the
        prediction's (ledger 1 reads no prediction).

        >>> TwoSided("r", 4.0, "no gap", 1.0, 2.0, None, 0.2, (0.1, 0.3)).anomalous
        True
        >>> TwoSided("r", 4.0, "no gap", 1.0, 2.0, None, 0.9, (0.8, 1.1)).anomalous
        False
        >>> TwoSided("r", 0.5, "no gap", 1.0, 2.0, None, 0.2, (0.1, 0.3)).anomalous  # same side
        True
        """
        low, high = self.interval
        alternative = self.alternative_value
        if self.low is not None and self.low > alternative:  # the region lies above it
            return high < alternative
        if self.high is not None and self.high < alternative:  # the region lies below it
            return low > alternative
        return False

    def edge_crossed(self) -> float | None:
        """The edge of the pass region the interval straddles (None when it straddles none)."""
        low, high = self.interval
        for edge in (self.low, self.high):
            if edge is not None and low < edge < high:
                return edge
        return None

    @property
    def distinguishes(self) -> bool:
        """False when the test cannot tell the post's statement from the alternative: the
        alternative falls inside the pass region. The prediction plays no part (see the class
        docstring)."""
        return not self.contains(self.alternative_value)

    def region_text(self) -> str:
        """The pass region for people, e.g. ``"ratio ≥ 2"`` or ``"1.7 ≤ exponent ≤ 2.3"``."""
        if self.low is not None and self.high is not None and self.low != self.high:
            return f"{short(self.low)} ≤ {self.quantity} ≤ {short(self.high)}"
        return f"{self.quantity} {self.bounds_text()}"

    def bounds_text(self) -> str:
        """The pass region's bounds alone, e.g. ``"≥ 2"`` or ``"0.2 to 1.5"``."""
        if self.low is not None and self.high is not None:
            if self.low == self.high:
                return f"= {short(self.low)}"
            return f"{short(self.low)} to {short(self.high)}"
        if self.low is not None:
            return f"≥ {short(self.low)}"
        return f"≤ {short(self.high)}"  # type: ignore[arg-type]  # one bound is set

    def interval_text(self) -> str:
        """The measured interval, e.g. ``"[2.8, 3.4]"``."""
        low, high = self.interval
        return f"[{short(low)}, {short(high)}]"
