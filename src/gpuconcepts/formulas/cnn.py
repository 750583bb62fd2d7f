"""A convolution, dense and depthwise: MACs, FLOPs, weights, traffic and intensity.

Part of the catalogue (:mod:`gpuconcepts.formulas`), in the book's order."""

from __future__ import annotations

from gpuconcepts.formula import Formula, product, ratio, total
from gpuconcepts.symbols import sym
from gpuconcepts.units import FLOPS_PER_MAC

s, B, H_out, W_out, K, C_in, C_out, C = (
    sym(n) for n in ("s", "B", "H_out", "W_out", "K", "C_in", "C_out", "C")
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
