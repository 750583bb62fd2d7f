"""The ``gpuconcepts`` command line: formulas, calc, profile, verify, distributed, hardware.

Bad input never shows a traceback: it prints one line on stderr and exits with status 2.
torch and matplotlib are imported only by the subcommands that measure.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from gpuconcepts import __version__
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.formula import Formula
from gpuconcepts.formulas import CATALOGUE, get
from gpuconcepts.symbols import SYMBOLS
from gpuconcepts.units import binary_bytes, decimal_bytes, describe

EXIT_USAGE = 2

CALC_JSON_HELP = """\
--json prints one object:
  name     formula name                     latex    the formula, e.g. "\\\\text{Memory} = N d s"
  inputs   {symbol: value} as given         worked   LaTeX: formula = substituted = result
  value    exact result (int when whole)    unit     kind of result: bytes, MACs, FLOPs, count, FLOP/byte, ...
  text     the result in words              decimal, binary   (bytes only) "51.2 GB", "47.68 GiB"
"""


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line, as every error of this CLI is."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see --help)\n")


def _parse_value(formula: Formula, assignment: str) -> tuple[str, int | float]:
    name, sep, text = assignment.partition("=")
    if not sep or not name:
        raise GpuConceptsError(f"{formula.name}: expected SYMBOL=VALUE, got {assignment!r}")
    if name not in formula.params:  # every param is a declared symbol (Formula checks that)
        raise GpuConceptsError(
            f"{formula.name}: unknown symbol {name!r}; it takes {', '.join(formula.params)}"
        )
    cleaned = text.replace("_", "")
    try:
        number: int | float = int(cleaned)
    except ValueError:
        try:
            number = float(cleaned)
        except ValueError:
            raise GpuConceptsError(
                f"{formula.name}: {name} must be a number; got {text!r}"
            ) from None
        # 1e8 on a command line means the count 100,000,000; 128.5 stays a float and is refused.
        if SYMBOLS[name].is_count and number.is_integer():
            number = int(number)
    return name, number


def _formula_record(formula: Formula) -> dict[str, Any]:
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


def _cmd_formulas(args: argparse.Namespace) -> int:
    records = [_formula_record(f) for f in CATALOGUE.values()]
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


def _cmd_calc(args: argparse.Namespace) -> int:
    formula = get(args.name)
    values = dict(_parse_value(formula, a) for a in args.values)
    value = formula(**values)
    record: dict[str, Any] = {
        "name": formula.name,
        "inputs": values,
        "value": value,
        "unit": formula.kind,
        "text": describe(value, formula.kind),
        "latex": formula.equation(),
        "worked": formula.worked(**values),
    }
    if formula.kind == "bytes":
        record |= {"decimal": decimal_bytes(value), "binary": binary_bytes(value)}
    if args.json:
        print(json.dumps(record, indent=2))
    else:
        print(record["text"])
        print(f"  {formula.lhs} = {record['worked']}")
    return 0


def _cmd_profile(args: argparse.Namespace) -> int:
    from gpuconcepts.profile import run_profile

    status: int = run_profile(args.device, args.quick, args.json)
    return status


def _cmd_verify(args: argparse.Namespace) -> int:
    from gpuconcepts.claims import run_verify

    status: int = run_verify(args.device, args.quick, args.json)
    return status


def _cmd_hardware(args: argparse.Namespace) -> int:
    from gpuconcepts.hardware import run_hardware

    status: int = run_hardware(args.json)
    return status


def _cmd_distributed(args: argparse.Namespace) -> int:
    from gpuconcepts.distributed import run_distributed

    status: int = run_distributed(
        args.world_size, args.backend, args.quick, args.json, port=args.port
    )
    return status


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``gpuconcepts`` command."""
    parser = _Parser(
        prog="gpuconcepts",
        description="How DLRM, MLP, CNN, RNN and Transformer load a GPU: the book's formulas, "
        "and measurements on this machine.",
        epilog="Example: gpuconcepts calc embedding_memory N=100000000 d=128 s=4",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    p = sub.add_parser("formulas", help="list every formula with its LaTeX and symbols")
    p.add_argument("--json", action="store_true", help="print a JSON list instead of text")
    p.set_defaults(run=_cmd_formulas)

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
    p.set_defaults(run=_cmd_calc)

    for name, run, text in (
        ("profile", _cmd_profile, "run the five workloads here and place them on a roofline"),
        ("verify", _cmd_verify, "run the experiments behind every claim and compute verdicts"),
    ):
        p = sub.add_parser(name, help=text, description=text)
        p.add_argument(
            "--device", choices=("auto", "cpu", "cuda"), default="auto", help="default: auto"
        )
        p.add_argument("--quick", action="store_true", help="small sizes, about a minute on a CPU")
        p.add_argument("--json", action="store_true", help="print JSON on stdout")
        p.set_defaults(run=run)

    text = "run collectives in W processes with torch.distributed; check their bytes"
    p = sub.add_parser(
        "distributed",
        help=text,
        description=text + " on the loopback interface and time them",
    )
    p.add_argument(
        "--world-size", type=int, required=True, metavar="W", help="number of processes (2 or more)"
    )
    p.add_argument(
        "--backend", choices=("gloo", "nccl"), default="gloo", help="gloo (CPU, default) or nccl"
    )
    p.add_argument("--port", type=int, help="rendezvous port on 127.0.0.1 (default: a free one)")
    p.add_argument("--quick", action="store_true", help="small sizes, about a minute on a CPU")
    p.add_argument("--json", action="store_true", help="print JSON on stdout")
    p.set_defaults(run=_cmd_distributed)

    p = sub.add_parser("hardware", help="the datasheet table of common GPUs, with sources")
    p.add_argument("--json", action="store_true", help="print a JSON list instead of a table")
    p.set_defaults(run=_cmd_hardware)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        status: int = args.run(args)
    except GpuConceptsError as error:
        print(f"gpuconcepts {args.command}: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("gpuconcepts: interrupted", file=sys.stderr)
        return 130
    return status


if __name__ == "__main__":
    sys.exit(main())
