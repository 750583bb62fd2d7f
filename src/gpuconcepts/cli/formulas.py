"""``gpuconcepts formulas``: every formula of the catalogue with its LaTeX and symbols."""

from __future__ import annotations

import argparse
import json
from typing import Any

from gpuconcepts.formula import Formula
from gpuconcepts.formulas import CATALOGUE


def add(sub: Any) -> None:
    """The ``formulas`` subcommand."""
    p = sub.add_parser("formulas", help="list every formula with its LaTeX and symbols")
    p.add_argument("--json", action="store_true", help="print a JSON list instead of text")
    p.set_defaults(run=command)


def formula_record(formula: Formula) -> dict[str, Any]:
    return {
        "name": formula.name,
        "kind": formula.kind,
        "summary": formula.summary,
        "latex": formula.equation(),
        "symbols": [
            {"name": s.name, "meaning": s.meaning, "unit": s.unit, "domain": s.domain}
            for s in formula.symbols
        ],
    }


def command(args: argparse.Namespace) -> int:
    records = [formula_record(f) for f in CATALOGUE.values()]
    if args.json:
        print(json.dumps(records, indent=2))
        return 0
    for record in records:
        print(f"{record['name']}  [{record['kind']}]")
        print(f"    {record['summary']}")
        print(f"    {record['latex']}")
        for s in record["symbols"]:
            print(f"      {s['name']:>6}  {s['meaning']} ({s['unit']})")
    return 0
