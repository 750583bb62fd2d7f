"""A run and its measurements as text: each kernel's time, where it sits on the roofline, what
it ran in, the peaks and the run's sizes."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from gpuconcepts.claims.quantities import time_each
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.hardware import lookup
from gpuconcepts.measurement import seconds_spread
from gpuconcepts.render.text.claims import tally_text
from gpuconcepts.roofline import Peaks, Placement, moved_bytes, place, working_set_bytes
from gpuconcepts.roofline.points import is_seconds
from gpuconcepts.tables import aligned
from gpuconcepts.units import binary_bytes, number, percent, plain_number, si, sizes
from gpuconcepts.workloads import WORKLOADS

if TYPE_CHECKING:
    from gpuconcepts.measure import Measurement
    from gpuconcepts.run import Run


def time_spread(m: Measurement) -> str:
    """A kernel's median time (3 significant digits) and its interquartile range (2): its
    whole time by :func:`~gpuconcepts.claims.quantities.time_each`, as a claim's detail quotes it.

    >>> from gpuconcepts.measure import Measurement
    >>> time_spread(Measurement("mlp", "cpu", {}, (0.011, 0.01, 0.012), 1.0, 1.0))
    '11 ms ± 1 ms'
    """
    return time_each(m)


NO_FLOOR_SPREAD = (
    "a single figure: runs recorded before 2026-12-07 kept no repetitions of their floors"
)
"""What a page says, once, beside a floor of a recorded run whose peaks kept no repetitions
of it (:func:`floor_spread` gives it bare)."""


def floor_spread(peaks: Peaks, key: str) -> str:
    """A floor or a cold sweep's point of ``peaks`` (a time: :meth:`Peaks.ceiling
    <gpuconcepts.roofline.Peaks.ceiling>`'s ``key``, such as ``latency_seconds`` or
    ``cold 1048576``) as the book gives every measured time, "median ± IQR" over the
    repetitions it was read from (:func:`~gpuconcepts.measurement.seconds_spread`, whose
    median is the floor itself: each floor is the median of what it keeps); the bare median
    where the peaks kept none of them, as runs recorded before 2026-12-07 did (a page says so
    once, in :data:`NO_FLOOR_SPREAD`'s words).

    >>> p = Peaks("cpu", 1e11, 1e10, "f", latency_seconds=7.5e-7, op_seconds=6e-7,
    ...           ceiling_seconds={"latency_seconds": (7.3e-7, 7.5e-7, 7.5e-7, 7.7e-7)})
    >>> floor_spread(p, "latency_seconds"), floor_spread(p, "op_seconds")
    ('750 ns ± 10 ns', '600 ns')
    >>> floor_spread(p, "bytes_per_s")
    Traceback (most recent call last):
    ...
    gpuconcepts.errors.GpuConceptsError: floor_spread: 'bytes_per_s' is not a time these peaks hold (a floor field set, or 'cold <bytes>' of a swept point)
    """
    value = peaks.ceiling(key)
    if value is None or not is_seconds(key):
        raise GpuConceptsError(
            f"floor_spread: {key!r} is not a time these peaks hold (a floor field set, or "
            "'cold <bytes>' of a swept point)"
        )
    kept = peaks.ceiling_seconds.get(key)
    return seconds_spread(kept) if kept else si(value, "s")


def why_bare(peaks: Peaks, key: str) -> str:
    """Why :func:`floor_spread` gives the floor ``key`` of ``peaks`` bare, in brackets, as a
    page says it once beside it; "" where its repetitions were kept.

    >>> p = Peaks("cpu", 1e11, 1e10, "f", latency_seconds=7.5e-7,
    ...           ceiling_seconds={"latency_seconds": (7.3e-7, 7.7e-7)})
    >>> why_bare(p, "latency_seconds"), why_bare(Peaks("cpu", 1e11, 1e10, "f"), "op_seconds")[:18]
    ('', ' (a single figure:')
    """
    return "" if peaks.ceiling_seconds.get(key) else f" ({NO_FLOOR_SPREAD})"


def roof_label(where: Placement) -> str:
    """The roof that binds a kernel, by its kind (``compute``, ``memory`` with the level that
    serves it, and "random rows" when its roof is that level's random-access rate rather than
    its streaming bandwidth, ``overhead``).

    >>> from gpuconcepts.roofline import Placement
    >>> roof_label(Placement(1.0, 1.6, "memory", "L2", 0.6, "memory"))
    'memory (L2)'
    >>> roof_label(Placement(1.0, 1.6, "memory", "HBM", 1.1, "memory", at_random=True))
    'memory (HBM, random rows)'
    >>> roof_label(Placement(1.0, 1.6, "compute", "compute", 0.6, "compute"))
    'compute'
    """
    if where.kind != "memory":
        return where.kind
    return (
        f"memory ({where.observed}, random rows)"
        if where.at_random
        else f"memory ({where.observed})"
    )


def roof_name(where: Placement) -> str:
    """The roof a kernel is read against, as a noun for a sentence: "the HBM roof", or "the
    random-access roof of HBM" when it is that level's random-access rate (110% of it is not
    110% of the level's streaming bandwidth).

    >>> from gpuconcepts.roofline import Placement
    >>> roof_name(Placement(1.0, 1.6, "memory", "DRAM", 0.6, "memory", at_random=True))
    'the random-access roof of DRAM'
    >>> roof_name(Placement(1.0, 1.6, "memory", "L2", 0.6, "memory"))
    'the L2 roof'
    """
    if where.at_random:
        return f"the random-access roof of {where.observed}"
    return f"the {where.observed} roof"


def observed(where: Placement, served: str | None = None) -> str:
    """The bound of the verdict and the share of that roof attained, with its spread:
    ``"memory (L3) 62% (58%–66%)"``; the spread is left out when it rounds to the share.

    >>> from gpuconcepts.roofline import Placement
    >>> observed(Placement(1.0, 1.6, "memory", "DRAM", 0.625, "memory", (0.58, 0.66)))
    'memory (DRAM) 62% (58%–66%)'
    >>> observed(Placement(1.0, 1.5, "compute", "compute", 0.667, "compute", (0.667, 0.667)))
    'compute 67%'

    A kernel below half of its nearest roof is not called bound by it; ``served`` names a
    cache its run measured no roof for (:func:`unmeasured_cache`):

    >>> observed(Placement(1.0, 8.0, "memory", "compute", 0.12, "compute", (0.12, 0.12)))
    'under half of every roof: 12% of the nearest, compute'
    >>> observed(Placement(1.0, 2.0, "memory", "HBM", 0.54, "memory"), "L2")
    "memory (L2) 54% of HBM's roof"
    """
    low, high = (percent(share) for share in where.attained_interval)
    share = percent(where.attained)
    spread = "" if low == high == share or not any(where.attained_interval) else f" ({low}–{high})"
    if served is not None and where.kind == "memory":
        return f"memory ({served}) {share}{spread} of {where.observed}'s roof"
    if not where.beaten and where.attained < EXPLAINED[0]:
        # under half of its nearest roof: that roof does not explain the time, so the label
        # says how far below it the kernel is rather than calling it bound by it
        return f"under half of every roof: {share}{spread} of the nearest, {roof_label(where)}"
    return f"{roof_label(where)} {share}{spread}"


TF32_ADDS_ONLY = frozenset({"embedding_bag_flops"})
"""Workloads (by their FLOP formula) whose arithmetic is additions only: TF32 rounds the inputs
of products and convolutions, so in a run asked for tf32 such a kernel adds in float32."""


def ran_in(m: Measurement) -> str:
    """The data type a kernel's arithmetic ran in, from its own sizes: the run's dtype, except
    that a kernel that only adds (an embedding lookup) ran in float32 in a tf32 run.

    >>> from gpuconcepts.measure import Measurement
    >>> ran_in(Measurement("dlrm-random", "cuda", {"dtype": "tf32"}, (1.0,), 1, 1))
    'float32'
    >>> ran_in(Measurement("mlp", "cuda", {"dtype": "tf32"}, (1.0,), 1, 1))
    'tf32'
    """
    dtype = str(m.params.get("dtype", ""))
    found = WORKLOADS.get(m.workload)
    if dtype == "tf32" and found is not None and found.flops.name in TF32_ADDS_ONLY:
        return "float32"
    return dtype


def kernel_sizes(m: Measurement) -> str:
    """A kernel's sizes (``units.sizes``) with the data type it ran in (:func:`ran_in`).

    >>> from gpuconcepts.measure import Measurement
    >>> kernel_sizes(Measurement("dlrm-hot", "cuda", {"B": 8, "dtype": "tf32"}, (1.0,), 1, 1))
    'B=8, float32'
    """
    params = dict(m.params)
    if "dtype" in params:
        params["dtype"] = ran_in(m)
    return sizes(params)


def unmeasured_cache(m: Measurement, peaks: Peaks, device_name: str) -> str | None:
    """The cache that served a memory-bound kernel on a GPU whose run measured no cache roof:
    ``L2`` when its working set fits in the datasheet's L2 and it reads more bytes than that
    set (every read after the first touch finds the row in L2), else None.

    >>> from gpuconcepts.measure import Measurement
    >>> p = Peaks("cuda", 989e12, 4.8e12, "bfloat16")
    >>> hot = Measurement("x", "cuda", {}, (1.0,), 1, 2**30, random_rows=2**21, row_bytes=512)
    >>> unmeasured_cache(hot, p, "cuda (NVIDIA H200)"), unmeasured_cache(hot, p, "cpu")
    (None, None)
    """
    gpu = lookup(device_name)
    if peaks.device != "cuda" or peaks.levels or gpu is None:
        return None
    held = working_set_bytes(m)
    if held <= gpu.l2_bytes and moved_bytes(m) > held:
        return f"L2, whose {binary_bytes(gpu.l2_bytes)} hold its {binary_bytes(held)}"
    return None


EXPLAINED = (0.5, 1.0)
"""A kernel is near its roof when it attains between half of it and all of it: the measured
time is within [1, 2]× of that roof's lower bound. Further below is a finding, shown as it is."""


def explained(where: Placement) -> bool:
    """True when a kernel reached at least half of its roof (see :data:`EXPLAINED`) and did
    not beat it beyond its spread."""
    return where.attained >= EXPLAINED[0] and not where.beaten


def format_peaks(peaks: Peaks) -> str:
    """One line on the measured peaks."""
    parts = [
        f"compute {si(peaks.flops_per_s, 'FLOP/s')} ({peaks.dtype} GEMM)",
        f"bandwidth {si(peaks.bytes_per_s, 'B/s')}",
    ]
    if peaks.copy_bytes_per_s and peaks.triad_bytes_per_s:
        parts[-1] += (
            f" (copy {si(peaks.copy_bytes_per_s, 'B/s')}, "
            f"triad {si(peaks.triad_bytes_per_s, 'B/s')})"
        )
    parts.append(f"ridge point {number(peaks.ridge_point)} FLOP/byte")
    if peaks.levels:
        parts.append(
            "caches "
            + ", ".join(f"{level.name} {si(level.bytes_per_s, 'B/s')}" for level in peaks.levels)
        )
    if peaks.latency_seconds is not None:
        parts.append(f"latency floor {floor_spread(peaks, 'latency_seconds')}")
    return "peaks: " + "; ".join(parts)


def format_measurements(measurements: Sequence[Measurement], peaks: Peaks) -> str:
    """Measurements as an aligned text table under ``peaks``."""
    rows = [
        [
            "workload",
            "sizes",
            "median ± IQR",
            "GFLOP/s",
            "GB/s",
            "FLOP/B",
            "roofline",
            "measured/roofline",
            "predicted",
            "bound, attained (spread)",
        ]
    ]
    for m in measurements:
        where = place(m, peaks)
        rows.append(
            [
                m.workload,
                sizes({k: v for k, v in m.params.items() if k != "dtype"}).replace(",", ""),
                time_spread(m),
                f"{number(m.flops_per_s / 1e9)}",
                f"{number(m.bytes_per_s / 1e9)}",
                f"{number(m.intensity)}",
                si(where.predicted_seconds, "s"),
                f"{number(where.ratio, 2)}",
                where.bound,
                observed(where),
            ]
        )
    return aligned(rows, left=2)


def format_run(run: Run) -> str:
    """A run as text: provenance, peaks, every measurement, the claims' tally."""
    counts = run.counts
    out = [
        f"device: {run.provenance.summary}",
        format_peaks(run.peaks),
        "",
        format_measurements(run.measurements, run.peaks),
        "",
        (
            "roofline = max(FLOPs / peak FLOP/s, bytes / peak B/s) at the measured peaks; "
            "bytes are the formulas' minimal DRAM traffic; predicted = the side of the ridge. "
            "bound = the longest of FLOPs / peak FLOP/s, bytes / the bandwidth of the level its "
            "working set fits in, and the overhead floor (its calls and operations at their "
            "latencies); attained = that bound / the median time, its spread at the quartiles."
        ),
    ]
    if run.claims:
        out.append(f"claims: {tally_text(counts)} (gpuconcepts verify shows them)")
        out.append(run.provenance.noise)
    out.extend(budget_lines(run.provenance.sizes, run.provenance.seconds))
    return "\n".join(out)


def budget_lines(sizes: Mapping[str, Any], seconds: float) -> list[str]:
    r"""What a run was allowed to spend, what was made smaller to keep to it, and the time it
    took, last (only the time for runs saved before budgets).

    >>> budget = {"seconds": 60.0, "memory_bytes": 2**31, "largest_array_bytes": 2**28,
    ...           "shrunk": ["the last cache: sysfs reports 300 MiB, ..."]}
    >>> print("\n".join(budget_lines({"budget": budget}, 48.2)))
    budget: 60 s and 2,048 MiB, arrays of at most 256 MiB
      made smaller: the last cache: sysfs reports 300 MiB, ...
    wall time 48.2 s
    >>> budget_lines({"budget": budget}, 75.0)[-1]
    'wall time 75 s, over its budget of 60 s'
    """
    budget = sizes.get("budget")
    if not budget:
        return [f"wall time {number(seconds)} s"]
    over = f", over its budget of {number(budget['seconds'])} s"
    return [
        (
            f"budget: {number(budget['seconds'])} s and "
            f"{plain_number(budget['memory_bytes'] // 2**20)} MiB, arrays of at most "
            f"{plain_number(budget['largest_array_bytes'] // 2**20)} MiB"
        ),
        *(f"  made smaller: {line}" for line in budget.get("shrunk", ())),
        f"wall time {number(seconds)} s{over if seconds > budget['seconds'] else ''}",
    ]


def with_interval_text(
    value: float, interval: tuple[float, float], unit: str = "s", per: str = ""
) -> str:
    """A quantity derived from measured ones (a difference of two kernels' times, a cost per
    step, a fitted latency or bandwidth) with its bootstrap interval
    (:func:`~gpuconcepts.claims.quantities.with_interval`), as the claims give a derived
    quantity; ``per`` names what it is a time of, before the interval. Each end is rounded
    as the value is (3 significant digits); an infinite upper end has no bound.

    >>> with_interval_text(9.87e-6, (9.52e-6, 1.02e-5), per="a step")
    '9.87 µs a step (interval [9.52 µs, 10.2 µs])'
    >>> with_interval_text(2e9, (1.5e9, float("inf")), "B/s")
    '2 GB/s (interval [1.5 GB/s, no upper bound])'
    """
    low, high = interval
    of = f" {per}" if per else ""
    top = "no upper bound" if math.isinf(high) else si(high, unit)
    return f"{si(value, unit)}{of} (interval [{si(low, unit)}, {top}])"
