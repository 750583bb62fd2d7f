"""The claims page: every claim of this build's run with its figure, the verdicts of every
recorded run beside it, both ledgers (the post's claims tallied, the model scored on every
kernel, the flips), the roofline claims' rule, and every threshold with its reason.

>>> LABELS["Whole model"]
'model-measured'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from gpuconcepts import units
from gpuconcepts.claims import thresholds
from gpuconcepts.claims.accuracy import AccuracySummary, accuracy, flips, sample_of
from gpuconcepts.claims.accuracy import summary as accuracy_summary
from gpuconcepts.render.ledgers import SAMPLE_WORDS
from gpuconcepts.render.markdown import (
    claim_link,
    literal,
    markdown_claim,
    markdown_claims_summary,
    markdown_claims_table,
    markdown_table,
)
from gpuconcepts.render.plots import draw_result, roofline_chart
from gpuconcepts.render.text import tally_sentence
from gpuconcepts.results.claim import VERDICTS
from gpuconcepts.results.ledger import in_ledger, tally
from gpuconcepts.results.registry import CLAIMS, TESTS_WORDS
from gpuconcepts.roofline.version import model_version
from gpuconcepts.units import si

if TYPE_CHECKING:
    from gpuconcepts.measure import Measurement
    from gpuconcepts.render.pages import Glue
    from gpuconcepts.results.claim import ClaimResult
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
    """The run's machine, peaks and the tally of the post's claims, and every run's verdicts
    side by side: the post's claims in one table, the facts and the model's own predictions
    (not tallied) in another."""
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
        "summary_apart": markdown_claims_summary(
            [run, *recorded], LABELS, names, ledgers=("fact", "model")
        ),
        "n_claims": str(len(in_ledger(run.claims, "post"))),
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


def ledgers(run: Run, recorded: Sequence[Run]) -> Glue:
    """Both ledgers of this build's run and of every recorded run (issue 45): what each
    claim's test checks, in the registry's words; the tally of the post's claims with the
    facts and the model's own predictions apart; the post's model scored on every kernel
    (:mod:`~gpuconcepts.claims.accuracy`), out of sample for a run recorded with this model
    version and in sample for one recorded before it; what is not judged, with its reason;
    and every flip of a recorded run."""
    runs = [run, *recorded]
    names = ["This machine (live)", *(f"{r.label}, {r.peaks.dtype}" for r in recorded)]
    tests = [
        [claim_link(r.key, r.claim), TESTS_WORDS[CLAIMS[r.key].tests]]
        for r in run.claims
        if r.key in CLAIMS
    ]
    pairs = list(zip(names, runs, strict=True))
    flipped = flip_rows(pairs)
    unjudged = [row for name, each in pairs for row in not_judged_rows(name, each)]
    return {
        "tests_table": markdown_table(["Claim", "What its test checks"], tests),
        "n_post": str(len(in_ledger(run.claims, "post"))),
        "tally_table": markdown_table(
            [
                "Run",
                "The post's claims",
                *VERDICTS,
                "Facts that hold (not tallied)",
                "The model's predictions that hold (not tallied)",
            ],
            [_tally_row(name, each) for name, each in pairs],
        ),
        "accuracy_table": markdown_table(
            [
                "Run",
                "Sample",
                "Kernels",
                f"Within {units.times(thresholds.PREDICTION_FACTOR)}",
                "Median abs(log2 measured ÷ predicted)",
                "Worst kernel (measured ÷ predicted)",
                *STORED_COLUMNS,
            ],
            [_score_row(name, each) for name, each in pairs],
        ),
        "model_version": model_version(),
        "direction_effect": units.times(thresholds.DIRECTION_MIN_EFFECT),
        "rnn_tolerance": units.number(thresholds.RNN_EXPONENT_TOLERANCE),
        "n_flips": units.plain_number(len(flipped)),
        "flips_table": flips_table(flipped),
        "sample_table": sample_table(runs),
        "n_not_judged": units.plain_number(len(unjudged)),
        "not_judged_table": markdown_table(
            ["Run", "Claim or kernel", "Why it is not judged"], unjudged
        )
        if unjudged
        else "Every claim and every kernel of every run is judged.",
    }


def flip_rows(named: Sequence[tuple[str, Run]]) -> list[list[str]]:
    """Every flip of every run: its name, the claim in words (:func:`claim_words`), and the
    stored verdict → today's."""
    return [[name, claim_words(run, f.key), f"{f.stored} → {f.now}"] for name, run in named
            for f in flips(run)]  # fmt: skip


def claim_words(run: Run, key: str) -> str:
    """The claim ``key`` as a reader knows it: its statement as ``run`` holds it (today's
    judges' words first, then the words stored when it was measured, for a claim judged no
    more), linked to where its page discusses it. A registry key means nothing to a reader,
    so it is shown only for a claim the run does not hold at all.

    >>> from dataclasses import replace
    >>> from gpuconcepts.results.claim import example
    >>> from gpuconcepts.run import Provenance, Run
    >>> from gpuconcepts.roofline import Peaks
    >>> said = replace(example(), key="mlp-batch-trend")
    >>> demo = Run(Provenance.example(), Peaks("cpu", 1e11, 1e10, "float32"), (), {}, (said,))
    >>> claim_words(demo, "mlp-batch-trend")
    '{ref}`Bigger batches run faster per sample. <claim-mlp-batch-trend>`'
    >>> claim_words(demo, "gone")
    'gone'
    """
    said = {r.key: r.claim for r in (*run.saved_claims, *run.claims)}  # today's words win
    return claim_link(key, said.get(key, key))


def flips_table(rows: Sequence[Sequence[str]]) -> str:
    """Markdown: the flips of :func:`flip_rows`, or a sentence saying there is none."""
    if not rows:
        return "No verdict of a recorded run changed when today's judges read it again."
    return markdown_table(["Run", "Claim", "Stored verdict → verdict now"], rows)


def sample_table(runs: Sequence[Run]) -> str:
    """Markdown: ledger 2 pooled by sample, in sample (runs recorded before this model
    version) and out of sample (runs recorded with it): how many runs and kernels, the share
    within 2×, the median |log2 measured ÷ predicted| and the worst kernel, then the share and
    median over the predictions the runs stored when they were measured
    (:data:`STORED_COLUMNS`); "—" for a sample that holds no run yet."""
    rows = []
    for sample in ("in", "out"):
        mine = [run for run in runs if sample_of(run) == sample]
        found = accuracy_summary([row for run in mine for row in accuracy(run)])
        rows.append(
            [
                SAMPLE_WORDS[sample],
                units.plain_number(len(mine)),
                units.plain_number(found.kernels),
                units.measured_or_dash(found.share_within, units.percent),
                units.measured_or_dash(found.median_abs_log2, units.number),
                f"{found.worst} ({units.times(found.worst_ratio)})"
                if found.worst
                else units.NOTHING,
                *_stored_cells(found),
            ]
        )
    return markdown_table(
        [
            "Sample",
            "Runs",
            "Kernels judged",
            f"Within {units.times(thresholds.PREDICTION_FACTOR)}",
            "Median abs(log2 measured ÷ predicted)",
            "Worst kernel (measured ÷ predicted)",
            *STORED_COLUMNS,
        ],
        rows,
    )


STORED_COLUMNS = (
    f"Within {units.times(thresholds.PREDICTION_FACTOR)}, as stored when measured",
    "Median abs(log2), as stored when measured",
)
"""The columns of ledger 2's tables that score the predictions a run stored when it was
measured (:attr:`~gpuconcepts.claims.accuracy.AccuracyRow.stored_predicted_seconds`), beside
today's model's: for a run recorded before this model version, the gap between the two is what
refitting the model on it gained in sample."""


def _stored_cells(found: AccuracySummary) -> list[str]:
    """The share within 2× and the median |log2| of the stored predictions ("—" when the
    runs stored none)."""
    return [
        units.measured_or_dash(found.stored_share_within, units.percent),
        units.measured_or_dash(found.stored_median_abs_log2, units.number),
    ]


def _tally_row(name: str, run: Run) -> list[str]:
    """A run's tally of the post's claims, with the facts and the model's predictions apart."""
    counts = tally(run.claims)
    return [
        name,
        str(sum(counts.values())),
        *(str(counts[v]) for v in VERDICTS),
        _held(in_ledger(run.claims, "fact")),
        _held(in_ledger(run.claims, "model")),
    ]


def _score_row(name: str, run: Run) -> list[str]:
    """A run's ledger 2 in a row: its sample, the kernels judged, the share within 2×, the
    median |log2| and the worst kernel."""
    found = accuracy_summary(accuracy(run))
    return [
        name,
        SAMPLE_WORDS[sample_of(run)],
        str(found.kernels),
        units.measured_or_dash(found.share_within, units.percent),
        units.measured_or_dash(found.median_abs_log2, units.number),
        f"{found.worst} ({units.measured_or_dash(found.worst_ratio, units.times)})"
        if found.worst
        else units.NOTHING,
        *_stored_cells(found),
    ]


NOT_JUDGED = "not judged"
"""How a reason begins when a verdict or a kernel's score is left out because what it reads
was measured another way than the kernel ran (:mod:`~gpuconcepts.claims.accuracy`)."""


PREDICTION_ONLY = "(its prediction alone: the verdict stands)"
"""How the table of what is not judged names a claim whose verdict stands but whose
prediction, shown beside it, is left out (it reads what was measured another way)."""

KERNEL_TIME = "the model's time for "
"""How the table of what is not judged names a kernel left out of ledger 2: its predicted
time is the score left out, not the kernel."""


def not_judged_rows(name: str, run: Run) -> list[list[str]]:
    """Every claim of ``run`` (in either ledger), every prediction shown beside a verdict and
    every kernel of its ledger 2 that is not judged, with the reason, so that none is dropped
    in silence."""
    rows = [
        [name, claim_link(r.key, r.claim), r.reason.removeprefix(f"{NOT_JUDGED}: ")]
        for r in run.claims
        if not r.visible and r.reason.startswith(NOT_JUDGED)
    ]
    rows += [  # the verdict stands: it reads no prediction (claims.accuracy.unjudged)
        [name, f"{claim_link(r.key, r.claim)} {PREDICTION_ONLY}",
         str(why).removeprefix(f"{NOT_JUDGED}: ")]
        for r in run.claims
        if (why := r.values.get("prediction_not_judged"))
    ]  # fmt: skip
    rows += [
        [name, f"{KERNEL_TIME}{row.kernel}", row.not_judged.removeprefix(f"{NOT_JUDGED}: ")]
        for row in accuracy(run)
        if row.not_judged
    ]
    return rows


def _held(results: Sequence[ClaimResult]) -> str:
    """ "k of n" claims that hold, or "none" when there is no such claim."""
    if not results:
        return "none"
    return f"{sum(r.verdict == 'holds' for r in results)} of {len(results)}"


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
    """The roofline claims' table, the shares of the binding roof their rule allows, and
    their measurements
    (``behind``, one per claim, from ``book.claim_measurement``) on the roofline."""
    return {
        "roofline_table": markdown_claims_table(roofline_claims(run)),
        "prediction_factor": units.times(thresholds.PREDICTION_FACTOR),
        "roof_min_share": units.percent(thresholds.ROOF_MIN_SHARE),
        "roof_max_share": units.times(1 / thresholds.ROOF_MIN_SHARE),
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
