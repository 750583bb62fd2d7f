"""A whole transformer model from its shapes: parameters, FLOPs, memory, decode and serving.

Pure (no torch): every number is a formula of :mod:`gpuconcepts.formulas` at the model's
shapes, multiplied by the layer count where a formula is per layer. The presets are
published shapes; the ``-like`` models have Llama's shapes, not its weights. Each preset
counts the norms and biases its family has, so its total is the published count.

Four parts, their names all reached here: :mod:`~gpuconcepts.model.shape` (the shapes and the
presets), :mod:`~gpuconcepts.model.counts` (weights and the KV cache),
:mod:`~gpuconcepts.model.serving` (one GPU's serving answer) and
:mod:`~gpuconcepts.model.table` (the whole table, :func:`account`).

>>> llama3 = PRESETS["llama-3-8b-like"]
>>> table = account(llama3)
>>> table.value("params")
8030261248
>>> table.value("kv_per_token")
131072
>>> account(PRESETS["gpt2-small"]).value("params")
124439808
>>> mixtral = PRESETS["mixtral-8x7b"]
>>> params(mixtral), active_params(mixtral)
(46702792704, 12879925248)
"""

from __future__ import annotations

from gpuconcepts.model.counts import (
    active_matmul_params,
    active_params,
    attention_crossover,
    attention_params,
    attention_share,
    bias_params,
    expert_bias_params,
    kv_cache,
    layer_matmul_params,
    layer_params,
    matmul_params,
    mlp_params,
    norm_params,
    params,
    router_params,
)
from gpuconcepts.model.serving import (
    Draft,
    Serving,
    serving,
)
from gpuconcepts.model.shape import (
    BIASES,
    GATED_MLP_MULTIPLE,
    MAX_SHAPE,
    NORMS,
    PRESETS,
    ModelShape,
    follow_d_ff,
    preset,
    shape_from,
)
from gpuconcepts.model.table import (
    ModelTable,
    Row,
    account,
)

__all__ = [
    "BIASES",
    "GATED_MLP_MULTIPLE",
    "MAX_SHAPE",
    "NORMS",
    "PRESETS",
    "Draft",
    "ModelShape",
    "ModelTable",
    "Row",
    "Serving",
    "account",
    "active_matmul_params",
    "active_params",
    "attention_crossover",
    "attention_params",
    "attention_share",
    "bias_params",
    "expert_bias_params",
    "follow_d_ff",
    "kv_cache",
    "layer_matmul_params",
    "layer_params",
    "matmul_params",
    "mlp_params",
    "norm_params",
    "params",
    "preset",
    "router_params",
    "serving",
    "shape_from",
]
