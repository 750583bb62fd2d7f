"""``gpuconcepts profile``: measure a run here, keep its peaks, print or save it."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from gpuconcepts.cli import common
from gpuconcepts.errors import require

TEXT = "measure a run here: peaks, the five workloads on a roofline, every claim"


def add(sub: Any) -> None:
    """The ``profile`` subcommand."""
    p = sub.add_parser("profile", help=TEXT, description=TEXT)
    common.measuring_options(p)
    p.set_defaults(run=command)
    p.add_argument("--save", metavar="PATH", help=common.SAVE_HELP.format(what="the run"))
    p.add_argument(
        "--dtype",
        type=common.dtype,
        metavar="D",
        help=f"run every kernel in this data type: {common.DTYPE_NAMES} (default: float32 "
        "on a CPU; bfloat16 on a GPU, embedding tables float32)",
    )


def command(args: argparse.Namespace) -> int:
    from gpuconcepts.files import check_writable

    if args.save is not None:
        check_writable(args.save, "--save")  # said now, not after a minute of measuring
    require("torch", "`profile`", "kernels")
    from gpuconcepts.collect import collect
    from gpuconcepts.measure import resolve_device
    from gpuconcepts.render import format_run
    from gpuconcepts.sizing import RunSizes

    device = resolve_device(args.device)
    sizes = RunSizes.resolve(device, args.quick)  # the command's one sizing decision
    run = collect(device, args.quick, sizes=sizes, progress=common.progress, dtype=args.dtype)
    from gpuconcepts.peaks_cache import identity_here, keep_peaks

    # what analyze and verify reuse on this machine (a folder that cannot be written is said)
    keep_peaks(run.peaks, identity_here(sizes, args.dtype), common.warning("profile"))
    if args.save is not None:
        run.save(args.save)
        common.progress(f"saved the run to {args.save}")
    sys.stdout.write(run.to_json() if args.json else format_run(run) + "\n")
    return 0
