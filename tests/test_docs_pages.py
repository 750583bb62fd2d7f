"""The book's pages read, they do not compute: no function or class is defined in a page's
code cells (the logic lives in gpuconcepts.render.pages, where it has doctests and tests)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from test_docs_notebooks import DOCS, md_code_cells

# Pages not yet moved to gpuconcepts.render.pages (others edit them this round), with the
# definitions they hold today; a page that loses them must leave this list.
NOT_YET = {
    "distributed.md": {"bubble_row"},
    "model.md": {
        "words", "shapes_row", "against", "zero_row", "sixteen_bit", "floor_cell", "knee",
        "bound_cell",
    },
}  # fmt: skip
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
    found = {name for cell in md_code_cells(page) for name in definitions(cell)}
    allowed = NOT_YET.get(page.name, set())
    assert found <= allowed, (
        f"{page.name} defines {', '.join(sorted(found - allowed))}: move it into "
        "gpuconcepts.render.pages and call it from the page"
    )
    if page.name in NOT_YET:
        assert found == allowed, f"{page.name} no longer defines {allowed - found}: update NOT_YET"


def test_the_check_fails_on_a_definition(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("```{code-cell} python\n:tags: [remove-cell]\ndef f():\n    pass\n```\n")
    assert definitions(md_code_cells(page)[0]) == ["f"]
    assert definitions("async def g():\n    pass\nclass K:\n    pass") == ["g", "K"]
    assert definitions("f = lambda x: x\nprint(f(1))") == []


def test_the_allowlist_names_real_pages() -> None:
    assert set(NOT_YET) <= {p.name for p in PAGES}
