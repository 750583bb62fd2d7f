"""The Transformer chapter: the post's attention example, attention's formulas, this build's
prefill sweep and decode step, the KV cache, and the exercises' answers.

>>> glue = formulas_part()
>>> glue["q16_ratio"], glue["tile_rows"]
('4', '128')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import sympy as sp

from gpuconcepts import formulas, units
from gpuconcepts.attention import TILE_ROWS, Prefill
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.hardware import GPUS
from gpuconcepts.questions import question
from gpuconcepts.render import plots
from gpuconcepts.render.markdown import markdown_table, measurement_table
from gpuconcepts.render.pages import Glue, Math, bound, from_batch
from gpuconcepts.symbols import sym

if TYPE_CHECKING:
    from gpuconcepts.measure import Measurement
    from gpuconcepts.run import Run


def strongest(tokens: Sequence[str], scores: Sequence[Sequence[float]], word: str) -> str:
    """The other token(s) ``word`` attends to most, ties named together.

    >>> strongest(["a", "b", "c"], [[0.5, 0.25, 0.25], [0.2, 0.4, 0.4], [0, 0, 1]], "b")
    '“c”'
    >>> strongest(["a", "b", "c"], [[0.5, 0.25, 0.25], [0.2, 0.4, 0.4], [0, 0, 1]], "a")
    '“b” and “c” equally'
    """
    row = np.array(scores[tokens.index(word)], dtype=float)
    row[tokens.index(word)] = -1
    top = [f"“{t}”" for t, v in zip(tokens, row, strict=True) if np.isclose(v, row.max())]
    return top[0] if len(top) == 1 else " and ".join(top) + " equally"


def attention_example(tokens: Sequence[str], scores: Sequence[Sequence[float]]) -> Glue:
    """The post's illustrative scores: the tokens, the heatmap, each word's strongest link.

    >>> attention_example(["a", "b"], [[0.5, 0.6], [0.5, 0.5]])
    Traceback (most recent call last):
    ...
    gpuconcepts.errors.GpuConceptsError: scores: row 1 sums to 1.1; each row of attention weights must sum to one
    """
    for i, row in enumerate(scores, start=1):
        if not np.isclose(sum(row), 1.0):
            raise GpuConceptsError(
                f"scores: row {i} sums to {units.significant(sum(row))}; each row of attention "
                "weights must sum to one"
            )
    glue: Glue = {
        "token_table": markdown_table(
            ["Token", "Word"], [[f"token {i}", w] for i, w in enumerate(tokens, start=1)]
        ),
        "heatmap": plots.attention_heatmap(scores, tokens),
    }
    for word in ("cat", "sat", "mat"):
        glue[f"top_{word}"] = strongest(tokens, scores, word)
    glue["n_tokens"] = units.plain_number(len(tokens))
    glue["n_scores"] = units.plain_number(formulas.attention_scores(S=len(tokens)))
    return glue


def formulas_part() -> Glue:
    """Attention's scores, FLOPs, bytes and intensity, minimal and tiled (Q16, Q17's width)."""
    short, long = question(16).steps
    tile = {"B": 1, "d": question(17).steps[0].values["d"], "s": 2, "S_tile": TILE_ROWS}
    tiled_limit = sp.limit(formulas.attention_tiled_intensity.expr, sym("S"), sp.oo)
    return {
        "scores_table": markdown_table(
            ["Tokens $S$", "Attention scores $S^2$"],
            [
                [units.plain_number(n), f"${formulas.attention_scores.worked(S=n)}$"]
                for n in (5, 100, 1000)
            ],
        ),
        "q16_short": units.plain_number(short.values["S"]),
        "q16_long": units.plain_number(long.values["S"]),
        "q16_ratio": units.plain_number(question(16).ratio or 0),
        "flops_eq": Math(formulas.attention_flops.equation()),
        "bytes_eq": Math(formulas.attention_bytes.equation()),
        "intensity_eq": Math(formulas.attention_intensity.equation()),
        "intensity_simple": f"${sp.latex(sp.simplify(formulas.attention_intensity.expr))}$",
        "tiled_bytes_eq": Math(formulas.attention_tiled_bytes.equation()),
        "tiled_limit_eq": Math(
            rf"\lim_{{S \to \infty}} {formulas.attention_tiled_intensity.lhs} = "
            + sp.latex(tiled_limit)
        ),
        "tile_rows": units.plain_number(tile["S_tile"]),
        "tile_d": units.plain_number(tile["d"]),
        "tile_limit": units.significant(
            formulas.attention_tiled_intensity.supremum(
                "S", **{k: v for k, v in tile.items() if k != "S"}
            )
        ),
        "tiled_table": markdown_table(
            ["Tokens $S$", "Minimal traffic (FLOP/byte)", "Tiled kernel (FLOP/byte)"],
            [
                [
                    units.plain_number(n),
                    units.significant(
                        formulas.attention_intensity(B=1, S=n, d=tile["d"], s=tile["s"])
                    ),
                    units.significant(formulas.attention_tiled_intensity(**tile, S=n)),
                ]
                for n in (TILE_ROWS, 4 * TILE_ROWS, 16 * TILE_ROWS, 64 * TILE_ROWS)
            ],
        ),
    }


def prefill(run: Run, sweep: Sequence[Measurement], causal: Measurement) -> Glue:
    """This build's prefill sweep over S on the roofline, and the causal prefill beside the
    encoder's at the same length."""
    peaks = run.peaks
    first, last = sweep[0], sweep[-1]
    if bound(first, run) == bound(last, run):
        bounds = (
            f"Every length in the sweep is **{bound(first, run)}-bound** here, and the points "
            "move right along the roofline as $S$ grows."
        )
    else:
        bounds = (
            f"The shortest run is **{bound(first, run)}-bound** and the longest "
            f"**{bound(last, run)}-bound**: as $S$ grows, attention crosses the ridge point."
        )
    encoder = next(x for x in sweep if x.size("S") == causal.size("S"))
    return {
        "device": run.provenance.device_name,
        "sweep_table": measurement_table(sweep, peaks),
        "S_first": units.plain_number(first.size("S")),
        "S_last": units.plain_number(last.size("S")),
        "len_ratio": units.how_many(last.size("S") / first.size("S")),
        "flop_ratio": units.how_many(last.flops / first.flops),
        "time_ratio": units.how_many(last.seconds / first.seconds),
        "bounds": bounds,
        "sweep_fig": plots.roofline_chart(peaks, sweep),
        "causal_table": measurement_table([encoder, causal], peaks),
        "causal_S": units.plain_number(causal.size("S")),
        "causal_flops": units.percent(causal.flops / encoder.flops),
        # "as long as the encoder" where the ratio rounds to one, never "took 1 of its time"
        "causal_time": units.as_long(causal.seconds / encoder.seconds, "the encoder"),
    }


def kv_cache() -> Glue:
    """Q17's KV cache: its formula worked, its growth token by token, one token's share."""
    q17 = question(17).steps[0]
    d, s = int(q17.values["d"]), int(q17.values["s"])
    return {
        "kv_eq": Math(formulas.kv_cache_memory.equation()),
        "kv_worked": Math(f"{formulas.kv_cache_memory.lhs} = {q17.worked}"),
        "kv": units.describe_bytes(q17.value),
        "kv_d": units.plain_number(d),
        "kv_s": units.plain_number(s),
        "kv_B": units.plain_number(q17.values["B"]),
        "kv_S": units.plain_number(q17.values["S"]),
        "kv_fig": plots.kv_cache_growth(["The", "cat", "sat", "on"], B=1, d=d, s=s),
        "per_token": units.describe_bytes(formulas.kv_cache_memory(B=1, S=1, d=d, s=s)),
        "decode_I_eq": Math(formulas.attention_decode_intensity.equation()),
    }


def decode(run: Run, sweep: Sequence[Measurement], m: Measurement) -> Glue:
    """This build's decode step: its cache measured step by step against the formula, and its
    bound against the prefill runs'."""
    lengths, cache_bytes = m.series["lengths"], m.series["cache_bytes"]
    expected = [
        formulas.kv_cache_memory(B=m.size("B"), S=int(n), d=m.size("d"), s=m.size("s"))
        for n in lengths
    ]
    prefill_bounds = {bound(x, run) for x in sweep}
    decode_bound = bound(m, run)
    if prefill_bounds == {decode_bound}:
        versus = "— the same verdict as the prefill runs above."
    elif decode_bound not in prefill_bounds:
        versus = (
            "— unlike every prefill run above, which came out "
            f"{'/'.join(sorted(prefill_bounds))}-bound."
        )
    else:
        versus = "— like some of the prefill runs above and unlike others."
    return {
        "decode_table": measurement_table([m], run.peaks),
        "steps": units.plain_number(len(lengths)),
        "cache_first": units.describe_bytes(cache_bytes[0]),
        "cache_last": units.describe_bytes(cache_bytes[-1]),
        "cache_match": "equals" if list(cache_bytes) == expected else "differs from",
        "decode_bound": decode_bound,
        "decode_I": units.significant(m.intensity),
        "versus_prefill": versus,
        "cache_table": markdown_table(
            ["Step", "Tokens cached", "Measured cache", "Formula"],
            [
                [step, units.plain_number(n), units.binary_bytes(got), units.binary_bytes(want)]
                for step, (n, got, want) in enumerate(
                    zip(lengths, cache_bytes, expected, strict=True), start=1
                )
            ],
        ),
    }


def exercises() -> Glue:
    """The exercises' answers, from the formulas and the datasheet table (H100, BF16).

    >>> glue = exercises()
    >>> glue["ex_long_growth"], glue["ex_prefill_fits"]
    ('8×', 'fit')
    """
    h100 = GPUS["H100 SXM"]
    ridge_bf16 = h100.ridge_point("bf16")
    q17_sizes = question(17).steps[0].values
    longer = q17_sizes | {"S": 8 * q17_sizes["S"]}
    decode_sizes = {k: v for k, v in q17_sizes.items() if k != "B"}
    decode_first = formulas.attention_decode_intensity.reaches(ridge_bf16, "B", **decode_sizes)
    # Prefill: the bound (minimal traffic), the tiled kernel against HBM, and L2
    ints = {k: int(v) for k, v in q17_sizes.items()}
    q17_prefill = Prefill(**ints, d_head=ints["d"])  # Q17's layer is one head
    prefill_bound, prefill_tiled = q17_prefill.compute_bound_from(h100, "bf16")
    if prefill_tiled is None:
        tiled = (
            "at no length: its intensity levels off at "
            f"{units.significant(q17_prefill.tiled_limit)} FLOP/byte, below the ridge point"
        )
    else:
        tiled = f"only from {units.plural(prefill_tiled, 'token')}"
    at_bound = Prefill(**ints | {"S": prefill_bound or ints["S"]}, d_head=ints["d"])
    return {
        "ex_ridge": units.significant(ridge_bf16),
        "ex_long_S": units.plain_number(longer["S"]),
        "ex_long_kv": units.describe_bytes(formulas.kv_cache_memory(**longer)),
        "ex_long_growth": units.times(
            formulas.kv_cache_memory(**longer) / formulas.kv_cache_memory(**q17_sizes)
        ),
        "ex_decode_answer": from_batch(decode_first),
        "ex_decode_I": units.significant(formulas.attention_decode_intensity(**q17_sizes)),
        "ex_decode_limit": units.significant(
            formulas.attention_decode_intensity.supremum(
                "S", **{k: v for k, v in q17_sizes.items() if k != "S"}
            )
        ),
        "ex_prefill_S": "no prompt length"
        if prefill_bound is None
        else units.plural(prefill_bound, "token"),
        "ex_prefill_tile": units.plain_number(q17_prefill.tile_rows),
        "ex_prefill_tiled": tiled,
        "ex_prefill_d": units.plain_number(at_bound.d_head),  # Q17's layer, read as one head
        "ex_prefill_head": units.binary_bytes(at_bound.head_kv_bytes),
        "ex_prefill_l2": units.binary_bytes(h100.l2_bytes),
        "ex_prefill_fits": "fit" if at_bound.head_fits_l2(h100) else "do not fit",
    }


def two_step() -> Glue:
    """The two-step exercise: a Llama-2-7B-like model decoding in BF16 on an L4, first without
    a KV cache (the weights alone: ``decode_compute_bound_batch``), then with a cache of its
    whole context per sequence, which grows with the batch (``decode_intensity``).

    >>> glue = two_step()
    >>> glue["ex2_batch"], glue["ex2_with_cache"], glue["ex2_limit"]
    ('404', 'never: no batch makes the step compute-bound, however large', '6.15')
    """
    import math  # noqa: PLC0415

    from gpuconcepts.model import PRESETS, account  # noqa: PLC0415

    l4 = GPUS["L4"]
    shape = PRESETS["llama-2-7b-like"]
    peak, beta = l4.flops_per_s["bf16"], l4.bytes_per_s
    # the weights a decode step multiplies: the FLOPs table's count, as the model page uses
    params = int(account(shape).value("forward_flops")) // 2
    alone = formulas.decode_compute_bound_batch(P=peak, s=2, beta=beta)
    cache = {
        "n_params": params,
        "S": shape.seq,
        "n_layers": shape.layers,
        "n_kv": shape.n_kv,
        "d_head": shape.d_head,
        "s": 2,
    }
    ridge = float(formulas.ridge_point(P=peak, beta=beta))
    first = formulas.decode_intensity.reaches(ridge, "B", **cache)
    return {
        "ex2_params": units.plural(params, "parameter"),
        "ex2_S": units.plain_number(shape.seq),
        "ex2_ridge": units.significant(ridge),
        "ex2_alone_eq": Math(
            f"{formulas.decode_compute_bound_batch.lhs} = "
            f"{formulas.decode_compute_bound_batch.worked(P=peak, s=2, beta=beta)}"
        ),
        "ex2_batch": units.plain_number(math.ceil(alone)),
        "ex2_with_cache": "never: no batch makes the step compute-bound, however large"
        if first is None
        else f"from a batch of {units.plain_number(first)}",
        "ex2_limit_eq": Math(
            f"{formulas.decode_intensity_limit.lhs} = "
            f"{formulas.decode_intensity_limit.worked(**cache)}"
        ),
        "ex2_limit": units.significant(formulas.decode_intensity.supremum("B", **cache)),
    }


def takeaways(run: Run | None) -> Glue:
    """The chapter's two measured takeaways, true to ``run``: the longest prefill's side of the
    ridge point and its roof, and the decode step's. "—" without a run.

    >>> takeaways(None)["take_decode"]
    '—'
    """
    from gpuconcepts.render import EXPLAINED  # noqa: PLC0415
    from gpuconcepts.render.pages.gpu import chapter  # noqa: PLC0415
    from gpuconcepts.render.pages.lead import run_words  # noqa: PLC0415
    from gpuconcepts.roofline import place  # noqa: PLC0415

    found = chapter(run, "transformer") if run is not None else []
    prefill = [m for m in found if m.workload == "transformer-prefill"]
    decode = [m for m in found if m.workload == "transformer-decode"]
    if run is None or not prefill or not decode:
        return dict.fromkeys(("take_prefill", "take_decode"), units.NOTHING)
    who = run_words(run)
    big, step = prefill[-1], decode[0]
    long_S = units.plain_number(big.size("S"))
    at, there = place(big, run.peaks), place(step, run.peaks)
    half = EXPLAINED[0]
    if at.bound == "compute" and at.attained >= half:
        prefill_text = (
            f"Reading a long prompt is arithmetic: in {who} prefill at S = {long_S} reached "
            f"{units.percent(at.attained)} of the {at.observed} roof."
        )
    else:
        prefill_text = (
            f"In {who} prefill at S = {long_S} sat on the {at.bound} side of the ridge point "
            f"and reached only {units.percent(at.attained)} of the {at.observed} roof, its "
            "nearest: that roof does not explain its time."
        )
    intensity = units.significant(step.intensity)
    if there.bound == "memory" and there.attained >= half:
        decode_text = (
            f"Generating is reading: in {who} a decode step, at {intensity} FLOP/byte, "
            f"reached {units.percent(there.attained)} of the {there.observed} roof; only fewer "
            "bytes make it faster."
        )
    else:
        decode_text = (
            f"In {who} a decode step, at {intensity} FLOP/byte, sat on the {there.bound} side "
            f"of the ridge point and reached only {units.percent(there.attained)} of the "
            f"{there.observed} roof, its nearest: that roof does not explain its time."
        )
    return {"take_prefill": prefill_text, "take_decode": decode_text}
