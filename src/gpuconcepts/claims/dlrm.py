# ruff: noqa: PLC0415
# (torch is imported inside functions, through gpuconcepts.kernels: DESIGN rule 3)
"""DLRM's claim: random embedding lookups stream far slower than consecutive ones.

:func:`_dlrm` asks the lab for random and sequential lookups at the post's row width and at
other widths of the same bytes per batch, in a table sized by the device's free memory;
:func:`judge_dlrm_lookups` turns them into a verdict (no kernel runs there).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from gpuconcepts import formulas
from gpuconcepts.claims import thresholds as T
from gpuconcepts.claims.quantities import formula_at, param, sizes
from gpuconcepts.claims.result import ClaimResult, PlotSpec, Series
from gpuconcepts.claims.shape import _bars
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.lab import Lab
from gpuconcepts.measure import Measurement
from gpuconcepts.questions import question
from gpuconcepts.roofline import Peaks
from gpuconcepts.units import MiB, binary_bytes, describe_bytes, percent, plain_number, si, times

if TYPE_CHECKING:
    from gpuconcepts.claims.experiments import ClaimSizes, Found


def _dlrm(lab: Lab, z: ClaimSizes) -> Found:
    s = int(lab.fact("dlrm-element", lambda: {"s": _embedding_element_bytes(lab.device)})["s"])
    table_bytes = min(z.dlrm_table_mib * MiB, lab.free_bytes // 4)
    pairs: dict[int, tuple[Measurement, Measurement]] = {}
    for d in z.dlrm_widths:
        L = z.dlrm_L * z.dlrm_d // d  # the same bytes per batch at every row width
        row_bytes = int(formulas.embedding_memory(N=1, d=d, s=s))
        N = max(z.dlrm_B * L, table_bytes // row_bytes)
        random, sequential = (
            lab.measure(f"dlrm-{pattern}", N=N, B=z.dlrm_B, L=L, d=d)
            for pattern in ("random", "sequential")
        )
        pairs[d] = (random, sequential)
    random, sequential = pairs.pop(z.dlrm_d)
    result = judge_dlrm_lookups(
        random,
        sequential,
        peaks=lab.peaks,
        cache_bytes=lab.cache_bytes,
        device=lab.label,
        widths=tuple(pairs.values()),
    )
    return [result], {"dlrm-random": random}


def _embedding_element_bytes(device: str) -> int:
    import torch

    from gpuconcepts.kernels import default_dtype, torch_dtype

    return int(
        torch.empty((), dtype=torch_dtype(default_dtype(device, "embedding"))).element_size()
    )


def _row_bytes(m: Measurement) -> float:
    """Bytes of one embedding row: the table's formula at N = 1."""
    return float(formulas.embedding_memory(N=1, d=param(m, "d"), s=param(m, "s")))


def judge_dlrm_lookups(
    random: Measurement,
    sequential: Measurement,
    *,
    peaks: Peaks,
    cache_bytes: int,
    device: str,
    widths: Sequence[tuple[Measurement, Measurement]] = (),
) -> ClaimResult:
    """Random lookups reach much lower bandwidth than sequential ones; batch ≪ table.

    The prediction restates the post's 51.2 GB table and 1 MiB batch (Q10, Q11) and the same
    formulas at the table size that fits here. Visible only when the table is at least
    :data:`~gpuconcepts.claims.thresholds.DLRM_MIN_CACHE_MULTIPLE` times the last-level cache.

    The verdict is taken at the post's row width. ``widths`` may add (random, sequential)
    pairs at other row widths with the same bytes per batch: they are plotted and reported,
    to show where the access order starts to matter, but do not change the verdict.
    """
    names = ("N", "B", "L", "d", "s")
    if sizes(random, *names) != sizes(sequential, *names):
        raise GpuConceptsError("random and sequential lookups must use the same N, B, L, d, s")
    N, B, L, d, s = sizes(random, *names)
    post_table, post_batch = float(question(10).steps[0].value), float(question(11).steps[0].value)
    table = formula_at(formulas.embedding_memory, random)
    batch = formula_at(formulas.embedding_payload, random)
    intensity = formula_at(formulas.embedding_intensity, random)
    row = _row_bytes(random)
    ridge = peaks.ridge_point
    ratio = sequential.bytes_per_s / random.bytes_per_s
    multiple = table / cache_bytes
    visible = multiple >= T.DLRM_MIN_CACHE_MULTIPLE
    reason = (
        ""
        if visible
        else f"the table ({binary_bytes(table)}) is only {times(multiple)} the "
        f"{binary_bytes(cache_bytes)} last-level cache, so random rows are served from cache"
    )
    pairs = sorted([*widths, (random, sequential)], key=lambda pair: param(pair[0], "d"))
    row_bytes = tuple(_row_bytes(r) for r, _ in pairs)
    if len(set(row_bytes)) != len(row_bytes):
        raise GpuConceptsError(f"row widths must differ; got {sorted(row_bytes)} bytes")
    ratios = tuple(q.bytes_per_s / r.bytes_per_s for r, q in pairs)
    measured = (
        f"random {si(random.bytes_per_s, 'B/s')}, sequential "
        f"{si(sequential.bytes_per_s, 'B/s')} (DRAM peak {si(peaks.bytes_per_s, 'B/s')})"
        f": sequential/random = {times(ratio)} with {plain_number(row)}-byte rows"
    )
    dram = (("measured DRAM bandwidth", peaks.bytes_per_s),)
    if len(pairs) > 1:
        measured += "; at other widths: " + ", ".join(
            f"{times(x)} ({plain_number(b)}-byte rows)"
            for b, x in zip(row_bytes, ratios, strict=True)
            if b != row
        )
        plot = PlotSpec(
            title="Embedding lookups: achieved bandwidth by access order and row width",
            x_label="bytes per embedding row (d·s)",
            y_label="achieved bandwidth (bytes/s)",
            series=(
                Series(
                    "random rows",
                    row_bytes,
                    tuple(r.bytes_per_s for r, _ in pairs),
                    low=tuple(r.interval_bytes_per_s[0] for r, _ in pairs),
                    high=tuple(r.interval_bytes_per_s[1] for r, _ in pairs),
                ),
                Series(
                    "consecutive rows",
                    row_bytes,
                    tuple(q.bytes_per_s for _, q in pairs),
                    low=tuple(q.interval_bytes_per_s[0] for _, q in pairs),
                    high=tuple(q.interval_bytes_per_s[1] for _, q in pairs),
                ),
            ),
            hlines=dram,
            vlines=((f"the post's rows (d={d})", row),),
        )
    else:
        plot = _bars(
            "Embedding lookups: achieved bandwidth by access order",
            "access order",
            "achieved bandwidth (bytes/s)",
            ("random rows", "consecutive rows"),
            (random.bytes_per_s, sequential.bytes_per_s),
            log_y=False,
            hlines=dram,
            spread=(random.interval_bytes_per_s, sequential.interval_bytes_per_s),
        )
    return ClaimResult(
        key="dlrm-random-vs-sequential",
        architecture="DLRM",
        claim="Random embedding lookups reach much lower bandwidth than sequential ones; "
        "a batch touches a tiny part of a huge table.",
        prediction=f"The post's table is {describe_bytes(post_table)}; one batch reads "
        f"{describe_bytes(post_batch)}, {percent(post_batch / post_table)} of it. Here the table has "
        f"{plain_number(N)} rows ({binary_bytes(table)}) and a batch of {plain_number(B)}×"
        f"{plain_number(L)} rows reads {binary_bytes(batch)}, {percent(batch / table)} of it. "
        f"Intensity {intensity:.3g} FLOP/byte, far below the ridge point {ridge:.3g}: "
        "memory-bound, and scattered rows should stream slower than consecutive ones.",
        measured=measured,
        threshold=f"sequential/random ≥ {T.DLRM_MIN_BANDWIDTH_RATIO:g}×; shown only when the "
        f"table is ≥ {T.DLRM_MIN_CACHE_MULTIPLE:g}× the last-level cache "
        f"({binary_bytes(cache_bytes)})",
        verdict=visible and ratio >= T.DLRM_MIN_BANDWIDTH_RATIO,
        device=device,
        visible=visible,
        reason=reason,
        values={
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
            "intensity": intensity,
            "ridge_point": ridge,
            "random_bytes_per_s": random.bytes_per_s,
            "sequential_bytes_per_s": sequential.bytes_per_s,
            "ratio": ratio,
            "cache_bytes": cache_bytes,
            "cache_multiple": multiple,
            **{f"ratio_{int(b)}B_rows": x for b, x in zip(row_bytes, ratios, strict=True)},
        },
        plot=plot,
    )
