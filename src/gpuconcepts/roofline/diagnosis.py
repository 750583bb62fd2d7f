"""Why a kernel misses its roof: mechanisms measured apart from it, shown beside the verdict.

A diagnosis is the least time one mechanism allows the kernel, from a sweep measured once with
the peaks (:class:`~gpuconcepts.roofline.peaks.Peaks`), never from the kernel's own operations:

* **shape efficiency**: its matrix products at the rate the GEMM sweep's product of their
  shape reached (a product of few rows cannot fill the vector units), and on a CPU its
  activation at the measured activation rate; **fused kernel** for a kernel whose products run
  fused (flash attention), read the same way;
* **cold start**: its bytes read right after a cache flush, from the cold sweep;
* **operation chain**: a kernel of dependent steps, its operations at their dispatch floors,
  in turn (on a CPU the thread that dispatches them then computes, so its arithmetic adds);
* **random access**: its rows as whole lines at the random-access sweep's rate of line fetches.

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

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuconcepts import formulas
from gpuconcepts.roofline.counts import (
    activation_elements,
    gemm_products,
    moved_bytes,
    random_table_bytes,
)
from gpuconcepts.roofline.references import paired_peaks
from gpuconcepts.roofline.roofs import overhead_seconds, verdict
from gpuconcepts.workloads import WORKLOADS

if TYPE_CHECKING:
    from gpuconcepts.measure import Measurement
    from gpuconcepts.roofline.peaks import Peaks

SHAPE = "shape efficiency"
FUSED = "fused kernel"
COLD_START = "cold start"
OPERATION_CHAIN = "operation chain"
RANDOM_ACCESS = "random access"
MECHANISMS = (SHAPE, FUSED, COLD_START, OPERATION_CHAIN, RANDOM_ACCESS)
"""Every mechanism a diagnosis may name."""

TOLERANCE = 1.1
"""How far beyond the slow end of its spread a kernel may beat a diagnosis that still explains
it: a diagnosis is another measurement, at another moment, and two measurements of one thing
differ by a few percent on a busy machine (issue 21 allows 10 %)."""


@dataclass(frozen=True)
class Diagnosis:
    """The least time one mechanism allows a kernel, and what measured it."""

    mechanism: str
    seconds: float
    source: str

    def share(self, m: Measurement) -> float:
        """The fraction of ``m``'s median time the mechanism accounts for."""
        return self.seconds / m.seconds


def product_call_seconds(peaks: Peaks) -> float:
    """What calling a product costs apart from its arithmetic: the time of the smallest product
    the GEMM sweep timed warm (1 × 16 by 16 × 16: all call, next to no arithmetic), else the
    latency floor, else nothing.

    >>> from gpuconcepts.roofline.peaks import Peaks
    >>> p = Peaks("cpu", 1e11, 1e10, "float32", gemm_sweep=((1, 16, False, 1e8), (4, 64, False, 8e9)))
    >>> product_call_seconds(p)  # its 512 FLOPs at 100 MFLOP/s
    5.12e-06
    """
    warm = [
        (2 * rows * width * width, rate)
        for rows, width, flushed, rate in peaks.gemm_sweep
        if not flushed
    ]
    if not warm:
        return peaks.latency_seconds or 0.0
    flops, rate = min(warm)
    return flops / rate


def shape_seconds(m: Measurement, peaks: Peaks, *, call: float | None = None) -> float | None:
    """``m``'s matrix products, each at the rate of the GEMM sweep's product that holds it
    (:meth:`Peaks.gemm_point`; the first one flushed for a flushed kernel), and on a CPU its
    activation's elements at the measured rate after them. None without products or sweep.

    >>> from gpuconcepts.measure import Measurement
    >>> from gpuconcepts.roofline.peaks import Peaks
    >>> p = Peaks("cpu", 1e11, 1e10, "float32", gemm_sweep=((4, 64, False, 8e9),))
    >>> shape_seconds(Measurement("mlp", "cpu", {"B": 2, "d_in": 64, "d_out": 64}, (1.0,), 1, 1), p)
    2.048e-06
    """
    products = gemm_products(m)
    if not products:
        return None
    # Each point of the sweep is a called product. A product inside a fused kernel (more products
    # than dispatched operations: cuDNN's recurrence, a fused attention) pays no launch: it is
    # charged its point's time less the latency floor. A chain, whose dispatch is counted apart,
    # passes the whole ``call`` of a product (product_call_seconds). Never less than the FLOPs
    # at the peak.
    if call is None:
        fused = m.ops is not None and m.ops < sum(count for count, _ in products)
        call = (peaks.latency_seconds or 0.0) if fused else 0.0
    total = 0.0
    for i, (count, shape) in enumerate(products):
        rows, columns, depth = shape
        flops = float(formulas.mlp_flops(B=rows, d_in=depth, d_out=columns))
        for flushed, times in ((m.flush and i == 0, 1), (False, count - 1)):
            if times == 0:
                continue
            point = peaks.gemm_point(shape, flush=flushed)
            if point is None:
                return None
            each = max(flops / point[3] - call, flops / peaks.flops_per_s)
            total += times * each
    elements = activation_elements(m)
    if elements and peaks.activation_per_s and m.device == "cpu":
        total += elements / peaks.activation_per_s
    return total


def diagnoses(m: Measurement, peaks: Peaks) -> tuple[Diagnosis, ...]:
    """Every mechanism that applies to ``m`` and was measured, with the least time it allows."""
    peaks = paired_peaks(m, peaks)
    found = []
    shape = shape_seconds(m, peaks)
    fused = WORKLOADS.get(m.workload) is not None and WORKLOADS[m.workload].fused
    if shape is not None:
        mechanism = FUSED if fused else SHAPE
        found.append(Diagnosis(mechanism, shape, "the GEMM sweep's products of its shapes"))
    cold = peaks.cold_seconds(moved_bytes(m)) if m.flush else None
    if cold is not None:
        found.append(Diagnosis(COLD_START, cold, "the cold sweep: a read right after a flush"))
    dispatch = overhead_seconds(m, peaks)
    if dispatch is not None and m.ops and (m.steps or 1) > 1:
        # the chain's dispatch is counted apart: its products' arithmetic without their calls
        # (the lesser of the two bounds, so a fused kernel keeps its own)
        bare = shape_seconds(m, peaks, call=product_call_seconds(peaks))
        work = min(shape, bare) if shape is not None and bare is not None else None
        arithmetic = max(m.flops / peaks.flops_per_s, work or 0.0)
        serial = m.device == "cpu"  # one thread dispatches, then computes
        chain = dispatch + arithmetic if serial else max(dispatch, arithmetic)
        found.append(
            Diagnosis(OPERATION_CHAIN, chain, "its operations at the dispatch floors, in turn")
        )
    if m.random_rows and m.row_bytes and peaks.line_bytes:
        rate = peaks.random_lines_per_s(m.row_bytes, random_table_bytes(m), m.random_rows)
        if rate is not None:
            seconds = formulas.random_access_seconds(
                R=m.random_rows, d=m.row_bytes, s=1, c=peaks.line_bytes, r_line=rate
            )
            found.append(Diagnosis(RANDOM_ACCESS, float(seconds), "the random-access sweep"))
    return tuple(found)


def diagnosis(m: Measurement, peaks: Peaks) -> Diagnosis | None:
    """The mechanism that accounts for most of ``m``'s time beyond its roof: of the diagnoses
    longer than the roof's bound, the longest that ``m`` did not beat by more than
    :data:`TOLERANCE` beyond its spread. None when no measured mechanism goes past the roof."""
    roof = verdict(m, peaks).roof_seconds
    slowest = m.interval_seconds[1] * TOLERANCE
    past = [d for d in diagnoses(m, peaks) if roof < d.seconds <= slowest]
    return max(past, key=lambda d: d.seconds, default=None)
