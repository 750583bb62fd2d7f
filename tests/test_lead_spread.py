"""Every chapter's lead gives each measured time with its spread (the book's rule: a median
time is shown as ``median ± IQR``, :func:`gpuconcepts.render.text.time_spread`), in its words
and in its table, for every chapter that has a lead."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpuconcepts.render.pages.gpu_basics import leading_run
from gpuconcepts.render.pages.lead import lead
from gpuconcepts.run import Run, load_all

DOCS = Path(__file__).resolve().parents[1] / "docs"
FAMILIES = sorted(p.stem for p in DOCS.glob("*.md") if "{glue:md}`lead_words`" in p.read_text())
_SPACE = r"[ \u00a0]"
_TIME = re.compile(rf"\d[\d,.]*{_SPACE}?(?:ns|µs|ms|s)(?![\w-])")


def times_without_spread(text: str) -> list[str]:
    """The times in ``text`` that are neither followed by their spread (`` ± ``) nor a spread.

    >>> times_without_spread("took 70.6 µs ± 7 µs, against 68.9 µs")
    ['68.9 µs']
    """
    return [
        match.group()
        for match in _TIME.finditer(text)
        if not re.match(rf"{_SPACE}?±", text[match.end() :])
        and not re.search(rf"±{_SPACE}?$", text[: match.start()])
    ]


@pytest.fixture(scope="module")
def run() -> Run:
    found = leading_run(load_all(DOCS / "runs"))
    if found is None:
        pytest.skip("no GPU run recorded in docs/runs/")
    return found


def test_the_check_finds_a_bare_time() -> None:
    assert times_without_spread("took 70.6 µs ± 7 µs, as long as at B = 1 (68.9 µs)") == ["68.9 µs"]
    assert times_without_spread("343\u00a0µs\u00a0±\u00a04.3\u00a0µs") == []


def test_every_chapter_with_a_lead_is_checked() -> None:
    assert {"mlp", "cnn", "transformer"} <= set(FAMILIES)


@pytest.mark.parametrize("family", FAMILIES)
def test_a_lead_gives_every_time_with_its_spread(run: Run, family: str) -> None:
    glue = lead([run], family)
    words, table = str(glue["lead_words"]), str(glue["lead_table"])
    assert _TIME.search(table), f"{family}: the lead table shows no time"
    assert times_without_spread(words) == []
    assert times_without_spread(table) == []
