"""Several runs side by side (``gpuconcepts compare``): peaks, each workload's time and bound,
the claims; also the presets per device the book shows."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from gpuconcepts.render.text.runs import format_peaks
from gpuconcepts.roofline import place
from gpuconcepts.tables import aligned
from gpuconcepts.units import si, sizes

if TYPE_CHECKING:
    from gpuconcepts.measure import Measurement
    from gpuconcepts.run import Run


# -- several devices ---------------------------------------------------------------------------
def _shape(m: Measurement) -> str:
    """A measurement's sizes without the dtype (a GPU measures in bfloat16 what a CPU measures
    in float32; the dtype is reported per run)."""
    return sizes({k: v for k, v in m.params.items() if k not in ("dtype", "s")})


def _cell(m: Measurement, run: Run) -> dict[str, Any]:
    """One run's time, spread and bound of one measurement, placed under that run's peaks."""
    where = place(m, run.peaks)
    return {
        "dtype": m.params.get("dtype"),
        "seconds": m.seconds,
        "iqr_seconds": m.iqr_seconds,
        "flops_per_s": m.flops_per_s,
        "bytes_per_s": m.bytes_per_s,
        "roofline_ratio": where.ratio,
        "bound": where.bound,
        "observed": where.observed,
        "attained": where.attained,
    }


def compare_rows(runs: Sequence[Run]) -> list[dict[str, Any]]:
    """One row per workload and sizes measured by any run: each run's time, spread and bound.

    Rows are keyed by workload and sizes without the dtype (see :func:`_shape`). ``runs`` of a
    row holds one cell per run, in the order given (None where that run did not measure it):
    columns belong to runs, never to labels, so two runs of one machine stay two columns.
    """
    order: list[tuple[str, str]] = []
    cells: dict[tuple[str, str], dict[int, dict[str, Any]]] = {}
    for index, run in enumerate(runs):
        for m in run.measurements:
            key = (m.workload, _shape(m))
            if key not in cells:
                order.append(key)
                cells[key] = {}
            if index not in cells[key]:
                cells[key][index] = _cell(m, run)
    return [
        {
            "workload": w,
            "sizes": s,
            "runs": [cells[(w, s)].get(index) for index in range(len(runs))],
        }
        for w, s in order
    ]


def preset_rows(runs: Sequence[Run]) -> list[dict[str, Any]]:
    """One row per workload: each run's first measurement of it, at that run's own sizes.

    A run measures each workload first at its device's preset sizes, which differ from one
    device class to the next (a GPU's are larger), so :func:`compare_rows` rarely meets two
    devices on one row; this sets each machine's own kernel side by side, its sizes in the
    cell (``sizes``). None where a run did not measure the workload.
    """
    order = list(dict.fromkeys(m.workload for run in runs for m in run.measurements))
    rows = []
    for workload in order:
        firsts = [
            next((m for m in run.measurements if m.workload == workload), None) for run in runs
        ]
        rows.append(
            {
                "workload": workload,
                "runs": [
                    None if m is None else {"sizes": _shape(m), **_cell(m, run)}
                    for m, run in zip(firsts, runs, strict=True)
                ],
            }
        )
    return rows


def compare_dict(runs: Sequence[Run]) -> dict[str, Any]:
    """What ``gpuconcepts compare --json`` prints: devices, peaks and every workload."""
    return {
        "devices": [
            {
                "label": run.label,
                "provenance": run.provenance.to_dict(),
                "peaks": run.peaks.to_dict(),
                "claims": {r.key: r.verdict for r in run.claims},
            }
            for run in runs
        ],
        "workloads": compare_rows(runs),
    }


def format_compare(runs: Sequence[Run]) -> str:
    """Devices side by side as text: peaks and ridge points, then each workload's time and bound
    on each device (a dash where a device did not measure it)."""
    names = [f"[{i}]" for i in range(1, len(runs) + 1)]
    out = ["devices:"]
    for name, run in zip(names, runs, strict=True):
        out.append(f"  {name} {run.provenance.summary}")
        out.append(f"      {format_peaks(run.peaks)}")
    rows = [["workload", "sizes", *names]]
    for row in compare_rows(runs):
        cells = [
            "—"
            if cell is None
            else f"{si(cell['seconds'], 's')} ±{si(cell['iqr_seconds'], 's', digits=2)} "
            f"{cell['bound']}/{cell['observed']}"
            for cell in row["runs"]
        ]
        rows.append([row["workload"], row["sizes"].replace(",", ""), *cells])
    out += ["", aligned(rows, left=2)]
    if any(run.claims for run in runs):
        out += ["", "claims:"]
        keys = list(dict.fromkeys(r.key for run in runs for r in run.claims))
        claim_rows = [["claim", "", *names]]
        for key in keys:
            statuses = []
            for run in runs:
                found = [r.verdict for r in run.claims if r.key == key]
                statuses.append(found[0] if found else "—")
            claim_rows.append([key, "", *statuses])
        out.append(aligned(claim_rows, left=2))
    return "\n".join(out)
