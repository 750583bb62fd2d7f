"""The method page: what each run cost to measure, read from its own provenance, and how the
two ledgers score each run (in or out of sample) beside the dated changes of the change log."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from gpuconcepts.claims.accuracy import sample_of
from gpuconcepts.render.ledgers import SAMPLE_WORDS
from gpuconcepts.render.markdown import markdown_table
from gpuconcepts.roofline.version import model_version
from gpuconcepts.units import plain_number, seconds

if TYPE_CHECKING:
    from gpuconcepts.changelog import Change
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
    """The two ledgers' sample for every run (this build's first), the model's version, and
    how many dated changes each run preceded, for the method page."""
    return {
        "model_version": model_version(),
        "n_changes": plain_number(len(changes)),
        "ledger_runs": markdown_table(
            ["Run", "Recorded", "Ledger 2 scores it", "Dated changes on or after that day"],
            ledger_rows(runs, changes),
        ),
    }
