"""A model's weights, counted from its shapes by the formulas of :mod:`gpuconcepts.formulas`:
per layer and in all, those a token uses, those a decode step reads, and its KV cache.
"""

from __future__ import annotations

from gpuconcepts import formulas as f
from gpuconcepts.model.shape import NORMS, ModelShape


def attention_params(shape: ModelShape) -> int:
    """Weights of one layer's attention: Q (d × heads·d_head), K and V (d × n_kv·d_head each)
    and the output projection (heads·d_head × d).

    When heads·d_head = d this is ``gqa_attention_params``:

    >>> from gpuconcepts.model import PRESETS
    >>> llama3 = PRESETS["llama-3-8b-like"]
    >>> attention_params(llama3) == f.gqa_attention_params(d=4096, n_kv=8, d_head=128)
    True
    """
    width, kv = shape.heads * shape.d_head, shape.n_kv * shape.d_head
    query_out = f.mlp_weights(d_in=shape.d, d_out=width) + f.mlp_weights(d_in=width, d_out=shape.d)
    return int(query_out + 2 * f.mlp_weights(d_in=shape.d, d_out=kv))


def mlp_params(shape: ModelShape) -> int:
    """Weights of one MLP (one expert): three d × d_ff matrices when gated, else two."""
    if shape.gated:
        return int(f.gated_mlp_params(d=shape.d, d_ff=shape.d_ff))
    return int(  # up and down projections
        f.mlp_weights(d_in=shape.d, d_out=shape.d_ff)
        + f.mlp_weights(d_in=shape.d_ff, d_out=shape.d)
    )


def router_params(shape: ModelShape) -> int:
    """Weights of a mixture-of-experts router (d × experts), 0 for a dense model."""
    return int(f.mlp_weights(d_in=shape.d, d_out=shape.experts)) if shape.experts > 1 else 0


def layer_matmul_params(shape: ModelShape, experts: int | None = None) -> int:
    """Matrix weights of one layer: attention, ``experts`` MLPs (default: all) and the router.

    >>> from gpuconcepts.model import PRESETS
    >>> layer_matmul_params(PRESETS["gpt2-small"]) == f.transformer_layer_params(d=768, d_ff=3072)
    True
    """
    count = shape.experts if experts is None else experts
    return attention_params(shape) + count * mlp_params(shape) + router_params(shape)


def norm_params(shape: ModelShape) -> int:
    """Weights of one norm: d for an RMSNorm, 2d for a LayerNorm (scale and bias), else 0."""
    return NORMS[shape.norm] * shape.d


def expert_bias_params(shape: ModelShape) -> int:
    """Biases of one MLP (one expert) when every linear has them: up (and gate), then down."""
    return (2 if shape.gated else 1) * shape.d_ff + shape.d if shape.bias == "all" else 0


def bias_params(shape: ModelShape) -> int:
    """Biases of one layer: on Q, K and V (``qkv``), or on every linear (``all``)."""
    if shape.bias == "none":
        return 0
    qkv = (shape.heads + 2 * shape.n_kv) * shape.d_head
    if shape.bias == "qkv":
        return qkv
    return qkv + shape.d + shape.experts * expert_bias_params(shape)


def layer_params(shape: ModelShape) -> int:
    """Every weight of one layer: its matrices, its two norms and its biases."""
    return layer_matmul_params(shape) + 2 * norm_params(shape) + bias_params(shape)


def params(shape: ModelShape) -> int:
    """Every weight: the layers, the embedding, the head unless tied, learned positions and
    the final norm."""
    embedding = int(f.embedding_params(N=shape.vocab, d=shape.d))
    head = 0 if shape.tied else embedding
    positions = int(f.embedding_params(N=shape.positions, d=shape.d)) if shape.positions else 0
    rest = embedding + head + positions + norm_params(shape)
    return shape.layers * layer_params(shape) + rest


def active_params(shape: ModelShape) -> int:
    """The weights one token uses: every weight but the experts it is not routed to."""
    idle_experts = shape.layers * (shape.experts - shape.top_k)
    idle = idle_experts * (mlp_params(shape) + expert_bias_params(shape))
    return params(shape) - idle


def matmul_params(shape: ModelShape) -> int:
    """Matrix weights of every layer (all experts) and of the output head: what a decode step
    reads once every expert is in use (an embedding or a position lookup is a read of B rows,
    not a product)."""
    head = int(f.embedding_params(N=shape.vocab, d=shape.d))
    return shape.layers * layer_matmul_params(shape) + head


def active_matmul_params(shape: ModelShape) -> int:
    """Matrix weights one token is multiplied by: attention, its ``top_k`` experts, the router
    and the head. Equal to :func:`matmul_params` for a dense model."""
    head = int(f.embedding_params(N=shape.vocab, d=shape.d))
    return shape.layers * layer_matmul_params(shape, shape.top_k) + head


def attention_share(shape: ModelShape, S: int) -> float:
    """Per token, attention-score FLOPs over a layer's weight FLOPs at sequence length ``S``.

    One token's query against S keys and values is ``attention_decode_flops`` at B = 1, over
    the query width heads·d_head; the layer's weights a token uses cost
    ``forward_flops_per_token``. For multi-head attention and a two-matrix MLP this is
    ``attention_linear_flops_ratio``.
    """
    scores = f.attention_decode_flops(B=1, S=S, d=shape.heads * shape.d_head)
    linear = f.forward_flops_per_token(n_params=layer_matmul_params(shape, shape.top_k))
    return float(scores / linear)


def attention_crossover(shape: ModelShape) -> float:
    """The sequence length at which attention scores cost as much as the weights (share = 1)."""
    return 1 / attention_share(shape, 1)


def kv_cache(shape: ModelShape, *, B: int, S: int) -> int:
    """Bytes of the KV cache of every layer for B sequences of S tokens."""
    per_layer = f.gqa_kv_cache_memory(B=B, S=S, n_kv=shape.n_kv, d_head=shape.d_head, s=shape.s)
    return int(shape.layers * per_layer)
