"""The method page: what each run cost to measure, read from its own provenance, and how the
two ledgers score each run (in or out of sample) beside the dated changes of the change log."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import TYPE_CHECKING

from gpuconcepts.changelog import first_dated
from gpuconcepts.claims.accuracy import sample_of
from gpuconcepts.claims.thresholds import INTERVAL_COVERAGE, MIN_BLOCKS, WRONG_VERDICT_RATE
from gpuconcepts.render.ledgers import SAMPLE_WORDS
from gpuconcepts.render.markdown import constant_doc, markdown_table, plain_doc
from gpuconcepts.render.text.sentences import beaten_rule
from gpuconcepts.results import measured
from gpuconcepts.roofline.version import model_version
from gpuconcepts.sweeps import AWAY
from gpuconcepts.units import percent, plain_number, plural, seconds, times

if TYPE_CHECKING:
    from gpuconcepts.changelog import Change
    from gpuconcepts.measure import Measurement
    from gpuconcepts.render.pages import Glue
    from gpuconcepts.run import Run


def kind_of(quick: bool) -> str:
    """A run's length in words.

    >>> kind_of(True), kind_of(False)
    ('quick', 'full')
    """
    return "quick" if quick else "full"


def cost_rows(runs: Sequence[Run]) -> list[list[str]]:
    """One row per run: the machine, when, quick or full, and the seconds its collection took.

    >>> from types import SimpleNamespace
    >>> from gpuconcepts.run.provenance import Provenance
    >>> cost_rows([SimpleNamespace(provenance=Provenance.example())])  # type: ignore[list-item]
    [['cpu (Example CPU, 2 threads)', '2026-01-01', 'quick', '1 s']]
    """
    rows = []
    for run in runs:
        p = run.provenance
        rows.append([p.device_name, p.created_utc[:10], kind_of(p.quick), seconds(p.seconds)])
    return rows


def costs(runs: Sequence[Run]) -> Glue:
    """The page's glue: a table of each run's cost, and how many runs it lists."""
    table = markdown_table(["machine", "measured on", "run", "time to collect"], cost_rows(runs))
    return {"run_costs": table, "n_cost_runs": str(len(runs))}


def noise(runs: Sequence[Run]) -> Glue:
    """The page's one note on how busy each machine was: this build's run's noise probe in a
    sentence, and every recorded run's in a list (the chapters link here rather than repeat it).

    >>> from types import SimpleNamespace
    >>> from gpuconcepts.run.provenance import Provenance
    >>> run = SimpleNamespace(provenance=Provenance.example(), peaks=SimpleNamespace(dtype="float32"))
    >>> glue = noise([run, run])  # type: ignore[list-item]
    >>> glue["noise"]
    'This run recorded no noise probe (it was saved before runs had one).'
    >>> print(glue["noise_recorded"])
    * cpu (Example CPU, 2 threads), float32, 2026-01-01: This run recorded no noise probe (it was saved before runs had one).
    """
    build, *recorded = runs
    lines = [
        f"* {r.provenance.device_name}, {r.peaks.dtype}, {r.provenance.created_utc[:10]}: "
        f"{r.provenance.noise}"
        for r in recorded
    ]
    return {
        "noise": build.provenance.noise,
        "noise_recorded": "\n".join(lines) or "* No run from another machine is recorded yet.",
    }


FIXED_ROUNDS = "fixed rounds"
"""The change log's topic of the change that fixed every comparison's rounds in advance (no
optional stopping): the page dates the runs measured under the old rule from it."""


def rules(changes: Sequence[Change]) -> Glue:
    """The method page's rules in the code's own numbers and words: the stated error rate and
    the interval's coverage, the fewest blocks, the day rounds were fixed in advance (from
    the change log), how far a sweep point stays from a judged kernel, what beating a roof
    means, and what a second look at an anomaly does (the docstring of
    :data:`~gpuconcepts.results.measured.SECOND_LOOK`, after its first sentence, which names
    the group).

    >>> import datetime as dt
    >>> from gpuconcepts.changelog import Change
    >>> glue = rules([Change(dt.date(2026, 12, 7), FIXED_ROUNDS, "w", "y", "e")])
    >>> glue["wrong_verdict_rate"], glue["interval_coverage"], glue["min_blocks"], glue["away"]
    ('5%', '90%', '3', '2×')
    >>> glue["rounds_fixed_since"]
    '2026-12-07'
    """
    look = plain_doc(constant_doc(measured, "SECOND_LOOK"))
    return {
        "wrong_verdict_rate": percent(WRONG_VERDICT_RATE),
        "interval_coverage": percent(INTERVAL_COVERAGE),
        "min_blocks": plain_number(MIN_BLOCKS),
        "rounds_fixed_since": first_dated(changes, FIXED_ROUNDS).isoformat(),
        "away": times(AWAY),
        "beaten": beaten_rule(),
        "second_look": look.split(". ", 1)[-1],
    }


def ledger_rows(runs: Sequence[Run], changes: Sequence[Change]) -> list[list[str]]:
    """One row per run: the machine, the day it was recorded, whether ledger 2 scores it in
    or out of sample, and how many dated changes of the change log fall on or after that day
    (made, in part, after the run had been seen).

    >>> import datetime as dt
    >>> from types import SimpleNamespace
    >>> from gpuconcepts.changelog import Change
    >>> from gpuconcepts.run.provenance import Provenance
    >>> run = SimpleNamespace(provenance=Provenance.example())
    >>> later = [Change(dt.date(2026, 1, d), "t", "w", "y", "e") for d in (1, 2)]
    >>> ledger_rows([run], [Change(dt.date(2025, 12, 31), "t", "w", "y", "e"), *later])
    [['cpu (Example CPU, 2 threads)', '2026-01-01', 'out of sample', '2']]
    """
    rows = []
    for run in runs:
        day = run.provenance.created_utc[:10]
        after = sum(change.date.isoformat() >= day for change in changes)
        sample = SAMPLE_WORDS[sample_of(run)]
        rows.append([run.provenance.device_name, day, sample, plain_number(after)])
    return rows


def ledgers(runs: Sequence[Run], changes: Sequence[Change]) -> Glue:
    """The two ledgers' sample for every run (this build's first), the model's version, how
    many dated changes each run preceded and which, ledger 2 pooled in and out of sample,
    every flip, and how far a time moved between two runs of one machine, for the method
    page."""
    from gpuconcepts.render.pages.claims import (  # noqa: PLC0415  # one home for both pages
        flip_rows,
        flips_table,
        sample_table,
    )

    flipped = flip_rows([(run.label, run) for run in runs])
    return {
        "model_version": model_version(),
        "n_changes": plain_number(len(changes)),
        "ledger_runs": markdown_table(
            ["Run", "Recorded", "Ledger 2 scores it", "Dated changes on or after that day"],
            ledger_rows(runs, changes),
        ),
        "changes_after": changes_after(runs, changes),
        "sample_table": sample_table(runs),
        "n_flips": plain_number(len(flipped)),
        "flips_table": flips_table(flipped),
        "run_to_run": run_to_run(runs),
    }


def changes_after(runs: Sequence[Run], changes: Sequence[Change]) -> str:
    """Markdown: each day of the change log, the topics changed that day, and the runs that
    had been recorded by then (a change made on or after a run's day may have seen it).

    >>> import datetime as dt
    >>> from types import SimpleNamespace
    >>> from gpuconcepts.changelog import Change
    >>> from gpuconcepts.run.provenance import Provenance
    >>> run = SimpleNamespace(provenance=Provenance.example(), label="run A")
    >>> days = [Change(dt.date(2025, 12, 31), "roofs", "w", "y", "e"),
    ...         Change(dt.date(2026, 1, 2), "knee", "w", "y", "e")]
    >>> print(changes_after([run], days))  # type: ignore[list-item]
    | Day | What changed (topics) | Runs recorded by then |
    | --- | --- | --- |
    | 2025-12-31 | roofs | none |
    | 2026-01-02 | knee | run A |
    """
    days: dict[str, list[str]] = {}
    for change in changes:
        days.setdefault(change.date.isoformat(), []).append(change.topic)
    rows = []
    for day, topics in days.items():
        seen = [run.label for run in runs if run.provenance.created_utc[:10] <= day]
        rows.append([day, ", ".join(dict.fromkeys(topics)), "; ".join(seen) or "none"])
    return markdown_table(["Day", "What changed (topics)", "Runs recorded by then"], rows)


def run_to_run(runs: Sequence[Run]) -> str:
    """In words: how far a kernel's median time moved between two runs of one machine in one
    data type (the same kernel at the same sizes), the only evidence of run-to-run variation,
    which an interval's blocks (all inside one run) do not hold; or that no two such runs
    exist.

    >>> run_to_run([])
    'No two runs here share a machine and a data type, so the book cannot yet show how far a time moves from one run to the next.'
    """
    groups: dict[tuple[str, str], list[Run]] = {}
    for run in runs:
        groups.setdefault((run.provenance.device_name, run.peaks.dtype), []).append(run)
    said = []
    for (device, dtype), group in groups.items():
        if len(group) < 2:
            continue
        first, second = (_by_kernel(run) for run in group[:2])
        moved = sorted(
            abs(math.log(second[key].seconds / m.seconds))
            for key, m in first.items()
            if key in second and m.seconds > 0 and second[key].seconds > 0
        )
        if moved:
            said.append(
                f"Two runs of the {device} in {dtype} timed {plural(len(moved), 'kernel')} "
                f"alike: a time moved by a median factor of "
                f"{times(math.exp(statistics.median(moved)))} between them, and by at most "
                f"{times(math.exp(moved[-1]))}."
            )
    if not said:
        return (
            "No two runs here share a machine and a data type, so the book cannot yet show how "
            "far a time moves from one run to the next."
        )
    return " ".join(said)


def _by_kernel(run: Run) -> dict[tuple[str, tuple[tuple[str, str], ...]], Measurement]:
    """Each kernel of ``run`` at each of its sizes, the first measurement of it (a run may time
    one kernel again for a claim)."""
    found: dict[tuple[str, tuple[tuple[str, str], ...]], Measurement] = {}
    for m in run.measurements:
        found.setdefault((m.workload, tuple(sorted((k, str(v)) for k, v in m.params.items()))), m)
    return found
