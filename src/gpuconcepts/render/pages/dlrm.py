"""The DLRM chapter: the post's embedding table and batch, what a random row moves, this
build's lookups (random, consecutive, hot) and dense layer, and the exercises' answers.

>>> glue = lookups()
>>> glue["N_words"], glue["memory"], glue["intensity"], glue["intensity_cap"]
('100 million', '51,200,000,000 bytes (51.2 GB, 47.68 GiB)', '0.125', '0.25')
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from gpuconcepts import formulas, units
from gpuconcepts.claims.dlrm import post_row_text
from gpuconcepts.hardware import GPUS, dtype_bytes
from gpuconcepts.measure import DEFAULT_CACHE_LINE_BYTES, GPU_SECTOR_BYTES
from gpuconcepts.questions import question
from gpuconcepts.render import (
    cold_read_sentence,
    markdown_table,
    measurement_table,
    plots,
    random_access_sentence,
)
from gpuconcepts.render.pages import Glue, Math, bound
from gpuconcepts.render.text import roof_name, unmeasured_cache
from gpuconcepts.roofline import place
from gpuconcepts.workloads import HOT_ROWS

if TYPE_CHECKING:
    from gpuconcepts.measure import Measurement
    from gpuconcepts.run import Run

P_CLICK = 0.92
"""The post's illustrative output for a candidate video, not a trained model's."""

NARROW_D = 4
"""Four FP32 values: a 16-byte row, far narrower than a cache line."""


def lookups() -> Glue:
    """The post's table and batch worked from the formulas: the table's memory, a batch's
    payload and intensity against the datasheet ridge points, and what a random row moves in
    whole transfer units (``measure.devices`` keeps their sizes and sources)."""
    table, batch = question(10).steps[0], question(11).steps[0]
    N, d, s = table.values["N"], table.values["d"], table.values["s"]
    B, L = batch.values["B"], batch.values["L"]
    intensity = formulas.embedding_intensity(B=B, L=L, d=d, s=s)
    # the ridge points of the datasheet table (hardware chapter), every GPU and data type; a
    # GPU's two 16-bit types share one peak, named as the hardware table names it
    ridges = sorted(
        (gpu.ridge_point(dtype), gpu.name, dtype)
        for gpu in GPUS.values()
        for dtype in gpu.flops_per_s
        if dtype not in {"fp16", "bf16"} or dtype == gpu.sixteen_bit
    )
    (low, low_gpu, low_dtype), (high, high_gpu, high_dtype) = ridges[0], ridges[-1]
    line, order = DEFAULT_CACHE_LINE_BYTES, formulas.lookup_order_ratio
    return {
        "N_words": units.in_words(N),
        "d": units.plain_number(d),
        "s": units.plain_number(s),
        "B": units.plain_number(B),
        "rows_each": units.plural(L, "row"),
        "memory_eq": Math(formulas.embedding_memory.equation()),
        "memory_worked": Math(rf"{formulas.embedding_memory.lhs} = {table.worked}"),
        "memory": units.describe_bytes(table.value),
        "payload_eq": Math(formulas.embedding_payload.equation()),
        "payload_worked": Math(rf"{formulas.embedding_payload.lhs} = {batch.worked}"),
        "payload": units.describe_bytes(batch.value),
        "rows_touched": units.plain_number(B * L),
        "fraction": units.percent(batch.value / table.value),
        "times_smaller": units.how_many(table.value / batch.value),
        "intensity_eq": Math(formulas.embedding_intensity.equation()),
        "intensity_worked": Math(
            rf"{formulas.embedding_intensity.lhs} = "
            + formulas.embedding_intensity.worked(B=B, L=L, d=d, s=s)
        ),
        "intensity": units.plain_number(intensity),
        "intensity_cap": units.plain_number(1 / s),
        "ridge_low": f"{units.significant(low)} FLOP/byte ({low_gpu}, {low_dtype})",
        "ridge_high": f"{units.significant(high)} ({high_gpu}, {high_dtype})",
        "below_low": units.plain_number(round(low / intensity)),
        "pipeline": plots.dlrm_pipeline(),
        "line": units.plain_number(line),
        "sector": units.plain_number(GPU_SECTOR_BYTES),
        "row_bytes_eq": Math(formulas.random_row_bytes.equation()),
        "order_eq": Math(order.equation()),
        "narrow_row": units.plain_number(NARROW_D * s),
        "narrow_d": units.plain_number(NARROW_D),
        "order_narrow": Math(f"{order.lhs} = " + order.worked(d=NARROW_D, s=s, c=line)),
        "narrow_waste": units.percent(1 - 1 / order(d=NARROW_D, s=s, c=line)),
        "post_row": units.plain_number(d * s),
        "post_row_lines": units.plain_number(formulas.random_row_bytes(d=d, s=s, c=line) // line),
        "order_post": Math(f"{order.lhs} = " + order.worked(d=d, s=s, c=line)),
        "p_click": Math(rf"P(\text{{you click the candidate video}}) = {P_CLICK}"),
    }


def measured(run: Run, runs: Sequence[Measurement]) -> Glue:
    """This build's lookups and dense layer: their table, and the random lookup's and the dense
    layer's bounds, rates and shares of the measured roofs."""
    peaks = run.peaks
    random, dense = runs[0], runs[-1]
    random_bound, dense_bound = bound(random, run), bound(dense, run)
    if {random_bound, dense_bound} == {"memory", "compute"}:
        both = (
            f"One model, two kinds of work: the lookups are {random_bound}-bound and the "
            f"dense layer {dense_bound}-bound."
        )
    else:
        both = (
            f"On this machine the lookups and the dense layer both come out {random_bound}-bound."
        )
    table_bytes = formulas.embedding_memory(
        N=random.size("N"), d=random.size("d"), s=random.size("s")
    )
    return {
        "device": run.provenance.device_name,
        "ridge": units.significant(peaks.ridge_point),
        "table": measurement_table(runs, peaks, device_name=run.provenance.device_name),
        "table_bytes": units.describe_bytes(table_bytes),
        "random_bound": random_bound,
        "random_intensity": units.significant(random.intensity),
        "random_bw": units.si(random.bytes_per_s, "B/s"),
        "peak_bw": units.si(peaks.bytes_per_s, "B/s"),
        "dense_bound": dense_bound,
        "dense_intensity": units.significant(dense.intensity),
        "random_bw_share": units.percent(random.bytes_per_s / peaks.bytes_per_s),
        "dense_flop_share": units.percent(dense.flops_per_s / peaks.flops_per_s),
        "both_kinds": both,
        "random_roof": random_access_sentence(random, peaks),
        "sequential_cold": cold_read_sentence(runs[1], peaks),
    }


def row_order(run: Run) -> Glue:
    """Random against consecutive rows by row size (the run's DLRM claim): the model's and the
    measured ratio at each width, its figure, and the verdict at the judged width."""
    claim = run.claim("dlrm-random-vs-sequential")
    unit = str(claim.values["transfer_unit"])
    c, row_s = int(claim.number("transfer_bytes")), int(claim.number("s"))
    widths = sorted(
        int(k[len("ratio_") : -len("B_rows")])
        for k in claim.values
        if k.startswith("ratio_") and k.endswith("B_rows")
    )
    rows = [
        [
            units.plain_number(b),
            units.plain_number(formulas.random_row_bytes(d=b // row_s, s=row_s, c=c) // c),
            units.measured_or_dash(claim.values.get(f"predicted_{b}B_rows"), units.times),
            units.measured_or_dash(claim.values.get(f"ratio_{b}B_rows"), units.times),
        ]
        for b in widths
    ]
    header = [
        "Bytes per row",
        f"{unit.capitalize()}s a random row touches",
        "Model: sequential ÷ random",
        "Measured: sequential ÷ random",
    ]
    test = claim.test
    if not math.isfinite(test.measured):
        beyond = "This machine did not measure it."
    elif not math.isfinite(test.predicted):
        beyond = "The model gives no gap to set it against here."
    elif test.measured > test.predicted:
        beyond = (
            "The gap is wider than the model's: besides the unused part of each line, random "
            "rows lose the prefetching and open DRAM pages that consecutive rows enjoy (see the "
            "post's rows below)."
        )
    else:
        beyond = "The gap is no wider than the model's."
    glue: Glue = {
        "run_unit": unit,
        "run_c": units.plain_number(c),
        "order_table": markdown_table(header, rows),
        "judged_row": units.measured_or_dash(
            claim.values.get("judged_row_bytes"), units.plain_number
        ),
        "judged_model": units.measured_or_dash(test.predicted, units.times),
        "judged_measured": f"{units.measured_or_dash(test.measured, units.times)} "
        f"(interval {test.interval_text()})",
        "judged_region": test.region_text(),
        "judged_verdict": claim.verdict,  # computed by the claim, never typed
        "judged_why": f" ({claim.why})" if claim.why else "",
        "judged_beyond": beyond,
        "post_case": post_row_text(claim),  # agreement, a residual gap, or an anomaly
    }
    figure = plots.draw_result(claim)
    if figure is not None:  # a claim without a plot leaves the page's figure unglued
        glue["order_figure"] = figure
    return glue


def hot_rows(run: Run, runs: Sequence[Measurement]) -> Glue:
    """The hot-row lookup, a skewed lookup served from cache: its reuse, its rate against DRAM
    and the random lookup, and the roof that explains its time."""
    peaks = run.peaks
    random = runs[0]
    hot = next(m for m in runs if m.workload == "dlrm-hot")
    where = place(hot, peaks)
    rows = min(hot.size("N"), HOT_ROWS)
    lookups = hot.size("B") * hot.size("L")
    roof = f"{roof_name(where)} ({units.percent(where.attained)} of it)"
    cache = unmeasured_cache(hot, peaks, run.provenance.device_name)
    if cache is not None:
        served = (
            f"its rows came from the {cache}; the run measured no roof for L2, so the roof "
            f"that explains its time is {roof}"
        )
    elif where.observed in {level.name for level in peaks.levels}:
        served = f"the roof that explains its time is {roof}: its rows came from that cache"
    elif hot.bytes_per_s > peaks.bytes_per_s:
        served = (
            "faster than DRAM can deliver, so its rows came from the caches (the roof that "
            f"explains its time best is {roof})"
        )
    else:
        served = f"the roof that explains its time is {roof}"
    hot_bytes = formulas.embedding_memory(N=rows, d=hot.size("d"), s=hot.size("s"))
    return {
        "hot_rows": units.plain_number(rows),
        "hot_bytes": units.binary_bytes(hot_bytes),
        "hot_lookups": units.plain_number(lookups),
        "hot_reuse": units.how_many(lookups / rows),
        "hot_bw": units.si(hot.bytes_per_s, "B/s"),
        "hot_vs_dram": units.times(hot.bytes_per_s / peaks.bytes_per_s),
        "hot_vs_random": units.times(hot.bytes_per_s / random.bytes_per_s),
        "hot_served": served,
    }


def exercises() -> Glue:
    """The exercises' answers for the post's table and batch on an H100 (BF16), from the
    formulas and the datasheet table.

    >>> glue = exercises()
    >>> glue["ex_fp16_memory"], glue["ex_lookup_never"]
    ('25,600,000,000 bytes (25.6 GB, 23.84 GiB)', 'Never')
    """
    table, batch = question(10).steps[0].values, question(11).steps[0].values
    N, d = table["N"], table["d"]
    s = dtype_bytes("bf16")  # the exercises ask in BF16, not in the post's FP32
    B, L = batch["B"], batch["L"]
    h100 = GPUS["H100 SXM"]
    ridge = h100.ridge_point("bf16")
    half = formulas.embedding_memory(N=N, d=d, s=dtype_bytes("fp16"))
    batch_reach = formulas.embedding_intensity.reaches(ridge, "B", L=L, d=d, s=s)
    rows_reach = formulas.embedding_intensity.reaches(ridge, "L", B=B, d=d, s=s)
    if batch_reach is None and rows_reach is None:
        never = "Never"
    else:
        never = f"From batch {units.plain_number(batch_reach or 0)}"
    if half <= h100.memory_bytes:
        fits = "It fits, with room to spare for the rest of the model"
    else:
        fits = "It does not fit: the table must be split over GPUs"
    return {
        "ex_h100_ridge": units.significant(ridge),
        "ex_h100_memory": units.decimal_bytes(h100.memory_bytes),
        "ex_fp16_memory": units.describe_bytes(half),
        "ex_fp16_fits": fits,
        "ex_lookup_never": never,
        "ex_lookup_bytes": units.plain_number(s),
        "ex_lookup_fp32_bytes": units.plain_number(table["s"]),
        "ex_lookup_batch_I": units.significant(formulas.embedding_intensity(B=B, L=L, d=d, s=s)),
        "ex_lookup_fp32_I": units.significant(
            formulas.embedding_intensity(B=B, L=L, d=d, s=table["s"])
        ),
        "ex_lookup_rows_limit": units.significant(
            formulas.embedding_intensity.supremum("L", B=B, d=d, s=s)
        ),
    }


def two_step() -> Glue:
    """The two-step exercise: Q11's lookup on an L4 in FP32, first the bytes it reads, then the
    least time those bytes take at the L4's bandwidth, against the time its additions need.

    >>> glue = two_step()
    >>> glue["ex2_bytes"], glue["ex2_memory_time"], glue["ex2_ratio"]
    ('2.1 MB', '7 µs', '808')
    """
    l4 = GPUS["L4"]
    sizes = question(11).steps[0].values
    peak, beta = l4.flops_per_s["fp32"], l4.bytes_per_s
    read = formulas.embedding_bag_bytes(**sizes)
    work = formulas.embedding_bag_flops(**{k: v for k, v in sizes.items() if k != "s"})
    memory_time, compute_time = read / beta, work / peak
    return {
        "ex2_B": units.plain_number(sizes["B"]),
        "ex2_bytes_eq": Math(
            f"{formulas.embedding_bag_bytes.lhs} = {formulas.embedding_bag_bytes.worked(**sizes)}"
        ),
        "ex2_bytes": units.si(read, "B", digits=2),
        "ex2_bw": units.si(beta, "B/s"),
        "ex2_peak": units.si(peak, "FLOP/s"),
        "ex2_flops": units.describe(work, "FLOPs"),
        "ex2_memory_time": units.si(memory_time, "s", digits=2),
        "ex2_compute_time": units.si(compute_time, "s", digits=2),
        "ex2_ratio": units.how_many(memory_time / compute_time),
    }


FASTER = 1.1
"""From this ratio of times the hot rows are said to run faster than random ones."""


def takeaways(run: Run | None) -> Glue:
    """The chapter's two measured takeaways, true to ``run``: where the random lookups landed
    against the ridge point and their roof, and whether rows that come back ran faster.
    "—" without a run.

    >>> takeaways(None)["take_roof"]
    '—'
    """
    from gpuconcepts.render.pages.gpu import chapter  # noqa: PLC0415
    from gpuconcepts.render.pages.lead import run_words  # noqa: PLC0415

    found = {m.workload: m for m in chapter(run, "dlrm")} if run is not None else {}
    rand, hot = found.get("dlrm-random"), found.get("dlrm-hot")
    if run is None or rand is None or hot is None:
        return dict.fromkeys(("take_roof", "take_hot"), units.NOTHING)
    who = run_words(run)
    where = place(rand, run.peaks)
    at = (
        f"at {units.significant(rand.intensity)} FLOP/byte against a ridge point of "
        f"{units.significant(run.peaks.ridge_point)}"
    )
    roof = (
        f"Bytes, not arithmetic, limit a lookup: in {who} the random lookups ran {at}, and "
        f"reached {units.percent(where.attained)} of {roof_name(where)}."
        if where.bound == "memory"
        else f"In {who} the random lookups ran {at}, on the compute side."
    )
    ratio = rand.seconds / hot.seconds
    hot_text = (
        "A cache helps only when the same rows come back: in "
        f"{who} the hot rows ran {units.how_many(ratio)} times as fast as random ones."
        if ratio >= FASTER
        else f"In {who} the hot rows, which come back, ran no faster than random ones."
    )
    return {"take_roof": roof, "take_hot": hot_text}
