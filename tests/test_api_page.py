"""The API page (docs/api.md) documents every public module of gpuconcepts, and only modules
that exist, grouped by the layers of ARCHITECTURE.md.

The rule: a *public module* is every module and package under ``src/gpuconcepts`` whose dotted
name has no part starting with an underscore (so ``kernels._common`` and every ``__main__`` are
out), except the modules inside two packages that the page documents as one group each, by
the package's own docstring: ``gpuconcepts.cli`` (one module per command, documented by
``gpuconcepts COMMAND --help``) and ``gpuconcepts.render.pages`` (one module per book page: the
values that page's cells glue, shown on the page itself). The two packages themselves are
public modules. Each public module must be named by an ``.. automodule::`` directive, each
directive must name a module that exists, and each sits under the heading of its layer
(``LAYERS`` of tests/test_imports.py) so that a moved module is moved on the page too. A
module with an ``__all__`` is documented with ``:ignore-module-all:``, so that each member is
documented at its home only.
"""

from __future__ import annotations

import re
from pathlib import Path

from test_imports import LAYERS

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
API_PAGE = ROOT / "docs" / "api.md"

GROUPED = ("gpuconcepts.cli", "gpuconcepts.render.pages")
"""Packages documented as one group, by their own docstring: their modules are not listed."""

LAYER_HEADINGS = {
    "values": "Values",
    "measure": "Measure",
    "experiments": "Kernels and experiments",
    "judging": "Judging",
    "render": "Render",
    "top": "Top",
}
"""Each layer of ``LAYERS`` → the page's ``##`` heading over its modules."""

_AUTOMODULE = re.compile(r"^\s*\.\. automodule:: (\S+)\s*$", re.MULTILINE)
_HEADING = re.compile(r"^## (.+)$", re.MULTILINE)


def all_modules(src: Path) -> set[str]:
    """Every module and package under ``src/gpuconcepts``, by dotted name."""
    names = set()
    for path in (src / "gpuconcepts").rglob("*.py"):
        parts = path.relative_to(src).with_suffix("").parts
        names.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def public_modules(src: Path) -> set[str]:
    """The modules the page must document (the rule of this file's docstring)."""
    return {
        name
        for name in all_modules(src)
        if not any(part.startswith("_") for part in name.split("."))
        and not any(name.startswith(group + ".") for group in GROUPED)
    }


def documented(page: str) -> list[str]:
    """The modules the page's ``.. automodule::`` directives name, in page order."""
    return _AUTOMODULE.findall(page)


def misplaced(page: str) -> list[str]:
    """Each automodule not under its layer's heading, as ``module (under 'X', not 'Y')``."""
    home = {
        f"gpuconcepts.{top}": LAYER_HEADINGS[layer]
        for layer, tops in LAYERS.items()
        for top in tops
    }
    home["gpuconcepts"] = "no heading"  # the root re-exports from every layer: the page's top
    wrong = []
    for section in re.split(r"(?=^## )", page, flags=re.MULTILINE):
        heading = _HEADING.match(section)
        here = heading.group(1) if heading else "no heading"
        for name in documented(section):
            want = home.get(".".join(name.split(".")[:2]), here)  # unplaced: test_imports' job
            if here != want:
                wrong.append(f"{name} (under {here!r}, not {want!r})")
    return wrong


def test_every_public_module_is_on_the_api_page() -> None:
    missing = sorted(public_modules(SRC) - set(documented(API_PAGE.read_text())))
    assert missing == [], "add an automodule for each, under its layer's heading"


def test_every_automodule_names_a_module_that_exists() -> None:
    gone = sorted(set(documented(API_PAGE.read_text())) - all_modules(SRC))
    assert gone == [], "drop or rename each automodule whose module moved"


def test_each_module_is_documented_once_under_its_layer() -> None:
    names = documented(API_PAGE.read_text())
    assert sorted({n for n in names if names.count(n) > 1}) == []
    assert misplaced(API_PAGE.read_text()) == []


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
    assert reexported_everywhere(API_PAGE.read_text(), SRC) == []


def test_the_checks_fail_on_a_planted_tree(tmp_path: Path) -> None:
    package = tmp_path / "gpuconcepts"
    planted = ("__init__.py", "units.py", "lab.py", "_private.py", "__main__.py")
    planted += ("cli/__init__.py", "cli/profile.py", "kernels/__init__.py", "kernels/_x.py")
    for file in planted:
        (package / file).parent.mkdir(parents=True, exist_ok=True)
        (package / file).write_text("")
    page = (
        ".. automodule:: gpuconcepts.kernels\n\n"
        "## Values\n\n.. automodule:: gpuconcepts.units\n\n.. automodule:: gpuconcepts.lab\n\n"
        "## Top\n\n.. automodule:: gpuconcepts.cli\n\n.. automodule:: gpuconcepts.gone\n"
    )
    public = public_modules(tmp_path)
    assert public == {
        "gpuconcepts",
        "gpuconcepts.units",
        "gpuconcepts.lab",
        "gpuconcepts.cli",
        "gpuconcepts.kernels",
    }
    assert sorted(public - set(documented(page))) == ["gpuconcepts"]
    assert sorted(set(documented(page)) - all_modules(tmp_path)) == ["gpuconcepts.gone"]
    (package / "kernels" / "__init__.py").write_text('__all__ = ["lab"]\n')
    assert reexported_everywhere(page, tmp_path) == ["gpuconcepts.kernels"]
    fixed = page.replace("kernels\n", "kernels\n   :ignore-module-all:\n")
    assert reexported_everywhere(fixed, tmp_path) == []
    assert misplaced(page) == [
        "gpuconcepts.kernels (under 'no heading', not 'Kernels and experiments')",
        "gpuconcepts.lab (under 'Values', not 'Kernels and experiments')",
    ]
