"""The known layers: FLOPs and bytes from the catalogue's formulas, read from a call's
module configuration and its tensors' shapes.

``nn.Linear``, ``nn.Conv2d`` (any ``groups``), ``nn.Embedding`` and ``nn.EmbeddingBag``, the
recurrent layers (``nn.RNN``, ``nn.LSTM``, ``nn.GRU``, stacked and bidirectional),
``nn.MultiheadAttention`` (self- and cross-attention), and the functional calls
``F.scaled_dot_product_attention`` (any query and key lengths, grouped-query heads) and
``torch._grouped_mm`` (a mixture of experts), even inside a module of their own. Every other
call is what ``FlopCounterMode`` counts (:data:`~gpuconcepts.analysis.report.COUNTER`).

>>> import torch
>>> rows, experts = torch.empty(6, 4), torch.empty(2, 4, 8)  # 6 routed rows, 2 experts of 4 x 8
>>> known_function("torch._grouped_mm", (rows, experts), {})
(384, 'grouped_mm_flops')
"""

# torch is imported inside functions (README, Rules: 3).
# ruff: noqa: PLC0415

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from gpuconcepts import formulas
from gpuconcepts.analysis.report import COUNTER, TENSORS


def gathers(module: Any, input_shapes: Sequence[tuple[int, ...]]) -> tuple[int | None, int | None]:
    """An embedding's lookups for the random-access roof: the rows it reads and their bytes
    (``random_rows``, ``row_bytes`` of a :class:`~gpuconcepts.measure.Measurement`). A model's
    indices come from its data, so its rows are read as if at random addresses. (None, None)
    for every other call."""
    import torch

    if not isinstance(module, torch.nn.Embedding | torch.nn.EmbeddingBag) or not input_shapes:
        return None, None
    return math.prod(input_shapes[0]), module.embedding_dim * element_size(module)


# -- formulas of known types ---------------------------------------------------------------
def element_size(module: Any) -> int:
    return int(next(module.parameters()).element_size())


def _sequence(x: tuple[int, ...], batch_first: bool) -> tuple[int, int]:
    """(S, B) of a recurrent or attention input: (S, d) unbatched, else (S, B, d) or (B, S, d)."""
    if len(x) == 2:
        return x[0], 1
    return (x[1], x[0]) if batch_first else (x[0], x[1])


_RECURRENT = {"RNN": "rnn_flops", "LSTM": "lstm_flops", "GRU": "gru_flops"}
"""The recurrent module types and the formula of one layer of each."""


Counted = tuple[int, str, int | None, str]
"""(FLOPs, the formula that counted them, bytes or None for the tensors', the bytes' source)."""


def known_module(
    module: Any, shapes: Sequence[tuple[int, ...]], out: Sequence[tuple[int, ...]]
) -> Counted | None:
    """A call of a known module type counted from its configuration and its tensors' shapes
    (inputs ``shapes``, outputs ``out``, none of them empty); None for any other type."""
    import torch

    nn = torch.nn
    x = shapes[0]
    if isinstance(module, nn.Linear):
        B = math.prod(x) // module.in_features
        flops = formulas.mlp_flops(B=B, d_in=module.in_features, d_out=module.out_features)
        return int(flops), "mlp_flops", None, TENSORS
    if isinstance(module, nn.Conv2d):
        return _conv2d(module, out[0])
    if isinstance(module, nn.Embedding | nn.EmbeddingBag):
        return _embedding(module, x, out[0])
    recurrent = _RECURRENT.get(type(module).__name__)
    if recurrent is not None and isinstance(module, nn.RNNBase) and len(x) in (2, 3):
        return _recurrent(module, recurrent, x)
    if isinstance(module, nn.MultiheadAttention) and module._qkv_same_embed_dim:
        return _attention(module, x, shapes[1] if len(shapes) > 1 else x)
    return None


def _conv2d(module: Any, out: tuple[int, ...]) -> Counted | None:
    """An ``nn.Conv2d`` of square filters (depthwise, grouped or whole) by its output shape."""
    C_out, per_group, K, K_w = module.weight.shape
    if K_w != K or len(out) not in (3, 4):
        return None
    B = out[0] if len(out) == 4 else 1
    H_out, W_out = out[-2:]
    if module.groups == module.in_channels == module.out_channels:
        flops = formulas.depthwise_conv_flops(B=B, H_out=H_out, W_out=W_out, K=K, C=C_out)
        return int(flops), "depthwise_conv_flops", None, TENSORS
    # a grouped convolution: each output channel reads C_in / groups input channels
    flops = formulas.conv_flops(B=B, H_out=H_out, W_out=W_out, K=K, C_in=per_group, C_out=C_out)
    return int(flops), "conv_flops", None, TENSORS


def _embedding(module: Any, x: tuple[int, ...], out: tuple[int, ...]) -> Counted:
    """An ``nn.Embedding`` (a gather) or ``nn.EmbeddingBag`` (bags of equal or unequal sizes)
    of ``x``'s indices: the rows it reads, not its whole table."""
    import torch

    d, s, n = module.embedding_dim, element_size(module), math.prod(x)
    if isinstance(module, torch.nn.Embedding):
        # a gather: no arithmetic; each index reads one row and writes one
        return (
            0,
            COUNTER,
            int(formulas.embedding_bag_bytes(B=n, L=1, d=d, s=s)),
            "embedding_bag_bytes",
        )
    bags = out[0]
    if n % bags == 0:  # B bags of L rows (a 2-D input, or equal offsets)
        L = n // bags
        flops = formulas.embedding_bag_flops(B=bags, L=L, d=d)
        traffic = formulas.embedding_bag_bytes(B=bags, L=L, d=d, s=s)
        return int(flops), "embedding_bag_flops", int(traffic), "embedding_bag_bytes"
    flops = formulas.embedding_bag_flops(B=1, L=n, d=d)  # bags of unequal sizes: n rows in all
    traffic = formulas.embedding_payload(B=1, L=n, d=d, s=s) + bags * d * s
    return int(flops), "embedding_bag_flops", int(traffic), "embedding_payload + output"


def _recurrent(module: Any, recurrent: str, x: tuple[int, ...]) -> Counted | None:
    """An ``nn.RNN``, ``nn.LSTM`` or ``nn.GRU`` by its formula ``recurrent``, every layer and
    direction; None for an LSTM with projections."""
    if getattr(module, "proj_size", 0):
        return None  # an LSTM with projections: its recurrent width is not d_h
    S, B = _sequence(x, module.batch_first)
    formula = formulas.get(recurrent)
    directions = 2 if module.bidirectional else 1
    d_h, d_in, flops = module.hidden_size, module.input_size, 0
    for _ in range(module.num_layers):
        flops += directions * int(formula(B=B, S=S, d_in=d_in, d_h=d_h))
        d_in = d_h * directions
    return flops, recurrent, None, TENSORS


def _attention(module: Any, x: tuple[int, ...], k_shape: tuple[int, ...]) -> Counted | None:
    """An ``nn.MultiheadAttention`` of queries ``x`` and keys ``k_shape``: its four
    projections and the attention itself."""
    if len(x) not in (2, 3) or len(k_shape) != len(x):
        return None
    (S_q, B), (S_kv, _) = (
        _sequence(x, module.batch_first),
        _sequence(k_shape, module.batch_first),
    )
    E = module.embed_dim
    # Q and the output projection over the queries, K and V over the keys
    projections = 2 * int(formulas.mlp_flops(B=B * S_q, d_in=E, d_out=E))
    projections += 2 * int(formulas.mlp_flops(B=B * S_kv, d_in=E, d_out=E))
    if S_q == S_kv:
        flops = projections + int(formulas.attention_flops(B=B, S=S_q, d=E))
        return flops, "mlp_flops × 4 + attention_flops", None, TENSORS
    flops = projections + int(formulas.attention_flops_general(B=B, S_q=S_q, S_kv=S_kv, d=E))
    return flops, "mlp_flops × 4 + attention_flops_general", None, TENSORS


def inner_ops(counter_flops: int, inner: Sequence[tuple[str, int, int]]) -> Counted | None:
    """A module of its own around known ops (a mixture of experts' grouped matmul): what
    FlopCounterMode counted, with each known op's count replaced by its formula's. ``inner``
    holds (formula, its FLOPs, FlopCounterMode's) per op; None when there is none."""
    if not inner:
        return None
    correction = sum(flops - counted for _, flops, counted in inner)
    names = sorted({source for source, _, _ in inner})
    by_counter = counter_flops - sum(counted for _, _, counted in inner)
    source = " + ".join(([COUNTER] if by_counter else []) + names)
    return counter_flops + correction, source, None, TENSORS


_ARGUMENTS = {
    "F.scaled_dot_product_attention": (
        "query",
        "key",
        "value",
        "attn_mask",
        "dropout_p",
        "is_causal",
        "scale",
        "enable_gqa",
    ),
    "torch._grouped_mm": ("mat_a", "mat_b", "offs", "bias", "out_dtype"),
}
"""The positional parameters of the functional calls counted by a formula."""

KNOWN_OPS = frozenset(_ARGUMENTS)
"""The functional calls a formula counts, inside a leaf module too."""

COMPUTE_OPS = frozenset(
    {f"F.{n}" for n in ("linear", "bilinear", "scaled_dot_product_attention")}
    | {f"F.conv{k}d" for k in (1, 2, 3)}
    | {f"F.conv_transpose{k}d" for k in (1, 2, 3)}
    | {f"torch.{n}" for n in ("matmul", "mm", "bmm", "addmm", "baddbmm", "addbmm", "einsum")}
    | {"torch._grouped_mm", "torch.lstm", "torch.gru", "torch.rnn_tanh", "torch.rnn_relu"}
    | {f"Tensor.{n}" for n in ("matmul", "__matmul__", "__rmatmul__", "mm", "bmm")}
)
"""Functional calls that do arithmetic: one counted 0 FLOPs is a warning, not a silent 0."""


def known_function(
    name: str, args: Sequence[Any], kwargs: Mapping[str, Any]
) -> tuple[int, str] | None:
    """(FLOPs, formula) of a known functional call from its operands' shapes, else None.

    Attention: q of shape (B, heads, S_q, d_head) against k and v of (B, n_kv, S_kv, d_head);
    causal attention only where S_q = S_kv (PyTorch aligns a causal mask of another shape to
    the top left). A grouped matmul: the rows of all groups times d_in × d_out.
    """
    bound = dict(zip(_ARGUMENTS[name], args, strict=False)) if name in _ARGUMENTS else {}
    bound.update(kwargs)
    shapes = {k: tuple(int(n) for n in v.shape) for k, v in bound.items() if hasattr(v, "shape")}
    if name == "F.scaled_dot_product_attention" and {"query", "key", "value"} <= set(shapes):
        q, k, v = shapes["query"], shapes["key"], shapes["value"]
        if len(q) < 2 or k[-1] != q[-1] or v[-1] != q[-1] or k[-2] != v[-2] or 0 in q + k:
            return None  # a value width other than the queries': no catalogue formula
        B, d = (q[0], math.prod(q[1:-2]) * q[-1]) if len(q) >= 3 else (1, q[-1])
        S_q, S_kv = q[-2], k[-2]
        if bound.get("is_causal"):
            if S_q != S_kv:
                return None
            return int(formulas.attention_flops_causal(B=B, S=S_q, d=d)), "attention_flops_causal"
        if S_q == S_kv:
            return int(formulas.attention_flops(B=B, S=S_q, d=d)), "attention_flops"
        flops = formulas.attention_flops_general(B=B, S_q=S_q, S_kv=S_kv, d=d)
        return int(flops), "attention_flops_general"
    if name == "torch._grouped_mm" and {"mat_a", "mat_b"} <= set(shapes):
        a, b = shapes["mat_a"], shapes["mat_b"]
        ranks = (len(a), len(b))
        rows_in_out = (
            (a[0], a[1], b[-1])  # (rows, d_in) by (groups, d_in, d_out): the rows split
            if ranks in ((2, 3), (2, 2))  # or (rows, d_in) by (d_in, d_out): d_in split
            else (a[0] * a[1], a[2], b[-1])  # (groups, rows, d_in) by (groups, d_in, d_out)
            if ranks == (3, 3)
            else (a[1], a[2], b[-1])  # (groups, rows, d_in) by (d_in, d_out): d_out split
            if ranks == (3, 2)
            else None
        )
        if rows_in_out is None or 0 in rows_in_out:
            return None
        rows, d_in, d_out = rows_in_out
        flops = formulas.grouped_mm_flops(n_tokens=rows, top_k=1, d_in=d_in, d_out=d_out)
        return int(flops), "grouped_mm_flops"
    return None
