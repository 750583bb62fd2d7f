"""``gpuconcepts compare``: saved runs side by side."""

from __future__ import annotations

import argparse
import json
from typing import Any


def add(sub: Any) -> None:
    """The ``compare`` subcommand."""
    p = sub.add_parser(
        "compare",
        help="saved runs side by side: peaks, every workload's time and bound, the claims",
        description="Compare runs saved by `gpuconcepts profile --save` (e.g. docs/runs/*.json).",
    )
    p.add_argument("paths", metavar="PATH", nargs="+", help="a saved run (JSON)")
    p.add_argument("--json", action="store_true", help="print a JSON object instead of text")
    p.set_defaults(run=command)


def command(args: argparse.Namespace) -> int:
    from gpuconcepts.render import compare_dict, format_compare
    from gpuconcepts.run import load

    runs = [load(path) for path in args.paths]
    if args.json:
        print(json.dumps(compare_dict(runs), indent=2, allow_nan=False))
    else:
        print(format_compare(runs))
    return 0
