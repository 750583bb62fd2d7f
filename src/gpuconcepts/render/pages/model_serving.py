"""The model page's serving: each model's decode floor on each datasheet GPU, speculative
decoding's example, the batch where decoding turns compute-bound, and the latency of the first
token and of each one after it.
"""

from __future__ import annotations

from gpuconcepts import formulas, units
from gpuconcepts.hardware import GPU, GPUS
from gpuconcepts.model import ModelShape, Serving, account, serving, shape_from
from gpuconcepts.render import markdown_table
from gpuconcepts.render.pages import Glue, Math
from gpuconcepts.render.pages.model_shapes import (
    DRAFT_COST,
    H100,
    LATENCY_MODEL,
    MODELS,
    SPECULATIVE,
    servings,
)


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
