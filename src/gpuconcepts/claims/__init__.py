"""Every measurable claim of the post, checked on the reader's machine.

Each claim is an experiment: a prediction from :mod:`gpuconcepts.formulas`, a sweep of real
kernels from :mod:`gpuconcepts.kernels`, a plot, and a verdict computed by comparing the
measurement with a threshold fixed beforehand in :mod:`gpuconcepts.claims.thresholds`.

* :mod:`~gpuconcepts.claims.result` — :class:`ClaimResult`, :class:`ClaimsReport`, plot specs;
* :mod:`~gpuconcepts.claims.fit` — power-law exponents, rank trends, crossovers;
* :mod:`~gpuconcepts.claims.quantities` — measured rates, and formulas at a measurement's sizes;
* :mod:`~gpuconcepts.claims.judge` — measurements in, verdicts out (no kernels run);
* :mod:`~gpuconcepts.claims.experiments` — the sweeps, sizes per device, :func:`run_claims`;
* :mod:`~gpuconcepts.claims.plots` — one matplotlib renderer for every claim;
* :mod:`~gpuconcepts.claims.verify` — ``gpuconcepts verify`` (:func:`run_verify`).

Importing this package loads neither torch nor matplotlib.

>>> from gpuconcepts.claims import fit_power_law
>>> round(fit_power_law([1, 2, 4], [1, 4, 16]).exponent, 9)
2.0
"""

from __future__ import annotations

from gpuconcepts.claims.experiments import SIZES, ClaimSizes, count_weights, run_claims, sizes_for
from gpuconcepts.claims.fit import PowerLawFit, crossing, fit_power_law, fit_upper, rank_correlation
from gpuconcepts.claims.result import ClaimResult, ClaimsReport, PlotSpec, Series
from gpuconcepts.claims.verify import format_report, format_result, run_verify

__all__ = [
    "SIZES",
    "ClaimResult",
    "ClaimSizes",
    "ClaimsReport",
    "PlotSpec",
    "PowerLawFit",
    "Series",
    "count_weights",
    "crossing",
    "fit_power_law",
    "fit_upper",
    "format_report",
    "format_result",
    "rank_correlation",
    "run_claims",
    "run_verify",
    "sizes_for",
]
