"""A model's shapes: the :class:`ModelShape` value and its checks, the published presets, and
a preset with some shapes changed (:func:`shape_from`), the rest following the family's rules.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.hardware import dtype_bytes, dtype_name
from gpuconcepts.units import plain_number

NORMS = {"none": 0, "rms": 1, "layer": 2}
"""Weights per element of width d of each kind of norm: none, RMSNorm (a scale), LayerNorm
(a scale and a bias)."""

BIASES = ("none", "qkv", "all")
"""Where a family has biases: nowhere (Llama), on Q, K and V (Qwen2), on every linear (GPT-2)."""


MAX_SHAPE = 2**53
"""The largest size a shape may take: every whole number up to it is exact in a float64, and
products of a few such sizes (a layer's FLOPs, a KV cache) stay far below float64's 1.8e308,
where the serving times would overflow. No machine holds a model or a batch anywhere near it."""


@dataclass(frozen=True)
class ModelShape:
    """The shapes that fix a decoder-only transformer's cost.

    ``gated``: the MLP has three d × d_ff matrices (SwiGLU) instead of two. ``tied``: the
    output head reuses the input embedding. ``positions``: rows of a learned position table
    (0 for rotary positions, which have no weights). ``heads × d_head`` may differ from ``d``
    (Gemma). ``norm``: ``none``, ``rms`` or ``layer``, two per layer and a final one;
    ``bias``: ``none``, ``qkv`` or ``all``. ``experts`` MLPs per layer, ``top_k`` of them
    per token, chosen by a d × experts router (1 and 1: a dense model). ``dtype`` takes a
    kernel name or its alias (``bf16``) and keeps the kernel name.
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
    norm: str = "none"
    bias: str = "none"
    experts: int = 1
    top_k: int = 1

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
            ("experts", "MLP experts per layer"),
            ("top_k", "experts per token"),
        ):
            value = getattr(self, field_name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise GpuConceptsError(
                    f"model {self.name}: {field_name} ({meaning}) must be a positive whole "
                    f"number; got {value!r}"
                )
            if value > MAX_SHAPE:
                raise GpuConceptsError(
                    f"model {self.name}: {field_name} ({meaning}) must be at most 2**53 "
                    f"({plain_number(MAX_SHAPE)}), past any machine; got a "
                    f"{len(str(value))}-digit number"
                )
        if isinstance(self.positions, bool) or not isinstance(self.positions, int):
            raise GpuConceptsError(f"model {self.name}: positions must be a whole number")
        if self.positions < 0:
            raise GpuConceptsError(
                f"model {self.name}: positions (learned position rows) must be 0 or more; "
                f"got {self.positions}"
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
        if self.top_k > self.experts:
            raise GpuConceptsError(
                f"model {self.name}: top_k (experts per token) must be at most experts "
                f"({self.experts}); got {self.top_k}"
            )
        if self.norm not in NORMS:
            raise GpuConceptsError(
                f"model {self.name}: norm must be one of {', '.join(NORMS)}; got {self.norm!r}"
            )
        if self.bias not in BIASES:
            raise GpuConceptsError(
                f"model {self.name}: bias must be one of {', '.join(BIASES)}; got {self.bias!r}"
            )
        try:
            object.__setattr__(self, "dtype", dtype_name(self.dtype))
        except GpuConceptsError as error:
            raise GpuConceptsError(f"model {self.name}: dtype: {error}") from None

    @property
    def s(self) -> int:
        """Bytes per element of the model's dtype."""
        return dtype_bytes(self.dtype)

    @property
    def attention(self) -> str:
        """``MHA``, ``GQA`` or ``MQA``, from the number of key/value heads."""
        if self.n_kv == self.heads:
            return "MHA"
        return "MQA" if self.n_kv == 1 else "GQA"

    def describe(self) -> str:
        """One line: the shapes as a person would list them."""
        mlp = "gated MLP" if self.gated else "MLP"
        if self.experts > 1:
            mlp = f"{self.experts} {mlp} experts (top {self.top_k})"
        tied = ", tied head" if self.tied else ""
        return (
            f"{self.name}: d={plain_number(self.d)}, {self.layers} layers, {mlp} of {plain_number(self.d_ff)}, "
            f"{self.heads} heads of {self.d_head} ({self.attention}, {self.n_kv} KV heads), "
            f"vocab {plain_number(self.vocab)}{tied}, {plain_number(self.seq)} tokens × batch {self.batch}, {self.dtype}"
        )


_LLAMA: dict[str, Any] = {"gated": True, "norm": "rms"}  # SwiGLU MLP, RMSNorm, no biases

PRESETS: dict[str, ModelShape] = {
    shape.name: shape
    for shape in (
        # Radford et al. 2019, the 124M model: learned positions, tied head, LayerNorm, biases.
        ModelShape("gpt2-small", d=768, layers=12, d_ff=3072, heads=12, n_kv=12, d_head=64,
                   vocab=50257, seq=1024, tied=True, positions=1024, norm="layer", bias="all"),
        # Touvron et al. 2023 (Llama 2), 7B: multi-head attention.
        ModelShape("llama-2-7b-like", d=4096, layers=32, d_ff=11008, heads=32, n_kv=32,
                   d_head=128, vocab=32000, seq=4096, **_LLAMA),
        # Llama 3 8B: grouped-query attention with 8 KV heads.
        ModelShape("llama-3-8b-like", d=4096, layers=32, d_ff=14336, heads=32, n_kv=8,
                   d_head=128, vocab=128256, seq=8192, **_LLAMA),
        # Llama 2 70B: grouped-query attention with 8 KV heads.
        ModelShape("llama-2-70b", d=8192, layers=80, d_ff=28672, heads=64, n_kv=8,
                   d_head=128, vocab=32000, seq=4096, **_LLAMA),
        # Mistral 7B v0.1: Llama's layout, 8 KV heads. Its sliding window of 4,096 tokens caps
        # the cache, which the table does not model: its context here is the window.
        ModelShape("mistral-7b", d=4096, layers=32, d_ff=14336, heads=32, n_kv=8,
                   d_head=128, vocab=32000, seq=4096, **_LLAMA),
        # Llama 3.2 1B: tied embedding and head.
        ModelShape("llama-3.2-1b", d=2048, layers=16, d_ff=8192, heads=32, n_kv=8,
                   d_head=64, vocab=128256, seq=131072, tied=True, **_LLAMA),
        # Gemma 7B: 16 heads of 256 (4,096 wide) on a 3,072-wide model, tied head.
        ModelShape("gemma-7b", d=3072, layers=28, d_ff=24576, heads=16, n_kv=16,
                   d_head=256, vocab=256000, seq=8192, tied=True, **_LLAMA),
        # Qwen2 7B: 4 KV heads of 128 on d = 3,584, biases on Q, K and V, untied head; its
        # native pretraining context, 32,768 tokens.
        ModelShape("qwen2-7b", d=3584, layers=28, d_ff=18944, heads=28, n_kv=4,
                   d_head=128, vocab=152064, seq=32768, bias="qkv", **_LLAMA),
        # Mixtral 8x7B: Mistral's attention, 8 gated MLP experts per layer, 2 per token.
        ModelShape("mixtral-8x7b", d=4096, layers=32, d_ff=14336, heads=32, n_kv=8,
                   d_head=128, vocab=32000, seq=32768, experts=8, top_k=2, **_LLAMA),
    )
}  # fmt: skip
"""Published shapes, by name, from each model's configuration."""


def preset(name: str) -> ModelShape:
    """A preset by name, with an error that lists the names."""
    if name not in PRESETS:
        raise GpuConceptsError(f"unknown model preset {name!r}; one of {', '.join(PRESETS)}")
    return PRESETS[name]


GATED_MLP_MULTIPLE = 256
"""Llama's ``multiple_of``: a gated MLP's width is rounded up to a multiple of it, so the
matrices tile evenly on the hardware."""


def follow_d_ff(base: ModelShape, d: int) -> int:
    """The MLP width ``base``'s family gives a model of width ``d``: ``base``'s ratio d_ff / d,
    rounded up to a multiple of 256 when gated (Llama's rule), exact otherwise (GPT-2's 4·d).

    >>> follow_d_ff(PRESETS["gpt2-small"], 1600)  # GPT-2 XL
    6400
    >>> follow_d_ff(PRESETS["llama-2-7b-like"], 4096)  # the preset's own width comes back
    11008
    >>> follow_d_ff(PRESETS["llama-2-7b-like"], 5120)  # Llama 2 13B publishes 13,824
    13824
    """
    multiple = GATED_MLP_MULTIPLE if base.gated else 1
    return -(-base.d_ff * d // (base.d * multiple)) * multiple


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
    tied: bool | None = None,
    experts: int | None = None,
    top_k: int | None = None,
) -> ModelShape:
    """``base`` with the given shapes changed.

    heads and d_head follow d when neither is given (d_head kept); given one, the other is
    d divided by it; given both, heads × d_head may differ from d (Gemma). The KV heads
    follow the heads unless given: each KV head keeps serving the same number of query heads.
    d_ff follows d unless given, by the family's rule (``follow_d_ff``).

    >>> shape_from(PRESETS["llama-3-8b-like"], d=2048).heads
    16
    >>> shape_from(PRESETS["llama-2-7b-like"], heads=64).n_kv  # MHA stays MHA
    64
    >>> shape_from(PRESETS["llama-3-8b-like"], heads=64).n_kv  # 4 query heads per KV head
    16
    >>> gemma = PRESETS["gemma-7b"]
    >>> shape_from(gemma, seq=1024).heads * shape_from(gemma, seq=1024).d_head
    4096
    >>> shape_from(PRESETS["gpt2-small"], d=1000, d_head=None).heads
    Traceback (most recent call last):
    ...
    gpuconcepts.errors.GpuConceptsError: model gpt2-small: d_head (head width) must divide d (model width); 1000 is not a multiple of 64
    """
    changes: dict[str, Any] = {
        k: v
        for k, v in {
            "d": d, "layers": layers, "d_ff": d_ff, "vocab": vocab, "seq": seq, "batch": batch,
            "dtype": dtype, "gated": gated, "tied": tied, "experts": experts, "top_k": top_k,
        }.items()
        if v is not None
    }  # fmt: skip
    if d_ff is None and d is not None and d > 0:
        changes["d_ff"] = follow_d_ff(base, d)
    changes |= attention_heads(base, d, heads=heads, d_head=d_head, n_kv=n_kv)
    return replace(base, **changes)


def attention_heads(
    base: ModelShape, d: int | None, *, heads: int | None, d_head: int | None, n_kv: int | None
) -> dict[str, int]:
    """The query heads, their width and the KV heads of ``base`` at width ``d`` (None: kept),
    by :func:`shape_from`'s rules, as the fields to change.

    >>> attention_heads(PRESETS["llama-3-8b-like"], 2048, heads=None, d_head=None, n_kv=None)
    {'heads': 16, 'd_head': 128, 'n_kv': 4}
    """
    width = base.d if d is None else d
    if heads is not None and d_head is None and heads > 0:
        if width % heads:
            raise GpuConceptsError(
                f"model {base.name}: heads (query heads) must divide d (model width); "
                f"{width} is not a multiple of {heads}"
            )
        d_head = width // heads
    if heads is None and (d_head is not None or d is not None):
        d_head = base.d_head if d_head is None else d_head
        if d_head > 0:
            if width % d_head:
                raise GpuConceptsError(
                    f"model {base.name}: d_head (head width) must divide d (model width); "
                    f"{width} is not a multiple of {d_head}"
                )
            heads = width // d_head
    heads = base.heads if heads is None else heads
    d_head = base.d_head if d_head is None else d_head
    if n_kv is None and heads != base.heads and heads > 0:
        group = base.heads // base.n_kv  # query heads per KV head
        if heads % group:
            raise GpuConceptsError(
                f"model {base.name}: give n_kv (key/value heads): heads {heads} is not a "
                f"multiple of the {group} query heads each KV head of {base.name} serves"
            )
        n_kv = heads // group
    return {"heads": heads, "d_head": d_head, "n_kv": base.n_kv if n_kv is None else n_kv}
