"""The RNN's step dependency: a step loop against one GEMM of the same FLOPs
(:func:`judge_rnn_loop_vs_gemm`, and what the dependency costs per step, :class:`StepCost`, for
the chapter's diagnosis), and batch against the critical path (:func:`judge_rnn_batch`). The
experiment that measures them is :data:`~gpuconcepts.claims.rnn.EXPERIMENT`."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from gpuconcepts import formulas
from gpuconcepts.claims import thresholds as T
from gpuconcepts.claims.predict import predicted_seconds
from gpuconcepts.claims.quantities import (
    formula_along,
    param,
    size_values,
    sizes,
    sorted_sweep,
    time_each,
    with_interval,
)
from gpuconcepts.claims.shape import bars, interval_ends, median_seconds
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.measure import Measurement
from gpuconcepts.results.claim import ClaimResult
from gpuconcepts.results.plot import PlotSpec, Series
from gpuconcepts.results.twosided import TwoSided
from gpuconcepts.roofline import Peaks, place
from gpuconcepts.units import number, plain_number, si, significant, times


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
        detail=f"step loop {time_each(loop)}, one GEMM {time_each(gemm)}",
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
        f"tokens/s ({times(gain)}); time per step {time_each(ordered[0], S)} → "
        f"{time_each(ordered[-1], S)}",
        device=device,
        values={
            "throughput_gain": gain,
            "latency_ratio": latency_ratio,
            "per_step_seconds_min_B": per_step[0],
            "per_step_seconds_max_B": per_step[-1],
        },
        plot=_batch_plot(ordered),
    )


def _batch_plot(ordered: Sequence[Measurement]) -> PlotSpec:
    """Throughput and time per step over the batch sweep, both relative to the smallest batch,
    each point with its time's quartiles on that scale."""
    batches = size_values(ordered, "B")
    S = param(ordered[0], "S")
    per_step = tuple(median_seconds(m) / S for m in ordered)
    throughput = tuple(b * S / median_seconds(m) for b, m in zip(batches, ordered, strict=True))
    quartiles = tuple(m.interval_seconds for m in ordered)
    step_low, step_high = interval_ends(
        (lo / S / per_step[0], hi / S / per_step[0]) for lo, hi in quartiles
    )
    rate_low, rate_high = interval_ends(
        (b * S / hi / throughput[0], b * S / lo / throughput[0])
        for b, (lo, hi) in zip(batches, quartiles, strict=True)
    )
    floor = T.RNN_MIN_LATENCY_RATIO
    return PlotSpec(
        title=f"nn.RNN over S={S}: batch against throughput and time per step",
        x_label="batch size B",
        y_label=f"relative to B={plain_number(batches[0])}",
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
        hlines=((f"time per step floor ({number(floor)}×)", floor),),
    )


@dataclass(frozen=True)
class StepCost:
    """What the dependency costs per step: a step loop against one GEMM of the same FLOPs.

    Every number is the run's: the per-step FLOPs from the formula, the peak and the latency
    floor from the run's peaks, the two times measured. The slowdown is
    ``1 + extra_per_step / gemm_per_step``: the dependency costs little when each step holds
    enough work that its GEMM time dwarfs the extra a dependent step pays, and much when it
    does not. The slowdown and the extra per step are measured quantities derived from two
    times, so each comes with its bootstrap interval, by the rule the claims use
    (:func:`~gpuconcepts.claims.quantities.with_interval`: per round where the loop and the
    GEMM were timed side by side), and the value shown is that rule's, the same the claim
    ``rnn-loop-vs-gemm`` reports for the same pair.
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
    def extra_and_interval(self) -> tuple[float, tuple[float, float]]:
        """What a dependent step costs beyond its share of the GEMM, and its interval."""
        steps = self.steps
        return with_interval(lambda t: (t[0] - t[1]) / steps, (self.loop, self.gemm))

    @property
    def extra_per_step(self) -> float:
        """What a dependent step costs beyond its share of the GEMM (the value of
        :attr:`extra_and_interval`)."""
        return self.extra_and_interval[0]

    @property
    def slowdown_and_interval(self) -> tuple[float, tuple[float, float]]:
        """Loop time ÷ GEMM time, and its interval."""
        return with_interval(lambda t: t[0] / t[1], (self.loop, self.gemm))

    @property
    def slowdown(self) -> float:
        """Loop time ÷ GEMM time (the value of :attr:`slowdown_and_interval`)."""
        return self.slowdown_and_interval[0]


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
