r"""The numbers a verdict compares: what a measurement achieved, and what the formulas predict.

Measured side: a kernel's sizes (:func:`param`), a sweep sorted and checked (times and rates
are the measurement's own: its median, the book's one statistic). Predicted side: a catalogue formula evaluated at a measurement's
sizes, solved for an unknown, or taken to its limit, and printed as plain text. Every count
comes from :mod:`gpuconcepts.formulas`; nothing here writes one by hand.

>>> from gpuconcepts import formulas
>>> from gpuconcepts.measure import Measurement, block_bounds
>>> m = Measurement("mlp", "cpu", {"B": 4, "d_in": 8, "d_out": 16, "s": 4}, (2e-6, 1e-6),
...                 1024, 896)
>>> formula_at(formulas.mlp_flops, m), m.flops_per_s
(1024.0, 682666666.6666666)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import sympy as sp

from gpuconcepts import formulas
from gpuconcepts.claims.thresholds import (
    INTERVAL_COVERAGE,
    INTERVAL_RESAMPLES,
)
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.formula import Formula
from gpuconcepts.measure import Measurement, block_bounds
from gpuconcepts.measurement import seconds_spread
from gpuconcepts.roofline import Peaks
from gpuconcepts.symbols import sym


def with_interval(
    statistic: Callable[[Sequence[float]], float],
    ms: Sequence[Measurement] | Sequence[Sequence[float]],
    blocks: Sequence[int] = (),
) -> tuple[float, tuple[float, float]]:
    """A derived quantity and its interval (the central
    :data:`~gpuconcepts.claims.thresholds.INTERVAL_COVERAGE` of its bootstrap values; seeded,
    so a saved run is judged the same way every time).

    ``statistic`` takes one time per entry of ``ms``, in their order. When ``ms`` are
    measurements timed in the same paired rounds (one ``group``, as many repetitions each),
    the statistic is computed **per round**, from the times that ran side by side, and the
    quantity is the median over rounds, bootstrapped over rounds (:func:`paired_interval`):
    drift and background load hit both sides of each round alike. Otherwise (measurements timed
    apart, or plain repetitions such as a whole-model result's) it is the statistic of the
    medians, each entry's repetitions resampled on their own. Equal repetitions give a
    zero-width interval.

    >>> from gpuconcepts.measure import Measurement
    >>> a = Measurement("mlp", "cpu", {"B": 1}, (2.0, 2.0, 2.2), 1.0, 1.0)
    >>> b = Measurement("mlp", "cpu", {"B": 2}, (1.0, 1.0, 1.0), 1.0, 1.0)
    >>> value, (low, high) = with_interval(lambda t: t[0] / t[1], (a, b))
    >>> value, low, high
    (2.0, 2.0, 2.2)
    >>> slow = Measurement("mlp", "cpu", {"B": 1}, (2.0, 4.0, 2.2), 1.0, 1.0, group="g")
    >>> fast = Measurement("mlp", "cpu", {"B": 2}, (1.0, 2.0, 1.1), 1.0, 1.0, group="g")
    >>> with_interval(lambda t: t[0] / t[1], (slow, fast))  # load hit round 1 on both sides
    (2.0, (2.0, 2.0))

    Measurements timed in independent blocks (:attr:`Measurement.blocks
    <gpuconcepts.measure.Measurement.blocks>`, at least
    :data:`~gpuconcepts.claims.thresholds.MIN_BLOCKS` in a live run) are resampled in two
    stages, blocks first and then the rounds inside each block drawn
    (:func:`block_resample`), so the interval includes the variation between blocks as well
    as within them: it widens when the blocks disagree. Plain repetitions give theirs in
    ``blocks``, one count per entry of ``ms``, each entry cut in consecutive slices
    (:func:`~gpuconcepts.measure.block_bounds`); with none given, each is one block.

    >>> moving = [1.0] * 10 + [1.2] * 10 + [1.4] * 10  # three blocks at three levels
    >>> with_interval(lambda t: t[0], [moving]), with_interval(lambda t: t[0], [moving], [3])
    ((1.2, (1.2, 1.2)), (1.2, (1.0, 1.4)))
    """
    if paired(ms):
        count = ms[0].blocks  # type: ignore[union-attr]
        return paired_interval(statistic, [m.raw_seconds for m in ms], count)  # type: ignore[union-attr]
    samples = [np.asarray(m.raw_seconds if isinstance(m, Measurement) else m) for m in ms]
    value = float(statistic([float(np.median(x)) for x in samples]))
    rng, counts = np.random.default_rng(0), _block_counts(ms, blocks)
    medians = [
        np.median(x[block_resample(rng, len(x), count)], axis=1)
        if count > 1
        else np.median(rng.choice(x, size=(INTERVAL_RESAMPLES, len(x))), axis=1)
        for x, count in zip(samples, counts, strict=True)
    ]
    resampled = np.array(
        [statistic([float(column[i]) for column in medians]) for i in range(INTERVAL_RESAMPLES)]
    )
    low, high = _central(resampled)
    return value, (min(low, value), max(high, value))


def _block_counts(
    ms: Sequence[Measurement] | Sequence[Sequence[float]], blocks: Sequence[int]
) -> list[int]:
    """How many independent blocks each entry of ``ms`` was timed in: a measurement's own, a
    plain entry's from ``blocks`` (one block each when none are given)."""
    if blocks and len(blocks) != len(ms):
        raise GpuConceptsError(
            f"with_interval: blocks must give one count per entry ({len(ms)}); got {len(blocks)}"
        )
    return [
        m.blocks if isinstance(m, Measurement) else (blocks[i] if blocks else 1)
        for i, m in enumerate(ms)
    ]


def paired(ms: Sequence[Measurement] | Sequence[Sequence[float]]) -> bool:
    """True when ``ms`` are measurements timed side by side in the same rounds: one non-empty
    ``group``, as many repetitions each, in as many blocks."""
    if not ms or not all(isinstance(m, Measurement) for m in ms):
        return False
    groups = {m.group for m in ms}  # type: ignore[union-attr]
    lengths = {(len(m.raw_seconds), m.blocks) for m in ms}  # type: ignore[union-attr]
    return len(groups) == 1 and "" not in groups and len(lengths) == 1


def block_resample(rng: np.random.Generator, count: int, blocks: int) -> Any:
    """Indices of :data:`INTERVAL_RESAMPLES` two-stage bootstrap resamples of ``count`` rounds
    timed in ``blocks`` consecutive blocks (:func:`~gpuconcepts.measure.block_bounds`): each
    resample draws ``blocks`` blocks with replacement, then, inside each block drawn, as many
    of its rounds with replacement as it holds. A cluster bootstrap: the blocks, measured at
    different moments, are the independent units, so what changes from one block to the next
    (the load, the clock, a library's choice of kernel) reaches the interval.

    >>> picks = block_resample(np.random.default_rng(0), 6, 3)
    >>> picks.shape, int(picks.min()) >= 0, int(picks.max()) <= 5
    ((400, 6), True, True)
    """
    bounds = block_bounds(count, blocks)
    out = np.empty((INTERVAL_RESAMPLES, count), dtype=np.int64)
    for row in range(INTERVAL_RESAMPLES):
        drawn = rng.integers(0, blocks, size=blocks)
        chunks = []
        for b in drawn:
            start, end = bounds[b]
            chunks.append(rng.integers(start, end, size=end - start))
        picked = np.concatenate(chunks)
        # blocks of unequal size: keep ``count`` rounds (the last block holds the remainder)
        out[row] = np.resize(picked, count)
    return out


def paired_interval(
    statistic: Callable[[Sequence[float]], float],
    rounds: Sequence[Sequence[float]],
    blocks: int = 1,
) -> tuple[float, tuple[float, float]]:
    """The median over rounds of ``statistic`` computed per round, and its bootstrap interval
    over rounds (over blocks, then rounds, with ``blocks`` > 1: :func:`block_resample`).
    ``rounds[k][i]`` is entry ``k``'s time in round ``i``.

    >>> paired_interval(lambda t: t[0] / t[1], [(2.0, 4.0, 3.0), (1.0, 2.0, 1.0)])
    (2.0, (2.0, 3.0))
    """
    count = len(rounds[0])
    per_round = np.array([statistic([float(t[i]) for t in rounds]) for i in range(count)])
    value = float(np.median(per_round))
    rng = np.random.default_rng(0)
    if blocks > 1:
        picks = block_resample(rng, count, blocks)
    else:
        picks = rng.integers(0, count, size=(INTERVAL_RESAMPLES, count))
    low, high = _central(np.median(per_round[picks], axis=1))
    return value, (min(low, value), max(high, value))


def _central(resampled: Any) -> tuple[float, float]:
    """The central INTERVAL_COVERAGE of bootstrap values, by order statistics rather than
    interpolation: a resample may give an infinite value ("never")."""
    ranked = np.sort(resampled)
    tail = (1 - INTERVAL_COVERAGE) / 2 * (INTERVAL_RESAMPLES - 1)
    return float(ranked[math.floor(tail)]), float(ranked[math.ceil(INTERVAL_RESAMPLES - 1 - tail)])


# -- what a measurement achieved ---------------------------------------------------------------
def param(m: Measurement, name: str) -> int:
    """An integer size of a measurement (``B``, ``S``, ``s``...), with a clear error if absent.

    >>> param(Measurement("mlp", "cpu", {"B": 4}, (1.0,), 1.0, 1.0), "B")
    4
    """
    return m.size(name)


def sizes(m: Measurement, *names: str) -> tuple[int, ...]:
    """Several sizes of a measurement at once, in the order named."""
    return tuple(param(m, name) for name in names)


def sorted_sweep(
    ms: Sequence[Measurement], over: str, *, fixed: Sequence[str], what: str
) -> list[Measurement]:
    """A sweep sorted by ``over``, checked: distinct values of ``over``, the ``fixed`` sizes alike.

    ``what`` names the sweep in the error, e.g. "an MLP batch sweep must keep d_in, d_out and
    s fixed".
    """
    if len(ms) < 2:
        raise GpuConceptsError(f"a sweep needs at least two measurements; got {len(ms)}")
    ordered = sorted(ms, key=lambda m: param(m, over))
    values = [param(m, over) for m in ordered]
    if len(set(values)) != len(values):
        raise GpuConceptsError(f"a sweep over {over} has repeated values: {values}")
    if any(sizes(m, *fixed) != sizes(ordered[0], *fixed) for m in ordered):
        names = " and ".join([", ".join(fixed[:-1]), fixed[-1]] if len(fixed) > 1 else fixed)
        raise GpuConceptsError(f"{what} must keep {names} fixed")
    return ordered


def size_values(ms: Sequence[Measurement], size: str) -> tuple[float, ...]:
    """One size of each measurement of a sweep, as the x values of a fit or a plot."""
    return tuple(float(param(m, size)) for m in ms)


def time_each(m: Measurement, count: int = 1) -> str:
    """A measurement's time, or its share of ``count`` equal parts (a time per step, per
    token), as a claim's detail quotes every measured time: "median ± IQR" by
    :func:`~gpuconcepts.measurement.seconds_spread`, the format's one home. Each repetition is
    divided before the statistics, so the median and the spread divide alike.

    >>> time_each(Measurement("rnn-loop", "cpu", {}, (0.011, 0.01, 0.012), 1.0, 1.0), 100)
    '110 µs ± 10 µs'
    >>> time_each(Measurement("rnn-loop", "cpu", {}, (0.011,), 1.0, 1.0), 0)
    Traceback (most recent call last):
    ...
    gpuconcepts.errors.GpuConceptsError: time_each: count must be at least 1; got 0
    """
    if count < 1:
        raise GpuConceptsError(f"time_each: count must be at least 1; got {count}")
    return seconds_spread([t / count for t in m.raw_seconds])


# -- what the formulas predict at a measurement's sizes -----------------------------------
def formula_at(formula: Formula, m: Measurement, **renamed: str) -> float:
    """``formula`` at the sizes of ``m``; ``renamed`` maps a formula symbol to the kernel's name
    for it (the convolution kernels pad to 'same', so their ``H`` is the formula's ``H_out``)."""
    return float(formula(**{p: param(m, renamed.get(p, p)) for p in formula.params}))


def formula_along(formula: Formula, ms: Sequence[Measurement]) -> tuple[float, ...]:
    """``formula`` at the sizes of each measurement of a sweep (vectorised, float64)."""
    columns = {p: np.array([param(m, p) for m in ms]) for p in formula.params}
    return tuple(float(v) for v in formula.vectorized(**columns))


def attainable(intensity: Sequence[float], peaks: Peaks) -> tuple[float, ...]:
    """The roofline's FLOP/s ceiling at each intensity, under the measured peaks."""
    n = len(intensity)
    roof = formulas.attainable_flops.vectorized(
        I=np.array(intensity), P=np.full(n, peaks.flops_per_s), beta=np.full(n, peaks.bytes_per_s)
    )
    return tuple(float(v) for v in roof)


def _substitute(
    formula: Formula, unknown: str, known: Mapping[str, float]
) -> tuple[sp.Expr, sp.Symbol]:
    x = sp.Symbol("x", positive=True)
    expr = formula.expr.xreplace({sym(k): sp.nsimplify(v) for k, v in known.items()})
    return expr.xreplace({sym(unknown): x}), x


def solve_for(formula: Formula, unknown: str, target: float, **known: float) -> float | None:
    """The positive real value of ``unknown`` at which ``formula`` equals ``target``.

    Solved exactly by sympy on the catalogue's expression (the unknown is treated as a real
    number even when it is a count, so the answer can fall between two batch sizes).
    ``None`` when no positive solution exists.

    >>> round(solve_for(formulas.mlp_intensity, "B", 10, d_in=1024, d_out=1024, s=4), 3)
    20.813
    >>> solve_for(formulas.mlp_intensity, "B", 1000, d_in=1024, d_out=1024, s=4) is None
    True
    """
    roots = []
    for root in _roots(formula, unknown, tuple(sorted(known.items()))):
        try:
            value = complex(root(target))
        except ZeroDivisionError:  # the target is the formula's limit: reached at no value
            continue
        if abs(value.imag) <= 1e-9 * max(1.0, abs(value.real)) and value.real > 0:
            roots.append(value.real)
    return min(roots) if roots else None


_SOLVED: dict[tuple[str, str, tuple[tuple[str, float], ...]], tuple[Callable[[float], Any], ...]]
_SOLVED = {}
"""The roots of a formula for one unknown, as functions of the target: solved by sympy once per
formula, unknown and known values (a bootstrap asks for the same layer thousands of times)."""


def _roots(
    formula: Formula, unknown: str, known: tuple[tuple[str, float], ...]
) -> tuple[Callable[[float], Any], ...]:
    key = (formula.name, unknown, known)
    if key not in _SOLVED:
        expr, x = _substitute(formula, unknown, dict(known))
        target = sp.Symbol("target", positive=True)
        _SOLVED[key] = tuple(
            sp.lambdify(target, root, modules="mpmath") for root in sp.solve(expr - target, x)
        )
    return _SOLVED[key]


def limit_of(formula: Formula, unknown: str, **known: float) -> float:
    """The limit of ``formula`` as ``unknown`` grows without bound (e.g. intensity as B → ∞).

    >>> limit_of(formulas.mlp_intensity, "B", d_in=1024, d_out=1024, s=4)
    256.0
    """
    expr, x = _substitute(formula, unknown, known)
    return float(sp.limit(expr, x, sp.oo))
