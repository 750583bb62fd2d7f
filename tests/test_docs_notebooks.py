"""Each MyST notebook page has its Colab/download notebook beside it, with the same code cells.

The .ipynb files are derived from the .md pages by ``docs/_notebooks.py`` during the docs
build (jupytext) and committed, because Colab opens notebooks from the repository. This test
needs no jupytext: it compares the code cells and the prose of both files directly (the prose
with its glue references as the notebook's ``[[name]]`` placeholders), so a page edited
without rebuilding the book fails here.
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"
sys.path.insert(0, str(DOCS))
from _notebooks import SHOWN_TAG, placeholders
from book_pages import CODE_CELL, md_code_cells

NOTEBOOK_PAGES = sorted(
    p for p in DOCS.glob("*.md") if p.read_text(encoding="utf-8").startswith("---\njupytext:")
)


def ipynb_code_cells(notebook: Path) -> list[str]:
    """The source of each code cell of a notebook, without the leading install cell and the
    cells that show the page's prose with its glued values."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    code = [c for c in cells if c["cell_type"] == "code"]
    assert "colab-install" in code[0]["metadata"].get("tags", []), "install cell first"
    return [
        "".join(c["source"]).rstrip()
        for c in code[1:]
        if "glued-prose" not in c["metadata"].get("tags", [])
    ]


def _words(text: str) -> str:
    """Prose compared word by word: cell breaks (``+++``) and line breaks do not count."""
    return " ".join(line for line in text.split() if line != "+++")


def md_prose(page: Path) -> list[str]:
    """The prose between a page's code cells (front matter left out), glue references as
    ``[[name]]``, one entry per stretch between two code cells."""
    body = page.read_text(encoding="utf-8").split("\n---\n", 1)[1]
    return [_words(placeholders(chunk)) for chunk in CODE_CELL.split(body)[::2]]


def _shown(cell: dict[str, object]) -> str:
    """The Markdown a glued-prose cell shows: the string its ``show(...)`` call is given."""
    call = ast.parse("".join(cell["source"])).body[-1]  # type: ignore[arg-type]
    assert isinstance(call, ast.Expr)
    assert isinstance(call.value, ast.Call)
    return str(ast.literal_eval(call.value.args[0]))


def ipynb_prose(notebook: Path) -> list[str]:
    """The prose between a notebook's code cells: Markdown cells and what glued-prose cells
    show, one entry per stretch between two code cells (the install cell left out)."""
    chunks: list[list[str]] = [[]]
    for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"][1:]:
        if cell["cell_type"] == "markdown":
            chunks[-1].append("".join(cell["source"]))
        elif SHOWN_TAG in cell["metadata"].get("tags", []):
            chunks[-1].append(_shown(cell))
        else:
            chunks.append([])
    return [_words("\n".join(chunk)) for chunk in chunks]


def test_there_are_notebook_pages() -> None:
    assert {"dlrm", "mlp", "cnn", "rnn", "transformer"} <= {p.stem for p in NOTEBOOK_PAGES}


@pytest.mark.parametrize("page", NOTEBOOK_PAGES, ids=lambda p: p.name)
def test_notebook_matches_page(page: Path) -> None:
    notebook = page.with_suffix(".ipynb")
    assert notebook.exists(), f"{notebook.name} missing: run `nox -s docs` and commit it"
    assert ipynb_code_cells(notebook) == md_code_cells(page), (
        f"{notebook.name} is stale: run `nox -s docs` and commit it"
    )


@pytest.mark.parametrize("page", NOTEBOOK_PAGES, ids=lambda p: p.name)
def test_notebook_prose_matches_page(page: Path) -> None:
    notebook = page.with_suffix(".ipynb")
    assert ipynb_prose(notebook) == md_prose(page), (
        f"{notebook.name}'s prose is stale: run `nox -s docs` and commit it"
    )


def test_prose_drift_is_caught(tmp_path: Path) -> None:
    page = DOCS / "qa-math.md"
    notebook = json.loads(page.with_suffix(".ipynb").read_text(encoding="utf-8"))
    shown = next(c for c in notebook["cells"] if SHOWN_TAG in c["metadata"].get("tags", []))
    shown["source"] = ["".join(shown["source"]).replace("Q10", "Q9", 1)]
    stale = tmp_path / "qa-math.ipynb"
    stale.write_text(json.dumps(notebook), encoding="utf-8")
    assert ipynb_prose(stale) != md_prose(page)
    edited = tmp_path / "qa-math.md"
    edited.write_text(page.read_text(encoding="utf-8").replace("Q10", "Q9", 1), encoding="utf-8")
    fresh = page.with_suffix(".ipynb")
    assert ipynb_prose(fresh) != md_prose(edited)
    assert ipynb_prose(fresh) == md_prose(page)


def test_md_code_cells_parser(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    text = "---\njupytext: {}\n---\n```{code-cell} python\n:tags: [remove-cell]\n\nx = 1\n```\n"
    page.write_text(text + "Prose.\n```{code-cell} python\ny = 2\n```\n", encoding="utf-8")
    assert md_code_cells(page) == ["x = 1", "y = 2"]


@pytest.mark.parametrize("page", NOTEBOOK_PAGES, ids=lambda p: p.name)
def test_notebook_holds_no_glue_reference_and_no_sphinx(page: Path) -> None:
    text = page.with_suffix(".ipynb").read_text(encoding="utf-8")
    assert "{glue" not in text, f"{page.stem}.ipynb would show raw {{glue}} markup on Colab"
    install = json.loads(text)["cells"][0]["source"]
    assert "docs" not in "".join(install), "the install cell must not pull in Sphinx"


# Two notebooks run top to bottom in a fresh kernel, started in an empty folder as on Colab:
# qa-math (formulas and glued prose only) and execution (the machine, torch, the package hash).
RUN_ALONE = ["qa-math", "execution"]


@pytest.mark.timeout(600)
@pytest.mark.parametrize("stem", RUN_ALONE)
def test_notebook_runs_alone_and_shows_its_numbers(
    stem: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    nbclient = pytest.importorskip("nbclient")
    nbformat = pytest.importorskip("nbformat")
    if stem == "execution":
        pytest.importorskip("torch")
    src = Path(__file__).resolve().parents[1] / "src"
    monkeypatch.setenv("PYTHONPATH", str(src))  # the kernel imports this checkout
    notebook = nbformat.read(DOCS / f"{stem}.ipynb", as_version=4)
    client = nbclient.NotebookClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": tmp_path}}
    )
    client.execute()  # raises CellExecutionError, naming the cell, on any error
    markdown = [
        "".join(o.get("data", {}).get("text/markdown", ""))
        for c in notebook.cells
        for o in c.get("outputs", [])
    ]
    assert not any("[[" in text for text in markdown), "a placeholder was left unfilled"
    if stem == "qa-math":  # the prose cells show the answers this kernel computed
        from gpuconcepts.questions import question
        from gpuconcepts.units import describe_bytes

        assert describe_bytes(question(10).steps[0].value) in "".join(markdown)
    else:  # the hash of the package the kernel ran, not of the folder it was started in
        from gpuconcepts.book import package_hash

        assert f"`{package_hash(src.parent)}`" in "".join(markdown)


@pytest.mark.parametrize("page", NOTEBOOK_PAGES, ids=lambda p: p.name)
def test_prose_cells_are_valid_python(page: Path) -> None:
    import ast

    cells = json.loads(page.with_suffix(".ipynb").read_text(encoding="utf-8"))["cells"]
    for cell in cells:
        if "glued-prose" in cell["metadata"].get("tags", []):
            ast.parse("".join(cell["source"]))  # raises SyntaxError, naming the line


def test_write_notebooks_skips_what_has_not_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("jupytext")
    import _notebooks

    page = tmp_path / "page.md"
    header = (DOCS / "qa-math.md").read_text(encoding="utf-8").split("\n---\n", 1)[0]
    page.write_text(header + "\n---\n# A page\n\n```{code-cell} python\nx = 1\n```\n")
    assert _notebooks.write_notebooks(tmp_path) == [page.with_suffix(".ipynb")]
    made = _notebooks.notebook_text

    def refuse(_: Path) -> str:
        raise AssertionError("an unchanged page was converted again")

    monkeypatch.setattr(_notebooks, "notebook_text", refuse)
    assert _notebooks.write_notebooks(tmp_path) == []  # nothing changed: no jupytext at all
    monkeypatch.setattr(_notebooks, "notebook_text", made)
    page.write_text(page.read_text().replace("x = 1", "x = 2"))
    assert _notebooks.write_notebooks(tmp_path) == [page.with_suffix(".ipynb")]
    assert "x = 2" in page.with_suffix(".ipynb").read_text()
    page.with_suffix(".ipynb").write_text("{}")  # a notebook edited by hand is made again
    assert _notebooks.write_notebooks(tmp_path) == [page.with_suffix(".ipynb")]
