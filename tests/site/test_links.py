"""No broken internal link or anchor in the built book (no browser needed).

Every href/src/srcset of every page that points inside the site must name a file of the build,
and a ``#fragment`` on an HTML target must name an element id (or ``<a name>``) of that page.
External links (http, https, mailto, ...) are not followed: the book must build offline.
"""

from __future__ import annotations

import posixpath
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

import pytest

if TYPE_CHECKING:
    from conftest import Site

pytestmark = pytest.mark.site


def resolve(page: str, url: str) -> tuple[str, str] | None:
    """The site-relative file and the fragment that ``url`` on ``page`` points to, or None for
    an external URL.

    >>> resolve("chapters/a.html", "../index.html#top")
    ('index.html', 'top')
    >>> resolve("a.html", "#sec-2")
    ('a.html', 'sec-2')
    >>> resolve("a/b.html", "./") , resolve("a.html", "https://example.org/x") is None
    (('a/index.html', ''), True)
    >>> resolve("a.html", "_static/my%20file.png?v=1")
    ('_static/my file.png', '')
    """
    parts = urlsplit(url)
    if parts.scheme or parts.netloc:
        return None
    if not parts.path:
        return page, unquote(parts.fragment)
    base = posixpath.dirname(page)
    target = posixpath.normpath(posixpath.join(base, unquote(parts.path)))
    if parts.path.endswith("/") or target == ".":
        target = posixpath.join("" if target == "." else target, "index.html")
    return target, unquote(parts.fragment)


def broken_links(site: Site, page: str) -> list[str]:
    """Every reference of ``page`` whose file or anchor is missing from the build."""
    problems = []
    for tag, attr, url in site.pages[page].refs:
        scheme = urlsplit(url).scheme.lower()
        if scheme and scheme != "file":  # http(s), mailto, data, javascript: not ours to check
            continue
        where = f"<{tag} {attr}={url!r}>"
        if url.startswith("/") or scheme == "file":
            problems.append(f"{where}: absolute path, breaks when the book is not at the web root")
            continue
        resolved = resolve(page, url)
        if resolved is None:
            continue
        target, fragment = resolved
        file = site.root / target
        if target.startswith("../") or not file.exists():
            problems.append(f"{where}: no file {target}")
            continue
        if file.is_dir():
            target = posixpath.join(target, "index.html")
            if not (site.root / target).is_file():
                problems.append(f"{where}: folder without index.html")
                continue
        if fragment and target.endswith(".html"):
            ids = site.pages[target].ids if target in site.pages else _ids(site.root, target)
            if fragment not in ids:
                problems.append(f"{where}: no id {fragment!r} in {target}")
    return problems


def _ids(root: Path, target: str) -> frozenset[str]:
    from conftest import scan_page

    return scan_page(root, target).ids


def test_internal_links_and_anchors_resolve(page: str, site: Site) -> None:
    problems = broken_links(site, page)
    assert problems == [], f"{page}:\n  " + "\n  ".join(problems)


def test_link_check_sees_the_whole_book(site: Site) -> None:
    """The check walks genindex and search too, and the pages link to one another."""
    assert {"index.html", "genindex.html", "search.html"} <= set(site.pages)
    internal = sum(
        resolve(p, url) is not None and not urlsplit(url).scheme
        for p, scan in site.pages.items()
        for _, _, url in scan.refs
    )
    assert internal > len(site.pages)
