"""Sphinx configuration of the gpuconcepts book (MyST-NB, executed, offline).

Sections: project · paths and the cache key · extensions · MyST · MyST-NB execution ·
HTML theme · notebooks for download and Colab · API reference · status words · pages read
two at a time.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT / "src"))  # the book documents the checkout it lives in
# ...and so do the notebook kernels, which run in their own processes from docs/
os.environ["PYTHONPATH"] = os.pathsep.join(
    [str(ROOT / "src"), *filter(None, [os.environ.get("PYTHONPATH")])]
)
sys.path.insert(0, str(DOCS))  # the book's own small extensions (_whatif) and helpers

import gpuconcepts
from gpuconcepts.book_config import package_hash, plain_status

# -- Project -----------------------------------------------------------------------------
project = "gpuconcepts"
author = "gpuconcepts developers"
copyright = "gpuconcepts developers"
release = gpuconcepts.__version__
version = release
REPOSITORY_URL = "https://github.com/gpuconcepts/gpuconcepts"

# -- Paths and the cache key -------------------------------------------------------------
# MyST-NB's cache hashes only a notebook's code cells, so editing gpuconcepts would not
# re-run a cached page. The cache folder is therefore named after a hash of everything the
# pages execute: the package's sources and the kernel size presets. A change there gives a
# new folder (every page runs again) and, because nb_execution_cache_path is an "env"
# setting, tells Sphinx that the configuration changed so every page is read again.
PACKAGE_HASH = package_hash(ROOT)
# the appendix reads the change log (docs/changes.toml) as data: a new entry re-runs it too
_KEY = hashlib.sha256((PACKAGE_HASH + (DOCS / "changes.toml").read_text("utf-8")).encode())
CACHE_KEY = _KEY.hexdigest()[:16]
whatif_key = PACKAGE_HASH  # docs/_whatif.py writes the panels' script again only when it changes
_CACHE_ROOT = DOCS / "_build" / ".jupyter_cache"
_CACHE = _CACHE_ROOT / CACHE_KEY
if _CACHE_ROOT.is_dir():  # drop caches of older package versions: they can never hit again
    for stale in _CACHE_ROOT.iterdir():
        if stale.is_dir() and stale.name != CACHE_KEY:
            shutil.rmtree(stale, ignore_errors=True)

exclude_patterns = ["_build", "**.ipynb_checkpoints", "*.ipynb", "Thumbs.db", ".DS_Store"]
templates_path: list[str] = []
html_static_path = ["_static"]

# -- Extensions --------------------------------------------------------------------------
extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx-mathjax-offline",  # MathJax served from _static/mathjax: no CDN, works offline
    "sphinx_copybutton",
    "sphinx_design",
    "sphinx_exercise",  # the exercises at the end of each chapter
    "sphinxcontrib.bibtex",  # the bibliography: {cite:p} roles, docs/references.bib
    "_whatif",  # docs/_whatif.py: the live what-if panels, generated from the formulas
]
suppress_warnings = ["mystnb.unknown_mime_type"]
bibtex_bibfiles = ["references.bib"]
bibtex_default_style = "plain"
bibtex_reference_style = "author_year"

# -- MyST --------------------------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist", "substitution"]
myst_heading_anchors = 3
myst_dmath_double_inline = True

# -- MyST-NB execution (all execution settings together) ---------------------------------
nb_execution_mode = "cache"
nb_execution_cache_path = str(_CACHE)
nb_execution_raise_on_error = True  # a failing cell stops the build, naming page and cell
nb_execution_show_tb = True  # and prints the traceback
nb_execution_allow_errors = False
nb_execution_timeout = 300  # seconds per cell
nb_execution_in_temp = False
nb_merge_streams = True
nb_render_markdown_format = "myst"  # Markdown outputs may hold tables and math
nb_render_image_options = {"width": "100%"}
nb_kernel_rgx_aliases = {".*": "python3"}


def _name_the_cell() -> None:
    """MyST-NB raises ExecutionError(page) from the cell's error and logs the traceback as a
    warning; with ``-j 2`` a failing reader's log is dropped and the build's last line names
    the page alone. Its own message now carries the cell's error (nbclient's names the cell's
    source and the exception), so a failing build names page and cell however it reads."""
    from myst_nb.core.execute import base, cache, direct

    class CellFailed(base.ExecutionError):  # type: ignore[misc]
        def __str__(self) -> str:
            cause = self.__cause__
            page = super().__str__()
            return page if cause is None else f"{page}: a cell raised {cause}"

    cache.ExecutionError = direct.ExecutionError = CellFailed


_name_the_cell()

# Each page runs in a kernel of its own, which exits when the page is done. Exiting, Python
# garbage-collects every object the page left (sympy's, matplotlib's, torch's): most of a
# second of each page's time, spent on a process that is ending. The kernels start from an
# IPython profile of the build's own (never the reader's ~/.ipython and its startup files),
# whose one startup file freezes those objects at exit, so the last collection skips them.
# It also ends the kernel as soon as it has answered the build's shutdown request: ipykernel
# 7.4's own orderly exit can deadlock (its control thread flushes stdout into the IOPub thread
# the main thread has just stopped, and the main thread joins it), and then jupyter_client
# waits 2.5 s (half its shutdown_wait_time) before it terminates the kernel: 14 of 60 kernels
# here, and a page of 2.6 s took 6.0 in a build. The page's outputs are all in by then.
_IPYTHON = DOCS / "_build" / ".ipython"
_QUICK_EXIT = """\
def _exit_without_collecting():
    import atexit, gc, os

    atexit.register(gc.freeze)
    kernel = getattr(get_ipython(), "kernel", None)
    if kernel is None:  # not a kernel (an IPython shell started with this profile)
        return
    answer = kernel.control_handlers["shutdown_request"]

    async def shutdown_request(stream, ident, parent):
        await answer(stream, ident, parent)
        if not parent["content"].get("restart"):
            stream.flush()  # the reply, though the build does not wait for it
            os._exit(0)

    kernel.control_handlers["shutdown_request"] = shutdown_request


_exit_without_collecting()
del _exit_without_collecting
"""
# MyST-NB starts every kernel through jupyter_client with its default TCP transport and no
# configuration of its own to change it, so each kernel logged "Kernel is running over TCP
# without encryption" (21 lines a build; the kernels listen on 127.0.0.1 only). The kernels'
# config file drops that one message by its text; every other warning is still shown. (The ipc
# transport, set as jupyter_client's default, names its sockets relative to the working
# folder, which the build and the kernels do not share.)
_KERNEL_CONFIG = """\
import logging


class _NoTcpNotice(logging.Filter):
    def filter(self, record):
        return not record.getMessage().startswith(
            "Kernel is running over TCP without encryption."
        )


logging.getLogger("IPKernelApp").addFilter(_NoTcpNotice())
"""
_PROFILE = _IPYTHON / "profile_default"
for _path, _text in (
    (_PROFILE / "startup" / "00-quick-exit.py", _QUICK_EXIT),
    (_PROFILE / "ipython_kernel_config.py", _KERNEL_CONFIG),
):
    if not _path.is_file() or _path.read_text() != _text:
        _path.parent.mkdir(parents=True, exist_ok=True)
        _path.write_text(_text)
del _path, _text
os.environ["IPYTHONDIR"] = str(_IPYTHON)

# -- HTML theme --------------------------------------------------------------------------
html_theme = "sphinx_book_theme"
html_title = "How neural networks load a GPU"
html_last_updated_fmt = ""
html_css_files = ["book.css"]
html_logo = "_static/logo.svg"  # drawn by hand as SVG: a roofline over a chip
html_favicon = "_static/favicon.svg"  # declared, so no browser probes /favicon.ico
html_theme_options = {
    "repository_url": REPOSITORY_URL,
    "repository_branch": "main",
    "path_to_docs": "docs",
    "use_repository_button": True,
    "use_download_button": True,
    "use_source_button": False,
    "use_issues_button": False,
    "launch_buttons": {"colab_url": "https://colab.research.google.com"},
    "show_toc_level": 2,
    "navigation_with_keys": False,
}
html_context = {"default_mode": "light"}

# -- Notebooks for download and Colab ----------------------------------------------------
# The download button offers the executed notebook MyST-NB writes for each page. Colab opens
# files from the repository, so every MyST page also gets a plain .ipynb beside it, made by
# jupytext from the .md (the single source) with one install cell in front. The build
# refreshes them; tests/test_docs_notebooks.py fails when a committed one is stale.
sys.path.insert(0, str(DOCS))
from _notebooks import write_notebooks

_WRITTEN = write_notebooks(DOCS)
if _WRITTEN and os.environ.get("CI"):  # in CI a rewritten notebook means a stale commit
    names = ", ".join(p.name for p in _WRITTEN)
    raise RuntimeError(f"docs notebooks were stale ({names}): run `nox -s docs` and commit them")

# -- API reference -----------------------------------------------------------------------
autosummary_generate = False
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "show-inheritance": True}
napoleon_google_docstring = True
napoleon_numpy_docstring = False

# -- Status words ------------------------------------------------------------------------
# MyST-NB's execution table marks status with emoji that many fonts,
# headless Chromium's among them, draw as an empty box. Every text of every page outside code
# is passed through gpuconcepts.book_config.plain_status, which turns them into words.


_CODE = (nodes.literal_block, nodes.literal, nodes.doctest_block)


def _status_as_words(_app: Sphinx, doctree: nodes.document, _docname: str) -> None:
    for text in list(doctree.findall(nodes.Text)):
        words = plain_status(str(text))
        parent = text.parent
        if words == str(text) or parent is None:
            continue
        if any(isinstance(node, _CODE) for node in _ancestors(parent)):
            continue  # code shows what it shows (the docstring of plain_status, for one)
        parent.replace(text, nodes.Text(words))


def _ancestors(node: nodes.Node) -> list[nodes.Node]:
    chain = []
    current: nodes.Node | None = node
    while current is not None:
        chain.append(current)
        current = current.parent
    return chain


# -- Pages read two at a time -------------------------------------------------------------
# `nox -s docs` reads pages two at a time (sphinx-build -j 2): each page's kernel is mostly
# start-up and imports, and two halve the build on a 2-core machine. A page that times
# something must not share the cores with another page's kernel, so those pages are read
# first, one at a time, before the others are handed to the two workers. The first of them
# collects this build's run (gpuconcepts.book.build_run), which every later page only reads.
MEASURING_PAGES = ("analyze",)  # collects the run, then times three small models


def _measuring_pages_first(app: Sphinx, env: BuildEnvironment, docnames: list[str]) -> None:
    for name in MEASURING_PAGES:
        if name in docnames:
            app.events.emit("env-purge-doc", env, name)
            env.clear_doc(name)
            app.builder.read_doc(name)
            docnames.remove(name)


# -- A rebuild that reads nothing --------------------------------------------------------
# sphinx-exercise turns numfig on, and with it Sphinx numbers every figure again on every
# build: it unpickles all 30 doctrees and walks their 65,000 nodes, two of the four seconds a
# rebuild with nothing to read takes. When no page was read, added or removed, the numbers
# kept in the environment are the ones that walk would find, so it is skipped.
_READ_OR_REMOVED: list[bool] = [True]  # until the build says otherwise: number as usual


def _note_removed(_app: Sphinx, _env: BuildEnvironment, added, changed, removed) -> list[str]:
    _READ_OR_REMOVED[0] = bool(added or changed or removed)
    return []


def _note_read(_app: Sphinx, _env: BuildEnvironment, docnames: list[str]) -> None:
    _READ_OR_REMOVED[0] = _READ_OR_REMOVED[0] or bool(docnames)


def _number_figures_when_pages_changed() -> None:
    from sphinx.environment.collectors.toctree import TocTreeCollector

    number = TocTreeCollector.assign_figure_numbers

    def assign_figure_numbers(self: TocTreeCollector, env: BuildEnvironment) -> list[str]:
        return number(self, env) if _READ_OR_REMOVED[0] else []

    TocTreeCollector.assign_figure_numbers = assign_figure_numbers  # type: ignore[method-assign]


# -- Doctrees without a copy of the environment --------------------------------------------
# MyST parses an {eval-rst} block (the API pages' automodules) into a document of its own that
# shares the page's settings, then moves the nodes into the page, each still naming that
# document as its own. Sphinx pickles a doctree with a copy of its settings whose env is
# cleared, but the other document's settings still held the whole BuildEnvironment, so every
# API page's doctree carried a copy of it: 1.7 MB for a page of six modules, unpickled again
# whenever Sphinx reads every doctree. Once a page is read, its nodes name the page's document.


def _nodes_name_their_page(_app: Sphinx, doctree: nodes.document) -> None:
    for node in doctree.findall(include_self=False):
        if vars(node).get("_document") not in (None, doctree):
            node.document = doctree


def setup(app: Sphinx) -> None:
    app.connect("doctree-resolved", _status_as_words)
    app.connect("doctree-read", _nodes_name_their_page)
    app.connect("env-get-outdated", _note_removed)
    app.connect("env-before-read-docs", _note_read, priority=400)  # before any page is taken
    app.connect("env-before-read-docs", _measuring_pages_first)
    _number_figures_when_pages_changed()
    # sphinx-mathjax-offline (0.0.2) only copies MathJax into _static when the build has
    # finished, so reading and writing in parallel cannot disturb it; it just never says so,
    # and Sphinx would read serially with a warning (an error under -W).
    mathjax = app.extensions["sphinx-mathjax-offline"]
    mathjax.parallel_read_safe = mathjax.parallel_write_safe = True
