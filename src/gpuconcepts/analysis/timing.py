"""Timing the distinct calls one at a time, with the kernels' timers and flush policy: a call
whose intensity is below the ridge point runs cold, right after a cache flush.

Two things keep this to a few forward passes of time:

* **One flush for many cold calls.** A flush evicts every cache; a call then reads only its
  own tensors, which nothing has touched since. So on a CPU the cold calls are timed in
  rounds: one flush, then each call of a group once, where no two calls of a group share a
  storage (their copied inputs, their module's weights) and every output is kept until the
  group ends (no call writes into memory another one just warmed). Each call runs as cold as
  after a flush of its own, for one flush per group instead of one per repetition (a flush
  costs milliseconds, longer than most calls of a small batch). On a GPU a flush is a few
  microseconds, and each cold call keeps its own.
* **No more repetitions than the spread needs.** Each call, and the plain forward pass, is
  timed :data:`MIN_REPEATS` times, and up to ``repeats`` only while its IQR is over
  :data:`~gpuconcepts.measurement.NOISE_THRESHOLD` of its median.
"""

# torch is imported inside functions (README, Rules: 3).
# ruff: noqa: PLC0415

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gpuconcepts.errors import Terminated
from gpuconcepts.measurement import NOISE_THRESHOLD, quartiles

Progress = Callable[[str], None]
"""Told what :func:`~gpuconcepts.analysis.analyze` does now (``timing call 3 of 40: conv1``)."""

MIN_REPEATS = 2
"""Repetitions every call gets (fewer only when ``repeats`` asks for fewer): two that agree
within the noise threshold are enough; while they do not, more come, up to ``repeats``."""


@dataclass(frozen=True)
class Replay:
    """One distinct call to time alone: its name (for the progress line), the call, whether it
    runs cold (after a cache flush), and the storages it reads (its tensors' and weights'
    data pointers), which no call timed after the same flush may share."""

    name: str
    fn: Callable[[], object]
    flush: bool
    storages: frozenset[int] = frozenset()


def settled(times: Sequence[float]) -> bool:
    """True when repetitions agree well enough to stop: an IQR within the noise threshold.

    >>> settled([1.0, 1.02, 0.99]), settled([1.0, 1.5, 0.7])
    (True, False)
    """
    low, high = quartiles(times)
    return high - low <= NOISE_THRESHOLD * statistics.median(times)


def cold_groups(replays: Sequence[Replay], indices: Sequence[int]) -> list[list[int]]:
    """The cold calls ``indices`` packed, in order, into groups whose calls share no storage
    (first fit): each group is timed after one flush.

    >>> r = [Replay("a", int, True, frozenset({1})), Replay("b", int, True, frozenset({2})),
    ...      Replay("c", int, True, frozenset({1, 3}))]
    >>> cold_groups(r, [0, 1, 2])
    [[0, 1], [2]]
    """
    groups: list[tuple[list[int], set[int]]] = []
    for i in indices:
        storages = replays[i].storages
        for members, seen in groups:
            if not storages & seen:
                members.append(i)
                seen.update(storages)
                break
        else:
            groups.append(([i], set(storages)))
    return [members for members, _ in groups]


def flusher_for(device: str) -> Callable[[], None]:
    """The device's cache flush (:func:`gpuconcepts.measure.make_flusher`, which makes each
    size's buffer once per process: mapping it costs tens of milliseconds, as much as a small
    model's whole forward pass), sized as the measured hierarchy says."""
    from gpuconcepts.measure import make_flusher

    return make_flusher(device)


def time_calls(
    replays: Sequence[Replay],
    device: str,
    repeats: int,
    progress: Progress | None = None,
) -> tuple[list[tuple[float, ...]], BaseException | None]:
    """Raw seconds of each replay (empty for a call not timed); on Ctrl-C or SIGTERM, the
    repetitions timed so far and the signal's exception."""
    import torch

    from gpuconcepts.measure import time_cpu, time_cuda

    flusher = flusher_for(device) if any(r.flush for r in replays) else None
    times: list[list[float]] = [[] for _ in replays]
    try:
        with torch.inference_mode():
            if device == "cuda":
                every = range(len(replays))
                _each_alone(replays, every, repeats, time_cuda, flusher, times, progress)
            else:
                warm = [i for i, r in enumerate(replays) if not r.flush]
                _each_alone(replays, warm, repeats, time_cpu, None, times, progress)
                cold = [i for i, r in enumerate(replays) if r.flush]
                if cold and flusher is not None:
                    _cold_rounds(replays, cold, repeats, flusher, times, progress)
    except (KeyboardInterrupt, Terminated) as stop:
        return [tuple(t) for t in times], stop
    return [tuple(t) for t in times], None


def _each_alone(
    replays: Sequence[Replay],
    indices: Sequence[int],
    repeats: int,
    timer: Callable[..., tuple[float, ...]],
    flusher: Callable[[], None] | None,
    times: list[list[float]],
    progress: Progress | None,
) -> None:
    """Each call by ``timer`` (its warm-up included), flushed before each repetition when it
    runs cold; more repetitions only while its spread is wide."""
    first = min(repeats, MIN_REPEATS)
    for number, i in enumerate(indices, start=1):
        replay = replays[i]
        if progress is not None:
            progress(f"timing call {number} of {len(indices)}: {replay.name}")
        flush = flusher if replay.flush else None
        times[i] += timer(replay.fn, repeats=first, flush=flush)
        if repeats > first and not settled(times[i]):
            times[i] += timer(replay.fn, repeats=repeats - first, flush=flush)


def _cold_rounds(
    replays: Sequence[Replay],
    cold: Sequence[int],
    repeats: int,
    flusher: Callable[[], None],
    times: list[list[float]],
    progress: Progress | None,
) -> None:
    """The cold calls on a CPU, in rounds: an untimed warm-up round (no flush: it only lets
    the outputs' memory be mapped once), then rounds of one repetition each, every group
    after one flush, until each call has ``repeats`` repetitions or (after
    :data:`MIN_REPEATS`) a spread within the threshold."""
    import torch

    from gpuconcepts.measure import cpu_threads

    previous = torch.get_num_threads()
    torch.set_num_threads(cpu_threads())  # as time_cpu runs every call
    try:
        pending, timed = list(cold), -1  # round -1 is the warm-up
        while pending and timed < repeats:
            if progress is not None:
                progress(f"timing {len(pending)} memory-bound calls, each after a cache flush")
            for group in cold_groups(replays, pending):
                if timed >= 0:
                    flusher()
                held = []  # outputs live until the group ends: no call writes into warm memory
                for i in group:
                    start = time.perf_counter()
                    held.append(replays[i].fn())
                    if timed >= 0:
                        times[i].append(time.perf_counter() - start)
                del held
            timed += 1
            if timed >= MIN_REPEATS:
                pending = [i for i in pending if len(times[i]) < repeats and not settled(times[i])]
    finally:
        torch.set_num_threads(previous)


def time_forward(fn: Callable[[], object], device: str, repeats: int) -> tuple[float, ...]:
    """The plain forward pass by the device's timer, with no warm-up on a CPU (the counting
    pass and the replays ran every layer already), as many times as its spread needs."""
    from gpuconcepts.measure import time_function

    warmup = 0 if device == "cpu" else None
    times = time_function(fn, device, repeats=min(repeats, MIN_REPEATS), warmup=warmup)
    while len(times) < repeats and not settled(times):
        times += time_function(fn, device, repeats=1, warmup=warmup)
    return times
