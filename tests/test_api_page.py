"""The API reference (docs/api.md and one page per layer) documents every public module of
gpuconcepts, and only modules that exist, each on the page of its layer of ARCHITECTURE.md.

The rule: a *public module* is every module and package under ``src/gpuconcepts`` whose dotted
name has no part starting with an underscore (so ``kernels._common`` and every ``__main__`` are
out), except the modules inside two packages that the reference documents as one group each,
by the package's own docstring: ``gpuconcepts.cli`` (one module per command, documented by
``gpuconcepts COMMAND --help``) and ``gpuconcepts.render.pages`` (one module per book page: the
values that page's cells glue, shown on the page itself). The two packages themselves are
public modules. Each public module must be named by an ``.. automodule::`` directive, each
directive must name a module that exists, and each sits on the page of its layer (``LAYERS``
of tests/test_imports.py: :data:`LAYER_PAGES`, or :data:`SECOND_PAGES`) so that a moved module
is moved in the reference too; the package itself, which re-exports from every layer, is on
docs/api.md. A
module with an ``__all__`` is documented with ``:ignore-module-all:``, so that each member is
documented at its home only.

The reference was one page until it grew past 3 MB of HTML; a page per layer (two for the
values) keeps each under 1 MB, to load and to rebuild.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from test_imports import LAYERS

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
DOCS = ROOT / "docs"

INDEX = "api.md"
"""The reference's first page: the package itself, the catalogue, the symbols, the workloads,
and the table of contents of the layers' pages."""

LAYER_PAGES = {
    "values": "api-values.md",
    "measure": "api-measure.md",
    "experiments": "api-experiments.md",
    "judging": "api-judging.md",
    "render": "api-render.md",
    "top": "api-top.md",
}
"""Each layer of ``LAYERS`` → the page of docs/ that documents its modules."""

SECOND_PAGES = {"api-values-results.md": ("measurement", "results", "roofline", "run", "sweeps")}
"""Pages that hold some of one layer's top-level modules, off the layer's own page. The values
on one page made more than 1 MB of HTML, so those that hold what was measured (the measured
values, the roofline model, the results and the Run) have a page of their own."""

PAGES = (
    "api-values.md",
    "api-values-results.md",
    "api-measure.md",
    "api-experiments.md",
    "api-judging.md",
    "api-render.md",
    "api-top.md",
)
"""The layers' pages bottom up, a second page after its layer's own, as the index lists them."""

GROUPED = ("gpuconcepts.cli", "gpuconcepts.render.pages")
"""Packages documented as one group, by their own docstring: their modules are not listed."""

_AUTOMODULE = re.compile(r"^\s*\.\. automodule:: (\S+)\s*$", re.MULTILINE)


def api_pages(docs: Path = DOCS) -> dict[str, str]:
    """The reference's pages, file name → text: the index, then the layers' bottom up."""
    return {name: (docs / name).read_text("utf-8") for name in (INDEX, *PAGES)}


def all_modules(src: Path) -> set[str]:
    """Every module and package under ``src/gpuconcepts``, by dotted name."""
    names = set()
    for path in (src / "gpuconcepts").rglob("*.py"):
        parts = path.relative_to(src).with_suffix("").parts
        names.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def public_modules(src: Path) -> set[str]:
    """The modules the reference must document (the rule of this file's docstring)."""
    return {
        name
        for name in all_modules(src)
        if not any(part.startswith("_") for part in name.split("."))
        and not any(name.startswith(group + ".") for group in GROUPED)
    }


def documented(page: str) -> list[str]:
    """The modules a page's ``.. automodule::`` directives name, in page order."""
    return _AUTOMODULE.findall(page)


def on_pages(pages: Mapping[str, str]) -> list[str]:
    """The modules every page of ``pages`` names, page after page."""
    return [name for text in pages.values() for name in documented(text)]


def misplaced(pages: Mapping[str, str]) -> list[str]:
    """Each automodule not on its layer's page, as ``module (on 'X', not 'Y')``."""
    home = {
        f"gpuconcepts.{top}": LAYER_PAGES[layer] for layer, tops in LAYERS.items() for top in tops
    }
    home |= {f"gpuconcepts.{top}": page for page, tops in SECOND_PAGES.items() for top in tops}
    home["gpuconcepts"] = INDEX  # the root re-exports from every layer: the reference's first
    wrong = []
    for page, text in pages.items():
        for name in documented(text):
            want = home.get(".".join(name.split(".")[:2]), page)  # unplaced: test_imports' job
            if page != want:
                wrong.append(f"{name} (on {page!r}, not {want!r})")
    return wrong


def rendered_values(module_name: str) -> Iterator[tuple[str, object]]:
    """(qualified name, value) of each attribute whose value autodoc prints with it: a public
    assignment at a module's or a class's top level with a docstring below it (or ``#:``
    comments above it), unless that docstring says ``:meta hide-value:``. Read from the source
    with ast, so the check needs no Sphinx."""
    module = importlib.import_module(module_name)
    source = inspect.getsource(module)
    lines = source.splitlines()

    def walk(body: list[ast.stmt], owner: object, prefix: str) -> Iterator[tuple[str, object]]:
        for index, node in enumerate(body):
            if isinstance(node, ast.ClassDef) and owner is module:
                yield from walk(node.body, getattr(module, node.name, None), node.name + ".")
                continue
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                targets = [node.target]
            else:
                continue
            after = body[index + 1] if index + 1 < len(body) else None
            doc = ""
            if isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant):
                doc = str(after.value.value)
            comments = lines[node.lineno - 2] if node.lineno > 1 else ""
            if not doc and not comments.strip().startswith("#:"):
                continue  # undocumented: autodoc leaves it out
            if ":meta hide-value:" in doc:
                continue
            for target in targets:
                name = getattr(target, "id", "_")
                if not name.startswith("_") and hasattr(owner, name):
                    yield f"{module_name}.{prefix}{name}", getattr(owner, name)

    yield from walk(ast.parse(source).body, module, "")


def test_every_public_module_is_in_the_reference() -> None:
    missing = sorted(public_modules(SRC) - set(on_pages(api_pages())))
    assert missing == [], "add an automodule for each, on its layer's page"


def test_every_automodule_names_a_module_that_exists() -> None:
    gone = sorted(set(on_pages(api_pages())) - all_modules(SRC))
    assert gone == [], "drop or rename each automodule whose module moved"


def test_each_module_is_documented_once_on_its_layer_s_page() -> None:
    names = on_pages(api_pages())
    assert sorted({n for n in names if names.count(n) > 1}) == []
    assert misplaced(api_pages()) == []


def test_the_index_lists_every_layer_s_page() -> None:
    toctree = re.search(r"```\{toctree\}\n(.*?)```", api_pages()[INDEX], re.DOTALL)
    assert toctree is not None
    listed = [line.strip() for line in toctree.group(1).splitlines() if line.strip()]
    assert tuple(f"{p}.md" for p in listed if not p.startswith(":")) == PAGES


def test_a_second_page_holds_part_of_one_layer() -> None:
    layer_of = {top: layer for layer, tops in LAYERS.items() for top in tops}
    for page, tops in SECOND_PAGES.items():
        layers = {layer_of[top] for top in tops}
        assert len(layers) == 1, f"{page} mixes the layers {sorted(layers)}"
        first = LAYER_PAGES[layers.pop()]
        assert PAGES.index(page) > PAGES.index(first), f"{page} comes after {first}"
    assert set(PAGES) == {*LAYER_PAGES.values(), *SECOND_PAGES}


def reexported_everywhere(page: str, src: Path) -> list[str]:
    """The automodules of modules with an ``__all__`` that lack ``:ignore-module-all:``.

    autodoc documents every name of ``__all__``, a re-exported one too, so a class would be
    documented at its home and again at each package that re-exports it (and a reference to it
    would be ambiguous); ``:ignore-module-all:`` keeps each member at its home only.
    """
    found = re.findall(r"^\s*\.\. automodule:: (\S+)\n((?:\s+:.*\n)*)", page, re.MULTILINE)
    lacking = []
    for name, options in found:
        path = src / Path(*name.split("."))
        path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
        uses_all = path.exists() and re.search(r"\b__all__\b", path.read_text())
        if uses_all and ":ignore-module-all:" not in options:
            lacking.append(name)
    return lacking


def test_each_member_is_documented_at_its_home_only() -> None:
    assert [m for text in api_pages().values() for m in reexported_everywhere(text, SRC)] == []


def test_the_checks_fail_on_a_planted_tree(tmp_path: Path) -> None:
    package = tmp_path / "gpuconcepts"
    planted = ("__init__.py", "units.py", "lab.py", "_private.py", "__main__.py")
    planted += ("cli/__init__.py", "cli/profile.py", "kernels/__init__.py", "kernels/_x.py")
    for file in planted:
        (package / file).parent.mkdir(parents=True, exist_ok=True)
        (package / file).write_text("")
    pages = {
        INDEX: ".. automodule:: gpuconcepts.kernels\n",
        "api-values.md": ".. automodule:: gpuconcepts.units\n\n.. automodule:: gpuconcepts.lab\n",
        "api-top.md": ".. automodule:: gpuconcepts.cli\n\n.. automodule:: gpuconcepts.gone\n",
    }
    public = public_modules(tmp_path)
    assert public == {
        "gpuconcepts",
        "gpuconcepts.units",
        "gpuconcepts.lab",
        "gpuconcepts.cli",
        "gpuconcepts.kernels",
    }
    assert sorted(public - set(on_pages(pages))) == ["gpuconcepts"]
    assert sorted(set(on_pages(pages)) - all_modules(tmp_path)) == ["gpuconcepts.gone"]
    (package / "kernels" / "__init__.py").write_text('__all__ = ["lab"]\n')
    assert reexported_everywhere(pages[INDEX], tmp_path) == ["gpuconcepts.kernels"]
    fixed = pages[INDEX].replace("kernels\n", "kernels\n   :ignore-module-all:\n")
    assert reexported_everywhere(fixed, tmp_path) == []
    assert misplaced(pages) == [
        "gpuconcepts.kernels (on 'api.md', not 'api-experiments.md')",
        "gpuconcepts.lab (on 'api-values.md', not 'api-experiments.md')",
    ]


def test_rendered_values_are_the_documented_shown_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "planted_values.py").write_text(
        'SHOWN = {"a": 1}\n"""Shown with its value."""\n\n'
        'HIDDEN = 2\n"""Hidden.\n\n:meta hide-value:\n"""\n\n'
        "BARE = 3\n\n#: Shown too.\nCOMMENTED = 4\n_PRIVATE = 5\n'''Private.'''\n\n\n"
        'class K:\n    size: int = 6\n    """Shown."""\n\n    name: str\n    """No value."""\n'
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "planted_values", raising=False)
    assert dict(rendered_values("planted_values")) == {
        "planted_values.SHOWN": {"a": 1},
        "planted_values.COMMENTED": 4,
        "planted_values.K.size": 6,
    }
