"""The post's claims as text: the tally and each claim's verdict, wrapped for the terminal."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from gpuconcepts.results.claim import Verdict
from gpuconcepts.results.ledger import tally
from gpuconcepts.units import number, plain_number, plural, si

if TYPE_CHECKING:
    from gpuconcepts.results.claim import ClaimResult
    from gpuconcepts.run import Run


WIDTH = 100
"""Text output is wrapped to this many columns."""


# -- claims ------------------------------------------------------------------------------------
def tally_text(counts: Mapping[Verdict, int]) -> str:
    """How many claims got each verdict, in words.

    >>> tally_text({"holds": 30, "fails": 1, "undecided": 2, "not visible": 1})
    '30 hold, 1 fail, 2 undecided, 1 not visible'
    """
    return (
        f"{plain_number(counts['holds'])} hold, {plain_number(counts['fails'])} fail, "
        f"{plain_number(counts['undecided'])} undecided, "
        f"{plain_number(counts['not visible'])} not visible"
    )


def tally_sentence(counts: Mapping[Verdict, int]) -> str:
    """How many claims got each verdict, as a sentence's words for a page.

    >>> tally_sentence({"holds": 30, "fails": 1, "undecided": 1, "not visible": 1})
    '30 hold on this device, 1 fails, 1 is undecided and 1 cannot be shown here'
    >>> tally_sentence({"holds": 1, "fails": 2, "undecided": 0, "not visible": 0})
    '1 holds on this device, 2 fail, none is undecided and all can be shown here'
    """

    def count(n: int, one: str, many: str) -> str:
        return f"{'none' if n == 0 else plain_number(n)} {one if n <= 1 else many}"

    return (
        f"{count(counts['holds'], 'holds', 'hold')} on this device, "
        f"{count(counts['fails'], 'fails', 'fail')}, "
        f"{count(counts['undecided'], 'is undecided', 'are undecided')} and "
        + (
            f"{plain_number(counts['not visible'])} cannot be shown here"
            if counts["not visible"]
            else "all can be shown here"
        )
    )


def _wrap(label: str, text: str) -> list[str]:
    head = f"{' ' * 6}{label:<13}"
    return textwrap.wrap(text, WIDTH, initial_indent=head, subsequent_indent=" " * len(head))


def format_claim(position: int, result: ClaimResult) -> str:
    """One claim as a few wrapped lines: verdict, claim, prediction, alternative, pass region,
    measurement, and why when it does not hold.

    >>> from gpuconcepts.results.claim import example
    >>> print(format_claim(1, example(1.5)))
     1. [fails] MLP: Bigger batches run faster per sample.
          predicted:   intensity rises from 0.5 to 64 FLOP/byte (FLOP/s gain = 8)
          rules out:   FLOP/s independent of batch (FLOP/s gain = 1)
          pass region: FLOP/s gain ≥ 2
          measured:    FLOP/s gain = 1.5 (interval [1.5, 1.5])
          why:         the measured 1.5 lies outside the pass region (≥ 2)
    """
    lines = textwrap.wrap(
        f"[{result.verdict}] {result.architecture}: {result.claim}",
        WIDTH,
        initial_indent=f"{position:>2}. ",
        subsequent_indent="    ",
    )
    test = result.test
    lines += _wrap(
        "predicted:", f"{result.prediction} ({test.quantity} = {number(test.predicted)})"
    )
    lines += _wrap("rules out:", result.alternative)
    lines += _wrap("pass region:", result.pass_region)
    lines += _wrap("measured:", result.measured)
    if result.verdict != "holds":
        lines += _wrap("why:", result.why)
    return "\n".join(lines)


def format_claims(run: Run, claims: Sequence[ClaimResult] | None = None) -> str:
    """The claims of a run as text: the device and peaks, each claim, a summary."""
    results = run.claims if claims is None else tuple(claims)
    peaks = run.peaks
    head = [
        *textwrap.wrap(
            f"gpuconcepts verify: {run.provenance.summary} ({number(run.provenance.seconds)} s)",
            WIDTH,
            subsequent_indent="    ",
        ),
        (
            f"measured peaks: {si(peaks.flops_per_s, 'FLOP/s')} ({peaks.dtype}), "
            f"{si(peaks.bytes_per_s, 'B/s')}; ridge point {number(peaks.ridge_point)} FLOP/byte"
        ),
        "",
    ]
    body = [format_claim(i, r) for i, r in enumerate(results, start=1)]
    summary = f"Of {plural(len(results), 'claim')}: {tally_text(tally(results))} on this device."
    noise = textwrap.wrap(run.provenance.noise, WIDTH)
    return "\n".join([*head, "\n\n".join(body), "", summary, *noise])
