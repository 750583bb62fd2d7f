"""The post's own examples as kernels, for the hardware page: each with its arithmetic
intensity and the element type of its data, at the post's question sizes and at production
scale (:data:`LONG_PREFILL`).

>>> label, intensity, dtype = examples()[-1]
>>> dtype
'fp16'
"""

from __future__ import annotations

from gpuconcepts import formulas, model, units
from gpuconcepts.attention import Prefill
from gpuconcepts.questions import question

# Attention at production scale: a Llama-3-8B layer's width and heads over its whole context
_LLAMA = model.PRESETS["llama-3-8b-like"]
LONG_PREFILL = Prefill(B=1, S=_LLAMA.seq, d=_LLAMA.d, d_head=_LLAMA.d_head, s=2)


def question_examples() -> list[tuple[str, float, str]]:
    """The examples at the post's question sizes (Q11 to Q17): (label, intensity, element
    type), before the conversion to float."""
    q11, q12, q14, q15, q17 = (question(n).steps[0].values for n in (11, 12, 14, 15, 17))
    q17_prefill = Prefill(**{k: int(q17[k]) for k in "BSds"}, d_head=int(q17["d"]))
    depthwise = formulas.depthwise_conv_intensity(
        B=q14["B"], H_out=q14["H_out"], W_out=q14["W_out"], K=q14["K"], C=q14["C_in"], s=2
    )
    return [
        ("DLRM lookup, Q11 batch (FP32)", formulas.embedding_intensity(**q11), "fp32"),
        ("MLP layer, Q12 (FP16)", formulas.mlp_intensity(**q12, s=2), "fp16"),
        (
            "MLP layer, Q12 sizes at batch 1 (FP16)",
            formulas.mlp_intensity(**dict(q12, B=1), s=2),
            "fp16",
        ),
        ("Convolution, Q14 (FP16)", formulas.conv_intensity(**q14, s=2), "fp16"),
        ("Depthwise convolution, Q14 image, 16 channels (FP16)", depthwise, "fp16"),
        ("RNN, Q15 (FP16)", formulas.rnn_intensity(**q15, s=2), "fp16"),
        # Attention prefill twice: the minimal traffic (the bound) and a tiled kernel's, every
        # pass of K and V counted against HBM (gpuconcepts.attention, the one traffic model)
        (
            "Attention prefill, Q17 sizes (FP16), minimal traffic: the bound",
            q17_prefill.minimal_intensity,
            "fp16",
        ),
        (
            (
                "Attention prefill, Q17 sizes (FP16), "
                f"{q17_prefill.tile_rows}-row tiles, K and V from HBM"
            ),
            q17_prefill.tiled_intensity,
            "fp16",
        ),
        (
            "Attention decode step, Q17 cache (FP16)",
            formulas.attention_decode_intensity(**q17),
            "fp16",
        ),
    ]


def production_examples() -> list[tuple[str, float, str]]:
    """Two layers at production scale, beside the post's textbook sizes: an MLP layer at a
    large batch and a long prefill (:data:`LONG_PREFILL`), its bound and a tiled kernel's."""
    long_label = (
        f"{units.plain_number(LONG_PREFILL.S)} tokens, width {units.plain_number(LONG_PREFILL.d)}"
    )
    return [
        (
            "MLP layer 4096→1024 at batch 512 (FP16)",
            formulas.mlp_intensity(B=512, d_in=4096, d_out=1024, s=2),
            "fp16",
        ),
        (
            f"Attention prefill, {long_label} (FP16), minimal traffic: the bound",
            LONG_PREFILL.minimal_intensity,
            "fp16",
        ),
        (
            (
                f"Attention prefill, {long_label} (FP16), "
                f"{LONG_PREFILL.tile_rows}-row tiles, K and V from HBM"
            ),
            LONG_PREFILL.tiled_intensity,
            "fp16",
        ),
    ]


def examples() -> list[tuple[str, float, str]]:
    """The post's own examples as kernels: (label, intensity, element type of the data).

    >>> label, intensity, dtype = examples()[0]
    >>> label, units.significant(intensity), dtype
    ('DLRM lookup, Q11 batch (FP32)', '0.125', 'fp32')
    """
    rows = [*question_examples(), *production_examples()]
    return [(label, float(intensity), dtype) for label, intensity, dtype in rows]
