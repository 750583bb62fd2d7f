"""The roofline claims: for each workload the post calls memory- or compute-bound, the
post's word, the roofline's class and the measured behaviour agree.

There is no experiment of its own: :func:`~gpuconcepts.claims.experiments.judge_claims` hands
:func:`judge_roofline` the measurements the architecture experiments return, keyed by their
role in :data:`ROOFLINE_EXPECTATIONS`.
"""

from __future__ import annotations

from collections.abc import Mapping

from gpuconcepts.claims import thresholds as T
from gpuconcepts.claims.quantities import with_interval
from gpuconcepts.claims.result import ClaimResult, TwoSided
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.measure import Measurement
from gpuconcepts.roofline import ABOVE_EVERY_ROOF, Peaks, attainable, place
from gpuconcepts.units import percent, si, times
from gpuconcepts.units import sizes as sizes_text


def judge_roofline(
    m: Measurement,
    *,
    role: str,
    peaks: Peaks,
    expected: str,
    label: str,
    source: str,
    device: str,
) -> ClaimResult:
    """The post's tendency for a workload, its roofline class, and its measured behaviour agree.

    ``role`` names the measurement's part (a key of :data:`ROOFLINE_EXPECTATIONS`),
    ``expected`` is the post's word (``"memory"`` or ``"compute"``), ``label`` names the
    workload for people and ``source`` says where the post says so. The values keep the
    measurement's workload and sizes, so a page can find it in the run again.
    Compute-bound means a share of the measured peak FLOP/s between
    :data:`~gpuconcepts.claims.thresholds.COMPUTE_MIN_PEAK_FRACTION` and
    :data:`~gpuconcepts.claims.thresholds.COMPUTE_MAX_PEAK_FRACTION`; memory-bound, moving the
    minimal bytes at between :data:`~gpuconcepts.claims.thresholds.MEMORY_MIN_BANDWIDTH_RATIO`
    and :data:`~gpuconcepts.claims.thresholds.MEMORY_MAX_BANDWIDTH_RATIO` times the measured
    DRAM bandwidth. The alternative is the other roof: the share that roof would give at this
    intensity. And the roof that best explains the measured time
    (:func:`~gpuconcepts.roofline.observe`) must be of the expected kind.
    """
    if expected not in ("memory", "compute"):
        raise GpuConceptsError(f"expected must be 'memory' or 'compute'; got {expected!r}")
    where = place(m, peaks)
    ridge, intensity = peaks.ridge_point, m.intensity
    roof = attainable(intensity, peaks)  # the FLOP/s the roofline allows at this intensity
    if expected == "compute":
        quantity, work, reference = "FLOP/s ÷ measured peak FLOP/s", m.flops, peaks.flops_per_s
        low, high = T.COMPUTE_MIN_PEAK_FRACTION, T.COMPUTE_MAX_PEAK_FRACTION
        predicted = roof / reference
        other = intensity / ridge  # FLOP/s at the DRAM roof (I·β) over the peak
        alternative = "memory-bound: its minimal bytes at the DRAM bandwidth set its time"
        # beating the measured peak (within the pass region's top) is still the compute roof
        observed_ok = where.observed in ("compute", ABOVE_EVERY_ROOF)
    else:
        quantity, work, reference = "bytes/s ÷ measured DRAM bandwidth", m.bytes, peaks.bytes_per_s
        low, high = T.MEMORY_MIN_BANDWIDTH_RATIO, T.MEMORY_MAX_BANDWIDTH_RATIO
        predicted = roof / intensity / reference
        other = ridge / intensity  # bytes/s at the compute roof (P/I) over the bandwidth
        alternative = "compute-bound: its FLOPs at the peak set its time"
        observed_ok = where.observed in {level.name for level in peaks.memory_roofs}
    measured, interval = with_interval(lambda t: work / t[0] / reference, (m,))
    peak_fraction = m.flops_per_s / peaks.flops_per_s
    bandwidth_ratio = m.bytes_per_s / peaks.bytes_per_s
    return ClaimResult(
        key=f"roofline-{role}",
        architecture="Roofline",
        claim=f"{label} is {expected}-bound ({source}).",
        prediction=f"intensity {intensity:.3g} FLOP/byte against the ridge point {ridge:.3g}: "
        f"the roofline says {where.bound}-bound",
        test=TwoSided(
            quantity,
            predicted=predicted,
            alternative=alternative,
            alternative_value=other,
            low=low,
            high=high,
            measured=measured,
            interval=interval,
        ),
        detail=f"{si(m.flops_per_s, 'FLOP/s')} ({percent(peak_fraction)} of peak), "
        f"{si(m.bytes_per_s, 'B/s')} ({times(bandwidth_ratio)} the measured bandwidth); "
        f"{times(where.ratio)} the roofline time; observed bound: {where.observed} "
        f"({percent(where.attained)} of that roof)",
        gates=(
            (
                f"the measured time is best explained by a {expected} roof ({where.observed})",
                observed_ok,
            ),
        ),
        device=device,
        values={
            "workload": m.workload,
            "sizes": sizes_text(m.params),
            "intensity": intensity,
            "ridge_point": ridge,
            "bound": where.bound,
            "observed": where.observed,
            "expected": expected,
            "peak_fraction": peak_fraction,
            "bandwidth_ratio": bandwidth_ratio,
            "roofline_ratio": where.ratio,
        },
    )


ROOFLINE_EXPECTATIONS: Mapping[str, tuple[str, str, str]] = {
    "dlrm-random": ("memory", "DLRM's random embedding lookup", "the post: DLRM, memory-bound"),
    "mlp-small-batch": (
        "memory",
        "An MLP layer at batch 1",
        "the post, Q19: only large batches make computation dominant",
    ),
    "mlp-large-batch": (
        "compute",
        "An MLP layer at a large batch",
        "the post: MLP, compute-intensive, often compute-bound",
    ),
    "cnn-conv": ("compute", "A dense 3×3 convolution", "the post: CNN, often compute-bound"),
    "cnn-depthwise": (
        "memory",
        "A depthwise 3×3 convolution",
        "the post: depthwise convolutions can become memory-bound",
    ),
    "transformer-prefill": (
        "compute",
        "Attention prefill over a long prompt",
        "the post: attention computation grows as S²",
    ),
    "transformer-decode": (
        "memory",
        "One decode step over the KV cache",
        "the post: the KV cache's memory",
    ),
}
"""For each workload of the roofline claim: the post's tendency, a label, and where it says so.

The RNN is left out on purpose: the post names its sequential dependency, not compute or
memory, as its limit (checked by the RNN claims instead)."""
