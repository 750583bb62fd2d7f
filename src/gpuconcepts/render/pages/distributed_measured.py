"""The distributed page's measured part: this build's distributed run, its traffic and
claims, the pipeline's bubble at each number of micro-batches, the α-β fit and where the
table-wise and column-wise times went.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuconcepts import formulas, units
from gpuconcepts.claims.distributed import bubble_with_messages, judge_distributed
from gpuconcepts.render import markdown_claim, markdown_claims_table, markdown_table, plots
from gpuconcepts.render.pages import Glue, unmeasured
from gpuconcepts.render.text.distributed import exchange_gap, fit_words
from gpuconcepts.render.text.distributed import markdown as traffic_markdown

if TYPE_CHECKING:
    from gpuconcepts.results.distributed import DistributedReport
    from gpuconcepts.run import Run


CLAIMS = (
    "rowwise-more-than-tablewise",
    "tablewise-columnwise-same-exchange",
    "allreduce-grows-with-w",
    "alpha-beta-predicts",
    "pipeline-bubble",
    "pipeline-bubble-shrinks",
)
"""The claims the page states one by one, in its prose."""


def not_measured(run: Run) -> str:
    """Why ``run`` holds no distributed measurement to show, in words; "" when it holds one."""
    if run.distributed is None:
        return run.skipped.get("distributed", "this run did not measure it")
    if not run.distributed.pipelines:
        return "its processes started but measured no collective"
    return ""


MEASURED_TEXTS = (
    "world", "run_device", "run_seconds", "traffic_table", "traffic_claims", "n_traffic",
    "n_traffic_hold", "bubble_sweep_rows", "bubble_micro", "fit_points", "fit_result",
    "growth_groups", "tc_gap_text",
)  # fmt: skip
MEASURED_FIGURES = ("traffic", "alpha_beta")
"""What :func:`measured` glues besides ``crowded`` and each claim (a test checks they agree),
so that a run without the part still glues every name the page reads."""


def nothing_measured(why: str) -> Glue:
    """What :func:`measured` glues for a run without the part: "—" for each text, a figure
    that says ``why``, and the crowding note and each claim saying it in words."""
    missing = unmeasured(MEASURED_TEXTS, MEASURED_FIGURES, why)
    missing["crowded"] = f"This machine measured no distributed part: {why}."
    for key in CLAIMS:
        missing[f"claim_{key}"] = f"This run did not measure it: {why}."
    return missing


def bubble_sweep(report: DistributedReport) -> list[list[str]]:
    """Each measured pipeline's row: its micro-batches, GPipe's bubble, the bubble with its
    messages at the fitted α-β ("-" without a fit), the measured bubble, and how much slower a
    stage's work ran in the pipeline than alone."""
    fit = report.fit
    return [
        [
            str(c.schedule["m"]),
            units.percent(formulas.pipeline_bubble_fraction(p=c.schedule["p"], m=c.schedule["m"])),
            "-" if fit is None else units.percent(bubble_with_messages(c, fit)),
            units.percent(c.bubble_median),
            "-" if c.slowdown is None else units.times(c.slowdown),
        ]
        for c in report.pipelines
    ]


def measured(run: Run) -> Glue:
    """This build's distributed run: its traffic and claims, the pipeline's bubble at each
    number of micro-batches, the α-β fit and where the table-wise and column-wise times went.
    A run that measured none of it glues "—" and says why (:func:`not_measured`)."""
    why = not_measured(run)
    if why:
        return nothing_measured(why)
    report = run.distributed
    assert report is not None  # not_measured said so
    claims = judge_distributed(report)
    by_key = {r.key: r for r in claims}
    traffic = [r for r in claims if r.key.startswith("traffic-")]
    fit = report.fit
    first = report.pipelines[0]
    glue: Glue = {
        "world": str(report.world_size),
        "run_device": report.device,
        "run_seconds": units.seconds(report.seconds),
        "traffic_table": traffic_markdown(report),
        "traffic": plots.traffic_chart(report),
        "alpha_beta": plots.alpha_beta_chart(report),
        "traffic_claims": markdown_claims_table(traffic),
        "n_traffic": str(len(traffic)),
        "n_traffic_hold": str(sum(r.verdict == "holds" for r in traffic)),
        "crowded": f"On this run {report.crowded}: the claims that read times say so, and the "
        "byte counts stand."
        if report.crowded
        else f"On this run each of the {report.world_size} processes had a core of its own, so "
        "their times are read.",
        "bubble_sweep_rows": markdown_table(
            ["Micro-batches $m$", "GPipe's bubble", "With its messages", "Measured (median)",
             "Stage work, in the pipeline ÷ alone"],
            bubble_sweep(report),
        ),
        "bubble_micro": units.plural(first.inputs["B"] // first.schedule["m"], "row"),
        "fit_points": str(len(report.of_kind("size sweep"))),
        "fit_result": f"could not make it here ({report.fit_problem})"
        if fit is None
        else f"found {fit_words(report)} on this machine's loopback interface. Each interval "
        "is the fit made again from the sweep's repetitions, resampled as for a claim's "
        "interval",
        "growth_groups": units.listing([str(c.inputs["W"]) for c in report.growth]),
        # Table-wise against column-wise: the same bytes in the same messages; the library
        # reads the run's phases and round order to say where their time went.
        "tc_gap_text": exchange_gap(report),
    }  # fmt: skip
    for key in CLAIMS:
        glue[f"claim_{key}"] = (
            markdown_claim(by_key[key])
            if key in by_key
            else f"This run, on {report.device}, did not measure it."
        )
    return glue
