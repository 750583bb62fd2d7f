"""The distributed claims of a whole report, and the pipeline's: :func:`judge_distributed`.

:func:`judge_distributed` judges everything a distributed run measured
(:class:`~gpuconcepts.results.distributed.DistributedReport`): each collective's bytes and the
α-β fit's predictions by the judges of :mod:`gpuconcepts.claims.collectives`, and the
pipeline's bubble here, from GPipe's schedule with the messages between stages priced by the
fit. Nothing runs: a saved run's report is judged again exactly as when it was measured.

>>> from gpuconcepts.distributed import quick_sizes
>>> from gpuconcepts.results.distributed import DistributedReport
>>> empty = DistributedReport(2, "gloo", True, "demo", quick_sizes(), (), None, 2, 0.0, {})
>>> judge_distributed(empty)  # a part that ran nothing has nothing to judge
()
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from gpuconcepts import formulas
from gpuconcepts.claims.collectives import two_sided
from gpuconcepts.claims.plan import PartExperiment, PartJudge, judged_part
from gpuconcepts.claims.quantities import with_interval
from gpuconcepts.claims.thresholds import BUBBLE_MARGIN, PIPELINE_MAX_SLOWDOWN, PREDICTION_FACTOR
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.measure import quartiles
from gpuconcepts.results.claim import ClaimResult
from gpuconcepts.results.distributed import AlphaBeta, Collective, DistributedReport
from gpuconcepts.units import number, si


def judge_distributed(report: DistributedReport) -> tuple[ClaimResult, ...]:
    """Every claim of ``report``, judged from its measurements in the registry's order: each
    entry's judge on what its experiment reads of the report
    (:func:`~gpuconcepts.claims.plan.judged_part`); none when it measured no collective (a
    part that ran nothing has nothing to judge)."""
    if not report.collectives:
        return ()
    return tuple(judged_part("distributed", report))


# -- the experiments: what each claim reads of the report -----------------------------------------
def _each_collective(judge: PartJudge, r: DistributedReport, _: object) -> list[ClaimResult]:
    return [judge(c, r.device) for c in r.main]


def _growth(judge: PartJudge, r: DistributedReport, _: object) -> list[ClaimResult]:
    return [judge(r.growth, r.device)]


def _lookups(judge: PartJudge, r: DistributedReport, _: object) -> list[ClaimResult]:
    return [judge(r.of_kind("sharded embedding"), r.device)]


def _paired_lookups(judge: PartJudge, r: DistributedReport, _: object) -> list[ClaimResult]:
    return [judge(r.of_kind("sharded embedding"), r.device, crowded=r.crowded)]


def _fit(judge: PartJudge, r: DistributedReport, _: object) -> list[ClaimResult]:
    predicted = (*r.of_kind("sharded embedding"), *r.of_kind("tensor parallel"))
    sweep = r.of_kind("size sweep")
    return [judge(predicted, r.fit, r.device, r.fit_problem, sweep=sweep, crowded=r.crowded)]


def _pipelines(judge: PartJudge, r: DistributedReport, _: object) -> list[ClaimResult]:
    return [judge(c, r.fit, r.cores, r.device, crowded=r.crowded) for c in r.of_kind("pipeline")]


def _pipeline_sweep(judge: PartJudge, r: DistributedReport, _: object) -> list[ClaimResult]:
    if len(r.pipelines) < 2:  # one pipeline is no sweep
        return []
    return [judge(r.pipelines, r.fit, r.cores, r.device, crowded=r.crowded)]


EACH_COLLECTIVE = PartExperiment("each collective's bytes", _each_collective)
"""Every collective of the report's main set, one verdict each: the bytes it sent."""

GROWTH = PartExperiment("all-reduces over growing worlds", _growth)
"""The all-reduce's bytes per device at each world size."""

LOOKUPS = PartExperiment("sharded lookups' bytes", _lookups)
"""The sharded embedding lookups, side by side."""

PAIRED_LOOKUPS = PartExperiment("sharded lookups' exchanges, paired", _paired_lookups)
"""The sharded embedding lookups' exchange times, taken in paired rounds (not visible on a
crowded machine)."""

FIT = PartExperiment("the α-β fit and the exchanges it prices", _fit)
"""The latency-bandwidth fit of the all-reduce size sweep, against the lookups' and the
tensor-parallel MLP's exchanges."""

PIPELINES = PartExperiment("each pipeline", _pipelines)
"""Every pipeline run, one verdict each: its bubble."""

PIPELINE_SWEEP = PartExperiment("pipelines over micro-batch counts", _pipeline_sweep)
"""The pipelines of one depth at several micro-batch counts (none with fewer than two)."""


def _stages_apart(c: Collective, cores: int) -> str:
    """Why the stages of pipeline ``c`` did not run side by side; "" when they did."""
    p, slowdown = c.schedule["p"], c.slowdown
    if p > cores:
        return f"{p} stages share {cores} CPU cores, so they cannot all run at once"
    if slowdown is not None and slowdown > PIPELINE_MAX_SLOWDOWN:
        return (
            f"each stage's work took {number(slowdown, 2)}x longer in the pipeline than alone (at "
            f"m = {c.schedule['m']}): the stages (or other programs) competed for the cores, so "
            "they did not run side by side"
        )
    return ""


def _stage_seconds(c: Collective) -> float:
    """A stage's median work on one micro-batch inside pipeline ``c``."""
    return statistics.median(c.busy_seconds) / c.schedule["m"]


def _message_seconds(c: Collective, fit: AlphaBeta) -> float:
    """One micro-batch's message between two stages of pipeline ``c``, priced by ``fit``."""
    return fit.seconds(c.formula_bytes / c.schedule["m"])


def bubble_with_messages(c: Collective, fit: AlphaBeta) -> float:
    """The bubble pipeline ``c`` should show: GPipe's schedule with each micro-batch's message
    between stages priced by the α-β fit of the all-reduces (measured apart from the pipeline)
    and the stages' work as the pipeline measured it
    (:data:`~gpuconcepts.formulas.pipeline_bubble_with_messages`)."""
    p, m = c.schedule["p"], c.schedule["m"]
    return float(
        formulas.pipeline_bubble_with_messages(
            p=p, m=m, t_stage=_stage_seconds(c), t_msg=_message_seconds(c, fit)
        )
    )


_NO_FIT = "no α-β fit of the all-reduces prices the messages between stages"


def bubble_claim(
    c: Collective, fit: AlphaBeta | None, cores: int, device: str, crowded: str = ""
) -> ClaimResult:
    """The idle share of a pipeline stage is the GPipe bubble (p - 1)/(m + p - 1), with each
    micro-batch's message between stages priced by the α-β fit (``fit``; without one the
    claim is not visible)."""
    p, m = c.schedule["p"], c.schedule["m"]
    gpipe = float(formulas.pipeline_bubble_fraction(p=p, m=m))
    if fit is None:
        predicted, alternative = gpipe, (p - 1) / p
    else:
        predicted = bubble_with_messages(c, fit)
        # no overlap: each stage waits for the whole batch, then its one message
        work = m * _stage_seconds(c)
        alternative = 1 - work / (p * work + (p - 1) * fit.seconds(c.formula_bytes))
    half = BUBBLE_MARGIN * (alternative - predicted)
    bubbles = c.bubble
    q1, q3 = quartiles(bubbles)  # the spread, shown beside the value
    # the median's interval, bootstrapped over the blocks, then the repetitions in them
    median, interval = with_interval(lambda b: b[0], [bubbles], [c.blocks])
    crowded = crowded or (_NO_FIT if fit is None else "") or _stages_apart(c, cores)
    messages = (
        ""
        if fit is None
        else f", each message {si(_message_seconds(c, fit), 's')} by the α-β fit, "
        f"each stage's work {si(_stage_seconds(c), 's')} per micro-batch"
    )
    return two_sided(
        key="pipeline-bubble",
        quantity="measured bubble fraction",
        claim="In a pipeline of p stages fed m micro-batches, each stage idles for the "
        "bubble (p - 1)/(m + p - 1) of the time, plus the time its messages take.",
        prediction=f"{formulas.pipeline_bubble_fraction.text()} = {number(gpipe)} (p = {p}, "
        f"m = {m}); with the messages between stages{messages}: {number(predicted)}",
        predicted=predicted,
        alternative="no overlap: each stage waits for the whole batch, sent in one message",
        alternative_value=alternative,
        # half the way to the alternative, and within PREDICTION_FACTOR of the prediction
        low=max(predicted - abs(half), predicted / PREDICTION_FACTOR),
        high=min(predicted + abs(half), predicted * PREDICTION_FACTOR),
        measured=median,
        interval=interval,
        measured_text=f"median of {len(bubbles)} repetitions, IQR {number(q1)}-{number(q3)}, "
        f"{c.timed_in}",
        device=device,
        not_visible=crowded,
    )


def _slope(x: Sequence[float], y: Sequence[float]) -> float:
    """The least-squares slope of ``y`` against ``x`` (with an intercept).

    >>> _slope([1, 2, 3], [2.5, 4.5, 6.5])
    2.0
    """
    mean_x, mean_y = sum(x) / len(x), sum(y) / len(y)
    spread = sum((a - mean_x) ** 2 for a in x)
    return sum((a - mean_x) * (b - mean_y) for a, b in zip(x, y, strict=True)) / spread


def bubble_sweep_claim(
    pipelines: Sequence[Collective],
    fit: AlphaBeta | None,
    cores: int,
    device: str,
    crowded: str = "",
) -> ClaimResult:
    """The bubble shrinks with m as GPipe's schedule says: the measured bubbles of a sweep over
    m, fitted against :func:`bubble_with_messages`'s (the messages priced by ``fit``), have
    slope 1.

    The fit has an intercept, so a constant idle share on top of the bubble (the time to
    start) does not move the slope; a bubble that does not shrink with m gives slope 0.
    Without an α-β fit the messages cannot be priced, and the claim is not visible.
    """
    ordered = sorted(pipelines, key=lambda c: c.schedule["m"])
    p = ordered[0].schedule["p"]
    ms = [c.schedule["m"] for c in ordered]
    if len(set(ms)) < 2 or any(c.schedule["p"] != p for c in ordered):
        raise GpuConceptsError(
            f"a bubble sweep needs one p and at least two values of m; got p, m = "
            f"{[(c.schedule['p'], c.schedule['m']) for c in ordered]}"
        )
    if fit is None:
        predicted = [float(formulas.pipeline_bubble_fraction(p=p, m=m)) for m in ms]
    else:
        predicted = [bubble_with_messages(c, fit) for c in ordered]
    slope, interval = with_interval(
        lambda b: _slope(predicted, b), [c.bubble for c in ordered], [c.blocks for c in ordered]
    )
    medians = [c.bubble_median for c in ordered]
    not_visible = (
        crowded
        or (_NO_FIT if fit is None else "")
        or next((reason for c in ordered if (reason := _stages_apart(c, cores))), "")
    )
    return two_sided(
        key="pipeline-bubble-shrinks",
        quantity="slope of the measured bubble against GPipe's with its messages",
        claim="The pipeline bubble shrinks with the number of micro-batches m as "
        "(p - 1)/(m + p - 1): each added micro-batch adds work but no idle time.",
        prediction=f"{formulas.pipeline_bubble_with_messages.text()} at p = {p} and m = "
        + ", ".join(map(str, ms))
        + " = "
        + ", ".join(f"{number(b)}" for b in predicted)
        + "; measured against it, slope 1",
        predicted=1.0,
        alternative="the bubble does not shrink with m (as when each stage waits for the "
        "whole batch, (p - 1)/p at every m): slope 0",
        alternative_value=0.0,
        low=1.0 - BUBBLE_MARGIN,
        high=1.0 + BUBBLE_MARGIN,
        measured=slope,
        interval=interval,
        measured_text="measured bubble (median) at m = "
        + ", ".join(f"{m}: {number(b)}" for m, b in zip(ms, medians, strict=True))
        + f", each {ordered[0].timed_in}",
        device=device,
        not_visible=not_visible,
    )
