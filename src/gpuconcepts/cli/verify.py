"""``gpuconcepts verify``: judge every claim, measured here or from a saved run."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from gpuconcepts.cli import common
from gpuconcepts.errors import require

TEXT = "judge every claim: measured here, or from a saved run (--run)"


def add(sub: Any) -> None:
    """The ``verify`` subcommand."""
    p = sub.add_parser("verify", help=TEXT, description=TEXT)
    common.measuring_options(p)
    p.set_defaults(run=command)
    p.add_argument(
        "--run",
        dest="run_path",
        metavar="PATH",
        help="judge this saved run (gpuconcepts profile --save) instead of measuring",
    )
    p.add_argument("--fresh", action="store_true", help=common.FRESH_HELP)


def command(args: argparse.Namespace) -> int:
    """``gpuconcepts verify``: exit 0 whenever the claims were judged, whatever the verdicts (a
    claim that does not hold here is a measured result; scripts read verdicts from --json)."""
    if args.run_path is None:  # judging a saved run needs no torch
        require("torch", "`verify`", "kernels")
    from gpuconcepts.render.ledgers import format_ledgers
    from gpuconcepts.verify import judged, verify_dict

    def progress(line: str) -> None:
        common.progress(f"[verify] {line}")

    run, claims = judged(
        args.device, args.quick, run_path=args.run_path, progress=progress, fresh=args.fresh
    )
    if args.json:
        sys.stdout.write(json.dumps(verify_dict(run, claims), indent=2, allow_nan=False) + "\n")
    else:  # both ledgers: the post's claims tallied, facts and the model's own apart
        sys.stdout.write(format_ledgers(run, claims) + "\n")
    return 0
