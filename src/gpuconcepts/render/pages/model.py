"""From a layer to a model: three published shapes costed by :func:`gpuconcepts.model.account`
(parameters, FLOPs, training memory, KV cache, decode and serving), the exercises' answers, and
this build's whole-model checks.

Every number of a model comes from its :class:`~gpuconcepts.model.ModelTable`; what the table
does not hold (a GPU's knee, the ZeRO stages, other context lengths) from the formulas. This
module glues the shapes, parameters, FLOPs, attention and the exercises; the page's other
parts live beside it and are glued through it: the shapes and examples it shares
(:mod:`~gpuconcepts.render.pages.model_shapes`), memory
(:mod:`~gpuconcepts.render.pages.model_memory`), serving
(:mod:`~gpuconcepts.render.pages.model_serving`) and the measured checks
(:mod:`~gpuconcepts.render.pages.model_measured`).

>>> glue = parameters()
>>> glue["params_table"].splitlines()[2]
'| GPT-2 small | 7.08 million | 9,984 | 85.05 million | 39.39 million | **124.44 million** |'
"""

from __future__ import annotations

from gpuconcepts import exercises as answers
from gpuconcepts import formulas, units
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.hardware import GPUS
from gpuconcepts.model import (
    PRESETS,
    account,
    attention_share,
    layer_matmul_params,
    serving,
    shape_from,
)
from gpuconcepts.render import markdown_table
from gpuconcepts.render.pages import Glue, Math
from gpuconcepts.render.pages.model_measured import measured
from gpuconcepts.render.pages.model_memory import kv_caches, training_memory
from gpuconcepts.render.pages.model_serving import decode_floor, knees, latency
from gpuconcepts.render.pages.model_shapes import (
    CONTEXTS,
    DRAFT_COST,
    H100,
    LATENCY_MODEL,
    MODELS,
    SPECULATIVE,
    ZERO_DEVICES,
    servings,
    tables,
)

__all__ = [  # what the page (docs/model.md) and other pages import from the page's module
    "H100",
    "ZERO_DEVICES",
    "attention",
    "decode_floor",
    "exercises",
    "flops",
    "knees",
    "kv_caches",
    "latency",
    "measured",
    "parameters",
    "shapes",
    "tables",
    "training_memory",
]


def shapes() -> Glue:
    """The three shapes side by side.

    >>> shapes()["shapes_table"].splitlines()[2]
    '| GPT-2 small | 768 | 12 | 3,072 (two matrices) | 12 | 12 | 64 | 50,257 |'
    """
    rows = [
        [name]
        + [units.plain_number(m.d), units.plain_number(m.layers)]
        + [f"{units.plain_number(m.d_ff)} ({'gated' if m.gated else 'two matrices'})"]
        + [units.plain_number(n) for n in (m.heads, m.n_kv, m.d_head, m.vocab)]
        for name, m in MODELS.items()
    ]
    header = ["Model", "$d$", "Layers", "$d_{ff}$", "Heads", "$n_{kv}$", "$d_{head}$"]
    return {"shapes_table": markdown_table([*header, "Vocabulary"], rows)}


def parameters() -> Glue:
    """The parameter formulas, GPT-2 small's layer worked, and each model's count by part."""
    gpt2 = MODELS["GPT-2 small"]
    rows = []
    for (name, m), t in zip(MODELS.items(), tables().values(), strict=True):
        layers = m.layers * t.value("layer_params")
        rows.append(
            [
                name,
                units.in_words(layer_matmul_params(m)),
                units.plain_number(t.value("layer_params") - layer_matmul_params(m)),
                units.in_words(layers),
                units.in_words(t.value("params") - layers),
                f"**{units.in_words(t.value('params'))}**",
            ]
        )
    layer = formulas.transformer_layer_params
    return {
        "layer_eq": Math(layer.equation()),
        "gqa_eq": Math(formulas.gqa_attention_params.equation()),
        "gated_eq": Math(formulas.gated_mlp_params.equation()),
        "embed_eq": Math(formulas.embedding_params.equation()),
        "gpt2_layer": Math(f"{layer.lhs} = " + layer.worked(d=gpt2.d, d_ff=gpt2.d_ff)),
        "params_table": markdown_table(
            ["Model", "Matrices per layer", "Norms and biases per layer", "All layers",
             "Embeddings, head, final norm", "Total"],
            rows,
        ),
    }  # fmt: skip


def flops() -> Glue:
    """FLOPs per token, forward and in training."""
    rows = [
        [
            name,
            units.in_words(t.value("forward_flops") / 2),
            units.in_words(t.value("forward_flops")),
            units.in_words(t.value("training_flops")),
        ]
        for name, t in tables().items()
    ]
    name, t = next((n, t) for n, t in tables().items() if n.startswith("Llama-2"))
    multiplied = t.value("forward_flops") / 2
    return {
        # the two counts a reader meets for one model, each named for what it counts
        "mult_model": name,
        "mult_params": units.in_words(multiplied),
        "mult_total": units.in_words(t.value("params")),
        "mult_lookup": units.in_words(t.value("params") - multiplied),
        "fwd_eq": Math(formulas.forward_flops_per_token.equation()),
        "train_eq": Math(formulas.training_flops_per_token.equation()),
        "flops_table": markdown_table(
            ["Model", "Weights multiplied per token", "Forward FLOPs per token",
             "Training FLOPs per token"],
            rows,
        ),
    }  # fmt: skip


def attention() -> Glue:
    """Where attention's scores overtake the weight products, and their ratio at several
    context lengths."""
    models = tables()
    rows = [
        [name, f"{units.plain_number(round(t.value('attention_crossover')))} tokens"]
        + [units.significant(attention_share(t.shape, S), 2) for S in CONTEXTS]
        for name, t in models.items()
    ]
    # The page says the weights dominate at each model's own context length.
    if not all(t.value("attention_share") < 1 for t in models.values()):
        raise GpuConceptsError("attention outweighs the weights at a model's own context")
    gpt2 = models["GPT-2 small"]
    return {
        "share_eq": Math(formulas.attention_linear_flops_ratio.equation()),
        "share_table": markdown_table(
            ["Model", "Attention overtakes the weights at"]
            + [f"$S$ = {units.plain_number(S)}" for S in CONTEXTS],
            rows,
        ),
        "gpt2_cross": units.plain_number(round(gpt2.value("attention_crossover"))),
        "gpt2_d": units.plain_number(gpt2.shape.d),
    }


def exercises() -> Glue:
    """The exercises' answers, from the model tables, the formulas and the datasheet.

    >>> glue = exercises()
    >>> glue["ex_zero_stage"], glue["ex_best_gamma"]
    ('1', '8')
    """
    l3 = account(PRESETS["llama-3-8b-like"], H100)
    ex_devices = 8
    l3_params = int(l3.value("params"))
    stage = answers.zero_stage_that_fits(
        n_params=l3_params, N_d=ex_devices, memory_bytes=H100.memory_bytes
    )
    if stage is None:
        raise GpuConceptsError("no ZeRO stage fits the Llama-3-8B-like states on 8 H100s")
    best_gamma, best_speedup = answers.best_draft_length(
        alpha=SPECULATIVE["alpha"], c_draft=DRAFT_COST
    )
    l2 = PRESETS["llama-2-7b-like"]
    h200 = GPUS["H200"]
    tpot_batch = 16
    # the weights a decode step multiplies (and reads): the count of the FLOPs table, one
    # source for both; the input embedding is looked up one row per token, not read whole
    tpot_params = int(account(l2).value("forward_flops")) // 2
    tpot = formulas.tpot_seconds_lower_bound(
        n_params=tpot_params, B=tpot_batch, S=l2.seq, n_layers=l2.layers,
        n_kv=l2.n_kv, d_head=l2.d_head, s=2, P=h200.flops_per_s["bf16"], beta=h200.bytes_per_s,
    )  # fmt: skip
    gqa_kv = 8
    gqa_limit = serving(shape_from(l2, n_kv=gqa_kv), H100).intensity_limit
    return {
        "ex_l3_seq": units.plain_number(l3.shape.seq),
        "ex_l3_batch": units.plural(l3.serving.max_batch, "sequence"),
        "ex_l3_limit": units.describe(l3.serving.intensity_limit, "FLOP/byte"),
        "ex_zero_devices": str(ex_devices),
        "ex_zero_stage": str(stage),
        "ex_zero_need": units.describe_bytes(
            formulas.zero_memory_per_device(
                n_params=l3_params, N_d=ex_devices, stage=stage, k_opt=answers.K_OPT_ADAM
            )
        ),
        "ex_best_gamma": units.plain_number(best_gamma),
        "ex_best_speedup": units.times(best_speedup),
        "ex_tpot_batch": str(tpot_batch),
        "ex_tpot_seq": units.plain_number(l2.seq),
        "ex_tpot_params": units.in_words(tpot_params),
        "ex_tpot": units.si(tpot, "s"),
        "ex_tpot_rate": units.plain_number(round(tpot_batch / tpot)),
        "ex_gqa_kv": str(gqa_kv),
        "ex_gqa_heads": str(l2.n_kv),
        "ex_gqa_limit": units.describe(gqa_limit, "FLOP/byte"),
        "ex_gqa_gain": units.times(gqa_limit / servings()[LATENCY_MODEL].intensity_limit),
    }
