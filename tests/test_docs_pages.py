"""The book's pages read, they do not compute: no function or class is defined in a page's
code cells (the logic lives in gpuconcepts.render.pages, where it has doctests and tests)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from test_docs_notebooks import DOCS, md_code_cells

PAGES = sorted(p for p in DOCS.glob("*.md"))


def definitions(source: str) -> list[str]:
    """The names of the functions and classes a cell's source defines, anywhere in it.

    >>> definitions("def f():\\n    class C: pass\\nx = lambda: 1")
    ['f', 'C']
    """
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    return [node.name for node in ast.walk(ast.parse(source)) if isinstance(node, kinds)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_a_page_defines_no_function_or_class(page: Path) -> None:
    found = sorted({name for cell in md_code_cells(page) for name in definitions(cell)})
    assert not found, (
        f"{page.name} defines {', '.join(found)}: move it into gpuconcepts.render.pages "
        "and call it from the page"
    )


CODE_LINES_AT_MOST = 750
"""Half of the pages' code-cell lines when issue 23 asked for pages that read (about 1,500)."""


def code_lines(page: Path) -> int:
    """A page's non-blank code-cell lines (:func:`md_code_cells` leaves out ``:tags:``)."""
    return sum(1 for cell in md_code_cells(page) for line in cell.splitlines() if line.strip())


def test_the_pages_hold_at_most_half_their_former_code() -> None:
    lines = {page.name: code_lines(page) for page in PAGES}
    assert sum(lines.values()) <= CODE_LINES_AT_MOST, sorted(lines.items(), key=lambda i: -i[1])


def test_the_check_fails_on_a_definition(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("```{code-cell} python\n:tags: [remove-cell]\ndef f():\n    pass\n```\n")
    assert definitions(md_code_cells(page)[0]) == ["f"]
    assert definitions("async def g():\n    pass\nclass K:\n    pass") == ["g", "K"]
    assert definitions("f = lambda x: x\nprint(f(1))") == []
