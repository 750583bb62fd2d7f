"""A whole transformer model from its shapes: parameters, FLOPs, memory and decode, per token.

Pure (no torch): every number is a formula of :mod:`gpuconcepts.formulas` at the model's
shapes, multiplied by the layer count where a formula is per layer. Three published shapes
come as presets; the ``-like`` models have Llama's shapes, not its weights.

>>> llama3 = PRESETS["llama-3-8b-like"]
>>> table = account(llama3)
>>> table.value("params")
8029995008
>>> table.value("kv_per_token")
131072
>>> account(PRESETS["gpt2-small"]).value("params")
124318464
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace
from typing import Any

from gpuconcepts import formulas as f
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.hardware import GPU, GPUS
from gpuconcepts.units import Kind, describe

DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}
"""Bytes per element of the dtypes a model table accepts."""

DEFAULT_GPU = "H100 SXM"
"""The datasheet GPU whose bandwidth and peak the table's decode rows use, unless told."""


@dataclass(frozen=True)
class ModelShape:
    """The shapes that fix a decoder-only transformer's cost.

    ``gated``: the MLP has three d × d_ff matrices (SwiGLU) instead of two. ``tied``: the
    output head reuses the input embedding. ``positions``: rows of a learned position table
    (0 for rotary positions, which have no weights).
    """

    name: str
    d: int
    layers: int
    d_ff: int
    heads: int
    n_kv: int
    d_head: int
    vocab: int
    seq: int
    batch: int = 1
    dtype: str = "bfloat16"
    gated: bool = False
    tied: bool = False
    positions: int = 0

    def __post_init__(self) -> None:
        for field_name, meaning in (
            ("d", "model width"),
            ("layers", "transformer layers"),
            ("d_ff", "MLP width"),
            ("heads", "query heads"),
            ("n_kv", "key/value heads"),
            ("d_head", "head width"),
            ("vocab", "vocabulary size"),
            ("seq", "sequence length"),
            ("batch", "batch size"),
        ):
            value = getattr(self, field_name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise GpuConceptsError(
                    f"model {self.name}: {field_name} ({meaning}) must be a positive whole "
                    f"number; got {value!r}"
                )
        if isinstance(self.positions, bool) or not isinstance(self.positions, int):
            raise GpuConceptsError(f"model {self.name}: positions must be a whole number")
        if self.positions < 0:
            raise GpuConceptsError(
                f"model {self.name}: positions (learned position rows) must be 0 or more; "
                f"got {self.positions}"
            )
        if self.d % self.heads:
            raise GpuConceptsError(
                f"model {self.name}: heads (query heads) must divide d (model width); "
                f"{self.d} is not a multiple of {self.heads}"
            )
        if self.heads * self.d_head != self.d:
            raise GpuConceptsError(
                f"model {self.name}: heads × d_head must equal d; "
                f"{self.heads} × {self.d_head} = {self.heads * self.d_head}, not {self.d}"
            )
        if self.n_kv > self.heads:
            raise GpuConceptsError(
                f"model {self.name}: n_kv (key/value heads) must be at most heads "
                f"({self.heads}); got {self.n_kv}"
            )
        if self.heads % self.n_kv:
            raise GpuConceptsError(
                f"model {self.name}: n_kv (key/value heads) must divide heads ({self.heads}), "
                f"each serving a whole group of query heads; got {self.n_kv}"
            )
        if self.dtype not in DTYPE_BYTES:
            raise GpuConceptsError(
                f"model {self.name}: dtype must be one of {', '.join(DTYPE_BYTES)}; "
                f"got {self.dtype!r}"
            )

    @property
    def s(self) -> int:
        """Bytes per element of the model's dtype."""
        return DTYPE_BYTES[self.dtype]

    @property
    def attention(self) -> str:
        """``MHA``, ``GQA`` or ``MQA``, from the number of key/value heads."""
        if self.n_kv == self.heads:
            return "MHA"
        return "MQA" if self.n_kv == 1 else "GQA"

    def describe(self) -> str:
        """One line: the shapes as a person would list them."""
        mlp = "gated MLP" if self.gated else "MLP"
        return (
            f"{self.name}: d={self.d:,}, {self.layers} layers, {mlp} of {self.d_ff:,}, "
            f"{self.heads} heads of {self.d_head} ({self.attention}, {self.n_kv} KV heads), "
            f"vocab {self.vocab:,}, {self.seq:,} tokens × batch {self.batch}, {self.dtype}"
        )


PRESETS: dict[str, ModelShape] = {
    shape.name: shape
    for shape in (
        # Radford et al. 2019, the 124M model: learned positions, tied head.
        ModelShape(
            "gpt2-small",
            d=768,
            layers=12,
            d_ff=3072,
            heads=12,
            n_kv=12,
            d_head=64,
            vocab=50257,
            seq=1024,
            tied=True,
            positions=1024,
        ),
        # Touvron et al. 2023 (Llama 2), 7B: multi-head attention, SwiGLU MLP.
        ModelShape(
            "llama-2-7b-like",
            d=4096,
            layers=32,
            d_ff=11008,
            heads=32,
            n_kv=32,
            d_head=128,
            vocab=32000,
            seq=4096,
            gated=True,
        ),
        # Llama 3 8B: grouped-query attention with 8 KV heads, SwiGLU MLP.
        ModelShape(
            "llama-3-8b-like",
            d=4096,
            layers=32,
            d_ff=14336,
            heads=32,
            n_kv=8,
            d_head=128,
            vocab=128256,
            seq=8192,
            gated=True,
        ),
    )
}
"""Published shapes, by name (biases and norms are not counted)."""


def preset(name: str) -> ModelShape:
    """A preset by name, with an error that lists the names."""
    if name not in PRESETS:
        raise GpuConceptsError(f"unknown model preset {name!r}; one of {', '.join(PRESETS)}")
    return PRESETS[name]


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
            return f"{self.value:,.3g}"
        return describe(self.value, self.kind)


@dataclass(frozen=True)
class ModelTable:
    """Every row of a model's accounting, for one shape and one datasheet GPU."""

    shape: ModelShape
    gpu: GPU
    rows: tuple[Row, ...]

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
        """JSON-ready form: the shape, the GPU and every row."""
        return {
            "shape": asdict(self.shape),
            "gpu": self.gpu.name,
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
        width = max(len(r.label) for r in self.rows)
        lines = [self.shape.describe(), f"decode rows at the {self.gpu.name} datasheet peaks"]
        lines += [f"  {r.label.ljust(width)}  {r.text}" for r in self.rows]
        return "\n".join(lines)


def layer_params(shape: ModelShape) -> int:
    """Weights of one layer: attention (any number of KV heads) and the MLP (two or three
    matrices).

    >>> layer_params(PRESETS["gpt2-small"]) == f.transformer_layer_params(d=768, d_ff=3072)
    True
    """
    attention = f.gqa_attention_params(d=shape.d, n_kv=shape.n_kv, d_head=shape.d_head)
    if shape.gated:
        mlp = f.gated_mlp_params(d=shape.d, d_ff=shape.d_ff)
    else:  # up and down projections
        mlp = f.mlp_weights(d_in=shape.d, d_out=shape.d_ff) + f.mlp_weights(
            d_in=shape.d_ff, d_out=shape.d
        )
    return int(attention + mlp)


def params(shape: ModelShape) -> int:
    """Every weight: the layers, the embedding, the head unless tied, learned positions."""
    embedding = int(f.embedding_params(N=shape.vocab, d=shape.d))
    head = 0 if shape.tied else embedding
    positions = int(f.embedding_params(N=shape.positions, d=shape.d)) if shape.positions else 0
    return shape.layers * layer_params(shape) + embedding + head + positions


def matmul_params(shape: ModelShape) -> int:
    """Weights a token is multiplied by: every layer and the output head (an embedding or a
    position lookup is a read, not a product)."""
    head = int(f.embedding_params(N=shape.vocab, d=shape.d))
    return shape.layers * layer_params(shape) + head


def attention_share(shape: ModelShape, S: int) -> float:
    """Per token, attention-score FLOPs over a layer's weight FLOPs at sequence length ``S``.

    One token's query against S keys and values is ``attention_decode_flops`` at B = 1; the
    layer's weights cost ``forward_flops_per_token``. For multi-head attention and a two-matrix
    MLP this is ``attention_linear_flops_ratio``.
    """
    scores = f.attention_decode_flops(B=1, S=S, d=shape.d)
    linear = f.forward_flops_per_token(n_params=layer_params(shape))
    return float(scores / linear)


def attention_crossover(shape: ModelShape) -> float:
    """The sequence length at which attention scores cost as much as the weights (share = 1)."""
    return 1 / attention_share(shape, 1)


def kv_cache(shape: ModelShape, *, B: int, S: int) -> int:
    """Bytes of the KV cache of every layer for B sequences of S tokens."""
    per_layer = f.gqa_kv_cache_memory(B=B, S=S, n_kv=shape.n_kv, d_head=shape.d_head, s=shape.s)
    return int(shape.layers * per_layer)


def account(shape: ModelShape, gpu: GPU | str = DEFAULT_GPU) -> ModelTable:
    """The whole-model table of ``shape``; decode rows use ``gpu``'s datasheet peaks."""
    if isinstance(gpu, str):
        if gpu not in GPUS:
            raise GpuConceptsError(f"unknown GPU {gpu!r}; one of {', '.join(GPUS)}")
        gpu = GPUS[gpu]
    s, L = shape.s, shape.layers
    n = params(shape)
    n_matmul = matmul_params(shape)
    tokens = shape.batch * shape.seq
    weights = f.weight_memory(n_params=n, s=s)
    cache = kv_cache(shape, B=shape.batch, S=shape.seq)
    peak = gpu.peak(shape.dtype)
    rows = [
        Row("layer_params", "parameters per layer", layer_params(shape), "count",
            "gqa_attention_params + MLP"),
        Row("params", "parameters", n, "count", "layers × layer + embeddings"),
        Row("forward_flops", "forward FLOPs per token", f.forward_flops_per_token(n_params=n_matmul),
            "FLOPs", "forward_flops_per_token"),
        Row("training_flops", "training FLOPs per token",
            f.training_flops_per_token(n_params=n_matmul), "FLOPs", "training_flops_per_token"),
        Row("weights", f"weights in {shape.dtype}", weights, "bytes", "weight_memory"),
        Row("adam", "training memory with Adam", f.adam_training_memory(n_params=n), "bytes",
            "adam_training_memory"),
        Row("kv_per_token", "KV cache per token", kv_cache(shape, B=1, S=1), "bytes",
            "gqa_kv_cache_memory × layers"),
        Row("kv_cache", f"KV cache, {shape.batch} × {shape.seq:,} tokens", cache, "bytes",
            "gqa_kv_cache_memory × layers"),
        Row("activations", f"activations, {tokens:,} tokens",
            L * tokens * f.layer_activation_memory(d=shape.d, d_ff=shape.d_ff, s=s), "bytes",
            "layer_activation_memory × layers"),
        Row("activations_recomputed", f"activations recomputed, {tokens:,} tokens",
            L * tokens * f.layer_activation_memory_recomputed(d=shape.d, s=s), "bytes",
            "layer_activation_memory_recomputed × layers"),
        Row("attention_share", f"attention ÷ linear FLOPs at {shape.seq:,} tokens",
            attention_share(shape, shape.seq), "count", "attention_decode_flops / 2·layer"),
        Row("attention_crossover", "attention overtakes the weights at S",
            attention_crossover(shape), "count", "attention_decode_flops / 2·layer"),
        Row("decode_floor", f"decode step floor on {gpu.name}",
            f.decode_seconds_lower_bound(M_w=weights, M_kv=cache, beta=gpu.bytes_per_s),
            "seconds", "decode_seconds_lower_bound"),
    ]  # fmt: skip
    if peak is not None:
        rows.append(
            Row(
                "decode_knee",
                f"decode turns compute-bound on {gpu.name} at batch",
                f.decode_compute_bound_batch(P=peak, s=s, beta=gpu.bytes_per_s),
                "count",
                "decode_compute_bound_batch",
            )
        )
    return ModelTable(shape, gpu, tuple(rows))


def shape_from(
    base: ModelShape,
    *,
    d: int | None = None,
    layers: int | None = None,
    d_ff: int | None = None,
    heads: int | None = None,
    n_kv: int | None = None,
    d_head: int | None = None,
    vocab: int | None = None,
    seq: int | None = None,
    batch: int | None = None,
    dtype: str | None = None,
    gated: bool | None = None,
) -> ModelShape:
    """``base`` with the given shapes changed; heads and d_head follow d when not given.

    >>> shape_from(PRESETS["llama-3-8b-like"], d=2048).heads
    16
    >>> shape_from(PRESETS["gpt2-small"], d=1000, d_head=None).heads
    Traceback (most recent call last):
    ...
    gpuconcepts.errors.GpuConceptsError: model gpt2-small: d_head (head width) must divide d (model width); 1000 is not a multiple of 64
    """
    changes: dict[str, Any] = {
        k: v
        for k, v in {
            "d": d, "layers": layers, "d_ff": d_ff, "n_kv": n_kv, "vocab": vocab, "seq": seq, "batch": batch,
            "dtype": dtype, "gated": gated,
        }.items()
        if v is not None
    }  # fmt: skip
    width = base.d if d is None else d
    if heads is not None and d_head is None and heads > 0:
        if width % heads:
            raise GpuConceptsError(
                f"model {base.name}: heads (query heads) must divide d (model width); "
                f"{width} is not a multiple of {heads}"
            )
        d_head = width // heads
    if d_head is None:
        d_head = base.d_head
    if heads is None and d_head > 0:
        if width % d_head:
            raise GpuConceptsError(
                f"model {base.name}: d_head (head width) must divide d (model width); "
                f"{width} is not a multiple of {d_head}"
            )
        heads = width // d_head
    changes |= {"heads": heads, "d_head": d_head}
    return replace(base, **changes)
