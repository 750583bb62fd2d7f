"""``gpuconcepts hardware``: the datasheet table of common GPUs, with sources."""

from __future__ import annotations

import argparse
import json
from typing import Any


def add(sub: Any) -> None:
    """The ``hardware`` subcommand."""
    p = sub.add_parser("hardware", help="the datasheet table of common GPUs, with sources")
    p.add_argument("--json", action="store_true", help="print a JSON list instead of a table")
    p.set_defaults(run=command)


def command(args: argparse.Namespace) -> int:
    from gpuconcepts.hardware import GPUS, table_rows
    from gpuconcepts.tables import aligned

    if args.json:
        print(json.dumps({"gpus": [gpu.to_dict() for gpu in GPUS.values()]}, indent=2))
        return 0
    print(aligned(table_rows()) + "\n\nSources:")
    for gpu in GPUS.values():
        print(f"  {gpu.name}: {gpu.source}")
    print("FLOP/s are dense (not 2:4 sparse); bandwidths are decimal (1 TB = 1e12 B).")
    return 0
