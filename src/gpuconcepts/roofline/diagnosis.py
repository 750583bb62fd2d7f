"""Why a kernel misses its roof: mechanisms measured apart from it, shown beside the verdict.

A diagnosis is the least time one mechanism allows the kernel, from a sweep measured once with
the peaks (:class:`~gpuconcepts.roofline.peaks.Peaks`), never from the kernel's own operations.
Each is one object of :data:`~gpuconcepts.roofline.mechanisms.DIAGNOSES`, and this module
loops over them:

* **shape efficiency**: its matrix products at the rate the GEMM sweep's product of their
  shape reached (a product of few rows cannot fill the vector units), and on a CPU its
  activation at the measured activation rate; **fused kernel** for a kernel whose products run
  fused (flash attention), read the same way;
* **cold start**: its bytes read right after a cache flush, from the cold sweep;
* **operation chain**: a kernel of dependent steps, its operations at their dispatch floors,
  in turn (on a CPU the thread that dispatches them then computes, so its arithmetic adds);
* **random access**: its rows as whole lines at the random-access sweep's rate of line fetches;
* a diagnosis with a sweep of its own (``Peaks.rate_sweeps``), such as the **depthwise
  stencil**: its count at the rate that sweep's canonical call reached.

A diagnosis never changes the verdict (:func:`~gpuconcepts.roofline.roofs.verdict`): it says
how much of the time below the roof a measured mechanism accounts for.

>>> from gpuconcepts.measure import Measurement
>>> from gpuconcepts.roofline.peaks import Peaks
>>> p = Peaks("cpu", 1e11, 1e10, "float32", latency_seconds=2e-6, op_seconds=1e-6)
>>> loop = Measurement("rnn-loop", "cpu", {}, (5e-3,), 2e6, 1e5, ops=4096, steps=1024)
>>> d = diagnosis(loop, p)
>>> d.mechanism, round(d.seconds * 1e3, 3), round(d.share(loop), 2)
('operation chain', 4.116, 0.82)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuconcepts.roofline.mechanisms import (
    COLD_START,
    DIAGNOSES,
    FUSED,
    OPERATION_CHAIN,
    RANDOM_ACCESS,
    SHAPE,
    Diagnosis,
    product_call_seconds,
    shape_seconds,
)
from gpuconcepts.roofline.references import paired_peaks
from gpuconcepts.roofline.roofs import verdict

if TYPE_CHECKING:
    from gpuconcepts.measurement import Measurement
    from gpuconcepts.roofline.peaks import Peaks

MECHANISMS = (SHAPE, FUSED, COLD_START, OPERATION_CHAIN, RANDOM_ACCESS)
"""The mechanisms a diagnosis names by a fixed name (a swept one is named by its sweep)."""

TOLERANCE = 1.1
"""How far beyond the slow end of its spread a kernel may beat a diagnosis that still explains
it: a diagnosis is another measurement, at another moment, and two measurements of one thing
differ by a few percent on a busy machine (issue 21 allows 10 %)."""

__all__ = [
    "COLD_START",
    "FUSED",
    "MECHANISMS",
    "OPERATION_CHAIN",
    "RANDOM_ACCESS",
    "SHAPE",
    "TOLERANCE",
    "Diagnosis",
    "diagnoses",
    "diagnosis",
    "product_call_seconds",
    "shape_seconds",
]


def diagnoses(m: Measurement, peaks: Peaks) -> tuple[Diagnosis, ...]:
    """Every mechanism of :data:`~gpuconcepts.roofline.mechanisms.DIAGNOSES` that applies to
    ``m`` and was measured, with the least time it allows."""
    peaks = paired_peaks(m, peaks)
    return tuple(found for mechanism in DIAGNOSES for found in mechanism.diagnose(m, peaks))


def diagnosis(m: Measurement, peaks: Peaks) -> Diagnosis | None:
    """The mechanism that accounts for most of ``m``'s time beyond its roof: of the diagnoses
    longer than the roof's bound, the longest that ``m`` did not beat by more than
    :data:`TOLERANCE` beyond its spread. None when no measured mechanism goes past the roof."""
    roof = verdict(m, peaks).roof_seconds
    slowest = m.interval_seconds[1] * TOLERANCE
    past = [d for d in diagnoses(m, peaks) if roof < d.seconds <= slowest]
    return max(past, key=lambda d: d.seconds, default=None)
