"""The recommender's (DLRM's) embedding tables: memory, lookups, their traffic and intensity.

Part of the catalogue (:mod:`gpuconcepts.formulas`), in the book's order."""

from __future__ import annotations

import sympy as sp

from gpuconcepts.formula import Formula, product, ratio, total
from gpuconcepts.symbols import sym

N, d, s, B, L, c, s_idx = (sym(n) for n in ("N", "d", "s", "B", "L", "c", "s_idx"))

# -- DLRM ----------------------------------------------------------------------------------
embedding_memory = Formula(
    "embedding_memory",
    product(N, d, s),
    kind="bytes",
    lhs=r"\text{Memory}",
    summary="Memory of a whole embedding table: N rows of d elements of s bytes each.",
    doc=r"""
    The post's Q10: 100 million FP32 embeddings of width 128.

    >>> embedding_memory(N=100_000_000, d=128, s=4)
    51200000000
    >>> embedding_memory.worked(N=100_000_000, d=128, s=4)
    'N d s = 100{,}000{,}000 \\times 128 \\times 4 = 51{,}200{,}000{,}000'
    """,
)

embedding_payload = Formula(
    "embedding_payload",
    product(B, L, d, s),
    kind="bytes",
    lhs=r"\text{Payload}",
    summary="Embedding bytes one batch reads: B samples, L rows each, d elements of s bytes.",
    doc=r"""
    The post's Q11: a batch of 2048 samples, one row each, reads 1 MiB.

    >>> embedding_payload(B=2048, L=1, d=128, s=4)
    1048576
    >>> embedding_payload.worked(B=2048, L=1, d=128, s=4)
    'B L d s = 2{,}048 \\times 1 \\times 128 \\times 4 = 1{,}048{,}576'
    """,
)

embedding_bag_flops = Formula(
    "embedding_bag_flops",
    product(B, L, d),
    kind="FLOPs",
    lhs=r"\text{FLOPs}",
    summary="FLOPs of sum-pooling L looked-up rows per sample: one add per element read.",
    doc="""
    >>> embedding_bag_flops(B=2048, L=1, d=128)
    262144
    """,
)

embedding_bag_bytes = Formula(
    "embedding_bag_bytes",
    product(s, B, d, total(L, 1)),
    kind="bytes",
    lhs=r"\text{Bytes}",
    summary="Minimal traffic of an embedding-bag lookup: L rows read and one pooled row written "
    "per sample (the 8-byte indices are ignored).",
    doc="""
    >>> embedding_bag_bytes(B=2048, L=1, d=128, s=4)
    2097152
    """,
)

embedding_bag_traffic = Formula(
    "embedding_bag_traffic",
    product(B, total(L, 1), total(product(d, s), s_idx)),
    kind="bytes",
    lhs=r"\text{Bytes}_{\text{moved}}",
    summary="Bytes an embedding-bag lookup's code moves: its minimal traffic "
    "(embedding_bag_bytes) plus the B·L row indices and B bag offsets it reads, s_idx bytes "
    "each.",
    doc="""
    The post's count leaves the indices out; a lookup of narrow rows cannot. torch reads one
    int64 index per row and one offset per bag, so with 16-byte rows the indices add half as
    much again, and the memory roofs read a lookup's moved bytes, not its minimal ones:

    >>> embedding_bag_traffic(B=2048, L=256, d=4, s=4, s_idx=8)
    12632064
    >>> embedding_bag_traffic(B=2048, L=256, d=4, s=4, s_idx=8) / embedding_bag_bytes(B=2048, L=256, d=4, s=4)
    1.5
    """,
)

embedding_intensity = Formula(
    "embedding_intensity",
    ratio(embedding_bag_flops.expr, embedding_bag_bytes.expr),
    kind="FLOP/byte",
    lhs=r"I_{\text{DLRM}}",
    summary="Arithmetic intensity of an embedding-bag lookup: embedding_bag_flops / embedding_bag_bytes.",
    doc="""
    Traffic model: every looked-up row is read from DRAM once and the pooled row is
    written once; there is no reuse, so the intensity stays below 1/s whatever the sizes.

    >>> embedding_intensity(B=2048, L=1, d=128, s=4)
    0.125
    >>> embedding_intensity(B=2048, L=80, d=128, s=4) < 1 / 4
    True
    """,
)

random_row_bytes = Formula(
    "random_row_bytes",
    product(sp.ceiling(ratio(product(d, s), c)), c),
    kind="bytes",
    lhs=r"\text{Bytes}_{\text{random row}}",
    summary="Bytes memory moves to fetch one embedding row at a random address: the row's d·s "
    "bytes rounded up to whole transfer units of c bytes.",
    doc=r"""
    Model: memory moves whole units of c bytes (a 64-byte cache line on a CPU, a 32-byte
    sector on an NVIDIA GPU), and a row at a random address shares none of them with the
    rows fetched around it, so it costs every unit it touches. Assumed: rows start on a unit
    boundary (a row of d·s bytes touches ⌈d·s/c⌉ units; a misaligned one may touch one more),
    and no unit is still in cache from an earlier lookup (a table far larger than the cache,
    rows drawn uniformly). Consecutive rows share their units, so they move just d·s bytes
    each.

    A 16-byte row (d = 4 in FP32) still costs a whole 64-byte line; a 512-byte row moves
    exactly its own eight lines:

    >>> random_row_bytes(d=4, s=4, c=64), random_row_bytes(d=128, s=4, c=64)
    (64, 512)
    >>> random_row_bytes.worked(d=4, s=4, c=64)
    '\\left\\lceil{\\frac{d s}{c}}\\right\\rceil c = \\left\\lceil{\\frac{4 \\times 4}{64}}\\right\\rceil \\times 64 = 64'
    """,
)

lookup_order_ratio = Formula(
    "lookup_order_ratio",
    ratio(random_row_bytes.expr, product(d, s)),
    kind="count",
    lhs=r"\frac{\beta_{\text{sequential}}}{\beta_{\text{random}}}",
    summary="Predicted bandwidth of consecutive row lookups over random ones: the bytes a "
    "random row moves (random_row_bytes) over the d·s bytes it holds.",
    doc="""
    Same model as :data:`random_row_bytes`, and both orders are assumed to stream at the
    same bytes per second of whole units: only the wasted part of each unit makes random
    rows slower. Rows narrower than a unit waste most of it; rows of whole units waste
    nothing, and the model predicts no gap at all (what it leaves out, such as hardware
    prefetching and DRAM pages kept open for consecutive addresses, still favours
    consecutive rows a little).

    >>> lookup_order_ratio(d=4, s=4, c=64), lookup_order_ratio(d=128, s=4, c=64)
    (4, 1)
    >>> lookup_order_ratio(d=4, s=4, c=32)  # the same 16-byte rows on a GPU's sectors
    2
    >>> lookup_order_ratio(d=24, s=4, c=64)  # 96 bytes span two lines
    1.3333333333333333
    """,
)
