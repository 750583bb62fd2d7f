"""Start W processes in one ``torch.distributed`` group, and always stop them again.

Every check that can fail before a process starts does so here, with one clear message: the
world size, the backend, the GPUs NCCL needs and the port of the rendezvous. A run that fails
in one process stops the others; a run that does not finish in time is stopped as a whole.

>>> check_world_size(1, "gloo")
Traceback (most recent call last):
...
gpuconcepts.errors.GpuConceptsError: --world-size W (number of devices (world size)) must be at least 2; got 1
>>> check_backend("mpi")
Traceback (most recent call last):
...
gpuconcepts.errors.GpuConceptsError: --backend must be gloo or nccl; got 'mpi'
"""

# torch is imported inside functions on purpose (README, Rules: 3).
# ruff: noqa: PLC0415

from __future__ import annotations

import os
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any, Literal

from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.units import plain_number

Backend = Literal["gloo", "nccl"]

BACKENDS: tuple[Backend, ...] = ("gloo", "nccl")
"""``torch.distributed`` backends the book runs: gloo between CPU processes, NCCL between GPUs."""

PROCESSES_PER_CORE = 2
"""gloo runs at most this many processes per CPU core: beyond it the processes mostly wait for
a core, and the timings say more about the scheduler than about the collectives."""

MAX_GLOO_WORLD = 8
"""And never more than this many, whatever the cores: the quick sizes are chosen for up to 8."""

COLLECTIVE_TIMEOUT_S = 60.0
"""A collective that waits longer than this for a peer fails (a peer has died or hangs)."""

STOP_GRACE_S = 2.0
"""Seconds the other processes are given to end by themselves once one has failed (long
enough for them to see the closed connection and write their errors) before SIGTERM, then
SIGKILL a second later."""


def cpu_cores() -> int:
    """CPU cores this process may run on (the affinity mask, not the machine's total)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def gpu_count() -> int:
    """CUDA devices torch sees (0 without CUDA or with a CPU-only torch)."""
    import torch

    return int(torch.cuda.device_count()) if torch.cuda.is_available() else 0


def check_backend(backend: str) -> Backend:
    """The backend, or an error naming the two allowed."""
    if backend not in BACKENDS:
        raise GpuConceptsError(f"--backend must be gloo or nccl; got {backend!r}")
    return "nccl" if backend == "nccl" else "gloo"


def max_world_size(backend: str, *, cores: int | None = None, gpus: int | None = None) -> int:
    """The largest W this machine allows: one process per GPU for NCCL, and for gloo
    :data:`PROCESSES_PER_CORE` per core, at least 2 and at most :data:`MAX_GLOO_WORLD`.

    >>> max_world_size("gloo", cores=2), max_world_size("gloo", cores=64), max_world_size("nccl", gpus=4)
    (4, 8, 4)
    """
    if check_backend(backend) == "nccl":
        return gpu_count() if gpus is None else gpus
    cores = cpu_cores() if cores is None else cores
    return max(2, min(MAX_GLOO_WORLD, PROCESSES_PER_CORE * cores))


def check_world_size(world_size: int, backend: str, *, limit: int | None = None) -> int:
    """``world_size``, or an error saying which rule it breaks on this machine."""
    what = "--world-size W (number of devices (world size))"
    if world_size < 2:
        raise GpuConceptsError(f"{what} must be at least 2; got {world_size}")
    if backend == "nccl":
        gpus = gpu_count() if limit is None else limit
        if gpus < 2:
            raise GpuConceptsError(
                f"--backend nccl needs at least 2 GPUs, one per process; this machine has {gpus}"
                " (use --backend gloo)"
            )
        if world_size > gpus:
            raise GpuConceptsError(
                f"{what} must be at most {gpus} with nccl (one process per GPU); got {world_size}"
            )
        return world_size
    allowed = max_world_size(backend) if limit is None else limit
    if world_size > allowed:
        raise GpuConceptsError(
            f"{what} must be at most {allowed} with gloo on this machine "
            f"({PROCESSES_PER_CORE} processes per CPU core, {MAX_GLOO_WORLD} at most); "
            f"got {world_size}"
        )
    return world_size


def free_port() -> int:
    """A TCP port on the loopback interface that nothing listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def check_port(port: int) -> int:
    """``port``, or an error when it is out of range or already in use on 127.0.0.1."""
    if not 1024 <= port <= 65535:
        raise GpuConceptsError(f"--port must be between 1024 and 65535; got {port}")
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            raise GpuConceptsError(
                f"--port {port} is already in use on 127.0.0.1; choose another or leave "
                "--port out to take a free one"
            ) from None
    return port


def _entry(
    rank: int,
    fn: Callable[..., None],
    world_size: int,
    backend: str,
    port: int,
    args: tuple[Any, ...],
    parent: int,
) -> None:
    """What each process runs: join the group, run ``fn(rank, world_size, *args)``, leave.

    When ``fn`` raises, the process leaves at once without the group's orderly shutdown
    (which would wait for peers that may be gone); its sockets close with it. The process
    dies with its ``parent``, even when that one is killed (:func:`_die_with_parent`).
    """
    _die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a forkserver's child has Python's handler
    import torch
    import torch.distributed as dist

    # W processes share the cores: give each its part, or they fight over every core.
    torch.set_num_threads(max(1, cpu_cores() // world_size))
    if backend == "nccl":
        torch.cuda.set_device(rank)
    dist.init_process_group(
        backend,
        init_method=f"tcp://127.0.0.1:{port}",
        rank=rank,
        world_size=world_size,
        timeout=timedelta(seconds=COLLECTIVE_TIMEOUT_S),
    )
    fn(rank, world_size, *args)
    dist.destroy_process_group()


_PR_SET_PDEATHSIG = 1
"""Linux's prctl option: the signal a process gets when the thread that started it ends."""


def _die_with_parent(parent: int) -> None:
    """Have the kernel kill this process when its parent ends, however it ends (Linux; a
    best effort elsewhere), and end now if the parent is already gone."""
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        pass
    if os.getppid() != parent:  # it ended before the line above took effect
        os._exit(1)


@contextmanager
def _workers_deaf_to_ctrl_c() -> Iterator[None]:
    """Start processes that ignore SIGINT: Ctrl-C reaches every process of the terminal's
    group, and the workers must leave it to this one, which stops them (one line, no
    traceback from each). SIGINT is blocked meanwhile, so a Ctrl-C in this short window
    is delivered, not lost, once the old handler is back."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # inherited by the children
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


_PEER_GONE = ("closed by peer", "reset by peer", "broken pipe", "timed out", "timeout")
"""Words of the errors a process reports when another one died first: symptoms, not causes."""


def _error_line(trace: str) -> str:
    lines = [line.strip() for line in trace.splitlines() if line.strip()]
    return lines[-1] if lines else "no message"


def _root_cause(processes: list[Any], error_files: list[str], order: list[int]) -> str:
    """One line naming the process whose error started the failure.

    Every process that raised left its traceback in its error file. A process whose peer
    died reports a closed connection; the one to name is the one that did not.
    """
    import pickle

    failures: list[tuple[int, str]] = []
    for index in order:
        path = Path(error_files[index])
        if path.is_file() and path.stat().st_size:
            with path.open("rb") as handle:
                failures.append((index, _error_line(pickle.load(handle))))
        elif processes[index].exitcode not in (0, None):
            code = processes[index].exitcode
            how = f"signal {-code}" if code < 0 else f"exit code {code}"
            failures.append((index, f"ended with {how}"))
    if not failures:
        return "a process failed without a message"
    causes = [f for f in failures if not any(w in f[1].lower() for w in _PEER_GONE)]
    index, line = (causes or failures)[0]
    return f"process {index} failed: {line}"


def launch(
    fn: Callable[..., None],
    world_size: int,
    args: tuple[Any, ...] = (),
    *,
    backend: str = "gloo",
    port: int | None = None,
    timeout_s: float = 300.0,
) -> None:
    """Run ``fn(rank, world_size, *args)`` in ``world_size`` spawned processes of one group.

    ``fn`` must be a module-level function (spawned processes import it). The call returns
    when every process has finished. When one fails, the others get :data:`STOP_GRACE_S` to
    fail too (so their errors can be read), then are stopped, and a :class:`GpuConceptsError`
    names the process whose error came first. After ``timeout_s`` every process is stopped
    and the error says so. No process outlives this call.
    """
    from multiprocessing.connection import wait

    import torch.multiprocessing as mp

    check_backend(backend)
    port = free_port() if port is None else check_port(port)
    with _workers_deaf_to_ctrl_c():  # the fork server, too, is started deaf to Ctrl-C
        method, parent = _start_method(backend)
        context = mp.start_processes(  # type: ignore[attr-defined,no-untyped-call]
            _entry,
            args=(fn, world_size, backend, port, args, parent),
            nprocs=world_size,
            join=False,
            start_method=method,
        )
    processes = list(context.processes)
    deadline = time.monotonic() + timeout_s
    running = {p.sentinel: i for i, p in enumerate(processes)}
    ended: list[int] = []
    try:
        while running:
            left = deadline - time.monotonic()
            if left <= 0:
                raise GpuConceptsError(
                    f"the {world_size} processes did not finish within {plain_number(timeout_s)} s; "
                    "all were stopped"
                )
            for sentinel in wait(list(running), timeout=min(left, 1.0)):
                index = running.pop(sentinel)
                processes[index].join()
                ended.append(index)
                if processes[index].exitcode != 0:
                    _stop(processes)
                    rest = [i for i in range(world_size) if i not in ended]
                    raise GpuConceptsError(
                        _root_cause(processes, context.error_files, ended + rest)
                    )
    except BaseException as stopped:
        # Ctrl-C or SIGTERM: stop them now; an error: give them time to say theirs
        _stop(processes, STOP_GRACE_S if isinstance(stopped, Exception) else 0.0)
        raise
    finally:
        _stop(processes)


def _start_method(backend: str) -> tuple[str, int]:
    """How the processes start, and the pid that will be their parent.

    gloo's processes fork from one server that has imported torch once: a spawned process
    imports torch anew, which took 1 to 2 s per process on a 2-core machine, longer than the
    quick workloads themselves. NCCL's start by spawning (a fork must not carry CUDA state),
    and so does every process where the platform has no forkserver.
    """
    import multiprocessing
    from multiprocessing import forkserver

    if backend != "gloo" or "forkserver" not in multiprocessing.get_all_start_methods():
        return "spawn", os.getpid()
    forkserver.set_forkserver_preload(["gpuconcepts.distributed.worker"])
    forkserver.ensure_running()
    server = getattr(forkserver, "_forkserver", None)
    pid = getattr(server, "_forkserver_pid", None)
    if not isinstance(pid, int):  # a Python whose forkserver keeps its pid elsewhere
        return "spawn", os.getpid()
    return "forkserver", pid


def _stop(processes: list[Any], grace_s: float = STOP_GRACE_S) -> None:
    """Give live processes a short grace, then SIGTERM, then SIGKILL; reap them all."""
    deadline = time.monotonic() + grace_s
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join(1.0)
        if process.is_alive():  # stuck in C++ and deaf to SIGTERM
            process.kill()
            process.join()
