r"""Whole-model claims: backward against forward, decode against batch, training memory.

Every claim here is *two-sided*: it states the prediction (from :mod:`gpuconcepts.formulas`),
an alternative the measurement must rule out, and a pass region (fixed
before any run in :mod:`~gpuconcepts.claims.thresholds`, the one home of every threshold)
that holds the prediction and leaves the alternative outside (a
:class:`~gpuconcepts.results.twosided.TwoSided` test). The claim holds when the whole measured
interval lies in the pass region. When the alternative itself would fall inside the region on
this device, the device cannot tell the two apart and the claim is "not visible".

The ``judge_*`` functions take the plain results of :mod:`gpuconcepts.kernels.decoder` and run
nothing; a Run measures them (:func:`gpuconcepts.kernels.decoder.whole_model`) and judges them
through :func:`gpuconcepts.claims.judge.judge_all`. Importing this module loads neither torch
nor matplotlib.

>>> BACKWARD_MIN_TIME_RATIO < 2.0 < BACKWARD_MAX_TIME_RATIO  # 2: the formulas' ratio
True
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import TYPE_CHECKING

from gpuconcepts import formulas
from gpuconcepts.claims.quantities import paired_interval, with_interval
from gpuconcepts.claims.thresholds import (
    BACKWARD_FLOP_TOLERANCE,
    BACKWARD_MAX_TIME_RATIO,
    BACKWARD_MIN_TIME_RATIO,
    DECODE_FLOOR_MAX_RATIO,
    DECODE_FLOOR_MIN_RATIO,
    DECODE_KNEE_FACTOR,
    DECODE_LONG_KNEE_FACTOR,
    DECODE_LONG_MIN_CACHE_MULTIPLE,
    DECODE_MIN_WEIGHT_CACHE_MULTIPLE,
    TRAINING_MEMORY_MAX_RATIO,
    TRAINING_MEMORY_MIN_RATIO,
)
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.model import ModelShape, matmul_params
from gpuconcepts.results.claim import ClaimResult
from gpuconcepts.results.plot import PlotSpec, Series
from gpuconcepts.results.twosided import TwoSided
from gpuconcepts.roofline import Peaks
from gpuconcepts.units import binary_bytes, number, plain_number, si, times

if TYPE_CHECKING:
    from gpuconcepts.results.wholemodel import (
        BackwardForward,
        DecodeSweep,
        TrainingPeak,
        WholeModelResults,
    )

ARCHITECTURE = "Whole model"


def _result(
    key: str,
    claim: str,
    prediction: str,
    test: TwoSided,
    *,
    device: str,
    measured_extra: str = "",
    gate: tuple[bool, str] = (True, ""),
    visible: tuple[bool, str] = (True, ""),
    values: dict[str, float | int | bool | str] | None = None,
    plot: PlotSpec | None = None,
) -> ClaimResult:
    """A :class:`ClaimResult` from a two-sided test; ``gate`` is a further condition
    (with the sentence that says it failed), ``visible`` a condition of the device."""
    passed, why_not = gate
    seen, reason = visible
    return ClaimResult(
        key=key,
        architecture=ARCHITECTURE,
        claim=claim,
        prediction=prediction,
        test=test,
        detail=measured_extra,
        gates=((why_not, passed),) if why_not else (),
        device=device,
        visible=seen,
        reason="" if seen else reason,
        values=values or {},
        plot=plot,
    )


# -- backward against forward ---------------------------------------------------------------------
def judge_backward(result: BackwardForward, *, device: str) -> ClaimResult:
    """The backward pass costs two forward passes: in FLOPs counted, and in time measured."""
    ratio_predicted = result.predicted_backward_flops / result.predicted_forward_flops
    # Each pair was timed back to back, under the same load: one ratio per pair, their median
    ratios = [(s - f) / f for f, s in zip(result.forward_seconds, result.step_seconds, strict=True)]
    measured, interval = with_interval(lambda r: r[0], [ratios])
    forward, step = (statistics.median(t) for t in (result.forward_seconds, result.step_seconds))
    counted = (result.forward_flops, result.backward_flops)
    predicted = (result.predicted_forward_flops, result.predicted_backward_flops)
    exact = all(
        abs(c - p) <= BACKWARD_FLOP_TOLERANCE for c, p in zip(counted, predicted, strict=True)
    )
    test = TwoSided(
        "backward ÷ forward time",
        predicted=ratio_predicted,
        alternative="the backward pass costs one forward pass",
        alternative_value=1.0,
        low=BACKWARD_MIN_TIME_RATIO,
        high=BACKWARD_MAX_TIME_RATIO,
        measured=measured,
        interval=interval,
    )
    flops = formulas.training_flops_per_token.text(), formulas.forward_flops_per_token.text()
    return _result(
        "backward-pass",
        "Training costs three forward passes: the backward pass does twice the forward's "
        "arithmetic (6N against 2N FLOPs per token).",
        f"{flops[0]} and {flops[1]}: backward ÷ forward = {number(ratio_predicted)} "
        f"({plain_number(result.n_params)} weights, {plain_number(result.tokens)} tokens)",
        test,
        device=device,
        measured_extra=f"FlopCounterMode counted {plain_number(counted[1])} backward and "
        f"{plain_number(counted[0])} forward FLOPs (formulas: {plain_number(predicted[1])} "
        f"and {plain_number(predicted[0])}); forward {si(forward, 's')}, forward and "
        f"backward {si(step, 's')}",
        gate=(exact, "FlopCounterMode's counts equal the formulas exactly"),
        values={
            "forward_flops": counted[0],
            "backward_flops": counted[1],
            "predicted_forward_flops": predicted[0],
            "predicted_backward_flops": predicted[1],
            "flops_exact": exact,
        },
        plot=PlotSpec(
            "Backward against forward on a stack of linear layers",
            "pass",
            "seconds (median repetition)",
            (
                Series("measured", (0.0, 1.0), (forward, step - forward)),
                Series(
                    "formula × forward",
                    (0.0, 1.0),
                    (forward, forward * ratio_predicted),
                    role="predicted",
                ),
            ),
            log_x=False,
            log_y=False,
            categories=("forward", "backward"),
        ),
    )


# -- decode against batch -------------------------------------------------------------------------
def knee_of(batches: Sequence[float], seconds: Sequence[float]) -> float:
    """The batch at which a step time ``a + b·B`` (least squares) has equal parts: ``a / b``.

    ``a`` is reading the weights, the same at every batch; ``b·B`` the arithmetic, which grows
    with the batch. Infinite when the time does not grow with the batch.

    >>> knee_of([1, 2, 4, 8], [1.1, 1.2, 1.4, 1.8])
    10.0
    """
    n = len(batches)
    if n < 2 or len(seconds) != n:
        raise GpuConceptsError("a decode knee needs a time for each of at least two batches")
    mean_b, mean_t = sum(batches) / n, sum(seconds) / n
    spread = sum((b - mean_b) ** 2 for b in batches)
    slope = sum((b - mean_b) * (t - mean_t) for b, t in zip(batches, seconds, strict=True))
    slope /= spread
    intercept = mean_t - slope * mean_b
    if slope <= 0:
        return math.inf
    return round(max(intercept, 0.0) / slope, 12)


def _tokens_per_second_roofline(
    sweep: DecodeSweep, peaks: Peaks, bytes_per_s: float
) -> tuple[float, ...]:
    """Tokens/s at each batch under the roofline: the slower of the FLOPs at the peak and the
    bytes at ``bytes_per_s``."""
    per_token = formulas.forward_flops_per_token(n_params=matmul_params(sweep.shape))
    return tuple(
        B
        / formulas.roofline_seconds(
            F=B * per_token, Q=sweep.weight_bytes + cache, P=peaks.flops_per_s, beta=bytes_per_s,
        )
        for B, cache in zip(sweep.batches, sweep.cache_bytes, strict=True)
    )  # fmt: skip


def weight_read_rate(sweep: DecodeSweep, peaks: Peaks) -> tuple[float, str]:
    """The rate a decode step can read its weights, and where it comes from: a batch-1 product
    through as many weight bytes, timed in the same rounds as the steps (a matrix-vector
    product reads its weights slower than a streaming kernel does), else DRAM's measured
    bandwidth."""
    if sweep.paired:
        rate = sweep.reference_bytes / statistics.median(sweep.reference_seconds)
        return rate, "the rate a batch-1 product read as many weight bytes in the same rounds"
    return peaks.bytes_per_s, "the measured DRAM bandwidth"


def judge_decode_knee(sweep: DecodeSweep, peaks: Peaks, *, device: str) -> ClaimResult:
    """Decode throughput rises with batch until the ridge point, then flattens."""
    s = sweep.shape.s
    rate, source = weight_read_rate(sweep, peaks)
    predicted = float(formulas.decode_compute_bound_batch(P=peaks.flops_per_s, s=s, beta=rate))
    measured, interval = _measured_knee(sweep)  # a knee per round, from steps side by side
    test = TwoSided(
        "knee batch",
        predicted=predicted,
        alternative="decode is compute-bound from batch 1, like prefill",
        alternative_value=1.0,
        low=predicted / DECODE_KNEE_FACTOR,
        high=predicted * DECODE_KNEE_FACTOR,
        measured=measured,
        interval=interval,
    )
    reach = sweep.batches[-1] >= predicted
    throughput = sweep.tokens_per_second()
    return _result(
        "decode-knee",
        "Decode is memory-bound at small batch: tokens per second rise about linearly with "
        "the batch until the weight products reach the ridge point, then flatten.",
        f"{formulas.decode_compute_bound_batch.text()} = {number(predicted)} at the measured "
        f"peak ({si(peaks.flops_per_s, 'FLOP/s')}) and {source} ({si(rate, 'B/s')}), s = {s}",
        test,
        device=device,
        measured_extra=f"{si(throughput[0], 'tokens/s')} at batch {sweep.batches[0]}, "
        f"{si(throughput[-1], 'tokens/s')} at batch {sweep.batches[-1]}",
        visible=(
            reach,
            f"the sweep stops at batch {sweep.batches[-1]}, below the predicted knee",
        ),
        values={"batches": ",".join(str(b) for b in sweep.batches)},
        plot=PlotSpec(
            f"Decode throughput against batch ({sweep.shape.describe()})",
            "batch B",
            "tokens per second",
            (
                Series("measured", tuple(map(float, sweep.batches)), throughput),
                Series(
                    "roofline at the measured peak and weight-read rate",
                    tuple(map(float, sweep.batches)),
                    _tokens_per_second_roofline(sweep, peaks, rate),
                    role="predicted",
                ),
            ),
            vlines=(
                ("decode_compute_bound_batch", predicted),
                ("measured knee", measured if math.isfinite(measured) else sweep.batches[-1]),
            ),
        ),
    )


def _roofline_step_seconds(sweep: DecodeSweep, peaks: Peaks) -> tuple[float, ...]:
    """A decode step's roofline time at each batch: decode_step_flops against the weights'
    and the caches' bytes (decode_step_bytes), at the measured peaks."""
    n = matmul_params(sweep.shape)
    return tuple(
        float(
            formulas.roofline_seconds(
                F=formulas.decode_step_flops(n_params=n, B=B),
                Q=sweep.weight_bytes + cache,
                P=peaks.flops_per_s,
                beta=peaks.bytes_per_s,
            )
        )
        for B, cache in zip(sweep.batches, sweep.cache_bytes, strict=True)
    )


def _measured_knee(sweep: DecodeSweep) -> tuple[float, tuple[float, float]]:
    """The knee of the measured step times, per round when paired, with its interval."""
    knee = lambda t: knee_of(sweep.batches, t)
    if sweep.paired:
        return paired_interval(knee, sweep.seconds)
    return with_interval(knee, sweep.seconds)


def judge_decode_long_context(
    sweep: DecodeSweep, short: DecodeSweep, peaks: Peaks, *, cache_bytes: int, device: str
) -> ClaimResult:
    """At a long context the KV cache takes over a decode step, and the knee moves down.

    ``sweep`` ran at a long context, ``short`` at a short one (the decode-knee claim's sweep).
    """
    predicted = knee_of(sweep.batches, _roofline_step_seconds(sweep, peaks))
    weights_only = float(
        formulas.decode_compute_bound_batch(
            P=peaks.flops_per_s, s=sweep.shape.s, beta=peaks.bytes_per_s
        )
    )
    measured, interval = _measured_knee(sweep)
    short_knee, _ = _measured_knee(short)
    test = TwoSided(
        f"knee batch at {plain_number(sweep.cached)} tokens",
        predicted=predicted,
        alternative="the KV cache is negligible: the knee stays where the weights alone put it "
        "(decode_compute_bound_batch)",
        alternative_value=weights_only,
        low=predicted / DECODE_LONG_KNEE_FACTOR,
        high=predicted * DECODE_LONG_KNEE_FACTOR,
        measured=measured,
        interval=interval,
    )
    per_sequence = sweep.cache_bytes[0] / sweep.batches[0]
    largest = sweep.cache_bytes[-1] / cache_bytes
    throughput = sweep.tokens_per_second()
    batches = tuple(map(float, sweep.batches))

    def shown(knee: float) -> str:
        return f"{number(knee)}" if math.isfinite(knee) else "none (no growth with the batch)"

    return _result(
        "decode-long-context",
        "At a long context the KV cache takes over a decode step. Every sequence adds the "
        "read of its own cache, so the step time grows with the batch from the start and the "
        "knee moves down, from where the weights alone put it to about the batch whose caches "
        "weigh as much as the weights.",
        f"the knee of the roofline with the KV cache ({formulas.decode_step_bytes.text()}, "
        f"{binary_bytes(per_sequence)} a sequence beside {binary_bytes(sweep.weight_bytes)} of "
        f"weights) = {number(predicted)}, against "
        f"{formulas.decode_compute_bound_batch.text()} = {number(weights_only)} without it",
        test,
        device=device,
        measured_extra=f"at {plain_number(short.cached)} tokens the knee was "
        f"{shown(short_knee)}; {si(throughput[0], 'tokens/s')} at batch {sweep.batches[0]}, "
        f"{si(throughput[-1], 'tokens/s')} at batch {sweep.batches[-1]}",
        gate=(
            measured < short_knee,
            f"the knee moved below the one measured at {plain_number(short.cached)} tokens",
        ),
        visible=(
            largest >= DECODE_LONG_MIN_CACHE_MULTIPLE,
            (
                f"the caches of batch {sweep.batches[-1]} "
                f"({binary_bytes(sweep.cache_bytes[-1])}) are only {times(largest)} the "
                f"{binary_bytes(cache_bytes)} last-level cache"
            ),
        ),
        values={
            "short_knee": short_knee,
            "cache_bytes_per_sequence": per_sequence,
            "weight_bytes": sweep.weight_bytes,
        },
        plot=PlotSpec(
            f"Decode throughput against batch at {plain_number(sweep.cached)} tokens "
            f"({sweep.shape.describe()})",
            "batch B",
            "tokens per second",
            (
                Series("measured", batches, throughput),
                Series(
                    "roofline with the KV cache",
                    batches,
                    tuple(
                        B / t
                        for B, t in zip(batches, _roofline_step_seconds(sweep, peaks), strict=True)
                    ),
                    role="predicted",
                ),
            ),
            vlines=(
                ("knee with the KV cache", predicted),
                ("measured knee", measured if math.isfinite(measured) else sweep.batches[-1]),
            ),
        ),
    )


def judge_decode_floor(
    sweep: DecodeSweep, peaks: Peaks, *, cache_bytes: int, device: str
) -> ClaimResult:
    """A decode step at batch 1 takes about the time of reading every weight once."""
    B = sweep.batches[0]
    rate, source = weight_read_rate(sweep, peaks)
    floor = float(
        formulas.decode_seconds_lower_bound(
            M_w=sweep.weight_bytes, M_kv=sweep.cache_bytes[0], beta=rate
        )
    )
    flops = B * formulas.forward_flops_per_token(n_params=matmul_params(sweep.shape))
    compute = float(flops / peaks.flops_per_s)
    if sweep.paired:  # the floor at the rate weights were read in the same round
        ratio, interval = paired_interval(
            lambda t: (
                t[0]
                / float(
                    formulas.decode_seconds_lower_bound(
                        M_w=sweep.weight_bytes,
                        M_kv=sweep.cache_bytes[0],
                        beta=sweep.reference_bytes / t[1],
                    )
                )
            ),
            (sweep.seconds[0], sweep.reference_seconds),
        )
    else:
        ratio, interval = with_interval(lambda t: t[0] / floor, sweep.seconds[:1])
    step = statistics.median(sweep.seconds[0])
    test = TwoSided(
        "step time ÷ floor",
        predicted=1.0,
        alternative="the step's FLOPs at the peak set its time",
        alternative_value=compute / floor,
        low=DECODE_FLOOR_MIN_RATIO,
        high=DECODE_FLOOR_MAX_RATIO,
        measured=ratio,
        interval=interval,
    )
    multiple = sweep.weight_bytes / cache_bytes
    return _result(
        "decode-floor",
        "One decode step must read every weight and the whole KV cache: its time is bounded "
        "by their bytes over the memory bandwidth.",
        f"{formulas.decode_seconds_lower_bound.text()} = {si(floor, 's')} at batch {B} "
        f"({binary_bytes(sweep.weight_bytes)} of weights at {si(rate, 'B/s')}, {source})",
        test,
        device=device,
        measured_extra=f"{si(step, 's')} per step"
        + (", each step replayed as one CUDA graph" if sweep.graphed else ""),
        visible=(
            multiple >= DECODE_MIN_WEIGHT_CACHE_MULTIPLE,
            (
                f"the weights ({binary_bytes(sweep.weight_bytes)}) are only {times(multiple)} the "
                f"{binary_bytes(cache_bytes)} last-level cache"
            ),
        ),
        values={"floor_seconds": floor, "step_seconds": step},
    )


# -- training memory ------------------------------------------------------------------------------
def judge_training_memory(result: TrainingPeak, shape: ModelShape, *, device: str) -> ClaimResult:
    """The peak memory of an Adam step is 16 bytes per parameter plus the activations."""
    s = shape.s
    activations = (
        result.tokens * shape.layers * formulas.layer_activation_memory(d=shape.d, d_ff=shape.d_ff, s=s)
    )  # fmt: skip
    states = formulas.adam_training_memory(n_params=result.n_params)
    predicted = float(states + activations)
    weights_and_grads = 2 * formulas.weight_memory(n_params=result.n_params, s=s)
    ratio = result.peak_bytes / predicted
    test = TwoSided(
        "peak ÷ formula",
        predicted=1.0,
        alternative="only weights and gradients are held (no optimizer state)",
        alternative_value=float(weights_and_grads + activations) / predicted,
        low=TRAINING_MEMORY_MIN_RATIO,
        high=TRAINING_MEMORY_MAX_RATIO,
        measured=ratio,
        interval=(ratio, ratio),  # an allocator's count, not a timing: no spread
    )
    return _result(
        "training-memory",
        "Training with Adam holds 16 bytes per parameter (weights, gradients and two moments) "
        "plus the activations kept for the backward pass.",
        f"{formulas.adam_training_memory.text()} = {binary_bytes(states)} plus "
        f"{formulas.layer_activation_memory.text()} × {shape.layers} layers × "
        f"{plain_number(result.tokens)} tokens = {binary_bytes(activations)}",
        test,
        device=device,
        measured_extra=f"peak {binary_bytes(result.peak_bytes)}",
        values={"peak_bytes": result.peak_bytes, "predicted_bytes": predicted},
    )


# -- the experiments ------------------------------------------------------------------------------
def judge_wholemodel(
    results: WholeModelResults, peaks: Peaks, *, cache_bytes: int, device: str
) -> list[ClaimResult]:
    """Every whole-model claim, judged from what the experiments measured (nothing runs).

    ``peaks`` and ``cache_bytes`` are the machine's measured peaks and last-level cache, as
    a Run records them.
    """
    judged = [
        judge_backward(results.backward, device=device),
        judge_decode_knee(results.decode, peaks, device=device),
        judge_decode_floor(results.decode, peaks, cache_bytes=cache_bytes, device=device),
    ]
    if results.long_decode is not None:
        judged.append(
            judge_decode_long_context(
                results.long_decode,
                results.decode,
                peaks,
                cache_bytes=cache_bytes,
                device=device,
            )
        )
    judged.append(judge_training_memory(results.training, results.sizes.training, device=device))
    return judged
