"""The whole model's decode claims: throughput against batch up to its knee
(:func:`judge_decode_knee`), the knee moved down by the KV cache at a long context
(:func:`judge_decode_long_context`), and a batch-1 step's weight-read floor
(:func:`judge_decode_floor`). Each is two-sided (see :mod:`~gpuconcepts.claims.wholemodel`),
judged from the decode sweeps the whole-model experiments measured; nothing runs here.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import TYPE_CHECKING

from gpuconcepts import formulas
from gpuconcepts.claims.quantities import paired_interval, with_interval
from gpuconcepts.claims.thresholds import (
    DECODE_FLOOR_MAX_RATIO,
    DECODE_FLOOR_MIN_RATIO,
    DECODE_KNEE_FACTOR,
    DECODE_LONG_KNEE_FACTOR,
    DECODE_LONG_MIN_CACHE_MULTIPLE,
    DECODE_MIN_WEIGHT_CACHE_MULTIPLE,
)
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.measurement import seconds_spread
from gpuconcepts.model import matmul_params
from gpuconcepts.results.claim import ClaimResult
from gpuconcepts.results.plot import PlotSpec, Series
from gpuconcepts.results.twosided import TwoSided
from gpuconcepts.roofline import Peaks
from gpuconcepts.units import binary_bytes, number, plain_number, si, times

if TYPE_CHECKING:
    from gpuconcepts.results.wholemodel import (
        DecodeSweep,
    )
from gpuconcepts.claims.whole_claim import whole_result


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
    """The rate a decode step can read its weights, and where it comes from: the reference
    kernel timed in the same rounds as the steps (``sweep.reference_kernel``: the STREAM triad
    over as many bytes as the weights; a batch-1 product through them in runs recorded before
    run schema 7), else DRAM's measured bandwidth."""
    if sweep.paired:
        rate = sweep.reference_bytes / statistics.median(sweep.reference_seconds)
        return rate, f"the rate {sweep.reference_kernel} read in the same rounds"
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
    return whole_result(
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
        return paired_interval(knee, sweep.seconds, sweep.blocks)
    return with_interval(knee, sweep.seconds)


def judge_decode_long_context(
    sweep: DecodeSweep, short: DecodeSweep, peaks: Peaks, *, cache_bytes: int, device: str
) -> ClaimResult:
    """At a long context the KV cache takes over a decode step, and the knee moves down.

    ``sweep`` ran at a long context, ``short`` at a short one (the ``decode-knee`` claim's sweep).
    """
    predicted = knee_of(sweep.batches, _roofline_step_seconds(sweep, peaks))
    bound = formulas.decode_compute_bound_batch  # where the weights alone put the knee
    weights_only = float(bound(P=peaks.flops_per_s, s=sweep.shape.s, beta=peaks.bytes_per_s))
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
    return whole_result(
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
        f"{_shown(short_knee)}; {si(throughput[0], 'tokens/s')} at batch {sweep.batches[0]}, "
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
        plot=_long_context_plot(sweep, peaks, (predicted, measured)),
    )


def _shown(knee: float) -> str:
    """A knee in words: its batch, or that the time did not grow with the batch."""
    return f"{number(knee)}" if math.isfinite(knee) else "none (no growth with the batch)"


def _long_context_plot(sweep: DecodeSweep, peaks: Peaks, knees: tuple[float, float]) -> PlotSpec:
    """Throughput over the batch at a long context, beside the roofline with the KV cache, and
    the predicted and the measured knee (at the largest batch when none was measured)."""
    batches = tuple(map(float, sweep.batches))
    predicted, measured = knees
    roofline = _roofline_step_seconds(sweep, peaks)
    return PlotSpec(
        f"Decode throughput against batch at {plain_number(sweep.cached)} tokens "
        f"({sweep.shape.describe()})",
        "batch B",
        "tokens per second",
        (
            Series("measured", batches, sweep.tokens_per_second()),
            Series(
                "roofline with the KV cache",
                batches,
                tuple(B / t for B, t in zip(batches, roofline, strict=True)),
                role="predicted",
            ),
        ),
        vlines=(
            ("knee with the KV cache", predicted),
            ("measured knee", measured if math.isfinite(measured) else sweep.batches[-1]),
        ),
    )


def _floor_at(sweep: DecodeSweep, beta: float) -> float:
    """The decode floor at batch ``sweep.batches[0]``, its bytes read at ``beta`` bytes/s."""
    return float(
        formulas.decode_seconds_lower_bound(
            M_w=sweep.weight_bytes, M_kv=sweep.cache_bytes[0], beta=beta
        )
    )


def judge_decode_floor(
    sweep: DecodeSweep, peaks: Peaks, *, cache_bytes: int, device: str
) -> ClaimResult:
    """A decode step at batch 1 takes about the time of reading every weight once."""
    B = sweep.batches[0]
    rate, source = weight_read_rate(sweep, peaks)
    floor = _floor_at(sweep, rate)
    flops = B * formulas.forward_flops_per_token(n_params=matmul_params(sweep.shape))
    compute = float(flops / peaks.flops_per_s)
    if sweep.paired:  # the floor at the rate weights were read in the same round
        ratio, interval = paired_interval(
            lambda t: t[0] / _floor_at(sweep, sweep.reference_bytes / t[1]),
            (sweep.seconds[0], sweep.reference_seconds),
            sweep.blocks,
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
    return whole_result(
        "decode-floor",
        "One decode step must read every weight and the whole KV cache: its time is bounded "
        "by their bytes over the memory bandwidth.",
        f"{formulas.decode_seconds_lower_bound.text()} = {si(floor, 's')} at batch {B} "
        f"({binary_bytes(sweep.weight_bytes)} of weights at {si(rate, 'B/s')}, {source})",
        test,
        device=device,
        measured_extra=f"{seconds_spread(sweep.seconds[0])} per step"
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
