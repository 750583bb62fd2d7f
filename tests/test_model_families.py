"""Each preset's count against ``sum(p.numel())`` of its Hugging Face-style architecture.

The modules are built on the meta device (no memory, nothing downloaded) with the layout and
names of the Hugging Face implementations (GPT2, Llama, Mistral, Gemma, Mixtral): their own
projections, norms, biases, router and head, a tied head sharing the embedding's tensor.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
from torch import nn

from gpuconcepts.model import PRESETS, ModelShape, active_params, params


class RMSNorm(nn.Module):
    def __init__(self, d: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d, device="meta"))


def _norm(shape: ModelShape) -> nn.Module:
    return nn.LayerNorm(shape.d, device="meta") if shape.norm == "layer" else RMSNorm(shape.d)


def _mlp(shape: ModelShape) -> nn.Module:
    bias = shape.bias == "all"
    mlp = nn.Module()
    if shape.gated:
        mlp.gate_proj = nn.Linear(shape.d, shape.d_ff, bias=bias, device="meta")
    mlp.up_proj = nn.Linear(shape.d, shape.d_ff, bias=bias, device="meta")
    mlp.down_proj = nn.Linear(shape.d_ff, shape.d, bias=bias, device="meta")
    return mlp


def _layer(shape: ModelShape) -> nn.Module:
    width, kv = shape.heads * shape.d_head, shape.n_kv * shape.d_head
    qkv_bias, out_bias = shape.bias in ("qkv", "all"), shape.bias == "all"
    layer = nn.Module()
    layer.input_layernorm = _norm(shape)
    layer.q_proj = nn.Linear(shape.d, width, bias=qkv_bias, device="meta")
    layer.k_proj = nn.Linear(shape.d, kv, bias=qkv_bias, device="meta")
    layer.v_proj = nn.Linear(shape.d, kv, bias=qkv_bias, device="meta")
    layer.o_proj = nn.Linear(width, shape.d, bias=out_bias, device="meta")
    layer.post_attention_layernorm = _norm(shape)
    if shape.experts > 1:  # Mixtral's block_sparse_moe: a router and the experts
        layer.gate = nn.Linear(shape.d, shape.experts, bias=False, device="meta")
        layer.experts = nn.ModuleList(_mlp(shape) for _ in range(shape.experts))
    else:
        layer.mlp = _mlp(shape)
    return layer


def hf_style(shape: ModelShape) -> nn.Module:
    model = nn.Module()
    model.embed_tokens = nn.Embedding(shape.vocab, shape.d, device="meta")
    if shape.positions:
        model.wpe = nn.Embedding(shape.positions, shape.d, device="meta")
    model.layers = nn.ModuleList(_layer(shape) for _ in range(shape.layers))
    model.norm = _norm(shape)
    model.lm_head = nn.Linear(shape.d, shape.vocab, bias=False, device="meta")
    if shape.tied:
        model.lm_head.weight = model.embed_tokens.weight
    return model


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_preset_count_is_the_architectures_numel(name):
    shape = PRESETS[name]
    model = hf_style(shape)
    assert sum(p.numel() for p in model.parameters()) == params(shape)


def test_mixtral_active_count_is_the_architecture_less_six_experts_per_layer():
    shape = PRESETS["mixtral-8x7b"]
    model = hf_style(shape)
    idle = sum(
        p.numel()
        for layer in model.layers
        for e in layer.experts[shape.top_k :]
        for p in e.parameters()
    )
    assert sum(p.numel() for p in model.parameters()) - idle == active_params(shape)
