"""Timing done right: the CPU and CUDA timers (raw seconds per repetition) and paired rounds of
several kernels. The noise probe a run takes around them is in :mod:`~gpuconcepts.measure.noise`."""

# torch is imported inside functions on purpose (README, Rules: 3).
# ruff: noqa: PLC0415

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.measure.devices import cpu_threads
from gpuconcepts.measure.memory import make_flusher
from gpuconcepts.measurement import block_bounds


# -- timers ----------------------------------------------------------------------------------
class EventLike(Protocol):
    """The part of ``torch.cuda.Event`` the CUDA timer uses."""

    def record(self) -> None: ...

    def elapsed_time(self, end: Any) -> float: ...


class CudaBackend(Protocol):
    """Event factory and synchronisation; the real one wraps ``torch.cuda``, tests use fakes."""

    def event(self) -> EventLike: ...

    def synchronize(self) -> None: ...


class TorchCudaBackend:
    """:class:`CudaBackend` over ``torch.cuda``."""

    def event(self) -> EventLike:
        import torch

        event: EventLike = torch.cuda.Event(enable_timing=True)  # type: ignore[no-untyped-call]
        return event

    def synchronize(self) -> None:
        import torch

        torch.cuda.synchronize()


def _check_repeats(repeats: int, warmup: int) -> None:
    if repeats < 1:
        raise GpuConceptsError(f"repeats must be at least 1; got {repeats}")
    if warmup < 0:
        raise GpuConceptsError(f"warmup must be 0 or more; got {warmup}")


def calls_per_repetition(estimate_seconds: float, min_rep_seconds: float, cap: int = 1000) -> int:
    """How many calls one timed repetition holds so it lasts at least ``min_rep_seconds``.

    >>> calls_per_repetition(0.02, 1e-3), calls_per_repetition(1e-5, 1e-3), calls_per_repetition(0, 1)
    (1, 100, 1000)
    """
    if estimate_seconds <= 0:
        return cap
    return max(1, min(cap, math.ceil(min_rep_seconds / estimate_seconds)))


def time_cpu(
    fn: Callable[[], object],
    *,
    repeats: int = 7,
    warmup: int = 1,
    flush: Callable[[], None] | None = None,
    num_threads: int | None = None,
    min_rep_seconds: float = 1e-3,
) -> tuple[float, ...]:
    """Seconds per call for each of ``repeats`` repetitions, on all CPU threads.

    torch runs with ``num_threads`` (default: all of :func:`cpu_threads`) for the whole
    timing; ``torch.utils.benchmark.Timer`` would default to one thread, halving a 2-core
    result, and its ``timeit`` runs two untimed calls right before the timed ones, which
    would undo a cache flush, so the loop here is a plain ``perf_counter`` one.
    Without ``flush`` a repetition of a fast kernel holds several calls (at least
    ``min_rep_seconds`` in all, as the warm-up estimates; with ``warmup=0`` each holds one)
    and reports their mean. With ``flush`` (memory-bound
    kernels) each repetition is exactly one call right after ``flush()``, which is not timed.

    >>> times = time_cpu(lambda: sum(range(100)), repeats=3)
    >>> len(times), all(t > 0 for t in times)
    (3, True)
    """
    _check_repeats(repeats, warmup)
    import torch

    threads = num_threads if num_threads is not None else cpu_threads()
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        estimate = math.inf
        for _ in range(warmup):
            if flush is not None:
                flush()
            start = time.perf_counter()
            fn()
            estimate = min(estimate, time.perf_counter() - start)
        # no warm-up (the caller ran it already): no estimate either, one call a repetition
        single = flush is not None or not warmup
        number = 1 if single else calls_per_repetition(estimate, min_rep_seconds)
        times = []
        for _ in range(repeats):
            if flush is not None:
                flush()
            start = time.perf_counter()
            for _ in range(number):
                fn()
            times.append((time.perf_counter() - start) / number)
    finally:
        torch.set_num_threads(previous)
    return tuple(times)


def time_cuda(
    fn: Callable[[], object],
    *,
    repeats: int = 7,
    warmup: int = 3,
    flush: Callable[[], None] | None = None,
    backend: CudaBackend | None = None,
) -> tuple[float, ...]:
    """Seconds of each of ``repeats`` calls, timed with one CUDA event pair per call.

    The triton ``do_bench`` recipe: ``warmup`` untimed calls, then for each repetition
    ``flush()`` (if given; it writes a buffer larger than L2) *before* the start event, the
    call between a start and an end event, and one synchronisation at the end before the
    elapsed times (milliseconds) are read.
    """
    _check_repeats(repeats, warmup)
    cuda = backend if backend is not None else TorchCudaBackend()
    for _ in range(warmup):
        fn()
    cuda.synchronize()
    pairs = []
    for _ in range(repeats):
        if flush is not None:
            flush()
        start, end = cuda.event(), cuda.event()
        start.record()
        fn()
        end.record()
        pairs.append((start, end))
    cuda.synchronize()
    return tuple(start.elapsed_time(end) / 1000.0 for start, end in pairs)


def time_function(
    fn: Callable[[], object],
    device: str,
    *,
    repeats: int = 7,
    warmup: int | None = None,
    flush: bool = False,
) -> tuple[float, ...]:
    """Time ``fn`` on a resolved device; ``flush=True`` evicts caches before each repetition.

    >>> len(time_function(lambda: None, "cpu", repeats=2))
    2
    """
    flusher = make_flusher(device) if flush else None
    if device == "cuda":
        return time_cuda(fn, repeats=repeats, warmup=3 if warmup is None else warmup, flush=flusher)
    if device == "cpu":
        return time_cpu(fn, repeats=repeats, warmup=1 if warmup is None else warmup, flush=flusher)
    raise GpuConceptsError(f"device {device!r} is not a resolved device (cpu or cuda)")


# -- paired rounds ---------------------------------------------------------------------------
class Timeable(Protocol):
    """What :class:`Rounds` times: a call, whether to flush the caches before it, and the
    settings it runs under (a :class:`gpuconcepts.kernels._common.Kernel` is one)."""

    @property
    def fn(self) -> Callable[[], Any]: ...

    @property
    def flush(self) -> bool: ...

    def settings(self) -> AbstractContextManager[None]: ...


class Rounds:
    """Kernels that are compared, timed in interleaved rounds.

    Each round times every kernel once (one repetition: one call right after a cache flush
    for a memory-bound kernel, else enough calls to last ``min_rep_seconds``), in an order
    shuffled anew each round, so that drift and background load fall on all of them alike and
    the ``i``-th times of two kernels can be compared as a pair. :meth:`more` adds rounds;
    :meth:`new_block` starts an independent block (every kernel warmed up again);
    :attr:`times` holds each kernel's times, round by round.

    >>> import contextlib
    >>> class Call:
    ...     flush = False
    ...     def __init__(self): self.fn = lambda: sum(range(50))
    ...     def settings(self): return contextlib.nullcontext()
    >>> rounds = Rounds([Call(), Call()], "cpu")
    >>> rounds.more(3)
    >>> [len(t) for t in rounds.times], rounds.count
    ([3, 3], 3)
    >>> rounds.new_block(); rounds.more(2); rounds.block_starts
    [0, 3]
    """

    def __init__(
        self,
        kernels: Sequence[Timeable],
        device: str,
        *,
        seed: int = 0,
        min_rep_seconds: float = 1e-3,
    ) -> None:
        if not kernels:
            raise GpuConceptsError("Rounds: give at least one kernel to time")
        self.kernels = tuple(kernels)
        self.device = device
        self._order = random.Random(seed)
        self._flusher = make_flusher(device) if any(k.flush for k in kernels) else None
        self.times: tuple[list[float], ...] = tuple([] for _ in kernels)
        self.block_starts: list[int] = []
        """The round each block began at (:meth:`new_block`), the first at 0."""
        self._min_rep_seconds = min_rep_seconds
        self.new_block()

    def new_block(self) -> None:
        """Start a block: warm every kernel up again (one untimed call each, which also says
        anew how many calls a repetition needs), so that a block does not inherit the state of
        the one before it: a repetition size estimated in a busy moment, a cold cache."""
        self.block_starts.append(self.count)
        self._calls = tuple(
            1 if k.flush else calls_per_repetition(self._repetition(k, 1), self._min_rep_seconds)
            for k in self.kernels
        )

    @property
    def count(self) -> int:
        """Rounds timed so far."""
        return len(self.times[0])

    def _repetition(self, kernel: Timeable, calls: int) -> float:
        """Seconds per call of one repetition of ``calls`` calls (flushed first if needed)."""
        import torch

        with kernel.settings():
            if kernel.flush and self._flusher is not None:
                self._flusher()
            if self.device == "cuda":
                backend = TorchCudaBackend()
                backend.synchronize()
                start, end = backend.event(), backend.event()
                start.record()
                for _ in range(calls):
                    kernel.fn()
                end.record()
                backend.synchronize()
                return start.elapsed_time(end) / 1000.0 / calls
            threads = cpu_threads()
            previous = torch.get_num_threads()
            torch.set_num_threads(threads)
            try:
                begin = time.perf_counter()
                for _ in range(calls):
                    kernel.fn()
                return (time.perf_counter() - begin) / calls
            finally:
                torch.set_num_threads(previous)

    def more(self, rounds: int = 1) -> None:
        """Time ``rounds`` more rounds, each kernel once per round in a shuffled order."""
        for _ in range(rounds):
            order = list(range(len(self.kernels)))
            self._order.shuffle(order)
            for i in order:
                self.times[i].append(self._repetition(self.kernels[i], self._calls[i]))


class Blocks(Protocol):
    """What :func:`time_in_blocks` times: rounds that can start a new block (a :class:`Rounds`,
    or :class:`~gpuconcepts.kernels.references.Beside` over one)."""

    def new_block(self) -> None: ...

    def more(self, rounds: int = 1) -> None: ...


def time_in_blocks(rounds: Blocks, count: int, blocks: int) -> None:
    """Time ``count`` rounds of ``rounds`` in ``blocks`` consecutive blocks
    (:func:`~gpuconcepts.measurement.block_bounds`), each after the first warmed up again
    (:meth:`Rounds.new_block`; the first was when the rounds were made). An interval that
    resamples the blocks (:func:`~gpuconcepts.claims.quantities.block_resample`) then sees the
    variation from one moment of the run to the next, which rounds timed in one block share.

    >>> import contextlib
    >>> class Call:
    ...     flush = False
    ...     def __init__(self): self.fn = lambda: sum(range(50))
    ...     def settings(self): return contextlib.nullcontext()
    >>> rounds = Rounds([Call()], "cpu")
    >>> time_in_blocks(rounds, 7, 3)
    >>> rounds.block_starts, rounds.count
    ([0, 2, 4], 7)
    """
    for i, (start, end) in enumerate(block_bounds(count, blocks)):
        if i:
            rounds.new_block()
        rounds.more(end - start)
