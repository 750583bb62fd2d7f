"""The model page's memory: what Adam keeps per weight, each model's training state and
activations, ZeRO's stages for the Llama-2-70B on H100s, and the KV cache with every, grouped
and one KV head.

>>> against(1, GPUS["L4"])
'fits in the 24 GB of the L4'
"""

from __future__ import annotations

from gpuconcepts import exercises as answers
from gpuconcepts import formulas, units
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.hardware import GPU, GPUS
from gpuconcepts.model import PRESETS, ModelShape, ModelTable, account, kv_cache, shape_from
from gpuconcepts.render import markdown_table
from gpuconcepts.render.pages import Glue, Math
from gpuconcepts.render.pages.model_shapes import ADAM_ITEMS, H100, MODELS, ZERO_DEVICES, tables


def against(need: float, gpu: GPU) -> str:
    """Whether ``need`` bytes fit in ``gpu``, as the end of a sentence."""
    verb = "fits in" if need <= gpu.memory_bytes else "is more than"
    return f"{verb} the {units.decimal_bytes(gpu.memory_bytes)} of the {gpu.name}"


def training_state_rows(models: dict[str, ModelTable]) -> list[list[str]]:
    """Each model's row of the training-memory table: its bf16 weights, its Adam training
    state, and its activations per token of its context, stored and recomputed."""
    rows = []
    for (name, m), t in zip(MODELS.items(), models.values(), strict=True):
        tokens = m.batch * m.seq  # the table's activations are for every token of the context
        rows.append(
            [name]
            + [units.binary_bytes(t.value(key)) for key in ("weights", "adam")]
            + [units.binary_bytes(t.value("activations") // tokens)]
            + [units.binary_bytes(t.value("activations_recomputed") // tokens)]
        )
    return rows


def zero_stage_rows(n_params: float) -> list[list[str]]:
    """Each ZeRO stage's row for ``n_params`` weights over :data:`ZERO_DEVICES` devices: what it
    partitions, the bytes per device and whether they fit the H100."""
    rows = []
    for stage, what in enumerate(
        ["nothing (plain data parallelism)", "optimizer states",
         "optimizer states and gradients", "optimizer states, gradients and weights"]
    ):  # fmt: skip
        need = formulas.zero_memory_per_device(
            n_params=n_params, N_d=ZERO_DEVICES, stage=stage, k_opt=answers.K_OPT_ADAM
        )
        fits = "yes" if need <= H100.memory_bytes else "no"
        rows.append([str(stage), what, units.describe_bytes(need), fits])
    return rows


def training_memory() -> Glue:
    """What Adam keeps per weight, each model's training state and activations, whether the
    Llama-3-8B-like and Llama-2-70B states fit, and ZeRO's stages for the 70B on H100s."""
    per_param = formulas.adam_training_memory(n_params=1)
    if sum(b for _, b in ADAM_ITEMS) != per_param:
        raise GpuConceptsError("ADAM_ITEMS no longer add up to adam_training_memory")
    models = tables()
    rows = training_state_rows(models)
    largest = max(GPUS.values(), key=lambda g: g.memory_bytes)
    llama3 = models["Llama-3-8B-like"]
    big = account(PRESETS["llama-2-70b"])
    big_params, big_adam = big.value("params"), big.value("adam")
    zero_rows = zero_stage_rows(big_params)
    return {
        "adam_eq": Math(formulas.adam_training_memory.equation()),
        "adam_worked": Math(
            f"{formulas.adam_training_memory.lhs} = "
            + formulas.adam_training_memory.worked(n_params=1)
        ),
        "adam_items": markdown_table(
            ["Kept per parameter", "Bytes"],
            [[what, str(b)] for what, b in ADAM_ITEMS] + [["**total**", f"**{per_param}**"]],
        ),
        "adam_per_param": units.plain_number(per_param),
        "adam_table": markdown_table(
            ["Model", "Weights (bf16)", "Adam training state", "Activations per token, all layers",
             "… with recomputation"],
            rows,
        ),
        "act_eq": Math(formulas.layer_activation_memory.equation()),
        "recompute_eq": Math(formulas.layer_activation_memory_recomputed.equation()),
        "llama3_adam": units.describe_bytes(llama3.value("adam")),
        "llama3_vs_h100": against(llama3.value("adam"), H100),
        "llama3_vs_largest": against(llama3.value("adam"), largest),
        # one sequence at its context, recomputed
        "llama3_with_acts": against(
            llama3.value("adam") + llama3.value("activations_recomputed"), largest
        ),
        "llama3_context": units.plain_number(MODELS["Llama-3-8B-like"].seq),
        "big_adam": units.describe_bytes(big_adam),
        "big_vs_largest": against(big_adam, largest),
        "zero_eq": Math(formulas.zero_memory_per_device.equation()),
        "zero_devices": units.plain_number(ZERO_DEVICES),
        "zero_table": markdown_table(
            ["ZeRO stage", "Partitioned", f"Per device, Llama-2-70B over {ZERO_DEVICES} devices",
             f"Fits the {H100.name}?"],
            zero_rows,
        ),
    }  # fmt: skip


def kv_head_counts(m: ModelShape) -> list[tuple[str, int]]:
    """The KV heads of the page's MHA, GQA and MQA variants of ``m``: every head, groups of
    eight heads (a quarter of them where that leaves too few groups), one.

    >>> kv_head_counts(MODELS["GPT-2 small"])
    [('MHA', 12), ('GQA', 3), ('MQA', 1)]
    """
    group = 8 if m.heads % 8 == 0 and m.heads > 8 else m.heads // 4
    return [("MHA", m.heads), ("GQA", group), ("MQA", 1)]


def kv_caches() -> Glue:
    """The KV cache per token with every, grouped and one KV head, and at each context."""
    models = tables()
    rows = []
    for (name, m), t in zip(MODELS.items(), models.values(), strict=True):
        variants = [
            f"{units.binary_bytes(kv_cache(shape_from(m, n_kv=n), B=1, S=1))} "
            f"({units.plural(n, 'KV head')})"
            for _, n in kv_head_counts(m)
        ]
        built = f"{units.binary_bytes(t.value('kv_cache'))} "
        rows.append(
            [name, *variants, built + f"({units.plain_number(m.seq)} tokens, {m.attention})"]
        )
    per_token = {name: t.value("kv_per_token") for name, t in models.items()}
    return {
        "gqa_kv_eq": Math(formulas.gqa_kv_cache_memory.equation()),
        "kv_table": markdown_table(
            ["Model", "MHA (every head)", "GQA", "MQA (one head)",
             "Cache at its context length, as built"],
            rows,
        ),
        "llama3_kv": units.plain_number(MODELS["Llama-3-8B-like"].n_kv),
        "gqa_saving": units.how_many(per_token["Llama-2-7B-like"] / per_token["Llama-3-8B-like"]),
    }  # fmt: skip
