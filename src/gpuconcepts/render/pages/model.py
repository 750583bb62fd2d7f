"""From a layer to a model: three published shapes costed by :func:`gpuconcepts.model.account`
(parameters, FLOPs, training memory, KV cache, decode and serving), the exercises' answers, and
this build's whole-model checks.

Every number of a model comes from its :class:`~gpuconcepts.model.ModelTable`; what the table
does not hold (a GPU's knee, the ZeRO stages, other context lengths) from the formulas.

>>> glue = parameters()
>>> glue["params_table"].splitlines()[2]
'| GPT-2 small | 7.08 million | 9,984 | 85.05 million | 39.39 million | **124.44 million** |'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuconcepts import exercises as answers
from gpuconcepts import formulas, units
from gpuconcepts.claims import thresholds, wholemodel
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.hardware import GPU, GPUS
from gpuconcepts.model import (
    PRESETS,
    ModelShape,
    ModelTable,
    Serving,
    account,
    attention_share,
    kv_cache,
    layer_matmul_params,
    serving,
    shape_from,
)
from gpuconcepts.render import markdown_claims_table, markdown_table
from gpuconcepts.render.pages import Glue, Math, unmeasured
from gpuconcepts.render.plots import draw_result
from gpuconcepts.render.plots.claims import unmeasured_figure

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from gpuconcepts.claims import ClaimResult
    from gpuconcepts.results.wholemodel import DecodeSweep
    from gpuconcepts.run import Run

MODELS: dict[str, ModelShape] = {
    "GPT-2 small": PRESETS["gpt2-small"],
    "Llama-2-7B-like": PRESETS["llama-2-7b-like"],
    "Llama-3-8B-like": PRESETS["llama-3-8b-like"],
}
"""The page's three shapes, by the names it shows."""

H100 = GPUS["H100 SXM"]
"""The GPU of the ZeRO table, the serving tables and most exercises."""

ADAM_ITEMS = (
    ("16-bit weights", 2),
    ("16-bit gradients", 2),
    ("fp32 master weights", 4),
    ("Adam's first moment, fp32", 4),
    ("Adam's second moment, fp32", 4),
)
"""What mixed-precision Adam keeps per parameter, in bytes (``formulas.adam_training_memory``
adds them up; its ``k_opt`` of ZeRO, :data:`gpuconcepts.exercises.K_OPT_ADAM`, is the fp32
ones)."""

FP32_ITEMS = (("weights", 4), ("gradients", 4), ("first moment", 4), ("second moment", 4))
"""What Adam keeps per parameter in float32, the dtype of the measured checks (no master
copy): the same 16 bytes as :data:`ADAM_ITEMS` by coincidence, not by the same items."""

ZERO_DEVICES = 64
"""The ZeRO paper's example count of data-parallel devices."""

SPECULATIVE = {"alpha": 0.8, "gamma": 4}
"""The speculative-decoding example: acceptance chance and drafted tokens per step."""
DRAFT_COST = 0.05
"""The example draft step's cost, in large-model steps."""

CONTEXTS = (1024, 8192, 32768, 131072)
"""The context lengths of the attention-share table."""


def tables() -> dict[str, ModelTable]:
    """Each model's accounting, with decode on the default GPU (the H100)."""
    return {name: account(shape) for name, shape in MODELS.items()}


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


def against(need: float, gpu: GPU) -> str:
    """Whether ``need`` bytes fit in ``gpu``, as the end of a sentence.

    >>> against(1, GPUS["L4"])
    'fits in the 24 GB of the L4'
    """
    verb = "fits in" if need <= gpu.memory_bytes else "is more than"
    return f"{verb} the {units.decimal_bytes(gpu.memory_bytes)} of the {gpu.name}"


def training_memory() -> Glue:
    """What Adam keeps per weight, each model's training state and activations, whether the
    Llama-3-8B-like and Llama-2-70B states fit, and ZeRO's stages for the 70B on H100s."""
    per_param = formulas.adam_training_memory(n_params=1)
    if sum(b for _, b in ADAM_ITEMS) != per_param:
        raise GpuConceptsError("ADAM_ITEMS no longer add up to adam_training_memory")
    models = tables()
    rows = []
    for (name, m), t in zip(MODELS.items(), models.values(), strict=True):
        tokens = m.batch * m.seq  # the table's activations are for every token of the context
        rows.append(
            [name]
            + [units.binary_bytes(t.value(key)) for key in ("weights", "adam")]
            + [units.binary_bytes(t.value("activations") // tokens)]
            + [units.binary_bytes(t.value("activations_recomputed") // tokens)]
        )
    largest = max(GPUS.values(), key=lambda g: g.memory_bytes)
    llama3 = models["Llama-3-8B-like"]
    big = account(PRESETS["llama-2-70b"])
    big_params, big_adam = big.value("params"), big.value("adam")
    zero_rows = []
    for stage, what in enumerate(
        ["nothing (plain data parallelism)", "optimizer states",
         "optimizer states and gradients", "optimizer states, gradients and weights"]
    ):  # fmt: skip
        need = formulas.zero_memory_per_device(
            n_params=big_params, N_d=ZERO_DEVICES, stage=stage, k_opt=answers.K_OPT_ADAM
        )
        fits = "yes" if need <= H100.memory_bytes else "no"
        zero_rows.append([str(stage), what, units.describe_bytes(need), fits])
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


def floor_cell(gpu: GPU, m: ModelShape) -> str:
    """The decode floor of ``m`` on ``gpu`` and the tokens per second it allows, or why none."""
    table = account(shape_from(m, dtype=gpu.sixteen_bit), gpu)
    if not table.serving.fits:
        return f"does not fit in {units.decimal_bytes(gpu.memory_bytes)}"
    floor = table.value("decode_floor")
    return f"{units.si(floor, 's')} · {units.significant(1 / floor)}"


def decode_floor() -> Glue:
    """Each model's decode floor on each datasheet GPU, and speculative decoding's example."""
    rows = [
        [gpu.name, units.si(gpu.bytes_per_s, "B/s"), units.decimal_bytes(gpu.memory_bytes)]
        + [gpu.sixteen_bit]
        + [floor_cell(gpu, m) for m in MODELS.values()]
        for gpu in GPUS.values()
    ]
    header = ["GPU", "Bandwidth", "Memory", "dtype"]
    header += [f"{name}<br><small>tokens/s at batch 1</small>" for name in MODELS]
    no_bf16 = [gpu.name for gpu in GPUS.values() if gpu.sixteen_bit == "fp16"]
    return {
        "floor_eq": Math(formulas.decode_seconds_lower_bound.equation()),
        "floor_table": markdown_table(header, rows),
        "no_bf16": units.listing(no_bf16),
        "spec_tokens_eq": Math(formulas.speculative_expected_tokens.equation()),
        "spec_speedup_eq": Math(formulas.speculative_speedup.equation()),
        "spec_alpha": units.plain_number(SPECULATIVE["alpha"]),
        "spec_gamma": units.plain_number(SPECULATIVE["gamma"]),
        "spec_cost": units.plain_number(DRAFT_COST),
        "spec_tokens": units.significant(formulas.speculative_expected_tokens(**SPECULATIVE)),
        "spec_speedup": units.times(
            formulas.speculative_speedup(**SPECULATIVE, c_draft=DRAFT_COST)
        ),
        "floor_context": ", ".join(
            f"{units.plain_number(m.seq)} for {name}" for name, m in MODELS.items()
        ),
    }


def weights_only_knee(gpu: GPU) -> float:
    """The batch at which a decode step in 16 bits turns compute-bound on ``gpu`` when the
    KV cache is negligible: its ridge point in the dtype's bytes (2).

    >>> units.significant(weights_only_knee(GPUS["H100 SXM"]))
    '295'
    """
    peak = gpu.peak(gpu.sixteen_bit)
    assert peak is not None  # sixteen_bit names a dtype the GPU lists
    return float(formulas.decode_compute_bound_batch(P=peak, s=2, beta=gpu.bytes_per_s))


def servings() -> dict[str, Serving]:
    """Each model's serving answer on the H100 at its own context, batch 1, in bf16."""
    return {name: t.serving for name, t in tables().items()}


def compute_bound(a: Serving) -> str:
    """The serving table's last column: the first compute-bound batch, and whether it fits."""
    if a.compute_bound_batch is None:
        return "**never**"
    where = "fits" if a.compute_bound_within_memory else "does not fit"
    return f"from batch {units.plain_number(a.compute_bound_batch)} ({where})"


def knees() -> Glue:
    """The weights-only knee on each GPU, and each model's serving answer on the H100."""
    knee_rows = [
        [
            gpu.name,
            f"{units.si(gpu.peak(gpu.sixteen_bit) or 0, 'FLOP/s')} ({gpu.sixteen_bit})",
            units.si(gpu.bytes_per_s, "B/s"),
            f"{units.significant(gpu.ridge_point(gpu.sixteen_bit))} FLOP/byte",
            f"batch {units.significant(weights_only_knee(gpu))}",
        ]
        for gpu in GPUS.values()
    ]
    answered = servings()
    serve_rows = [
        [
            name,
            units.plain_number(a.seq),
            units.plain_number(max(a.max_batch, 0)),
            "-" if a.intensity_at_max_batch is None
            else units.describe(a.intensity_at_max_batch, "FLOP/byte"),
            units.describe(a.intensity_limit, "FLOP/byte"),
            compute_bound(a),
        ]
        for name, a in answered.items()
    ]  # fmt: skip
    never = [name for name, a in answered.items() if a.compute_bound_batch is None]
    return {
        "knee_eq": Math(formulas.decode_compute_bound_batch.equation()),
        "knee_table": markdown_table(
            ["GPU", "Dense 16-bit peak", "Bandwidth", "Ridge point",
             "Weights-only knee (no KV cache)"],
            knee_rows,
        ),
        "decode_intensity_eq": Math(formulas.decode_intensity.equation()),
        "max_batch_eq": Math(formulas.max_decode_batch.equation()),
        "serve_gpu": H100.name,
        "serve_memory": units.decimal_bytes(H100.memory_bytes),
        "serve_table": markdown_table(
            ["Model", "Context", "Largest batch that fits", "Intensity at that batch",
             "Limit as the batch grows", "Compute-bound"],
            serve_rows,
        ),
        "never_models": units.listing(never) if never else "none of the models",
        "serve_ridge": units.significant(H100.ridge_point("bf16")),
    }  # fmt: skip


LATENCY_MODEL = "Llama-2-7B-like"
"""The model whose latency the page states in words."""


def latency() -> Glue:
    """Time to first token and per output token on the H100, at batch 1 and at the largest
    batch that fits."""
    answered = servings()
    rows = []
    for name, a in answered.items():
        largest = "-"
        if a.max_batch > 0:  # each sequence of the largest batch waits this long per token
            full = serving(shape_from(MODELS[name], batch=a.max_batch), H100)
            largest = f"{units.si(full.tpot_seconds, 's')} (batch {units.plain_number(full.batch)})"
        times = [units.si(a.ttft_seconds, "s"), units.si(a.tpot_seconds, "s"), largest]
        rows.append([name, units.plain_number(a.seq), *times])
    one = answered[LATENCY_MODEL]
    knee = weights_only_knee(H100)
    return {
        "ttft_eq": Math(formulas.ttft_seconds_lower_bound.equation()),
        "tpot_eq": Math(formulas.tpot_seconds_lower_bound.equation()),
        "latency_table": markdown_table(
            ["Model", "Prompt", "Time to first token, batch 1", "Time per output token, batch 1",
             "Time per output token at the largest batch"],
            rows,
        ),
        "latency_name": LATENCY_MODEL,
        "latency_seq": units.plain_number(one.seq),
        "latency_ttft": units.si(one.ttft_seconds, "s"),
        "latency_tpot": units.si(one.tpot_seconds, "s"),
        "latency_rate": units.si(1 / one.tpot_seconds, "tokens/s"),
        "prefill_knee": units.significant(knee),
        "latency_prefill_bound": "its FLOPs" if one.seq * one.batch > knee else "its weight reads",
        "latency_ratio": units.times(one.ttft_seconds / one.tpot_seconds),
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


def intensity_limit(sweep: DecodeSweep) -> float:
    """The decode intensity no batch of ``sweep`` can pass, at its cached context."""
    shape = sweep.shape
    return float(
        formulas.decode_intensity_limit(
            n_params=sweep.weight_bytes // formulas.weight_memory(n_params=1, s=shape.s),
            S=sweep.cached, n_layers=shape.layers, n_kv=shape.n_kv, d_head=shape.d_head,
            s=shape.s,
        )
    )  # fmt: skip


def plot(result: ClaimResult) -> Figure:
    """A claim's figure (``draw_result``); one that says why, where it has nothing to draw."""
    figure = draw_result(result)
    if figure is None:
        return unmeasured_figure(result.why or "this run holds nothing to draw for it")
    return figure


def not_measured(run: Run) -> str:
    """Why ``run`` holds no whole-model measurement to show, in words; "" when it holds one."""
    if run.wholemodel is None:
        return run.skipped.get("wholemodel", "this run did not measure the whole model")
    if run.wholemodel.long_decode is None:
        return "this run did not sweep decoding at a long context"
    if not any(r.key == "decode-long-context" for r in run.claims):
        return "this run holds no long-context decode claim"
    return ""


MEASURED_TEXTS = (
    "decode_shape", "fp32_dtype", "claims_table", "claims_details", "check_context", "check_cache_share",
    "check_largest_batch", "check_limit", "check_limit_vs_ridge", "n_checks", "long_context",
    "long_per_sequence", "long_weights", "long_limit", "long_limit_vs_ridge", "long_alternative",
    "long_predicted", "long_measured", "long_short_knee", "long_verdict",
)  # fmt: skip
MEASURED_FIGURES = ("knee_fig", "long_fig")
"""What :func:`measured` glues from the whole-model results (a test checks they agree), so
that a run without them still glues every name the page reads."""


def measured(run: Run) -> Glue:
    """This build's whole-model checks: their claims and thresholds, the decode sweeps at a
    short and a long context with their figures, and what the float32 checks check. A run
    that measured none of it glues "—" and says why (:func:`not_measured`)."""
    peaks = run.peaks
    fp32_total = sum(b for _, b in FP32_ITEMS)
    same = fp32_total == sum(b for _, b in ADAM_ITEMS)
    glue: Glue = {
        "device": run.provenance.device_name,
        "peak_flops": units.si(peaks.flops_per_s, "FLOP/s"),
        "peak_bw": units.si(peaks.bytes_per_s, "B/s"),
        "ridge": units.significant(peaks.ridge_point),
        "thresholds_table": markdown_table(
            ["Threshold", "Value", "Why this value"],
            [[f"`{name}`", units.plain_number(value), reason]
             for name, value, reason in thresholds.described(wholemodel)],
        ),
        "fp32_items": " + ".join(str(b) for _, b in FP32_ITEMS),
        "mixed_items": " + ".join(str(b) for _, b in ADAM_ITEMS),
        "fp32_total": str(fp32_total),
        "fp32_same": "the same total" if same else "a different total",
    }  # fmt: skip
    why = not_measured(run)
    if why:
        glue |= unmeasured(MEASURED_TEXTS, MEASURED_FIGURES, why)
        glue["long_verdict"] = f"nothing was measured: {why}"
        return glue
    assert run.wholemodel is not None
    assert run.wholemodel.long_decode is not None
    results = [r for r in run.claims if r.architecture == wholemodel.ARCHITECTURE]
    by_key = {r.key: r for r in results}
    sweep, long = run.wholemodel.decode, run.wholemodel.long_decode
    check_limit, long_limit = intensity_limit(sweep), intensity_limit(long)
    long_result = by_key["decode-long-context"]
    shown = units.measured_or_dash
    return glue | {
        "decode_shape": run.wholemodel.sizes.decode.describe(),
        "fp32_dtype": run.wholemodel.sizes.training.dtype,
        "claims_table": markdown_claims_table(results),
        "claims_details": "\n".join(f"* **{r.claim}** Measured: {r.measured}." for r in results),
        # The knee and the floor are measured at a short context, where the cache is small.
        "check_context": units.plural(sweep.cached, "token"),
        "check_cache_share": units.percent(
            sweep.cache_bytes[-1] / (sweep.weight_bytes + sweep.cache_bytes[-1])
        ),
        "check_largest_batch": units.plain_number(sweep.batches[-1]),
        "check_limit": units.describe(check_limit, "FLOP/byte"),
        "check_limit_vs_ridge": units.times(check_limit / peaks.ridge_point),
        "knee_fig": plot(by_key["decode-knee"]) if "decode-knee" in by_key
        else unmeasured_figure("this run holds no decode-knee claim"),
        "n_checks": str(len(results)),
        # The long-context sweep: the KV cache takes over and the knee moves.
        "long_context": units.plural(long.cached, "token"),
        "long_per_sequence": units.binary_bytes(long.cache_bytes[0] // long.batches[0]),
        "long_weights": units.binary_bytes(long.weight_bytes),
        "long_limit": units.describe(long_limit, "FLOP/byte"),
        "long_limit_vs_ridge": units.times(long_limit / peaks.ridge_point),
        "long_alternative": shown(long_result.test.alternative_value),
        "long_predicted": shown(long_result.test.predicted),
        "long_measured": shown(long_result.test.measured),
        # the knee measured at the short context; None where no batch reached it
        "long_short_knee": shown(long_result.values.get("short_knee")),
        "long_verdict": f"the check {long_result.verdict}"
        + (f" ({long_result.why})" if long_result.why else ""),
        "long_fig": plot(long_result),
    }  # fmt: skip
