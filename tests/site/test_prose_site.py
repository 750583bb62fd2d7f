"""The built book's prose reads: no sentence over 60 words, no word said twice in a row, no
sentence opened in lower case by a glued name, no claim slug in a sentence (no browser needed; the checks are ``tests/prose.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from prose import MAX_WORDS, long_sentences, lowercase_openings, repeated_words, slugs_in
from test_api_page import INDEX, PAGES

from gpuconcepts.results.registry import CLAIMS

if TYPE_CHECKING:
    from conftest import Site

pytestmark = pytest.mark.site

# The API reference (its index and a page per layer) is the library's docstrings, rendered by
# autodoc: developer reference, not the book's prose. Its long docstring sentences are listed
# in issue 37's report, to be split in the modules that own them.
API_PAGES = {page.removesuffix(".md") + ".html" for page in (INDEX, *PAGES)}
NOT_PROSE = frozenset({*API_PAGES, "genindex.html", "search.html", "py-modindex.html"})


def _html(site: Site, page: str) -> str:
    return (site.root / page).read_text(encoding="utf-8")


def test_no_sentence_runs_over_the_limit(page: str, site: Site) -> None:
    if page in NOT_PROSE:
        pytest.skip("not book prose")
    long = long_sentences(_html(site, page))
    assert not long, f"{page}: {len(long)} sentences over {MAX_WORDS} words: {long}"


def test_no_word_follows_itself(page: str, site: Site) -> None:
    if page in NOT_PROSE:
        pytest.skip("not book prose")
    assert not repeated_words(_html(site, page)), page


def test_no_claim_slug_in_a_sentence(page: str, site: Site) -> None:
    assert not slugs_in(_html(site, page), CLAIMS), page


def test_no_sentence_opens_in_lower_case(page: str, site: Site) -> None:
    if page in NOT_PROSE:
        pytest.skip("not book prose")
    assert not lowercase_openings(_html(site, page)), page
