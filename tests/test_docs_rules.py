"""The pages type no rule's number or date by hand: a threshold's share, the sweeps' distance
from a judged kernel, the fewest blocks or a day of the change log is glued from the code
(``{glue:md}``), so that a page follows the code when a rule changes (issue 45: "2026-12-07",
"5%", "90%", "within 2x" and "three blocks" were typed into the method and roofline pages).

The scan reads the prose the way ``tests/test_docs_numbers.py`` does (code cells, inline code,
roles and glue references removed).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_docs_numbers import prose

from gpuconcepts.changelog import load_changes
from gpuconcepts.claims import thresholds
from gpuconcepts.measurement import NOISE_THRESHOLD
from gpuconcepts.sweeps import AWAY

DOCS = Path(__file__).resolve().parents[1] / "docs"
PAGES = sorted(DOCS.glob("*.md"))
DAYS = {change.date.isoformat() for change in load_changes(DOCS / "changes.toml")}
SHARES = {
    round(100 * value, 6)
    for _, value, reason in thresholds.described()
    if 0 < value < 1 and f"{100 * value:g}%" in reason
} | {round(100 * NOISE_THRESHOLD, 6)}
"""The thresholds that the code itself says as a percentage (its docstring does), and the
noise threshold at which ``analyze`` stops repeating a call."""
WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
FACTORS = {AWAY, thresholds.PREDICTION_FACTOR}


def typed_rules(markdown: str) -> list[str]:
    """The rule numbers typed into a page's prose: a day of the change log, a percentage equal
    to a threshold's share, "within" a factor the sweeps or the predictions use, and a count
    of blocks equal to the fewest a comparison takes."""
    text = prose(markdown)
    found = [day for day in re.findall(r"\b\d{4}-\d{2}-\d{2}\b", text) if day in DAYS]
    found += [
        share
        for share, number in re.findall(r"((\d+(?:\.\d+)?)\s*%)", text)
        if round(float(number), 6) in SHARES
    ]
    found += [
        factor
        for factor, number in re.findall(r"(within\s+(\d+(?:\.\d+)?)\s*[x×])", text)
        if float(number) in FACTORS
    ]
    blocks = {str(thresholds.MIN_BLOCKS), WORDS[thresholds.MIN_BLOCKS]}
    found += [
        count
        for count, number in re.findall(r"((\w+)\s+(?:independent\s+)?blocks)", text)
        if number in blocks
    ]
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_no_rule_is_typed_into_a_page(page: Path) -> None:
    assert typed_rules(page.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize(
    ("sentence", "flagged"),
    [
        ("as runs recorded before 2026-12-07 did", ["2026-12-07"]),
        ("at most 5% of the time (the 90% interval)", ["5%", "90%"]),
        ("until two repetitions agree within 10 %.", ["10 %"]),
        ("no sweep point lies within 2x of a judged kernel", ["within 2x"]),
        ("in at least three independent blocks", ["three independent blocks"]),
        ("before {glue:md}`rounds_fixed_since`, at most {glue:md}`wrong_verdict_rate`", []),
        ("A kernel at 30 % of its roof, on 1999-01-01, within 7x", []),
    ],
)
def test_the_scan_finds_what_was_typed(sentence: str, flagged: list[str]) -> None:
    assert typed_rules(sentence) == flagged
