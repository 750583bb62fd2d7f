r"""Text rendering: runs, measurements, claims and comparisons as text for the command line, and
the sentences the book's pages say about a measurement.

Everything here reads values (:class:`~gpuconcepts.run.Run`, measurements, claim results) and
returns strings; nothing measures. Times are shown as the median with its interquartile range,
the one statistic of :class:`~gpuconcepts.measure.Measurement`.

>>> from gpuconcepts.measure import Measurement
>>> from gpuconcepts.roofline import Peaks
>>> p = Peaks(device="cpu", flops_per_s=1e11, bytes_per_s=1e10, dtype="float32")
>>> m = Measurement("mlp", "cpu", {"B": 64}, (0.011, 0.01, 0.012), 1e9, 2e7)
>>> print(format_measurements([m], p))
workload  sizes  median ± IQR  GFLOP/s  GB/s  FLOP/B  roofline  measured/roofline  predicted  bound, attained (spread)
mlp       B=64   11 ms ± 1 ms     90.9  1.82      50     10 ms                1.1    compute     compute 91% (87%–95%)
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from gpuconcepts import formulas
from gpuconcepts.claims.result import Verdict, tally
from gpuconcepts.hardware import dtype_bytes, lookup
from gpuconcepts.roofline import (
    COLD_START,
    OPERATION_CHAIN,
    RANDOM_ACCESS,
    Peaks,
    Placement,
    diagnoses,
    diagnosis,
    moved_bytes,
    paired_peaks,
    place,
    random_rows_per_call,
    random_table_bytes,
    working_set_bytes,
)
from gpuconcepts.units import (
    binary_bytes,
    decimal_bytes,
    in_words,
    number,
    percent,
    plain_number,
    plural,
    si,
    significant,
    sizes,
    times,
)
from gpuconcepts.workloads import WORKLOADS

if TYPE_CHECKING:
    from gpuconcepts.claims.result import ClaimResult
    from gpuconcepts.measure import Measurement
    from gpuconcepts.run import Run

WIDTH = 100
"""Text output is wrapped to this many columns."""


def text_table(rows: Sequence[Sequence[str]]) -> str:
    """Align text cells in columns (the first two left, the others right).

    >>> print(text_table([["a", "b", "c"], ["long", "x", "1"]]))
    a     b  c
    long  x  1
    """
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [
            cell.ljust(width) if i < 2 else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def time_spread(m: Measurement) -> str:
    """The median time (3 significant digits) and its interquartile range (2).

    >>> from gpuconcepts.measure import Measurement
    >>> time_spread(Measurement("mlp", "cpu", {}, (0.011, 0.01, 0.012), 1.0, 1.0))
    '11 ms ± 1 ms'
    """
    return f"{si(m.seconds, 's')} ± {si(m.iqr_seconds, 's', digits=2)}"


def roof_label(where: Placement) -> str:
    """The roof that binds a kernel, by its kind (``compute``, ``memory`` with the level that
    serves it, ``overhead``).

    >>> from gpuconcepts.roofline import Placement
    >>> roof_label(Placement(1.0, 1.6, "memory", "L2", 0.6, "memory"))
    'memory (L2)'
    >>> roof_label(Placement(1.0, 1.6, "compute", "compute", 0.6, "compute"))
    'compute'
    """
    return f"memory ({where.observed})" if where.kind == "memory" else where.kind


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


def why_unexplained(m: Measurement, peaks: Peaks) -> str | None:
    """Why ``m`` misses its roof (None when it is within [1, 2]× of it): the share of the roof
    it reached, and the mechanism measured apart from it that accounts for most of its time
    (:func:`gpuconcepts.roofline.diagnosis`), or that none does; the verdict stays the roof's.

    >>> from gpuconcepts.measure import Measurement
    >>> from gpuconcepts.roofline import Peaks
    >>> p = Peaks("cpu", 1e11, 1e10, "float32")
    >>> why_unexplained(Measurement("mlp", "cpu", {}, (0.015,), 1e9, 1e6), p) is None
    True
    >>> print(why_unexplained(Measurement("mlp", "cpu", {}, (0.03,), 1e9, 1e6), p))
    it reached 33% of its compute roof; no mechanism measured apart from it accounts for the rest
    >>> print(why_unexplained(Measurement("x", "cpu", {}, (0.01, 0.02, 0.03), 1e6, 1e6), p))
    its repetitions spread 50% about the median, so its share is uncertain. It reached 0.5% of its memory (DRAM) roof; no mechanism measured apart from it accounts for the rest
    >>> print(why_unexplained(Measurement("mlp", "cpu", {}, (0.0098,), 1e9, 1e6), p))
    it took 2% less time than its compute roof allows: a faulty measurement, or a ceiling measured in a busy moment (the run's noise probe says how busy)
    >>> two = Peaks("cpu", 1e11, 1e10, "float32", threads=2)
    >>> print(why_unexplained(Measurement("mlp", "cpu", {}, (0.05,), 1e9, 1e6, threads=1), two))
    it ran on 1 thread where its roofs had 2, since another program had taken a core before it was timed. It reached 20% of its compute roof; no mechanism measured apart from it accounts for the rest
    """
    where = place(m, peaks)
    if explained(where):
        return None
    roof = roof_label(where)
    if where.beaten:
        # a ratio near one reads as "1×" at the book's precision: say how much time it saved
        beat = (
            f"ran {times(where.attained)} as fast as its {roof} roof allows"
            if where.attained >= 1.5
            else f"took {percent(1 - 1 / where.attained)} less time than its {roof} roof allows"
        )
        cause = (
            f"it {beat}: a faulty measurement, or a ceiling measured in a busy moment (the "
            "run's noise probe says how busy)"
        )
    else:
        found = diagnosis(m, peaks)
        why = (
            "no mechanism measured apart from it accounts for the rest"
            if found is None
            else f"{found.mechanism} ({found.source}) accounts for "
            f"{percent(found.share(m))} of its time"
        )
        cause = f"it reached {percent(where.attained)} of its {roof} roof; {why}"
    if m.threads and peaks.threads and m.threads < peaks.threads:
        cause = (
            f"it ran on {plural(m.threads, 'thread')} where its roofs had "
            f"{plain_number(peaks.threads)}, since another program had taken a core before it "
            f"was timed. {_capital(cause)}"
        )
    if m.noisy:
        spread = percent(m.iqr_seconds / m.seconds)
        return (
            f"its repetitions spread {spread} about the median, so its share is uncertain. "
            f"{_capital(cause)}"
        )
    return cause


def _capital(sentence: str) -> str:
    """A sentence that follows another: its first letter capital.

    >>> _capital("its bytes")
    'Its bytes'
    """
    return sentence[:1].upper() + sentence[1:]


def _mechanism_seconds(m: Measurement, peaks: Peaks, mechanism: str) -> float | None:
    """The least time ``mechanism`` allows ``m`` (:func:`gpuconcepts.roofline.diagnoses`)."""
    return next((d.seconds for d in diagnoses(m, peaks) if d.mechanism == mechanism), None)


def chain_bound(m: Measurement, peaks: Peaks) -> float | None:
    """The least time the operation chain allows a kernel of dependent steps, at the floors
    it was timed beside (:func:`gpuconcepts.roofline.paired_peaks`); None where the run counted
    no operations or measured no floor.

    >>> from gpuconcepts.measure import Measurement
    >>> p = Peaks("cuda", 1e14, 1e12, "bfloat16", latency_seconds=1e-5, op_seconds=1e-5)
    >>> loop = Measurement("rnn-loop", "cuda", {}, (0.02,), 2e6, 1e5, ops=1025, calls=1025,
    ...                    steps=256)
    >>> print(si(chain_bound(loop, p) or 0.0, "s"))
    10.2 ms
    """
    return _mechanism_seconds(m, paired_peaks(m, peaks), OPERATION_CHAIN)


def chain_sentence(m: Measurement, peaks: Peaks) -> str:
    """What the operation chain (:func:`gpuconcepts.roofline.diagnoses`) says of a kernel of
    dependent steps, in a sentence for a page: its operations per step, counted from its code
    path, at their floors (the per-operation floor inside the framework, the latency floor for
    those Python calls), against its measured time.

    >>> from gpuconcepts.measure import Measurement
    >>> p = Peaks("cpu", 1e11, 1e10, "float32", latency_seconds=3e-6, op_seconds=1e-6)
    >>> loop = Measurement("rnn-loop", "cpu", {}, (6e-3,), 2e6, 1e5, ops=4096, steps=1024)
    >>> print(chain_sentence(loop, p))
    The operation chain makes this exact: `rnn-loop` dispatches 4 operations a step (4,096 in all, counted under the profiler), and no operation here takes less than 1 µs, so its 1,024 dependent steps, each computing only once its operations are dispatched, cannot take less than 4.12 ms. It took 6 ms: the chain accounts for 69% of its time.
    >>> calls = Measurement("rnn-loop", "cpu", {}, (15e-3,), 2e6, 1e5, ops=4096, calls=4096,
    ...                     steps=1024)
    >>> print(chain_sentence(calls, p))
    The operation chain makes this exact: `rnn-loop` dispatches 4 operations a step (4,096 in all, counted under the profiler), every one called from Python, and no call from Python takes less than 3 µs, so its 1,024 dependent steps, each computing only once its operations are dispatched, cannot take less than 12.3 ms. It took 15 ms: the chain accounts for 82% of its time.
    """
    bound = chain_bound(m, peaks)
    peaks = paired_peaks(m, peaks)  # the floors it was timed beside, where it was
    if m.ops is None or m.steps is None or peaks.op_seconds is None or bound is None:
        return "This run counted no operations per step, so the chain cannot be drawn for it."
    took = m.seconds
    calls = (m.calls or 0) if peaks.latency_seconds is not None else 0
    if calls == m.ops:
        floors = (
            f"every one called from Python, and no call from Python takes less than "
            f"{si(peaks.latency_seconds or 0.0, 's')}"
        )
    elif calls:
        floors = (
            f"{plain_number(calls)} of them called from Python; no operation here takes less "
            f"than {si(peaks.op_seconds, 's')}, nor a call from Python less than "
            f"{si(peaks.latency_seconds or 0.0, 's')}"
        )
    else:
        floors = f"and no operation here takes less than {si(peaks.op_seconds, 's')}"
    # on a CPU the thread that dispatches an operation then runs it: the arithmetic adds
    serial = (
        ", each computing only once its operations are dispatched," if m.device == "cpu" else ""
    )
    return (
        f"The operation chain makes this exact: `{m.workload}` dispatches "
        f"{significant(m.ops / m.steps, 2)} operations a step ({plain_number(m.ops)} in all, "
        f"counted under the profiler), {floors}, so its {plain_number(m.steps)} dependent "
        f"steps{serial} cannot take less than {si(bound, 's')}. It took {si(took, 's')}: "
        f"the chain accounts for {percent(bound / took)} of its time."
    )


def cold_start_sentence(peaks: Peaks) -> str:
    """What the cold sweep (:meth:`gpuconcepts.roofline.Peaks.cold_seconds`) measured, in a
    sentence for a page: a read right after a flush against the streaming bound, at the
    sweep's smallest and largest arrays.

    >>> p = Peaks("cpu", 1e11, 1e10, "float32", cold_sweep=((2**20, 3e-4), (2**27, 1.5e-2)))
    >>> print(cold_start_sentence(p))
    Read once right after a flush, 1 MiB took 300 µs, 2.9× what streaming at DRAM's bandwidth allows, and 128 MiB took 15 ms, 1.1× it: the cold start costs a fixed price that a large kernel spreads thin.
    """
    if not peaks.cold_sweep:
        return (
            "This run measured no cold start, so a kernel timed after a flush is read against "
            "the streaming roof alone."
        )
    points = sorted(peaks.cold_sweep)
    parts = [
        f"{binary_bytes(size)} took {si(seconds, 's')}, {times(seconds * peaks.bytes_per_s / size)}"
        for size, seconds in (points[0], points[-1])
    ]
    return (
        f"Read once right after a flush, {parts[0]} what streaming at DRAM's bandwidth allows, "
        f"and {parts[1]} it: the cold start costs a fixed price that a large kernel spreads thin."
    )


def cold_read_sentence(m: Measurement, peaks: Peaks) -> str:
    """What the cold start (:meth:`gpuconcepts.roofline.Peaks.cold_seconds`) says of a kernel
    timed right after a cache flush, in a sentence for a page: the bound a plain read of its
    bytes sets, against the streaming one and its measured time.

    >>> from gpuconcepts.measure import Measurement
    >>> p = Peaks("cpu", 1e11, 1e10, "float32", cold_sweep=((2**24, 2.5e-3),))
    >>> m = Measurement("mlp", "cpu", {"B": 1}, (4e-3,), 2**23, 2**24, flush=True)
    >>> print(cold_read_sentence(m, p))
    It was timed right after a cache flush, as every memory-bound kernel here is, so its 16.78 MB came from DRAM starting cold: a plain read of as many bytes, started the same way, took 2.5 ms, where streaming at DRAM's bandwidth would take 1.68 ms. It took 4 ms, so the cold read accounts for 62% of its time.
    """
    moved = moved_bytes(m)
    cold = _mechanism_seconds(m, peaks, COLD_START)
    if cold is None:
        return (
            "It was not timed after a cache flush, or this run measured no cold start, so the "
            "streaming roof alone bounds it."
        )
    dram = peaks.memory_roofs[-1]
    bound = max(cold, moved / dram.bytes_per_s)
    return (
        "It was timed right after a cache flush, as every memory-bound kernel here is, so its "
        f"{decimal_bytes(moved)} came from {dram.name} starting cold: a plain read of as many "
        f"bytes, started the same way, took {si(cold, 's')}, where streaming at {dram.name}'s "
        f"bandwidth would take {si(moved / dram.bytes_per_s, 's')}. It took "
        f"{si(m.seconds, 's')}, so the cold read accounts for {percent(bound / m.seconds)} of "
        "its time."
    )


def gemm_shape_sentence(peaks: Peaks) -> str:
    """What the GEMM sweep found on this machine, in a sentence for a page: at the sweep's widest
    weight, the matrix-vector product's rate (as the bytes it streams, against DRAM's roof) and
    the rate of the most rows swept, against the compute peak.

    >>> p = Peaks("cpu", 2e11, 4e10, "float32", gemm_sweep=(
    ...     (1, 2048, False, 8e9), (1, 2048, True, 5e9), (16, 2048, False, 5e10),
    ...     (256, 2048, False, 1.2e11)))
    >>> print(gemm_shape_sentence(p))
    Here a matrix-vector product by a 2,048-wide weight, timed after a flush, reached 5 GFLOP/s: it streamed its weights at 10 GB/s, 25% of DRAM's roof. With 256 rows the product reached 120 GFLOP/s, 60% of the compute peak.
    """
    if not peaks.gemm_sweep:
        return "This run measured no GEMM sweep, so only the compute peak bounds its products."
    width = max(point[1] for point in peaks.gemm_sweep)
    at_width = [point for point in peaks.gemm_sweep if point[1] == width]
    vector = [point for point in at_width if point[0] == 1]
    cold = [point for point in vector if point[2]]
    parts = []
    if vector:
        rows, _, flushed, flops_per_s = (cold or vector)[0]
        s = dtype_bytes(peaks.dtype)
        flops = formulas.mlp_flops(B=rows, d_in=width, d_out=width)
        bytes_per_s = (
            flops_per_s
            * float(formulas.mlp_bytes(B=rows, d_in=width, d_out=width, s=s))
            / float(flops)
        )
        started = ", timed after a flush," if flushed else ""
        parts.append(
            f"Here a matrix-vector product by a {plain_number(width)}-wide weight{started} "
            f"reached {si(flops_per_s, 'FLOP/s')}: it streamed its weights at "
            f"{si(bytes_per_s, 'B/s')}, {percent(bytes_per_s / peaks.bytes_per_s)} of "
            f"{peaks.memory_roofs[-1].name}'s roof."
        )
    most = max(at_width, key=lambda point: point[0])
    if most[0] > 1:
        parts.append(
            f"With {plain_number(most[0])} rows the product reached {si(most[3], 'FLOP/s')}, "
            f"{percent(most[3] / peaks.flops_per_s)} of the compute peak."
        )
    if peaks.activation_per_s:
        parts.append(
            f"An activation (tanh) ran at {in_words(peaks.activation_per_s)} elements a second."
        )
    return " ".join(parts)


def random_access_sentence(m: Measurement, peaks: Peaks) -> str:
    """What the random-access sweep (a diagnosis) says of a lookup of rows at random addresses, in a sentence
    for a page: the lines its rows cost, at the line fetches per second the sweep measured.

    >>> from gpuconcepts.measure import Measurement
    >>> p = Peaks("cpu", 1e11, 1e10, "float32", line_bytes=64,
    ...           random_sweep=((2**28, 16, 3e7), (2**28, 256, 5e7)))
    >>> lookup = Measurement("dlrm-random", "cpu", {}, (0.05,), 2**22, 2**24,
    ...                      random_rows=2**20, row_bytes=16)
    >>> print(random_access_sentence(lookup, p))
    Streaming bandwidth is the wrong ceiling for rows at random addresses: each of its 1,048,576 rows of 16 bytes costs 1 whole line of 64 bytes, and this machine fetched at most 30 million independent lines a second (its random-access sweep, rows of 16 bytes from a table of 256 MiB in calls of 262,144 rows). That rate allows 35 ms; the lookup took 50 ms, so random access accounts for 70% of its time.
    """
    point = (
        None
        if m.row_bytes is None
        else peaks.random_point(m.row_bytes, random_table_bytes(m), m.random_rows)
    )
    if m.random_rows is None or m.row_bytes is None or point is None or peaks.line_bytes is None:
        return "This run measured no random-access sweep, so no diagnosis reads its lookups."
    table, swept, rate = point[0], point[1], point[-1]
    calls = random_rows_per_call(point)
    lines = formulas.random_row_bytes(d=m.row_bytes, s=1, c=peaks.line_bytes) // peaks.line_bytes
    bound = _mechanism_seconds(m, peaks, RANDOM_ACCESS) or 0.0
    took = m.seconds
    return (
        "Streaming bandwidth is the wrong ceiling for rows at random addresses: each of its "
        f"{plain_number(m.random_rows)} rows of {plain_number(m.row_bytes)} bytes costs "
        f"{plural(lines, 'whole line')} of {plain_number(peaks.line_bytes)} bytes, and this "
        f"machine fetched at most {in_words(rate)} independent lines a second (its "
        f"random-access sweep, rows of {plain_number(swept)} bytes from a table of "
        f"{binary_bytes(table)} in calls of {plain_number(calls)} rows). That rate allows "
        f"{si(bound, 's')}; the lookup took {si(took, 's')}, so random access accounts for "
        f"{percent(bound / took)} of its time."
    )


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
        parts.append(f"latency floor {si(peaks.latency_seconds, 's')}")
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
    return text_table(rows)


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


# -- claims ------------------------------------------------------------------------------------
def tally_text(counts: Mapping[Verdict, int]) -> str:
    """How many claims got each verdict, in words.

    >>> tally_text({"holds": 30, "fails": 1, "undecided": 2, "not visible": 1})
    '30 hold, 1 fail, 2 undecided, 1 not visible'
    """
    return (
        f"{plain_number(counts['holds'])} hold, {plain_number(counts['fails'])} fail, "
        f"{plain_number(counts['undecided'])} undecided, "
        f"{plain_number(counts['not visible'])} not visible"
    )


def tally_sentence(counts: Mapping[Verdict, int]) -> str:
    """How many claims got each verdict, as a sentence's words for a page.

    >>> tally_sentence({"holds": 30, "fails": 1, "undecided": 1, "not visible": 1})
    '30 hold on this device, 1 fails, 1 is undecided and 1 cannot be shown here'
    >>> tally_sentence({"holds": 1, "fails": 2, "undecided": 0, "not visible": 0})
    '1 holds on this device, 2 fail, none is undecided and all can be shown here'
    """

    def count(n: int, one: str, many: str) -> str:
        return f"{'none' if n == 0 else plain_number(n)} {one if n <= 1 else many}"

    return (
        f"{count(counts['holds'], 'holds', 'hold')} on this device, "
        f"{count(counts['fails'], 'fails', 'fail')}, "
        f"{count(counts['undecided'], 'is undecided', 'are undecided')} and "
        + (
            f"{plain_number(counts['not visible'])} cannot be shown here"
            if counts["not visible"]
            else "all can be shown here"
        )
    )


def _wrap(label: str, text: str) -> list[str]:
    head = f"{' ' * 6}{label:<13}"
    return textwrap.wrap(text, WIDTH, initial_indent=head, subsequent_indent=" " * len(head))


def format_claim(position: int, result: ClaimResult) -> str:
    """One claim as a few wrapped lines: verdict, claim, prediction, alternative, pass region,
    measurement, and why when it does not hold.

    >>> from gpuconcepts.claims.result import example
    >>> print(format_claim(1, example(1.5)))
     1. [fails] MLP: Bigger batches run faster per sample.
          predicted:   intensity rises from 0.5 to 64 FLOP/byte (FLOP/s gain = 8)
          rules out:   FLOP/s independent of batch (FLOP/s gain = 1)
          pass region: FLOP/s gain ≥ 2
          measured:    FLOP/s gain = 1.5 (interval [1.5, 1.5])
          why:         the measured 1.5 lies outside the pass region (≥ 2)
    """
    lines = textwrap.wrap(
        f"[{result.verdict}] {result.architecture}: {result.claim}",
        WIDTH,
        initial_indent=f"{position:>2}. ",
        subsequent_indent="    ",
    )
    test = result.test
    lines += _wrap(
        "predicted:", f"{result.prediction} ({test.quantity} = {number(test.predicted)})"
    )
    lines += _wrap("rules out:", result.alternative)
    lines += _wrap("pass region:", result.pass_region)
    lines += _wrap("measured:", result.measured)
    if result.verdict != "holds":
        lines += _wrap("why:", result.why)
    return "\n".join(lines)


def format_claims(run: Run, claims: Sequence[ClaimResult] | None = None) -> str:
    """The claims of a run as text: the device and peaks, each claim, a summary."""
    results = run.claims if claims is None else tuple(claims)
    peaks = run.peaks
    head = [
        *textwrap.wrap(
            f"gpuconcepts verify: {run.provenance.summary} ({number(run.provenance.seconds)} s)",
            WIDTH,
            subsequent_indent="    ",
        ),
        (
            f"measured peaks: {si(peaks.flops_per_s, 'FLOP/s')} ({peaks.dtype}), "
            f"{si(peaks.bytes_per_s, 'B/s')}; ridge point {number(peaks.ridge_point)} FLOP/byte"
        ),
        "",
    ]
    body = [format_claim(i, r) for i, r in enumerate(results, start=1)]
    summary = f"Of {plural(len(results), 'claim')}: {tally_text(tally(results))} on this device."
    noise = textwrap.wrap(run.provenance.noise, WIDTH)
    return "\n".join([*head, "\n\n".join(body), "", summary, *noise])


# -- several devices ---------------------------------------------------------------------------
def _shape(m: Measurement) -> str:
    """A measurement's sizes without the dtype (a GPU measures in bfloat16 what a CPU measures
    in float32; the dtype is reported per run)."""
    return sizes({k: v for k, v in m.params.items() if k not in ("dtype", "s")})


def _cell(m: Measurement, run: Run) -> dict[str, Any]:
    """One run's time, spread and bound of one measurement, placed under that run's peaks."""
    where = place(m, run.peaks)
    return {
        "dtype": m.params.get("dtype"),
        "seconds": m.seconds,
        "iqr_seconds": m.iqr_seconds,
        "flops_per_s": m.flops_per_s,
        "bytes_per_s": m.bytes_per_s,
        "roofline_ratio": where.ratio,
        "bound": where.bound,
        "observed": where.observed,
        "attained": where.attained,
    }


def compare_rows(runs: Sequence[Run]) -> list[dict[str, Any]]:
    """One row per workload and sizes measured by any run: each run's time, spread and bound.

    Rows are keyed by workload and sizes without the dtype (see :func:`_shape`). ``runs`` of a
    row holds one cell per run, in the order given (None where that run did not measure it):
    columns belong to runs, never to labels, so two runs of one machine stay two columns.
    """
    order: list[tuple[str, str]] = []
    cells: dict[tuple[str, str], dict[int, dict[str, Any]]] = {}
    for index, run in enumerate(runs):
        for m in run.measurements:
            key = (m.workload, _shape(m))
            if key not in cells:
                order.append(key)
                cells[key] = {}
            if index not in cells[key]:
                cells[key][index] = _cell(m, run)
    return [
        {
            "workload": w,
            "sizes": s,
            "runs": [cells[(w, s)].get(index) for index in range(len(runs))],
        }
        for w, s in order
    ]


def preset_rows(runs: Sequence[Run]) -> list[dict[str, Any]]:
    """One row per workload: each run's first measurement of it, at that run's own sizes.

    A run measures each workload first at its device's preset sizes, which differ from one
    device class to the next (a GPU's are larger), so :func:`compare_rows` rarely meets two
    devices on one row; this sets each machine's own kernel side by side, its sizes in the
    cell (``sizes``). None where a run did not measure the workload.
    """
    order = list(dict.fromkeys(m.workload for run in runs for m in run.measurements))
    rows = []
    for workload in order:
        firsts = [
            next((m for m in run.measurements if m.workload == workload), None) for run in runs
        ]
        rows.append(
            {
                "workload": workload,
                "runs": [
                    None if m is None else {"sizes": _shape(m), **_cell(m, run)}
                    for m, run in zip(firsts, runs, strict=True)
                ],
            }
        )
    return rows


def compare_dict(runs: Sequence[Run]) -> dict[str, Any]:
    """What ``gpuconcepts compare --json`` prints: devices, peaks and every workload."""
    return {
        "devices": [
            {
                "label": run.label,
                "provenance": run.provenance.to_dict(),
                "peaks": run.peaks.to_dict(),
                "claims": {r.key: r.verdict for r in run.claims},
            }
            for run in runs
        ],
        "workloads": compare_rows(runs),
    }


def format_compare(runs: Sequence[Run]) -> str:
    """Devices side by side as text: peaks and ridge points, then each workload's time and bound
    on each device (a dash where a device did not measure it)."""
    names = [f"[{i}]" for i in range(1, len(runs) + 1)]
    out = ["devices:"]
    for name, run in zip(names, runs, strict=True):
        out.append(f"  {name} {run.provenance.summary}")
        out.append(f"      {format_peaks(run.peaks)}")
    rows = [["workload", "sizes", *names]]
    for row in compare_rows(runs):
        cells = [
            "—"
            if cell is None
            else f"{si(cell['seconds'], 's')} ±{si(cell['iqr_seconds'], 's', digits=2)} "
            f"{cell['bound']}/{cell['observed']}"
            for cell in row["runs"]
        ]
        rows.append([row["workload"], row["sizes"].replace(",", ""), *cells])
    out += ["", text_table(rows)]
    if any(run.claims for run in runs):
        out += ["", "claims:"]
        keys = list(dict.fromkeys(r.key for run in runs for r in run.claims))
        claim_rows = [["claim", "", *names]]
        for key in keys:
            statuses = []
            for run in runs:
                found = [r.verdict for r in run.claims if r.key == key]
                statuses.append(found[0] if found else "—")
            claim_rows.append([key, "", *statuses])
        out.append(text_table(claim_rows))
    return "\n".join(out)
