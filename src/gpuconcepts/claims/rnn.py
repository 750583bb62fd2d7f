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

from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING

from gpuconcepts.claims import thresholds as T
from gpuconcepts.claims.fit import AffineFit, AffineHalves, fit_affine
from gpuconcepts.claims.plan import CoreJudge, Experiment, Reading
from gpuconcepts.claims.predict import predicted_seconds
from gpuconcepts.claims.quantities import (
    param,
    size_values,
    sorted_sweep,
    time_each,
    with_interval,
)
from gpuconcepts.claims.rnn_steps import judge_rnn_batch, judge_rnn_loop_vs_gemm
from gpuconcepts.claims.shape import (
    Counterpart,
    counterpart_sweep,
    interval_ends,
    median_seconds,
)
from gpuconcepts.measure import Measurement
from gpuconcepts.results.claim import ClaimResult
from gpuconcepts.results.measured import Comparison, Measured, Wanted
from gpuconcepts.results.plot import PlotSpec, Series
from gpuconcepts.results.twosided import TwoSided
from gpuconcepts.roofline import Peaks
from gpuconcepts.units import US, number, plain_number, si, times

if TYPE_CHECKING:
    from gpuconcepts.results.claim_sizes import ClaimSizes


_Call = Callable[[CoreJudge, Measured, Sequence[Measurement]], list[ClaimResult]]
"""How a judge is called on its comparison's measurements."""


def _checks(z: ClaimSizes) -> tuple[tuple[tuple[Wanted, ...], _Call], ...]:
    """The three comparisons (a length sweep of ``nn.RNN`` and of its GEMM counterpart; the
    loop and the GEMM at one length; a batch sweep), each with how the judge of the claim it
    decides (:data:`_DECIDED`, in the same order) is called on it."""
    width = {"d_in": z.rnn_d, "d_h": z.rnn_d}
    small = {"B": z.rnn_length_B, "d_in": z.rnn_length_d, "d_h": z.rnn_length_d}
    n = len(z.rnn_lengths)

    def length(judge: CoreJudge, m: Measured, ms: Sequence[Measurement]) -> list[ClaimResult]:
        return [judge(ms[:n], ms[n:], peaks=m.peaks, device=m.label)]

    def pair_of(judge: CoreJudge, m: Measured, ms: Sequence[Measurement]) -> list[ClaimResult]:
        return [judge(*ms, peaks=m.peaks, device=m.label)]

    def batch(judge: CoreJudge, m: Measured, ms: Sequence[Measurement]) -> list[ClaimResult]:
        return [judge(ms, peaks=m.peaks, device=m.label)]

    by_length = tuple(
        (w, {"S": S, **small}) for w in ("rnn-module", "rnn-gemm") for S in z.rnn_lengths
    )
    pair = tuple((w, {"B": z.rnn_B, "S": z.rnn_S, **width}) for w in ("rnn-loop", "rnn-gemm"))
    by_batch = tuple(("rnn-module", {"B": B, "S": z.rnn_S, **width}) for B in z.rnn_batches)
    return ((by_length, length), (pair, pair_of), (by_batch, batch))


def comparisons(m: Measured, z: ClaimSizes) -> tuple[Comparison, ...]:
    """The RNN's three comparisons, each checked by the claim it decides."""
    return tuple(
        Comparison(wanted, partial(call, judge, m))
        for judge, (wanted, call) in zip(_DECIDED, _checks(z), strict=True)
    )


def _reading(check: int) -> Reading:
    """A judge called on the ``check``-th of :func:`_checks`' comparisons, read from ``m``."""

    def read(judge: CoreJudge, m: Measured, z: ClaimSizes) -> list[ClaimResult]:
        wanted, call = _checks(z)[check]
        return call(judge, m, m.compared(wanted))

    return read


_LENGTH_SWEEP = "an RNN length sweep"
_PARALLEL = "the steps run in parallel, as the GEMM does"
_ONE_GEMM = "one GEMM of the same FLOPs"
"""The length claim's sweep, its counterpart's alternative and its label, in words."""


def judge_rnn_length(
    sweep: Sequence[Measurement], parallel: Sequence[Measurement], *, peaks: Peaks, device: str
) -> ClaimResult:
    """RNN time grows linearly with S: each step adds the same cost, the cost of a chain of
    dependent operations, while one GEMM of the same FLOPs (``parallel``, over the same S)
    adds next to nothing per token.

    The post says "linearly", so the test is the exponent of the growing part of the time in
    S (issue 45): how the cost per step bends from the shorter half of the sweep to the longer
    (:class:`~gpuconcepts.claims.fit.AffineHalves`: a cost paid once per call cancels), 1 when
    each step adds the same cost, 2 when the cost per step grows with S. It holds within
    :data:`~gpuconcepts.claims.thresholds.RNN_EXPONENT_TOLERANCE` of 1; the alternative is a
    quadratic cost. The cost per step the once-measured ceilings predict (a chain of
    operations at the per-operation floor) is shown beside it, the model's, never the test.
    """
    fixed = ("B", "d_in", "d_h")
    ordered = sorted_sweep(sweep, "S", fixed=fixed, what=_LENGTH_SWEEP)
    other = counterpart_sweep(
        Counterpart(_PARALLEL, _ONE_GEMM, parallel), ordered, fixed=fixed, what=_LENGTH_SWEEP
    )
    lengths = size_values(ordered, "S")
    seconds = tuple(median_seconds(m) for m in ordered)
    fit = fit_affine(lengths, seconds)
    predicted_times = tuple(predicted_seconds(m, peaks) for m in ordered)
    predicted = fit_affine(lengths, predicted_times).per_unit / US
    gemm = fit_affine(lengths, tuple(median_seconds(m) for m in other))
    halves = AffineHalves.of(lengths)
    bend = halves.bend(seconds)
    exponent, interval = with_interval(halves.exponent, ordered)
    held = ", ".join(f"{name}={param(ordered[0], name)}" for name in fixed)
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
            low=T.RNN_EXPONENT - T.RNN_EXPONENT_TOLERANCE,
            high=T.RNN_EXPONENT + T.RNN_EXPONENT_TOLERANCE,
            measured=exponent,
            interval=interval,
        ),
        detail=_length_detail(ordered, fit, predicted, _bent(halves, bend), gemm),
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
        plot=_length_plot(ordered, (_ONE_GEMM, other), predicted_times, fit, held),
    )


def _length_plot(
    ordered: Sequence[Measurement],
    counterpart: tuple[str, Sequence[Measurement]],
    predicted: tuple[float, ...],
    fit: AffineFit,
    held: str,
) -> PlotSpec:
    """nn.RNN's time over S beside its GEMM counterpart's, the ceilings' prediction and the fit."""
    lengths = size_values(ordered, "S")
    label, other = counterpart
    low, high = interval_ends(m.interval_seconds for m in ordered)
    other_low, other_high = interval_ends(m.interval_seconds for m in other)
    return PlotSpec(
        title=f"nn.RNN and one GEMM of its FLOPs against S ({held})",
        x_label="sequence length S",
        y_label="seconds",
        series=(
            Series(
                "measured", lengths, tuple(median_seconds(m) for m in ordered), low=low, high=high
            ),
            Series(
                label,
                lengths,
                tuple(median_seconds(m) for m in other),
                low=other_low,
                high=other_high,
            ),
            Series("the measured ceilings' prediction", lengths, predicted, role="predicted"),
            Series(
                f"fit: {_line(fit)}",
                lengths,
                tuple(fit.predict(x) for x in lengths),
                role="threshold",
            ),
        ),
    )


def _length_detail(
    ordered: Sequence[Measurement], fit: AffineFit, predicted: float, bent: str, gemm: AffineFit
) -> str:
    """The fitted line, the cost per step measured and predicted (µs), how it bends between
    the sweep's halves, the ends' times (each with its spread, :func:`time_each`) and the
    GEMM's line, in words."""
    lengths = size_values(ordered, "S")
    first, last = plain_number(lengths[0]), plain_number(lengths[-1])
    return (
        f"time = {_line(fit)} over S = {first} … {last} (R² {number(fit.r_squared)}); "
        f"cost per step {si(fit.per_unit, 's')} (the measured ceilings predict "
        f"{si(predicted * US, 's')}), {bent}; {time_each(ordered[0])} at S={first}, "
        f"{time_each(ordered[-1])} at S={last}; one GEMM of the same FLOPs: {_line(gemm)}"
        + _fused(ordered[-1])
    )


def _bent(halves: AffineHalves, bend: float) -> str:
    """How the cost per step over the longer half compares with the shorter's, in words."""
    long, short = halves.long, halves.short
    return (
        f"over S = {plain_number(long[0])} … {plain_number(long[-1])} {times(bend)} that over "
        f"S = {plain_number(short[0])} … {plain_number(short[-1])}"
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


_DECIDED: tuple[CoreJudge, ...] = (judge_rnn_length, judge_rnn_loop_vs_gemm, judge_rnn_batch)
"""The judge of each of :func:`_checks`' comparisons, in its order."""

EXPERIMENT = Experiment(
    "RNN", comparisons, {judge: _reading(i) for i, judge in enumerate(_DECIDED)}
)
"""What the RNN's claims need measured, and how each of its judges reads it (none reads a
roofline claim's kernel: the post names the sequential dependency as the RNN's limit)."""
