"""From a layer to a model: parameters, FLOPs per token, training and weight memory,
the KV cache with grouped heads, decode bounds, activations.

Part of the catalogue (:mod:`gpuconcepts.formulas`), in the book's order."""

from __future__ import annotations

from gpuconcepts.formula import Formula, product, ratio, total
from gpuconcepts.symbols import sym
from gpuconcepts.units import FLOPS_PER_MAC

N, d, s, B, S, P, beta, n_params, n_kv, d_head, d_ff, M_w, M_kv = (
    sym(n)
    for n in (
        "N",
        "d",
        "s",
        "B",
        "S",
        "P",
        "beta",
        "n_params",
        "n_kv",
        "d_head",
        "d_ff",
        "M_w",
        "M_kv",
    )
)

# -- From a layer to a model ---------------------------------------------------------------
# Whole-model accounting, after Kaplan et al. (2020) for 2N and 6N, the mixed-precision
# training papers for 16 bytes per parameter, and Korthikanti et al. (2022) for activations.

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
