"""The GPU chapter, the glossary, the bibliography and the new figures, in headless Chromium.

Each figure must load (a non-zero natural width) and carry alt text; the glossary's terms and
the bibliography's entries must render, and the chapters' takeaways must link the glossary.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from conftest import Browse, Site

pytestmark = pytest.mark.site

ARTICLE = "article.bd-article"

FIGURES = {
    "gpu.html": ["fig-gpu-overlay"],
    "cnn.html": ["fig-cnn-architecture"],
    "hardware.html": ["fig-datasheet-overlay"],
    "model.html": ["fig-memory-budget"],
    "distributed.html": ["fig-ring-allreduce", "fig-pipeline-schedules"],
}
"""The figures this issue added, by page: their MyST names, which become the figures' ids."""

CHAPTERS = ("dlrm.html", "mlp.html", "cnn.html", "rnn.html", "transformer.html")

GLOSSARY_TERMS = (
    "Ridge point",
    "Arithmetic intensity",
    "KV cache",
    "GQA",
    "MQA",
    "ZeRO",
    "Bubble",
    "Latency floor",
    "Overhead",
)

CITED = ("Williams", "Kaplan", "Pope", "Dao", "Korthikanti", "Shoeybi")

FIGURE_JS = """([article, id]) => {
  const root = document.querySelector(article) || document.body;
  const box = root.querySelector(`figure#${id}, #${id}`);
  if (!box) return null;
  const img = box.tagName === "IMG" ? box : box.querySelector("img");
  return img ? {alt: img.getAttribute("alt") || "", width: img.naturalWidth} : {alt: "", width: -1};
}"""

ALL_IMAGES_JS = """(article) => {
  const root = document.querySelector(article) || document.body;
  return [...root.querySelectorAll("img")].map(img => ({
    src: img.getAttribute("src") || "", alt: (img.getAttribute("alt") || "").trim()}));
}"""


def _require(site: Site, path: str) -> None:
    if path not in site.pages:
        pytest.fail(f"{path} is not in the build")


@pytest.mark.parametrize(
    ("path", "figure"), [(p, f) for p, names in FIGURES.items() for f in names]
)
def test_new_figures_render_with_alt_text(
    path: str, figure: str, browse: Browse, site: Site
) -> None:
    _require(site, path)
    page, visit = browse.open(path)
    page.wait_for_load_state("networkidle")
    found = page.evaluate(FIGURE_JS, [ARTICLE, figure])
    assert found is not None, f"{path}: no figure #{figure}"
    assert found["width"] > 0, f"{path}: #{figure} did not load"
    assert len(found["alt"]) > 40, f"{path}: #{figure} has no real alt text: {found['alt']!r}"
    assert visit.problems == [], visit.problems


@pytest.mark.parametrize("path", sorted(FIGURES))
def test_every_figure_on_the_pages_has_alt_text(path: str, browse: Browse, site: Site) -> None:
    _require(site, path)
    page, _ = browse.open(path)
    images = page.evaluate(ALL_IMAGES_JS, ARTICLE)
    bare = [i["src"] for i in images if not i["alt"]]
    assert bare == [], f"{path}: images without alt text: {bare}"


def test_the_gpu_chapter_tells_the_recorded_runs(browse: Browse, site: Site) -> None:
    _require(site, "gpu.html")
    page, visit = browse.open("gpu.html")
    text = page.locator(ARTICLE).inner_text()
    # the story of the two runs (issue 46): what changed from bf16 to TF32, and why
    for words in ("From bf16 to TF32", "bytes against arithmetic", "did not hold"):
        assert words in text, f"gpu.html lacks {words!r}"
    assert "host CPU" in text
    assert page.locator(f"{ARTICLE} table").count() >= 1  # one table in the main text
    assert visit.problems == [], visit.problems


@pytest.mark.parametrize("path", CHAPTERS)
def test_each_chapter_says_what_the_gpu_showed(path: str, browse: Browse) -> None:
    page, _ = browse.open(path)
    text = page.locator(ARTICLE).inner_text()
    assert "What the recorded GPU run showed" in text, path  # the chapter's lead (issue 46)
    assert page.locator(f'{ARTICLE} a[href="gpu.html"]').count() >= 1
    takeaways = page.locator(f"{ARTICLE} .admonition.tip")
    assert takeaways.count() >= 1, f"{path}: no takeaways box"


def test_recorded_distributed_columns_name_the_host(browse: Browse) -> None:
    page, _ = browse.open("distributed.html")
    headers = page.locator(f"{ARTICLE} th").all_inner_texts()
    gpu_columns = [h for h in headers if "cuda" in h]
    assert gpu_columns, "no recorded GPU run's column on the distributed page"
    assert all("host CPU" in h for h in gpu_columns), gpu_columns


def test_the_glossary_defines_its_terms(browse: Browse, site: Site) -> None:
    _require(site, "glossary.html")
    page, visit = browse.open("glossary.html")
    terms = page.locator(f"{ARTICLE} dl.glossary dt").all_inner_texts()
    shown = {t.strip().rstrip("¶").strip().lower() for t in terms}
    missing = [t for t in GLOSSARY_TERMS if t.lower() not in shown]
    assert missing == [], f"glossary lacks {missing}; has {sorted(shown)}"
    assert visit.problems == [], visit.problems


def test_takeaways_link_the_glossary(browse: Browse) -> None:
    page, _ = browse.open("mlp.html")
    links = page.locator(f'{ARTICLE} .admonition.tip a[href*="glossary.html#term-"]')
    assert links.count() >= 1
    href = links.first.get_attribute("href")
    assert href is not None
    glossary, _ = browse.open(href)
    anchor = href.split("#", 1)[1]
    assert glossary.locator(f'[id="{anchor}"]').count() == 1


def test_the_bibliography_lists_the_cited_papers(browse: Browse, site: Site) -> None:
    _require(site, "bibliography.html")
    page, visit = browse.open("bibliography.html")
    text = page.locator(ARTICLE).inner_text()
    missing = [name for name in CITED if name not in text]
    assert missing == [], f"bibliography lacks {missing}"
    assert page.locator(f"{ARTICLE} .citation, {ARTICLE} dl.citation > dt").count() >= len(CITED)
    assert visit.problems == [], visit.problems


def test_the_index_offers_a_reading_path(browse: Browse) -> None:
    page, _ = browse.open("index.html")
    text = page.locator(ARTICLE).inner_text()
    assert "A reading path" in text
    for target in ("gpu.html", "glossary.html"):
        assert page.locator(f'{ARTICLE} a[href="{target}"]').count() >= 1, target


class _Images(HTMLParser):
    """Every ``<img>`` of a page: its src and alt (None where it has no alt attribute)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.images: list[tuple[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "img":
            values = dict(attrs)
            self.images.append((values.get("src") or "", values.get("alt")))


FILE_NAME = re.compile(r"^\S+\.(?:svg|png|jpe?g|gif|webp)$|^[0-9a-f]{16,}$", re.IGNORECASE)
"""An alt text that is only a file name (or a content hash, as an executed cell's image is
named): it tells a reader nothing."""


def images_without_alt(html: str) -> list[str]:
    """The images of a page whose alt text is missing, blank or only a file name.

    >>> images_without_alt('<img src="a.svg" alt="A roofline of the run"><img src="b.svg">')
    ['b.svg']
    >>> images_without_alt('<img src="c/0f3a.svg" alt="0f3a.svg"><img src="d.png" alt=" ">')
    ['c/0f3a.svg', 'd.png']
    """
    parser = _Images()
    parser.feed(html)
    parser.close()
    return [
        src for src, alt in parser.images if not (alt or "").strip() or FILE_NAME.match(alt.strip())
    ]


def test_every_image_of_the_site_has_alt_text_that_is_not_a_file_name(site: Site) -> None:
    seen = 0
    bare = {}
    for path in site.pages:
        html = (site.root / path).read_text(encoding="utf-8")
        seen += html.count("<img")
        if missing := images_without_alt(html):
            bare[path] = missing
    assert seen > 20  # the chapters' figures, the recorded runs' rooflines, the logo
    assert bare == {}, bare
