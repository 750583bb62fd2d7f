"""Serving: what fits, decode intensity with the KV cache, latency floors, speculative
decoding.

Part of the catalogue (:mod:`gpuconcepts.formulas`), in the book's order."""

from __future__ import annotations

import sympy as sp

from gpuconcepts.formula import Formula, product, ratio, total
from gpuconcepts.symbols import sym
from gpuconcepts.units import FLOPS_PER_MAC

s, B, S, P, beta, n_params, n_kv, d_head, n_layers, M_dev, alpha, gamma, c_draft = (
    sym(n)
    for n in (
        "s",
        "B",
        "S",
        "P",
        "beta",
        "n_params",
        "n_kv",
        "d_head",
        "n_layers",
        "M_dev",
        "alpha",
        "gamma",
        "c_draft",
    )
)

# -- Serving: what fits, decode intensity with the KV cache, latency floors -------------------

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
