"""No import cycles in src/, and every import points down the layers (:data:`LAYERS`).

Every import counts: at load, inside a function, or under ``if TYPE_CHECKING`` (a type-only
import is still a dependency of the design, and the next refactor makes it a real one).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def _module(path: Path, root: Path) -> str:
    name = ".".join(path.relative_to(root).with_suffix("").parts)
    return name.removesuffix(".__init__")


def _lazy(path: Path) -> bool:
    """Whether a package's ``__init__`` re-exports lazily (PEP 562: a module ``__getattr__``,
    defined there or made by :func:`gpuconcepts.lazy.reexports`)."""
    tree = ast.parse(path.read_text())
    defined = (i.name for i in tree.body if isinstance(i, ast.FunctionDef))
    assigned = (
        n.id
        for i in tree.body
        if isinstance(i, ast.Assign)
        for target in i.targets
        for n in ast.walk(target)
        if isinstance(n, ast.Name)
    )
    return "__getattr__" in {*defined, *assigned}


def _reexports(path: Path) -> dict[str, str]:
    """A lazy package's names → the module each comes from (its ``TYPE_CHECKING`` imports)."""
    checking = [
        node
        for node in ast.parse(path.read_text()).body
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
    ]
    return {
        alias.asname or alias.name: item.module
        for block in checking
        for item in ast.walk(block)
        if isinstance(item, ast.ImportFrom) and (item.module or "").startswith("gpuconcepts")
        for alias in item.names
    }


def _imports(
    path: Path, modules: set[str], lazy: dict[str, dict[str, str]] | None = None
) -> set[str]:
    """Every gpuconcepts module ``path`` imports, anywhere in it, each with the packages above
    it (importing ``a.b.c`` runs ``a.b``'s ``__init__`` first); a name of a lazy package is
    the module it comes from (importing the package alone loads nothing)."""
    lazy = lazy or {}
    found: set[str] = set()
    for item in ast.walk(ast.parse(path.read_text())):
        if isinstance(item, ast.ImportFrom) and (item.module or "").startswith("gpuconcepts"):
            assert item.module is not None
            for alias in item.names:
                full = f"{item.module}.{alias.name}"
                home = lazy.get(item.module, {}).get(alias.name)
                found.add(full if full in modules else home or item.module)
        elif isinstance(item, ast.Import):
            found |= {a.name for a in item.names if a.name.startswith("gpuconcepts")}
    with_parents = set(found)
    for name in found:
        parts = name.split(".")
        with_parents |= {".".join(parts[:i]) for i in range(2, len(parts))}
    return with_parents


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module → the modules it imports, for every module under ``root/gpuconcepts``; a
    package's own parts importing the package are left out (Python runs the package first),
    and so are a lazy package's re-exports (each counts where its name is imported)."""
    paths = {_module(p, root): p for p in (root / "gpuconcepts").rglob("*.py")}
    names = set(paths)
    lazy = {
        name: _reexports(path)
        for name, path in paths.items()
        if path.name == "__init__.py" and _lazy(path)
    }
    return {
        name: set()
        if name in lazy
        else {
            d
            for d in _imports(path, names, lazy)
            if d in names and d != name and not name.startswith(d + ".")
        }
        for name, path in paths.items()
    }


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each cycle found by a depth-first walk, as the modules around it."""
    found: list[list[str]] = []
    done: set[str] = set()

    def visit(name: str, trail: list[str]) -> None:
        if name in trail:
            found.append([*trail[trail.index(name) :], name])
            return
        if name in done:
            return
        for dep in sorted(graph[name]):
            visit(dep, [*trail, name])
        done.add(name)

    for name in sorted(graph):
        visit(name, [])
    return found


LAYERS: dict[str, tuple[str, ...]] = {
    "values": (
        "attention",
        "changelog",
        "errors",
        "exercises",
        "expressions",
        "files",
        "formula",
        "formula_inputs",
        "formulas",
        "hardware",
        "lazy",
        "measurement",
        "model",
        "questions",
        "records",
        "results",
        "roofline",
        "run",
        "size_expressions",
        "sweeps",
        "symbols",
        "tables",
        "units",
        "words",
        "workloads",
    ),
    "measure": ("machine", "measure", "sizes", "sizing"),
    "experiments": ("analysis", "distributed", "kernels", "lab", "peaks_cache"),
    "judging": ("claims",),
    "render": ("book_runs", "render", "whatif", "whatif_js", "whatif_panels"),
    "top": ("__main__", "analyze", "book", "book_config", "cli", "collect", "verify"),
}
"""Every module and package of gpuconcepts in its layer, bottom up (issue 47, ARCHITECTURE.md):
values; measuring (the timers and probes, and the sizes a run takes on this machine); the
kernels and experiments that measure through them; judging; rendering; the commands and the
book on top. A module imports only from its own layer or the ones below; a new module is
placed here first."""


def _top(module: str) -> str:
    """The module or package of gpuconcepts that ``module`` belongs to: ``run`` for
    ``gpuconcepts.run.run``, ``collect`` for ``gpuconcepts.collect``."""
    return module.split(".")[1]


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The module graph folded onto gpuconcepts' top-level modules and packages (the root
    package, which re-exports from every layer, left out)."""
    folded: dict[str, set[str]] = {}
    for name, deps in graph.items():
        if name == "gpuconcepts":
            continue
        here = folded.setdefault(_top(name), set())
        here |= {_top(d) for d in deps if d != "gpuconcepts" and _top(d) != _top(name)}
    return folded


def test_every_module_is_in_one_layer() -> None:
    placed = [name for names in LAYERS.values() for name in names]
    assert len(placed) == len(set(placed)), "a module is in two layers"
    found = set(package_graph(import_graph(SRC)))
    assert sorted(found - set(placed)) == [], "place each new module in LAYERS"
    assert sorted(set(placed) - found) == [], "drop each module that is gone from LAYERS"


def upward_imports(graph: dict[str, set[str]], layers: dict[str, tuple[str, ...]]) -> list[str]:
    """Each import of ``graph`` from a module to one in a higher layer of ``layers``."""
    rank = {name: i for i, names in enumerate(layers.values()) for name in names}
    layer = {name: key for key, names in layers.items() for name in names}
    return sorted(
        f"{name} ({layer[_top(name)]}) -> {dep} ({layer[_top(dep)]})"
        for name, deps in graph.items()
        if name != "gpuconcepts"
        for dep in deps
        if dep != "gpuconcepts" and rank[_top(dep)] > rank[_top(name)]
    )


def test_every_import_points_down_the_layers() -> None:
    found = upward_imports(import_graph(SRC), LAYERS)
    assert found == [], "\n".join(found)


def test_a_planted_upward_import_is_found(tmp_path: Path) -> None:
    package = tmp_path / "gpuconcepts"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "value.py").write_text(
        "def f():\n    from gpuconcepts import page\n    return page\n"
    )
    (package / "page.py").write_text("from gpuconcepts import value\n")
    layers = {"values": ("value",), "render": ("page",)}
    assert upward_imports(import_graph(tmp_path), layers) == [
        "gpuconcepts.value (values) -> gpuconcepts.page (render)"
    ]
    assert upward_imports(import_graph(tmp_path), {"render": ("page", "value")}) == []  # one layer


def test_the_packages_import_each_other_without_a_cycle() -> None:
    found = cycles(package_graph(import_graph(SRC)))
    assert found == [], " ; ".join(" -> ".join(c) for c in found)


def test_a_planted_package_cycle_is_found(tmp_path: Path) -> None:
    # no module cycle: a.x imports b.y, and b.z imports a.w (inside a function); the packages
    # a and b still import each other
    package = tmp_path / "gpuconcepts"
    for sub in ("a", "b"):
        (package / sub).mkdir(parents=True)
        (package / sub / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "a" / "x.py").write_text("from gpuconcepts.b import y\n")
    (package / "a" / "w.py").write_text("")
    (package / "b" / "y.py").write_text("")
    (package / "b" / "z.py").write_text("def f():\n    from gpuconcepts.a import w\n    return w\n")
    graph = import_graph(tmp_path)
    assert cycles(graph) == []
    assert package_graph(graph) == {"a": {"b"}, "b": {"a"}}
    assert cycles(package_graph(graph)) == [["a", "b", "a"]]


def test_no_import_cycles_in_src() -> None:
    graph = import_graph(SRC)
    found = cycles(graph)
    assert found == [], " ; ".join(" -> ".join(c) for c in found)
    measuring = {name for name in graph if name.split(".")[:2] == ["gpuconcepts", "measure"]}
    # the package and devices, memory, timing, noise, hierarchy, physical (the CPU's FMA table)
    assert len(measuring) == 7
    # where DRAM begins is read from a sweep's numbers: no torch, no probe of the machine
    assert graph["gpuconcepts.measure.hierarchy"] & measuring == set()
    for name in measuring:  # measuring knows no model
        assert "gpuconcepts.roofline" not in graph[name], name
    # the value sits below the timers that fill it and the probes beside them
    assert graph["gpuconcepts.measurement"] & measuring == set()
    # the model draws nothing and reads no datasheet (hardware imports it, not the reverse)
    assert "gpuconcepts.hardware" not in graph["gpuconcepts.roofline"]
    assert not any(d.startswith("gpuconcepts.render") for d in graph["gpuconcepts.roofline"])
    # collecting a run sits above the Run value; values sit below whatever renders them
    for value in ("gpuconcepts.run.run", "gpuconcepts.run.provenance"):
        assert "gpuconcepts.collect" not in graph[value], value
    values = [
        *measuring,
        "gpuconcepts.run.run",
        "gpuconcepts.run.provenance",
        "gpuconcepts.roofline",
        "gpuconcepts.lab",
        "gpuconcepts.results.claim",
    ]
    for name in values:
        assert not any(d.startswith("gpuconcepts.render") for d in graph[name]), name
    # the package's namespace holds text and Markdown only: the plots import the packages
    # they draw (distributed), and those import render for their text
    assert not any(d.startswith("gpuconcepts.render.plots") for d in graph["gpuconcepts.render"])
    # the analysis reads Peaks and the placement rule as they are; its values sit below the
    # passes that fill them, and nothing in it reaches up to the command line
    analysis = {name for name in graph if name.startswith("gpuconcepts.analysis")}
    assert {n.rpartition(".")[2] for n in analysis} >= {"trace", "layers", "timing", "report"}
    assert graph["gpuconcepts.analysis.report"] & analysis == {"gpuconcepts.analysis.values"}
    assert graph["gpuconcepts.analysis.values"] & analysis == set()  # the report's parts
    assert graph["gpuconcepts.analysis.layers"] & analysis == {"gpuconcepts.analysis.report"}
    for name in analysis:
        assert "gpuconcepts.cli" not in graph[name], name
        assert "gpuconcepts.analyze" not in graph[name], name  # the re-export sits on top
    assert graph["gpuconcepts.analyze"] == {"gpuconcepts.analysis"}
    importers = {name for name, deps in graph.items() if "gpuconcepts.book" in deps}
    assert importers == set()  # the library never imports the book's helpers


def test_a_planted_cycle_is_found(tmp_path: Path) -> None:
    # a function-level import and a type-only import close a circle: both count
    package = tmp_path / "gpuconcepts"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("def f():\n    from gpuconcepts.b import g\n    return g\n")
    (package / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from gpuconcepts import a\n"
    )
    (package / "c.py").write_text("import gpuconcepts.a\n")
    graph = import_graph(tmp_path)
    assert graph["gpuconcepts.a"] == {"gpuconcepts.b"}
    assert cycles(graph) == [["gpuconcepts.a", "gpuconcepts.b", "gpuconcepts.a"]]


def test_the_run_value_loads_no_measuring_or_judging_module() -> None:
    # issue 47: reading a saved run needs no kernel, lab, claim, distributed or analysis module
    code = (
        "import sys, gpuconcepts.run.run\n"
        "print(sorted(m for m in sys.modules if m.startswith('gpuconcepts')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = eval(out.stdout)  # a list of names, printed by the line above
    above = ("claims", "kernels", "lab", "distributed", "analysis")
    found = [m for m in loaded if m.split(".")[1:2] and m.split(".")[1] in above]
    assert found == [], found


def test_a_lazy_package_says_its_names_twice_alike() -> None:
    import importlib

    # every lazy package but the root, whose one lazy name is the module gpuconcepts.analyze
    root = SRC / "gpuconcepts" / "__init__.py"
    inits = sorted(p for p in root.parent.rglob("__init__.py") if _lazy(p) and p != root)
    packages = [_module(p, SRC) for p in inits]
    assert {"gpuconcepts.run", "gpuconcepts.measure", "gpuconcepts.claims"} <= set(packages)
    for init, name in zip(inits, packages, strict=True):
        package = importlib.import_module(name)
        declared = {n: m for m, names in package.EXPORTS.items() for n in names}
        assert declared == _reexports(init), name
        for export, module in declared.items():
            assert getattr(package, export) is getattr(importlib.import_module(module), export)
