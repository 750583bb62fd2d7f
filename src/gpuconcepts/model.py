"""A whole transformer model from its shapes: parameters, FLOPs, memory, decode and serving.

Pure (no torch): every number is a formula of :mod:`gpuconcepts.formulas` at the model's
shapes, multiplied by the layer count where a formula is per layer. The presets are
published shapes; the ``-like`` models have Llama's shapes, not its weights. Each preset
counts the norms and biases its family has, so its total is the published count.

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

import json
from dataclasses import asdict, dataclass, replace
from typing import Any

from gpuconcepts import formulas as f
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.hardware import DEFAULT_GPU, GPU, GPUS, TORCH_DTYPES, dtype_bytes, dtype_name
from gpuconcepts.tables import aligned
from gpuconcepts.units import Kind, describe, describe_bytes, plain_number, significant

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


def attention_params(shape: ModelShape) -> int:
    """Weights of one layer's attention: Q (d × heads·d_head), K and V (d × n_kv·d_head each)
    and the output projection (heads·d_head × d).

    When heads·d_head = d this is ``gqa_attention_params``:

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


@dataclass(frozen=True)
class Draft:
    """A speculative-decoding draft: each drafted token is accepted with chance ``alpha``,
    ``gamma`` tokens are drafted per step, and a draft step costs ``cost`` target steps
    (None: not given, so the speedup is the upper bound of a free draft, ``c_draft = 0``)."""

    alpha: float
    gamma: int
    cost: float | None = None


@dataclass(frozen=True)
class Serving:
    """The serving answer for one shape on one GPU: what fits, how decode is bound, latency.

    Memory counts every weight (:func:`params`); the decode step's FLOPs and bytes count the
    matrix weights a token uses (:func:`active_matmul_params`). For a mixture of experts
    that is a step reading only the routed experts, so its intensity is an upper bound and
    its times stay lower bounds.
    """

    gpu: str
    dtype: str
    seq: int
    batch: int
    memory_bytes: int
    weights_bytes: int
    kv_cache_bytes: int
    max_batch: int
    intensity_at_max_batch: float | None
    intensity_limit: float
    ridge_point: float
    compute_bound_batch: int | None
    ttft_seconds: float
    tpot_seconds: float
    draft: Draft | None = None
    expected_tokens: float | None = None
    speculative_speedup: float | None = None
    mixture: bool = False

    @property
    def fits(self) -> bool:
        """Whether the weights and the KV cache of ``batch`` sequences fit in the GPU."""
        return self.weights_bytes + self.kv_cache_bytes <= self.memory_bytes

    @property
    def can_be_compute_bound(self) -> bool:
        """Whether some batch, memory aside, makes decode compute-bound at this context."""
        return self.compute_bound_batch is not None

    @property
    def compute_bound_within_memory(self) -> bool:
        """Whether a batch that fits makes decode compute-bound at this context."""
        return self.compute_bound_batch is not None and self.compute_bound_batch <= self.max_batch

    def verdict(self) -> str:
        """Whether decode can become compute-bound at this context, in one sentence."""
        limit = significant(self.intensity_limit)
        ridge = f"{significant(self.ridge_point)}"
        if self.compute_bound_batch is None:
            return (
                f"decode is never compute-bound at {plain_number(self.seq)} tokens: its intensity tends to "
                f"{limit} FLOP/byte as the batch grows, below the ridge point of {ridge}"
            )
        if self.compute_bound_batch > self.max_batch:
            return (
                f"decode turns compute-bound only from batch {plain_number(self.compute_bound_batch)}, but "
                f"at most {plain_number(max(self.max_batch, 0))} sequences of {plain_number(self.seq)} tokens fit"
            )
        return (
            f"decode turns compute-bound from batch {plain_number(self.compute_bound_batch)} (ridge point "
            f"{ridge}), and up to {plain_number(self.max_batch)} sequences of {plain_number(self.seq)} tokens fit"
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form, with the derived answers as fields."""
        record = asdict(self)
        record |= {
            "fits": self.fits,
            "decode_can_be_compute_bound": self.can_be_compute_bound,
            "compute_bound_within_memory": self.compute_bound_within_memory,
            "verdict": self.verdict(),
        }
        return record

    def lines(self) -> list[str]:
        """The answer as labelled lines (what ``gpuconcepts model`` prints under the table)."""
        total = self.weights_bytes + self.kv_cache_bytes
        fit = "fits" if self.fits else "does not fit"
        memory = describe_bytes(self.memory_bytes).split(" (", 1)[1].split(",", 1)[0]
        rows = [
            (
                f"weights + KV cache, batch {self.batch}",
                f"{describe(total, 'bytes')}: {fit} in {memory}",
            ),
            (
                f"largest batch of {plain_number(self.seq)} tokens that fits",
                f"{plain_number(max(self.max_batch, 0))}",
            ),
        ]
        if self.intensity_at_max_batch is not None:
            rows.append(
                (
                    f"decode intensity at batch {plain_number(self.max_batch)}",
                    describe(self.intensity_at_max_batch, "FLOP/byte"),
                )
            )
        rows += [
            (
                "decode intensity as the batch grows",
                f"→ {describe(self.intensity_limit, 'FLOP/byte')}",
            ),
            ("compute-bound?", self.verdict()),
            ("time to first token, at least", describe(self.ttft_seconds, "seconds")),
            ("time per output token, at least", describe(self.tpot_seconds, "seconds")),
        ]
        if self.draft is not None and self.expected_tokens is not None:
            rows.append(
                (
                    f"speculative, alpha {plain_number(self.draft.alpha)}, gamma {self.draft.gamma}",
                    f"{significant(self.expected_tokens)} tokens per target step",
                )
            )
            if self.speculative_speedup is not None:
                cost = self.draft.cost
                rows.append(
                    (
                        "speculative speedup, at most (free draft)"
                        if cost is None
                        else f"speculative speedup, draft cost {plain_number(cost)}",
                        f"{significant(self.speculative_speedup)}×",
                    )
                )
        head = f"serving on {self.gpu}, {plain_number(self.seq)} tokens per sequence, {self.dtype}"
        if self.mixture:
            head += " (experts: a step reads only the routed ones, an upper bound on intensity)"
        return [head, *aligned(rows, left=2, indent="  ").split("\n")]


def serving(shape: ModelShape, gpu: GPU, draft: Draft | None = None) -> Serving:
    """The serving answer of ``shape`` on ``gpu`` at its context (``seq``) and ``batch``.

    >>> answer = serving(PRESETS["llama-2-7b-like"], GPUS["H100 SXM"])
    >>> answer.max_batch, answer.compute_bound_batch, round(answer.intensity_limit, 2)
    (30, None, 6.15)
    """
    s, seq, batch = shape.s, shape.seq, shape.batch
    peak = _peak(shape, gpu)
    n_total, n_step = params(shape), active_matmul_params(shape)
    kv = {"S": seq, "n_layers": shape.layers, "n_kv": shape.n_kv, "d_head": shape.d_head, "s": s}
    max_batch = int(f.max_decode_batch(M_dev=gpu.memory_bytes, n_params=n_total, **kv))
    ridge = gpu.ridge_point(shape.dtype)
    at_max = f.decode_intensity(n_params=n_step, B=max_batch, **kv) if max_batch >= 1 else None
    expected = speedup = None
    if draft is not None:
        expected = f.speculative_expected_tokens(alpha=draft.alpha, gamma=draft.gamma)
        # No cost given: as c_draft → 0 the speedup tends to the tokens per step, the bound
        # of a free draft that no real draft beats.
        speedup = expected
        if draft.cost is not None:
            speedup = f.speculative_speedup(
                alpha=draft.alpha, gamma=draft.gamma, c_draft=draft.cost
            )
    return Serving(
        gpu=gpu.name,
        dtype=shape.dtype,
        seq=seq,
        batch=batch,
        memory_bytes=gpu.memory_bytes,
        weights_bytes=int(f.weight_memory(n_params=n_total, s=s)),
        kv_cache_bytes=kv_cache(shape, B=batch, S=seq),
        max_batch=max_batch,
        intensity_at_max_batch=None if at_max is None else float(at_max),
        intensity_limit=f.decode_intensity.supremum("B", n_params=n_step, **kv),
        ridge_point=ridge,
        compute_bound_batch=f.decode_intensity.reaches(ridge, "B", n_params=n_step, **kv),
        ttft_seconds=float(
            f.ttft_seconds_lower_bound(
                n_params=n_step, B=batch, S=seq, s=s, P=peak, beta=gpu.bytes_per_s
            )
        ),
        tpot_seconds=float(
            f.tpot_seconds_lower_bound(n_params=n_step, B=batch, P=peak, beta=gpu.bytes_per_s, **kv)
        ),
        draft=draft,
        expected_tokens=None if expected is None else float(expected),
        speculative_speedup=None if speedup is None else float(speedup),
        mixture=shape.experts > 1,
    )


def _gpu(gpu: GPU | str) -> GPU:
    if isinstance(gpu, str):
        if gpu not in GPUS:
            raise GpuConceptsError(f"unknown GPU {gpu!r}; one of {', '.join(GPUS)}")
        return GPUS[gpu]
    return gpu


def _peak(shape: ModelShape, gpu: GPU) -> float:
    """The GPU's dense peak in the model's dtype; a GPU without that dtype is refused."""
    peak = gpu.peak(shape.dtype)
    if peak is None:
        listed = ", ".join(gpu.flops_per_s)
        raise GpuConceptsError(
            f"the {gpu.name} has no {shape.dtype} ({TORCH_DTYPES[shape.dtype]}) peak on its "
            f"datasheet, which lists {listed}: choose another --dtype or --gpu"
        )
    return peak


def account(
    shape: ModelShape, gpu: GPU | str = DEFAULT_GPU, draft: Draft | None = None
) -> ModelTable:
    """The whole-model table of ``shape``; decode and serving rows use ``gpu``'s datasheet.

    A GPU whose datasheet has no peak in the model's dtype is refused (the T4 has no bf16).
    """
    gpu = _gpu(gpu)
    s, L = shape.s, shape.layers
    peak = _peak(shape, gpu)
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
    width = base.d if d is None else d
    if d_ff is None and d is not None and d > 0:
        changes["d_ff"] = follow_d_ff(base, d)
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
    changes |= {"heads": heads, "d_head": d_head, "n_kv": base.n_kv if n_kv is None else n_kv}
    return replace(base, **changes)
