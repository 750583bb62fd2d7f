"""A claim's prediction as a number the measurement tests, and the test of that number.

A kernel's predicted time is the tightest bound the once-measured ceilings put on it
(:func:`predicted_seconds`): its FLOPs at the compute peak, its bytes at each memory level,
and, where the kernel's kind has one, the GEMM sweep's rate for a product of its shape, the
random-access sweep's line rate, and the per-call or chain floor
(:func:`~gpuconcepts.roofline.roofs_at` with the run's :class:`~gpuconcepts.roofline.Peaks`).
Each of those was measured apart from the claim's kernels, by the peaks' microbenchmarks:
nothing the claim times feeds its own prediction (the references a kernel was timed beside
are left out on purpose).

A claim whose prediction is such a number passes only within :data:`PREDICTION_FACTOR` of it
(:func:`prediction_region`); :func:`within_prediction` says whether a result measured there,
and :func:`share_within` counts a run's results.

>>> prediction_region(4.0)
(2.0, 8.0)
>>> from gpuconcepts.claims.result import example
>>> within_prediction(example(4.0)), within_prediction(example(20.0))
(True, False)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from gpuconcepts.claims.thresholds import PREDICTION_FACTOR
from gpuconcepts.errors import GpuConceptsError

if TYPE_CHECKING:
    from gpuconcepts.claims.result import ClaimResult, TwoSided
    from gpuconcepts.measure import Measurement
    from gpuconcepts.roofline import Peaks


def predicted_seconds(m: Measurement, peaks: Peaks) -> float:
    """The time the once-measured ceilings predict for ``m``: the longest of its roofs'
    bounds under ``peaks`` (compute, each memory level, the GEMM shape, random access, the
    per-call or chain floor; see :func:`~gpuconcepts.roofline.roofs_at`), never its own
    references.

    >>> from gpuconcepts.measure import Measurement
    >>> from gpuconcepts.roofline import Peaks
    >>> p = Peaks("cpu", 1e11, 1e10, "float32", latency_seconds=2e-6)  # a call: 2 µs, then its FLOPs
    >>> predicted_seconds(Measurement("mlp", "cpu", {}, (1.0,), 1e9, 1e6), p)  # compute
    0.01
    >>> predicted_seconds(Measurement("mlp", "cpu", {}, (1.0,), 1e3, 1e3, calls=1), p)  # a call
    2.01e-06
    """
    from gpuconcepts.roofline import roofs_at  # noqa: PLC0415  (the claims' modules import this)

    return max(t for _, t in roofs_at(m, peaks))


def predicted_rate(m: Measurement, peaks: Peaks, *, of: str = "flops") -> float:
    """``m``'s work per second at its :func:`predicted_seconds` (``of``: ``"flops"`` or
    ``"bytes"``).

    >>> from gpuconcepts.measure import Measurement
    >>> from gpuconcepts.roofline import Peaks
    >>> predicted_rate(Measurement("mlp", "cpu", {}, (1.0,), 1e9, 1e6),
    ...                Peaks("cpu", 1e11, 1e10, "float32"))
    100000000000.0
    """
    if of not in ("flops", "bytes"):
        raise GpuConceptsError(f"predicted_rate: of must be 'flops' or 'bytes'; got {of!r}")
    work = m.flops if of == "flops" else m.bytes
    return work / predicted_seconds(m, peaks)


def prediction_region(predicted: float) -> tuple[float, float]:
    """The pass region of a claim that predicts ``predicted``: within
    :data:`~gpuconcepts.claims.thresholds.PREDICTION_FACTOR` of it on either side.

    >>> prediction_region(1.0)
    (0.5, 2.0)
    >>> prediction_region(-1.0)
    Traceback (most recent call last):
    ...
    gpuconcepts.errors.GpuConceptsError: prediction_region: predicted must be a positive finite number (a ratio or a time); got -1.0
    """
    if not (math.isfinite(predicted) and predicted > 0):
        raise GpuConceptsError(
            "prediction_region: predicted must be a positive finite number (a ratio or a "
            f"time); got {predicted!r}"
        )
    return predicted / PREDICTION_FACTOR, predicted * PREDICTION_FACTOR


def numeric(test: TwoSided) -> bool:
    """True when ``test``'s prediction is a positive finite number and its measurement a
    finite one: a claim whose measured ÷ predicted means something."""
    p, m = test.predicted, test.measured
    return math.isfinite(p) and p > 0 and math.isfinite(m)


def measured_over_predicted(test: TwoSided) -> float | None:
    """measured ÷ predicted of ``test`` (None when either is not a number, see
    :func:`numeric`)."""
    return test.measured / test.predicted if numeric(test) else None


def within_prediction(result: ClaimResult) -> bool | None:
    """Whether ``result`` measured within :data:`~gpuconcepts.claims.thresholds.PREDICTION_FACTOR`
    of its prediction (None when its prediction or measurement is not a number)."""
    ratio = measured_over_predicted(result.test)
    if ratio is None:
        return None
    return 1 / PREDICTION_FACTOR <= ratio <= PREDICTION_FACTOR


def region_within(test: TwoSided) -> bool:
    """True when ``test``'s pass region is closed and lies within
    :data:`~gpuconcepts.claims.thresholds.PREDICTION_FACTOR` of its prediction.

    >>> from gpuconcepts.claims.result import TwoSided
    >>> region_within(TwoSided("r", 4.0, "none", 1.0, 2.0, 8.0, 3.0, (3.0, 3.0)))
    True
    >>> region_within(TwoSided("r", 4.0, "none", 1.0, 2.0, None, 3.0, (3.0, 3.0)))
    False
    """
    if not numeric(test) or test.low is None or test.high is None:
        return False
    low, high = prediction_region(test.predicted)
    slack = 1e-9 * test.predicted
    return test.low >= low - slack and test.high <= high + slack


def share_within(results: Sequence[ClaimResult]) -> tuple[int, int]:
    """How many of ``results`` measured within
    :data:`~gpuconcepts.claims.thresholds.PREDICTION_FACTOR` of their prediction, and how many
    have a numeric prediction and measurement (:func:`numeric`) at all.

    >>> from gpuconcepts.claims.result import example
    >>> share_within([example(4.0), example(20.0), example(9.0)])
    (2, 3)
    """
    found = [within_prediction(r) for r in results]
    return sum(1 for w in found if w), sum(1 for w in found if w is not None)
