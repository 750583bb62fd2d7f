r"""The catalogue: every formula of the book, defined once.

Each entry is a :class:`~gpuconcepts.formula.Formula`. Call it with keyword values for
the exact number, ask ``.latex()`` or ``.equation()`` for the formula, ``.worked(...)``
for the derivation and ``.vectorized(...)`` for numpy arrays. Each docstring carries the
post's worked example, which the test-suite runs.

>>> embedding_memory(N=100_000_000, d=128, s=4)
51200000000
>>> sorted(CATALOGUE)[:3]
['adam_training_memory', 'attainable_flops', 'attention_bytes']

Counting conventions, stated once:

* **MACs vs FLOPs.** One multiply-accumulate (MAC) is two FLOPs. ``*_macs`` formulas
  count MACs, ``*_flops`` formulas count FLOPs; ``*_flops = 2 × *_macs`` where both exist.
* **Traffic model.** ``*_bytes`` is the *minimal* DRAM traffic: every input, weight and
  output crosses DRAM exactly once, as if caches were perfect. Real kernels move at least
  this much, so the intensities here are upper bounds.
* **Forward pass only**, no bias or activation FLOPs (they are lower order).
"""

from __future__ import annotations

from difflib import get_close_matches

import sympy as sp

from gpuconcepts.errors import GpuConceptsError, GpuConceptsTypeError
from gpuconcepts.formula import Formula, product, ratio, total
from gpuconcepts.symbols import sym
from gpuconcepts.units import FLOPS_PER_MAC

N, d, s, B, L, c = (sym(n) for n in ("N", "d", "s", "B", "L", "c"))
d_in, d_out, d_h = (sym(n) for n in ("d_in", "d_out", "d_h"))
H_out, W_out, K, C_in, C_out, C = (sym(n) for n in ("H_out", "W_out", "K", "C_in", "C_out", "C"))
S, F, Q, P, beta, I = (sym(n) for n in ("S", "F", "Q", "P", "beta", "I"))
s_idx = sym("s_idx")
W, n_params, p, m, n_tables = (sym(n) for n in ("W", "n_params", "p", "m", "n_tables"))

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

# -- MLP -----------------------------------------------------------------------------------
mlp_macs = Formula(
    "mlp_macs",
    product(B, d_in, d_out),
    kind="MACs",
    lhs=r"\text{MACs}",
    summary="Multiply-accumulates of a fully connected layer Y = XW on a batch of B rows.",
    doc=r"""
    The post's Q12: batch 64, 512 inputs, 256 outputs.

    >>> mlp_macs(B=64, d_in=512, d_out=256)
    8388608
    >>> mlp_macs.worked(B=64, d_in=512, d_out=256)
    'B d_{in} d_{out} = 64 \\times 512 \\times 256 = 8{,}388{,}608'
    """,
)

mlp_flops = Formula(
    "mlp_flops",
    product(FLOPS_PER_MAC, mlp_macs.expr),
    kind="FLOPs",
    lhs=r"\text{FLOPs}",
    summary="FLOPs of a fully connected layer: two per multiply-accumulate.",
    doc=r"""
    The post's Q12, second half.

    >>> mlp_flops(B=64, d_in=512, d_out=256)
    16777216
    >>> mlp_flops.worked(B=64, d_in=512, d_out=256)
    '2 B d_{in} d_{out} = 2 \\times 64 \\times 512 \\times 256 = 16{,}777{,}216'
    """,
)

mlp_weights = Formula(
    "mlp_weights",
    product(d_in, d_out),
    kind="count",
    lhs=r"\text{Weights}",
    summary="Weights of a fully connected layer: one per input-output pair.",
    doc="""
    The post's 4×4 image fully connected to 3 neurons:

    >>> mlp_weights(d_in=16, d_out=3)
    48
    """,
)

mlp_weight_memory = Formula(
    "mlp_weight_memory",
    product(d_in, d_out, s),
    kind="bytes",
    lhs=r"\text{Weight Memory}",
    summary="Bytes of a fully connected layer's weight matrix.",
    doc=r"""
    The post's Q13: 1024 × 512 FP32 weights take 2 MiB.

    >>> mlp_weight_memory(d_in=1024, d_out=512, s=4)
    2097152
    >>> mlp_weight_memory.worked(d_in=1024, d_out=512, s=4)
    'd_{in} d_{out} s = 1{,}024 \\times 512 \\times 4 = 2{,}097{,}152'
    """,
)

mlp_bytes = Formula(
    "mlp_bytes",
    product(s, total(product(B, d_in), product(d_in, d_out), product(B, d_out))),
    kind="bytes",
    lhs=r"\text{Bytes}",
    summary="Minimal traffic of a fully connected layer: read X and W once, write Y once.",
    doc="""
    >>> mlp_bytes(B=512, d_in=4096, d_out=1024, s=2)
    13631488
    """,
)

mlp_intensity = Formula(
    "mlp_intensity",
    ratio(mlp_flops.expr, mlp_bytes.expr),
    kind="FLOP/byte",
    lhs=r"I_{\text{MLP}}",
    summary="Arithmetic intensity of a fully connected layer: mlp_flops / mlp_bytes.",
    doc=r"""
    Traffic model: X (B × d_in), W (d_in × d_out) and Y (B × d_out) each cross DRAM once.
    The weights are shared by all B rows, so intensity grows with B until the d_in·d_out
    weight term stops dominating.

    NVIDIA's performance guide quotes about 315 FLOP/B for a 4096→1024 layer at batch 512
    in FP16:

    >>> round(mlp_intensity(B=512, d_in=4096, d_out=1024, s=2), 2)
    315.08
    >>> mlp_intensity(B=1, d_in=4096, d_out=1024, s=2) < 1
    True
    """,
)

# -- CNN -----------------------------------------------------------------------------------
conv_macs = Formula(
    "conv_macs",
    product(B, H_out, W_out, K**2, C_in, C_out),
    kind="MACs",
    lhs=r"\text{MACs}",
    summary="Multiply-accumulates of a K×K convolution producing a B × C_out × H_out × W_out output.",
    doc=r"""
    The post's Q14: a 3×3 conv from 16 to 32 channels on a 32×32 output.

    >>> conv_macs(B=1, H_out=32, W_out=32, K=3, C_in=16, C_out=32)
    4718592
    >>> conv_macs.worked(B=1, H_out=32, W_out=32, K=3, C_in=16, C_out=32)
    'B H_{out} W_{out} K^{2} C_{in} C_{out} = 1 \\times 32 \\times 32 \\times 3^{2} \\times 16 \\times 32 = 4{,}718{,}592'
    """,
)

conv_flops = Formula(
    "conv_flops",
    product(FLOPS_PER_MAC, conv_macs.expr),
    kind="FLOPs",
    lhs=r"\text{FLOPs}",
    summary="FLOPs of a dense K×K convolution: two per multiply-accumulate.",
    doc="""
    >>> conv_flops(B=1, H_out=32, W_out=32, K=3, C_in=16, C_out=32)
    9437184
    """,
)

conv_weights = Formula(
    "conv_weights",
    product(K**2, C_in, C_out),
    kind="count",
    lhs=r"\text{Weights}",
    summary="Weights of a K×K convolution: one filter per (input, output) channel pair, shared "
    "by every position.",
    doc="""
    The post's single 3×3 filter on a one-channel image:

    >>> conv_weights(K=3, C_in=1, C_out=1)
    9
    """,
)

conv_bytes = Formula(
    "conv_bytes",
    product(
        s,
        total(
            product(B, H_out, W_out, C_in),
            product(K**2, C_in, C_out),
            product(B, H_out, W_out, C_out),
        ),
    ),
    kind="bytes",
    lhs=r"\text{Bytes}",
    summary="Minimal traffic of a stride-1 'same' convolution: input, filters and output once each.",
    doc="""
    With stride 1 and 'same' padding the input map has the output's height and width.

    >>> conv_bytes(B=1, H_out=32, W_out=32, K=3, C_in=16, C_out=32, s=4)
    215040
    """,
)

conv_intensity = Formula(
    "conv_intensity",
    ratio(conv_flops.expr, conv_bytes.expr),
    kind="FLOP/byte",
    lhs=r"I_{\text{CNN}}",
    summary="Arithmetic intensity of a dense convolution: conv_flops / conv_bytes.",
    doc="""
    Traffic model: as :data:`conv_bytes`. Each input pixel is reused K²·C_out times and
    each filter weight B·H_out·W_out times, which is why dense convolutions are compute-heavy.

    >>> round(conv_intensity(B=1, H_out=32, W_out=32, K=3, C_in=16, C_out=32, s=4), 1)
    43.9
    """,
)

depthwise_conv_macs = Formula(
    "depthwise_conv_macs",
    product(B, H_out, W_out, K**2, C),
    kind="MACs",
    lhs=r"\text{MACs}",
    summary="Multiply-accumulates of a depthwise K×K convolution: one filter per channel, "
    "no mixing across channels.",
    doc="""
    >>> depthwise_conv_macs(B=1, H_out=32, W_out=32, K=3, C=32)
    294912
    """,
)

depthwise_conv_flops = Formula(
    "depthwise_conv_flops",
    product(FLOPS_PER_MAC, depthwise_conv_macs.expr),
    kind="FLOPs",
    lhs=r"\text{FLOPs}",
    summary="FLOPs of a depthwise convolution: two per multiply-accumulate.",
    doc="""
    >>> depthwise_conv_flops(B=1, H_out=32, W_out=32, K=3, C=32)
    589824
    """,
)

depthwise_conv_bytes = Formula(
    "depthwise_conv_bytes",
    product(s, total(product(2, B, H_out, W_out, C), product(K**2, C))),
    kind="bytes",
    lhs=r"\text{Bytes}",
    summary="Minimal traffic of a stride-1 'same' depthwise convolution: input and output maps "
    "once, C small filters.",
    doc="""
    >>> depthwise_conv_bytes(B=1, H_out=32, W_out=32, K=3, C=32, s=4)
    263296
    """,
)

depthwise_conv_intensity = Formula(
    "depthwise_conv_intensity",
    ratio(depthwise_conv_flops.expr, depthwise_conv_bytes.expr),
    kind="FLOP/byte",
    lhs=r"I_{\text{depthwise}}",
    summary="Arithmetic intensity of a depthwise convolution: depthwise_conv_flops / depthwise_conv_bytes.",
    doc="""
    Traffic model: as :data:`depthwise_conv_bytes`. Without channel mixing each input pixel
    is reused only K² times, so the intensity stays below K²/s however large the image.

    >>> round(depthwise_conv_intensity(B=1, H_out=32, W_out=32, K=3, C=32, s=4), 2)
    2.24
    """,
)

# -- RNN -----------------------------------------------------------------------------------
rnn_macs = Formula(
    "rnn_macs",
    product(B, S, total(product(d_in, d_h), d_h**2)),
    kind="MACs",
    lhs=r"\text{MACs}",
    summary="Multiply-accumulates of a vanilla RNN over S steps: W_x x_t plus W_h h_{t-1} per step.",
    doc=r"""
    The post's Q15: batch 32, 100 steps, 64 inputs, 128 hidden units.

    >>> rnn_macs(B=32, S=100, d_in=64, d_h=128)
    78643200
    >>> rnn_macs.worked(B=32, S=100, d_in=64, d_h=128)
    'B S \\left(d_{in} d_{h} + d_{h}^{2}\\right) = 32 \\times 100 \\times \\left(64 \\times 128 + 128^{2}\\right) = 78{,}643{,}200'
    """,
)

rnn_flops = Formula(
    "rnn_flops",
    product(FLOPS_PER_MAC, rnn_macs.expr),
    kind="FLOPs",
    lhs=r"\text{FLOPs}",
    summary="FLOPs of a vanilla RNN: two per multiply-accumulate (tanh and bias not counted).",
    doc="""
    >>> rnn_flops(B=32, S=100, d_in=64, d_h=128)
    157286400
    """,
)

rnn_bytes = Formula(
    "rnn_bytes",
    product(s, total(product(B, S, d_in), product(d_in, d_h), d_h**2, product(B, S, d_h))),
    kind="bytes",
    lhs=r"\text{Bytes}",
    summary="Minimal traffic of an RNN layer: inputs, both weight matrices and the hidden "
    "states once each.",
    doc="""
    >>> rnn_bytes(B=32, S=100, d_in=64, d_h=128, s=4)
    2555904
    """,
)

rnn_intensity = Formula(
    "rnn_intensity",
    ratio(rnn_flops.expr, rnn_bytes.expr),
    kind="FLOP/byte",
    lhs=r"I_{\text{RNN}}",
    summary="Arithmetic intensity of an RNN layer: rnn_flops / rnn_bytes.",
    doc="""
    Traffic model: as :data:`rnn_bytes`, with the weights staying in cache across all S
    steps. The intensity can be high, yet the S steps still run one after another: the
    RNN's limit is the sequential dependency, not the ratio of FLOPs to bytes.

    >>> round(rnn_intensity(B=32, S=100, d_in=64, d_h=128, s=4), 1)
    61.5
    """,
)

lstm_flops = Formula(
    "lstm_flops",
    product(4, rnn_flops.expr),
    kind="FLOPs",
    lhs=r"\text{FLOPs}_{\text{LSTM}}",
    summary="FLOPs of one LSTM layer over S steps: four gates (input, forget, cell, output), "
    "each a vanilla RNN's two products W x_t and U h_{t-1}.",
    doc=r"""
    Per step and sequence each gate multiplies the input (d_in) and the previous hidden state
    (d_h) by its own matrices: gates × 2 × (d_in + d_h) × d_h FLOPs, with four gates. The
    sigmoids, tanh and the element-wise cell update are not counted (lower order). A
    bidirectional layer is two of these; a stacked layer's d_in is the layer below's output.
    The post's Q15 sizes with LSTM cells (four times :data:`rnn_flops`):

    >>> lstm_flops(B=32, S=100, d_in=64, d_h=128)
    629145600
    >>> lstm_flops(B=32, S=100, d_in=64, d_h=128) == 4 * rnn_flops(B=32, S=100, d_in=64, d_h=128)
    True
    >>> lstm_flops.worked(B=1, S=2, d_in=3, d_h=4)
    '4 \\cdot 2 B S \\left(d_{in} d_{h} + d_{h}^{2}\\right) = 4 \\times 2 \\times 1 \\times 2 \\times \\left(3 \\times 4 + 4^{2}\\right) = 448'
    """,
)

gru_flops = Formula(
    "gru_flops",
    product(3, rnn_flops.expr),
    kind="FLOPs",
    lhs=r"\text{FLOPs}_{\text{GRU}}",
    summary="FLOPs of one GRU layer over S steps: three gates (reset, update, new), each a "
    "vanilla RNN's two products W x_t and U h_{t-1}.",
    doc="""
    As :data:`lstm_flops` with three gates: 3 × 2 × (d_in + d_h) × d_h per step and sequence.
    The reset gate scales U h_{t-1} after the product, so the products are the same three.

    >>> gru_flops(B=32, S=100, d_in=64, d_h=128)
    471859200
    """,
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

S_tile = sym("S_tile")

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

S_q, S_kv = sym("S_q"), sym("S_kv")
n_kv, d_head = sym("n_kv"), sym("d_head")

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

# -- From a layer to a model ---------------------------------------------------------------
# Whole-model accounting, after Kaplan et al. (2020) for 2N and 6N, the mixed-precision
# training papers for 16 bytes per parameter, and Korthikanti et al. (2022) for activations.
n_params, n_kv, d_head, d_ff = (sym(n) for n in ("n_params", "n_kv", "d_head", "d_ff"))
M_w, M_kv = sym("M_w"), sym("M_kv")

transformer_layer_params = Formula(
    "transformer_layer_params",
    total(product(4, d**2), product(2, d, d_ff)),
    kind="count",
    lhs=r"\text{Params}_{\text{layer}}",
    summary="Weights of one transformer layer: multi-head attention (Q, K, V and the output "
    "projection, d × d each) and a two-matrix MLP (d × d_ff and d_ff × d).",
    doc="""
    No biases and no norms are counted (they are a few d per layer). A gated MLP (SwiGLU,
    as in Llama) has three d × d_ff matrices, not two: see :data:`gated_mlp_params`.

    GPT-2 small (d = 768, d_ff = 3072) has 7.08 million weights per layer:

    >>> transformer_layer_params(d=768, d_ff=3072)
    7077888
    """,
)

gqa_attention_params = Formula(
    "gqa_attention_params",
    total(product(2, d**2), product(2, d, n_kv, d_head)),
    kind="count",
    lhs=r"\text{Params}_{\text{attn}}",
    summary="Weights of grouped-query attention: Q and the output projection are d × d, K and "
    "V are d × n_kv·d_head each.",
    doc="""
    The query heads times d_head is d; with n_kv·d_head = d this is the 4d² of multi-head
    attention. Llama-3-8B (d = 4096, 8 KV heads of 128):

    >>> gqa_attention_params(d=4096, n_kv=8, d_head=128)
    41943040
    >>> gqa_attention_params(d=768, n_kv=12, d_head=64) == 4 * 768**2
    True
    """,
)

gated_mlp_params = Formula(
    "gated_mlp_params",
    product(3, d, d_ff),
    kind="count",
    lhs=r"\text{Params}_{\text{gated MLP}}",
    summary="Weights of a gated MLP (SwiGLU): gate and up projections d × d_ff, down "
    "projection d_ff × d.",
    doc="""
    Llama-2-7B's MLP (d = 4096, d_ff = 11008):

    >>> gated_mlp_params(d=4096, d_ff=11008)
    135266304
    """,
)

embedding_params = Formula(
    "embedding_params",
    product(N, d),
    kind="count",
    lhs=r"\text{Params}_{\text{embed}}",
    summary="Weights of an embedding table (or of the output head): N rows of width d.",
    doc="""
    GPT-2's vocabulary of 50,257 tokens at width 768:

    >>> embedding_params(N=50257, d=768)
    38597376
    """,
)

forward_flops_per_token = Formula(
    "forward_flops_per_token",
    product(FLOPS_PER_MAC, n_params),
    kind="FLOPs",
    lhs=r"\text{FLOPs}_{\text{forward}}",
    summary="Forward FLOPs per token: one multiply-accumulate per weight the token passes through.",
    doc="""
    Kaplan et al.'s 2N. n_params counts the weights of matrix products (every layer and the
    output head); an embedding lookup is a read, not a product, and the attention scores
    (:data:`attention_linear_flops_ratio`) are left out. GPT-2 small's layers and head
    (124 million weights less the 0.8 million position embeddings, roughly):

    >>> forward_flops_per_token(n_params=123_532_032)
    247064064
    """,
)

training_flops_per_token = Formula(
    "training_flops_per_token",
    product(6, n_params),
    kind="FLOPs",
    lhs=r"\text{FLOPs}_{\text{train}}",
    summary="Training FLOPs per token: the forward pass (2N) plus a backward pass that costs "
    "twice the forward (4N).",
    doc="""
    The backward pass of a linear layer Y = XW computes both dX = dY·Wᵀ and dW = Xᵀ·dY, two
    products the size of the forward one. Chinchilla (70 billion parameters):

    >>> training_flops_per_token(n_params=70_000_000_000)
    420000000000
    """,
)

adam_training_memory = Formula(
    "adam_training_memory",
    product(16, n_params),
    kind="bytes",
    lhs=r"\text{Memory}_{\text{Adam}}",
    summary="Bytes per parameter of mixed-precision training with Adam: 16 per weight, "
    "before activations.",
    doc="""
    Per parameter: 16-bit weights (2 bytes) + 16-bit gradients (2) + fp32 master weights (4)
    + Adam's two fp32 moments (4 + 4) = 16 bytes. Activations, temporary buffers and
    fragmentation come on top. A 7-billion-parameter model:

    >>> adam_training_memory(n_params=7_000_000_000)
    112000000000
    """,
)

weight_memory = Formula(
    "weight_memory",
    product(n_params, s),
    kind="bytes",
    lhs=r"\text{Memory}_{\text{weights}}",
    summary="Bytes of a model's weights: n_params of s bytes each.",
    doc="""
    An 8-billion-parameter model in bf16:

    >>> weight_memory(n_params=8_030_261_248, s=2)
    16060522496
    """,
)

gqa_kv_cache_memory = Formula(
    "gqa_kv_cache_memory",
    product(2, B, S, n_kv, d_head, s),
    kind="bytes",
    lhs=r"\text{KV Cache}_{\text{GQA}}",
    summary="Bytes of one layer's KV cache with n_kv key/value heads of width d_head.",
    doc="""
    Multi-head attention is the case n_kv·d_head = d (then this is :data:`kv_cache_memory`);
    multi-query attention is n_kv = 1. Per token and layer in bf16, Llama-3-8B (8 KV heads of
    128) against Llama-2-7B (32 heads of 128):

    >>> gqa_kv_cache_memory(B=1, S=1, n_kv=8, d_head=128, s=2)
    4096
    >>> gqa_kv_cache_memory(B=1, S=1, n_kv=32, d_head=128, s=2)
    16384
    """,
)

decode_seconds_lower_bound = Formula(
    "decode_seconds_lower_bound",
    ratio(total(M_w, M_kv), beta),
    kind="seconds",
    lhs=r"t_{\text{decode}}",
    summary="Least time of one decode step: every weight and the whole KV cache are read once "
    "at the memory bandwidth.",
    doc="""
    The bound ignores compute (true at small batch, see :data:`decode_compute_bound_batch`)
    and assumes nothing stays in cache between steps. 16 GB of bf16 weights and 1 GB of cache
    on an H100 SXM (3.35 TB/s):

    >>> round(decode_seconds_lower_bound(M_w=16e9, M_kv=1e9, beta=3.35e12) * 1e3, 2)
    5.07
    """,
)

decode_compute_bound_batch = Formula(
    "decode_compute_bound_batch",
    ratio(product(P, s), product(2, beta)),
    kind="count",
    lhs=r"B_{\text{ridge}}",
    summary="Batch at which a decode step's weight products reach the ridge point: "
    "ridge_point · s / 2.",
    doc="""
    At batch B a weight matrix of n weights does 2·B·n FLOPs on about n·s bytes (the
    activations are small beside the weights), an intensity of 2B/s; it equals the ridge
    point P/beta at B = P·s/(2·beta). Below this batch decode is memory-bound and more batch
    is nearly free. H100 SXM in bf16:

    >>> round(decode_compute_bound_batch(P=989e12, s=2, beta=3.35e12))
    295
    """,
)

layer_activation_memory = Formula(
    "layer_activation_memory",
    product(s, total(product(8, d), product(2, d_ff))),
    kind="bytes",
    lhs=r"\text{Activations}_{\text{layer}}",
    summary="Bytes one transformer layer keeps per token for its backward pass, without "
    "recomputation.",
    doc="""
    Assumptions: a pre-norm layer with multi-head attention and a two-matrix MLP; fused
    (flash) attention, so the S × S scores are not stored; no dropout; activations of s bytes.
    Kept per token: the two norms' inputs and outputs (4d), Q, K, V (3d), the attention output
    (d), the MLP's pre- and post-activation (2·d_ff). With d_ff = 4d that is 16·d elements,
    Korthikanti et al.'s 34·d bytes less their two dropout masks. GPT-2 small in bf16:

    >>> layer_activation_memory(d=768, d_ff=3072, s=2)
    24576
    """,
)

layer_activation_memory_recomputed = Formula(
    "layer_activation_memory_recomputed",
    product(d, s),
    kind="bytes",
    lhs=r"\text{Activations}_{\text{recompute}}",
    summary="Bytes one transformer layer keeps per token with full recomputation: only its input.",
    doc="""
    Activation checkpointing stores each layer's input and reruns the layer's forward pass
    during the backward pass (about a third more FLOPs); one layer's full activations
    (:data:`layer_activation_memory`) live at a time on top of this. GPT-2 small in bf16:

    >>> layer_activation_memory_recomputed(d=768, s=2)
    1536
    """,
)

attention_linear_flops_ratio = Formula(
    "attention_linear_flops_ratio",
    ratio(product(4, S, d), product(2, transformer_layer_params.expr)),
    kind="count",
    lhs=r"\frac{\text{FLOPs}_{\text{scores}}}{\text{FLOPs}_{\text{linear}}}",
    summary="Per token, the FLOPs of attention scores (QKᵀ and AV over S keys) over the FLOPs "
    "of the layer's weight products.",
    doc="""
    One token's query meets S keys and S values, 4·S·d FLOPs (non-causal; causal attention
    averages half). The weights cost 2 FLOPs each. The ratio is S / (2d + d_ff): with
    d_ff = 4d, attention overtakes the linear layers when S > 6d. For GPT-2 small that is at
    4,608 tokens:

    >>> attention_linear_flops_ratio(S=6 * 768, d=768, d_ff=3072)
    1
    >>> attention_linear_flops_ratio(S=1024, d=768, d_ff=3072) < 1
    True
    """,
)

# -- Serving: what fits, decode intensity with the KV cache, latency floors -------------------
n_layers, M_dev = sym("n_layers"), sym("M_dev")
alpha, gamma, c_draft = sym("alpha"), sym("gamma"), sym("c_draft")

_kv_per_sequence = product(2, S, n_layers, n_kv, d_head, s)  # every layer's K and V, one sequence
_kv_all = product(2, B, S, n_layers, n_kv, d_head, s)  # n_layers × gqa_kv_cache_memory

decode_intensity = Formula(
    "decode_intensity",
    ratio(product(FLOPS_PER_MAC, n_params, B), total(product(n_params, s), _kv_all)),
    kind="FLOP/byte",
    lhs=r"I_{\text{decode}}",
    summary="Arithmetic intensity of a whole decode step with its KV cache: the weights' FLOPs "
    "for B new tokens over the bytes of the weights and of every layer's KV cache.",
    doc=r"""
    Per step, each of the B sequences passes its new token through every weight (2 FLOPs per
    weight, :data:`forward_flops_per_token`), and the step reads every weight once
    (:data:`weight_memory`) and every sequence's cache of S tokens in all n_layers layers
    (:data:`gqa_kv_cache_memory` × n_layers). n_params counts the weights a step reads: the
    layers and the head (an embedding lookup reads only B rows). The attention FLOPs (one new
    query against S keys and values, :data:`attention_decode_flops`) are left out: about 2
    FLOPs per cached element read, they add at most 2/s to the limit. Activations are small
    beside both and are not counted.

    The weights are shared by the batch, the cache is not: as B grows the intensity tends to
    2·n_params / (KV bytes of one sequence), not to infinity. A 7-billion-parameter model with
    Llama-2-7B's attention (32 layers, 32 KV heads of 128) at 4,096 tokens in bf16 stays far
    below an H100's ridge of 295 FLOP/byte at any batch:

    >>> kv = dict(S=4096, n_layers=32, n_kv=32, d_head=128, s=2)
    >>> round(decode_intensity(n_params=7_000_000_000, B=1, **kv), 3)
    0.867
    >>> round(decode_intensity.supremum("B", n_params=7_000_000_000, **kv), 2)
    6.52
    >>> decode_intensity.reaches(295, "B", n_params=7_000_000_000, **kv) is None
    True
    """,
)

decode_step_flops = Formula(
    "decode_step_flops",
    product(FLOPS_PER_MAC, n_params, B),
    kind="FLOPs",
    lhs=r"F_{\text{decode step}}",
    summary="FLOPs of one decode step of B sequences: each new token passes through every "
    "weight, 2 FLOPs per weight (the numerator of decode_intensity).",
    doc=r"""
    :data:`forward_flops_per_token` for B tokens; the attention FLOPs are left out, as in
    :data:`decode_intensity`. Llama-2-7B, a batch of 30:

    >>> decode_step_flops(n_params=6_738_415_616, B=30)
    404304936960
    """,
)

decode_step_bytes = Formula(
    "decode_step_bytes",
    total(product(n_params, s), _kv_all),
    kind="bytes",
    lhs=r"Q_{\text{decode step}}",
    summary="Bytes one decode step of B sequences at context S reads: every weight once and "
    "every layer's KV cache of every sequence (the denominator of decode_intensity); also "
    "what the weights and the caches take in memory.",
    doc=r"""
    :data:`weight_memory` plus n_layers × :data:`gqa_kv_cache_memory`; activations are left
    out. It is the memory term of :data:`tpot_seconds_lower_bound`, and what has to fit in a
    device for :data:`max_decode_batch` sequences. Llama-2-7B, 30 sequences of 4,096 tokens
    in bf16, just under an H100's 80 GB:

    >>> decode_step_bytes(n_params=6_738_415_616, B=30, S=4096, n_layers=32, n_kv=32,
    ...                   d_head=128, s=2)
    77901340672
    """,
)

decode_intensity_limit = Formula(
    "decode_intensity_limit",
    ratio(n_params, product(S, n_layers, n_kv, d_head, s)),
    kind="FLOP/byte",
    lhs=r"I_{\text{decode}, B \to \infty}",
    summary="The decode intensity a batch can reach at context S: 2·n_params FLOPs per "
    "sequence over the bytes of one sequence's KV cache, the limit of decode_intensity as B "
    "grows.",
    doc=r"""
    The weights' bytes are shared by the batch and vanish against the caches, which are not:
    :data:`decode_intensity` tends to 2·n_params / (2·S·n_layers·n_kv·d_head·s). Decode can
    become compute-bound at context S only when this limit passes the ridge point. Llama-2-7B
    at 4,096 tokens in bf16 (an H100's ridge point is 295 FLOP/byte):

    >>> round(decode_intensity_limit(n_params=6_738_415_616, S=4096, n_layers=32, n_kv=32,
    ...                              d_head=128, s=2), 2)
    6.28
    """,
)

max_decode_batch = Formula(
    "max_decode_batch",
    sp.floor(ratio(total(M_dev, product(-1, n_params, s)), _kv_per_sequence)),
    kind="count",
    lhs=r"B_{\max}",
    summary="The largest batch of sequences of S tokens whose KV cache fits in a device of "
    "M_dev bytes beside the model's weights.",
    doc=r"""
    The weights take n_params·s bytes (:data:`weight_memory`); every sequence of S tokens
    adds its cache in every layer, 2·S·n_layers·n_kv·d_head·s bytes. Activations, the CUDA
    context and fragmentation are left out, so real servers fit fewer. A value of 0 means not
    one sequence of that length fits; a negative one, that the weights alone do not.
    Llama-2-7B (6,738,415,616 weights) at 4,096 tokens in bf16 on an 80 GB H100:

    >>> max_decode_batch(M_dev=80_000_000_000, n_params=6_738_415_616, S=4096, n_layers=32,
    ...                  n_kv=32, d_head=128, s=2)
    30
    """,
)

ttft_seconds_lower_bound = Formula(
    "ttft_seconds_lower_bound",
    sp.Max(ratio(product(FLOPS_PER_MAC, n_params, B, S), P), ratio(product(n_params, s), beta)),
    kind="seconds",
    lhs=r"t_{\text{first token}}",
    summary="Least time to the first token: the prefill of B prompts of S tokens does "
    "2·n_params FLOPs per token at the peak P, and reads every weight once at beta.",
    doc=r"""
    The roofline bound (:data:`roofline_seconds`) of the prefill: F is
    :data:`forward_flops_per_token` for B·S tokens, Q is :data:`weight_memory`. The attention
    FLOPs (:data:`attention_flops_causal`), the KV cache written and any queueing are left out,
    so a real first token comes later. Llama-2-7B, one prompt of 4,096 tokens in bf16 on an
    H100 SXM (989 TFLOP/s, 3.35 TB/s) is compute-bound, 55.8 ms at the least:

    >>> round(ttft_seconds_lower_bound(n_params=6_738_415_616, B=1, S=4096, P=989e12,
    ...                                s=2, beta=3.35e12) * 1e3, 1)
    55.8
    """,
)

tpot_seconds_lower_bound = Formula(
    "tpot_seconds_lower_bound",
    sp.Max(
        ratio(product(FLOPS_PER_MAC, n_params, B), P),
        ratio(total(product(n_params, s), _kv_all), beta),
    ),
    kind="seconds",
    lhs=r"t_{\text{per output token}}",
    summary="Least time per output token of B sequences at context S: the decode step's "
    "FLOPs at the peak, or its weight and KV-cache bytes at the bandwidth, whichever is slower.",
    doc=r"""
    The memory term is :data:`decode_seconds_lower_bound` with M_w = :data:`weight_memory`
    and M_kv = n_layers × :data:`gqa_kv_cache_memory`; the compute term is B tokens of
    :data:`forward_flops_per_token`. Their ratio is :data:`decode_intensity`: the step is
    compute-bound only when that intensity passes the ridge point. Without speculative
    decoding each step yields one token per sequence; with it (:data:`speculative_speedup`) a
    step can yield several, so this bounds a target-model step, not every way of generating.
    Llama-2-7B at 4,096 tokens, batch 1, bf16 on an H100 SXM:

    >>> round(tpot_seconds_lower_bound(n_params=6_738_415_616, B=1, P=989e12, S=4096,
    ...       n_layers=32, n_kv=32, d_head=128, s=2, beta=3.35e12) * 1e3, 2)
    4.66
    """,
)

speculative_expected_tokens = Formula(
    "speculative_expected_tokens",
    ratio(total(1, product(-1, alpha ** total(gamma, 1))), total(1, product(-1, alpha))),
    kind="count",
    lhs=r"E[\text{tokens}]",
    summary="Tokens one target-model step yields under speculative decoding when the draft "
    "proposes gamma tokens, each accepted with chance alpha (Leviathan et al., 2023).",
    doc=r"""
    Leviathan, Kalman and Matias (2023), equation (1): acceptances are taken as independent
    with the same chance alpha; the target model checks the gamma drafted tokens in one step
    and always adds one token of its own, so a step yields between 1 and gamma + 1 tokens.
    With alpha = 0.8 and gamma = 4:

    >>> speculative_expected_tokens(alpha=0.8, gamma=4)
    3.3616
    >>> speculative_expected_tokens.worked(alpha=0.8, gamma=4)
    '\\frac{1 - \\alpha^{\\gamma + 1}}{1 - \\alpha} = \\frac{1 - \\left(0.8\\right)^{4 + 1}}{1 - 0.8} = 3.3616'
    """,
)

speculative_speedup = Formula(
    "speculative_speedup",
    ratio(
        total(1, product(-1, alpha ** total(gamma, 1))),
        product(total(1, product(-1, alpha)), total(product(gamma, c_draft), 1)),
    ),
    kind="count",
    lhs=r"\text{Speedup}_{\text{speculative}}",
    summary="Expected speedup of speculative decoding over plain decoding: the tokens a step "
    "yields over the step's cost, gamma draft steps of relative cost c_draft plus one "
    "target step (Leviathan et al., 2023).",
    doc=r"""
    Leviathan, Kalman and Matias (2023), theorem 3.8, with their c called c_draft here (c is
    the cache line). It assumes the target model checks gamma + 1 tokens in the time of one
    decode step, true while decode is memory-bound (:data:`decode_intensity` below the
    ridge). It exceeds 1 only when alpha > c_draft. A draft at 5 % of the target's cost:

    >>> round(speculative_speedup(alpha=0.8, gamma=4, c_draft=0.05), 3)
    2.801
    >>> speculative_speedup(alpha=0.5, gamma=1, c_draft=1) < 1  # a draft as slow as the target
    True
    """,
)

# -- Beyond one device ----------------------------------------------------------------------
sharded_table_memory = Formula(
    "sharded_table_memory",
    ratio(product(N, d, s), W),
    kind="bytes",
    lhs=r"\text{Memory}_{\text{device}}",
    summary="Memory per device of an embedding table split evenly over W devices "
    "(row-wise, or table-wise over W equal tables).",
    doc=r"""
    The post's 51.2 GB table over eight devices:

    >>> sharded_table_memory(N=100_000_000, d=128, s=4, W=8)
    6400000000
    >>> sharded_table_memory.worked(N=100_000_000, d=128, s=4, W=8)
    '\\frac{N d s}{W} = \\frac{100{,}000{,}000 \\times 128 \\times 4}{8} = 6{,}400{,}000{,}000'
    """,
)

ring_allreduce_bytes = Formula(
    "ring_allreduce_bytes",
    ratio(product(2, total(W, -1), n_params, s), W),
    kind="bytes",
    lhs=r"\text{Bytes}_{\text{all-reduce}}",
    summary="Bytes each device sends in a ring all-reduce of n_params values of s bytes: "
    "W - 1 steps of reduce-scatter and W - 1 of all-gather, each moving 1/W of the buffer.",
    doc="""
    The total is the same on every device and never reaches 2 n_params s: a 100-million
    parameter FP32 gradient costs each of 8 devices 700 MB, each of 2 devices 400 MB.

    >>> ring_allreduce_bytes(n_params=100_000_000, s=4, W=8)
    700000000
    >>> ring_allreduce_bytes(n_params=100_000_000, s=4, W=2)
    400000000
    """,
)

pipeline_bubble_fraction = Formula(
    "pipeline_bubble_fraction",
    ratio(total(p, -1), total(m, p, -1)),
    kind="count",
    lhs=r"\text{Bubble}",
    summary="Fraction of a pipeline's time each stage sits idle when a batch is cut into m "
    "micro-batches over p stages (GPipe schedule, equal stage times).",
    doc="""
    Each stage waits p - 1 slots for the first micro-batch and idles p - 1 slots after its
    last one, out of m + p - 1 slots in all. More micro-batches shrink the bubble:

    >>> pipeline_bubble_fraction(p=4, m=4)
    0.42857142857142855
    >>> round(pipeline_bubble_fraction(p=4, m=32), 3)
    0.086
    """,
)

t_stage, t_msg = sym("t_stage"), sym("t_msg")

pipeline_bubble_with_messages = Formula(
    "pipeline_bubble_with_messages",
    ratio(
        total(product(total(p, -1), t_stage), product(total(m, p, -2), t_msg)),
        total(product(total(m, p, -1), t_stage), product(total(m, p, -2), t_msg)),
    ),
    kind="count",
    lhs=r"\text{Bubble}_{\text{msg}}",
    summary="Fraction of a GPipe pipeline's time each stage sits idle when every micro-batch "
    "reaches a stage as a message of time t_msg that the stage receives only once it has "
    "finished the micro-batch before (m micro-batches, p stages of t_stage each).",
    doc="""
    A stage after the first takes each micro-batch in two steps: it receives it (t_msg), then
    works on it (t_stage). The last stage finishes after the p - 1 stages before it have each
    passed the first micro-batch on, and then m micro-batches of t_msg + t_stage: the whole
    pipeline lasts (m + p - 1)·t_stage + (m + p - 2)·t_msg, of which each stage works
    m·t_stage. Messages that cost next to nothing give :data:`pipeline_bubble_fraction`
    (3/7 at p = m = 4):

    >>> round(pipeline_bubble_with_messages(p=4, m=4, t_stage=1, t_msg=1e-9), 6)
    0.428571

    Costly ones keep an idle share that more micro-batches cannot remove,
    t_msg / (t_stage + t_msg). Two stages of 3.8 ms and messages of 0.6 ms, at m = 8 (GPipe
    alone says 0.111):

    >>> round(pipeline_bubble_with_messages(p=2, m=8, t_stage=3.8e-3, t_msg=0.6e-3), 3)
    0.221
    """,
)

N_d, stage, k_opt, v = sym("N_d"), sym("stage"), sym("k_opt"), sym("v")
n_tokens, top_k = sym("n_tokens"), sym("top_k")

zero_memory_per_device = Formula(
    "zero_memory_per_device",
    sp.Piecewise(
        (product(total(2, 2, k_opt), n_params), sp.Eq(stage, 0)),
        (total(product(4, n_params), ratio(product(k_opt, n_params), N_d)), sp.Eq(stage, 1)),
        (
            total(product(2, n_params), ratio(product(total(2, k_opt), n_params), N_d)),
            sp.Eq(stage, 2),
        ),
        (ratio(product(total(2, 2, k_opt), n_params), N_d), sp.Eq(stage, 3)),
    ),
    kind="bytes",
    lhs=r"\text{Memory}_{\text{ZeRO}}",
    summary="Model-state bytes per device under ZeRO over N_d data-parallel devices: 16-bit "
    "weights (2), 16-bit gradients (2) and k_opt optimizer bytes per parameter, the later ones "
    "partitioned from stage 1, 2 and 3 on.",
    doc=r"""
    Rajbhandari et al. (2020), figure 1: stage 1 partitions the optimizer states, stage 2 also
    the gradients, stage 3 also the weights; stage 0 is plain data parallelism, every device
    holding all 2 + 2 + k_opt bytes per parameter (:data:`adam_training_memory` when
    k_opt = 12: fp32 master weights and Adam's two moments). The paper calls k_opt K; here K
    is a convolution's kernel side. Activations and buffers come on top. The paper's example,
    7.5 billion parameters over 64 devices (120 GB, 31.4 GB, 16.6 GB, 1.88 GB):

    >>> [zero_memory_per_device(n_params=7_500_000_000, N_d=64, stage=z, k_opt=12)
    ...  for z in range(4)]
    [120000000000, 31406250000, 16640625000, 1875000000]
    >>> zero_memory_per_device.worked(n_params=7_500_000_000, N_d=64, stage=1, k_opt=12)
    '4 n_{params} + \\frac{k_{opt} n_{params}}{N_{d}} = 4 \\times 7{,}500{,}000{,}000 + \\frac{12 \\times 7{,}500{,}000{,}000}{64} = 31{,}406{,}250{,}000'
    """,
)

pipeline_bubble_fraction_interleaved = Formula(
    "pipeline_bubble_fraction_interleaved",
    ratio(total(p, -1), product(v, m)),
    kind="count",
    lhs=r"\text{Bubble}_{\text{interleaved}}",
    summary="Idle time of a pipeline over its ideal (bubble-free) time, for p stages, m "
    "micro-batches and v model chunks per device (Megatron's interleaved 1F1B schedule).",
    doc=r"""
    Narayanan et al. (2021) divide the bubble, (p - 1) slots of one chunk, by the ideal time
    of m micro-batches; with v chunks per device each slot is v times shorter, so the bubble
    shrinks v-fold (at the price of v times more messages between stages). Two conventions:
    :data:`pipeline_bubble_fraction` divides the same idle time by the *whole* time,
    ideal plus bubble, so it stays below 1; this one divides by the ideal time alone and can
    pass 1. For v = 1 they convert as b / (1 - b): at p = m = 4 the bubble is 3/7 of the
    whole time and 3/4 of the ideal time.

    >>> pipeline_bubble_fraction_interleaved(p=4, m=4, v=1)
    0.75
    >>> pipeline_bubble_fraction_interleaved(p=4, m=4, v=2)
    0.375
    """,
)

_ALLTOALL_ASSUMPTIONS = """
    Assumptions shared by the three sharding schemes: a global batch of B samples, split
    evenly as B/W samples per device for the dense layers that follow (data parallel); each
    sample looks up L rows in each of n_tables tables of width d and sum-pools them; every
    device already holds the indices it needs (the index exchange, 8 bytes per id, is not
    counted). Only the embedding rows crossing between devices in the forward pass are
    counted, as bytes each device sends; the backward pass sends the same amount of
    gradients back. L does not appear: pooling makes one row per sample and table, whatever L.
"""

tablewise_alltoall_bytes = Formula(
    "tablewise_alltoall_bytes",
    ratio(product(total(W, -1), B, n_tables, d, s), W**2),
    kind="bytes",
    lhs=r"\text{Bytes}_{\text{table-wise}}",
    summary="Bytes each device sends in the all-to-all of a table-wise sharded embedding "
    "lookup: every device owns n_tables/W whole tables and sends their pooled rows to the "
    "devices that own the samples.",
    doc=_ALLTOALL_ASSUMPTIONS
    + """
    A device owns n_tables/W tables (n_tables a multiple of W) and pools them for all B
    samples; it keeps the B/W rows of its own samples and sends the other (W - 1) B/W.

    >>> tablewise_alltoall_bytes(B=2048, n_tables=8, d=128, s=4, W=4)
    1572864
    """,
)

rowwise_alltoall_bytes = Formula(
    "rowwise_alltoall_bytes",
    ratio(product(total(W, -1), B, n_tables, d, s), W),
    kind="bytes",
    lhs=r"\text{Bytes}_{\text{row-wise}}",
    summary="Bytes each device sends in the exchange of a row-wise sharded embedding lookup: "
    "every device holds N/W rows of every table and sends its partial sums to the devices "
    "that own the samples.",
    doc=_ALLTOALL_ASSUMPTIONS
    + """
    A device pools the rows it holds for every sample of every table (a partial sum, full
    width d) and sends the partial sums of other devices' samples, which reduce them (a
    reduce-scatter). With L at least W a bag touches every device, so no partial sum is
    empty; TorchRec sends them all whatever L. That is W times the table-wise traffic:

    >>> rowwise_alltoall_bytes(B=2048, n_tables=8, d=128, s=4, W=4)
    6291456
    """,
)

columnwise_alltoall_bytes = Formula(
    "columnwise_alltoall_bytes",
    ratio(product(total(W, -1), B, n_tables, d, s), W**2),
    kind="bytes",
    lhs=r"\text{Bytes}_{\text{column-wise}}",
    summary="Bytes each device sends in the all-to-all of a column-wise sharded embedding "
    "lookup: every device holds d/W columns of every table and sends its pooled slices to "
    "the devices that own the samples.",
    doc=_ALLTOALL_ASSUMPTIONS
    + """
    A device pools its d/W columns for every sample of every table and sends the slices of
    the other (W - 1) B/W samples (d a multiple of W). The bytes equal the table-wise ones;
    what changes is that every device does the same work even when tables differ in size.

    >>> columnwise_alltoall_bytes(B=2048, n_tables=8, d=128, s=4, W=4)
    1572864
    """,
)

tensor_parallel_mlp_bytes = Formula(
    "tensor_parallel_mlp_bytes",
    ratio(product(4, total(W, -1), B, S, d, s), W),
    kind="bytes",
    lhs=r"\text{Bytes}_{\text{tensor-parallel}}",
    summary="Bytes each device sends per training step of one Megatron tensor-parallel MLP "
    "block: one ring all-reduce of the B S d output in the forward pass and one of the input "
    "gradient in the backward pass.",
    doc="""
    The first weight matrix is split by columns and the second by rows, so each device
    computes a partial output that one all-reduce of B·S·d values of s bytes completes; the
    backward pass all-reduces the gradient of the block's input, the same size. Each ring
    all-reduce sends 2 (W - 1)/W of its buffer per device, hence the 4. The post's Q17
    sizes (B=2, S=1000, d=512, FP16) split over two devices:

    >>> tensor_parallel_mlp_bytes(B=2, S=1000, d=512, s=2, W=2)
    4096000
    """,
)

pipeline_activation_bytes = Formula(
    "pipeline_activation_bytes",
    product(B, d, s),
    kind="bytes",
    lhs=r"\text{Bytes}_{\text{stage}}",
    summary="Bytes each pipeline stage but the last sends forward per batch: its output "
    "activations, B rows of d values of s bytes, in m micro-batches of B/m rows.",
    doc="""
    Cutting the batch into micro-batches does not change the bytes, only how many messages
    carry them. 2048 rows of width 1024 in FP16:

    >>> pipeline_activation_bytes(B=2048, d=1024, s=2)
    4194304
    """,
)

moe_alltoall_bytes = Formula(
    "moe_alltoall_bytes",
    ratio(product(n_tokens, top_k, d, s, total(W, -1)), W),
    kind="bytes",
    lhs=r"\text{Bytes}_{\text{MoE all-to-all}}",
    summary="Bytes each device sends to dispatch its tokens to the experts of one "
    "mixture-of-experts layer spread over W devices (expert parallelism).",
    doc=r"""
    Each of the n_tokens tokens on a device goes to top_k experts as a vector of d values of
    s bytes; with the experts spread evenly over W devices and routing balanced, a fraction
    (W - 1)/W of those copies lives on another device. The combine sends the same bytes back,
    and the backward pass both again. It is DLRM's table-wise all-to-all
    (:data:`tablewise_alltoall_bytes`) with tokens for samples and experts for tables, except
    that nothing is pooled before it is sent: every routed copy crosses whole. Mixtral-8x7B's
    width (d = 4,096, top-2), 4,096 tokens per device in bf16, 8 experts on 8 devices:

    >>> moe_alltoall_bytes(n_tokens=4096, top_k=2, d=4096, s=2, W=8)
    58720256
    """,
)

grouped_mm_flops = Formula(
    "grouped_mm_flops",
    product(FLOPS_PER_MAC, n_tokens, top_k, d_in, d_out),
    kind="FLOPs",
    lhs=r"\text{FLOPs}_{\text{grouped}}",
    summary="FLOPs of a grouped matmul as a mixture-of-experts layer runs it: each of n_tokens "
    "tokens through the d_in × d_out matrix of each of its top_k experts.",
    doc="""
    One grouped call (``torch._grouped_mm``) multiplies every expert's rows by that expert's
    matrix; the groups differ in size, but together they hold n_tokens·top_k rows, so the
    count is a dense layer's (:data:`mlp_flops`) over all routed rows. ``analyze`` reads the
    rows from the operands' shapes (the jagged dimension's total, or groups × rows). A top-2
    layer of 8 experts at Mixtral's width (4,096 → 14,336), 4,096 tokens, one of its three
    matrices:

    >>> grouped_mm_flops(n_tokens=4096, top_k=2, d_in=4096, d_out=14336)
    962072674304
    >>> grouped_mm_flops(n_tokens=4096, top_k=2, d_in=4096, d_out=14336) == mlp_flops(
    ...     B=4096 * 2, d_in=4096, d_out=14336)
    True
    """,
)

# -- Measured peaks (STREAM-like kernels) ----------------------------------------------------
stream_copy_bytes = Formula(
    "stream_copy_bytes",
    product(2, N, d, s),
    kind="bytes",
    lhs=r"\text{Bytes}_{\text{copy}}",
    summary="Traffic of copying an N × d array of s-byte elements: every element is read once "
    "and written once (STREAM counts both).",
    doc="""
    A 128 MiB FP32 array (32768 rows of 1024) moves 256 MiB when copied:

    >>> stream_copy_bytes(N=32768, d=1024, s=4)
    268435456
    """,
)

stream_triad_bytes = Formula(
    "stream_triad_bytes",
    product(3, N, d, s),
    kind="bytes",
    lhs=r"\text{Bytes}_{\text{triad}}",
    summary="Traffic of the STREAM triad a = b + q·c on N × d arrays: two reads and one write "
    "per element.",
    doc="""
    >>> stream_triad_bytes(N=32768, d=1024, s=4)
    402653184
    """,
)

stream_triad_flops = Formula(
    "stream_triad_flops",
    product(2, N, d),
    kind="FLOPs",
    lhs=r"\text{FLOPs}_{\text{triad}}",
    summary="FLOPs of the STREAM triad a = b + q·c: one multiply and one add per element.",
    doc="""
    >>> stream_triad_flops(N=32768, d=1024)
    67108864
    """,
)

# -- Roofline ------------------------------------------------------------------------------
ridge_point = Formula(
    "ridge_point",
    ratio(P, beta),
    kind="FLOP/byte",
    lhs=r"I_{\text{ridge}}",
    summary="The intensity at which a machine's compute and bandwidth limits meet.",
    doc="""
    H100 SXM: 989 TFLOP/s dense BF16 over 3.35 TB/s.

    >>> round(ridge_point(P=989e12, beta=3.35e12))
    295
    """,
)

roofline_seconds = Formula(
    "roofline_seconds",
    sp.Max(ratio(F, P), ratio(Q, beta)),
    kind="seconds",
    lhs=r"t_{\text{roofline}}",
    summary="Roofline lower bound on run time: the slower of doing F FLOPs at P and moving Q bytes at beta.",
    doc="""
    >>> roofline_seconds(F=2e12, Q=1e9, P=1e12, beta=1e11)
    2
    """,
)

t_launch = sym("t_launch")

kernel_seconds = Formula(
    "kernel_seconds",
    sp.Max(ratio(F, P), ratio(Q, beta), t_launch),
    kind="seconds",
    lhs=r"t_{\text{kernel}}",
    summary="Least time of one kernel call: the roofline's bound, or the launch floor when the "
    "call is too small to hide it.",
    doc="""
    A call that does a few thousand FLOPs takes far less than a microsecond by the roofline,
    yet no eager framework runs it faster than the cost of dispatching and launching it.
    A tiny element-wise call and a large matmul on an H100 SXM in bf16 (989 TFLOP/s,
    3.35 TB/s), with a launch floor of 5 µs:

    >>> kernel_seconds(F=4096, Q=32768, P=989e12, beta=3.35e12, t_launch=5e-6)
    5e-06
    >>> round(kernel_seconds(F=2 * 4096**3, Q=3 * 2 * 4096**2, P=989e12, beta=3.35e12,
    ...                      t_launch=5e-6) * 1e6, 1)
    139.0
    """,
)

attainable_flops = Formula(
    "attainable_flops",
    sp.Min(P, product(I, beta)),
    kind="FLOP/s",
    lhs=r"\text{FLOP/s}_{\text{attainable}}",
    summary="Roofline ceiling in FLOP/s at intensity I: bandwidth-limited below the ridge, "
    "compute-limited above it.",
    doc="""
    >>> attainable_flops(I=10, P=1e12, beta=1e11)
    1000000000000
    >>> attainable_flops(I=1, P=1e12, beta=1e11)
    100000000000
    """,
)

# -- The roofs of one machine, beyond compute and streaming bandwidth --------------------------

n_cores, lanes, n_fma, f_clk = (sym(n) for n in ("n_cores", "lanes", "n_fma", "f_clk"))
R, r_line, n_ops, t_op = (sym(n) for n in ("R", "r_line", "n_ops", "t_op"))
n_calls, t_call = sym("n_calls"), sym("t_call")

cpu_peak_flops = Formula(
    "cpu_peak_flops",
    product(2, n_cores, lanes, n_fma, f_clk),
    kind="FLOP/s",
    lhs=r"P_{\text{physical}}",
    summary="The most FLOP/s a CPU's cores can issue: every core retires n_fma fused "
    "multiply-adds of a full vector each cycle, two FLOPs per lane.",
    doc="""
    An upper bound no kernel can pass: it assumes every cycle issues a full-width FMA on every
    unit, with no loads, stores or loop overhead. Measured peaks sit below it; how far below is
    what the library's GEMM paths leave on the table. Two cores of AVX-512 (16 float32 lanes)
    with two FMA units at 2.6 GHz:

    >>> cpu_peak_flops(n_cores=2, lanes=16, n_fma=2, f_clk=2.6e9)
    332800000000
    """,
)

random_access_seconds = Formula(
    "random_access_seconds",
    ratio(product(R, sp.ceiling(ratio(product(d, s), c))), r_line),
    kind="seconds",
    lhs=r"t_{\text{random}}",
    summary="Lower bound on the time of R row fetches at random addresses: each costs "
    "⌈d·s/c⌉ whole lines, and memory sustains r_line independent line fetches per second.",
    doc="""
    The random-access roof counts misses, not bytes: a row at a random address shares no line
    with its neighbours (:data:`random_row_bytes`), and the memory system keeps only so many
    misses in flight, so the rate of line fetches, not the bytes per second, sets the ceiling.
    A million 16-byte rows at 100 million lines per second:

    >>> random_access_seconds(R=1_000_000, d=4, s=4, c=64, r_line=1e8)
    0.01
    """,
)

chain_seconds = Formula(
    "chain_seconds",
    product(
        S,
        sp.Max(ratio(F, P), ratio(Q, beta), total(product(n_ops, t_op), product(n_calls, t_call))),
    ),
    kind="seconds",
    lhs=r"t_{\text{chain}}",
    summary="Lower bound on the time of S dependent steps: no step starts before the one before "
    "it ends, and each takes at least its roofline time (F FLOPs and Q bytes per step) or its "
    "dispatch, whichever is longer: n_ops operations dispatched inside the framework at the "
    "per-operation floor t_op, and n_calls operations Python calls at the latency floor t_call.",
    doc="""
    The roofline assumes all of a kernel's work may overlap. An RNN's step t needs step t − 1's
    hidden state, so S steps add up; and a step too small to fill the machine still pays each
    operation's dispatch. An operation Python calls pays its argument parsing too, which one
    dispatched from inside C++ (an ``nn.RNN`` step) does not. 128 steps of 3 operations at
    1 µs and one call at 3 µs each: a step's arithmetic of 2 MFLOP at 100 GFLOP/s (20 µs)
    outlasts its dispatch (6 µs), while one of 0.2 MFLOP (2 µs) does not:

    >>> chain_seconds(S=128, F=2e6, Q=1e5, P=1e11, beta=1e10, n_ops=3, t_op=1e-6,
    ...               n_calls=1, t_call=3e-6)
    0.00256
    >>> chain_seconds(S=128, F=2e5, Q=1e4, P=1e11, beta=1e10, n_ops=3, t_op=1e-6,
    ...               n_calls=1, t_call=3e-6)
    0.000768
    """,
)

serial_chain_seconds = Formula(
    "serial_chain_seconds",
    product(S, total(ratio(F, P), product(n_ops, t_op), product(n_calls, t_call))),
    kind="seconds",
    lhs=r"t_{\text{chain}}^{\text{serial}}",
    summary="Lower bound on the time of S dependent steps where one thread dispatches each "
    "operation and then runs it (a CPU): each step's dispatch (n_ops operations at t_op, n_calls "
    "Python calls at t_call) and its F FLOPs at the rate P its products reach add up.",
    doc="""
    A GPU runs one kernel while the CPU launches the next, so there a step takes the longer of
    its dispatch and its work (:data:`chain_seconds`). On a CPU the thread that parses and
    dispatches an operation is the one that then computes it, so nothing overlaps: 128 steps of
    3 operations at 1 µs and one call at 3 µs, each step's 0.2 MFLOP at 100 GFLOP/s (2 µs):

    >>> serial_chain_seconds(S=128, F=2e5, P=1e11, n_ops=3, t_op=1e-6, n_calls=1, t_call=3e-6)
    0.001024
    """,
)

CATALOGUE: dict[str, Formula] = {
    f.name: f for f in globals().copy().values() if isinstance(f, Formula)
}
"""Every formula by name (the API reference shows it as a table).

:meta hide-value:
"""

__test__ = {name: f.__doc__ for name, f in CATALOGUE.items()}


def get(name: str) -> Formula:
    """The formula called ``name``, with a helpful error listing the names that exist.

    >>> get("mlp_macs").kind
    'MACs'
    >>> get("mlp_mac")
    Traceback (most recent call last):
    ...
    gpuconcepts.errors.GpuConceptsError: unknown formula 'mlp_mac'; did you mean mlp_macs? (gpuconcepts formulas lists them all)
    """
    if not isinstance(name, str):
        raise GpuConceptsTypeError(
            f"a formula name must be a string; got {name!r} ({type(name).__name__})"
        )
    if name in CATALOGUE:
        return CATALOGUE[name]
    close = get_close_matches(name, CATALOGUE, n=3)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise GpuConceptsError(f"unknown formula {name!r}{hint} (gpuconcepts formulas lists them all)")
