"""What several claims share: the statistic they compare, and two result builders.

Claims of one shape share one builder: a power law in S (:func:`power_law`, for the
attention sweep) and a bar chart of measured against predicted (:func:`bars`, for the DLRM,
CNN, RNN and Transformer comparisons). The architecture modules import them from here.
Ratios and percentages are printed by :mod:`gpuconcepts.units` (``times``, ``percent``), the
book's one number policy.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from gpuconcepts.claims.fit import PowerLawFit, fit_power_law, fit_upper
from gpuconcepts.claims.quantities import (
    formula_along,
    param,
    size_values,
    sizes,
    sorted_sweep,
    time_each,
    with_interval,
)
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.formula import Formula
from gpuconcepts.measure import Measurement
from gpuconcepts.results.claim import ClaimResult
from gpuconcepts.results.plot import PlotSpec, Series
from gpuconcepts.results.twosided import TwoSided
from gpuconcepts.units import number, plain_number


def median_seconds(m: Measurement) -> float:
    """The book's one statistic of a measurement (its median, see Measurement.seconds)."""
    return m.seconds


def interval_ends(
    intervals: Iterable[tuple[float, float]],
) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """A series' ``low`` and ``high`` from each point's interval (e.g. ``interval_seconds``)."""
    pairs = tuple(intervals)
    return tuple(lo for lo, _ in pairs), tuple(hi for _, hi in pairs)


# -- building results ------------------------------------------------------------------------
def bars(
    title: str,
    x_label: str,
    y_label: str,
    categories: tuple[str, ...],
    measured: tuple[float, ...],
    predicted: tuple[float, ...] = (),
    *,
    labels: tuple[str, str] = ("measured", "roofline"),
    log_y: bool = True,
    hlines: tuple[tuple[str, float], ...] = (),
    spread: Sequence[tuple[float, float]] = (),
) -> PlotSpec:
    """A bar chart of one measured value per category, beside its prediction when given.

    ``spread`` gives each measured value's interval (low, high), drawn as error bars.
    """
    at = tuple(float(i) for i in range(len(categories)))
    low, high = interval_ends(spread) if spread else (None, None)
    series = [Series(labels[0], at, measured, low=low, high=high)]
    if predicted:
        series.append(Series(labels[1], at, predicted, role="predicted"))
    return PlotSpec(
        title,
        x_label,
        y_label,
        tuple(series),
        log_x=False,
        log_y=log_y,
        hlines=hlines,
        categories=categories,
    )


@dataclass(frozen=True)
class Counterpart:
    """The alternative of a claim over a sweep, measured rather than assumed: the same work
    without the effect (e.g. an RNN's FLOPs as one GEMM, with no step dependency), over the
    same sweep (:func:`counterpart_sweep` checks it)."""

    alternative: str
    """The alternative in words, e.g. "the steps run in parallel, as the GEMM does"."""
    label: str
    """Its line in the plot, e.g. "one GEMM of the same FLOPs"."""
    sweep: Sequence[Measurement]


def power_law(
    sweep: Sequence[Measurement],
    formula: Formula,
    *,
    exponent: float,
    tolerance: float,
    alternative: tuple[str, float],
    fixed: Sequence[str],
    what: str,
    key: str,
    architecture: str,
    claim: str,
    title: str,
    device: str,
) -> ClaimResult:
    """Time grows like S**exponent: the exponent fitted on the upper half of a sweep over S
    (at least three points).

    The prediction is the exponent of ``formula`` (the FLOP count) over the same sweep; the
    pass region is ``exponent ± tolerance``; ``alternative`` names the law to rule out and its
    exponent. ``title`` is completed with the sizes the sweep holds fixed.
    """
    ordered = sorted_sweep(sweep, "S", fixed=fixed, what=what)
    lengths = size_values(ordered, "S")
    seconds = tuple(median_seconds(m) for m in ordered)
    flops = formula_along(formula, ordered)
    predicted = fit_power_law(lengths, flops).exponent
    fit = fit_upper(lengths, seconds)
    fitted_exponent, interval = with_interval(lambda t: fit_upper(lengths, t).exponent, ordered)
    held = ", ".join(f"{name}={param(ordered[0], name)}" for name in fixed)
    first, last = plain_number(lengths[0]), plain_number(lengths[-1])
    return ClaimResult(
        key=key,
        architecture=architecture,
        claim=claim,
        prediction=f"{formula.text()}: exponent {number(predicted)} in S ({held})",
        test=TwoSided(
            "fitted exponent of time in S",
            predicted=predicted,
            alternative=alternative[0],
            alternative_value=alternative[1],
            low=exponent - tolerance,
            high=exponent + tolerance,
            measured=fitted_exponent,
            interval=interval,
        ),
        detail=f"fitted over S = {number(lengths[-fit.points])} … {last} (R² "
        f"{number(fit.r_squared)}); {time_each(ordered[0])} at S={first}, "
        f"{time_each(ordered[-1])} at S={last}",
        device=device,
        values={
            "exponent": fit.exponent,
            "predicted_exponent": predicted,
            "r_squared": fit.r_squared,
            "fit_points": fit.points,
        },
        plot=_power_plot(ordered, formula, fit, f"{title} ({held})"),
    )


def _power_plot(
    ordered: Sequence[Measurement], formula: Formula, fit: PowerLawFit, title: str
) -> PlotSpec:
    """Time over S with its spread, the formula's growth anchored at the largest S, and the fit
    over the points it used."""
    lengths = size_values(ordered, "S")
    seconds = tuple(median_seconds(m) for m in ordered)
    flops = formula_along(formula, ordered)
    low, high = interval_ends(m.interval_seconds for m in ordered)  # the error bars
    fitted = lengths[-fit.points :]
    return PlotSpec(
        title=title,
        x_label="sequence length S",
        y_label="seconds",
        series=(
            Series("measured", lengths, seconds, low=low, high=high),
            Series(
                f"∝ {formula.name} (anchored at the largest S)",
                lengths,
                tuple(seconds[-1] * f / flops[-1] for f in flops),
                role="predicted",
            ),
            Series(
                f"fit: S^{number(fit.exponent, 2)}",
                fitted,
                tuple(fit.predict(x) for x in fitted),
                role="threshold",
            ),
        ),
    )


def counterpart_sweep(
    counterpart: Counterpart, ordered: Sequence[Measurement], *, fixed: Sequence[str], what: str
) -> list[Measurement]:
    """The counterpart's sweep sorted, checked against the claim's own: the same S, the same
    fixed sizes, the same FLOPs at each S."""
    other = sorted_sweep(counterpart.sweep, "S", fixed=fixed, what=f"{what}'s counterpart")
    if size_values(other, "S") != size_values(ordered, "S"):
        raise GpuConceptsError(
            f"{what} and its counterpart must cover the same S; got "
            f"{[param(m, 'S') for m in ordered]} and {[param(m, 'S') for m in other]}"
        )
    if any(
        sizes(a, *fixed) != sizes(b, *fixed) or a.flops != b.flops
        for a, b in zip(ordered, other, strict=True)
    ):
        raise GpuConceptsError(
            f"{what} and its counterpart must do the same FLOPs at the same "
            f"{', '.join(fixed)} at each S"
        )
    return other
