"""``gpuconcepts model``: a whole transformer from its shapes, and a serving answer on a
datasheet GPU."""

from __future__ import annotations

import argparse
from typing import Any

from gpuconcepts.cli import common
from gpuconcepts.errors import GpuConceptsError

SHAPE_FLAGS = (
    ("--d", "model width"),
    ("--layers", "transformer layers"),
    ("--d-ff", "MLP width (default: follows --d by the preset family's ratio)"),
    ("--heads", "query heads"),
    ("--n-kv", "key/value heads (= heads: MHA; 1: MQA)"),
    ("--d-head", "width of one head"),
    ("--vocab", "vocabulary size"),
    ("--seq", "sequence length: prompt and context (KV cache, activations, serving)"),
    ("--batch", "sequences per batch"),
    ("--experts", "MLP experts per layer (mixture of experts; 1: dense)"),
    ("--top-k", "experts each token is routed to"),
)
"""Every shape ``model`` takes as ``--FLAG N``, over the preset's."""


def add(sub: Any) -> None:
    """The ``model`` subcommand."""
    from gpuconcepts.hardware import DEFAULT_GPU, GPUS
    from gpuconcepts.model import PRESETS

    p = sub.add_parser(
        "model",
        help="a whole transformer from its shapes: params, FLOPs, memory, KV cache, decode, "
        "serving on a GPU",
        description="Account for a whole decoder-only transformer with the book's formulas, "
        "and answer a serving question on a datasheet GPU: do the weights and the KV cache "
        "fit, the largest batch that does, whether decode can become compute-bound at this "
        "context, and lower bounds on the time to the first token and per output token. "
        "Start from a preset and change any shape; heads and d_head follow d, and the KV "
        "heads follow the heads, unless given.",
    )
    p.add_argument(
        "--preset",
        choices=tuple(PRESETS),
        default="llama-3-8b-like",
        help="published shapes to start from (default: llama-3-8b-like)",
    )
    for flag, text in SHAPE_FLAGS:
        p.add_argument(flag, type=int, metavar="N", help=text)
    p.add_argument("--dtype", metavar="D", help=f"weights and cache dtype: {common.DTYPE_NAMES}")
    p.add_argument(
        "--gated",
        action=argparse.BooleanOptionalAction,
        help="three-matrix (SwiGLU) MLP, or two with --no-gated",
    )
    p.add_argument(
        "--tied",
        action=argparse.BooleanOptionalAction,
        help="the output head shares the embedding's weights, or not with --no-tied",
    )
    _draft_options(p)
    p.add_argument(
        "--gpu",
        choices=tuple(GPUS),
        default=DEFAULT_GPU,
        help=f"datasheet GPU for the decode and serving rows (default: {DEFAULT_GPU})",
    )
    p.add_argument("--json", action="store_true", help="print a JSON object instead of text")
    p.set_defaults(run=command)


def _draft_options(p: argparse.ArgumentParser) -> None:
    """Speculative decoding's options: ``--draft-alpha``, ``--draft-gamma``, ``--draft-cost``."""
    p.add_argument(
        "--draft-alpha",
        type=float,
        metavar="A",
        help="speculative decoding: chance a drafted token is accepted (0 < A < 1)",
    )
    p.add_argument(
        "--draft-gamma", type=int, metavar="N", help="speculative decoding: tokens drafted per step"
    )
    p.add_argument(
        "--draft-cost",
        type=float,
        metavar="C",
        help="speculative decoding: a draft step's time over a target step's (default: a "
        "free draft, the speedup's upper bound)",
    )


def command(args: argparse.Namespace) -> int:
    from gpuconcepts.model import Draft, account, preset, shape_from

    shape = shape_from(
        preset(args.preset),
        d=args.d,
        layers=args.layers,
        d_ff=args.d_ff,
        heads=args.heads,
        n_kv=args.n_kv,
        d_head=args.d_head,
        vocab=args.vocab,
        seq=args.seq,
        batch=args.batch,
        dtype=args.dtype,
        gated=args.gated,
        tied=args.tied,
        experts=args.experts,
        top_k=args.top_k,
    )
    given = [args.draft_alpha is not None, args.draft_gamma is not None]
    if any(given) and not all(given):
        raise GpuConceptsError("give --draft-alpha and --draft-gamma together")
    if args.draft_cost is not None and not all(given):
        raise GpuConceptsError("--draft-cost needs --draft-alpha and --draft-gamma")
    draft = Draft(args.draft_alpha, args.draft_gamma, args.draft_cost) if all(given) else None
    table = account(shape, args.gpu, draft)
    print(table.to_json() if args.json else table.format())
    return 0
