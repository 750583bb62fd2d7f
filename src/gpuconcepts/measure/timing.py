"""Timing done right: the CPU and CUDA timers (raw seconds per repetition), paired rounds of
several kernels, and the noise probe a run takes before and after it measures."""

# torch and matplotlib are imported inside functions on purpose (README, Rules: 3).
# ruff: noqa: PLC0415

from __future__ import annotations

import contextlib
import math
import os
import random
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.measure.devices import cpu_mhz, cpu_threads, make_flusher
from gpuconcepts.measure.measurement import NOISE_THRESHOLD, Measurement
from gpuconcepts.measure.physical import measured_hz
from gpuconcepts.units import percent, plain_number, plural, significant


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


# -- noise -----------------------------------------------------------------------------------
REFERENCE_REPEATS = 21
"""Repetitions of the noise probe's reference kernel (a few milliseconds in all)."""


@dataclass(frozen=True)
class NoiseProbe:
    """How busy the machine was at one moment: its load, its clock and the spread of a fixed
    reference kernel (a small matrix product timed :data:`REFERENCE_REPEATS` times).

    A run takes one before and one after its measurements and keeps both in its provenance,
    so a reader sees how much noise its verdicts had to get through.

    >>> probe = NoiseProbe(load_average=0.2, cores=2, cpu_mhz=None, reference_seconds=1e-4,
    ...                    reference_spread=0.35)
    >>> probe.busy, probe.text()
    (True, "load average 0.2 on 2 cores, a reference kernel's spread 35%")
    """

    load_average: float
    cores: int
    cpu_mhz: float | None
    reference_seconds: float
    reference_spread: float
    measured_mhz: float | None = None
    """One core's clock as measured (:func:`~gpuconcepts.measure.physical.measured_hz`), not
    the "cpu MHz" of /proc/cpuinfo (``cpu_mhz``, which boost clocks pass); None on a GPU, where
    it cannot run, and in runs recorded before 2026-12-07."""
    threads: int | None = None
    """The threads torch ran on at the probe (the run pins them: :func:`pinned_threads`);
    None on a GPU and in runs recorded before 2026-12-07."""

    OPTIONAL_KEYS: ClassVar[frozenset[str]] = frozenset({"measured_mhz", "threads"})
    """Written only when set, so a run recorded before them saves as it was."""

    @property
    def busy(self) -> bool:
        """True when the reference kernel's spread (IQR over median) was over
        :data:`NOISE_THRESHOLD`, the level at which a single measurement is called noisy."""
        return self.reference_spread > NOISE_THRESHOLD

    def text(self) -> str:
        """The probe in words."""
        if self.measured_mhz:
            clock = f", a measured clock of {plain_number(round(self.measured_mhz))} MHz"
        else:
            clock = f", {plain_number(round(self.cpu_mhz))} MHz" if self.cpu_mhz else ""
        threads = f", {plural(self.threads, 'thread')}" if self.threads else ""
        return (
            f"load average {significant(self.load_average, 2)} on "
            f"{plural(self.cores, 'core')}{clock}{threads}, a reference kernel's spread "
            f"{percent(self.reference_spread)}"
        )


def probe_noise(device: str) -> NoiseProbe:
    """A :class:`NoiseProbe` of this machine now (a few milliseconds)."""
    import torch

    n = 256 if device == "cpu" else 2048
    a = torch.ones((n, n), device=device)
    b = torch.ones((n, n), device=device)
    times = Measurement(
        "probe",
        device,
        {},
        time_function(lambda: a @ b, device, repeats=REFERENCE_REPEATS, warmup=3),
        0,
        1,
    )
    try:
        load = os.getloadavg()[0]
    except OSError:  # pragma: no cover - not on this platform
        load = 0.0
    measured = measured_hz(tries=3) if device == "cpu" else None
    return NoiseProbe(
        load_average=round(load, 2),
        cores=os.cpu_count() or 1,
        cpu_mhz=cpu_mhz() if device == "cpu" else None,
        reference_seconds=times.seconds,
        reference_spread=times.iqr_seconds / times.seconds,
        measured_mhz=None if measured is None else round(measured / 1e6, 1),
        threads=int(torch.get_num_threads()) if device == "cpu" else None,
    )


@contextlib.contextmanager
def pinned_threads(device: str, threads: int | None = None) -> Iterator[int | None]:
    """torch's CPU threads fixed at ``threads`` (default: :func:`cpu_threads`, what torch
    chose) for the block, and the count handed to it, so that a run records the threads its
    kernels ran on (its noise probes and its peaks say it); None on a GPU, where nothing is
    pinned. The count in force before is restored after.

    >>> with pinned_threads("cpu", 1) as threads:
    ...     threads
    1
    """
    if device != "cpu":
        yield None
        return
    import torch

    previous = torch.get_num_threads()
    chosen = threads if threads is not None else cpu_threads()
    torch.set_num_threads(chosen)
    try:
        yield chosen
    finally:
        torch.set_num_threads(previous)
