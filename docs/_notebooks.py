"""Make a plain .ipynb beside every MyST notebook page, for Colab and for readers' own Jupyter.

The .md page is the single source; the .ipynb is derived from it by jupytext, with one cell
in front that installs gpuconcepts when it is missing (as on Colab). A notebook is written
only when its content changes, so a build with nothing changed touches no file.
"""

from __future__ import annotations

from pathlib import Path

INSTALL_CELL = """\
# On Colab (or any machine without gpuconcepts) install the book's package first.
import importlib.util
import subprocess
import sys

if importlib.util.find_spec("gpuconcepts") is None:
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet",
                    "gpuconcepts[docs] @ git+https://github.com/gpuconcepts/gpuconcepts"],
                   check=True)"""


def is_notebook(page: Path) -> bool:
    """True for a MyST page with a jupytext header (a page with code cells to run)."""
    head = page.read_text(encoding="utf-8").split("\n---", 1)[0]
    return page.read_text(encoding="utf-8").startswith("---") and "jupytext:" in head


def notebook_text(page: Path) -> str:
    """The .ipynb JSON for one MyST page: its cells, outputs empty, the install cell first."""
    import jupytext
    import nbformat

    nb = jupytext.read(page)
    install = nbformat.v4.new_code_cell(INSTALL_CELL)
    install.metadata["tags"] = ["colab-install"]
    nb.cells.insert(0, install)
    for index, cell in enumerate(nb.cells):
        cell.id = f"{page.stem}-{index}"  # stable ids: the text only changes with the page
    nb.metadata.pop("jupytext", None)
    return str(nbformat.writes(nb)) + "\n"


def write_notebooks(docs: Path) -> list[Path]:
    """Write docs/<page>.ipynb for every notebook page whose notebook is missing or stale."""
    written = []
    for page in sorted(docs.glob("*.md")):
        if not is_notebook(page):
            continue
        target = page.with_suffix(".ipynb")
        text = notebook_text(page)
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8")
            written.append(target)
    return written
