r"""Whole-model claims: backward against forward, training memory, the experiments every
whole-model claim needs, and every whole-model claim judged in one call
(:func:`judge_wholemodel`; the decode claims are :mod:`~gpuconcepts.claims.decode`'s).

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

import statistics
from typing import TYPE_CHECKING, NamedTuple

from gpuconcepts import formulas
from gpuconcepts.claims.decode import (  # re-exported: the whole model's judges in one place
    judge_decode_floor,
    judge_decode_knee,
    judge_decode_long_context,
)
from gpuconcepts.claims.plan import PartExperiment, PartJudge, judged_part
from gpuconcepts.claims.quantities import paired_interval
from gpuconcepts.claims.thresholds import (
    BACKWARD_FLOP_TOLERANCE,
    BACKWARD_MAX_TIME_RATIO,
    BACKWARD_MIN_TIME_RATIO,
    TRAINING_MEMORY_MAX_RATIO,
    TRAINING_MEMORY_MIN_RATIO,
)
from gpuconcepts.claims.whole_claim import ARCHITECTURE, whole_result
from gpuconcepts.measurement import seconds_spread
from gpuconcepts.model import ModelShape
from gpuconcepts.results.claim import ClaimResult
from gpuconcepts.results.plot import PlotSpec, Series
from gpuconcepts.results.twosided import TwoSided
from gpuconcepts.roofline import Peaks
from gpuconcepts.units import binary_bytes, number, plain_number

if TYPE_CHECKING:
    from gpuconcepts.results.wholemodel import (
        BackwardForward,
        TrainingPeak,
        WholeModelResults,
    )


__all__ = [  # ARCHITECTURE: the label the pages file whole-model claims under
    "ARCHITECTURE",
    "judge_backward",
    "judge_decode_floor",
    "judge_decode_knee",
    "judge_decode_long_context",
    "judge_training_memory",
    "judge_wholemodel",
]


# -- backward against forward ---------------------------------------------------------------------
def judge_backward(result: BackwardForward, *, device: str) -> ClaimResult:
    """The backward pass costs two forward passes: in FLOPs counted, and in time measured."""
    ratio_predicted = result.predicted_backward_flops / result.predicted_forward_flops
    # Each pair was timed side by side, under the same load: one ratio per round, their median,
    # its interval resampling the blocks and then the rounds in them
    measured, interval = paired_interval(
        lambda t: (t[1] - t[0]) / t[0], (result.forward_seconds, result.step_seconds), result.blocks
    )
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
    return whole_result(
        "backward-pass",
        "Training costs three forward passes: the backward pass does twice the forward's "
        "arithmetic (6N against 2N FLOPs per token).",
        f"{flops[0]} and {flops[1]}: backward ÷ forward = {number(ratio_predicted)} "
        f"({plain_number(result.n_params)} weights, {plain_number(result.tokens)} tokens)",
        test,
        device=device,
        measured_extra=f"FlopCounterMode counted {plain_number(counted[1])} backward and "
        f"{plain_number(counted[0])} forward FLOPs (formulas: {plain_number(predicted[1])} "
        f"and {plain_number(predicted[0])}); forward {seconds_spread(result.forward_seconds)}, "
        f"forward and backward {seconds_spread(result.step_seconds)}",
        gate=(exact, "FlopCounterMode's counts equal the formulas exactly"),
        values={
            "forward_flops": counted[0],
            "backward_flops": counted[1],
            "predicted_forward_flops": predicted[0],
            "predicted_backward_flops": predicted[1],
            "flops_exact": exact,
        },
        plot=_backward_bars(forward, step, ratio_predicted),
    )


def _backward_bars(forward: float, step: float, ratio: float) -> PlotSpec:
    """The forward and the backward pass's median times, beside the formulas' ``ratio`` times
    the forward's."""
    return PlotSpec(
        "Backward against forward on a stack of linear layers",
        "pass",
        "seconds (median repetition)",
        (
            Series("measured", (0.0, 1.0), (forward, step - forward)),
            Series("formula × forward", (0.0, 1.0), (forward, forward * ratio), role="predicted"),
        ),
        log_x=False,
        log_y=False,
        categories=("forward", "backward"),
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
    return whole_result(
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
class Machine(NamedTuple):
    """What the whole-model judges read of the machine besides the results: its measured
    peaks, its last-level cache and its name, as a Run records them."""

    peaks: Peaks
    cache_bytes: int
    device: str


def _backward(judge: PartJudge, r: WholeModelResults, m: Machine) -> list[ClaimResult]:
    return [judge(r.backward, device=m.device)]


def _decode(judge: PartJudge, r: WholeModelResults, m: Machine) -> list[ClaimResult]:
    return [judge(r.decode, m.peaks, device=m.device)]


def _decode_cached(judge: PartJudge, r: WholeModelResults, m: Machine) -> list[ClaimResult]:
    return [judge(r.decode, m.peaks, cache_bytes=m.cache_bytes, device=m.device)]


def _long_decode(judge: PartJudge, r: WholeModelResults, m: Machine) -> list[ClaimResult]:
    if r.long_decode is None:  # a run that measured no long context
        return []
    return [judge(r.long_decode, r.decode, m.peaks, cache_bytes=m.cache_bytes, device=m.device)]


def _training(judge: PartJudge, r: WholeModelResults, m: Machine) -> list[ClaimResult]:
    return [judge(r.training, r.sizes.training, device=m.device)]


BACKWARD = PartExperiment("backward against forward", _backward)
"""A stack of linear layers' forward and backward passes, timed in pairs and counted."""

DECODE = PartExperiment("decode sweep", _decode)
"""A decode step at growing batches, read against the machine's peaks."""

DECODE_CACHED = PartExperiment("decode sweep beside the last-level cache", _decode_cached)
"""The decode sweep, read against the peaks and the last-level cache its weights may sit in."""

LONG_DECODE = PartExperiment("decode sweep at a long context", _long_decode)
"""The decode sweep again with a long KV cache per sequence, beside the short one (none when a
run measured no long context)."""

TRAINING = PartExperiment("training step's peak memory", _training)
"""The allocator's peak over an Adam step, at the training shape."""


def judge_wholemodel(
    results: WholeModelResults, peaks: Peaks, *, cache_bytes: int, device: str
) -> list[ClaimResult]:
    """Every whole-model claim, judged from what the experiments measured (nothing runs), in
    the registry's order: each entry's judge on what its experiment reads
    (:func:`~gpuconcepts.claims.plan.judged_part`).

    ``peaks`` and ``cache_bytes`` are the machine's measured peaks and last-level cache, as
    a Run records them.
    """
    return judged_part("whole model", results, Machine(peaks, cache_bytes, device))
