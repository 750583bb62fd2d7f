"""The book's pages run outside Sphinx: every code cell of every MyST page, in order, with the
build's run and the recorded runs handed in, and every glued value captured as the text a
reader would see. The property test of issue 44 (tests/test_every_run_renders.py) feeds it
runs mutated into every legitimate state; tests of the pages' shape read its cell parser.
"""

from __future__ import annotations

import ast
import contextlib
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DOCS = Path(__file__).resolve().parents[1] / "docs"
CODE_CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```\s*$", re.DOTALL | re.MULTILINE)

UNSHOWABLE = re.compile(r"(?<![\w\\])(nan|NaN|inf|-inf|Infinity|None)(?!\w)")
"""What a reader must never see: a number Python could not write as one (``nan``, ``inf``)
or a missing value written as Python writes it (``None``). A word boundary on both sides, so
``\\infty`` in LaTeX, "information" or "Nonetheless" are not caught."""


_CODE_BLOCK = re.compile(r"^```.*?^```", re.DOTALL | re.MULTILINE)


def md_code_cells(page: Path) -> list[str]:
    """The source of each code cell of a MyST page, without its ``:option:`` lines."""
    cells = []
    for body in CODE_CELL.findall(page.read_text(encoding="utf-8")):
        lines = body.splitlines()
        while lines and re.match(r"^:\w[\w-]*:", lines[0]):
            lines.pop(0)
        while lines and not lines[0].strip():
            lines.pop(0)
        cells.append("\n".join(lines).rstrip())
    return cells


def executed_pages() -> list[Path]:
    """Every page of the book with code cells, in name order."""
    return sorted(p for p in DOCS.glob("*.md") if md_code_cells(p))


@dataclass
class Shown:
    """What one page showed: each glued value and each cell's displayed result, as text."""

    page: str
    texts: dict[str, str] = field(default_factory=dict)

    def unshowable(self) -> list[str]:
        """``name: …context…`` for every value that shows nan, inf or None to a reader."""
        found = []
        for name, shown in self.texts.items():
            text = _CODE_BLOCK.sub("", shown)  # a listing of Python source may say None
            for match in UNSHOWABLE.finditer(text):
                start, end = max(match.start() - 60, 0), match.end() + 60
                found.append(f"{self.page}:{name}: …{text[start:end]}…")
        return found


class CellFailed(AssertionError):
    """A cell raised: the message names the page and the cell, as the book build does."""


def _figure_texts(fig: Any) -> str:
    """Every text a figure holds (titles, labels, tick labels, legends, annotations), without
    drawing it: a page's figure is checked for what it says, fast."""
    from matplotlib.text import Text

    return "\n".join(t.get_text() for t in fig.findobj(Text))


def _shown(value: object) -> str:
    """What a cell's last expression shows: its Markdown or SVG when it has one, else repr."""
    for method in ("_repr_markdown_", "_repr_svg_", "_repr_latex_"):
        if hasattr(value, method):
            return str(getattr(value, method)())
    return "" if value is None else repr(value)


def _run_cell(source: str, namespace: dict[str, Any]) -> object:
    """Run a cell as a notebook does: its statements, then its last expression's value."""
    tree = ast.parse(source)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    exec(compile(tree, "<cell>", "exec"), namespace)  # noqa: S102  # the book's own cells
    if last is None:
        return None
    return eval(compile(ast.Expression(last.value), "<cell>", "eval"), namespace)


@contextlib.contextmanager
def _book_reading(build: Any, recorded: Sequence[Any], draw: bool) -> Iterator[dict[str, str]]:
    """Patch gpuconcepts.book so pages read ``build`` and ``recorded`` and glue into a dict."""
    import matplotlib.pyplot as plt

    from gpuconcepts import book

    glued: dict[str, str] = {}
    saved = {
        name: getattr(book, name) for name in ("build_run", "recorded_runs", "_glue", "svg_text")
    }

    def svg_text(fig: Any) -> str:
        # undrawn, the figure's texts stand in an empty SVG (what glue_figure expects)
        text = saved["svg_text"](fig) if draw else f"<svg>{_figure_texts(fig)}</svg>"
        plt.close(fig)
        return text

    def glue(name: str, _kind: str, content: str, _shown: object) -> None:
        glued[name] = content

    book.build_run = lambda docs=None: build  # type: ignore[assignment]  # noqa: ARG005
    book.recorded_runs = lambda docs=None: list(recorded)  # type: ignore[assignment]  # noqa: ARG005
    book._glue = glue  # type: ignore[assignment]
    book.svg_text = svg_text  # type: ignore[assignment]
    cwd = Path.cwd()
    os.chdir(DOCS)
    try:
        yield glued
    finally:
        os.chdir(cwd)
        for name, value in saved.items():
            setattr(book, name, value)
        plt.close("all")


def render_page(page: Path, build: Any, recorded: Sequence[Any], *, draw: bool = False) -> Shown:
    """Run every code cell of ``page`` against these runs; what it glued and displayed.

    ``draw`` renders each figure to SVG (slow, about 0.2 s a figure); without it a figure is
    read for its texts only. A cell that raises is a :class:`CellFailed` naming page and cell.
    """
    shown = Shown(page.stem)
    namespace: dict[str, Any] = {"__name__": f"page_{page.stem}"}
    with _book_reading(build, recorded, draw) as glued:
        for index, source in enumerate(md_code_cells(page), start=1):
            try:
                value = _run_cell(source, namespace)
            except Exception as error:
                first = source.strip().splitlines()[0] if source.strip() else ""
                raise CellFailed(
                    f"{page.name}, cell {index} ({first!r}) raised {type(error).__name__}: {error}"
                ) from error
            if value is not None:
                shown.texts[f"cell {index}"] = _shown(value)
        shown.texts.update(glued)
    return shown
