"""The devices page: this machine beside every recorded run, their peaks, kernels and claims."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from gpuconcepts.render.markdown import markdown_table
from gpuconcepts.render.text import preset_rows
from gpuconcepts.units import si, significant

if TYPE_CHECKING:
    from gpuconcepts.render.pages import Glue
    from gpuconcepts.run import Run


def names(count: int) -> list[str]:
    """The columns' names: this machine, then each recorded run.

    >>> names(3)
    ['This machine (live)', 'Recorded 1', 'Recorded 2']
    """
    return ["This machine (live)"] + [f"Recorded {i}" for i in range(1, count)]


def time_cell(cell: dict[str, Any] | None) -> str:
    """One run's time of one kernel, its spread, its bound and its sizes (``—`` where it has
    none).

    >>> cell = {"seconds": 2e-3, "iqr_seconds": 1e-4, "bound": "memory", "sizes": "B=4"}
    >>> time_cell(None), time_cell(cell)
    ('—', '2 ms ± 100 µs, **memory**<br><small>B=4</small>')
    """
    if cell is None:
        return "—"
    return (
        f"{si(cell['seconds'], 's')} ± {si(cell['iqr_seconds'], 's', digits=2)}, "
        f"**{cell['bound']}**<br><small>{cell['sizes']}</small>"
    )


def side_by_side(runs: Sequence[Run]) -> Glue:
    """The machines, every kernel and every claim of ``runs`` (this machine's first)."""
    columns = names(len(runs))
    ridges = sorted(run.peaks.ridge_point for run in runs)
    said = {r.key: r.claim for run in reversed(runs) for r in run.claims}  # the first run's
    verdicts = [
        [said[key], *(next((r.verdict for r in run.claims if r.key == key), "—") for run in runs)]
        for key in dict.fromkeys(r.key for run in runs for r in run.claims)
    ]
    return {
        "machines": markdown_table(
            ["", "Device and software", "Peak FLOP/s", "Bandwidth", "Ridge point (FLOP/byte)"],
            [
                [
                    name,
                    run.provenance.summary,
                    f"{si(run.peaks.flops_per_s, 'FLOP/s')} ({run.peaks.dtype})",
                    si(run.peaks.bytes_per_s, "B/s"),
                    significant(run.peaks.ridge_point),
                ]
                for name, run in zip(columns, runs, strict=True)
            ],
        ),
        "ridge_spread": significant(ridges[-1] / ridges[0]),
        "n_runs": str(len(runs)),
        "workloads": markdown_table(
            ["Kernel", *columns],
            [
                [f"`{row['workload']}`", *(time_cell(cell) for cell in row["runs"])]
                for row in preset_rows(runs)
            ],
        ),
        "claims": markdown_table(["Claim", *columns], verdicts),
    }
