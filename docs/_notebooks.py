"""Make a plain .ipynb beside every MyST notebook page, for Colab and for readers' own Jupyter.

The .md page is the single source; the .ipynb is derived from it by jupytext, with one cell
in front that installs what the page needs when gpuconcepts is missing (as on Colab). A plain
Jupyter cannot resolve MyST-NB's ``{glue}`` references, so every Markdown cell that holds one
becomes a small code cell (its source hidden) that shows the cell's text with the values its
own kernel just computed: ``show("... [[name]] ...")`` (see ``gpuconcepts.book.show``). The
notebook holds no number from the build, so it is the same on every machine. A notebook is
written only when its content changes, so a build with nothing changed touches no file.
"""

from __future__ import annotations

import hashlib
import json
import re
from importlib.metadata import version
from pathlib import Path

from gpuconcepts.files import write_atomic

INSTALL_CELL = """\
# On Colab (or any machine without gpuconcepts) install what this page needs first.
import importlib.util
import subprocess
import sys

if importlib.util.find_spec("gpuconcepts") is None:
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet",
                    "gpuconcepts{extras} @ git+https://github.com/gpuconcepts/gpuconcepts"],
                   check=True)"""

SHOWN_TAG = "glued-prose"
"""The tag of the code cells that show a Markdown cell with its glued values."""

# ```{glue:md} name / {glue:math} / {glue:figure}, with :option: lines and (figures) a caption.
_GLUE_BLOCK = re.compile(
    r"^```\{glue(?::\w+)?\}\s+(?P<name>[\w-]+)[^\n]*\n(?P<body>.*?)^```[ \t]*$",
    re.DOTALL | re.MULTILINE,
)
_GLUE_ROLE = re.compile(r"\{glue(?::\w+)?\}`(?P<name>[\w-]+)(?::\w+)?`")  # `name:myst` too
_OPTION = re.compile(r"^:(\w[\w-]*):\s*(.*)$")


def _block(match: re.Match[str]) -> str:
    """A glue directive as a placeholder; a figure keeps its caption (in italics) below it."""
    caption = [line for line in match["body"].splitlines() if not _OPTION.match(line)]
    text = "\n".join(caption).strip()
    return f"[[{match['name']}]]" + (f"\n\n*{text}*" if text else "")


def placeholders(markdown: str) -> str:
    """Every ``{glue}`` reference of a Markdown cell as a ``[[name]]`` placeholder.

    >>> placeholders("It holds {glue:md}`rows` rows.\\n```{glue:math} eq\\n:label: x\\n```")
    'It holds [[rows]] rows.\\n[[eq]]'
    """
    return _GLUE_ROLE.sub(r"[[\g<name>]]", _GLUE_BLOCK.sub(_block, markdown))


def _string(text: str) -> str:
    """Python source for ``text``: a raw triple-quoted string when that is exact, else JSON."""
    if '"""' not in text and not text.endswith(("\\", '"')):
        return f'r"""{text}"""'
    return json.dumps(text, ensure_ascii=False)


PAGE_MODULES = Path(__file__).resolve().parents[1] / "src" / "gpuconcepts" / "render" / "pages"
_PAGE_IMPORT = re.compile(
    r"^\s*(?:from gpuconcepts\.render\.pages import (?P<names>[\w, ]+?)(?: as \w+)?"
    r"|from gpuconcepts\.render\.pages\.(?P<module>\w+) import .*)$",
    re.MULTILINE,
)


def _imports(code: str) -> str:
    """The import lines of ``code`` and of the page modules it imports (what they need, the
    page needs: gpuconcepts.render.pages holds the pages' logic)."""
    found = re.findall(r"^\s*(?:from|import)\s.*$", code, re.MULTILINE)
    for match in _PAGE_IMPORT.finditer(code):
        names = [match["module"]] if match["module"] else match["names"].split(",")
        for name in (n.strip() for n in names):
            module = PAGE_MODULES / f"{name}.py"
            if module.is_file():
                found.append(_imports(module.read_text(encoding="utf-8")))
    return "\n".join(found)


def extras(code: str) -> str:
    """The pip extras a page's code needs: kernels (torch) to measure, plots to draw."""
    wanted = []
    if re.search(r"\b(kernels|measure|profile|claims|shared_peaks)\b", _imports(code)):
        wanted.append("kernels")
    if re.search(r"\b(figures|glue_figure|roofline|plots|matplotlib)\b", _imports(code)):
        wanted.append("plots")
    return f"[{','.join(wanted)}]" if wanted else ""


def notebook_text(page: Path) -> str:
    """The .ipynb JSON for one MyST page: outputs empty, install cell first, prose shown filled."""
    import jupytext
    import nbformat

    nb = jupytext.read(page)
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    cells = []
    for cell in nb.cells:
        if cell.cell_type == "markdown" and "{glue" in cell.source:
            shown = nbformat.v4.new_code_cell(
                f"from gpuconcepts.book import show\n\nshow({_string(placeholders(cell.source))})"
            )
            shown.metadata["tags"] = [SHOWN_TAG, "hide-input"]
            shown.metadata["jupyter"] = {"source_hidden": True}
            shown.metadata["cellView"] = "form"  # Colab folds the code, shows the output
            cells.append(shown)
        else:
            cells.append(cell)
    install = nbformat.v4.new_code_cell(INSTALL_CELL.format(extras=extras(code)))
    install.metadata["tags"] = ["colab-install"]
    nb.cells = [install, *cells]
    for index, cell in enumerate(nb.cells):
        cell.id = f"{page.stem}-{index}"  # stable ids: the text only changes with the page
    nb.metadata.pop("jupytext", None)
    return str(nbformat.writes(nb)) + "\n"


def is_notebook(page: Path) -> bool:
    """True for a MyST page with a jupytext header (a page with code cells to run)."""
    head = page.read_text(encoding="utf-8").split("\n---", 1)[0]
    return page.read_text(encoding="utf-8").startswith("---") and "jupytext:" in head


def _digest(*texts: str) -> str:
    return hashlib.sha256("\0".join(texts).encode()).hexdigest()


def _generator() -> str:
    """What every notebook also depends on besides its page: this file, the page modules
    (their imports choose the install cell's extras) and jupytext's version."""
    sources = [Path(__file__).read_text(encoding="utf-8")]
    sources += [p.read_text(encoding="utf-8") for p in sorted(PAGE_MODULES.glob("*.py"))]
    return _digest(version("jupytext"), *sources)


def write_notebooks(docs: Path) -> list[Path]:
    """Write docs/<page>.ipynb for every notebook page whose notebook is missing or stale.

    ``docs/_build/.notebooks.json`` keeps, per page, a digest of what its notebook was made
    from and of the notebook written; a page whose digests both still match is skipped
    without jupytext, so a rebuild with nothing changed spends no time here.
    """
    stamps_path = docs / "_build" / ".notebooks.json"
    try:
        stamps = json.loads(stamps_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        stamps = {}
    generator = _generator()
    written = []
    fresh = {}
    for page in sorted(docs.glob("*.md")):
        if not is_notebook(page):
            continue
        target = page.with_suffix(".ipynb")
        source = _digest(generator, page.read_text(encoding="utf-8"))
        made = target.read_text(encoding="utf-8") if target.exists() else None
        if made is not None and stamps.get(page.name) == [source, _digest(made)]:
            fresh[page.name] = stamps[page.name]
            continue
        text = notebook_text(page)
        if made != text:
            write_atomic(target, text)
            written.append(target)
        fresh[page.name] = [source, _digest(text)]
    if fresh != stamps:
        stamps_path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(stamps_path, json.dumps(fresh, indent=1, sort_keys=True) + "\n")
    return written
