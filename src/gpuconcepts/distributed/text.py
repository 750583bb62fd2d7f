"""``gpuconcepts distributed`` for people: the report as a Markdown table for the book, as text
for the terminal, and the command itself. It sits above :mod:`~gpuconcepts.distributed.report`
(the value and its measurement), which a Run holds and which imports no renderer.
"""

from __future__ import annotations

import json
import sys

from gpuconcepts.distributed.report import DistributedReport, measure
from gpuconcepts.hardware import format_table
from gpuconcepts.render import format_claim, markdown_table
from gpuconcepts.units import number, si


def markdown(report: DistributedReport) -> str:
    """The report's main collectives (:meth:`DistributedReport.rows`) as a Markdown table for
    the book."""
    rows = report.rows()
    return markdown_table(rows[0], rows[1:])


def format_report(report: DistributedReport) -> str:
    """The report as text: the table, the fit, then each claim."""
    fit = report.fit
    fit_line = (
        f"no α-β fit: {report.fit_problem}"
        if fit is None
        else f"α-β fit over {fit.points} all-reduce sizes: α = {si(fit.alpha_s, 's')}, "
        f"bandwidth = {si(fit.bytes_per_s, 'B/s')} per device"
    )
    head = (
        f"gpuconcepts distributed: {report.device}, "
        f"{'quick' if report.quick else 'full'} sizes, {number(report.seconds)} s"
    )
    body = [format_claim(i, r) for i, r in enumerate(report.claims, start=1)]
    return "\n".join([head, "", format_table(report.rows()), "", fit_line, "", *body])


def run_distributed(
    world_size: int, backend: str, quick: bool, as_json: bool, port: int | None = None
) -> int:
    """The CLI's ``gpuconcepts distributed``: text or JSON on stdout; 0 when the run finished."""
    report = measure(world_size, backend=backend, quick=quick, port=port)
    if as_json:
        sys.stdout.write(json.dumps(report.to_dict(), indent=2) + "\n")
    else:
        sys.stdout.write(format_report(report) + "\n")
    return 0
