"""No import cycles in src/: measuring, analysis and rendering import each other one way only."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def _module(path: Path) -> str:
    name = ".".join(path.relative_to(SRC).with_suffix("").parts)
    return name.removesuffix(".__init__")


def _imports_at_load(path: Path, modules: set[str]) -> set[str]:
    """The gpuconcepts modules ``path`` imports when it is loaded (not inside functions, not
    under ``if TYPE_CHECKING``), each with the packages above it."""
    found: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        for item in ast.walk(node):
            if isinstance(item, ast.ImportFrom) and (item.module or "").startswith("gpuconcepts"):
                assert item.module is not None
                for alias in item.names:
                    full = f"{item.module}.{alias.name}"
                    found.add(full if full in modules else item.module)
            elif isinstance(item, ast.Import):
                found |= {a.name for a in item.names if a.name.startswith("gpuconcepts")}
    with_parents = set(found)
    for name in found:
        parts = name.split(".")
        with_parents |= {".".join(parts[:i]) for i in range(2, len(parts))}
    return with_parents


def test_no_import_cycles_in_src() -> None:
    paths = {_module(p): p for p in (SRC / "gpuconcepts").rglob("*.py")}
    names = set(paths)
    graph = {
        name: {
            d
            for d in _imports_at_load(path, names)
            if d in names and d != name and not name.startswith(d + ".")  # a package's own parts
        }
        for name, path in paths.items()
    }
    cycles: list[list[str]] = []
    done: set[str] = set()

    def visit(name: str, trail: list[str]) -> None:
        if name in trail:
            cycles.append([*trail[trail.index(name) :], name])
            return
        if name in done:
            return
        for dep in sorted(graph[name]):
            visit(dep, [*trail, name])
        done.add(name)

    for name in sorted(graph):
        visit(name, [])
    assert cycles == [], " ; ".join(" -> ".join(c) for c in cycles)
    assert "gpuconcepts.roofline" not in graph["gpuconcepts.measure"]  # measuring knows no model
    assert "gpuconcepts.book" not in {d for deps in graph.values() for d in deps} - {
        "gpuconcepts.book"
    }  # the library never imports the book's helpers
