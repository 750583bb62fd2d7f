"""The book as a reader on a phone in dark mode sees it, and its prose as an editor reads it.

Each page is loaded once more, 390 CSS px wide (a phone) with the theme in dark mode, and
several tests read that one visit (``reader_report``):

* no console error (the favicon included: the book declares one), in dark mode too;
* the page never scrolls sideways, and figure text keeps a legible size;
* figures follow the theme: no white panel on a dark page;
* the article's text has none of the machine phrasings of issue 14.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from conftest import Visit
    from playwright.sync_api import Browser

pytestmark = pytest.mark.site

PHONE = {"width": 390, "height": 844}
DARK = "localStorage.setItem('mode', 'dark'); localStorage.setItem('theme', 'dark');"
MIN_FIGURE_SCALE = 0.75  # of the drawn size: 10-pt figure text stays at 10 CSS px or more
MAX_FIGURE_LUMINANCE = 0.45  # mean luminance (0 black, 1 white) of a figure on a dark page
FIGURES_SAMPLED = 3  # per page: screenshots are slow, and every figure is styled alike

LAYOUT_JS = """() => {
  const article = document.querySelector("article.bd-article");
  // images shown in the article (not inside a closed dropdown or a hidden output)
  const figures = [...(article ? article.querySelectorAll("img") : [])].filter(
    img => img.naturalWidth > 0 && img.checkVisibility({checkVisibilityCSS: true}));
  return {
    theme: document.documentElement.dataset.theme || "",
    viewport: document.documentElement.clientWidth,
    scroll: document.documentElement.scrollWidth,
    text: (article || document.body).innerText,
    figures: figures.map((img, i) => {
      img.setAttribute("data-figure", String(i));
      return {
        index: i,
        src: img.getAttribute("src"),
        scale: img.getBoundingClientRect().width / img.naturalWidth,
        filter: getComputedStyle(img).filter,
      };
    }),
  };
}"""


@dataclass(frozen=True)
class ReaderReport:
    """One visit of one page on a phone in dark mode."""

    visit: Visit
    layout: dict[str, Any]
    luminance: dict[str, float]  # figure src -> mean luminance of its pixels on the page


def _luminance(png: bytes) -> float:
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("L")
    histogram = image.histogram()
    return sum(level * count for level, count in enumerate(histogram)) / (255 * sum(histogram))


@pytest.fixture(scope="session")
def reader_report(browser: Browser, base_url: str) -> Iterator[Callable[[str], ReaderReport]]:
    from conftest import Browse

    opener = Browse(browser, base_url)
    reports: dict[str, ReaderReport] = {}

    def report(path: str) -> ReaderReport:
        if path not in reports:
            page, visit = opener.open(path, viewport_width=PHONE["width"], init_script=DARK)
            opener.wait_for_math(page)
            page.wait_for_load_state("networkidle")
            layout = page.evaluate(LAYOUT_JS)
            luminance = {}
            for figure in layout["figures"][:FIGURES_SAMPLED]:
                image = page.locator(f'img[data-figure="{figure["index"]}"]')
                image.scroll_into_view_if_needed()
                luminance[figure["src"]] = _luminance(image.screenshot())
            reports[path] = ReaderReport(visit, layout, luminance)
            opener.close()
        return reports[path]

    yield report
    opener.close()


def test_phone_in_dark_mode_has_no_console_error(
    page: str, reader_report: Callable[[str], ReaderReport]
) -> None:
    report = reader_report(page)
    assert report.layout["theme"] == "dark", f"{page}: the theme did not switch to dark"
    assert report.visit.problems == [], f"{page}:\n  " + "\n  ".join(report.visit.problems)


def test_phone_never_scrolls_sideways(
    page: str, reader_report: Callable[[str], ReaderReport]
) -> None:
    layout = reader_report(page).layout
    assert layout["scroll"] <= layout["viewport"], (
        f"{page}: {layout['scroll']} px wide on a {layout['viewport']}-px screen"
    )


def test_phone_figure_text_is_legible(
    page: str, reader_report: Callable[[str], ReaderReport]
) -> None:
    small = [
        (f["src"], round(f["scale"], 2))
        for f in reader_report(page).layout["figures"]
        if f["src"].endswith(".svg") and "_static" not in f["src"] and f["scale"] < MIN_FIGURE_SCALE
    ]
    assert small == [], f"{page}: figures shrunk below {MIN_FIGURE_SCALE:.0%} of their size"


def test_figures_follow_dark_mode(page: str, reader_report: Callable[[str], ReaderReport]) -> None:
    bright = {src: round(value, 2) for src, value in reader_report(page).luminance.items()}
    bright = {src: value for src, value in bright.items() if value > MAX_FIGURE_LUMINANCE}
    assert bright == {}, f"{page}: figures that stay a bright panel in dark mode: {bright}"


# Machine phrasings that a person would not write (issue 14), each with why.
PROSE_PATTERNS = {
    "a plural in brackets, e.g. 'row(s)'": re.compile(r"\w\(s\)"),
    "'N thousand times less' (say how many times smaller)": re.compile(r"thousand times less"),
    "a percentage with trailing zeros, e.g. '3.1250%'": re.compile(r"\d\.\d*0\s?%"),
    "a ratio with trailing zeros, e.g. '44.40×'": re.compile(r"\d\.\d*0×"),
    "a unit repeated in brackets, e.g. 'MACs (4.72 million MACs)'": re.compile(
        r"\d\s(?P<unit>[A-Za-z][\w/]*)\s\(\s*[\d.,]+\s*(?:thousand|million|billion|trillion)?"
        r"\s*(?P=unit)\)"
    ),
    "a unit written twice, e.g. '5 GB GB'": re.compile(
        r"\d\s(?P<unit>[A-Za-z][\w/]*)\s(?P=unit)\b"
    ),
    "'a' before a number read with a vowel, e.g. 'a 8.39 MB'": re.compile(
        r"\b[Aa] (?:8|11(?![\d])|18(?![\d]))"
    ),
}


def find_machine_phrasing(text: str) -> list[str]:
    """Each pattern found in ``text``, with why it reads badly and the words around it."""
    found = []
    for why, pattern in PROSE_PATTERNS.items():
        for match in pattern.finditer(text):
            around = text[max(0, match.start() - 12) : match.end() + 8].replace("\n", " ")
            found.append(f"{why}: {around!r}")
    return found


def test_pattern_finder_finds_each_kind() -> None:
    text = (
        "1 row(s); 48.83 thousand times less; 3.1250%; 44.40×; "
        "4,718,592 MACs (4.72 million MACs); 5 GB GB; a 8.39 MB table"
    )
    assert len(find_machine_phrasing(text)) == len(PROSE_PATTERNS)
    clean = "1 row; 3.1%; 44×; 4,718,592 MACs (4.72 million); an 8.39 MB table; a 1.1 GB one"
    assert find_machine_phrasing(clean) == []


def test_prose_reads_as_a_person_wrote_it(
    page: str, reader_report: Callable[[str], ReaderReport]
) -> None:
    if page.startswith(("genindex", "search", "py-modindex")):
        pytest.skip("an index, not prose")
    found = find_machine_phrasing(reader_report(page).layout["text"])
    assert found == [], f"{page}:\n  " + "\n  ".join(found)
