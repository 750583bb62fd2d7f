"""The collectives' bytes and times as claims: prediction, the alternative ruled out, a verdict.

What a distributed run measured (:mod:`gpuconcepts.results.distributed`) judged collective by
collective: the bytes each sends, how the all-reduce's grow with W, row-wise against
table-wise sharding, the exchanges of table-wise and column-wise lookups, the α-β fit's
predictions. The pipeline's claims and the judging of a whole report are in
:mod:`gpuconcepts.claims.distributed`.

Every claim is two-sided. It names the value a formula predicts and a concrete alternative
(the value a plausible wrong model would give), and its pass region holds the prediction
but not the alternative. When the alternative happens to fall inside the pass region at this
run's sizes, the run cannot tell them apart and the claim is "not visible". The regions
live in :mod:`~gpuconcepts.claims.thresholds` (every threshold's one home, with its reason;
each change to one is dated in the change log). Each result carries ``alternative``,
``pass_region`` and ``interval`` in its ``values`` as well.

>>> from gpuconcepts.results.distributed import Collective
>>> c = Collective("all-reduce", "data parallel", "ring_allreduce_bytes",
...                {"n_params": 1000, "s": 4, "W": 2}, 4000, 2, (4010.0, 4100.0), (1e-3,), 0.0)
>>> r = traffic_claim(c, "demo")
>>> r.verdict, r.test.region_text()
('holds', '0.98 ≤ loopback bytes ÷ formula bytes ≤ 1.15')
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Sequence

from gpuconcepts import formulas
from gpuconcepts.claims.quantities import paired_interval, with_interval
from gpuconcepts.claims.thresholds import (
    ALPHA_BETA_FACTOR,
    BYTES_HIGH,
    BYTES_LOW,
    SAME_EXCHANGE_FACTOR,
)
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.measure import quartiles
from gpuconcepts.results.claim import ClaimResult
from gpuconcepts.results.distributed import AlphaBeta, Collective, fit_alpha_beta
from gpuconcepts.results.twosided import TwoSided
from gpuconcepts.units import number, si

ARCHITECTURE = "Beyond one device"

_ALPHA_BETA_CLAIM = (
    "A latency-plus-bandwidth model fitted to all-reduces of growing size predicts the time "
    "of the other collectives' exchanges (the all-to-all alone, not the packing around it)."
)

_SLUG = str.maketrans({" ": "-", ",": ""})


def two_sided(
    *,
    key: str,
    quantity: str,
    claim: str,
    prediction: str,
    predicted: float,
    alternative: str,
    alternative_value: float,
    low: float,
    high: float,
    measured: float,
    interval: tuple[float, float],
    measured_text: str,
    device: str,
    extra_check: tuple[str, bool] | None = None,
    not_visible: str = "",
) -> ClaimResult:
    """A claim whose pass region ``[low, high]`` holds ``predicted`` and not the alternative.

    It holds when the whole interval lies in the region (and ``extra_check``, a condition
    and whether it was met). When the alternative lies inside the region, or
    ``not_visible`` gives a reason, the claim is not visible.
    """
    if not math.isnan(measured):  # the interval always holds the value it surrounds
        interval = (min(interval[0], measured), max(interval[1], measured))
    return ClaimResult(
        key=key,
        architecture=ARCHITECTURE,
        claim=claim,
        prediction=prediction,
        test=TwoSided(
            quantity,
            predicted=predicted,
            alternative=alternative,
            alternative_value=alternative_value,
            low=low,
            high=high,
            measured=measured,
            interval=interval,
        ),
        detail=measured_text,
        gates=(extra_check,) if extra_check else (),
        device=device,
        visible=not not_visible,
        reason=not_visible,
    )


_ALTERNATIVES = {
    "data parallel": (
        0.5,
        "only the reduce-scatter half of the ring is sent, (W - 1)/W n_params s per device",
    ),
    "tensor parallel": (0.5, "only the forward all-reduce is sent (as in inference)"),
    "pipeline": (2.0, "activations and their gradients both cross (a training step)"),
}


def _alternative(c: Collective) -> tuple[float, str]:
    """The ratio to the formula that a plausible wrong model of ``c`` predicts."""
    if c.kind == "sharded embedding":
        world = c.inputs["W"]
        return world / (world - 1), (
            "nothing stays local: every pooled row or partial sum crosses to another device"
        )
    return _ALTERNATIVES.get(c.kind, (2.0, "every byte is counted twice"))


def _loopback(*cs: Collective) -> str:
    """The bytes per device each of ``cs`` sent on the loopback interface, in words."""
    sent = [c.measured_bytes for c in cs]
    words = " and ".join(number(round(b)) for b in sent if b is not None)
    return "no loopback measurement" if None in sent else f"{words} bytes per device on loopback"


def traffic_claim(c: Collective, device: str) -> ClaimResult:
    """The loopback interface carries the bytes the formula counts for one collective."""
    formula = formulas.get(c.formula)
    alternative_value, alternative = _alternative(c)
    ratio, interval = c.bytes_ratio, c.bytes_interval
    visible = ratio is not None and interval is not None
    measured = ratio if ratio is not None else math.nan
    low, high = interval or (math.nan, math.nan)
    return two_sided(
        # the pipeline's name holds its sizes; its key must not, to match runs of other sizes
        key="traffic-pipeline"
        if c.kind == "pipeline"
        else f"traffic-{c.name.lower().translate(_SLUG)}",
        quantity="loopback bytes ÷ formula bytes",
        claim=f"The {c.name} sends the bytes {formula.name} counts.",
        prediction=f"{formula.text()}: {number(round(c.formula_bytes))} bytes per sending device (ratio 1)",
        predicted=1.0,
        alternative=alternative,
        alternative_value=alternative_value,
        low=BYTES_LOW,
        high=BYTES_HIGH,
        measured=measured,
        interval=(low / c.formula_bytes, high / c.formula_bytes),
        measured_text=_loopback(c),
        device=device,
        not_visible=""
        if visible
        else "the traffic did not cross the loopback interface "
        "(NCCL moves it between GPUs), so it was not counted",
    )


def allreduce_growth_claim(sweep: Sequence[Collective], device: str) -> ClaimResult:
    """All-reduce bytes per device grow with W towards 2·n_params·s and stay below it.

    ``sweep`` holds the all-reduce of the same gradient over groups of 2, 3, ... W processes.
    """
    ordered = sorted(sweep, key=lambda c: c.inputs["W"])
    largest = ordered[-1]
    world = largest.inputs["W"]
    payload = largest.inputs["n_params"] * largest.inputs["s"]
    predicted = largest.formula_bytes / payload
    shares = [(c.measured_bytes or math.nan) / payload for c in ordered]
    interval = largest.bytes_interval or (math.nan, math.nan)
    rising = all(a < b for a, b in itertools.pairwise(shares))
    missing = largest.measured_bytes is None
    return two_sided(
        key="allreduce-grows-with-w",
        quantity="bytes per device ÷ n_params·s",
        claim="The bytes each device sends in an all-reduce grow with W towards "
        "2·n_params·s and never reach it.",
        prediction=f"ring_allreduce_bytes / (n_params s) = 2 (W - 1)/W = {number(predicted)} at "
        f"W = {world}",
        predicted=predicted,
        alternative="each device sends n_params s whatever W (ratio 1, as at W = 2)",
        alternative_value=1.0,
        low=predicted * BYTES_LOW,
        high=min(predicted * BYTES_HIGH, 2.0),
        measured=shares[-1],
        interval=(interval[0] / payload, interval[1] / payload),
        measured_text="bytes per device / (n_params s) for W = "
        + ", ".join(
            f"{c.inputs['W']}: {number(share)}" for c, share in zip(ordered, shares, strict=True)
        ),
        device=device,
        extra_check=("the share rises with every added process", rising),
        not_visible="the traffic did not cross the loopback interface" if missing else "",
    )


def rowwise_claim(lookups: Sequence[Collective], device: str) -> ClaimResult:
    """Row-wise sharding moves W times the bytes of table-wise sharding."""
    by_name = {c.formula: c for c in lookups}
    table, row = by_name["tablewise_alltoall_bytes"], by_name["rowwise_alltoall_bytes"]
    predicted = row.formula_bytes / table.formula_bytes
    missing = table.measured_bytes is None or row.measured_bytes is None
    measured = math.nan if missing else (row.measured_bytes or 0) / (table.measured_bytes or 1)
    t_low, t_high = table.bytes_interval or (math.nan, math.nan)
    r_low, r_high = row.bytes_interval or (math.nan, math.nan)
    return two_sided(
        key="rowwise-more-than-tablewise",
        quantity="row-wise ÷ table-wise bytes",
        claim="A row-wise sharded lookup moves more bytes than a table-wise one: every "
        "device sends partial sums for every table, not pooled rows of its own tables.",
        prediction=f"rowwise_alltoall_bytes / tablewise_alltoall_bytes = W = {number(predicted)}",
        predicted=predicted,
        alternative="the same bytes in both schemes (ratio 1, as column-wise and table-wise)",
        alternative_value=1.0,
        low=predicted * BYTES_LOW / BYTES_HIGH,
        high=predicted * BYTES_HIGH / BYTES_LOW,
        measured=measured,
        interval=(r_low / t_high, r_high / t_low),
        measured_text=_loopback(row, table),
        device=device,
        not_visible="the traffic did not cross the loopback interface" if missing else "",
    )


def exchange_ratios(lookups: Sequence[Collective]) -> list[float]:
    """Column-wise over table-wise all-to-all time in each paired round (same-index
    repetitions ran in the same round)."""
    by_formula = {c.formula: c for c in lookups}
    table = by_formula["tablewise_alltoall_bytes"].exchange_seconds
    column = by_formula["columnwise_alltoall_bytes"].exchange_seconds
    if len(table) != len(column):
        raise GpuConceptsError(
            f"paired rounds need as many table-wise as column-wise exchanges; got "
            f"{len(table)} and {len(column)}"
        )
    return [c / t for c, t in zip(column, table, strict=True)]


def same_exchange_claim(
    lookups: Sequence[Collective], device: str, crowded: str = ""
) -> ClaimResult:
    """Table-wise and column-wise lookups send the same bytes in the same messages, so their
    all-to-alls take the same time: the median over paired rounds of column-wise ÷ table-wise
    exchange time is 1, with its bootstrap interval over the rounds."""
    by_formula = {c.formula: c for c in lookups}
    table = by_formula["tablewise_alltoall_bytes"]
    world = table.inputs["W"]
    ratios = exchange_ratios(lookups)
    ratio, interval = paired_interval(lambda r: r[0], [ratios], table.blocks)
    q1, q3 = quartiles(ratios)
    column = by_formula["columnwise_alltoall_bytes"]
    timed_apart = "exchange" in table.phases
    unpaired = (
        ""
        if table.order and column.order
        else "this run timed each scheme's repetitions one after another, not in shuffled paired "
        "rounds, so its scheme and its place in the order cannot be told apart"
    )
    return two_sided(
        key="tablewise-columnwise-same-exchange",
        quantity="column-wise ÷ table-wise exchange time",
        claim="Table-wise and column-wise lookups send the same bytes in the same messages, "
        "so their all-to-all exchanges take the same time.",
        prediction="tablewise_alltoall_bytes = columnwise_alltoall_bytes, one message per "
        "peer each: ratio 1",
        predicted=1.0,
        alternative=f"time follows the rows sent: column-wise sends W = {world} times as many "
        f"rows, each W times shorter (ratio {number(world)})",
        alternative_value=float(world),
        low=1 / SAME_EXCHANGE_FACTOR,
        high=SAME_EXCHANGE_FACTOR,
        measured=ratio,
        interval=interval,
        measured_text=f"median of {len(ratios)} paired rounds, IQR {number(q1, 3)}-"
        f"{number(q3, 3)}, {table.timed_in}"
        + ("" if timed_apart else "; whole lookups, the exchange was not timed apart"),
        device=device,
        not_visible=crowded or unpaired,
    )


def _alpha_beta_unseen(device: str, reason: str) -> ClaimResult:
    """The α-β claim where there is no fit to read, or no times: not visible, for ``reason``."""
    return two_sided(
        key="alpha-beta-predicts",
        quantity="measured ÷ predicted time (worst collective)",
        claim=_ALPHA_BETA_CLAIM,
        prediction="t = calls·α + bytes / bandwidth, fitted to the all-reduce sweep",
        predicted=1.0,
        alternative="latency alone (t = calls·α)",
        alternative_value=math.nan,
        low=1 / ALPHA_BETA_FACTOR,
        high=ALPHA_BETA_FACTOR,
        measured=math.nan,
        interval=(math.nan, math.nan),
        measured_text="no fit",
        device=device,
        not_visible=reason,
    )


def _refitted_interval(
    sweep: Sequence[Collective], predicted_kinds: Sequence[Collective]
) -> tuple[float, float]:
    """The worst measured ÷ predicted ratio's interval, bootstrapped over the repetitions of
    the ``sweep`` (the fit refitted each time) and of the predicted collectives alike; a
    resample whose fit fails is "never predicted" (an open end)."""
    k = len(sweep)

    def worst_ratio(t: Sequence[float]) -> float:
        try:
            refit = fit_alpha_beta([c.formula_bytes for c in sweep], t[:k])
        except GpuConceptsError:
            return math.inf
        found = [
            seconds / refit.seconds(c.formula_bytes, c.collectives)
            for c, seconds in zip(predicted_kinds, t[k:], strict=True)
        ]
        return max(found, key=lambda r: abs(math.log(r)))

    entries = [*(c.seconds for c in sweep), *(c.exchange_seconds for c in predicted_kinds)]
    _, interval = with_interval(
        worst_ratio, entries, [c.blocks for c in (*sweep, *predicted_kinds)]
    )
    return interval


def _latency_only(kinds: Sequence[Collective], fit: AlphaBeta) -> tuple[Collective, float]:
    """The alternative that only each call's latency costs: the largest collective, its ratio."""
    biggest = max(kinds, key=lambda c: c.formula_bytes)
    return biggest, statistics.median(biggest.exchange_seconds) / (
        fit.alpha_s * biggest.collectives or 1e-12
    )


def alpha_beta_claim(
    predicted_kinds: Sequence[Collective],
    fit: AlphaBeta | None,
    device: str,
    problem: str = "",
    sweep: Sequence[Collective] = (),
    crowded: str = "",
) -> ClaimResult:
    """The latency-bandwidth fit from the all-reduce sweep predicts the other collectives.

    Without a fit (``problem`` says why) the claim is not visible here. With the ``sweep`` the
    fit came from, the interval is bootstrapped over the repetitions of the sweep and of the
    predicted collectives alike (the fit is refitted each time: its α is small and noisy, and an
    interval from the worst collective's spread alone claimed a precision the fit does not have);
    a resample whose fit fails counts as "never predicted" (an open end). When the processes
    shared cores (``crowded`` says how), their times are not read: the claim is not visible.
    """
    if fit is None or crowded:
        return _alpha_beta_unseen(
            device, crowded or f"there is no fit to predict with: {problem or 'no sweep'}"
        )
    ratios = [
        statistics.median(c.exchange_seconds) / fit.seconds(c.formula_bytes, c.collectives)
        for c in predicted_kinds
    ]
    worst_index = max(range(len(ratios)), key=lambda i: abs(math.log(ratios[i])))
    worst = predicted_kinds[worst_index]
    prediction_s = fit.seconds(worst.formula_bytes, worst.collectives)
    if sweep:
        low, high = _refitted_interval(sweep, predicted_kinds)
        interval = (min(low, ratios[worst_index]), max(high, ratios[worst_index]))
    else:  # the median's bootstrap interval over the repetitions, never their quartiles
        _, interval = with_interval(
            lambda t: t[0] / prediction_s, [worst.exchange_seconds], [worst.blocks]
        )
    biggest, latency_only = _latency_only(predicted_kinds, fit)
    return two_sided(
        key="alpha-beta-predicts",
        quantity="measured ÷ predicted time (worst collective)",
        claim=_ALPHA_BETA_CLAIM,
        prediction=f"t = calls·α + bytes / bandwidth, α = {si(fit.alpha_s, 's')}, bandwidth "
        f"{si(fit.bytes_per_s, 'B/s')} ({fit.points} sizes); measured / predicted = 1",
        predicted=1.0,
        alternative=f"latency alone (t = calls·α): {biggest.name} would take "
        f"{number(latency_only)}x its prediction",
        alternative_value=latency_only,
        low=1 / ALPHA_BETA_FACTOR,
        high=ALPHA_BETA_FACTOR,
        measured=ratios[worst_index],
        interval=interval,
        measured_text="measured / predicted time: "
        + ", ".join(
            f"{c.name} {number(r, 2)}" for c, r in zip(predicted_kinds, ratios, strict=True)
        )
        + f"; {worst.name} {worst.timed_in}",
        device=device,
    )
