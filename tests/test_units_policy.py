"""One formatting policy, kept: numbers shown to people are formatted by ``units.py`` only.

A format spec such as ``:.3g``, ``:.2f``, ``:,`` or ``:.0%`` (in an f-string, ``format()``,
``str.format`` or ``%``) anywhere else prints the same quantity another way (``1.23e+06``
where the policy prints ``1,230,000``). This test finds each one and names its file and line.
Width and alignment alone (``:>8``) lay out text and are allowed.
"""

from __future__ import annotations

import ast
import re
import string
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "gpuconcepts"

NUMERIC_SPEC = re.compile(r"[,_]|\.\d|[eEfFgGn%]$|^[+\- ]?#?0?\d*[bcdoxX]$")
"""A spec that formats a number: grouping, a precision, or a numeric presentation type."""

PERCENT_SPEC = re.compile(r"%[-+ #0]*\d*(?:\.\d+)?[eEfFgG]")
"""printf-style numeric conversions (``%.3g``); ``%s`` and ``%r`` are text."""

ALLOWED: dict[str, str] = {
    "src/gpuconcepts/cli.py:f": "JSON: an integer too long for a JSON number, written as its "
    "exact decimal digits in a string (calc --json), for programs, not people",
    "src/gpuconcepts/run/run.py:#x": "a byte that is not UTF-8, in hex as a hex editor shows it: a "
    "code, not a quantity",
}
"""Format specs outside units.py that are kept, each with its reason."""


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
