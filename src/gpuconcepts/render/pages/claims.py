"""The claims page: every claim of this build's run with its figure, the verdicts of every
recorded run beside it, the roofline claims' rule, and every threshold with its reason.

>>> LABELS["Whole model"]
'model-measured'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from gpuconcepts import units
from gpuconcepts.claims import thresholds
from gpuconcepts.claims.predict import measured_over_predicted, share_within
from gpuconcepts.claims.registry import CLAIMS
from gpuconcepts.render.markdown import (
    literal,
    markdown_claim,
    markdown_claims_summary,
    markdown_claims_table,
    markdown_table,
)
from gpuconcepts.render.plots import draw_result, roofline_chart
from gpuconcepts.render.text import tally_sentence
from gpuconcepts.units import si

if TYPE_CHECKING:
    from gpuconcepts.claims.result import ClaimResult
    from gpuconcepts.measure import Measurement
    from gpuconcepts.render.pages import Glue
    from gpuconcepts.run import Run

LABELS = {
    "DLRM": "claims-dlrm",
    "MLP": "claims-mlp",
    "CNN": "claims-cnn",
    "RNN": "claims-rnn",
    "Transformer": "claims-transformer",
    "Roofline": "claims-roofline",
    "Whole model": "model-measured",  # judged on the page "From a layer to a model"
    "Beyond one device": "distributed",
}
"""Each architecture's section label, where the summary's links point."""


def summary(run: Run, recorded: Sequence[Run]) -> Glue:
    """The run's machine, peaks and tally, and every run's verdicts side by side."""
    peaks = run.peaks
    names = ["This machine (live)", *(f"{r.label} (recorded)" for r in recorded)]
    return {
        "device": run.provenance.device_name,
        "sizes": "quick" if run.provenance.quick else "full",
        "seconds": units.significant(run.provenance.seconds, 2),
        "peak_flops": si(peaks.flops_per_s, "FLOP/s"),
        "peak_bw": si(peaks.bytes_per_s, "B/s"),
        "dtype": peaks.dtype,
        "ridge": units.significant(peaks.ridge_point),
        "summary": markdown_claims_summary([run, *recorded], LABELS, names),
        "n_claims": str(len(run.claims)),
        "tally": tally_sentence(run.counts),
        "recorded_runs": "\n".join(f"* {r.provenance.summary}" for r in recorded) or "* none yet",
    }


def dlrm_table(run: Run) -> Glue:
    """How the DLRM claim's table compares with the last cache as this run measured it, in
    words that its own numbers bear out (the table was once said to be "well above" a cache
    that sysfs reported at twice its size).

    >>> from dataclasses import replace
    >>> from gpuconcepts.run import Provenance, Run
    >>> from gpuconcepts.roofline import Peaks
    >>> here = replace(Provenance.example(), cache_bytes=64 * 2**20,
    ...                sizes={"claims": {"dlrm_table_mib": 256}})
    >>> dlrm_table(Run(here, Peaks("cpu", 1e11, 1e10, "float32"), (), {}, ()))["dlrm_table"]
    'a table of 256 MiB, 4 times the 64 MiB last cache this run measured'
    """
    claims = run.provenance.sizes.get("claims") or {}
    table = int(claims.get("dlrm_table_mib", 0)) * 2**20
    cache = run.provenance.cache_bytes
    if not table:
        return {"dlrm_table": "a table as large as this machine's memory allows"}
    ratio = table / cache
    if ratio >= 2:
        relation = f"{units.significant(ratio, 2)} times the"
    elif ratio > 1:
        relation = "a little larger than the"
    else:
        relation = "no larger than the"
    return {
        "dlrm_table": f"a table of {units.binary_bytes(table)}, {relation} "
        f"{units.binary_bytes(cache)} last cache this run measured"
    }


TESTS_WORDS = {"prediction": "prediction", "direction": "direction only", "fact": "exact check"}
"""How the predictions table names what each claim's test checks (the registry's ``tests``)."""


def predictions(run: Run, recorded: Sequence[Run]) -> Glue:
    """Measured ÷ predicted for every claim of every run (this machine's first), and for each
    run how many of its numeric claims measured within
    :data:`~gpuconcepts.claims.thresholds.PREDICTION_FACTOR` of their prediction.

    The runs are judged as given: a recorded run's claims as :meth:`Run.rejudged
    <gpuconcepts.run.Run.rejudged>` gives them when the book reads it again."""
    runs = [run, *recorded]
    names = ["this machine", *(f"{r.label}, {r.peaks.dtype}" for r in recorded)]
    by_run = [{r.key: r for r in each.claims} for each in runs]
    rows = []
    for result in run.claims:
        tests = CLAIMS[result.key].tests if result.key in CLAIMS else "prediction"
        cells = [f"`{result.key}`", TESTS_WORDS[tests]]
        for found in by_run:
            other = found.get(result.key)
            ratio = None if other is None else measured_over_predicted(other.test)
            cells.append("–" if ratio is None else units.times(ratio))
        rows.append(cells)
    shares = []
    for name, each in zip(names, runs, strict=True):
        within, numbers = share_within(each.claims)
        shares.append(f"* {name}: {within} of {numbers}")
    return {
        "predictions_table": markdown_table(
            ["Claim", "Test", *(f"measured ÷ predicted, {name}" for name in names)], rows
        ),
        "predictions_share": "\n".join(shares),
        "prediction_factor_words": units.times(thresholds.PREDICTION_FACTOR),
        "direction_only": ", ".join(
            f"`{key}`" for key, claim in CLAIMS.items() if claim.tests == "direction"
        )
        or "none",
    }


def each_claim(run: Run) -> Glue:
    """Each claim's Markdown under its key, and the figure of each core claim (where it has
    one) as ``fig-KEY``: the whole model's claims are drawn on their own page (a figure drawn
    here and never shown only slowed the build)."""
    glue: Glue = {}
    for result in run.claims:
        glue[result.key] = markdown_claim(result)
        claim = CLAIMS.get(result.key)
        figure = draw_result(result) if claim is not None and claim.kind == "core" else None
        if figure is not None:
            glue[f"fig-{result.key}"] = figure
    return glue


def rooflines(run: Run, behind: Sequence[Measurement]) -> Glue:
    """The roofline claims' table, their rule's factor, and their measurements
    (``behind``, one per claim, from ``book.claim_measurement``) on the roofline."""
    return {
        "roofline_table": markdown_claims_table(roofline_claims(run)),
        "prediction_factor": units.times(thresholds.PREDICTION_FACTOR),
        "fig-roofline-claims": roofline_chart(run.peaks, list(behind)),
    }


def roofline_claims(run: Run) -> list[ClaimResult]:
    """The run's roofline claims, in its order."""
    return [r for r in run.claims if r.architecture == "Roofline"]


CHANGE_LOG = "{doc}`change log <changes>`"
"""The appendix that dates every change made after a run had been seen (``docs/changes.toml``)."""


def threshold_tables() -> Glue:
    """Every threshold with its value and reason, and where their dated changes are: a link to
    the change log's appendix, which alone keeps them.

    >>> glue = threshold_tables()
    >>> glue["thresholds"].splitlines()[0]
    '| Constant | Value | Why this value |'
    >>> CHANGE_LOG in glue["changes"]
    True
    """
    return {
        "thresholds": markdown_table(
            ["Constant", "Value", "Why this value"],
            [
                [f"`{name}`", units.significant(value), literal(reason)]
                for name, value, reason in thresholds.described()
            ],
        ),
        "changes": (
            f"A change made after a run had been seen is dated in the {CHANGE_LOG}, with what "
            "changed, why, and its effect on the runs."
        ),
    }
