r"""Small statistics for the claims: power-law exponents, affine costs, rank trends, crossovers.

numpy only (no scipy): each helper is a few lines of least squares or interpolation,
unit-tested on synthetic data whose answer is known.

>>> fit = fit_power_law([1, 2, 4, 8], [3, 12, 48, 192])
>>> round(fit.exponent, 6), round(fit.prefactor, 6), round(fit.r_squared, 6)
(2.0, 3.0, 1.0)
>>> round(rank_correlation([1, 2, 3, 4], [10, 20, 15, 40]), 2)
0.8
>>> round(crossing([1, 2, 4, 8], [1, 2, 4, 8], level=3.0), 9)
3.0
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gpuconcepts.errors import GpuConceptsError


def _positive(name: str, values: Sequence[float]) -> npt.NDArray[np.float64]:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1:
        raise GpuConceptsError(f"{name} must be a flat sequence; got shape {array.shape}")
    if not np.all(np.isfinite(array)) or np.any(array <= 0):
        raise GpuConceptsError(f"{name} must hold positive finite numbers; got {array.tolist()}")
    return array


@dataclass(frozen=True)
class PowerLawFit:
    """``y ≈ prefactor · x ** exponent``, fitted by least squares on ``log y`` against ``log x``.

    >>> PowerLawFit(exponent=2.0, prefactor=3.0, r_squared=1.0, points=4).predict(10.0)
    300.0
    """

    exponent: float
    prefactor: float
    r_squared: float
    points: int

    def predict(self, x: float) -> float:
        """The fitted curve at ``x``."""
        return float(self.prefactor * x**self.exponent)


def fit_power_law(x: Sequence[float], y: Sequence[float]) -> PowerLawFit:
    """Fit ``y = a · x**p`` by ordinary least squares on the log-log points.

    Needs at least two distinct ``x``; every value must be positive.

    >>> fit = fit_power_law([10, 100, 1000], [5, 50, 500])
    >>> round(fit.exponent, 9)
    1.0
    >>> fit_power_law([1, 1], [1, 2])
    Traceback (most recent call last):
    ...
    gpuconcepts.errors.GpuConceptsError: a power-law fit needs at least two distinct x values; got [1.0, 1.0]
    """
    xs, ys = _positive("x", x), _positive("y", y)
    if xs.shape != ys.shape:
        raise GpuConceptsError(f"x and y must have the same length; got {xs.size} and {ys.size}")
    if np.unique(xs).size < 2:
        raise GpuConceptsError(
            f"a power-law fit needs at least two distinct x values; got {xs.tolist()}"
        )
    lx, ly = np.log(xs), np.log(ys)
    slope, intercept = np.polyfit(lx, ly, 1)
    residual = ly - (intercept + slope * lx)
    spread = float(np.sum((ly - ly.mean()) ** 2))
    r_squared = 1.0 - float(np.sum(residual**2)) / spread if spread > 0 else 1.0
    return PowerLawFit(float(slope), float(np.exp(intercept)), r_squared, int(xs.size))


@dataclass(frozen=True)
class AffineFit:
    """``y ≈ fixed + per_unit · x``, fitted by least squares: a cost paid once and a cost
    paid per unit of ``x`` (per step, per token), apart.

    >>> AffineFit(fixed=2.0, per_unit=0.5, r_squared=1.0, points=3).predict(10.0)
    7.0
    """

    fixed: float
    per_unit: float
    r_squared: float
    points: int

    def predict(self, x: float) -> float:
        """The fitted line at ``x``."""
        return self.fixed + self.per_unit * x


@dataclass(frozen=True)
class AffineHalves:
    """The shorter and the longer half of a sweep (sharing their middle points when the count
    is odd): how the cost per unit bends from one to the other, read as an exponent.

    >>> halves = AffineHalves.of([16, 64, 256, 1024])
    >>> halves.short, halves.long
    ((16, 64, 256), (64, 256, 1024))
    >>> round(halves.exponent([1e-3 + 1e-5 * S for S in (16, 64, 256, 1024)]), 9)
    1.0
    >>> round(halves.exponent([1e-9 * S**2 for S in (16, 64, 256, 1024)]), 2)
    2.0
    """

    short: tuple[float, ...]
    long: tuple[float, ...]

    @classmethod
    def of(cls, x: Sequence[float]) -> AffineHalves:
        """The halves of the sorted points ``x``."""
        k = len(x) // 2 + 1
        return cls(tuple(x[:k]), tuple(x[-k:]))

    def bend(self, y: Sequence[float]) -> float:
        """The cost per unit over the longer half ÷ that over the shorter (1 when linear),
        each fitted by :func:`fit_affine`, so a cost paid once cancels."""
        k = len(self.short)
        return fit_affine(self.long, y[-k:]).per_unit / fit_affine(self.short, y[:k]).per_unit

    def exponent(self, y: Sequence[float]) -> float:
        """The exponent p of ``a·x**p`` whose cost per unit bends so between the halves' mean
        points (1 when each unit adds the same cost, 2 when the cost per unit grows with x)."""
        spread = (self.long[0] + self.long[-1]) / (self.short[0] + self.short[-1])
        # a·x**p costs per unit ∝ x**(p-1) over a range; a slope that fell to 0 or below
        # reads as no growth at all (finite, so an interval stays a number)
        return 1 + math.log(max(self.bend(y), 1e-9)) / math.log(spread)


def fit_affine(x: Sequence[float], y: Sequence[float]) -> AffineFit:
    """Fit ``y = fixed + per_unit · x`` by ordinary least squares.

    A log-log exponent of a time that holds a fixed cost reads that cost as slower growth
    (a millisecond paid once bends ``a + b·S`` to an exponent of 0.7 over a 32-fold sweep);
    the affine fit keeps the two costs apart. Needs at least two distinct ``x``; the ``x``
    must be positive, the ``y`` finite.

    >>> fit = fit_affine([32, 64, 128, 256], [1e-3 + 2e-6 * S for S in (32, 64, 128, 256)])
    >>> round(fit.fixed, 9), round(fit.per_unit, 12), round(fit.r_squared, 9)
    (0.001, 2e-06, 1.0)
    >>> fit_affine([4, 4], [1, 2])
    Traceback (most recent call last):
    ...
    gpuconcepts.errors.GpuConceptsError: an affine fit needs at least two distinct x values; got [4.0, 4.0]
    """
    xs = _positive("x", x)
    ys = np.asarray(y, dtype=np.float64)
    if ys.shape != xs.shape:
        raise GpuConceptsError(f"x and y must have the same length; got {xs.size} and {ys.size}")
    if not np.all(np.isfinite(ys)):
        raise GpuConceptsError(f"y must hold finite numbers; got {ys.tolist()}")
    if np.unique(xs).size < 2:
        raise GpuConceptsError(
            f"an affine fit needs at least two distinct x values; got {xs.tolist()}"
        )
    slope, intercept = np.polyfit(xs, ys, 1)
    residual = ys - (intercept + slope * xs)
    spread = float(np.sum((ys - ys.mean()) ** 2))
    r_squared = 1.0 - float(np.sum(residual**2)) / spread if spread > 0 else 1.0
    return AffineFit(float(intercept), float(slope), r_squared, int(xs.size))


def fit_upper(
    x: Sequence[float], y: Sequence[float], *, fraction: float = 0.5, min_points: int = 3
) -> PowerLawFit:
    """Power-law fit over the largest ``fraction`` of the ``x`` values (at least ``min_points``).

    Asymptotic claims ("time grows like S² for large S") are about the upper end of a sweep,
    where fixed overheads no longer hide the scaling.

    >>> xs = [1, 2, 4, 8, 16, 32, 64, 128]
    >>> ys = [100 + v**2 for v in xs]          # a fixed overhead, then S²
    >>> round(fit_upper(xs, ys).exponent, 2), round(fit_power_law(xs, ys).exponent, 2)
    (1.85, 1.06)
    """
    if not 0 < fraction <= 1:
        raise GpuConceptsError(f"fraction must be in (0, 1]; got {fraction}")
    order = np.argsort(np.asarray(x, dtype=np.float64), kind="stable")
    count = min(len(order), max(min_points, int(np.ceil(fraction * len(order)))))
    chosen = order[-count:]
    return fit_power_law([float(x[i]) for i in chosen], [float(y[i]) for i in chosen])


def _ranks(values: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    order = np.argsort(values, kind="stable")
    ranks = np.empty(values.size, dtype=np.float64)
    ranks[order] = np.arange(values.size, dtype=np.float64)
    for value in np.unique(values):  # ties share their mean rank
        tied = values == value
        ranks[tied] = ranks[tied].mean()
    return ranks


def rank_correlation(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rank correlation: +1 when ``y`` rises with ``x`` at every step, -1 when it falls.

    A trend test that one noisy point cannot fake or break the way a first/last ratio can.

    >>> rank_correlation([1, 2, 3], [5, 6, 7]), rank_correlation([1, 2, 3], [7, 6, 5])
    (1.0, -1.0)
    """
    xs, ys = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if xs.shape != ys.shape or xs.size < 2:
        raise GpuConceptsError(
            f"rank correlation needs two sequences of equal length >= 2; got {xs.size} and {ys.size}"
        )
    rx, ry = _ranks(xs), _ranks(ys)
    if np.ptp(rx) == 0 or np.ptp(ry) == 0:
        return 0.0
    return float(np.corrcoef(rx, ry)[0, 1])


def crossing(x: Sequence[float], y: Sequence[float], *, level: float) -> float | None:
    """The first ``x`` at which ``y`` reaches ``level``, interpolated on log-log axes.

    ``None`` when ``y`` never reaches ``level``; ``x[0]`` when it starts there already.
    ``x`` must be increasing.

    >>> crossing([1, 4], [1, 16], level=4.0)
    2.0
    >>> crossing([1, 2], [1, 2], level=5.0) is None
    True
    """
    xs, ys = _positive("x", x), _positive("y", y)
    if xs.shape != ys.shape:
        raise GpuConceptsError(f"x and y must have the same length; got {xs.size} and {ys.size}")
    if np.any(np.diff(xs) <= 0):
        raise GpuConceptsError(f"x must be strictly increasing; got {xs.tolist()}")
    if level <= 0:
        raise GpuConceptsError(f"level must be positive; got {level}")
    above = np.nonzero(ys >= level)[0]
    if above.size == 0:
        return None
    i = int(above[0])
    if i == 0:
        return float(xs[0])
    lx0, lx1, ly0, ly1 = np.log(xs[i - 1]), np.log(xs[i]), np.log(ys[i - 1]), np.log(ys[i])
    t = (np.log(level) - ly0) / (ly1 - ly0)
    return float(np.exp(lx0 + t * (lx1 - lx0)))
