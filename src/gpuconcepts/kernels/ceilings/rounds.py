"""How every sweep of the ceilings is timed: points in interleaved rounds, each read at its
median, and how many repetitions and rounds the presets ask for."""

from __future__ import annotations

import contextlib
import statistics
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import torch

from gpuconcepts.measure import Rounds
from gpuconcepts.sweeps import SWEEP_ROUNDS

PEAK_REPEATS = 10
"""Repetitions of each peak kernel (at least; more if the presets' timing says so)."""


@dataclass(frozen=True)
class SweepPoint:
    """One point of a sweep as :class:`~gpuconcepts.measure.Rounds` times it: a call, and
    whether the caches are flushed before it."""

    fn: Callable[[], object]
    flush: bool = False

    @contextlib.contextmanager
    def settings(self) -> Iterator[None]:
        with torch.inference_mode():
            yield


def median_in_rounds(
    points: Sequence[SweepPoint],
    device: str,
    *,
    repeats: int,
    keep: list[tuple[float, ...]] | None = None,
) -> list[float]:
    """Each point's median seconds per call over ``repeats`` interleaved rounds, every round
    timing every point once in a shuffled order; ``keep``, when given, receives each point's
    seconds round by round, in the points' order (a ceiling keeps those it was read from,
    :attr:`Peaks.ceiling_seconds <gpuconcepts.roofline.Peaks.ceiling_seconds>`).

    A sweep point is read by the statistic of the kernels it bounds, their median. Timed one
    point after another, a busy moment of a second slows every repetition of the points it
    falls on; in rounds, it slows one repetition of each, which the median passes over.

    >>> calls = [SweepPoint(lambda: sum(range(100))), SweepPoint(lambda: sum(range(10_000)))]
    >>> small, large = median_in_rounds(calls, "cpu", repeats=3)
    >>> 0 < small < large
    True
    """
    rounds = Rounds(points, device)
    rounds.more(repeats)
    if keep is not None:
        keep.extend(tuple(times) for times in rounds.times)
    return [statistics.median(times) for times in rounds.times]


def peak_repeats(presets: Mapping[str, Mapping[str, int]]) -> int:
    """Repetitions of each ceiling's kernel: :data:`PEAK_REPEATS`, or the presets' more."""
    return max(PEAK_REPEATS, presets.get("timing", {}).get("repeats", 5))


def rounds_of(presets: Mapping[str, Mapping[str, int]]) -> int:
    """Interleaved rounds of each sweep: the presets' ``timing.sweep_rounds``, else
    :data:`~gpuconcepts.sweeps.SWEEP_ROUNDS`."""
    return int(presets.get("timing", {}).get("sweep_rounds", SWEEP_ROUNDS))
