"""``gpuconcepts distributed`` for people: a distributed run's report as a Markdown table for
the book and as text for the terminal, with its claims
(:func:`~gpuconcepts.claims.distributed.judge_distributed`). It reads the value
(:class:`~gpuconcepts.results.distributed.DistributedReport`), which a Run holds and which
imports no renderer.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Any

from gpuconcepts.claims.distributed import judge_distributed
from gpuconcepts.claims.quantities import with_interval
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.measurement import seconds_spread
from gpuconcepts.render.markdown import markdown_table
from gpuconcepts.render.text.claims import format_claim
from gpuconcepts.render.text.runs import with_interval_text
from gpuconcepts.results.distributed import (
    PHASES,
    AlphaBeta,
    Collective,
    DistributedReport,
    fit_alpha_beta,
)
from gpuconcepts.tables import aligned
from gpuconcepts.units import (
    as_long,
    decimal_bytes,
    describe_bytes,
    number,
    percent,
    plain_number,
    plural,
    si,
)


def rows(report: DistributedReport) -> list[list[str]]:
    """The report's main collectives as text cells, header first."""
    table = [
        [
            "collective",
            "formula",
            "formula bytes/device",
            "loopback bytes/device",
            "ratio",
            "time (median ± IQR)",
            "α-β prediction",
        ]
    ]
    for c in report.main:
        predicted = report.predicted_seconds(c)
        table.append(
            [
                c.name,
                c.formula,
                plain_number(round(c.formula_bytes)),
                "-" if c.measured_bytes is None else plain_number(round(c.measured_bytes)),
                "-" if c.bytes_ratio is None else f"{number(c.bytes_ratio, 5)}",
                seconds_spread(c.seconds),
                "-" if predicted is None else si(predicted, "s"),
            ]
        )
    return table


def markdown(report: DistributedReport) -> str:
    """The report's main collectives (:func:`rows`) as a Markdown table for the book."""
    cells = rows(report)
    return markdown_table(cells[0], cells[1:])


def fit_intervals(report: DistributedReport) -> tuple[tuple[float, float, float], ...] | None:
    """The α-β fit's latency α and bandwidth, in that order, each as (value, low, high) with
    its bootstrap interval: the size sweep's repetitions resampled as the α-β claim resamples them
    (:func:`~gpuconcepts.claims.quantities.with_interval`, blocks first, seeded) and the fit
    made again from each resample's medians. A resample whose times do not grow with size has
    no fit: all its time is latency and its bandwidth has no bound, an open upper end of both
    intervals. None without a fit, or when the sweep kept a single repetition of a size (there
    is nothing to resample).
    """
    sweep = report.of_kind("size sweep")
    if report.fit is None or len(sweep) < 2 or any(len(c.seconds) < 2 for c in sweep):
        return None
    sizes = [c.formula_bytes for c in sweep]

    def refit(seconds: Sequence[float]) -> AlphaBeta:
        try:
            return fit_alpha_beta(sizes, seconds)
        except GpuConceptsError:  # no growth with size: all latency, no bound on bandwidth
            return AlphaBeta(math.inf, math.inf, len(sizes))

    entries, blocks = [c.seconds for c in sweep], [c.blocks for c in sweep]
    _, alpha = with_interval(lambda t: refit(t).alpha_s, entries, blocks)
    _, bandwidth = with_interval(lambda t: refit(t).bytes_per_s, entries, blocks)
    return (report.fit.alpha_s, *alpha), (report.fit.bytes_per_s, *bandwidth)


def fit_words(report: DistributedReport) -> str:
    """The α-β fit's latency and bandwidth, each with its interval (:func:`fit_values`), for
    a sentence; "" without a fit.

    >>> import statistics
    >>> from gpuconcepts.results.distributed import Collective
    >>> sweep = tuple(Collective("all-reduce", "size sweep", "ring_allreduce_bytes", {}, n, 1,
    ...                          None, tuple(a + n / 2e9 for a in (1e-4, 1.2e-4, 1.1e-4)), 0)
    ...               for n in (1e3, 1e6))
    >>> fit = fit_alpha_beta([1e3, 1e6], [statistics.median(c.seconds) for c in sweep])
    >>> fit_words(DistributedReport(2, "gloo", True, "demo", {}, sweep, fit, 2, 1.0, {}))
    'α = 110 µs (interval [100 µs, 120 µs]) and a bandwidth of 2 GB/s (interval [1.92 GB/s, 2.08 GB/s]) per process'
    """
    found = fit_values(report)
    if found is None:
        return ""
    alpha, bandwidth = found
    words = f"α = {alpha} and a bandwidth of {bandwidth} per process"
    if fit_intervals(report) is None:
        words += " (the sweep kept a single repetition of a size: the fit has no interval)"
    return words


def fit_values(report: DistributedReport) -> tuple[str, str] | None:
    """The α-β fit's latency and bandwidth as text, each with its bootstrap interval
    (:func:`fit_intervals`), bare where the sweep kept nothing to resample; None without a
    fit."""
    fit = report.fit
    if fit is None:
        return None
    found = fit_intervals(report)
    if found is None:
        return si(fit.alpha_s, "s"), si(fit.bytes_per_s, "B/s")
    (alpha, *alpha_ends), (bandwidth, *bandwidth_ends) = found
    return (
        with_interval_text(alpha, (alpha_ends[0], alpha_ends[1])),
        with_interval_text(bandwidth, (bandwidth_ends[0], bandwidth_ends[1]), "B/s"),
    )


def _phase_shares(c: Collective) -> str:
    """The median time of each phase of lookup ``c`` as a share of their sum."""
    medians = {phase: statistics.median(c.phases[phase]) for phase in PHASES}
    whole = sum(medians.values())
    return ", ".join(f"{phase} {percent(t / whole)}" for phase, t in medians.items())


def _first_in_round(lookups: tuple[Collective, ...]) -> float | None:
    """How long an all-to-all that ran first in its round took against one that ran later,
    each time over its own scheme's median (so that schemes of different bytes pool); None
    when no scheme both ran first and later."""
    first: list[float] = []
    later: list[float] = []
    for c in (c for c in lookups if c.order):  # only lookups timed in shuffled rounds
        typical = statistics.median(c.exchange_seconds)
        for position, t in zip(c.order, c.exchange_seconds, strict=True):
            (first if position == 0 else later).append(t / typical)
    if not first or not later:
        return None
    return statistics.median(first) / statistics.median(later)


def exchange_gap(report: DistributedReport) -> str:
    """Why table-wise and column-wise lookups took different times, from the run's data: the
    same bytes and messages, the α-β model's split of their time into latency and bandwidth,
    and (where the run timed them apart, in shuffled rounds) the share of packing and
    unpacking and the cost of running first."""
    tw = report.collective("tablewise_alltoall_bytes")
    cw = report.collective("columnwise_alltoall_bytes")
    loopback = (
        "not counted on the loopback"
        if tw.measured_bytes is None or cw.measured_bytes is None
        else f"{decimal_bytes(tw.measured_bytes)} and {decimal_bytes(cw.measured_bytes)} "
        "measured on the loopback"
    )
    lines = [
        (
            f"Both send {describe_bytes(tw.formula_bytes)} per device by the formulas "
            f"({loopback}), each as {plural(report.world_size - 1, 'message')} per device "
            "in one all-to-all."
        )
    ]
    if report.fit is not None:
        predicted = report.fit.seconds(tw.formula_bytes, tw.collectives)
        latency = report.fit.alpha_s * tw.collectives / predicted
        lines.append(
            f"The α-β model, which knows only messages and bytes, predicts the same time for "
            f"both, {si(predicted, 's')}: {percent(latency)} of it the latency α of the call "
            f"and {percent(1 - latency)} the bytes over the bandwidth."
        )
    lines.append(
        f"Whole, the table-wise lookup took {seconds_spread(tw.seconds)} and the column-wise "
        f"{seconds_spread(cw.seconds)} (the median ± IQR of "
        f"{plural(len(tw.seconds), 'repetition')} in "
        f"{'one block' if tw.blocks == 1 else f'{tw.blocks} blocks'})."
    )
    if not (tw.phases and cw.phases and tw.order):
        lines.append(
            "This run timed each lookup whole, every scheme after the previous one, so the "
            "gap cannot be split into packing, exchange and unpacking, nor told from run order."
        )
        return " ".join(lines)
    lines.append(
        f"Timed apart, the table-wise lookup spent {_phase_shares(tw)}; the column-wise "
        f"{_phase_shares(cw)}. The all-to-alls alone took "
        f"{seconds_spread(tw.exchange_seconds)} and {seconds_spread(cw.exchange_seconds)}."
    )
    first = _first_in_round(report.of_kind("sharded embedding"))
    if first is not None:
        lines.append(
            "The three schemes ran in a shuffled order in each round; an all-to-all that ran "
            f"first took {as_long(first, 'one that ran later')} (each over its scheme's median)."
        )
    return " ".join(lines)


def report_dict(report: DistributedReport) -> dict[str, Any]:
    """``gpuconcepts distributed --json``: the report's JSON form
    (:meth:`~gpuconcepts.results.distributed.DistributedReport.to_dict`) with its claims."""
    claims = [r.to_dict(with_plot=False) for r in judge_distributed(report)]
    return report.to_dict() | {"claims": claims}


def format_report(report: DistributedReport) -> str:
    """The report as text: the table, the fit, then each claim."""
    fit = report.fit
    fit_line = (
        f"no α-β fit: {report.fit_problem}"
        if fit is None
        else f"α-β fit over {fit.points} all-reduce sizes: {fit_words(report)}"
    )
    head = (
        f"gpuconcepts distributed: {report.device}, "
        f"{'quick' if report.quick else 'full'} sizes, {number(report.seconds)} s"
    )
    body = [format_claim(i, r) for i, r in enumerate(judge_distributed(report), start=1)]
    return "\n".join([head, "", aligned(rows(report)), "", fit_line, "", *body])
