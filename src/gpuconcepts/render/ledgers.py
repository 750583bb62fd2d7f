"""The two ledgers of a run as text for ``gpuconcepts verify`` (issue 45): the facts and the
model's own predictions apart from the post's claims, every kernel against the post's model
(ledger 2) with its summary, and the flips of a recorded run judged again.

>>> from gpuconcepts.claims.accuracy import AccuracyRow, Flip
>>> row = AccuracyRow("mlp at B=4", 1e-6, 3e-6, 3.0, (2.9, 3.1), "compute", "abc", "in",
...                   stored_predicted_seconds=2e-6)
>>> print(format_accuracy([row]))
Ledger 2, the post's model scored (max(F/P, Q/β) with the overhead floor):
  model abc, in sample
  1 kernel: 0% within 2×, median |log2 measured ÷ predicted| 1.58
  as stored when measured: 100% within 2×, median |log2| 0.585
  worst: mlp at B=4 (3×)
  mlp at B=4:
    predicted 1 µs (stored 2 µs), measured 3 µs, 3× [2.9×, 3.1×], compute
>>> print(format_flips([Flip("demo", "run A", "fails", "holds")]))
Flips (a recorded run's saved verdict → today's judges):
  demo (run A): fails → holds
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import TYPE_CHECKING

from gpuconcepts.claims.accuracy import (
    AccuracyRow,
    AccuracySummary,
    Flip,
    accuracy,
    flips,
    summary,
)
from gpuconcepts.render.text import format_claims
from gpuconcepts.render.text.claims import WIDTH
from gpuconcepts.results.claim import ClaimResult
from gpuconcepts.results.ledger import in_ledger
from gpuconcepts.units import measured_or_dash, number, percent, plural, si, times

if TYPE_CHECKING:
    from gpuconcepts.run import Run

SAMPLE_WORDS = {"out": "out of sample", "in": "in sample"}
"""How a sample is said: "out" when the run was recorded with this model version."""


def format_apart(title: str, results: Sequence[ClaimResult]) -> str:
    """Claims shown apart from the tally (the facts, the model's predictions): its verdict,
    then its measured value on a line of its own.

    >>> from gpuconcepts.results.claim import example
    >>> print(format_apart("Facts", [example()]))
    Facts (not tallied):
      demo: holds
        FLOP/s gain = 4 (interval [4, 4])
    """
    if not results:
        return f"{title}: none"
    lines = [f"{title} (not tallied):"]
    for result in results:
        head = result.measured.split("; ")[0]
        lines.append(f"  {result.key}: {result.verdict}\n    {head}")
        if not result.visible and result.reason:  # "not judged" and why, never dropped
            lines += textwrap.wrap(
                f"why: {result.reason}", WIDTH, initial_indent="    ", subsequent_indent="      "
            )
    return "\n".join(lines)


def _ratio(x: float) -> str:
    return measured_or_dash(x, times)


def format_accuracy(rows: Sequence[AccuracyRow]) -> str:
    """Ledger 2 as text: the model version and sample, the summary line, then each kernel on
    two lines (its sizes, then its times), so that no line outgrows a terminal."""
    if not rows:
        return "Ledger 2, the post's model scored: no kernel"
    first = rows[0]
    found = summary(rows)
    worst = [f"  worst: {found.worst} ({_ratio(found.worst_ratio)})"] if found.worst else []
    share = measured_or_dash(found.share_within, percent)
    head = [
        "Ledger 2, the post's model scored (max(F/P, Q/β) with the overhead floor):",
        f"  model {first.model}, {SAMPLE_WORDS[first.sample]}",
        (
            f"  {plural(found.kernels, 'kernel')}: {share} within 2×, median |log2 measured ÷ "
            f"predicted| {number(found.median_abs_log2)}"
        ),
        *_stored_line(found),
        *worst,
    ]
    body = [
        f"  {row.kernel}:\n    predicted {si(row.predicted_seconds, 's')}{_stored(row)}, measured "
        f"{si(row.measured_seconds, 's')}, {_ratio(row.ratio)} "
        f"[{_ratio(row.interval[0])}, {_ratio(row.interval[1])}], {row.bound}"
        + (f"\n    {row.not_judged}" if row.not_judged else "")
        + (f"\n    {_diagnosed(row)}" if row.diagnosis else "")
        for row in rows
    ]
    unscored = sum(bool(row.not_judged) for row in rows)
    if unscored:  # left out of the summary above, each with its reason below
        head.insert(
            len(head) - len(worst),
            f"  {plural(unscored, 'kernel')} not judged, left out of these numbers",
        )
    return "\n".join([*head, *body])


def _stored_line(found: AccuracySummary) -> list[str]:
    """The summary over the predictions the run stored when it was measured, as a line (none
    when it stored none)."""
    if not found.stored_kernels:
        return []
    share = measured_or_dash(found.stored_share_within, percent)
    median = measured_or_dash(found.stored_median_abs_log2, number)
    return [f"  as stored when measured: {share} within 2×, median |log2| {median}"]


def _stored(row: AccuracyRow) -> str:
    """A row's stored prediction beside today's, when it stored one that differs."""
    stored = row.stored_predicted_seconds
    if stored is None or si(stored, "s") == si(row.predicted_seconds, "s"):
        return ""
    return f" (stored {si(stored, 's')})"


def _diagnosed(row: AccuracyRow) -> str:
    """The diagnosis beside a row's miss: the mechanism and the share of the time it allows."""
    share = percent(row.diagnosis_seconds / row.measured_seconds)
    return f"diagnosis: {row.diagnosis}, {si(row.diagnosis_seconds, 's')} ({share} of its time)"


def format_flips(found: Sequence[Flip]) -> str:
    """Every flip of a recorded run, or a line saying there is none."""
    if not found:
        return "Flips: none (every saved verdict is today's)"
    lines = ["Flips (a recorded run's saved verdict → today's judges):"]
    for flip in found:  # a run's long label wraps rather than outgrow a terminal
        lines += textwrap.wrap(
            f"{flip.key} ({flip.run}): {flip.stored} → {flip.now}",
            WIDTH,
            initial_indent="  ",
            subsequent_indent="    ",
        )
    return "\n".join(lines)


def format_ledgers(run: Run, claims: Sequence[ClaimResult]) -> str:
    """``gpuconcepts verify``'s text: the post's claims with their tally (ledger 1), the facts
    and the model's own predictions apart, every kernel against the post's model (ledger 2),
    and the flips of a recorded run judged again."""
    return "\n\n".join(
        [
            format_claims(run, in_ledger(claims, "post")),
            format_apart("Facts, exact checks", in_ledger(claims, "fact")),
            format_apart("The model's own predictions (ledger 2)", in_ledger(claims, "model")),
            format_accuracy(accuracy(run)),
            format_flips(flips(run)),
        ]
    )
