"""What a kernel costs beyond its arithmetic and its bytes: the operations it dispatches, and
the floor of one dispatched operation.

A kernel made of many small operations is not limited by compute or memory but by the
framework: every operation pays the dispatcher (and, on a GPU, a launch) before it does any
work. :func:`count_dispatch` counts the operations one call dispatches, from the code path itself
(``torch.profiler``, which sees the operations a composite such as ``nn.RNN`` runs inside
C++), and :func:`op_floor` measures the time of the smallest one. Their product is a lower
bound on the call's time (:data:`gpuconcepts.formulas.chain_seconds`).

>>> x = torch.ones(4)
>>> count_dispatch(lambda: torch.tanh(torch.tanh(x)))
Dispatch(ops=2, calls=2)
"""

from __future__ import annotations

import functools
import itertools
import os
import re
import statistics
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, NamedTuple

import torch
from torch._C._autograd import DeviceType

from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.measure import time_function

NO_WORK = frozenset(
    {
        "alias",
        "as_strided",
        "chunk",
        "contiguous",
        "detach",
        "empty",
        "empty_like",
        "empty_strided",
        "expand",
        "item",
        "lift_fresh",
        "narrow",
        "permute",
        "reshape",
        "resolve_conj",
        "resolve_neg",
        "result_type",
        "select",
        "slice",
        "split",
        "squeeze",
        "t",
        "to",
        "transpose",
        "unbind",
        "unsqueeze",
        "view",
        "_reshape_alias",
        "_unsafe_view",
    }
)
"""Operations that launch no kernel: views, aliases and bare allocations (metadata only)."""


def _does_work(name: str) -> bool:
    return name.startswith("aten::") and name.removeprefix("aten::") not in NO_WORK


def _innermost_work(event: Any, children: Mapping[int, list[Any]]) -> int:
    """Operations that do work under (and including) ``event``: an operation counts when none
    of the operations it calls does work, so a composite counts as its parts, once each."""
    below = sum(_innermost_work(child, children) for child in children.get(id(event), ()))
    if below:
        return below
    return 1 if _does_work(event.name()) else 0


def _roots_and_children(events: Sequence[Any]) -> tuple[list[Any], dict[int, list[Any]]]:
    """The profiler's CPU events as a forest: on each thread, an event is the child of the
    latest earlier one whose interval holds it (the rule ``torch.autograd.profiler`` uses to
    build ``cpu_children``). Read from the raw events: the profiler's own parse into
    ``FunctionEvent`` objects took 5x as long (1.4 s for 1,024 steps of ``nn.RNN``)."""
    ordered = sorted(events, key=lambda e: (e.start_thread_id(), e.start_ns(), -e.end_ns()))
    roots: list[Any] = []
    children: dict[int, list[Any]] = {}
    for _, thread in itertools.groupby(ordered, key=lambda e: e.start_thread_id()):
        open_events: list[Any] = []
        for event in thread:
            while open_events and (
                event.start_ns() >= open_events[-1].end_ns()
                or event.end_ns() > open_events[-1].end_ns()
            ):
                open_events.pop()
            if open_events:
                children.setdefault(id(open_events[-1]), []).append(event)
            else:
                roots.append(event)
            open_events.append(event)
    return roots, children


KINETO_LINE = re.compile(r"(USDT|STAGE):\d{4}-\d\d-\d\d [^\]]*\.cpp:\d+\] ")
"""A line kineto (the profiler's library) writes to file descriptor 2 each time a profiler
starts or stops, e.g. ``USDT:2026-12-04 18:38:35 17430:17430
SyncActivityProfilerHandler.cpp:52] profiler_start``, whatever its log level.

:meta hide-value:
"""


@contextmanager
def cpu_profiler(*, memory: bool = False) -> Iterator[torch.autograd.profiler.profile]:
    """The profiler of the CPU's operations (and, with ``memory``, their allocations).

    It is autograd's profiler, the one :mod:`torch.profiler` wraps: the wrapper's start asks
    ``hasattr(torch, "_inductor")``, which imports the compiler stack (0.7 s a process) and
    leaves a ``torchinductor_<user>`` cache folder in the temporary directory. What is written
    to file descriptor 2 meanwhile is held back and passed on without kineto's own lines
    (:data:`KINETO_LINE`), which would otherwise fill the CLI's and the book's output, two for
    every kernel whose operations are counted; a warning or an error still gets through.
    """
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as held:
        os.dup2(held.fileno(), 2)
        try:
            with torch.autograd.profiler.profile(profile_memory=memory) as profiler:
                yield profiler
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            held.seek(0)
            lines = held.read().decode(errors="replace").splitlines(keepends=True)
            kept = "".join(line for line in lines if not KINETO_LINE.match(line))
            if kept:
                sys.stderr.write(kept)
                sys.stderr.flush()


class Dispatch(NamedTuple):
    """What one call dispatches: ``ops``, the operations that do work, counted once each at
    the innermost level; ``calls``, the operations among the outermost that Python itself
    called and that do work (themselves or through what they call). Each of the ``calls``
    pays Python's argument parsing on top of the dispatcher, which an operation dispatched
    from inside C++ (one of ``nn.RNN``'s steps) does not."""

    ops: int
    calls: int


def count_dispatch(fn: Callable[[], object]) -> Dispatch:
    """The operations one call of ``fn`` dispatches that do work (views and allocations left
    out), each counted once at the innermost level: ``nn.RNN`` counts as its steps' matrix
    products and activations, not as one call. An operation that does its work in a child it
    calls counts as that child, so the count never exceeds the kernels that ran: a lower
    bound. And the calls among them that Python made (:class:`Dispatch`).

    Eight steps of ``nn.RNN`` dispatch 29 operations, but Python calls two of them: the
    initial hidden state's zeros and the RNN itself.

    >>> rnn, x = torch.nn.RNN(2, 2), torch.ones(8, 1, 2)
    >>> with torch.inference_mode():
    ...     count_dispatch(lambda: rnn(x))
    Dispatch(ops=29, calls=2)
    """
    with cpu_profiler() as prof:
        fn()
    results = prof.kineto_results
    if results is None:  # pragma: no cover - a profiler that recorded nothing
        raise GpuConceptsError("count_dispatch: the profiler recorded no events")
    cpu = [e for e in results.events() if e.device_type() == DeviceType.CPU and not e.is_async()]
    roots, children = _roots_and_children(cpu)
    work = [_innermost_work(e, children) for e in roots]
    return Dispatch(ops=max(1, sum(work)), calls=max(1, sum(1 for w in work if w)))


def latency_floor(
    device: str,
    *,
    repeats: int = 20,
    cold: bool = False,
    keep: dict[str, tuple[float, ...]] | None = None,
) -> float:
    """Seconds of the cheapest call there is, launch included on CUDA, at its median repetition:
    the least of two one-element calls into tensors that exist, ``torch.neg(x, out=y)`` and
    ``y.copy_(x)``. A call that must wrap a Python number costs more: on 2026-12-04 the floor
    until then, ``torch.add(x, 1, out=y)``, took 3.6 and 4.8 times as long as those two at
    the best of 15 interleaved rounds on the 2-core CPU, and a kernel of two small calls ran
    faster than two such floors. ``cold``: each repetition after a cache flush, as the book
    times a memory-bound kernel; the call then fetches its code, its tensors and its page
    tables from DRAM, which a warm call finds in cache. ``keep``, when given, receives the
    cheaper call's seconds repetition by repetition under the floor's key among
    :attr:`Peaks.ceiling_seconds <gpuconcepts.roofline.Peaks.ceiling_seconds>`
    (``cold_latency_seconds`` or ``latency_seconds``), so that a page gives its spread."""
    runs = [
        tuple(time_function(call, device, repeats=repeats, warmup=3, flush=cold))
        for call in floor_calls(device)
    ]
    cheaper = min(runs, key=statistics.median)  # each at its median, the kernels' statistic
    if keep is not None:
        keep["cold_latency_seconds" if cold else "latency_seconds"] = cheaper
    return statistics.median(cheaper)


def floor_calls(device: str) -> tuple[Callable[[], object], ...]:
    """The calls the latency floor is the least of (:func:`latency_floor`)."""
    x = torch.ones(1, dtype=torch.float32, device=device)
    y = torch.empty_like(x)
    return (lambda: torch.neg(x, out=y)), (lambda: y.copy_(x))


OP_FLOOR_STEPS = 1024
"""Empty operations in the chain that measures the per-operation floor."""


def op_floor(
    device: str, *, repeats: int = 11, keep: dict[str, tuple[float, ...]] | None = None
) -> float:
    """Seconds of one operation dispatched from inside the framework's C++, with no Python
    call around it and next to no work in it: :data:`OP_FLOOR_STEPS` negations of one-element
    tensors, each into a new tensor, which ``torch._foreach_neg`` dispatches one by one from
    C++ on a CPU (an empty operation, no module the book judges), divided by the operations it
    dispatches (:func:`count_dispatch`), at the median repetition. Counted and timed alike, it
    is the unit of the chain roof. Each operation creates its result, as the operations of the
    kernels it bounds do (an RNN step's product, addition and tanh each allocate theirs): an
    in-place negation, the floor from 2026-12-07 until a later change that day, skipped the
    allocation every such operation pays and read 0.18 µs where an operation of nn.RNN(16, 16)
    took 0.9 µs on the 2-core EPYC (ledger 2's overhead-bound RNNs then at 6-21x their
    prediction; the change log says after which run). Until 2026-12-07 it was ``nn.RNN`` of
    width 1, a module whose steps the book judges against it (issue 45). A CUDA device pays a
    launch for each operation, so there the floor of an operation is its launch: the latency
    floor (:func:`latency_floor`). ``keep``, when given, receives the seconds per operation of
    each repetition under ``op_seconds``, its key among :attr:`Peaks.ceiling_seconds
    <gpuconcepts.roofline.Peaks.ceiling_seconds>`.
    """
    if device == "cuda":
        launches: dict[str, tuple[float, ...]] = {}
        seconds = latency_floor(device, repeats=repeats, keep=launches)
        each = launches["latency_seconds"]
    else:
        chain, ops = op_chain()
        with torch.inference_mode():
            each = tuple(t / ops for t in time_function(chain, device, repeats=repeats))
        seconds = statistics.median(each)
    if keep is not None:
        keep["op_seconds"] = each
    return seconds


def op_chain() -> tuple[Callable[[], object], int]:
    """The per-operation floor's chain on a CPU (:func:`op_floor`), and the operations one call
    of it dispatches."""
    tensors = [torch.zeros(1) for _ in range(OP_FLOOR_STEPS)]
    return (lambda: torch._foreach_neg(tensors)), _op_chain_ops()


@functools.cache
def _op_chain_ops() -> int:
    """The operations the chain dispatches, counted once a process: the count is the code
    path's, and a count under the profiler takes seconds on a 2-core CPU."""
    tensors = [torch.zeros(1) for _ in range(OP_FLOOR_STEPS)]
    with torch.inference_mode():
        return count_dispatch(lambda: torch._foreach_neg(tensors)).ops
