"""A claim's prediction as a number the measurement tests, and the test of that number.

A kernel's predicted time is the tightest bound the once-measured ceilings put on it
(:func:`predicted_seconds`): its FLOPs at the compute peak, its bytes at the memory level
that holds them, and, where the kernel's kind has one, the GEMM sweep's rate for a product of its shape, the
random-access sweep's line rate, and the per-call or chain floor (:func:`bounds_on`, from the
roofs and the diagnoses of :mod:`gpuconcepts.roofline` under the run's
:class:`~gpuconcepts.roofline.Peaks`).
Each of those was measured apart from the claim's kernels, by the peaks' microbenchmarks:
nothing the claim times feeds its own prediction (the references a kernel was timed beside
are left out on purpose).

A claim whose prediction is such a number passes only within :data:`PREDICTION_FACTOR` of it
(:func:`prediction_region`); :func:`within_prediction` says whether a result measured there,
and :func:`share_within` counts a run's results.

>>> prediction_region(4.0)
(2.0, 8.0)
>>> from gpuconcepts.results.claim import example
>>> within_prediction(example(4.0)), within_prediction(example(20.0))
(True, False)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from gpuconcepts import formulas
from gpuconcepts.claims.quantities import sizes
from gpuconcepts.claims.thresholds import PREDICTION_FACTOR
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.roofline import model_seconds, moved_bytes, random_table_bytes
from gpuconcepts.workloads import INDEX_BYTES

if TYPE_CHECKING:
    from gpuconcepts.measure import Measurement
    from gpuconcepts.results.claim import ClaimResult
    from gpuconcepts.results.twosided import TwoSided
    from gpuconcepts.roofline import Peaks


def bounds_on(m: Measurement, peaks: Peaks) -> list[tuple[str, float]]:
    """Every bound the once-measured ceilings put on ``m``'s time, by name: each mechanism of
    the model's one registry (:func:`~gpuconcepts.roofline.model_seconds`), its roofs (compute,
    the memory level that serves it, the overhead floor) and each diagnosis a sweep measured
    apart from it (shape efficiency or a fused kernel, the cold start, the operation chain,
    random access). A diagnosis with a sweep of its own (``Peaks.rate_sweeps``: the depthwise
    stencil) stays beside a miss and bounds no claim's prediction.

    >>> from gpuconcepts.measure import Measurement
    >>> from gpuconcepts.roofline import Peaks
    >>> p = Peaks("cpu", 1e11, 1e10, "float32", latency_seconds=2e-6, op_seconds=1e-6)
    >>> loop = Measurement("rnn-loop", "cpu", {}, (5e-3,), 2e6, 1e5, ops=4096, steps=1024)
    >>> [(name, round(t * 1e6, 1)) for name, t in bounds_on(loop, p)]
    [('compute', 20.0), ('DRAM', 10.0), ('overhead', 4096.0), ('operation chain', 4116.0)]
    """
    return [(name, t) for name, t in model_seconds(m, peaks) if name not in peaks.rate_sweeps]


def predicted_seconds(m: Measurement, peaks: Peaks) -> float:
    """The time the once-measured ceilings predict for ``m``: the longest of its roofs'
    bounds under ``peaks`` (compute, the memory level that holds its working set
    (:func:`holding_level`), the GEMM shape, random access, the per-call or chain floor; see
    :func:`bounds_on`), and for a lookup its rows at the rate a gather
    issues them (:func:`row_issue_seconds`) and its random rows' whole lines
    (:func:`random_line_seconds`); never its own references.

    >>> from gpuconcepts.measure import Measurement
    >>> from gpuconcepts.roofline import Peaks
    >>> p = Peaks("cpu", 1e11, 1e10, "float32", latency_seconds=2e-6)  # a call: 2 µs, then its FLOPs
    >>> predicted_seconds(Measurement("mlp", "cpu", {}, (1.0,), 1e9, 1e6), p)  # compute
    0.01
    >>> predicted_seconds(Measurement("mlp", "cpu", {}, (1.0,), 1e3, 1e3, calls=1), p)  # a call
    2e-06
    """
    memory = {level.name for level in peaks.memory_roofs}
    level = peaks.memory_roofs[holding_level(m, peaks)]
    bounds = [t for name, t in bounds_on(m, peaks) if name not in memory]
    bounds.append(moved_bytes(m) / level.bytes_per_s)
    return max([*bounds, row_issue_seconds(m, peaks) or 0.0, random_line_seconds(m, peaks) or 0.0])


def holding_level(m: Measurement, peaks: Peaks) -> int:
    """The index in ``peaks.memory_roofs`` of the level ``m``'s bytes come from, by the
    measured hierarchy (never a cache size read from sysfs): DRAM for a kernel timed right
    after a cache flush (its data start cold), else the first level as large as its working
    set (a lookup's table, or the bytes it moves).

    >>> from dataclasses import replace
    >>> from gpuconcepts.measure import Measurement
    >>> from gpuconcepts.roofline import MemoryLevel, Peaks
    >>> p = Peaks("cpu", 1e11, 1e10, "float32", levels=(MemoryLevel("L3", 2**25, 4e10),))
    >>> small = Measurement("mlp", "cpu", {}, (1.0,), 1, 2**20)
    >>> holding_level(small, p), holding_level(replace(small, flush=True), p)
    (0, 1)
    """
    if m.flush:
        return len(peaks.memory_roofs) - 1
    table = random_table_bytes(m)
    return peaks.level_of(int(table if table is not None else moved_bytes(m)))


def random_line_seconds(
    m: Measurement, peaks: Peaks, line_bytes: int | None = None
) -> float | None:
    """The bound of random rows that each cost whole lines: a random lookup's B·L rows at
    ⌈d·s/c⌉·c bytes each (:data:`~gpuconcepts.formulas.random_row_bytes`, c the device's line
    or sector: ``line_bytes``, else ``peaks.line_bytes``), and its int64 indices, at the
    bandwidth of the level that holds its table (:func:`holding_level`). None for any other
    kernel, or when the line is unknown.

    >>> from gpuconcepts.measure import Measurement
    >>> from gpuconcepts.roofline import Peaks
    >>> p = Peaks("cpu", 1e11, 1e10, "float32", line_bytes=64)
    >>> rows = {"B": 1024, "L": 64, "d": 4, "s": 4}  # 65,536 rows of 16 bytes: a line each
    >>> random_line_seconds(Measurement("dlrm-random", "cpu", rows, (1.0,), 0, 2**20), p)
    0.0004718592
    """
    c = line_bytes if line_bytes is not None else peaks.line_bytes
    if m.workload != "dlrm-random" or c is None or not _has_rows(m):
        return None
    B, L, d, s = sizes(m, "B", "L", "d", "s")
    row = float(formulas.random_row_bytes(d=d, s=s, c=c))
    bandwidth = peaks.memory_roofs[holding_level(m, peaks)].bytes_per_s
    return B * L * (row + INDEX_BYTES) / bandwidth


LOOKUPS = ("dlrm-random", "dlrm-sequential")
"""The embedding lookups whose rows a gather fetches one by one (:func:`row_issue_seconds`)."""


def row_issue_seconds(m: Measurement, peaks: Peaks) -> float | None:
    """The floor of a gather that fetches ``m``'s rows one by one: each of its B·L rows costs
    its lines (⌈d·s/c⌉ of the device's transfer unit c, whole however narrow the row, since
    each row is fetched on its own, consecutive or not) at the line rate the random-access
    sweep measured for rows of that width from its smallest table (the fastest level it
    swept, so this is the rate at which the gather issues rows, not DRAM's). None for a
    kernel that is not a lookup (:data:`LOOKUPS`), or without the sweep.

    On a GPU this floor, not the memory, sets a lookup of narrow rows, random or consecutive:
    the recorded H200 run read 4-byte rows in order at 0.73x this floor's time and at random
    at 0.81x it (consecutive only 1.5x faster), where DRAM's bound was 14x shorter.

    >>> from gpuconcepts.measure import Measurement
    >>> from gpuconcepts.roofline import Peaks
    >>> p = Peaks("cuda", 1e14, 4e12, "bfloat16", line_bytes=32,
    ...           random_sweep=((2**25, 4, 2**18, 1e10), (2**33, 4, 2**18, 2e9)))
    >>> rows = {"B": 1024, "L": 256, "d": 2, "s": 2}  # 262,144 rows of 4 bytes
    >>> row_issue_seconds(Measurement("dlrm-sequential", "cuda", rows, (1.0,), 0, 2**20), p)
    2.62144e-05
    >>> row_issue_seconds(Measurement("mlp", "cuda", {}, (1.0,), 1, 1), p) is None
    True
    """
    if m.workload not in LOOKUPS or not peaks.random_sweep or peaks.line_bytes is None:
        return None
    if not _has_rows(m):
        return None
    B, L, d, s = sizes(m, "B", "L", "d", "s")
    row_bytes = d * s
    smallest = min(point[0] for point in peaks.random_sweep)
    rate = peaks.random_lines_per_s(row_bytes, smallest, B * L)
    if rate is None:
        return None
    return float(B * L * math.ceil(row_bytes / peaks.line_bytes) / rate)


def predicted_rate(m: Measurement, peaks: Peaks, *, of: str = "flops") -> float:
    """``m``'s work per second at its :func:`predicted_seconds` (``of``: ``"flops"`` or
    ``"bytes"``).

    >>> from gpuconcepts.measure import Measurement
    >>> from gpuconcepts.roofline import Peaks
    >>> predicted_rate(Measurement("mlp", "cpu", {}, (1.0,), 1e9, 1e6),
    ...                Peaks("cpu", 1e11, 1e10, "float32"))
    100000000000.0
    """
    if of not in ("flops", "bytes"):
        raise GpuConceptsError(f"predicted_rate: of must be 'flops' or 'bytes'; got {of!r}")
    work = m.flops if of == "flops" else m.bytes
    return work / predicted_seconds(m, peaks)


def predicted_rate_ratio(fast: Measurement, slow: Measurement, peaks: Peaks) -> float:
    """``fast``'s FLOP/s over ``slow``'s, both at their :func:`predicted_seconds`.

    >>> from gpuconcepts.measure import Measurement
    >>> from gpuconcepts.roofline import Peaks
    >>> p = Peaks("cpu", 1e11, 1e10, "float32")
    >>> dense = Measurement("x", "cpu", {}, (1.0,), 1e9, 1e6)  # compute: 10 ms
    >>> thin = Measurement("x", "cpu", {}, (1.0,), 1e6, 1e7)  # memory: 1 ms
    >>> predicted_rate_ratio(dense, thin, p)
    100.0
    """
    return predicted_rate(fast, peaks) / predicted_rate(slow, peaks)


def prediction_region(predicted: float) -> tuple[float, float]:
    """The pass region of a claim that predicts ``predicted``: within
    :data:`~gpuconcepts.claims.thresholds.PREDICTION_FACTOR` of it on either side.

    >>> prediction_region(1.0)
    (0.5, 2.0)
    >>> prediction_region(-1.0)
    Traceback (most recent call last):
    ...
    gpuconcepts.errors.GpuConceptsError: prediction_region: predicted must be a positive finite number (a ratio or a time); got -1.0
    """
    if not (math.isfinite(predicted) and predicted > 0):
        raise GpuConceptsError(
            "prediction_region: predicted must be a positive finite number (a ratio or a "
            f"time); got {predicted!r}"
        )
    return predicted / PREDICTION_FACTOR, predicted * PREDICTION_FACTOR


def numeric(test: TwoSided) -> bool:
    """True when ``test``'s prediction is a positive finite number and its measurement a
    finite one: a claim whose measured ÷ predicted means something."""
    p, m = test.predicted, test.measured
    return math.isfinite(p) and p > 0 and math.isfinite(m)


def within_prediction(result: ClaimResult) -> bool | None:
    """Whether ``result`` measured within :data:`~gpuconcepts.claims.thresholds.PREDICTION_FACTOR`
    of its prediction (None when its prediction or measurement is not a number, see
    :func:`numeric`)."""
    test = result.test
    if not numeric(test):
        return None
    return 1 / PREDICTION_FACTOR <= test.measured / test.predicted <= PREDICTION_FACTOR


def region_within(test: TwoSided) -> bool:
    """True when ``test``'s pass region is closed and lies within
    :data:`~gpuconcepts.claims.thresholds.PREDICTION_FACTOR` of its prediction.

    >>> from gpuconcepts.results.twosided import TwoSided
    >>> region_within(TwoSided("r", 4.0, "none", 1.0, 2.0, 8.0, 3.0, (3.0, 3.0)))
    True
    >>> region_within(TwoSided("r", 4.0, "none", 1.0, 2.0, None, 3.0, (3.0, 3.0)))
    False
    """
    if not numeric(test) or test.low is None or test.high is None:
        return False
    low, high = prediction_region(test.predicted)
    slack = 1e-9 * test.predicted
    return test.low >= low - slack and test.high <= high + slack


def share_within(results: Sequence[ClaimResult]) -> tuple[int, int]:
    """How many of ``results`` measured within
    :data:`~gpuconcepts.claims.thresholds.PREDICTION_FACTOR` of their prediction, and how many
    have a numeric prediction and measurement (:func:`numeric`) at all.

    >>> from gpuconcepts.results.claim import example
    >>> share_within([example(4.0), example(20.0), example(9.0)])
    (2, 3)
    """
    found = [within_prediction(r) for r in results]
    return sum(1 for w in found if w), sum(1 for w in found if w is not None)


def _has_rows(m: Measurement) -> bool:
    """True when ``m`` says how many rows of what width it looked up (B, L, d and s)."""
    return all(name in m.params for name in ("B", "L", "d", "s"))
