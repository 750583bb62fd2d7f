"""The roofline claims: for each workload the post calls memory- or compute-bound, the
post's word, the roofline's class and the measured behaviour agree.

There is no experiment of its own: :func:`~gpuconcepts.claims.experiments.judge_claims` hands
:func:`judge_roofline` the measurements the architecture experiments return, keyed by their
role in :data:`ROOFLINE_EXPECTATIONS`.
"""

from __future__ import annotations

from collections.abc import Mapping

from gpuconcepts.claims import thresholds as T
from gpuconcepts.claims.result import ClaimResult
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.measure import Measurement
from gpuconcepts.render import sizes as sizes_text
from gpuconcepts.roofline import Peaks, place
from gpuconcepts.units import percent, si, times


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
    Compute-bound means reaching :data:`~gpuconcepts.claims.thresholds.COMPUTE_MIN_PEAK_FRACTION`
    of the measured peak; memory-bound means moving the minimal bytes at no more than
    :data:`~gpuconcepts.claims.thresholds.MEMORY_MAX_BANDWIDTH_RATIO` times the measured bandwidth.
    """
    if expected not in ("memory", "compute"):
        raise GpuConceptsError(f"expected must be 'memory' or 'compute'; got {expected!r}")
    where = place(m, peaks)
    peak_fraction = m.flops_per_s / peaks.flops_per_s
    bandwidth_ratio = m.bytes_per_s / peaks.bytes_per_s
    roofline_ratio = where.ratio
    if where.bound == "compute":
        behaves = peak_fraction >= T.COMPUTE_MIN_PEAK_FRACTION
        rule = (
            f"compute-bound: FLOP/s ≥ {percent(T.COMPUTE_MIN_PEAK_FRACTION)} of the measured peak"
        )
    else:
        behaves = bandwidth_ratio <= T.MEMORY_MAX_BANDWIDTH_RATIO
        rule = f"memory-bound: bytes/s ≤ {T.MEMORY_MAX_BANDWIDTH_RATIO:g}× the measured bandwidth"
    return ClaimResult(
        key=f"roofline-{role}",
        architecture="Roofline",
        claim=f"{label} is {expected}-bound ({source}).",
        prediction=f"intensity {m.intensity:.3g} FLOP/byte against the ridge point "
        f"{peaks.ridge_point:.3g}: the roofline says {where.bound}-bound",
        measured=f"{si(m.flops_per_s, 'FLOP/s')} ({percent(peak_fraction)} of peak), "
        f"{si(m.bytes_per_s, 'B/s')} ({times(bandwidth_ratio)} the measured bandwidth); "
        f"{times(roofline_ratio)} the roofline time",
        threshold=f"roofline class = the post's ({expected}), and {rule}",
        verdict=where.bound == expected and behaves,
        device=device,
        values={
            "workload": m.workload,
            "sizes": sizes_text(m.params),
            "intensity": m.intensity,
            "ridge_point": peaks.ridge_point,
            "bound": where.bound,
            "expected": expected,
            "peak_fraction": peak_fraction,
            "bandwidth_ratio": bandwidth_ratio,
            "roofline_ratio": roofline_ratio,
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
