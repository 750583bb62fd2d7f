"""A recurrent layer (RNN, LSTM, GRU): the cost of one step, its traffic and intensity.

Part of the catalogue (:mod:`gpuconcepts.formulas`), in the book's order."""

from __future__ import annotations

from gpuconcepts.formula import Formula, product, ratio, total
from gpuconcepts.symbols import sym
from gpuconcepts.units import FLOPS_PER_MAC

s, B, d_in, d_h, S = (sym(n) for n in ("s", "B", "d_in", "d_h", "S"))

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
