"""Every claim is marked on its page, and the claims appendix links each claim there (issue 45,
item 9), in the built book (no browser needed).

The registry names each claim's page and anchor (:attr:`~gpuconcepts.results.registry.Claim.page`,
:func:`~gpuconcepts.results.registry.anchor`); the page carries the anchor as an element id, and
the appendix's summary table links the claim's words to it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from test_links import broken_links, resolve

from gpuconcepts.results.registry import CLAIMS, anchor

if TYPE_CHECKING:
    from conftest import Site

pytestmark = pytest.mark.site

APPENDIX = "claims.html"


def _html(page: str) -> str:
    return page.removesuffix(".md") + ".html"


def test_every_claim_is_marked_on_its_page(site: Site) -> None:
    missing = [
        f"{key}: no id {anchor(key)!r} in {_html(claim.page)}"
        for key, claim in CLAIMS.items()
        if _html(claim.page) not in site.pages
        or anchor(key) not in site.pages[_html(claim.page)].ids
    ]
    assert missing == []


def test_the_appendix_links_each_claim_to_its_anchor(site: Site) -> None:
    linked = {
        resolve(APPENDIX, url)
        for tag, attr, url in site.pages[APPENDIX].refs
        if tag == "a" and attr == "href"
    }
    unlinked = [
        key for key, claim in CLAIMS.items() if (_html(claim.page), anchor(key)) not in linked
    ]
    assert unlinked == []


def test_every_link_of_the_appendix_resolves(site: Site) -> None:
    assert broken_links(site, APPENDIX) == []
