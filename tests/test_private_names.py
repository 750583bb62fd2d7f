"""No module of the library imports another module's private names (issue 47, item 5).

A name that starts with ``_`` belongs to its module: another module that needs it asks for a
public name, or the helper moves where both can use it. Checked over the source's syntax: every
``from X import _name`` and every ``X._name`` where X is another module of the package.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "gpuconcepts"


def module_name(path: Path, root: Path = SRC) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def reaches(path: Path, root: Path = SRC) -> Iterator[str]:
    """Each reach of the module at ``path`` (under ``root``) into another module's private names."""
    here = module_name(path, root)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    modules: dict[str, str] = {}  # local name -> a gpuconcepts module it is bound to
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if not node.module.startswith("gpuconcepts"):
                continue
            for alias in node.names:
                if node.module != here and private(alias.name):
                    yield f"{here}:{node.lineno}: from {node.module} import {alias.name}"
                modules[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("gpuconcepts"):
                    modules[alias.asname or alias.name.split(".")[0]] = alias.name
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and private(node.attr)
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
            and modules[node.value.id] != here
        ):
            yield f"{here}:{node.lineno}: {node.value.id}.{node.attr}"


def test_no_module_imports_another_modules_private_names() -> None:
    found = [reach for path in sorted(PACKAGE.rglob("*.py")) for reach in reaches(path)]
    assert found == []


def test_a_planted_reach_is_found(tmp_path: Path) -> None:
    planted = tmp_path / "gpuconcepts" / "planted.py"
    planted.parent.mkdir()
    planted.write_text(
        "from gpuconcepts.units import _hidden, shown\n"
        "from gpuconcepts import units\n"
        "units._other, units.__name__, _own\n"
    )
    assert list(reaches(planted, tmp_path)) == [
        "gpuconcepts.planted:1: from gpuconcepts.units import _hidden",
        "gpuconcepts.planted:3: units._other",
    ]
