"""Each MyST notebook page has its Colab/download notebook beside it, with the same code cells.

The .ipynb files are derived from the .md pages by ``docs/_notebooks.py`` during the docs
build (jupytext) and committed, because Colab opens notebooks from the repository. This test
needs no jupytext: it compares the code cells of both files directly, so a page edited without
rebuilding the book fails here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"
NOTEBOOK_PAGES = sorted(
    p for p in DOCS.glob("*.md") if p.read_text(encoding="utf-8").startswith("---\njupytext:")
)
_CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```\s*$", re.DOTALL | re.MULTILINE)


def md_code_cells(page: Path) -> list[str]:
    """The source of each code cell of a MyST page, without its ``:option:`` lines."""
    cells = []
    for body in _CELL.findall(page.read_text(encoding="utf-8")):
        lines = body.splitlines()
        while lines and re.match(r"^:\w[\w-]*:", lines[0]):
            lines.pop(0)
        while lines and not lines[0].strip():
            lines.pop(0)
        cells.append("\n".join(lines).rstrip())
    return cells


def ipynb_code_cells(notebook: Path) -> list[str]:
    """The source of each code cell of a notebook, without the leading install cell."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    code = [c for c in cells if c["cell_type"] == "code"]
    assert "colab-install" in code[0]["metadata"].get("tags", []), "install cell first"
    return ["".join(c["source"]).rstrip() for c in code[1:]]


def test_there_are_notebook_pages() -> None:
    assert {"dlrm", "mlp", "cnn", "rnn", "transformer"} <= {p.stem for p in NOTEBOOK_PAGES}


@pytest.mark.parametrize("page", NOTEBOOK_PAGES, ids=lambda p: p.name)
def test_notebook_matches_page(page: Path) -> None:
    notebook = page.with_suffix(".ipynb")
    assert notebook.exists(), f"{notebook.name} missing: run `nox -s docs` and commit it"
    assert ipynb_code_cells(notebook) == md_code_cells(page), (
        f"{notebook.name} is stale: run `nox -s docs` and commit it"
    )


def test_md_code_cells_parser(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    text = "---\njupytext: {}\n---\n```{code-cell} python\n:tags: [remove-cell]\n\nx = 1\n```\n"
    page.write_text(text + "Prose.\n```{code-cell} python\ny = 2\n```\n", encoding="utf-8")
    assert md_code_cells(page) == ["x = 1", "y = 2"]
