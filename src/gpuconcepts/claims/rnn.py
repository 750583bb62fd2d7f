"""The RNN's claims: time linear in S, a step loop slower than one GEMM, batch against the
critical path.

:func:`_rnn` asks the lab for a length sweep, the loop and the GEMM at one length, and a batch
sweep; the ``judge_rnn_*`` functions turn them into verdicts, without running a kernel:

>>> from gpuconcepts.measure import Measurement
>>> def loop(S: int, seconds: float) -> Measurement:
...     return Measurement("rnn-module", "cpu", {"B": 8, "S": S, "d_in": 64, "d_h": 64, "s": 4},
...                        (seconds,), 1e6 * S, 1e4 * S)
>>> result = judge_rnn_length([loop(S, 1e-4 * S) for S in (16, 32, 64, 128)], device="demo")
>>> result.verdict, round(result.values["exponent"], 3)
(True, 1.0)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from gpuconcepts import formulas
from gpuconcepts.claims import thresholds as T
from gpuconcepts.claims.quantities import formula_along, param, size_values, sorted_sweep
from gpuconcepts.claims.result import ClaimResult, PlotSpec, Series
from gpuconcepts.claims.shape import _bars, _ends, _power_law, _seconds
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.lab import Lab
from gpuconcepts.measure import Measurement
from gpuconcepts.roofline import Peaks, place
from gpuconcepts.units import plain_number, si, significant, times

if TYPE_CHECKING:
    from gpuconcepts.claims.experiments import ClaimSizes, Found


def _rnn(lab: Lab, z: ClaimSizes) -> Found:
    width = {"d_in": z.rnn_d, "d_h": z.rnn_d}
    by_length = [lab.measure("rnn-module", B=z.rnn_B, S=S, **width) for S in z.rnn_lengths]
    loop = lab.measure("rnn-loop", B=z.rnn_B, S=z.rnn_S, **width)
    gemm = lab.measure("rnn-gemm", B=z.rnn_B, S=z.rnn_S, **width)
    by_batch = [lab.measure("rnn-module", B=B, S=z.rnn_S, **width) for B in z.rnn_batches]
    results = [
        judge_rnn_length(by_length, device=lab.label),
        judge_rnn_loop_vs_gemm(loop, gemm, peaks=lab.peaks, device=lab.label),
        judge_rnn_batch(by_batch, device=lab.label),
    ]
    return results, {}


def judge_rnn_length(sweep: Sequence[Measurement], *, device: str) -> ClaimResult:
    """RNN time grows linearly with S: the fitted exponent over the upper sweep is about 1."""
    return _power_law(
        sweep,
        formulas.rnn_flops,
        exponent=T.RNN_EXPONENT,
        tolerance=T.RNN_EXPONENT_TOLERANCE,
        fixed=("B", "d_in", "d_h"),
        what="an RNN length sweep",
        key="rnn-linear-in-S",
        architecture="RNN",
        claim="RNN time grows linearly with the sequence length S: one step after another.",
        title="nn.RNN time against sequence length",
        device=device,
    )


def judge_rnn_loop_vs_gemm(
    loop: Measurement, gemm: Measurement, *, peaks: Peaks, device: str
) -> ClaimResult:
    """The dependent step loop is much slower than the same FLOPs run as one GEMM."""
    if loop.flops != gemm.flops:
        raise GpuConceptsError(
            f"loop and GEMM must do the same FLOPs; got {loop.flops} and {gemm.flops}"
        )
    S = param(loop, "S")
    slowdown = _seconds(loop) / _seconds(gemm)
    return ClaimResult(
        key="rnn-loop-vs-gemm",
        architecture="RNN",
        claim="The step-by-step recurrence is much slower than the same arithmetic done at once.",
        prediction=f"both do rnn_flops = {plain_number(loop.flops)} FLOPs on "
        f"rnn_bytes = {plain_number(loop.bytes)} bytes, so the roofline gives both "
        f"{si(place(loop, peaks).predicted_seconds, 's')}; only the loop must run its {S} steps in order",
        measured=f"step loop {si(_seconds(loop), 's')}, one GEMM {si(_seconds(gemm), 's')}: "
        f"{times(slowdown)} slower",
        threshold=f"loop time ≥ {T.RNN_MIN_LOOP_SLOWDOWN:g}× GEMM time",
        verdict=slowdown >= T.RNN_MIN_LOOP_SLOWDOWN,
        device=device,
        values={
            "loop_seconds": _seconds(loop),
            "gemm_seconds": _seconds(gemm),
            "slowdown": slowdown,
            "roofline_seconds": place(loop, peaks).predicted_seconds,
        },
        plot=_bars(
            f"The same RNN FLOPs, with and without the step dependency (S={S})",
            "implementation",
            "seconds",
            (f"step loop ({S} steps)", "one batched GEMM"),
            (_seconds(loop), _seconds(gemm)),
            (place(loop, peaks).predicted_seconds, place(gemm, peaks).predicted_seconds),
            spread=(loop.interval_seconds, gemm.interval_seconds),
        ),
    )


def judge_rnn_batch(sweep: Sequence[Measurement], *, device: str) -> ClaimResult:
    """More batch raises throughput, yet the time per step (the critical path) does not fall."""
    ordered = sorted_sweep(sweep, "B", fixed=("S", "d_in", "d_h"), what="an RNN batch sweep")
    batches = size_values(ordered, "B")
    flops = formula_along(formulas.rnn_flops, ordered)
    S = param(ordered[0], "S")
    per_step = tuple(_seconds(m) / S for m in ordered)
    throughput = tuple(b * S / _seconds(m) for b, m in zip(batches, ordered, strict=True))
    gain = throughput[-1] / throughput[0]
    latency_ratio = per_step[-1] / per_step[0]
    b0, b1 = plain_number(batches[0]), plain_number(batches[-1])
    # each point's spread: its time's quartiles, on the plot's scale (relative to B=b0's median)
    quartiles = tuple(m.interval_seconds for m in ordered)
    step_low, step_high = _ends(
        (lo / S / per_step[0], hi / S / per_step[0]) for lo, hi in quartiles
    )
    rate_low, rate_high = _ends(
        (b * S / hi / throughput[0], b * S / lo / throughput[0])
        for b, (lo, hi) in zip(batches, quartiles, strict=True)
    )
    return ClaimResult(
        key="rnn-batch-vs-critical-path",
        architecture="RNN",
        claim="More batch raises throughput but does not shorten the sequential critical path.",
        prediction=f"rnn_flops grows {flops[-1] / flops[0]:g}× from B={b0} to B={b1}, all "
        f"of it parallel within a step; the {S} steps stay in order, so time per step cannot "
        "fall below its value at the smallest batch",
        measured=f"throughput {significant(throughput[0])} → "
        f"{significant(throughput[-1])} tokens/s ({times(gain)}); time per step "
        f"{si(per_step[0], 's')} → {si(per_step[-1], 's')} ({times(latency_ratio)})",
        threshold=f"throughput gain ≥ {T.RNN_MIN_THROUGHPUT_GAIN:g}× and time per step at the "
        f"largest batch ≥ {T.RNN_MIN_LATENCY_RATIO:g}× that at the smallest",
        verdict=gain >= T.RNN_MIN_THROUGHPUT_GAIN and latency_ratio >= T.RNN_MIN_LATENCY_RATIO,
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
                (f"time per step floor ({T.RNN_MIN_LATENCY_RATIO:g}×)", T.RNN_MIN_LATENCY_RATIO),
            ),
        ),
    )
