"""The sentences the book's pages say about a measurement: why a kernel misses its roof, the
chain of steps, the cold start, cold reads, GEMM shapes and random access."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuconcepts import formulas
from gpuconcepts.hardware import dtype_bytes
from gpuconcepts.render.text.runs import explained, floor_spread, roof_label, time_spread
from gpuconcepts.roofline import (
    COLD_START,
    FASTER_GATHER,
    FASTER_PATH,
    OPERATION_CHAIN,
    PATH_FACTOR,
    RANDOM_ACCESS,
    Peaks,
    beaten_by,
    diagnoses,
    diagnosis,
    faster_gather,
    faster_path,
    moved_bytes,
    paired_peaks,
    place,
    random_rows_per_call,
    random_table_bytes,
)
from gpuconcepts.roofline.points import cold_key
from gpuconcepts.units import (
    binary_bytes,
    decimal_bytes,
    in_words,
    percent,
    plain_number,
    plural,
    si,
    significant,
    times,
)

if TYPE_CHECKING:
    from gpuconcepts.measure import Measurement


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
    it took 2% less time than its compute roof allows: a finding, a faster code path than P's square GEMM, or P measured in a slower moment (102 GFLOP/s, within 4× P, as the run records no hardware limit)
    >>> two = Peaks("cpu", 1e11, 1e10, "float32", threads=2)
    >>> print(why_unexplained(Measurement("mlp", "cpu", {}, (0.05,), 1e9, 1e6, threads=1), two))
    it ran on 1 thread where its roofs had 2, since another program had taken a core before it was timed. It reached 20% of its compute roof; no mechanism measured apart from it accounts for the rest
    """
    where = place(m, peaks)
    if explained(where):
        return None
    roof = roof_label(where)
    if where.beaten:
        cause = above_roof(m, peaks)
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


def above_roof(m: Measurement, peaks: Peaks) -> str:
    """Why ``m`` ran faster than its roof allows, beyond its spread. Above the compute peak P
    (the rate of the library's square GEMM) but within the hardware's limit it ran a faster code
    path than P's, a finding; so are random rows that came faster than the gather sweep's rate
    but not faster than their lines stream. Above the hardware's limit, or above the streaming
    bound of its bytes, physics forbids it: a faulty measurement, or a ceiling measured in a
    busy moment. Without a limit in the run, both are named.

    >>> from gpuconcepts.measure import Measurement
    >>> p = Peaks("cpu", 1e11, 1e10, "float32", physical_flops_per_s=4e11)
    >>> print(above_roof(Measurement("cnn-conv", "cpu", {}, (0.005,), 1e9, 1e6), p))
    it ran 2× as fast as its compute roof allows: a finding, a faster code path than P's square GEMM, or P measured in a slower moment (200 GFLOP/s, under the hardware's 400 GFLOP/s)
    >>> print(above_roof(Measurement("cnn-conv", "cpu", {}, (0.001,), 1e9, 1e6), p))
    it ran 10× as fast as its compute roof allows: above the hardware's 400 GFLOP/s, so a faulty measurement or a ceiling measured in a busy moment (the run's noise probe says how busy)
    >>> p = Peaks("cpu", 1e11, 1e10, "float32", line_bytes=64, random_sweep=((2**28, 16, 5e7),))
    >>> rows = Measurement("dlrm-random", "cpu", {"N": 2**24, "d": 4, "s": 4}, (0.015,) * 3,
    ...                    1e6, 2**20, random_rows=10**6, row_bytes=16)  # roof 20 ms, streaming 6.4
    >>> print(above_roof(rows, p))
    it took 25% less time than its memory (DRAM, random rows) roof allows, a finding: its rows came faster than the gather sweep's rate for their width and table: that rate is measured on other tables, not a physical limit, so the model's time missed
    """
    where = place(m, peaks)
    beat = f"it {beaten_by(where.attained)} its {roof_label(where)} roof allows"
    fault = "a faulty measurement or a ceiling measured in a busy moment"
    limit = peaks.physical_flops_per_s
    if faster_path(m, peaks):
        within = (
            f"under the hardware's {si(limit, 'FLOP/s')}"
            if limit is not None
            else f"within {times(PATH_FACTOR)} P, as the run records no hardware limit"
        )
        return f"{beat}: a finding, {FASTER_PATH} ({si(m.flops_per_s, 'FLOP/s')}, {within})"
    if faster_gather(m, peaks):
        return f"{beat}, a finding: {FASTER_GATHER}"
    compute = where.kind == "compute"
    if compute and limit is not None:
        fault = f"above the hardware's {si(limit, 'FLOP/s')}, so {fault}"
    elif compute:
        fault = f"more than {times(PATH_FACTOR)} P, so {fault}"
    return f"{beat}: {fault} (the run's noise probe says how busy)"


def beaten_rule() -> str:
    """In words for the pages, the rule :func:`above_roof` applies to each kernel (the one rule,
    :func:`~gpuconcepts.roofline.finding`): which roofs are measured rates that a kernel may
    beat (a finding), and which bound it physically (an anomaly when beaten), with
    :data:`~gpuconcepts.roofline.PATH_FACTOR` read from the code.

    >>> print(beaten_rule())  # doctest: +ELLIPSIS
    A kernel that beats its roof beyond its spread never raises the ceiling. ... (within 4× P where the run records none). ...
    """
    return (
        "A kernel that beats its roof beyond its spread never raises the ceiling. Where the roof "
        "it beat is a measured rate and no physical limit, it is a finding, and the model's time "
        "missed. Above the compute peak P, the rate of the library's square GEMM, a kernel ran a "
        "faster code path than P's, as long as it stays within the hardware's compute limit "
        f"(within {times(PATH_FACTOR)} P where the run records none). Random rows that came "
        "faster than the gather sweep's rate, which is measured on other tables, are a finding "
        "as long as they came no faster than their whole lines stream. Any other kernel above "
        "its roof is an anomaly: one above the hardware's compute limit, one faster than its "
        "bytes can stream from the level that holds them, or one below the overhead floor. It "
        "points to a faulty measurement, or to a ceiling measured in a busy moment."
    )


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
    those Python calls), against its measured time with its spread (the median ± IQR of
    :func:`~gpuconcepts.render.text.runs.time_spread`).

    >>> from gpuconcepts.measure import Measurement
    >>> p = Peaks("cpu", 1e11, 1e10, "float32", latency_seconds=3e-6, op_seconds=1e-6)
    >>> loop = Measurement("rnn-loop", "cpu", {}, (5.8e-3, 6e-3, 6.3e-3), 2e6, 1e5, ops=4096,
    ...                    steps=1024)
    >>> print(chain_sentence(loop, p))
    The operation chain makes this exact: `rnn-loop` dispatches 4 operations a step (4,096 in all, counted under the profiler), and no operation here takes less than 1 µs, so its 1,024 dependent steps, each computing only once its operations are dispatched, cannot take less than 4.12 ms. It took 6 ms ± 250 µs: the chain accounts for 69% of its time.
    >>> calls = Measurement("rnn-loop", "cpu", {}, (14.6e-3, 15e-3, 15.2e-3), 2e6, 1e5, ops=4096,
    ...                     calls=4096, steps=1024)
    >>> print(chain_sentence(calls, p))
    The operation chain makes this exact: `rnn-loop` dispatches 4 operations a step (4,096 in all, counted under the profiler), every one called from Python, and no call from Python takes less than 3 µs, so its 1,024 dependent steps, each computing only once its operations are dispatched, cannot take less than 12.3 ms. It took 15 ms ± 300 µs: the chain accounts for 82% of its time.
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
            f"{floor_spread(peaks, 'latency_seconds')}"
        )
    elif calls:
        floors = (
            f"{plain_number(calls)} of them called from Python; no operation here takes less "
            f"than {floor_spread(peaks, 'op_seconds')}, nor a call from Python less than "
            f"{floor_spread(peaks, 'latency_seconds')}"
        )
    else:
        floors = f"and no operation here takes less than {floor_spread(peaks, 'op_seconds')}"
    # on a CPU the thread that dispatches an operation then runs it: the arithmetic adds
    serial = (
        ", each computing only once its operations are dispatched," if m.device == "cpu" else ""
    )
    return (
        f"The operation chain makes this exact: `{m.workload}` dispatches "
        f"{significant(m.ops / m.steps, 2)} operations a step ({plain_number(m.ops)} in all, "
        f"counted under the profiler), {floors}, so its {plain_number(m.steps)} dependent "
        f"steps{serial} cannot take less than {si(bound, 's')}. It took {time_spread(m)}: "
        f"the chain accounts for {percent(bound / took)} of its time."
    )


def cold_start_sentence(peaks: Peaks) -> str:
    """What the cold sweep (:meth:`gpuconcepts.roofline.Peaks.cold_seconds`) measured, in a
    sentence for a page: a read right after a flush against the streaming bound, at the
    sweep's smallest and largest arrays, each with its spread (:func:`floor_spread`).

    >>> p = Peaks("cpu", 1e11, 1e10, "float32", cold_sweep=((2**20, 3e-4), (2**27, 1.5e-2)),
    ...           ceiling_seconds={"cold 1048576": (2.9e-4, 3e-4, 3.2e-4)})
    >>> print(cold_start_sentence(p))
    Read once right after a flush, 1 MiB took 300 µs ± 15 µs, 2.9× what streaming at DRAM's bandwidth allows, and 128 MiB took 15 ms, 1.1× it: the cold start costs a fixed price that a large kernel spreads thin.
    """
    if not peaks.cold_sweep:
        return (
            "This run measured no cold start, so a kernel timed after a flush is read against "
            "the streaming roof alone."
        )
    points = sorted(peaks.cold_sweep)
    parts = [
        f"{binary_bytes(size)} took {floor_spread(peaks, cold_key(size))}, "
        f"{times(seconds * peaks.bytes_per_s / size)}"
        for size, seconds in (points[0], points[-1])
    ]
    return (
        f"Read once right after a flush, {parts[0]} what streaming at DRAM's bandwidth allows, "
        f"and {parts[1]} it: the cold start costs a fixed price that a large kernel spreads thin."
    )


def cold_read_sentence(m: Measurement, peaks: Peaks) -> str:
    """What the cold start (:meth:`gpuconcepts.roofline.Peaks.cold_seconds`) says of a kernel
    timed right after a cache flush, in a sentence for a page: the bound a plain read of its
    bytes sets (read off the cold sweep, :func:`_cold_basis`), against the streaming one and
    its measured time.

    >>> from gpuconcepts.measure import Measurement
    >>> p = Peaks("cpu", 1e11, 1e10, "float32", cold_sweep=((2**23, 2e-3), (2**25, 3e-3)))
    >>> m = Measurement("mlp", "cpu", {"B": 1}, (3.9e-3, 4e-3, 4.2e-3), 2**23, 2**24, flush=True)
    >>> print(cold_read_sentence(m, p))
    It was timed right after a cache flush, as every memory-bound kernel here is, so its 16.78 MB came from DRAM starting cold. A plain read of as many bytes, started the same way, takes 2.33 ms, read off the cold sweep's line between its reads of 8 MiB (2 ms) and 32 MiB (3 ms); streaming at DRAM's bandwidth would take 1.68 ms. It took 4 ms ± 150 µs, so the cold read accounts for 58% of its time.
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
        f"{decimal_bytes(moved)} came from {dram.name} starting cold. A plain read of as many "
        f"bytes, started the same way, {_cold_basis(peaks, moved)}; streaming at "
        f"{dram.name}'s bandwidth would take {si(moved / dram.bytes_per_s, 's')}. It took "
        f"{time_spread(m)}, so the cold read accounts for {percent(bound / m.seconds)} of "
        "its time."
    )


def _cold_basis(peaks: Peaks, nbytes: float) -> str:
    """How the cold sweep bounds a read of ``nbytes`` (:meth:`Peaks.cold_seconds
    <gpuconcepts.roofline.Peaks.cold_seconds>`): the point of as many bytes, else the line
    between the points around them (from nothing below the smallest, at DRAM's bandwidth past
    the largest), each point with its spread (:func:`floor_spread`)."""
    sizes = sorted(size for size, _ in peaks.cold_sweep)
    if nbytes in sizes:
        return f"took {floor_spread(peaks, cold_key(int(nbytes)))} (the cold sweep's own read)"
    read = f"takes {si(peaks.cold_seconds(nbytes) or 0.0, 's')}, read off the cold sweep's"

    def point(size: int) -> str:
        return f"{binary_bytes(size)} ({floor_spread(peaks, cold_key(size))})"

    below, above = [s for s in sizes if s < nbytes], [s for s in sizes if s > nbytes]
    if not below:
        return f"{read} line from nothing to its smallest read, of {point(above[0])}"
    if not above:
        rest = peaks.memory_roofs[-1].name
        return f"{read} largest read, of {point(below[-1])}, and the rest at {rest}'s bandwidth"
    return f"{read} line between its reads of {point(below[-1])} and {point(above[0])}"


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
    >>> lookup = Measurement("dlrm-random", "cpu", {}, (0.048, 0.05, 0.051), 2**22, 2**24,
    ...                      random_rows=2**20, row_bytes=16)
    >>> print(random_access_sentence(lookup, p))
    Streaming bandwidth is the wrong ceiling for rows at random addresses: each of its 1,048,576 rows of 16 bytes costs 1 whole line of 64 bytes, and this machine fetched at most 30 million independent lines a second (its random-access sweep, rows of 16 bytes from a table of 256 MiB in calls of 262,144 rows). That rate allows 35 ms; the lookup took 50 ms ± 1.5 ms, so random access accounts for 70% of its time.
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
        f"{si(bound, 's')}; the lookup took {time_spread(m)}, so random access accounts for "
        f"{percent(bound / took)} of its time."
    )
