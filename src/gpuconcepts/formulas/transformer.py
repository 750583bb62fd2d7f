"""Attention: prefill (minimal and tiled traffic), decode and its KV cache.

Part of the catalogue (:mod:`gpuconcepts.formulas`), in the book's order."""

from __future__ import annotations

import sympy as sp

from gpuconcepts.formula import Formula, product, ratio, total
from gpuconcepts.symbols import sym

d, s, B, S, S_tile, S_q, S_kv, n_kv, d_head = (
    sym(n) for n in ("d", "s", "B", "S", "S_tile", "S_q", "S_kv", "n_kv", "d_head")
)

# -- Transformer ---------------------------------------------------------------------------
attention_scores = Formula(
    "attention_scores",
    S**2,
    kind="count",
    lhs=r"\text{Scores}",
    summary="Entries of the attention score matrix: every token against every token, per head "
    "and per sequence.",
    doc=r"""
    The post's Q16: doubling 1,000 tokens to 2,000 quadruples the scores.

    >>> attention_scores(S=1000), attention_scores(S=2000)
    (1000000, 4000000)
    >>> attention_scores(S=2000) // attention_scores(S=1000)
    4
    >>> attention_scores.worked(S=5)
    'S^{2} = 5^{2} = 25'
    """,
)

attention_flops = Formula(
    "attention_flops",
    product(4, B, S**2, d),
    kind="FLOPs",
    lhs=r"\text{FLOPs}",
    summary="Forward FLOPs of full (non-causal) attention: QKᵀ and the weighted sum AV, "
    "2·B·S²·d each.",
    doc="""
    Softmax and scaling are not counted. ``d`` is the model width (heads × head width).

    >>> attention_flops(B=1, S=1000, d=512)
    2048000000
    """,
)

attention_flops_causal = Formula(
    "attention_flops_causal",
    product(2, B, S, total(S, 1), d),
    kind="FLOPs",
    lhs=r"\text{FLOPs}_{\text{causal}}",
    summary="Forward FLOPs of causal attention: only the S(S+1)/2 scores on or below the "
    "diagonal are computed, about half of attention_flops.",
    doc="""
    >>> attention_flops_causal(B=1, S=1000, d=512)
    1025024000
    """,
)

attention_bytes = Formula(
    "attention_bytes",
    product(4, B, S, d, s),
    kind="bytes",
    lhs=r"\text{Bytes}",
    summary="Minimal traffic of fused (flash) attention: read Q, K, V and write the output once; "
    "the S×S scores never reach DRAM.",
    doc="""
    >>> attention_bytes(B=1, S=1000, d=512, s=2)
    4096000
    """,
)

attention_intensity = Formula(
    "attention_intensity",
    ratio(attention_flops.expr, attention_bytes.expr),
    kind="FLOP/byte",
    lhs=r"I_{\text{attn}}",
    summary="Arithmetic intensity of fused attention prefill: attention_flops / attention_bytes.",
    doc="""
    Traffic model: as :data:`attention_bytes`. FLOPs grow with S² and bytes with S, so the
    intensity grows linearly with S: prefill of long prompts is compute-bound.

    >>> attention_intensity(B=1, S=1000, d=512, s=2)
    500
    """,
)


attention_tiled_bytes = Formula(
    "attention_tiled_bytes",
    product(2, B, S, d, s, total(1, sp.ceiling(ratio(S, S_tile)))),
    kind="bytes",
    lhs=r"\text{Bytes}_{\text{tiled}}",
    summary="Traffic of a tiled (flash) attention kernel: Q read and the output written once, "
    "K and V read once per tile of S_tile query rows.",
    doc=r"""
    Assumptions: the kernel holds one tile of ``S_tile`` query rows (of every head) on chip
    while all S keys and values stream past it, so K and V cross DRAM once per tile, ⌈S/S_tile⌉
    times; the S×S scores never reach DRAM. With one tile for the whole sequence
    (``S_tile ≥ S``) this is the minimal traffic, :data:`attention_bytes`; with more tiles the
    K and V reads grow with S², like the FLOPs.

    >>> attention_tiled_bytes(B=1, S=8192, d=512, s=2, S_tile=128)  # 64 tiles: 65 × 2BSds
    1090519040
    >>> attention_tiled_bytes(B=1, S=1000, d=512, s=2, S_tile=1000) == attention_bytes(
    ...     B=1, S=1000, d=512, s=2)
    True
    """,
)

attention_tiled_intensity = Formula(
    "attention_tiled_intensity",
    ratio(attention_flops.expr, attention_tiled_bytes.expr),
    kind="FLOP/byte",
    lhs=r"I_{\text{tiled}}",
    summary="Arithmetic intensity of tiled (flash) attention prefill: "
    "attention_flops / attention_tiled_bytes.",
    doc="""
    Traffic model: as :data:`attention_tiled_bytes`. While the whole sequence fits in one tile
    the intensity is S/s, as :data:`attention_intensity`; beyond it, the K and V re-reads grow
    as fast as the FLOPs, and the intensity levels off towards 2·S_tile/s.

    >>> attention_tiled_intensity(B=1, S=128, d=512, s=2, S_tile=128)
    64
    >>> round(attention_tiled_intensity(B=1, S=8192, d=512, s=2, S_tile=128), 1)
    126.0
    >>> attention_tiled_intensity.supremum("S", B=1, d=512, s=2, S_tile=128)
    128.0
    """,
)

attention_decode_flops = Formula(
    "attention_decode_flops",
    product(4, B, S, d),
    kind="FLOPs",
    lhs=r"\text{FLOPs}_{\text{decode}}",
    summary="FLOPs of one decode step: one new query against S cached keys and values.",
    doc="""
    >>> attention_decode_flops(B=2, S=1000, d=512)
    4096000
    """,
)

kv_cache_memory = Formula(
    "kv_cache_memory",
    product(2, B, S, d, s),
    kind="bytes",
    lhs=r"\text{KV Cache}",
    summary="Bytes of the key and value cache of one attention layer: the 2 is one K and one V "
    "vector per token.",
    doc=r"""
    The post's Q17: batch 2, 1,000 tokens, width 512, FP16 is about 3.91 MiB per layer.

    >>> kv_cache_memory(B=2, S=1000, d=512, s=2)
    4096000
    >>> kv_cache_memory.worked(B=2, S=1000, d=512, s=2)
    '2 B S d s = 2 \\times 2 \\times 1{,}000 \\times 512 \\times 2 = 4{,}096{,}000'
    """,
)

attention_decode_bytes = Formula(
    "attention_decode_bytes",
    total(kv_cache_memory.expr, product(2, B, d, s)),
    kind="bytes",
    lhs=r"\text{Bytes}_{\text{decode}}",
    summary="Minimal traffic of one decode step: read the whole KV cache, read the query, write "
    "one output row.",
    doc="""
    >>> attention_decode_bytes(B=2, S=1000, d=512, s=2)
    4100096
    """,
)

attention_decode_intensity = Formula(
    "attention_decode_intensity",
    ratio(attention_decode_flops.expr, attention_decode_bytes.expr),
    kind="FLOP/byte",
    lhs=r"I_{\text{decode}}",
    summary="Arithmetic intensity of one decode step: attention_decode_flops / attention_decode_bytes.",
    doc="""
    Traffic model: as :data:`attention_decode_bytes`. Every cached byte is used for one
    multiply-add and then dropped, so the intensity stays below 2/s: decode is memory-bound.

    >>> round(attention_decode_intensity(B=2, S=1000, d=512, s=2), 3)
    0.999
    """,
)


attention_flops_general = Formula(
    "attention_flops_general",
    product(4, B, S_q, S_kv, d),
    kind="FLOPs",
    lhs=r"\text{FLOPs}_{\text{attn}}",
    summary="Forward FLOPs of attention with S_q queries against S_kv keys and values: QKᵀ and "
    "AV, 2·B·S_q·S_kv·d each.",
    doc="""
    ``d`` is the queries' width (query heads × d_head). Grouped-query and multi-query attention
    share each key/value head among several query heads, but every query head still takes
    its own dot products: the FLOPs do not depend on the key/value heads, only the bytes do
    (:data:`attention_bytes_general`). Self-attention (S_q = S_kv = S) is
    :data:`attention_flops`; a decode step (one query against S cached tokens) is
    :data:`attention_decode_flops`; cross-attention has S_q ≠ S_kv. A GQA block with 64 queries
    against 257 keys, 8 query heads of 16 (2 key/value heads):

    >>> attention_flops_general(B=2, S_q=64, S_kv=257, d=128)
    16842752
    >>> attention_flops_general(B=1, S_q=1000, S_kv=1000, d=512) == attention_flops(B=1, S=1000, d=512)
    True
    >>> attention_flops_general(B=2, S_q=1, S_kv=1000, d=512) == attention_decode_flops(B=2, S=1000, d=512)
    True
    """,
)

attention_bytes_general = Formula(
    "attention_bytes_general",
    product(s, B, total(product(2, S_q, d), product(2, S_kv, n_kv, d_head))),
    kind="bytes",
    lhs=r"\text{Bytes}_{\text{attn}}",
    summary="Minimal traffic of fused attention with S_q queries of width d against S_kv keys "
    "and values of n_kv heads of d_head: read Q, K and V, write the output, once each.",
    doc="""
    With n_kv·d_head = d and S_q = S_kv = S this is :data:`attention_bytes`; multi-query
    attention is n_kv = 1. The GQA block of :data:`attention_flops_general` in float32:

    >>> attention_bytes_general(B=2, S_q=64, S_kv=257, d=128, n_kv=2, d_head=16, s=4)
    262656
    >>> attention_bytes_general(B=1, S_q=1000, S_kv=1000, d=512, n_kv=8, d_head=64, s=2) == (
    ...     attention_bytes(B=1, S=1000, d=512, s=2))
    True
    """,
)
