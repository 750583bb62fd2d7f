# ruff: noqa: PLC0415
# (torch is imported inside functions, through gpuconcepts.kernels: README, Rules: 3)
"""DLRM's claim: random embedding lookups stream far slower than consecutive ones.

Its experiment (:data:`EXPERIMENT`) measures random and sequential lookups at the post's row width and at
other widths of the same bytes per batch, in a table sized by the device's free memory, and
records the device's transfer unit (a CPU's cache line, a GPU's sector) in the run;
:func:`judge_dlrm_lookups` turns them into a verdict (no kernel runs there), judged at the post's
row width; the other widths and the measured ceilings' predictions are shown beside it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING

from gpuconcepts import formulas
from gpuconcepts.claims.lookups import LookupSweep, row_bytes_of
from gpuconcepts.claims.plan import ROOF_FACTS, CoreJudge, Experiment, WithRoofs, roles_reading
from gpuconcepts.claims.quantities import formula_at, sizes
from gpuconcepts.claims.roofline import judge_roles
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.measure import (
    DEFAULT_CACHE_LINE_BYTES,
    TRANSFER_UNIT_NAMES,
    Measurement,
    transfer_unit_bytes,
)
from gpuconcepts.questions import question
from gpuconcepts.results.claim import ClaimResult
from gpuconcepts.results.measured import Comparison, Measured, Wanted
from gpuconcepts.roofline import Peaks
from gpuconcepts.units import (
    MiB,
    binary_bytes,
    describe_bytes,
    number,
    percent,
    plain_number,
    si,
    significant,
    times,
)

if TYPE_CHECKING:
    from gpuconcepts.results.claim_sizes import ClaimSizes


def _lookups(m: Measured, z: ClaimSizes) -> dict[int, list[Wanted]]:
    """Random and sequential lookups by row width: the same bytes per batch at every width,
    in a table sized by the run's free memory and the element size it recorded."""
    s = int(m.fact("dlrm-element")["s"])
    table_bytes = min(z.dlrm_table_mib * MiB, m.free_bytes // 4)
    out: dict[int, list[Wanted]] = {}
    for d in z.dlrm_widths:
        L = z.dlrm_L * z.dlrm_d // d  # the same bytes per batch at every row width
        row_bytes = int(formulas.embedding_memory(N=1, d=d, s=s))
        N = max(z.dlrm_B * L, table_bytes // row_bytes)
        sizes = {"N": N, "B": z.dlrm_B, "L": L, "d": d}
        out[d] = [(f"dlrm-{pattern}", sizes) for pattern in ("random", "sequential")]
    return out


def _at_post_width(m: Measured, z: ClaimSizes, lookups: Mapping[int, list[Wanted]]) -> WithRoofs:
    """The lookups at the post's row width, timed beside the DRAM roof's reference: its random
    lookup is the roofline claim's."""
    return WithRoofs.of(m, z, lookups[z.dlrm_d], {"dlrm-random": 0})


def _claims(
    judge: CoreJudge,
    m: Measured,
    pair: Sequence[Measurement],
    widths: Sequence[tuple[Measurement, Measurement]] = (),
) -> list[ClaimResult]:
    """``judge`` on a random and a sequential lookup, with the other widths beside them."""
    element = m.fact("dlrm-element")
    if "c" not in element:  # every run since before schema 3, the oldest one read, saved it
        raise GpuConceptsError(
            f"the fact 'dlrm-element' holds no transfer unit 'c' (got {element!r}): the lookups' "
            "bytes depend on it, and a run records it when it measures them"
        )
    c = int(element["c"])
    random, sequential = pair
    return [
        judge(
            random,
            sequential,
            peaks=m.peaks,
            cache_bytes=m.cache_bytes,
            transfer_bytes=c,
            transfer_unit=TRANSFER_UNIT_NAMES[m.device],
            device=m.label,
            widths=widths,
        )
    ]


def comparisons(m: Measured, z: ClaimSizes) -> tuple[Comparison, ...]:
    """One comparison per row width (two tables in memory at a time), each measured again if
    consecutive rows come out slower than random ones; the post's row width with the DRAM
    roof's reference too, for the roofline claim."""
    out = []
    lookups, check = _lookups(m, z), partial(_claims, judge_dlrm_lookups, m)
    for d, wanted in lookups.items():
        if d == z.dlrm_d:
            roofs = _at_post_width(m, z, lookups)
            out.append(roofs.comparison(lambda pair, _refs: check(pair), m))
        else:
            out.append(Comparison(tuple(wanted), check))
    return tuple(out)


def _lookups_read(judge: CoreJudge, m: Measured, z: ClaimSizes) -> list[ClaimResult]:
    """``judge`` at the post's row width with the other widths beside it, read from ``m``."""
    lookups = _lookups(m, z)
    pair, _ = _at_post_width(m, z, lookups).read(m)
    widths = [m.compared(wanted) for d, wanted in lookups.items() if d != z.dlrm_d]
    return _claims(judge, m, pair, tuple((r, q) for r, q in widths))


def _memory_facts(device: str) -> dict[str, int]:
    """What the lookups' bytes depend on: the table's element size ``s`` and the device's
    transfer unit ``c`` (recorded in the run, so a replay elsewhere judges with the same)."""
    return {"s": _embedding_element_bytes(device), "c": transfer_unit_bytes(device)}


def _embedding_element_bytes(device: str) -> int:
    import torch

    from gpuconcepts.kernels import default_dtype, torch_dtype

    return int(
        torch.empty((), dtype=torch_dtype(default_dtype(device, "embedding"))).element_size()
    )


def judge_dlrm_lookups(
    random: Measurement,
    sequential: Measurement,
    *,
    peaks: Peaks,
    cache_bytes: int,
    device: str,
    transfer_bytes: int = DEFAULT_CACHE_LINE_BYTES,
    transfer_unit: str = TRANSFER_UNIT_NAMES["cpu"],
    widths: Sequence[tuple[Measurement, Measurement]] = (),
) -> ClaimResult:
    """Random lookups reach much lower bandwidth than sequential ones; batch ≪ table.

    ``random`` and ``sequential`` are the lookups at the post's row width, where the claim is
    judged (the post's own, never chosen from a run); ``widths`` may add pairs at other row widths with the same
    bytes per batch. The prediction at each width, shown beside the claim and never its test,
    is the ratio of the two lookups' times under the measured ceilings
    (:func:`~gpuconcepts.claims.predict.predicted_seconds`): random rows at the random-access
    sweep's line rate, in whole transfer units of ``transfer_bytes`` (a CPU's cache line, a
    GPU's sector; :data:`~gpuconcepts.formulas.lookup_order_ratio`) at the bandwidth of the
    level that holds the table, consecutive rows sharing them at the memory's, every row no
    faster than the gather issues rows. The post says "much lower": the claim holds when
    sequential rows stream at least :data:`~gpuconcepts.claims.thresholds.DIRECTION_MIN_EFFECT`
    times as fast as random ones (a direction with its effect size). Not visible only by a
    size: a table that fits in the measured last-level cache (``cache_bytes``), whose random
    rows need not reach the memory the post speaks of; no prediction decides it (issue 45).
    """
    names = ("N", "B", "L", "d", "s")
    if sizes(random, *names) != sizes(sequential, *names):
        raise GpuConceptsError("random and sequential lookups must use the same N, B, L, d, s")
    c, unit = transfer_bytes, transfer_unit
    w = LookupSweep.of([*widths, (random, sequential)], peaks, c, (random, sequential))
    reason = _in_cache(random, cache_bytes)
    return ClaimResult(
        key="dlrm-random-vs-sequential",
        architecture="DLRM",
        claim="Random embedding lookups reach much lower bandwidth than sequential ones; "
        "a batch touches a tiny part of a huge table.",
        prediction=_prediction(random, w, peaks, c, unit),
        test=(test := w.test()),
        detail=_detail(w, random, sequential, peaks, unit),
        device=device,
        visible=not reason,
        reason=reason,
        anomalies=w.anomalies(test),
        values={
            **_table_values(random, sequential, peaks),
            "predicted_ratio": w.predicted[w.row_bytes.index(row_bytes_of(random))],
            "judged_row_bytes": w.row_bytes[w.judged],
            "judged_ratio": test.measured,
            "transfer_bytes": c,
            "transfer_unit": unit,
            "cache_bytes": cache_bytes,
            "cache_multiple": formula_at(formulas.embedding_memory, random) / cache_bytes,
            **w.values(),
        },
        plot=w.plot(peaks, unit, c),
    )


def _in_cache(random: Measurement, cache_bytes: int) -> str:
    """Why the lookups cannot show the post's claim ("" when they can): their table fits in
    the measured last-level cache, so random rows are served by the cache, not the memory."""
    table = formula_at(formulas.embedding_memory, random)
    if table > cache_bytes:
        return ""
    return (
        f"the table ({binary_bytes(table)}) fits in the last-level cache this run measured "
        f"({binary_bytes(cache_bytes)}), so random rows need not reach the memory the post "
        "speaks of"
    )


def _detail(
    w: LookupSweep, random: Measurement, sequential: Measurement, peaks: Peaks, unit: str
) -> str:
    """The bandwidths at the post's row width, then the ratio at every width, in words."""
    detail = (
        f"random {si(random.bytes_per_s, 'B/s')}, sequential "
        f"{si(sequential.bytes_per_s, 'B/s')} with the post's "
        f"{plain_number(row_bytes_of(random))}-byte rows (DRAM peak {si(peaks.bytes_per_s, 'B/s')})"
    )
    if len(w.pairs) > 1:
        detail += f"; sequential ÷ random by row size: {w.by_row(unit)}"
    return detail


def _post_sizes() -> tuple[float, float]:
    """The post's table and the bytes one of its batches reads (questions 10 and 11)."""
    return float(question(10).steps[0].value), float(question(11).steps[0].value)


def _prediction(random: Measurement, w: LookupSweep, peaks: Peaks, c: int, unit: str) -> str:
    """The claim's prediction in words: the post's table and batch, this run's, and the gap
    the transfer-unit model and the measured ceilings give at the judged row width."""
    post_table, post_batch = _post_sizes()
    N, B, L = sizes(random, "N", "B", "L")
    table = formula_at(formulas.embedding_memory, random)
    batch = formula_at(formulas.embedding_payload, random)
    intensity = formula_at(formulas.embedding_intensity, random)
    rows = plain_number(w.row_bytes[w.judged])
    return (
        f"The post's table is {describe_bytes(post_table)}; one batch reads "
        f"{describe_bytes(post_batch)}, {percent(post_batch / post_table)} of it. Here the table has "
        f"{plain_number(N)} rows ({binary_bytes(table)}) and a batch of {plain_number(B)}×"
        f"{plain_number(L)} rows reads {binary_bytes(batch)}, {percent(batch / table)} of it. "
        f"Intensity {number(intensity)} FLOP/byte, far below the ridge point "
        f"{number(peaks.ridge_point)}: memory-bound. Memory moves whole {plain_number(c)}-byte "
        f"{unit}s and a random row shares none with its neighbours, so it costs ⌈d·s/c⌉·c bytes "
        f"(random_row_bytes): by that alone consecutive rows would stream "
        f"{times(w.lines[w.judged])} faster with {rows}-byte rows. The measured ceilings (random "
        "rows at the random-access sweep's line rate, consecutive ones at the memory's "
        "bandwidth, every row no faster than the gather issues rows) predict "
        f"{times(w.predicted[w.judged])} with those rows."
    )


def _table_values(random: Measurement, sequential: Measurement, peaks: Peaks) -> dict[str, float]:
    """The post's and this run's table and batch, and the lookups at the post's row width."""
    post_table, post_batch = _post_sizes()
    N, B, L, d, s = sizes(random, "N", "B", "L", "d", "s")
    table = formula_at(formulas.embedding_memory, random)
    batch = formula_at(formulas.embedding_payload, random)
    return {
        "post_table_bytes": post_table,
        "post_batch_bytes": post_batch,
        "post_fraction": post_batch / post_table,
        "N": N,
        "B": B,
        "L": L,
        "d": d,
        "s": s,
        "table_bytes": table,
        "batch_bytes": batch,
        "fraction": batch / table,
        "intensity": formula_at(formulas.embedding_intensity, random),
        "ridge_point": peaks.ridge_point,
        "row_bytes": row_bytes_of(random),
        "random_bytes_per_s": random.bytes_per_s,
        "sequential_bytes_per_s": sequential.bytes_per_s,
        "ratio": sequential.bytes_per_s / random.bytes_per_s,
    }


_SECOND_LOOK = {
    True: " The comparison was measured again and the anomaly persisted.",
    False: " Measured again, the comparison no longer showed it; the verdict reads the first.",
    None: "",
}
"""What the comparison's second look found (:attr:`ClaimResult.second_look
<gpuconcepts.results.claim.ClaimResult.second_look>`), as the DLRM page says it."""


def post_row_text(result: ClaimResult) -> str:
    """What the lookups at the post's row width showed, in words, for the DLRM page: a gap the
    model leaves out, agreement within the noise, or an anomaly (consecutive rows slower than
    random ones beyond the noise), never agreement for the last.

    >>> from dataclasses import replace
    >>> from gpuconcepts.results.claim import example
    >>> values = {"row_bytes": 512, "predicted_ratio": 1.0, "ratio": 0.147, "s": 4, "d": 128,
    ...           "ratio_512B_rows_low": 0.14, "ratio_512B_rows_high": 0.16,
    ...           "transfer_unit": "cache line", "transfer_bytes": 64}
    >>> result = replace(example(), values=values)
    >>> print(post_row_text(result).split(". ")[1])
    The measurement is an anomaly: consecutive rows ran slower than random ones (sequential ÷ random 0.15×, interval 0.14 to 0.16), which no ordering of memory explains, since consecutive rows share lines and DRAM pages that random ones do not
    """
    row, model = result.number("row_bytes"), result.number("predicted_ratio")
    names = ("ratio", f"ratio_{int(row)}B_rows_low", f"ratio_{int(row)}B_rows_high")
    measured = [result.values.get(k) for k in names]
    if not all(isinstance(v, int | float) and math.isfinite(v) for v in measured):
        return f"At the post's {plain_number(row)}-byte rows this run measured no ratio."
    ratio = result.number("ratio")
    low = result.number(f"ratio_{int(row)}B_rows_low")
    high = result.number(f"ratio_{int(row)}B_rows_high")
    unit, c = str(result.values["transfer_unit"]), int(result.number("transfer_bytes"))
    s, d = int(result.number("s")), int(result.number("d"))
    spread = (
        f"sequential ÷ random {times(ratio)}, interval {significant(low)} to {significant(high)}"
    )
    if model != 1:
        return (
            f"At the post's {plain_number(row)}-byte rows the {unit} model predicts "
            f"{times(model)}; consecutive rows ran {times(ratio)} as fast ({spread})."
        )
    lines = formulas.random_row_bytes(d=d, s=s, c=c) // c
    head = (
        f"At the post's {plain_number(row)}-byte rows a random row fills {plain_number(lines)} "
        f"whole {unit}s, exactly as a consecutive row does, so the {unit} model predicts no gap "
        f"({times(model)})."
    )
    if high < 1:
        return (
            f"{head} The measurement is an anomaly: consecutive rows ran slower than random ones "
            f"({spread}), which no ordering of memory explains, since consecutive rows share "
            f"lines and DRAM pages that random ones do not.{_SECOND_LOOK[result.second_look]} "
            "It is shown here as it came, not read as agreement."
        )
    if low > 1:
        return (
            f"{head} Yet consecutive rows still ran {times(ratio)} as fast as random ones on "
            f"this machine ({spread}). That residual is what the model leaves out, and both "
            "parts favour consecutive addresses: the hardware prefetcher recognises a stream of "
            "consecutive lines and fetches the next ones before they are asked for, and "
            "consecutive rows fall in DRAM pages the memory controller already has open, while "
            "almost every random row must open a page of its own."
        )
    return f"{head} The measurement agrees within its noise: {spread}, an interval that holds 1."


EXPERIMENT = Experiment(
    "DLRM",
    comparisons,
    {
        judge_dlrm_lookups: _lookups_read,
        judge_roles: roles_reading(lambda m, z: (_at_post_width(m, z, _lookups(m, z)),)),
    },
    {"dlrm-element": lambda device, _z: _memory_facts(device), **ROOF_FACTS},
)
"""What DLRM's claim needs measured (the element size and transfer unit found first), and how
its judge and the roofline claims' read it."""
