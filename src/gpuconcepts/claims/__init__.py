"""Every measurable claim of the post, judged from measurements of the reader's machine.

Each claim is an experiment: a prediction from :mod:`gpuconcepts.formulas`, a sweep of real
kernels (asked of a :class:`~gpuconcepts.lab.Lab`, so each size is measured once per run), a
plot, and a verdict computed by comparing the measurement with a threshold fixed beforehand
in :mod:`gpuconcepts.claims.thresholds`.

* :mod:`~gpuconcepts.results` — :class:`ClaimResult`, plot specs (values, below the claims);
* :mod:`~gpuconcepts.claims.fit` — power-law exponents, rank trends, crossovers;
* :mod:`~gpuconcepts.claims.quantities` — formulas at a measurement's sizes;
* :mod:`~gpuconcepts.claims.shape` — what several claims share: the statistic, ratio text,
  the power-law and bar-chart builders;
* :mod:`~gpuconcepts.claims.dlrm`, :mod:`~gpuconcepts.claims.mlp`,
  :mod:`~gpuconcepts.claims.cnn`, :mod:`~gpuconcepts.claims.rnn`,
  :mod:`~gpuconcepts.claims.transformer` — one per architecture: its experiment (what it asks
  the lab for) and its judges (measurements in, verdicts out, no kernels run) together;
* :mod:`~gpuconcepts.claims.roofline` — the roofline claims, over the experiments'
  measurements;
* :mod:`~gpuconcepts.claims.experiments` — which sizes each claim needs, :func:`judge_claims`;
* :mod:`~gpuconcepts.render.plots.claims` — one matplotlib renderer for every claim;
* :mod:`~gpuconcepts.claims.verify` — ``gpuconcepts verify`` (:func:`judged`).

Importing this package loads neither torch nor matplotlib.

>>> from gpuconcepts.claims import fit_power_law
>>> round(fit_power_law([1, 2, 4], [1, 4, 16]).exponent, 9)
2.0
"""

from __future__ import annotations

from gpuconcepts.claims.cnn import count_weights
from gpuconcepts.claims.experiments import judge_claims
from gpuconcepts.claims.fit import PowerLawFit, crossing, fit_power_law, fit_upper, rank_correlation
from gpuconcepts.results.claim import ClaimResult
from gpuconcepts.results.claim_sizes import ClaimSizes
from gpuconcepts.results.plot import PlotSpec, Series

__all__ = [
    "ClaimResult",
    "ClaimSizes",
    "PlotSpec",
    "PowerLawFit",
    "Series",
    "count_weights",
    "crossing",
    "fit_power_law",
    "fit_upper",
    "judge_claims",
    "rank_correlation",
]
