"""The roofline claims: for each workload the post calls memory- or compute-bound, the
post's word, the roofline's class and the measured behaviour agree.

There is no experiment of its own: each roofline claim's registry entry names
:func:`judge_roles` and the architecture experiment that times its kernel beside its roof's
reference kernel (:class:`~gpuconcepts.claims.plan.WithRoofs`). That experiment hands
:func:`judge_roles` its roles (:func:`~gpuconcepts.claims.plan.roles_reading`): the kernels
it measured, keyed by their role in :data:`ROOFLINE_EXPECTATIONS`.
"""

from __future__ import annotations

from collections.abc import Mapping

from gpuconcepts.claims.quantities import with_interval
from gpuconcepts.claims.thresholds import ROOF_MIN_SHARE
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.measure import Measurement
from gpuconcepts.results.claim import ClaimResult
from gpuconcepts.results.twosided import TwoSided
from gpuconcepts.roofline import (
    CHAIN,
    PER_CALL,
    Peaks,
    beaten_by,
    beats_every_roof,
    faster_path,
    finding,
    place,
    roof_times,
    verdict,
)
from gpuconcepts.units import number, percent, si, times
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
    reference: Measurement | None = None,
) -> ClaimResult:
    """The post's word for a workload ("memory-bound", "compute-bound"), tested as it says it:
    which roof binds the kernel and how much of that roof it attains (ledger 1, issue 45).

    ``role`` names the measurement's part (a key of :data:`ROOFLINE_EXPECTATIONS`),
    ``expected`` is the post's word (``"memory"`` or ``"compute"``), ``label`` names the
    workload for people and ``source`` says where the post says so. The values keep the
    measurement's workload and sizes, so a page can find it in the run again.

    The gate: the roof that binds the kernel (the verdict of
    :func:`~gpuconcepts.roofline.roofs.verdict`, its kind read from the roof object) is of the
    expected kind. The quantity is the kernel's share of the expected roof's rate
    (:func:`share_test`, against ``reference``, the roof's own kernel timed beside it). No
    time prediction enters the verdict: how well the ceilings predict the kernel's time is
    ledger 2's (:mod:`gpuconcepts.claims.accuracy`).
    """
    if expected not in ("memory", "compute"):
        raise GpuConceptsError(f"expected must be 'memory' or 'compute'; got {expected!r}")
    where = place(m, peaks)
    binding = verdict(m, peaks).binding  # the roof that binds: any memory level is memory
    reason = _unseen(m, peaks, expected)
    return ClaimResult(
        key=f"roofline-{role}",
        architecture="Roofline",
        claim=f"{label} is {expected}-bound ({source}).",
        prediction=f"intensity {number(m.intensity)} FLOP/byte against the ridge point "
        f"{number(peaks.ridge_point)}: the roofline says {where.bound}-bound, and a "
        f"{expected}-bound kernel runs at its {expected} roof (a share of 1); the roof that "
        f"binds it here is {binding.name}",
        test=share_test(m, peaks, expected, reference),
        detail=f"{si(m.flops_per_s, 'FLOP/s')} ({percent(m.flops_per_s / peaks.flops_per_s)} "
        f"of peak), {si(m.bytes_per_s, 'B/s')} ({times(m.bytes_per_s / peaks.bytes_per_s)} "
        f"the measured bandwidth); {times(where.ratio)} the roofline time; observed bound: "
        f"{where.observed} ({percent(where.attained)} of that roof)" + _finding(m, peaks),
        gates=(
            (
                f"the roof that binds it is a {expected} roof "
                + f"(here {binding.name}, a {binding.roof.kind} roof)",
                binding.roof.kind == expected,
            ),
        ),
        device=device,
        visible=not reason,
        reason=reason,
        anomalies=_above_every_roof(m, peaks, label),
        values=_roofline_values(m, peaks, expected),
    )


def share_test(
    m: Measurement, peaks: Peaks, expected: str, reference: Measurement | None = None
) -> TwoSided:
    """The kernel's share of the ``expected`` roof's rate: for compute-bound, its FLOP/s over
    the peak; for memory-bound, its minimal bytes per second over the DRAM bandwidth. The
    post's model says a bound kernel runs at its roof (share 1); it holds from
    :data:`~gpuconcepts.claims.thresholds.ROOF_MIN_SHARE` of the roof to its inverse. The
    alternative is the other roof: the share it would give at this intensity.

    ``reference`` is the roof's own kernel (``peak-gemm`` for compute, ``peak-triad`` for
    memory) timed in the same rounds as ``m``: the share is then the kernel's rate over the
    reference's, round by round, so load on the machine slows both sides alike. Without it,
    the share is taken of the peaks measured at the start of the run.
    """
    ridge, intensity = peaks.ridge_point, m.intensity
    if expected == "compute":
        quantity, work, roof_rate = "FLOP/s ÷ measured peak FLOP/s", m.flops, peaks.flops_per_s
        other = intensity / ridge  # FLOP/s at the DRAM roof (I·β) over the peak
        alternative = "memory-bound: its minimal bytes at the DRAM bandwidth set its time"
    else:
        quantity, work, roof_rate = "bytes/s ÷ measured DRAM bandwidth", m.bytes, peaks.bytes_per_s
        other = ridge / intensity  # bytes/s at the compute roof (P/I) over the bandwidth
        alternative = "compute-bound: its FLOPs at the peak set its time"
    if reference is None:
        measured, interval = with_interval(lambda t: work / t[0] / roof_rate, (m,))
    else:
        ref_work = reference.flops if expected == "compute" else reference.bytes
        quantity = (
            "FLOP/s ÷ a square GEMM's FLOP/s in the same rounds"
            if expected == "compute"
            else "bytes/s ÷ the STREAM triad's bandwidth in the same rounds"
        )
        measured, interval = with_interval(
            lambda t: (work / t[0]) / (ref_work / t[1]), (m, reference)
        )
    return TwoSided(
        quantity,
        predicted=1.0,
        alternative=alternative,
        alternative_value=other,
        low=ROOF_MIN_SHARE,
        high=1 / ROOF_MIN_SHARE,
        measured=measured,
        interval=interval,
    )


def _unseen(m: Measurement, peaks: Peaks, expected: str) -> str:
    """Why the kernel cannot show its roof ("" when it can): so small a kernel that a call's
    floor outlasts its roof's bound, of which the roofline has nothing to say at these sizes
    (not visible, never "fails")."""
    bounds = dict(roof_times(m, peaks))
    floor = bounds.get(PER_CALL, bounds.get(CHAIN, 0.0))
    roof_time = (
        m.flops / peaks.flops_per_s if expected == "compute" else m.bytes / peaks.bytes_per_s
    )
    if floor <= roof_time:
        return ""
    return (
        f"at these sizes a call's floor ({si(floor, 's')}) outlasts the {expected} roof's "
        f"bound ({si(roof_time, 's')}), so no roof of that kind can show"
    )


def _above_every_roof(m: Measurement, peaks: Peaks, label: str) -> tuple[str, ...]:
    """The anomaly of a kernel that ran above every roof of the machine, beyond its spread,
    when physics forbids it: above the streaming bound of its bytes, or above the hardware's
    own compute limit. Above a measured rate that is no physical limit (the compute peak P of
    a square GEMM, the gather sweep's rate of random rows) it is a finding its detail tells
    (:func:`~gpuconcepts.roofline.model.finding`), never a fault of the measurement: how far
    the model's time missed is ledger 2's."""
    if not beats_every_roof(m, peaks) or finding(m, peaks):
        return ()
    beaten = f"it {beaten_by(place(m, peaks).attained)} the roofs allow, beyond its spread"
    return (f"{label} ran above every roof of this machine: {beaten}",)


def _finding(m: Measurement, peaks: Peaks) -> str:
    """The finding of a kernel above a measured rate yet within physics
    (:func:`~gpuconcepts.roofline.model.finding`; "" otherwise), with its rate."""
    found = finding(m, peaks)
    if not found:
        return ""
    if not faster_path(m, peaks):
        return f"; a finding: {found}"
    limit = peaks.physical_flops_per_s
    within = "" if limit is None else f", under the hardware's {si(limit, 'FLOP/s')}"
    return (
        f"; a finding: {si(m.flops_per_s, 'FLOP/s')} is above the square GEMM's peak P"
        f"{within}: {found}"
    )


def _roofline_values(m: Measurement, peaks: Peaks, expected: str) -> dict[str, float | str]:
    """The claim's values: the kernel's workload and sizes (so a page can find it in the run
    again), its intensity and bounds, and its shares of the two roofs."""
    where = place(m, peaks)
    return {
        "workload": m.workload,
        "sizes": sizes_text(m.params),
        "intensity": m.intensity,
        "ridge_point": peaks.ridge_point,
        "bound": where.bound,
        "observed": where.observed,
        "expected": expected,
        "peak_fraction": m.flops_per_s / peaks.flops_per_s,
        "bandwidth_ratio": m.bytes_per_s / peaks.bytes_per_s,
        "roofline_ratio": where.ratio,
    }


Roles = Mapping[str, tuple[Measurement, Measurement | None]]
"""Measurements a roofline claim reads, by role: the kernel, and its roof's reference kernel
timed in the same rounds (None when there is none)."""


def judge_roles(roles: Roles, peaks: Peaks, device: str) -> list[ClaimResult]:
    """The roofline claim of each role (a key of :data:`ROOFLINE_EXPECTATIONS`), in the order
    of ``roles``: the judge of every roofline entry of the registry, called once per
    experiment with all the roles it measured."""
    results = []
    for role, (m, reference) in roles.items():
        expected, what, source = ROOFLINE_EXPECTATIONS[role]
        results.append(
            judge_roofline(
                m,
                role=role,
                peaks=peaks,
                expected=expected,
                label=what,
                source=source,
                device=device,
                reference=reference,
            )
        )
    return results


ROOF_REFERENCES = {"compute": "peak-gemm", "memory": "peak-triad"}
"""The kernel that stands for each roof when a claim times it beside the kernel it reads."""


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
