"""The RNN's claims: time linear in S where one GEMM of the same FLOPs is not, a step loop
slower than that GEMM, batch against the critical path.

Its experiment (:data:`EXPERIMENT`) measures a length sweep of ``nn.RNN`` and of its GEMM counterpart, the
loop and the GEMM at one length, and a batch sweep; the ``judge_rnn_*`` functions turn them
into verdicts, without running a kernel. Here each step of the recurrence is three
dispatched operations at a measured 3 µs each, and it pays 10 µs a step after a millisecond
paid once, while the GEMM of the same FLOPs sits near a 20 µs floor:

>>> from gpuconcepts.measure import Measurement
>>> from gpuconcepts.roofline import Peaks
>>> peaks = Peaks("cpu", 1e11, 1e10, "float32", latency_seconds=2e-6, op_seconds=3e-6)
>>> def rnn(name: str, S: int, seconds: float) -> Measurement:
...     sizes = {"B": 1, "S": S, "d_in": 32, "d_h": 32, "s": 4}
...     chain = {"ops": 3 * S, "steps": S} if name == "rnn-module" else {}
...     return Measurement(name, "cpu", sizes, (seconds,), 4096 * S, 64 * S, **chain)
>>> lengths = (16, 64, 256, 1024)
>>> result = judge_rnn_length([rnn("rnn-module", S, 1e-3 + 1e-5 * S) for S in lengths],
...                           [rnn("rnn-gemm", S, 2e-5 + 1e-8 * S) for S in lengths],
...                           peaks=peaks, device="demo")
>>> result.verdict, round(result.test.measured, 1), round(result.test.predicted, 1)
('holds', 1.0, 1.0)
>>> round(result.test.alternative_value, 3), round(result.number("fixed_seconds"), 6)
(2.0, 0.001)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuconcepts import formulas
from gpuconcepts.claims import thresholds as T
from gpuconcepts.claims.fit import AffineFit, fit_affine
from gpuconcepts.claims.plan import Experiment
from gpuconcepts.claims.predict import predicted_seconds
from gpuconcepts.claims.quantities import (
    formula_along,
    param,
    size_values,
    sizes,
    sorted_sweep,
    with_interval,
)
from gpuconcepts.claims.shape import (
    Counterpart,
    bars,
    counterpart_sweep,
    interval_ends,
    median_seconds,
)
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.measure import Measurement
from gpuconcepts.results.claim import ClaimResult
from gpuconcepts.results.measured import Comparison, Measured, Wanted
from gpuconcepts.results.plot import PlotSpec, Series
from gpuconcepts.results.twosided import TwoSided
from gpuconcepts.roofline import Peaks, place
from gpuconcepts.units import US, number, plain_number, si, significant, times

if TYPE_CHECKING:
    from gpuconcepts.claims.roofline import Found
    from gpuconcepts.results.claim_sizes import ClaimSizes


_Decides = Callable[[Sequence[Measurement]], list[ClaimResult]]


def _checks(m: Measured, z: ClaimSizes) -> tuple[tuple[tuple[Wanted, ...], _Decides], ...]:
    """The three comparisons (a length sweep of ``nn.RNN`` and of its GEMM counterpart; the
    loop and the GEMM at one length; a batch sweep), each with the claim it decides."""
    width = {"d_in": z.rnn_d, "d_h": z.rnn_d}
    small = {"B": z.rnn_length_B, "d_in": z.rnn_length_d, "d_h": z.rnn_length_d}
    n = len(z.rnn_lengths)
    peaks, device = m.peaks, m.label

    def length(ms: Sequence[Measurement]) -> list[ClaimResult]:
        return [judge_rnn_length(ms[:n], ms[n:], peaks=peaks, device=device)]

    def loop_vs_gemm(ms: Sequence[Measurement]) -> list[ClaimResult]:
        return [judge_rnn_loop_vs_gemm(*ms, peaks=peaks, device=device)]

    def batch(ms: Sequence[Measurement]) -> list[ClaimResult]:
        return [judge_rnn_batch(ms, peaks=peaks, device=device)]

    by_length = tuple(
        (w, {"S": S, **small}) for w in ("rnn-module", "rnn-gemm") for S in z.rnn_lengths
    )
    pair = tuple((w, {"B": z.rnn_B, "S": z.rnn_S, **width}) for w in ("rnn-loop", "rnn-gemm"))
    by_batch = tuple(("rnn-module", {"B": B, "S": z.rnn_S, **width}) for B in z.rnn_batches)
    return ((by_length, length), (pair, loop_vs_gemm), (by_batch, batch))


def comparisons(m: Measured, z: ClaimSizes) -> tuple[Comparison, ...]:
    """The RNN's three comparisons, each checked by the claim it decides."""
    return tuple(Comparison(wanted, check) for wanted, check in _checks(m, z))


def judge(m: Measured, z: ClaimSizes) -> Found:
    """The RNN's claims, read from ``m`` (it reads no roofline claim's kernel)."""
    return [r for wanted, check in _checks(m, z) for r in check(m.compared(wanted))], {}


EXPERIMENT = Experiment("RNN", comparisons, judge)
"""What the RNN's claims need measured, and how they are judged."""


def judge_rnn_length(
    sweep: Sequence[Measurement],
    parallel: Sequence[Measurement],
    *,
    peaks: Peaks,
    device: str,
) -> ClaimResult:
    """RNN time grows linearly with S: each step adds the same cost, the cost of a chain of
    dependent operations, while one GEMM of the same FLOPs (``parallel``, over the same S)
    adds next to nothing per token.

    The post says "linearly", so the test is the exponent of the growing part of the time in
    S (issue 45): the cost per step fitted over the longer half of the sweep against the
    shorter half's (:func:`fit_affine`, so a cost paid once per call cancels), read as the
    exponent p of ``a·S**p`` that gives that ratio between the halves' mean lengths (1 when
    each step adds the same cost, 2 when the cost per step grows with S). It holds within
    :data:`~gpuconcepts.claims.thresholds.RNN_EXPONENT_TOLERANCE` of 1; the alternative is a
    quadratic cost. The cost per step the once-measured ceilings predict (a chain of
    operations at the per-operation floor) is shown beside it, the model's, never the test.
    """
    fixed = ("B", "d_in", "d_h")
    what = "an RNN length sweep"
    ordered = sorted_sweep(sweep, "S", fixed=fixed, what=what)
    counterpart = Counterpart(
        "the steps run in parallel, as the GEMM does", "one GEMM of the same FLOPs", parallel
    )
    other = counterpart_sweep(counterpart, ordered, fixed=fixed, what=what)
    lengths = size_values(ordered, "S")
    seconds = tuple(median_seconds(m) for m in ordered)
    other_seconds = tuple(median_seconds(m) for m in other)
    fit = fit_affine(lengths, seconds)
    per_step = fit.per_unit / US
    predicted_times = tuple(predicted_seconds(m, peaks) for m in ordered)
    predicted = fit_affine(lengths, predicted_times).per_unit / US
    gemm = fit_affine(lengths, other_seconds)
    # linear: the shorter and the longer half of the sweep cost the same per step
    k = len(lengths) // 2 + 1
    short, long = lengths[:k], lengths[-k:]
    spread_s = (long[0] + long[-1]) / (short[0] + short[-1])  # the halves' mean lengths

    def bend_of(t: Sequence[float]) -> float:
        return fit_affine(long, t[-k:]).per_unit / fit_affine(short, t[:k]).per_unit

    def exponent_of(t: Sequence[float]) -> float:
        # a·S**p costs per step ∝ S**(p-1) over a range; a slope that fell to 0 or below
        # reads as no growth at all (finite, so the interval stays a number)
        return 1 + math.log(max(bend_of(t), 1e-9)) / math.log(spread_s)

    bend = bend_of(seconds)
    exponent, interval = with_interval(exponent_of, ordered)
    tolerance = T.RNN_EXPONENT_TOLERANCE
    held = ", ".join(f"{name}={param(ordered[0], name)}" for name in fixed)
    first, last = plain_number(lengths[0]), plain_number(lengths[-1])
    spread = interval_ends(m.interval_seconds for m in ordered)
    other_low, other_high = interval_ends(m.interval_seconds for m in other)
    return ClaimResult(
        key="rnn-linear-in-S",
        architecture="RNN",
        claim="RNN time grows linearly with the sequence length S: each step waits for the "
        "one before it, so each adds the same cost.",
        prediction=f"each step is a chain of dependent operations; at the measured ceilings a "
        f"step costs {si(predicted * US, 's')} ({held}), on top of a cost paid once per call",
        test=TwoSided(
            "exponent of the growing part of time in S",
            predicted=T.RNN_EXPONENT,
            alternative="each step costs more the longer the sequence: time ∝ S²",
            alternative_value=2.0,
            low=T.RNN_EXPONENT - tolerance,
            high=T.RNN_EXPONENT + tolerance,
            measured=exponent,
            interval=interval,
        ),
        detail=f"time = {_line(fit)} over S = {first} … {last} (R² {number(fit.r_squared)}); "
        f"cost per step {si(per_step * US, 's')} (the measured ceilings predict "
        f"{si(predicted * US, 's')}), over S = {plain_number(long[0])} … {last} "
        f"{times(bend)} that over S = {first} … {plain_number(short[-1])}; "
        f"{si(seconds[0], 's')} at S={first}, {si(seconds[-1], 's')} at S={last}; "
        f"one GEMM of the same FLOPs: {_line(gemm)}" + _fused(ordered[-1]),
        device=device,
        values={
            "per_step_seconds": fit.per_unit,
            "per_step_bend": bend,
            "exponent": exponent,
            "fixed_seconds": fit.fixed,
            "predicted_per_step_seconds": predicted * US,
            "gemm_per_token_seconds": gemm.per_unit,
            "r_squared": fit.r_squared,
        },
        plot=PlotSpec(
            title=f"nn.RNN and one GEMM of its FLOPs against S ({held})",
            x_label="sequence length S",
            y_label="seconds",
            series=(
                Series("measured", lengths, seconds, low=spread[0], high=spread[1]),
                Series(counterpart.label, lengths, other_seconds, low=other_low, high=other_high),
                Series(
                    "the measured ceilings' prediction",
                    lengths,
                    predicted_times,
                    role="predicted",
                ),
                Series(
                    f"fit: {_line(fit)}",
                    lengths,
                    tuple(fit.predict(x) for x in lengths),
                    role="threshold",
                ),
            ),
        ),
    )


def _line(fit: AffineFit) -> str:
    """A fitted time in words, e.g. "270 µs + 3.25 µs × S" (a falling one with a minus)."""
    sign = "+" if fit.per_unit >= 0 else "−"
    return f"{si(fit.fixed, 's')} {sign} {si(abs(fit.per_unit), 's')} × S"


def _fused(m: Measurement) -> str:
    """A clause for a recurrence that ran fewer dispatched operations than it has steps
    (cuDNN runs a whole sequence in one kernel): no step then paid the per-operation floor
    that the chain prediction charges each of its operations. Empty otherwise."""
    if m.ops is None or m.steps is None or m.ops >= m.steps:
        return ""
    return (
        f"; at S={plain_number(m.steps)} nn.RNN dispatched {plain_number(m.ops)} operations, "
        "fewer than its steps: the steps ran inside fused kernels, where none pays the "
        "per-operation floor the prediction charges"
    )


def judge_rnn_loop_vs_gemm(
    loop: Measurement, gemm: Measurement, *, peaks: Peaks, device: str
) -> ClaimResult:
    """The dependent step loop is much slower than the same FLOPs run as one GEMM: at least
    :data:`~gpuconcepts.claims.thresholds.RNN_MIN_LOOP_SLOWDOWN` times (the post's "much",
    a direction with its effect size). The ratio the once-measured ceilings predict is shown
    beside it, the model's, never the test."""
    if loop.flops != gemm.flops:
        raise GpuConceptsError(
            f"loop and GEMM must do the same FLOPs; got {loop.flops} and {gemm.flops}"
        )
    S = param(loop, "S")
    slowdown, interval = with_interval(lambda t: t[0] / t[1], (loop, gemm))
    roofline = place(gemm, peaks).predicted_seconds
    loop_predicted, gemm_predicted = predicted_seconds(loop, peaks), predicted_seconds(gemm, peaks)
    predicted = loop_predicted / gemm_predicted
    return ClaimResult(
        key="rnn-loop-vs-gemm",
        architecture="RNN",
        claim="The step-by-step recurrence is much slower than the same arithmetic done at once.",
        prediction=f"both do rnn_flops = {plain_number(loop.flops)} FLOPs on "
        f"rnn_bytes = {plain_number(loop.bytes)} bytes, so the roofline gives both "
        f"{si(roofline, 's')}; only the loop must run its {S} steps in order, each step's "
        f"operations at the measured per-operation floor (the chain roof), so the measured "
        f"ceilings predict {si(loop_predicted, 's')} for the loop against "
        f"{si(gemm_predicted, 's')} for the GEMM (its product's shape in the GEMM sweep)",
        test=TwoSided(
            "loop time ÷ GEMM time",
            predicted=predicted,
            alternative="no dependency: the loop takes as long as the GEMM",
            alternative_value=1.0,
            low=T.RNN_MIN_LOOP_SLOWDOWN,
            high=None,
            measured=slowdown,
            interval=interval,
        ),
        detail=f"step loop {si(median_seconds(loop), 's')}, one GEMM {si(median_seconds(gemm), 's')}",
        device=device,
        values={
            "loop_seconds": median_seconds(loop),
            "gemm_seconds": median_seconds(gemm),
            "slowdown": slowdown,
            "roofline_seconds": place(loop, peaks).predicted_seconds,
        },
        plot=bars(
            f"The same RNN FLOPs, with and without the step dependency (S={S})",
            "implementation",
            "seconds",
            (f"step loop ({S} steps)", "one batched GEMM"),
            (median_seconds(loop), median_seconds(gemm)),
            (place(loop, peaks).predicted_seconds, place(gemm, peaks).predicted_seconds),
            spread=(loop.interval_seconds, gemm.interval_seconds),
        ),
    )


def step_seconds(m: Measurement, peaks: Peaks) -> float:
    """The predicted time of one step of a recurrence: its share of the roofline time, or the
    measured latency floor of one kernel when that is longer (a step cannot start before the
    previous one ends, so each pays at least one kernel's latency)."""
    share = place(m, peaks).predicted_seconds / param(m, "S")
    return max(share, peaks.latency_seconds or 0.0)


def judge_rnn_batch(sweep: Sequence[Measurement], *, peaks: Peaks, device: str) -> ClaimResult:
    """More batch raises throughput, yet the time per step (the critical path) does not fall."""
    ordered = sorted_sweep(sweep, "B", fixed=("S", "d_in", "d_h"), what="an RNN batch sweep")
    batches = size_values(ordered, "B")
    flops = formula_along(formulas.rnn_flops, ordered)
    S = param(ordered[0], "S")
    per_step = tuple(median_seconds(m) / S for m in ordered)
    throughput = tuple(b * S / median_seconds(m) for b, m in zip(batches, ordered, strict=True))
    gain = throughput[-1] / throughput[0]
    latency_ratio, interval = with_interval(lambda t: t[1] / t[0], (ordered[0], ordered[-1]))
    k = batches[-1] / batches[0]
    predicted = step_seconds(ordered[-1], peaks) / step_seconds(ordered[0], peaks)
    b0, b1 = plain_number(batches[0]), plain_number(batches[-1])
    # each point's spread: its time's quartiles, on the plot's scale (relative to B=b0's median)
    quartiles = tuple(m.interval_seconds for m in ordered)
    step_low, step_high = interval_ends(
        (lo / S / per_step[0], hi / S / per_step[0]) for lo, hi in quartiles
    )
    rate_low, rate_high = interval_ends(
        (b * S / hi / throughput[0], b * S / lo / throughput[0])
        for b, (lo, hi) in zip(batches, quartiles, strict=True)
    )
    return ClaimResult(
        key="rnn-batch-vs-critical-path",
        architecture="RNN",
        claim="More batch raises throughput but does not shorten the sequential critical path "
        "(a direction only: the test asks that time per step not fall with B, not how much it "
        "rises).",
        prediction=f"rnn_flops grows {number(flops[-1] / flops[0])}× from B={b0} to B={b1}, all "
        f"of it parallel within a step; the {S} steps stay in order, so time per step cannot "
        "fall below its value at the smallest batch (the roofline with the latency floor "
        f"per step gives {times(predicted)})",
        test=TwoSided(
            f"time per step at B={b1} ÷ at B={b0}",
            predicted=predicted,
            alternative="batch shortens the critical path: time per step ∝ 1/B",
            alternative_value=1 / k,
            low=T.RNN_MIN_LATENCY_RATIO,
            high=k / T.RNN_MIN_THROUGHPUT_GAIN,
            measured=latency_ratio,
            interval=interval,
        ),
        detail=f"throughput {significant(throughput[0])} → {significant(throughput[-1])} "
        f"tokens/s ({times(gain)}); time per step {si(per_step[0], 's')} → "
        f"{si(per_step[-1], 's')}",
        device=device,
        values={
            "throughput_gain": gain,
            "latency_ratio": latency_ratio,
            "per_step_seconds_min_B": per_step[0],
            "per_step_seconds_max_B": per_step[-1],
        },
        plot=PlotSpec(
            title=f"nn.RNN over S={S}: batch against throughput and time per step",
            x_label="batch size B",
            y_label=f"relative to B={b0}",
            series=(
                Series(
                    "throughput (tokens/s)",
                    batches,
                    tuple(t / throughput[0] for t in throughput),
                    low=rate_low,
                    high=rate_high,
                ),
                Series(
                    "time per step",
                    batches,
                    tuple(p / per_step[0] for p in per_step),
                    low=step_low,
                    high=step_high,
                ),
            ),
            hlines=(
                (
                    f"time per step floor ({number(T.RNN_MIN_LATENCY_RATIO)}×)",
                    T.RNN_MIN_LATENCY_RATIO,
                ),
            ),
        ),
    )


@dataclass(frozen=True)
class StepCost:
    """What the dependency costs per step: a step loop against one GEMM of the same FLOPs.

    Every number is the run's: the per-step FLOPs from the formula, the peak and the latency
    floor from the run's peaks, the two times measured. The slowdown is
    ``1 + extra_per_step / gemm_per_step``: the dependency costs little when each step holds
    enough work that its GEMM time dwarfs the extra a dependent step pays, and much when it
    does not.
    """

    loop: Measurement
    gemm: Measurement
    step_flops: float
    """rnn_flops of one step (S = 1) at the pair's B, d_in, d_h."""
    step_at_peak: float
    """Seconds one step's FLOPs take at the measured peak."""
    latency: float
    """The measured latency floor of one kernel (nan when the run has none)."""

    @property
    def steps(self) -> int:
        """S, the steps the loop runs one after another."""
        return param(self.loop, "S")

    @property
    def floors(self) -> float:
        """One step's work at the peak, in latency floors: the work per step against the
        machine's width."""
        return self.step_at_peak / self.latency

    @property
    def loop_per_step(self) -> float:
        """Measured loop time per step."""
        return median_seconds(self.loop) / self.steps

    @property
    def gemm_per_step(self) -> float:
        """Measured GEMM time per step's worth of its FLOPs."""
        return median_seconds(self.gemm) / self.steps

    @property
    def extra_per_step(self) -> float:
        """What a dependent step costs beyond its share of the GEMM."""
        return self.loop_per_step - self.gemm_per_step

    @property
    def slowdown(self) -> float:
        """Loop time ÷ GEMM time."""
        return median_seconds(self.loop) / median_seconds(self.gemm)


def step_costs(measurements: Sequence[Measurement], peaks: Peaks) -> list[StepCost]:
    """Every step loop of a run beside the GEMM at its sizes, the least work per step first.

    >>> from gpuconcepts.measure import Measurement
    >>> sizes = {"B": 8, "S": 4, "d_in": 64, "d_h": 64, "s": 4}
    >>> f = formulas.rnn_flops(B=8, S=4, d_in=64, d_h=64)
    >>> pair = [Measurement(w, "cpu", sizes, (t,), f, 1.0)
    ...         for w, t in (("rnn-loop", 4e-5), ("rnn-gemm", 1e-5))]
    >>> peaks = Peaks("cpu", 1e11, 1e10, "float32", latency_seconds=5e-6)
    >>> [(c.steps, c.step_flops, c.slowdown, round(c.extra_per_step * 1e6, 3))
    ...  for c in step_costs(pair, peaks)]
    [(4, 131072.0, 4.0, 7.5)]
    """
    names = ("B", "S", "d_in", "d_h")
    gemms = {sizes(m, *names): m for m in measurements if m.workload == "rnn-gemm"}
    found = []
    for loop in (m for m in measurements if m.workload == "rnn-loop"):
        gemm = gemms.get(sizes(loop, *names))
        if gemm is None:
            continue
        B, _, d_in, d_h = sizes(loop, *names)
        flops = float(formulas.rnn_flops(B=B, S=1, d_in=d_in, d_h=d_h))
        latency = peaks.latency_seconds if peaks.latency_seconds is not None else math.nan
        found.append(StepCost(loop, gemm, flops, flops / peaks.flops_per_s, latency))
    return sorted(found, key=lambda c: c.step_flops)
