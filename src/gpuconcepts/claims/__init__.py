"""Every measurable claim of the post, judged from measurements of the reader's machine.

Each claim is an experiment: a prediction from :mod:`gpuconcepts.formulas`, a sweep of real
kernels (measured by a :class:`~gpuconcepts.lab.Lab` when a run is collected, each size once,
and read back by the judges from the run's measurements,
:class:`~gpuconcepts.results.measured.Measured`), a plot, and a verdict computed by comparing
the measurement with a threshold fixed beforehand in :mod:`gpuconcepts.claims.thresholds`.

* :mod:`~gpuconcepts.results` — :class:`ClaimResult`, plot specs (values, below the claims);
* :mod:`~gpuconcepts.claims.fit` — power-law exponents, rank trends, crossovers;
* :mod:`~gpuconcepts.claims.quantities` — formulas at a measurement's sizes;
* :mod:`~gpuconcepts.claims.shape` — what several claims share: the statistic, ratio text,
  the power-law and bar-chart builders;
* :mod:`~gpuconcepts.claims.dlrm`, :mod:`~gpuconcepts.claims.mlp`,
  :mod:`~gpuconcepts.claims.cnn`, :mod:`~gpuconcepts.claims.rnn`,
  :mod:`~gpuconcepts.claims.transformer` — one per architecture: its experiment (what it needs
  measured: :class:`~gpuconcepts.claims.plan.Experiment`) and its judges (measurements in,
  verdicts out, no kernels run) together, with :mod:`~gpuconcepts.claims.lookups` (DLRM's row
  widths) and :mod:`~gpuconcepts.claims.rnn_steps` (the RNN's step loop and batch);
* :mod:`~gpuconcepts.claims.wholemodel`, :mod:`~gpuconcepts.claims.decode` — the whole model's
  claims;
* :mod:`~gpuconcepts.claims.roofline` — the roofline claims, over the experiments'
  measurements;
* :mod:`~gpuconcepts.claims.experiments` — every claim's experiments measured
  (:func:`~gpuconcepts.claims.experiments.measure_claims`) and judged (:func:`judge_claims`);
* :mod:`~gpuconcepts.claims.collectives`, :mod:`~gpuconcepts.claims.distributed` — the claims
  beyond one device, judged from a distributed run's report;
* :mod:`~gpuconcepts.render.plots.claims` — one matplotlib renderer for every claim, and
  :mod:`~gpuconcepts.verify` (``gpuconcepts verify``), at the top, above the judges.

The names below are re-exported here lazily (PEP 562: a name is imported when it is first
asked for), so importing the package alone loads none of its modules, and neither torch nor
matplotlib.

>>> from gpuconcepts.claims import fit_power_law
>>> round(fit_power_law([1, 2, 4], [1, 4, 16]).exponent, 9)
2.0
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuconcepts.lazy import reexports

if TYPE_CHECKING:
    from gpuconcepts.claims.cnn import count_weights as count_weights
    from gpuconcepts.claims.experiments import judge_claims as judge_claims
    from gpuconcepts.claims.fit import PowerLawFit as PowerLawFit
    from gpuconcepts.claims.fit import crossing as crossing
    from gpuconcepts.claims.fit import fit_power_law as fit_power_law
    from gpuconcepts.claims.fit import fit_upper as fit_upper
    from gpuconcepts.claims.fit import rank_correlation as rank_correlation
    from gpuconcepts.results.claim import ClaimResult as ClaimResult
    from gpuconcepts.results.claim_sizes import ClaimSizes as ClaimSizes
    from gpuconcepts.results.plot import PlotSpec as PlotSpec
    from gpuconcepts.results.plot import Series as Series

EXPORTS = {
    "gpuconcepts.claims.cnn": ("count_weights",),
    "gpuconcepts.claims.experiments": ("judge_claims",),
    "gpuconcepts.claims.fit": (
        "PowerLawFit",
        "crossing",
        "fit_power_law",
        "fit_upper",
        "rank_correlation",
    ),
    "gpuconcepts.results.claim": ("ClaimResult",),
    "gpuconcepts.results.claim_sizes": ("ClaimSizes",),
    "gpuconcepts.results.plot": ("PlotSpec", "Series"),
}
"""Each module's names this package re-exports (the ``TYPE_CHECKING`` block says the same for
the type checker; ``tests/test_imports.py`` checks that they agree)."""

__getattr__, __dir__ = reexports(__name__, globals(), EXPORTS)
