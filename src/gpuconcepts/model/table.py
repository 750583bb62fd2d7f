"""A model's table: every row of its accounting (weights, FLOPs, memory, decode) with the
formula behind each, and the serving answer under it (what ``gpuconcepts model`` prints).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

from gpuconcepts import formulas as f
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.hardware import DEFAULT_GPU, GPU, GPUS
from gpuconcepts.model.counts import (
    active_matmul_params,
    active_params,
    attention_crossover,
    attention_share,
    kv_cache,
    layer_params,
    params,
)
from gpuconcepts.model.serving import Draft, Serving, dtype_peak, serving
from gpuconcepts.model.shape import ModelShape
from gpuconcepts.tables import aligned
from gpuconcepts.units import Kind, describe, plain_number, significant


@dataclass(frozen=True)
class Row:
    """One line of a model table: a quantity, its value, its kind and the formula behind it."""

    key: str
    label: str
    value: int | float
    kind: Kind
    formula: str

    @property
    def text(self) -> str:
        """The value in words (bytes in both unit systems, seconds with a prefix)."""
        if self.kind == "count" and not float(self.value).is_integer():
            return f"{significant(self.value)}"
        return describe(self.value, self.kind)


@dataclass(frozen=True)
class ModelTable:
    """Every row of a model's accounting, for one shape and one datasheet GPU."""

    shape: ModelShape
    gpu: GPU
    rows: tuple[Row, ...]
    serving: Serving

    def row(self, key: str) -> Row:
        """The row with this key."""
        for row in self.rows:
            if row.key == key:
                return row
        raise GpuConceptsError(
            f"no row {key!r} in the model table; it has {', '.join(r.key for r in self.rows)}"
        )

    def value(self, key: str) -> int | float:
        """The value of the row with this key."""
        return self.row(key).value

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: the shape, the GPU, every row and the serving answer."""
        return {
            "shape": asdict(self.shape),
            "gpu": self.gpu.name,
            "serving": self.serving.to_dict(),
            "rows": [
                {
                    "key": r.key,
                    "label": r.label,
                    "value": r.value,
                    "unit": r.kind,
                    "text": r.text,
                    "formula": r.formula,
                }
                for r in self.rows
            ],
        }

    def to_json(self) -> str:
        """The JSON text of :meth:`to_dict`."""
        return json.dumps(self.to_dict(), indent=2)

    def format(self) -> str:
        """The table as aligned text (what ``gpuconcepts model`` prints)."""
        lines = [self.shape.describe(), f"decode rows at the {self.gpu.name} datasheet peaks"]
        lines += aligned([[r.label, r.text] for r in self.rows], left=2, indent="  ").split("\n")
        return "\n".join(lines + self.serving.lines())


def _gpu(gpu: GPU | str) -> GPU:
    if isinstance(gpu, str):
        if gpu not in GPUS:
            raise GpuConceptsError(f"unknown GPU {gpu!r}; one of {', '.join(GPUS)}")
        return GPUS[gpu]
    return gpu


def account(
    shape: ModelShape, gpu: GPU | str = DEFAULT_GPU, draft: Draft | None = None
) -> ModelTable:
    """The whole-model table of ``shape``; decode and serving rows use ``gpu``'s datasheet.

    A GPU whose datasheet has no peak in the model's dtype is refused (the T4 has no bf16).
    """
    gpu = _gpu(gpu)
    s, L = shape.s, shape.layers
    peak = dtype_peak(shape, gpu)
    n = params(shape)
    n_step = active_matmul_params(shape)
    tokens = shape.batch * shape.seq
    weights = f.weight_memory(n_params=n, s=s)
    cache = kv_cache(shape, B=shape.batch, S=shape.seq)
    rows = [
        Row("layer_params", "parameters per layer", layer_params(shape), "count",
            "attention + MLPs (+ router, norms, biases)"),
        Row("params", "parameters", n, "count", "layers × layer + embeddings + final norm"),
        Row("active_params", "parameters active per token", active_params(shape), "count",
            "parameters less the experts a token skips"),
        Row("forward_flops", "forward FLOPs per token", f.forward_flops_per_token(n_params=n_step),
            "FLOPs", "forward_flops_per_token"),
        Row("training_flops", "training FLOPs per token",
            f.training_flops_per_token(n_params=n_step), "FLOPs", "training_flops_per_token"),
        Row("weights", f"weights in {shape.dtype}", weights, "bytes", "weight_memory"),
        Row("adam", "training memory with Adam", f.adam_training_memory(n_params=n), "bytes",
            "adam_training_memory"),
        Row("kv_per_token", "KV cache per token", kv_cache(shape, B=1, S=1), "bytes",
            "gqa_kv_cache_memory × layers"),
        Row("kv_cache", f"KV cache, {shape.batch} × {plain_number(shape.seq)} tokens", cache, "bytes",
            "gqa_kv_cache_memory × layers"),
        Row("activations", f"activations, {plain_number(tokens)} tokens",
            L * tokens * f.layer_activation_memory(d=shape.d, d_ff=shape.d_ff, s=s), "bytes",
            "layer_activation_memory × layers"),
        Row("activations_recomputed", f"activations recomputed, {plain_number(tokens)} tokens",
            L * tokens * f.layer_activation_memory_recomputed(d=shape.d, s=s), "bytes",
            "layer_activation_memory_recomputed × layers"),
        Row("attention_share", f"attention ÷ linear FLOPs at {plain_number(shape.seq)} tokens",
            attention_share(shape, shape.seq), "count", "attention_decode_flops / 2·layer"),
        Row("attention_crossover", "attention overtakes the weights at S",
            attention_crossover(shape), "count", "attention_decode_flops / 2·layer"),
        Row("decode_floor", f"decode step floor on {gpu.name}",
            f.decode_seconds_lower_bound(M_w=f.weight_memory(n_params=n_step, s=s), M_kv=cache,
                                         beta=gpu.bytes_per_s),
            "seconds", "decode_seconds_lower_bound"),
        Row("decode_knee", "decode knee without a KV cache, batch",
            f.decode_compute_bound_batch(P=peak, s=s, beta=gpu.bytes_per_s), "count",
            "decode_compute_bound_batch"),
    ]  # fmt: skip
    return ModelTable(shape, gpu, tuple(rows), serving(shape, gpu, draft))
