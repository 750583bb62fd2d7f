"""What several claims share: the statistic they compare, and two result builders.

Claims of one shape share one builder: a power law in S (:func:`_power_law`, for the RNN and
attention sweeps) and a bar chart of measured against predicted (:func:`_bars`, for the DLRM,
CNN, RNN and Transformer comparisons). The architecture modules import them from here.
Ratios and percentages are printed by :mod:`gpuconcepts.units` (``times``, ``percent``), the
book's one number policy.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from gpuconcepts.claims.fit import fit_power_law, fit_upper
from gpuconcepts.claims.quantities import formula_along, param, size_values, sorted_sweep
from gpuconcepts.claims.result import ClaimResult, PlotSpec, Series
from gpuconcepts.formula import Formula
from gpuconcepts.measure import Measurement
from gpuconcepts.units import plain_number, si


def _seconds(m: Measurement) -> float:
    """The book's one statistic of a measurement (its median, see Measurement.seconds)."""
    return m.seconds


def _ends(intervals: Iterable[tuple[float, float]]) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """A series' ``low`` and ``high`` from each point's interval (e.g. ``interval_seconds``)."""
    pairs = tuple(intervals)
    return tuple(lo for lo, _ in pairs), tuple(hi for _, hi in pairs)


# -- building results ------------------------------------------------------------------------
def _bars(
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
    low, high = _ends(spread) if spread else (None, None)
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


def _power_law(
    sweep: Sequence[Measurement],
    formula: Formula,
    *,
    exponent: float,
    tolerance: float,
    fixed: Sequence[str],
    what: str,
    key: str,
    architecture: str,
    claim: str,
    title: str,
    device: str,
) -> ClaimResult:
    """Time grows like S**exponent: the exponent fitted on the upper half of a sweep over S.

    The prediction is the exponent of ``formula`` (the FLOP count) over the same sweep;
    ``title`` is completed with the sizes the sweep holds fixed.
    """
    ordered = sorted_sweep(sweep, "S", fixed=fixed, what=what)
    lengths = size_values(ordered, "S")
    seconds = tuple(_seconds(m) for m in ordered)
    low, high = _ends(m.interval_seconds for m in ordered)
    flops = formula_along(formula, ordered)
    predicted = fit_power_law(lengths, flops).exponent
    fit = fit_upper(lengths, seconds)
    fitted = lengths[-fit.points :]
    held = ", ".join(f"{name}={param(ordered[0], name)}" for name in fixed)
    first, last = plain_number(lengths[0]), plain_number(lengths[-1])
    return ClaimResult(
        key=key,
        architecture=architecture,
        claim=claim,
        prediction=f"{formula.text()}: exponent {predicted:.3g} in S ({held})",
        measured=f"time ∝ S^{fit.exponent:.2f} fitted over S = {plain_number(fitted[0])} … "
        f"{last} (R² {fit.r_squared:.3f}); {si(seconds[0], 's')} at S={first}, "
        f"{si(seconds[-1], 's')} at S={last}",
        threshold=f"|exponent − {exponent:g}| ≤ {tolerance:g} "
        "(upper half of the sweep, at least 3 points)",
        verdict=abs(fit.exponent - exponent) <= tolerance,
        device=device,
        values={
            "exponent": fit.exponent,
            "predicted_exponent": predicted,
            "r_squared": fit.r_squared,
            "fit_points": fit.points,
        },
        plot=PlotSpec(
            title=f"{title} ({held})",
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
                    f"fit: S^{fit.exponent:.2f}",
                    fitted,
                    tuple(fit.predict(x) for x in fitted),
                    role="threshold",
                ),
            ),
        ),
    )
