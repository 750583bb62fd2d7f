"""The appendix "The model scored, kernel by kernel": ledger 2 of every run in full, one table
per run (collapsed, as each holds some seventy kernels), read from the same rows that
``gpuconcepts verify --json`` prints under ``accuracy``
(:func:`~gpuconcepts.claims.accuracy.accuracy`).

Each row gives the time the post's model predicts (with its interval where the run kept the
repetitions of the ceiling that binds it), the measured time with its interval, measured ÷
predicted with its interval (both sides': :mod:`~gpuconcepts.claims.scored_interval`), the
bound, and beside a miss the diagnosis, or why the row is not judged; the prediction the run stored when it was measured, where it stored one,
stands beside today's. The run's title gives the model version that scored it and whether it
is in or out of sample.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from gpuconcepts import units
from gpuconcepts.claims.accuracy import AccuracyRow, accuracy
from gpuconcepts.claims.accuracy import summary as accuracy_summary
from gpuconcepts.claims.thresholds import PREDICTION_FACTOR
from gpuconcepts.render.ledgers import SAMPLE_WORDS
from gpuconcepts.render.markdown import literal, markdown_table

if TYPE_CHECKING:
    from gpuconcepts.render.pages import Glue
    from gpuconcepts.run import Run

COLUMNS = (
    "Kernel",
    "Predicted [interval]",
    "Measured [interval]",
    "Measured ÷ predicted [interval]",
    "Bound",
)
"""The columns every run's table has; a run that stored its predictions adds two more
(:data:`STORED`), and every run's table ends with :data:`NOTE`."""

STORED = ("Prediction stored when measured", "Measured ÷ stored prediction")
"""The columns of the prediction a run stored when it was measured (``stored_predicted_seconds``
and ``stored_ratio`` of an accuracy row), shown only for a run that stored one."""


NOTE = "Diagnosis, or why not judged"
"""The last column: :func:`note`. A diagnosis stands on any row a mechanism explains, not only
beside a miss, so the column is named by what it holds."""


def _ratio(x: float) -> str:
    return units.measured_or_dash(x, units.times)


def _seconds(x: float) -> str:
    return units.measured_or_dash(x, lambda s: units.si(s, "s"))


def _stored(row: AccuracyRow) -> tuple[float, float]:
    """The prediction ``row``'s run stored when it was measured and the ratio to it; nan when
    it stored none (a run recorded before predictions were stored, or rows without the
    fields)."""
    predicted = getattr(row, "stored_predicted_seconds", None)
    ratio = getattr(row, "stored_ratio", None)
    return (
        math.nan if predicted is None else float(predicted),
        math.nan if ratio is None else float(ratio),
    )


def note(row: AccuracyRow) -> str:
    """What stands beside a row: why it is not judged, else its diagnosis, miss or not (the
    mechanism, the least time it allows and its share of the measured time), else nothing.

    >>> row = AccuracyRow("rnn-loop at S=8", 1e-6, 4e-6, 4.0, (3.8, 4.2), "overhead", "abc",
    ...                   "in", diagnosis="chain of steps", diagnosis_seconds=3e-6)
    >>> note(row)
    'diagnosis: chain of steps, 3 µs (75% of its time)'
    """
    if row.not_judged:
        return literal(row.not_judged)
    if row.diagnosis and math.isfinite(row.diagnosis_seconds) and row.measured_seconds > 0:
        share = units.percent(row.diagnosis_seconds / row.measured_seconds)
        return (
            f"diagnosis: {literal(row.diagnosis)}, {_seconds(row.diagnosis_seconds)} "
            f"({share} of its time)"
        )
    return literal(row.diagnosis) if row.diagnosis else ""


def measured_interval(row: AccuracyRow) -> tuple[float, float]:
    """The measured median's interval of ``row``, in seconds: the ratio's ends times the
    prediction's other ends (the rule of
    :func:`~gpuconcepts.claims.scored_interval.ratio_interval`), the prediction alone where
    its ceiling's interval was not recorded.

    >>> row = AccuracyRow("mlp at B=4", 1e-6, 3e-6, 3.0, (1.45, 6.2), "compute", "abc", "out",
    ...                   ceiling_interval=(0.5e-6, 2e-6))
    >>> [round(t * 1e6, 2) for t in measured_interval(row)]
    [2.9, 3.1]
    """
    least, greatest = row.ceiling_interval or (row.predicted_seconds, row.predicted_seconds)
    return row.interval[0] * greatest, row.interval[1] * least


def cells(row: AccuracyRow, stored: bool) -> list[str]:
    """One kernel's row: each time to three significant digits with its interval beside it
    (the prediction's where its ceiling's interval was recorded, :func:`measured_interval`),
    each ratio with its interval, the bound, the stored prediction when ``stored``, and
    :func:`note`.

    >>> row = AccuracyRow("mlp at B=4", 1e-6, 3e-6, 3.0, (2.9, 3.1), "compute", "abc", "out")
    >>> cells(row, stored=False)
    ['mlp at B=4', '1 µs', '3 µs [2.9 µs, 3.1 µs]', '3× [2.9×, 3.1×]', 'compute', '']
    """
    low, high = row.interval
    predicted = _seconds(row.predicted_seconds)
    if row.ceiling_interval is not None:
        least, greatest = row.ceiling_interval
        predicted = f"{predicted} [{_seconds(least)}, {_seconds(greatest)}]"
    fast, slow = measured_interval(row)
    measured = f"{_seconds(row.measured_seconds)} [{_seconds(fast)}, {_seconds(slow)}]"
    ratio = f"{_ratio(row.ratio)} [{_ratio(low)}, {_ratio(high)}]"
    extra = [_seconds(_stored(row)[0]), _ratio(_stored(row)[1])] if stored else []
    return [
        literal(row.kernel),
        predicted,
        measured,
        ratio,
        row.bound,
        *extra,
        note(row),
    ]


def run_table(name: str, rows: Sequence[AccuracyRow]) -> str:
    """Markdown: one run's ledger 2 (its accuracy ``rows``) in a collapsed block, titled with
    the run's ``name``, its kernels, the model version and sample, and the share of the judged
    kernels within the prediction factor.

    >>> row = AccuracyRow("mlp at B=4", 1e-6, 3e-6, 3.0, (2.9, 3.1), "compute", "abc", "out")
    >>> print(run_table("run A", [row]))
    :::{dropdown} run A: 1 kernel, model abc, out of sample, 0% of those judged within 2×
    | Kernel | Predicted [interval] | Measured [interval] | Measured ÷ predicted [interval] | Bound | Diagnosis, or why not judged |
    | --- | --- | --- | --- | --- | --- |
    | mlp at B=4 | 1 µs | 3 µs [2.9 µs, 3.1 µs] | 3× [2.9×, 3.1×] | compute |  |
    :::
    """
    if not rows:
        return f"**{name}**: no kernel to score."
    stored = any(math.isfinite(_stored(row)[0]) for row in rows)
    found = accuracy_summary(rows)
    first = rows[0]
    title = (
        f"{name}: {units.plural(len(rows), 'kernel')}, model {first.model}, "
        f"{SAMPLE_WORDS[first.sample]}, "
        f"{units.measured_or_dash(found.share_within, units.percent)} of those judged within "
        f"{units.times(PREDICTION_FACTOR)}"
    )
    table = markdown_table(
        [*COLUMNS, *(STORED if stored else ()), NOTE],
        [cells(row, stored) for row in rows],
    )
    return f":::{{dropdown}} {title}\n{table}\n:::"


def kernels(run: Run, recorded: Sequence[Run]) -> Glue:
    """The page's glue: every run's ledger 2 in full, this build's run first, each run named
    as the claims appendix names it, and how many kernels in all."""
    named = [("This machine (live)", run), *((f"{r.label}, {r.peaks.dtype}", r) for r in recorded)]
    scored = [(name, accuracy(each)) for name, each in named]
    return {
        "scored_runs": "\n\n".join(run_table(name, rows) for name, rows in scored),
        "n_scored": units.plain_number(sum(len(rows) for _, rows in scored)),
        "n_scored_runs": units.plain_number(len(named)),
    }
