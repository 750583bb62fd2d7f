"""``gpuconcepts distributed``: collectives in W processes, their bytes checked and timed."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from gpuconcepts.errors import require


def add(sub: Any) -> None:
    """The ``distributed`` subcommand."""
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
    p.set_defaults(run=command)


def command(args: argparse.Namespace) -> int:
    require("torch", "`distributed`", "kernels")
    from gpuconcepts.distributed.report import check_input, measure
    from gpuconcepts.render.text.distributed import format_report, report_dict
    from gpuconcepts.sizing import RunSizes

    check_input(args.world_size, args.backend, args.port)  # before a GPU is asked its memory
    # the command's one sizing decision: nccl runs between GPUs, gloo on the CPU
    sizes = RunSizes.resolve("cuda" if args.backend == "nccl" else "cpu", args.quick)
    report = measure(args.world_size, sizes, backend=args.backend, port=args.port)
    if args.json:
        sys.stdout.write(json.dumps(report_dict(report), indent=2) + "\n")
    else:
        sys.stdout.write(format_report(report) + "\n")
    return 0
