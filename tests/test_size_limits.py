"""Size limits for all of src (issue 47, item 4): every file at most 400 lines, every function
at most 60 (decorators, signature and docstring included; a method counts as its own function,
named Class.method, and a nested function as outer.inner).

The allow-lists hold what was over a limit when the rule came, and may only shrink: the test
fails when a file or function not listed goes over its limit, and when a listed one is now
within it (or gone), so the list loses it. Nothing is ever added to them.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

MAX_FILE_LINES = 400
MAX_FUNCTION_LINES = 60

FILES_OVER: frozenset[str] = frozenset()
"""Files over 400 lines, each to be split; the list only shrinks."""

FUNCTIONS_OVER: frozenset[str] = frozenset()
"""Functions over 60 lines (file:qualified name), each to be split; the list only shrinks."""


def _functions(node: ast.AST, prefix: str = "") -> Iterator[tuple[str, int]]:
    """Each function under ``node`` with its qualified name and its length in lines."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
            name = prefix + child.name
            start = min([child.lineno, *(d.lineno for d in child.decorator_list)])
            yield name, (child.end_lineno or child.lineno) - start + 1
            yield from _functions(child, name + ".")
        elif isinstance(child, ast.ClassDef):
            yield from _functions(child, prefix + child.name + ".")
        else:
            yield from _functions(child, prefix)


def sizes(root: Path = SRC) -> tuple[dict[str, int], dict[str, int]]:
    """Every file of ``root`` over the file limit and every function over the function limit,
    with their lengths."""
    files: dict[str, int] = {}
    functions: dict[str, int] = {}
    for path in sorted(root.rglob("*.py")):
        name = path.relative_to(root).as_posix()
        text = path.read_text(encoding="utf-8")
        if (lines := len(text.splitlines())) > MAX_FILE_LINES:
            files[name] = lines
        for function, length in _functions(ast.parse(text)):
            if length > MAX_FUNCTION_LINES:
                functions[f"{name}:{function}"] = length
    return files, functions


def test_no_new_file_over_400_lines_and_the_allow_list_only_shrinks() -> None:
    files, _ = sizes()
    assert sorted(set(files) - FILES_OVER) == [], "new files over 400 lines: split them"
    assert sorted(FILES_OVER - set(files)) == [], "within the limit now: remove from FILES_OVER"


def test_no_new_function_over_60_lines_and_the_allow_list_only_shrinks() -> None:
    _, functions = sizes()
    new = {name: functions[name] for name in sorted(set(functions) - FUNCTIONS_OVER)}
    assert new == {}, "new functions over 60 lines: split them"
    assert sorted(FUNCTIONS_OVER - set(functions)) == [], (
        "within the limit now: remove from FUNCTIONS_OVER"
    )


def test_a_long_method_and_a_long_file_are_found(tmp_path: Path) -> None:
    body = "\n".join(f"    x = {i}" for i in range(60))
    source = f"class A:\n    @staticmethod\n    def f():\n    {body.replace(chr(10), chr(10) + '    ')}\n"
    (tmp_path / "m.py").write_text(source + "\n" * 400)
    files, functions = sizes(tmp_path)
    assert files == {"m.py": 463}
    assert functions == {"m.py:A.f": 62}
