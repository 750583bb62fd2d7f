"""An MLP's dense layer: MACs, FLOPs, weights, traffic and intensity.

Part of the catalogue (:mod:`gpuconcepts.formulas`), in the book's order."""

from __future__ import annotations

from gpuconcepts.formula import Formula, product, ratio, total
from gpuconcepts.symbols import sym
from gpuconcepts.units import FLOPS_PER_MAC

s, B, d_in, d_out = (sym(n) for n in ("s", "B", "d_in", "d_out"))

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
