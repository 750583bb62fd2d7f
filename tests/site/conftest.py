"""Fixtures for the checks of the built book (``docs/_build/html``).

The book is served on 127.0.0.1 by the standard library's HTTP server, in a thread, on a free
port, and read by Debian's Chromium through Playwright (``executable_path``; Playwright never
downloads a browser of its own here). Every request that leaves 127.0.0.1 is aborted and
recorded, so a page that needs the internet fails its test.

Environment:
    GPUCONCEPTS_SITE_DIR: the built HTML to check (default: ``docs/_build/html``).
    CHROMIUM: the Chromium binary (default: ``/usr/bin/chromium``, else ``chromium`` on PATH).

The whole folder skips, with the reason, when the build or Chromium is missing; the link check
(``test_links.py``) needs only the build.
"""

from __future__ import annotations

import functools
import os
import shutil
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import (
        Browser,
        BrowserContext,
        ConsoleMessage,
        Page,
        Playwright,
        Response,
        Route,
    )

ROOT = Path(__file__).resolve().parents[2]
SITE_DIR = Path(os.environ.get("GPUCONCEPTS_SITE_DIR", ROOT / "docs" / "_build" / "html")).resolve()
SCREENSHOTS = ROOT / "screenshots"
LOCAL_HOST = "127.0.0.1"
# Folders of the build that hold assets, not pages.
ASSET_DIRS = frozenset({"_static", "_sources", "_images", "_downloads"})
CHROMIUM_FLAGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
)
# Inside the article (the theme's own menus and sidebar also use <details> and .dropdown):
# sphinx-exercise solutions, <details> (sphinx-design dropdowns, hidden notebook cells) and
# sphinx-togglebutton toggles or dropdown admonitions.
ARTICLE_SELECTOR = "article.bd-article"
COLLAPSIBLE_SELECTOR = ".solution, details, .toggle, .admonition.dropdown"
TIMEOUT_MS = 30_000
BUILD_HINT = "run `nox -s docs` (or sphinx-build -b html docs docs/_build/html) first"


def chromium_path() -> str | None:
    """The Chromium binary to drive, or None when there is none."""
    configured = os.environ.get("CHROMIUM")
    if configured:
        return configured if Path(configured).exists() else None
    if Path("/usr/bin/chromium").exists():
        return "/usr/bin/chromium"
    return shutil.which("chromium")


# --------------------------------------------------------------------------------------------
# Static scan of the build: pages, ids, links, math and answers, parsed once.
# --------------------------------------------------------------------------------------------


class _PageParser(HTMLParser):
    """Collect ids, outgoing references, math and collapsible elements of one HTML page."""

    LINK_ATTRS = frozenset({"href", "src", "srcset", "data", "poster"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.refs: list[tuple[str, str, str]] = []  # (tag, attribute, url)
        self.math = 0
        self.collapsibles = 0
        self.solutions = 0
        self.answer_summaries = 0
        self._in_article = False
        self._summary: list[str] | None = None

    def handle_data(self, data: str) -> None:
        if self._summary is not None:
            self._summary.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "article":
            self._in_article = False
        if tag == "summary" and self._summary is not None:
            text = "".join(self._summary).lower()
            self.answer_summaries += "answer" in text or "solution" in text
            self._summary = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        if "id" in values:
            self.ids.add(values["id"])
        if tag == "a" and "name" in values:
            self.ids.add(values["name"])
        for name, value in values.items():
            if name not in self.LINK_ATTRS or not value:
                continue
            if name == "srcset":
                self.refs.extend((tag, name, part.split()[0]) for part in value.split(",") if part)
            elif not (tag == "object" and name != "data"):
                self.refs.append((tag, name, value))
        classes = set(values.get("class", "").split())
        if tag == "article" and "bd-article" in classes:
            self._in_article = True
        if "math" in classes and tag in {"span", "div"}:
            self.math += 1
        if not self._in_article:
            return
        if "solution" in classes:
            self.solutions += 1
        dropdown = {"admonition", "dropdown"} <= classes
        if tag == "details" or dropdown or classes & {"solution", "toggle"}:
            self.collapsibles += 1
        if tag == "summary":
            self._summary = []


@dataclass(frozen=True)
class PageScan:
    """What the static scan found in one built page (path relative to the site root)."""

    path: str
    ids: frozenset[str]
    refs: tuple[tuple[str, str, str], ...]
    math: int
    collapsibles: int
    solutions: int
    answer_summaries: int


def scan_page(site_dir: Path, path: str) -> PageScan:
    """Parse ``site_dir / path``.

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> _ = (d / "p.html").write_text('<p id="a"><span class="math">x</span><a href="q.html#b">')
    >>> scan = scan_page(d, "p.html")
    >>> sorted(scan.ids), scan.refs, scan.math
    (['a'], (('a', 'href', 'q.html#b'),), 1)
    """
    parser = _PageParser()
    parser.feed((site_dir / path).read_text(encoding="utf-8"))
    parser.close()
    return PageScan(
        path=path,
        ids=frozenset(parser.ids),
        refs=tuple(parser.refs),
        math=parser.math,
        collapsibles=parser.collapsibles,
        solutions=parser.solutions,
        answer_summaries=parser.answer_summaries,
    )


@dataclass(frozen=True)
class Site:
    """The built book: its folder and the scan of every page."""

    root: Path
    pages: dict[str, PageScan] = field(default_factory=dict, repr=False)

    @property
    def built(self) -> bool:
        return (self.root / "index.html").is_file()

    def find(self, word: str) -> str | None:
        """The first page whose path mentions ``word`` (e.g. a chapter), or None."""
        matches = [p for p in self.pages if word in p.lower() and "/_" not in "/" + p]
        return min(matches, key=lambda p: (p.count("/"), len(p)), default=None)


def list_pages(root: Path) -> list[str]:
    """Every HTML page of the build (genindex and search included), as sorted relative paths."""
    pages = []
    for path in root.rglob("*.html"):
        rel = path.relative_to(root)
        if not ASSET_DIRS.intersection(rel.parts[:-1]):
            pages.append(rel.as_posix())
    return sorted(pages)


@functools.cache
def load_site(root: Path = SITE_DIR) -> Site:
    """Scan the build once per test run."""
    site = Site(root=root)
    if site.built:
        site.pages.update({p: scan_page(root, p) for p in list_pages(root)})
    return site


# --------------------------------------------------------------------------------------------
# Collection: one test per page, and clean skips when the build or the browser is missing.
# --------------------------------------------------------------------------------------------

_PAGE_SETS: dict[str, Callable[[PageScan], bool]] = {
    "page": lambda scan: True,  # noqa: ARG005
    "math_page": lambda scan: scan.math > 0,
    "answer_page": lambda scan: scan.collapsibles > 0,
}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    for name, select in _PAGE_SETS.items():
        if name in metafunc.fixturenames:
            site = load_site()
            pages = [path for path, scan in site.pages.items() if select(scan)]
            if pages:
                metafunc.parametrize(name, pages)
            else:
                why = "no built book" if not site.built else f"no page of this kind ({name})"
                metafunc.parametrize(name, [pytest.param("-", marks=pytest.mark.skip(reason=why))])


def _browser_missing() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install -e .[site])"
    if chromium_path() is None:
        return "Debian's chromium is not installed (apt-get install -y chromium)"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:  # noqa: ARG001
    here = Path(__file__).parent
    site = load_site()
    missing_browser = _browser_missing()
    for item in items:
        if here not in item.path.parents:
            continue
        if not site.built:
            item.add_marker(pytest.mark.skip(reason=f"no {SITE_DIR}/index.html: {BUILD_HINT}"))
        elif missing_browser and "browser" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.skip(reason=missing_browser))


# --------------------------------------------------------------------------------------------
# Serving and browsing.
# --------------------------------------------------------------------------------------------


class _QuietHandler(SimpleHTTPRequestHandler):
    """Serve files without logging every request to stderr."""

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="session")
def site() -> Site:
    """The scanned build."""
    return load_site()


@pytest.fixture(scope="session")
def base_url(site: Site) -> Iterator[str]:
    """The build served on 127.0.0.1 at a free port, for the whole test session."""
    handler = functools.partial(_QuietHandler, directory=str(site.root))
    server = ThreadingHTTPServer((LOCAL_HOST, 0), handler)
    thread = threading.Thread(target=server.serve_forever, name="site-server", daemon=True)
    thread.start()
    try:
        yield f"http://{LOCAL_HOST}:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture(scope="session")
def playwright() -> Iterator[Playwright]:
    os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as handle:
        yield handle


@pytest.fixture(scope="session")
def browser(playwright: Playwright) -> Iterator[Browser]:
    """Headless Debian Chromium (never a browser that Playwright downloads)."""
    executable = chromium_path()
    assert executable is not None
    browser = playwright.chromium.launch(
        executable_path=executable, headless=True, args=list(CHROMIUM_FLAGS)
    )
    yield browser
    browser.close()


@dataclass
class Visit:
    """What one page did while it loaded and while the test used it."""

    url: str
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)
    http_errors: list[str] = field(default_factory=list)
    offsite_requests: list[str] = field(default_factory=list)

    @property
    def problems(self) -> list[str]:
        return [
            *(f"console error: {m}" for m in self.console_errors),
            *(f"uncaught exception: {m}" for m in self.page_errors),
            *(f"request failed: {m}" for m in self.failed_requests),
            *(f"HTTP error: {m}" for m in self.http_errors),
            *(
                f"request off 127.0.0.1 (the book must work offline): {m}"
                for m in self.offsite_requests
            ),
        ]


# A page without math loads no MathJax (Sphinx adds it only where math is): answer at once
# rather than wait out the deadline (that wait was 20 s on each of nine pages).
WAIT_FOR_MATHJAX = """async () => {
  if (!document.querySelector('script[src*="mathjax" i]')) return false;
  const deadline = Date.now() + 20000;
  while (!(window.MathJax && MathJax.startup && MathJax.startup.promise)) {
    if (Date.now() > deadline) return false;
    await new Promise(r => setTimeout(r, 50));
  }
  await MathJax.startup.promise;
  return true;
}"""


class Browse:
    """Open pages of the served book in fresh browser contexts that cannot leave 127.0.0.1."""

    def __init__(self, browser: Browser, base_url: str) -> None:
        self.browser = browser
        self.base_url = base_url
        self._contexts: list[BrowserContext] = []

    def open(
        self, path: str, *, viewport_width: int = 1280, init_script: str | None = None
    ) -> tuple[Page, Visit]:
        """Load ``path`` (relative to the site root) and wait until the network is idle.

        ``init_script`` runs before the page's own scripts (to choose the dark theme, say).
        """
        context = self.browser.new_context(viewport={"width": viewport_width, "height": 900})
        if init_script is not None:
            context.add_init_script(init_script)
        self._contexts.append(context)
        context.set_default_timeout(TIMEOUT_MS)
        visit = Visit(url=self.base_url + path)

        def guard(route: Route) -> None:
            if urlsplit(route.request.url).hostname == LOCAL_HOST:
                route.continue_()
            else:
                visit.offsite_requests.append(route.request.url)
                route.abort("blockedbyclient")

        context.route("**/*", guard)
        page = context.new_page()

        def console(message: ConsoleMessage) -> None:
            # No exemption: the book declares its favicon, so Chromium never probes for one.
            if message.type == "error":
                where = message.location.get("url", "")
                visit.console_errors.append(f"{message.text} (at {where})")

        page.on("console", console)
        page.on("pageerror", lambda e: visit.page_errors.append(str(e)))
        page.on(
            "requestfailed",
            lambda r: visit.failed_requests.append(f"{r.url}: {r.failure}"),
        )

        def response(answer: Response) -> None:
            if answer.status >= 400:
                visit.http_errors.append(f"{answer.status} {answer.url}")

        page.on("response", response)
        page.goto(visit.url, wait_until="load")
        page.wait_for_load_state("networkidle")
        return page, visit

    @staticmethod
    def wait_for_math(page: Page) -> bool:
        """Wait until MathJax has typeset the page; False when MathJax never started."""
        return bool(page.evaluate(WAIT_FOR_MATHJAX))

    def close(self) -> None:
        for context in self._contexts:
            context.close()
        self._contexts.clear()


@pytest.fixture
def browse(browser: Browser, base_url: str) -> Iterator[Browse]:
    """Open pages of the served book; every context is closed after the test."""
    opener = Browse(browser, base_url)
    yield opener
    opener.close()


@pytest.fixture(scope="session")
def screenshot_dir() -> Path:
    """Where screenshots go (``screenshots/``, ignored by git)."""
    SCREENSHOTS.mkdir(exist_ok=True)
    return SCREENSHOTS
