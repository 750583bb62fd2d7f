"""Sphinx glue for the what-if panels (the generator itself is gpuconcepts.whatif).

``{whatif} NAME`` puts a panel's placeholder into a page. At the end of the build the panels'
script is generated from the formulas into ``_static``, and only the pages with a panel load it
(before MathJax, so that MathJax's first pass typesets the panel's math too).

The generator (sympy and the formulas) is imported only when a panel is read or the script is
written, and the script is written again only when the package changed (``whatif_key``, the
package's hash, set by conf.py): a rebuild that reads no page imports neither.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

from gpuconcepts.files import write_atomic

_MARK = 'class="gc-whatif"'
_STAMP = "whatif.key"
"""Beside the doctrees (never served): the key and the name of the script last written."""


class WhatIf(SphinxDirective):
    """``{whatif} mlp``: the what-if panel called ``mlp`` (see gpuconcepts.whatif.PANELS)."""

    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        from gpuconcepts import whatif

        return [nodes.raw("", whatif.panel_html(self.arguments[0]), format="html")]


def _load_on_panel_pages(
    app: Sphinx, _pagename: str, _template: str, context: dict[str, Any], _doctree: Any
) -> None:
    if _MARK in context.get("body", ""):
        from gpuconcepts import whatif

        context["has_maths_elements"] = True  # the panel's math needs MathJax on any page
        app.add_js_file(whatif.FILENAME, priority=400, defer="defer")
        app.add_css_file("whatif.css")


def _write_script(app: Sphinx, error: Exception | None) -> None:
    if error is not None or app.builder.format != "html":
        return
    static = Path(app.outdir) / "_static"
    stamp = Path(app.doctreedir) / _STAMP
    key = app.config.whatif_key
    if key and stamp.is_file():
        written_key, _, name = stamp.read_text(encoding="utf-8").partition(" ")
        if written_key == key and (static / name).is_file():
            return
    from gpuconcepts import whatif

    write_atomic(static / whatif.FILENAME, whatif.javascript())
    write_atomic(stamp, f"{key} {whatif.FILENAME}")


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("whatif", WhatIf)
    app.add_config_value("whatif_key", "", "html", types=[str])
    # Before sphinx.ext.mathjax (priority 500) reads has_maths_elements.
    app.connect("html-page-context", _load_on_panel_pages, priority=400)
    app.connect("build-finished", _write_script)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
