"""The model's mechanisms as one registry: each roof and each diagnosis is one object with its
name, the :class:`~gpuconcepts.roofline.peaks.Peaks` fields it reads (its part of the peaks,
measured once by its own sweep), its count of a kernel and the least time that count takes
at its rate, and the sentence saying what measured it.

A **roof** (:data:`~gpuconcepts.roofline.roofs.ROOFS`) sets the prediction; a **diagnosis**
(:data:`DIAGNOSES`) is shown beside a miss and never changes a prediction or a verdict.
:data:`MODEL` lists both: the verdict loops over its roofs, the diagnoses over its diagnoses,
and the predictions over all of it (:func:`model_seconds`). A diagnosis measured by a sweep of
its own is a :class:`~gpuconcepts.roofline.peaks.RateSweep` in ``Peaks.rate_sweeps``, read by
:class:`SweptRate`: adding one is its sweep (``gpuconcepts.kernels.ceilings``) and its sizes.

>>> from gpuconcepts.measure import Measurement
>>> from gpuconcepts.roofline.peaks import Peaks
>>> p = Peaks("cpu", 1e11, 1e10, "float32", latency_seconds=2e-6, op_seconds=1e-6)
>>> loop = Measurement("rnn-loop", "cpu", {}, (5e-3,), 2e6, 1e5, ops=4096, steps=1024)
>>> [(name, round(t * 1e6)) for name, t in model_seconds(loop, p)]
[('compute', 20), ('DRAM', 10), ('overhead', 4096), ('operation chain', 4116)]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Literal, Protocol

from gpuconcepts import formulas
from gpuconcepts.roofline.counts import (
    activation_elements,
    gemm_products,
    moved_bytes,
    random_table_bytes,
    working_set_bytes,
)
from gpuconcepts.roofline.references import paired_peaks
from gpuconcepts.roofline.roofs import ROOFS, overhead_seconds
from gpuconcepts.workloads import WORKLOADS

if TYPE_CHECKING:
    from gpuconcepts.measurement import Measurement
    from gpuconcepts.roofline.peaks import Peaks

SHAPE = "shape efficiency"
FUSED = "fused kernel"
COLD_START = "cold start"
OPERATION_CHAIN = "operation chain"
RANDOM_ACCESS = "random access"


class Mechanism(Protocol):
    """What :data:`MODEL` holds: a roof or a diagnosis, the Peaks fields it reads, and the
    least times it allows a kernel, each by the name a page shows."""

    role: ClassVar[Literal["roof", "diagnosis"]]
    needs: ClassVar[tuple[str, ...]]

    def times(self, m: Measurement, peaks: Peaks) -> tuple[tuple[str, float], ...]:
        """Each least time this mechanism allows ``m``, by name (none when not measured)."""
        ...


@dataclass(frozen=True)
class Diagnosis:
    """The least time one mechanism allows a kernel, and what measured it."""

    mechanism: str
    seconds: float
    source: str

    def share(self, m: Measurement) -> float:
        """The fraction of ``m``'s median time the mechanism accounts for."""
        return self.seconds / m.seconds


class DiagnosisMechanism:
    """A diagnosis: :meth:`diagnose` gives its :class:`Diagnosis` of a kernel, if it applies."""

    role: ClassVar[Literal["roof", "diagnosis"]] = "diagnosis"
    needs: ClassVar[tuple[str, ...]] = ()

    def diagnose(self, m: Measurement, peaks: Peaks) -> tuple[Diagnosis, ...]:
        """Every least time this mechanism allows ``m`` (none when it does not apply)."""
        raise NotImplementedError

    def times(self, m: Measurement, peaks: Peaks) -> tuple[tuple[str, float], ...]:
        return tuple((d.mechanism, d.seconds) for d in self.diagnose(m, peaks))

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


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


class ShapeEfficiency(DiagnosisMechanism):
    """Its matrix products at the GEMM sweep's rate for their shapes (:func:`shape_seconds`);
    named :data:`FUSED` for a kernel whose products run fused (flash attention)."""

    needs = ("gemm_sweep", "activation_per_s")

    def diagnose(self, m: Measurement, peaks: Peaks) -> tuple[Diagnosis, ...]:
        shape = shape_seconds(m, peaks)
        if shape is None:
            return ()
        fused = WORKLOADS.get(m.workload) is not None and WORKLOADS[m.workload].fused
        source = "the GEMM sweep's products of its shapes"
        return (Diagnosis(FUSED if fused else SHAPE, shape, source),)


class ColdStart(DiagnosisMechanism):
    """A flushed kernel's bytes read right after a flush, from the cold sweep."""

    needs = ("cold_sweep",)

    def diagnose(self, m: Measurement, peaks: Peaks) -> tuple[Diagnosis, ...]:
        cold = peaks.cold_seconds(moved_bytes(m)) if m.flush else None
        if cold is None:
            return ()
        return (Diagnosis(COLD_START, cold, "the cold sweep: a read right after a flush"),)


class OperationChain(DiagnosisMechanism):
    """A kernel of dependent steps: its operations at their dispatch floors, in turn; on a CPU
    the thread that dispatches them then computes, so its arithmetic adds."""

    needs = ("latency_seconds", "cold_latency_seconds", "op_seconds", "gemm_sweep")

    def diagnose(self, m: Measurement, peaks: Peaks) -> tuple[Diagnosis, ...]:
        dispatch = overhead_seconds(m, peaks)
        if dispatch is None or not m.ops or (m.steps or 1) <= 1:
            return ()
        # the chain's dispatch is counted apart: its products' arithmetic without their calls
        # (the lesser of the two bounds, so a fused kernel keeps its own)
        shape = shape_seconds(m, peaks)
        bare = shape_seconds(m, peaks, call=product_call_seconds(peaks))
        work = min(shape, bare) if shape is not None and bare is not None else None
        arithmetic = max(m.flops / peaks.flops_per_s, work or 0.0)
        serial = m.device == "cpu"  # one thread dispatches, then computes
        chain = dispatch + arithmetic if serial else max(dispatch, arithmetic)
        source = "its operations at the dispatch floors, in turn"
        return (Diagnosis(OPERATION_CHAIN, chain, source),)


class RandomAccess(DiagnosisMechanism):
    """Its rows fetched at random addresses, as whole lines at the random-access sweep's rate."""

    needs = ("random_sweep", "line_bytes")

    def diagnose(self, m: Measurement, peaks: Peaks) -> tuple[Diagnosis, ...]:
        if not (m.random_rows and m.row_bytes and peaks.line_bytes):
            return ()
        rate = peaks.random_lines_per_s(m.row_bytes, random_table_bytes(m), m.random_rows)
        if rate is None:
            return ()
        seconds = formulas.random_access_seconds(
            R=m.random_rows, d=m.row_bytes, s=1, c=peaks.line_bytes, r_line=rate
        )
        return (Diagnosis(RANDOM_ACCESS, float(seconds), "the random-access sweep"),)


class SweptRate(DiagnosisMechanism):
    """Every diagnosis measured by a sweep of its own
    (:attr:`Peaks.rate_sweeps <gpuconcepts.roofline.peaks.Peaks.rate_sweeps>`): a kernel of
    the sweep's workload, its count (FLOPs or bytes) at the rate the sweep's canonical call
    reached at the nearest working set the same memory level serves.

    >>> from gpuconcepts.measure import Measurement
    >>> from gpuconcepts.roofline.peaks import Peaks, RateSweep
    >>> p = Peaks("cpu", 1e11, 1e10, "f", rate_sweeps={
    ...     "depthwise stencil": RateSweep("cnn-depthwise", "flops", ((2**26, 2e9),), "a stencil")})
    >>> dw = Measurement("cnn-depthwise", "cpu", {}, (1e-2,), 1e7, 2**26)
    >>> SweptRate().diagnose(dw, p)
    (Diagnosis(mechanism='depthwise stencil', seconds=0.005, source='a stencil'),)
    """

    needs = ("rate_sweeps",)

    def diagnose(self, m: Measurement, peaks: Peaks) -> tuple[Diagnosis, ...]:
        found = []
        for name, sweep in sorted(peaks.rate_sweeps.items()):
            if sweep.workload != m.workload:
                continue
            work = m.flops if sweep.count == "flops" else m.bytes
            rate = sweep.rate_at(working_set_bytes(m), peaks)
            found.append(Diagnosis(name, work / rate, sweep.source))
        return tuple(found)


DIAGNOSES: tuple[DiagnosisMechanism, ...] = (
    ShapeEfficiency(),
    ColdStart(),
    OperationChain(),
    RandomAccess(),
    SweptRate(),
)
"""Every diagnosis, in the order a page lists them."""

MODEL: tuple[Mechanism, ...] = (*ROOFS, *DIAGNOSES)
"""Every mechanism of the model: the roofs (the prediction), then the diagnoses."""


def model_seconds(m: Measurement, peaks: Peaks) -> tuple[tuple[str, float], ...]:
    """Every least time each mechanism of :data:`MODEL` allows ``m``, by name: the roofs' bounds
    (under the floors it was timed beside), then the diagnoses'."""
    ceilings = paired_peaks(m, peaks)
    return tuple(found for mechanism in MODEL for found in mechanism.times(m, ceilings))
