"""``gpuconcepts verify``: run every experiment, print the verdicts as text or JSON.

Exit status: 0 whenever the experiments ran, whatever the verdicts. A claim that does not
hold on this machine is a measured result, not a failure of the program; scripts read the
verdicts from ``--json``. Bad input (an unknown device, CUDA without a GPU) raises
:class:`~gpuconcepts.errors.GpuConceptsError`, which the CLI prints as one line (exit 2).

>>> from gpuconcepts.claims.result import ClaimResult
>>> r = ClaimResult(key="k", architecture="MLP", claim="FLOP/s rises with B.",
...                 prediction="intensity 0.5 → 64", measured="4× more FLOP/s",
...                 threshold="≥ 2×", verdict=True, device="cpu (demo)")
>>> print(format_result(1, r))
 1. [holds] MLP: FLOP/s rises with B.
      predicted: intensity 0.5 → 64
      measured:  4× more FLOP/s
      threshold: ≥ 2×
"""

from __future__ import annotations

import json
import sys
import textwrap
from collections.abc import Mapping, Sequence

from gpuconcepts.book import markdown_table
from gpuconcepts.claims.experiments import run_claims
from gpuconcepts.claims.result import ClaimResult, ClaimsReport
from gpuconcepts.measure import resolve_device
from gpuconcepts.units import si

WIDTH = 100
"""Text output is wrapped to this many columns."""


def _wrap(label: str, text: str) -> list[str]:
    indent = " " * 6
    head = f"{indent}{label:<11}"
    return textwrap.wrap(text, WIDTH, initial_indent=head, subsequent_indent=" " * len(head))


def format_result(number: int, result: ClaimResult) -> str:
    """One claim as a few wrapped lines: status, claim, prediction, measurement, threshold."""
    lines = textwrap.wrap(
        f"[{result.status}] {result.architecture}: {result.claim}",
        WIDTH,
        initial_indent=f"{number:>2}. ",
        subsequent_indent="    ",
    )
    lines += _wrap("predicted:", result.prediction)
    lines += _wrap("measured:", result.measured)
    lines += _wrap("threshold:", result.threshold)
    if not result.visible:
        lines += _wrap("not shown:", result.reason)
    return "\n".join(lines)


def format_report(report: ClaimsReport) -> str:
    """The whole report as text: a header with the device and peaks, each claim, a summary."""
    peaks = report.peaks
    head = [
        (
            f"gpuconcepts verify on {report.device_label} "
            f"({'quick' if report.quick else 'full'} sizes, {report.seconds:.0f} s)"
        ),
        (
            f"measured peaks: {si(peaks.flops_per_s, 'FLOP/s')} ({peaks.dtype}), "
            f"{si(peaks.bytes_per_s, 'B/s')}; ridge point {peaks.ridge_point:.3g} FLOP/byte"
        ),
        "",
    ]
    body = [format_result(i, r) for i, r in enumerate(report.results, start=1)]
    counts = report.counts
    summary = (
        f"{counts['holds']} of {len(report.results)} claims hold, "
        f"{counts['does not hold']} do not hold, {counts['not visible here']} not visible "
        "on this device."
    )
    return "\n".join([*head, "\n\n".join(body), "", summary])


def markdown_result(result: ClaimResult) -> str:
    """One claim as a Markdown table (for the book): claim, prediction, measurement, verdict.

    >>> r = ClaimResult("k", "MLP", "FLOP/s rises.", "x", "y", "z", False, "cpu (demo)",
    ...                 visible=False, reason="no GPU")
    >>> print(markdown_result(r).splitlines()[-2])
    | **Verdict** | **not visible here**: no GPU |
    """
    verdict = f"**{result.status}**"
    if not result.visible:
        verdict += f": {result.reason}"
    return markdown_table(
        ["", ""],
        [
            ["**Claim**", result.claim],
            ["**Prediction**", result.prediction],
            ["**Measured**", result.measured],
            ["**Threshold**", result.threshold],
            ["**Verdict**", verdict],
            ["**Device**", result.device],
        ],
    )


def markdown_summary(report: ClaimsReport, labels: Mapping[str, str]) -> str:
    """The summary table of a report; each architecture links to its section's label.

    ``labels`` maps an architecture (``"DLRM"``) to a MyST label (``"claims-dlrm"``).
    """
    rows = []
    for number, result in enumerate(report.results, start=1):
        section = result.architecture
        if section in labels:
            section = f"{{ref}}`{result.architecture} <{labels[result.architecture]}>`"
        rows.append([str(number), section, result.claim, result.status])
    return markdown_table(["#", "Section", "Claim", "Verdict"], rows)


def run_verify(
    device: str, quick: bool, as_json: bool, *, only: Sequence[str] | None = None
) -> int:
    """Run the claims on ``device`` (auto, cpu or cuda): progress on stderr, results on stdout.

    Returns 0 when the experiments ran (see the module docstring for why a claim that does
    not hold still exits 0). With ``as_json`` stdout holds one JSON object whose ``claims``
    list has, per claim, at least ``claim``, ``prediction``, ``measured``, ``threshold`` and
    ``verdict`` (a boolean), plus ``status``, ``visible``, ``reason``, ``values`` and ``plot``.
    """
    resolved = resolve_device(device)

    def progress(line: str) -> None:
        sys.stderr.write(f"[verify] {line}\n")
        sys.stderr.flush()

    report = run_claims(resolved, quick, progress=progress, only=only)
    if as_json:
        sys.stdout.write(json.dumps(report.to_dict(), indent=2, default=str) + "\n")
    else:
        sys.stdout.write(format_report(report) + "\n")
    return 0
