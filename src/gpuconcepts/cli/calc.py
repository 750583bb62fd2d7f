"""``gpuconcepts calc``: one formula evaluated exactly, with its worked derivation.

Its values are read exactly (``N=1e30`` is 10**30, ``s=0.1`` is 1/10), and its JSON carries
every value as JSON can.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any

from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.formula import Formula
from gpuconcepts.formulas import get
from gpuconcepts.units import binary_bytes, decimal_bytes, describe, plain_number, significant

CALC_JSON_HELP = """\
--json prints one object:
  name     formula name                     latex    the formula, e.g. "\\\\text{Memory} = N d s"
  inputs   {symbol: value} as given         worked   LaTeX: formula = substituted = result
  value    exact result (int when whole)    unit     kind of result: bytes, MACs, FLOPs, count, FLOP/byte, ...
  text     the result in words              decimal, binary   (bytes only) "51.2 GB", "47.68 GiB"
"""


def add(sub: Any) -> None:
    """The ``calc`` subcommand."""
    p = sub.add_parser(
        "calc",
        help="evaluate a formula: value, units and the worked derivation",
        description="Evaluate one formula exactly. Values may use _ or exponents for counts "
        "(N=100_000_000, N=1e8); s may be fractional (s=0.5 for 4-bit weights).",
        epilog=CALC_JSON_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("name", metavar="NAME", help="formula name (see `gpuconcepts formulas`)")
    p.add_argument("values", metavar="SYM=VALUE", nargs="*", help="a value for every symbol")
    p.add_argument("--json", action="store_true", help="print a JSON object (fields below)")
    p.set_defaults(run=command)


MAX_DIGITS = 10_000
"""The most digits a value may have: exact arithmetic is cheap up to here, and no size needs more."""


def _parse_value(formula: Formula, assignment: str) -> tuple[str, int | Fraction]:
    """``SYMBOL=VALUE`` read exactly: ``N=1e30`` is 10**30, ``s=0.1`` is 1/10 (never a float)."""
    name, sep, text = assignment.partition("=")
    if not sep or not name:
        raise GpuConceptsError(f"{formula.name}: expected SYMBOL=VALUE, got {assignment!r}")
    if name not in formula.params:  # every param is a declared symbol (Formula checks that)
        raise GpuConceptsError(
            f"{formula.name}: unknown symbol {name!r}; it takes {', '.join(formula.params)}"
        )
    try:
        number = Decimal(text.replace("_", "").strip())
    except InvalidOperation:
        raise GpuConceptsError(f"{formula.name}: {name} must be a number; got {text!r}") from None
    if not number.is_finite():
        raise GpuConceptsError(f"{formula.name}: {name} must be finite; got {text!r}")
    if number and abs(number.adjusted()) >= MAX_DIGITS:
        raise GpuConceptsError(
            f"{formula.name}: {name} must have fewer than {plain_number(MAX_DIGITS)} digits; got {text[:20]!r}..."
        )
    exact = Fraction(number)  # Formula refuses a fraction for a count, naming the symbol
    return name, int(exact) if exact.denominator == 1 else exact


def _parse_values(formula: Formula, assignments: Sequence[str]) -> dict[str, int | Fraction]:
    values: dict[str, int | Fraction] = {}
    for assignment in assignments:
        name, value = _parse_value(formula, assignment)
        if name in values:
            raise GpuConceptsError(f"{formula.name}: {name} is given twice; give each symbol once")
        values[name] = value
    return values


def _json_number(value: int | float | Fraction) -> int | float | str:
    """A value as JSON can carry it: no infinite or not-a-number floats, no int past Python's str() limit.

    Ints are exact JSON numbers up to about 4,000 digits and exact digit strings beyond;
    a fraction is a float when a normal float holds it, else its exact decimal text.
    """
    if isinstance(value, int):
        return value if value.bit_length() < _JSON_INT_BITS else format(Decimal(value), "f")
    as_float = float(value)
    if math.isfinite(as_float) and abs(as_float) >= sys.float_info.min:
        return as_float
    return significant(Fraction(value), 17)


_JSON_INT_BITS = 13_000  # about 3,900 digits, below the 4,300 that int -> str allows by default


def command(args: argparse.Namespace) -> int:
    formula = get(args.name)
    values = _parse_values(formula, args.values)
    value = formula(**values)  # refuses a result no float can hold, naming the formula
    record: dict[str, Any] = {
        "name": formula.name,
        "inputs": {k: _json_number(v) for k, v in values.items()},
        "value": _json_number(value),
        "unit": formula.kind,
        "text": describe(value, formula.kind),
        "latex": formula.equation(),
        "worked": formula.worked(**values),
    }
    if formula.kind == "bytes":
        record |= {"decimal": decimal_bytes(value), "binary": binary_bytes(value)}
    if args.json:
        print(json.dumps(record, indent=2, allow_nan=False))
    else:
        print(record["text"])
        print(f"  {formula.lhs} = {record['worked']}")
    return 0
