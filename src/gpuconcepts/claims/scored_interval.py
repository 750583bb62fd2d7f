"""Ledger 2's interval of measured ÷ predicted, with the ceilings' own uncertainty (issue 45,
items 2 and 5: the same statistic on both sides, and intervals that include the variation of
what a ratio is taken against).

A kernel's time is a median with a bootstrap interval
(:func:`~gpuconcepts.claims.quantities.with_interval`); so is each ceiling the prediction
reads, where its repetitions were kept: P, DRAM's β, a cache level's β, a random-access
point and each floor measured with the peaks from :attr:`Peaks.ceiling_seconds
<gpuconcepts.roofline.Peaks.ceiling_seconds>`, and in their place each floor of the overhead
roof from the rounds it was timed in beside the kernel (:attr:`Measurement.references
<gpuconcepts.measure.Measurement.references>`), where it was. Each ceiling's
interval is the bootstrap interval of its median by the same rule (over its blocks, then
its rounds, where it has blocks).

The prediction's interval is that of the ceilings that set it, the ones the binding bound
reads (:func:`binding_ceilings`): as the prediction only grows as a ceiling slows (a lower
rate, a longer floor), its ends are the prediction with those ceilings at the fast ends of
their intervals and at their slow ends (:func:`predicted_interval`). The ratio's interval
takes the conservative ends (:func:`ratio_interval`): the measured interval's fast end over
the prediction's slow end, its slow end over the prediction's fast end.

>>> from gpuconcepts.measure import Measurement
>>> from gpuconcepts.roofline import Peaks
>>> p = Peaks("cpu", 1e11, 1e10, "float32", ceiling_seconds={"flops_per_s": (1.0, 2.0, 4.0)})
>>> m = Measurement("mlp", "cpu", {}, (0.04, 0.04, 0.04), 2e9, 1e6)  # 20 ms at P
>>> predicted_interval(m, p)  # P at 2x its median, and at half of it
(0.01, 0.04)
>>> ratio_interval(m, 0.02, predicted_interval(m, p)), ratio_interval(m, 0.02, None)
((1.0, 4.0), (2.0, 2.0))
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import replace
from functools import cache
from typing import TYPE_CHECKING, Any, cast

from gpuconcepts.claims.quantities import with_interval
from gpuconcepts.roofline import Reference, paired_peaks, verdict
from gpuconcepts.roofline.points import cold_key, is_seconds, random_key

if TYPE_CHECKING:
    from gpuconcepts.measure import Measurement
    from gpuconcepts.roofline import Peaks

RandomPoint = tuple[int, int, float] | tuple[int, int, int, float]


def predicted_interval(m: Measurement, peaks: Peaks) -> tuple[float, float] | None:
    """The least and the greatest time the post's model predicts for ``m`` as the ceilings that
    set it range over their intervals: those whose repetitions were kept and that the binding
    bound reads (:func:`binding_ceilings`), each at the fast end of its interval, then at its
    slow end, every other ceiling as it is. None when the binding bound reads no ceiling whose
    repetitions were kept: a recorded run's peaks, whose interval was not recorded.

    >>> from gpuconcepts.measure import Measurement
    >>> from gpuconcepts.roofline import Peaks
    >>> kept = Peaks("cpu", 1e11, 1e10, "float32", ceiling_seconds={"bytes_per_s": (1.0, 1.0)})
    >>> predicted_interval(Measurement("x", "cpu", {}, (1.0,), 2e9, 1e6), kept) is None
    True
    """
    kept = _kept(m, peaks)
    ceilings = paired_peaks(m, peaks)
    bare = replace(m, references={})  # its floors are in the ceilings already
    read = binding_ceilings(bare, ceilings, kept)
    if not read:
        return None
    fast, slow = {}, {}
    for key in read:
        median, (low, high) = _interval(*kept[key])
        fast[key] = _at(key, ceilings, low / median)
        slow[key] = _at(key, ceilings, high / median)
    return (
        verdict(bare, _with(ceilings, fast)).roof_seconds,
        verdict(bare, _with(ceilings, slow)).roof_seconds,
    )


def binding_ceilings(m: Measurement, ceilings: Peaks, keys: Iterable[str]) -> tuple[str, ...]:
    """The ceilings of ``keys`` that set the binding bound of ``m`` under ``ceilings`` (its
    floors already in place): each whose speed doubled alone moves that bound. A ceiling
    behind a shorter term of the same max (a random-access point below the streaming bound, a
    cache level a flushed kernel's DRAM term passes) sets nothing, whatever its interval.

    >>> from gpuconcepts.measure import Measurement
    >>> from gpuconcepts.roofline import Peaks
    >>> gemm = Measurement("x", "cpu", {}, (1.0,), 2e9, 1e6)
    >>> binding_ceilings(gemm, Peaks("cpu", 1e11, 1e10, "f"), ["bytes_per_s", "flops_per_s"])
    ('flops_per_s',)
    """
    binding = verdict(m, ceilings).binding.roof
    at = binding.times(m, ceilings)
    return tuple(
        key
        for key in keys
        if binding.times(m, _with(ceilings, {key: _at(key, ceilings, 0.5)})) != at
    )


def ratio_interval(
    m: Measurement, predicted: float, ceiling: tuple[float, float] | None
) -> tuple[float, float]:
    """The interval of ``m``'s measured ÷ predicted time: the measured median's bootstrap
    interval over its blocks and rounds (as every claim's), its fast end over the prediction's
    greatest value and its slow end over its least (``ceiling``, :func:`predicted_interval`);
    over ``predicted`` alone when ``ceiling`` is None, its ceilings read as exact."""
    # the quartiles are a spread, not an interval of the median
    _, (fast, slow) = with_interval(lambda t: t[0], (m,))
    least, greatest = ceiling or (predicted, predicted)
    return over(fast, greatest), over(slow, least)


def _kept(m: Measurement, peaks: Peaks) -> dict[str, tuple[tuple[float, ...], int]]:
    """Every ceiling of ``m``'s prediction whose repetitions were kept, by its key, with the
    blocks they were timed in: the peaks' own, then the floors timed beside ``m`` in their
    place (as :func:`~gpuconcepts.roofline.paired_peaks` puts them)."""
    kept = {key: (tuple(seconds), 1) for key, seconds in peaks.ceiling_seconds.items()}
    for key, values in m.references.items():
        if Reference.from_key(key).is_floor:
            kept[key] = (tuple(values), m.blocks)
    return kept


@cache
def _interval(seconds: tuple[float, ...], blocks: int) -> tuple[float, tuple[float, float]]:
    """A ceiling's median seconds and its bootstrap interval, once per ceiling (every kernel
    of a run reads the same peaks)."""
    return with_interval(lambda t: t[0], [seconds], [blocks])


def _at(key: str, ceilings: Peaks, share: float) -> float:
    """The ceiling ``key`` names when its median time takes ``share`` of itself: a floor (a
    ``_seconds`` field) or a cold sweep's point is its time, a rate its work over it."""
    value = ceilings.ceiling(key)
    assert value is not None  # Peaks checks every key it keeps; a floor is paired in
    return value * share if is_seconds(key) else value / share


def _with(peaks: Peaks, values: Mapping[str, float]) -> Peaks:
    """``peaks`` with each ceiling ``values`` names (:meth:`Peaks.ceiling
    <gpuconcepts.roofline.Peaks.ceiling>`) at its value there."""
    scalars: dict[str, Any] = {key: value for key, value in values.items() if " " not in key}
    levels = tuple(
        replace(level, bytes_per_s=values.get(f"level {level.name}", level.bytes_per_s))
        for level in peaks.levels
    )
    points = tuple(
        cast(RandomPoint, (*point[:-1], values.get(random_key(point), point[-1])))
        for point in peaks.random_sweep
    )
    cold = tuple((size, values.get(cold_key(size), s)) for size, s in peaks.cold_sweep)
    return replace(peaks, **scalars, levels=levels, random_sweep=points, cold_sweep=cold)


def over(seconds: float, predicted: float) -> float:
    """Seconds over a prediction; infinite over a prediction of none (an unbounded ratio)."""
    return seconds / predicted if predicted > 0 else math.inf
