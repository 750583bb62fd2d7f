"""The book's prose holds no hand-typed number that the library computes, and no hand-typed math.

Every number the post's examples and questions produce is evaluated here with the library;
the prose of every page (code cells, glue references, inline code and URLs removed) is then
scanned for numbers in any written form — ``51200000000``, ``51,200,000,000``,
``51{,}200{,}000{,}000``, ``51.2 billion``, ``51.2 GB``, ``47.7 GiB`` — and a number that
matches a computed value (within the precision it was typed with) fails the test. Such a number
must be glued from an evaluation instead.
"""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path

import pytest

from gpuconcepts import formulas
from gpuconcepts.questions import QUESTIONS

DOCS = Path(__file__).resolve().parents[1] / "docs"
PAGES = sorted(DOCS.glob("*.md"))

_SCALES = {
    "thousand": 10**3,
    "million": 10**6,
    "billion": 10**9,
    "trillion": 10**12,
    "kB": 10**3,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "TB": 10**12,
    "KiB": 2**10,
    "MiB": 2**20,
    "GiB": 2**30,
    "TiB": 2**40,
}
_NUMBER = re.compile(
    r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(?![\w])"
    r"(?:\s*(" + "|".join(sorted(_SCALES, key=len, reverse=True)) + r")\b)?"
)

# Structural numbers that are not results, removed before the scan (each with its reason).
ALLOWED = [
    re.compile(r"\bQ\d+\b"),  # question labels: Q10, Q17
    re.compile(r"\d+\s*(?:×|\\times)\s*\d+"),  # shapes: a 3×3 filter, a 4×4 image
    re.compile(r"[_^]\{?\d+\}?"),  # math subscripts and powers: h_1, h_{t-1}, S^2
    re.compile(r"^\s*\d+\.\s", re.MULTILINE),  # ordered-list markers
]


def _post_values() -> set[Fraction]:
    """Every value the post's worked examples and questions produce, evaluated by the library."""
    values: set[Fraction] = set()
    for q in QUESTIONS:
        for step in q.steps:
            values.add(Fraction(step.value))
            values.update(Fraction(v) for v in step.values.values())
        if q.ratio is not None:
            values.add(Fraction(q.ratio))
    f = formulas
    values.update(
        Fraction(v)
        for v in (
            f.mlp_weights(d_in=16, d_out=3),  # the 4×4 image, fully connected
            f.conv_weights(K=3, C_in=1, C_out=1),  # the 3×3 filter
            *(f.attention_scores(S=n) for n in (5, 100, 1000)),  # why long sequences cost
            *(1000 * 5 + 2 * 10, 1500 * 5 + 3 * 10, 2000 * 5 + 4 * 10),  # the house prices
            f.mlp_macs(B=1000, d_in=2, d_out=1),  # a thousand houses through the same weights
        )
    )
    # Small whole numbers (bytes per value, kernel sides, list positions) are everywhere in
    # prose and carry no computed result; only values of ten or more, or fractions, count.
    return {v for v in values if v >= 10 or v.denominator != 1}


FORBIDDEN = _post_values()


def prose(markdown: str) -> str:
    """The prose of a MyST page: no front matter, fenced blocks, inline code, roles or URLs."""
    text = re.sub(r"\A---\n.*?\n---\n", "", markdown, flags=re.DOTALL)
    text = re.sub(r"^(`{3,})[^\n]*\n.*?^\1\s*$", "", text, flags=re.DOTALL | re.MULTILINE)
    text = re.sub(r"\{[\w:-]+\}`[^`]*`", "", text)  # roles: {glue:md}`key`, {doc}`page`
    text = re.sub(r"`[^`]*`", "", text)
    text = re.sub(r"https?://\S+", "", text)
    text = re.sub(r"^\(.*\)=\s*$", "", text, flags=re.MULTILINE)  # labels
    return text.replace("{,}", ",")


def typed_numbers(text: str) -> list[tuple[str, Fraction, Fraction]]:
    """(as written, value, half a unit in the last typed digit) for each number in the text."""
    for pattern in ALLOWED:
        text = pattern.sub(" ", text)
    found = []
    for match in _NUMBER.finditer(text):
        whole, decimals, unit = match.groups()
        digits = whole.replace(",", "") + (f".{decimals}" if decimals else "")
        scale = _SCALES.get(unit or "", 1)
        value = Fraction(digits) * scale
        tolerance = Fraction(1, 2 * 10 ** len(decimals or "")) * scale if unit or decimals else 0
        found.append((match.group(0).strip(), value, Fraction(tolerance)))
    return found


def computed_numbers_in(markdown: str) -> list[str]:
    """The typed numbers of a page that equal a value the library computes."""
    return [
        written
        for written, value, tolerance in typed_numbers(prose(markdown))
        if any(abs(value - known) <= tolerance for known in FORBIDDEN)
    ]


def test_the_book_has_pages() -> None:
    names = {p.stem for p in PAGES}
    assert {"index", "dlrm", "mlp", "cnn", "rnn", "transformer", "qa-math"} <= names


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_no_hand_typed_computed_number(page: Path) -> None:
    assert computed_numbers_in(page.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_no_hand_typed_display_math(page: Path) -> None:
    """Display formulas come from the library through {glue:math}/{glue:md}, never typed."""
    text = prose(page.read_text(encoding="utf-8"))
    assert "$$" not in text
    assert not re.search(r"^```\{math\}", page.read_text(encoding="utf-8"), re.MULTILINE)


@pytest.mark.parametrize(
    ("sentence", "flagged"),
    [
        ("The table needs 51,200,000,000 bytes.", ["51,200,000,000"]),
        ("The table needs 51200000000 bytes.", ["51200000000"]),
        ("That is 51.2 GB, about 47.7 GiB.", ["51.2 GB", "47.7 GiB"]),
        ("The batch reads 1 MiB; the cache 3.91 MiB.", ["1 MiB", "3.91 MiB"]),
        ("About 78.64 million MACs.", ["78.64 million"]),
        ("$= 1{,}048{,}576$ bytes", ["1,048,576"]),
        ("The MLP needs 48 weights, the filter 9.", ["48"]),
        ("Going from 1,000 to 2,000 tokens.", ["1,000", "2,000"]),
        ("A 4×4 image and a 3×3 filter, see Q10 and $h_{1}$.", []),
        ("A width of 96 and 7 layers.", []),
        ("[link](https://example.org/51200000000) and `51200000000` in code.", []),
        ("```{code-cell} python\nN = 100_000_000 * 128\n```\n", []),
        ("Read {glue:md}`memory` here.", []),
    ],
)
def test_scanner(sentence: str, flagged: list[str]) -> None:
    assert computed_numbers_in(sentence) == flagged
