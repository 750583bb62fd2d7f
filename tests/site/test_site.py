"""The built book in headless Chromium: clean loads offline, typeset math, hidden answers,
images, search and screenshots.

Each page is loaded once per run (``page_report``) and several tests read that one visit.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from conftest import Browse, Site, Visit
    from playwright.sync_api import Browser

pytestmark = pytest.mark.site

ARTICLE = "article.bd-article"
COLLAPSIBLE = ".solution, details, .toggle, .admonition.dropdown"

IMAGES_JS = """async () => {
  const images = [...document.images];
  for (const img of images) img.loading = "eager";
  const settled = img => img.complete ? null : new Promise(done => {
    img.addEventListener("load", done, {once: true});
    img.addEventListener("error", done, {once: true});
  });
  const timeout = new Promise(done => setTimeout(done, 15000));
  await Promise.race([Promise.all(images.map(settled)), timeout]);
  return images.map(img => ({src: img.currentSrc || img.src, width: img.naturalWidth}));
}"""

MATH_JS = """(article) => {
  const root = document.querySelector(article) || document.body;
  const math = [...root.querySelectorAll("span.math, div.math")];
  const text = root.cloneNode(true);
  text.querySelectorAll("pre, code, script, style, mjx-container").forEach(e => e.remove());
  const raw = text.textContent.match(/\\\\\\(|\\\\\\[|\\$\\$/g) || [];
  return {
    math: math.length,
    containers: root.querySelectorAll("mjx-container").length,
    unrendered: math.filter(m => !m.querySelector("mjx-container"))
                    .map(m => m.textContent.trim().slice(0, 80)),
    errors: [...root.querySelectorAll("mjx-merror")]
                .map(e => (e.getAttribute("data-mjx-error") || e.textContent).slice(0, 120)),
    raw: raw.length,
  };
}"""

# Mark every outermost collapsible of the article with data-answer="i" on its toggle and on
# its content, so that Python can check and click them through ordinary locators.
ANSWERS_JS = """([article, selector]) => {
  const root = document.querySelector(article) || document.body;
  const all = [...root.querySelectorAll(selector)];
  const outer = all.filter(el => !all.some(other => other !== el && other.contains(el)));
  return outer.map((el, i) => {
    let toggle = null;
    if (el.tagName === "DETAILS") {
      toggle = el.querySelector(":scope > summary");
    } else {
      toggle = el.querySelector("button.toggle-button")
            || el.querySelector(":scope > .admonition-title, :scope > summary");
    }
    const content = [...el.children].find(
      c => !(toggle && c.contains(toggle)) && c.textContent.trim() !== "");
    if (toggle) toggle.setAttribute("data-answer-toggle", String(i));
    if (content) content.setAttribute("data-answer-content", String(i));
    return {
      kind: el.tagName.toLowerCase() + "." + [...el.classList].join("."),
      label: (toggle ? toggle.textContent : el.textContent).trim().slice(0, 60),
      toggle: toggle !== null,
      content: content !== null,
    };
  });
}"""


@dataclass(frozen=True)
class PageReport:
    """One load of one page: what went wrong, its images and its math."""

    visit: Visit
    images: tuple[tuple[str, int], ...]
    mathjax_started: bool
    math: dict[str, Any]


@pytest.fixture(scope="session")
def page_report(
    browser: Browser, base_url: str, site: Site
) -> Iterator[Callable[[str], PageReport]]:
    """Load a page once per run (fresh context, offline), wait for MathJax, read images."""
    from conftest import Browse

    opener = Browse(browser, base_url)
    reports: dict[str, PageReport] = {}

    def report(path: str) -> PageReport:
        if path not in reports:
            page, visit = opener.open(path)
            started = opener.wait_for_math(page) if site.pages[path].math else False
            page.wait_for_load_state("networkidle")  # fonts MathJax asked for
            images = tuple((i["src"], i["width"]) for i in page.evaluate(IMAGES_JS))
            math = page.evaluate(MATH_JS, ARTICLE) if started else {}
            reports[path] = PageReport(visit, images, started, math)
            opener.close()
        return reports[path]

    yield report
    opener.close()


def test_page_loads_without_errors_offline(
    page: str, page_report: Callable[[str], PageReport]
) -> None:
    """0 console errors, 0 uncaught exceptions, 0 failed or 4xx/5xx requests, nothing off-host."""
    problems = page_report(page).visit.problems
    assert problems == [], f"{page}:\n  " + "\n  ".join(problems)


def test_every_image_loads(page: str, page_report: Callable[[str], PageReport]) -> None:
    broken = [src for src, width in page_report(page).images if width == 0]
    assert broken == [], f"{page}: images that did not load: {broken}"


def test_math_is_typeset_offline(math_page: str, page_report: Callable[[str], PageReport]) -> None:
    report = page_report(math_page)
    assert report.mathjax_started, f"{math_page}: MathJax never started (is it served locally?)"
    math = report.math
    assert math["math"] > 0
    assert math["containers"] >= math["math"], math
    assert math["unrendered"] == [], f"{math_page}: math left as TeX: {math['unrendered']}"
    assert math["errors"] == [], f"{math_page}: MathJax TeX errors: {math['errors']}"
    assert math["raw"] == 0, f"{math_page}: {math['raw']} raw \\( \\[ or $$ delimiters in the text"
    assert report.visit.offsite_requests == []


def test_book_has_math(site: Site) -> None:
    """The math check above must have pages to check."""
    assert any(scan.math for scan in site.pages.values()), "no page of the book has math"


def test_book_has_answers(site: Site) -> None:
    """The answer check below must have quiz answers to check."""
    answers = {p: s.solutions + s.answer_summaries for p, s in site.pages.items()}
    assert sum(answers.values()) > 0, (
        "the book shows no quiz answers: no sphinx-exercise solution and no <details> whose "
        "summary says Answer or Solution"
    )


def test_answers_hidden_until_clicked(answer_page: str, browse: Browse) -> None:
    """Every solution, dropdown and <details> in the article is closed until its toggle is
    clicked, and shows its content afterwards."""
    page, visit = browse.open(answer_page)
    answers = page.evaluate(ANSWERS_JS, [ARTICLE, COLLAPSIBLE])
    assert answers, f"{answer_page}: the scan found collapsibles, the browser none"
    for index, answer in enumerate(answers):
        where = f"{answer_page}: {answer['kind']} {answer['label']!r}"
        assert answer["toggle"], f"{where}: nothing to click to show the answer"
        assert answer["content"], f"{where}: no answer content"
        content = page.locator(f'[data-answer-content="{index}"]')
        assert not content.is_visible(), f"{where}: the answer is visible before any click"
        page.locator(f'[data-answer-toggle="{index}"]').click()
        content.wait_for(state="visible", timeout=5_000)
    assert visit.problems == [], f"{answer_page}: {visit.problems}"


def test_search_finds_kv_cache(browse: Browse, site: Site) -> None:
    page, visit = browse.open("search.html?q=KV+cache")
    summary = page.locator("#search-results p.search-summary")
    page.wait_for_function(
        "() => /Search finished|did not match/.test("
        "document.querySelector('#search-results p.search-summary')?.innerText)"
    )
    results = page.locator("#search-results ul.search li")
    assert results.count() >= 1, f"search for 'KV cache': {summary.inner_text()}"
    links = [a.get_attribute("href") or "" for a in results.locator("a").all()]
    targets = {href.split("#")[0].split("?")[0] for href in links}
    assert targets <= set(site.pages), f"search results link to unknown pages: {targets}"
    assert visit.problems == [], visit.problems


def _png_size(path: Path) -> tuple[int, int]:
    header = path.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    width, height = struct.unpack(">II", header[16:24])
    return width, height


@pytest.mark.parametrize(
    ("name", "word"),
    [("index", "index"), ("transformer", "transformer"), ("roofline", "roofline")],
)
def test_screenshot(name: str, word: str, browse: Browse, site: Site, screenshot_dir: Path) -> None:
    """Full-page screenshots of the index, the transformer chapter and the roofline chapter."""
    path = "index.html" if word == "index" else site.find(word)
    assert path is not None, f"no page named after {word!r} among {sorted(site.pages)}"
    page, visit = browse.open(path)
    if site.pages[path].math:
        assert browse.wait_for_math(page)
    page.wait_for_load_state("networkidle")
    # A viewport as tall as the page, so the sticky sidebars are drawn along the whole of it.
    height = min(int(page.evaluate("document.documentElement.scrollHeight")), 16_000)
    page.set_viewport_size({"width": 1280, "height": max(height, 900)})
    page.wait_for_load_state("networkidle")
    out = screenshot_dir / f"{name}.png"
    out.unlink(missing_ok=True)
    page.screenshot(path=str(out), full_page=True)
    width, height = _png_size(out)
    assert width == 1280
    assert height >= 900
    assert visit.problems == [], visit.problems
