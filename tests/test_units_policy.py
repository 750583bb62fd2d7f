"""One formatting policy, kept: numbers shown to people are formatted by ``units.py`` only.

A format spec such as ``:.3g``, ``:.2f``, ``:,`` or ``:.0%`` (in an f-string, ``format()``,
``str.format`` or ``%``) anywhere else prints the same quantity another way (``1.23e+06``
where the policy prints ``1,230,000``). This test finds each one and names its file and line.
Width and alignment alone (``:>8``) lay out text and are allowed. The docs pages' code cells
are held to the same rule, and there ``round(x, n)`` is refused too: what it rounds is printed
or glued, so its digits would bypass the policy the same way.
"""

from __future__ import annotations

import ast
import re
import string
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "gpuconcepts"
DOCS = ROOT / "docs"

CODE_CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
"""A MyST-NB code cell: its options (``:tags:`` lines) and then its Python."""

NUMERIC_SPEC = re.compile(r"[,_]|\.\d|[eEfFgGn%]$|^[+\- ]?#?0?\d*[bcdoxX]$")
"""A spec that formats a number: grouping, a precision, or a numeric presentation type."""

PERCENT_SPEC = re.compile(r"%[-+ #0]*\d*(?:\.\d+)?[eEfFgG]")
"""printf-style numeric conversions (``%.3g``); ``%s`` and ``%r`` are text."""

ALLOWED: dict[str, str] = {
    "src/gpuconcepts/cli/calc.py:f": "JSON: an integer too long for a JSON number, written as its "
    "exact decimal digits in a string (calc --json), for programs, not people",
    "src/gpuconcepts/run/reading.py:#x": "a byte that is not UTF-8, in hex as a hex editor shows it: a "
    "code, not a quantity",
}
"""Format specs outside units.py that are kept, each with its reason."""

DOCS_ALLOWED: dict[str, str] = {}
"""Docs pages whose code cells are not checked yet, each with its reason."""


def _numeric(spec: str) -> bool:
    return bool(spec) and bool(NUMERIC_SPEC.search(spec))


def format_specs(source: str) -> Iterator[tuple[int, str]]:
    """Every numeric format spec in Python source, with its line."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FormattedValue) and node.format_spec is not None:
            if node.conversion != -1:  # !r, !s, !a: the spec cuts or pads text
                continue
            assert isinstance(node.format_spec, ast.JoinedStr)
            spec = "".join(
                str(v.value) for v in node.format_spec.values if isinstance(v, ast.Constant)
            )
            if _numeric(spec):
                yield node.lineno, spec
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id == "format" and len(node.args) == 2:
                spec_node = node.args[1]
                if isinstance(spec_node, ast.Constant) and _numeric(str(spec_node.value)):
                    yield node.lineno, str(spec_node.value)
            if (
                isinstance(func, ast.Attribute)
                and func.attr == "format"
                and isinstance(func.value, ast.Constant)
                and isinstance(func.value.value, str)
            ):
                for _, _, spec, _ in string.Formatter().parse(func.value.value):
                    if spec and _numeric(spec):
                        yield node.lineno, spec
        elif (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, ast.Mod)
            and isinstance(node.left, ast.Constant)
            and isinstance(node.left.value, str)
        ):
            for found in PERCENT_SPEC.findall(node.left.value.replace("%%", "")):
                yield node.lineno, found


def rounded_for_text(source: str) -> Iterator[tuple[int, str]]:
    """Every ``round(x, n)`` in Python source: n digits chosen outside units.py."""
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "round"
            and len(node.args) + len(node.keywords) == 2
        ):
            yield node.lineno, "round(x, n)"


def code_cells(page: str) -> Iterator[tuple[int, str]]:
    """Each code cell of a MyST page: the page line its Python starts on, and the Python
    (option lines blanked, so ast's line numbers count from that start)."""
    for match in CODE_CELL.finditer(page):
        body = match.group(1)
        python = "\n".join("" if line.startswith(":") else line for line in body.splitlines())
        yield page.count("\n", 0, match.start(1)) + 1, python


def docs_offenders() -> list[str]:
    found = []
    for path in sorted(DOCS.glob("*.md")):
        if path.name in DOCS_ALLOWED:
            continue
        for start, python in code_cells(path.read_text()):
            for line, spec in [*format_specs(python), *rounded_for_text(python)]:
                found.append(f"docs/{path.name}:{start + line - 1}: {spec!r}")
    return sorted(found)


def offenders() -> list[str]:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        if path.name == "units.py":
            continue
        name = path.relative_to(ROOT).as_posix()
        for line, spec in format_specs(path.read_text()):
            if f"{name}:{spec}" not in ALLOWED:
                found.append(f"{name}:{line}: {spec!r}")
    return found


def test_numbers_for_people_are_formatted_by_units_only() -> None:
    assert offenders() == []


def test_numbers_docs_pages_print_or_glue_are_formatted_by_units_only() -> None:
    assert docs_offenders() == []


def test_every_docs_exception_names_a_page_that_exists() -> None:
    assert [name for name in DOCS_ALLOWED if not (DOCS / name).is_file()] == []


def test_a_code_cell_is_found_on_its_page_line_with_its_round() -> None:
    page = (
        "# Title\n"
        "```{code-cell} python\n"
        ":tags: [remove-cell]\n"
        "x = 1.0\n"
        'glue_md("a", f"{round(x, 2)} and {x:.3g}")\n'
        "```\n"
    )
    [(start, python)] = code_cells(page)
    assert start == 3
    assert sorted((start + line - 1, spec) for line, spec in format_specs(python)) == [(5, ".3g")]
    assert [(start + line - 1, spec) for line, spec in rounded_for_text(python)] == [
        (5, "round(x, n)")
    ]
    assert list(rounded_for_text("y = round(x)\n")) == []


def test_the_search_finds_each_kind_of_format_spec() -> None:
    source = (
        'a = f"{x:.3g} {y:,} {z:.0%} {w:>8} {v!r}"\n'
        'b = format(x, ".2f")\n'
        'c = "{:g} {}".format(x, y)\n'
        'd = "%.1f%% and %s" % (x, y)\n'
        'e = f"{n:6.1f} {m:08d} {k:x} {s!r:.60}"\n'
    )
    assert sorted(format_specs(source)) == [
        (1, ","), (1, ".0%"), (1, ".3g"), (2, ".2f"), (3, "g"), (4, "%.1f"),
        (5, "08d"), (5, "6.1f"), (5, "x"),
    ]  # fmt: skip
