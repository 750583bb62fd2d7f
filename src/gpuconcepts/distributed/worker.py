"""What each of the W processes runs: the collectives, measured on the loopback interface.

Every workload is timed in a *window*: all processes meet at a barrier, process 0 reads the
bytes the loopback interface has sent, the workload runs, all meet again and process 0 reads
the counter a second time. The difference is every byte the processes sent one another, read
by the kernel rather than by us; a window with nothing in it gives the barriers' own bytes,
which are taken off. Each workload is also checked against the same computation on one
device, so a fast but wrong exchange cannot pass.

This module imports torch at the top: only the spawned processes import it.
"""

from __future__ import annotations

import functools
import json
import random
import time
from collections.abc import Callable
from typing import Any

import torch
import torch.distributed as dist
import torch.nn.functional as F

from gpuconcepts import formulas
from gpuconcepts.distributed.launch import cpu_cores
from gpuconcepts.distributed.traffic import PHASES, Sizes, loopback_bytes
from gpuconcepts.files import write_atomic
from gpuconcepts.records import from_record
from gpuconcepts.units import plain_number

Record = dict[str, Any]

PAIRED_ROUNDS_PER_REPEAT = 3
"""The lookups run 3 rounds per repetition of the other workloads: their ratio's interval is
bootstrapped over rounds, and 5 rounds left it wider than the pass region on the shared 2-core
machine; a round of three lookups takes milliseconds."""


class _Meter:
    """Runs measured windows; every process calls it at the same points (the barriers)."""

    def __init__(self, rank: int, repeats: int, device: torch.device) -> None:
        self.rank = rank
        self.repeats = repeats
        self.device = device
        self.loopback = dist.get_backend() == "gloo"
        self.baseline = 0
        self.baseline = min(self.window(lambda: None)[0] for _ in range(3))

    def sync(self) -> None:
        """Wait for the GPU (a no-op on the CPU), so timers stop when the work is done."""
        if self.device.type == "cuda":
            torch.cuda.synchronize()

    def _counter(self) -> int:
        return loopback_bytes() if self.rank == 0 and self.loopback else 0

    def window(self, op: Callable[[], object]) -> tuple[int, float]:
        dist.barrier()
        before = self._counter()
        dist.barrier()
        start = time.perf_counter()
        op()
        self.sync()
        elapsed = torch.tensor([time.perf_counter() - start], dtype=torch.float64)
        dist.barrier()
        sent = self._counter() - before - self.baseline
        # The window lasts as long as its slowest process.
        elapsed = elapsed.to(self.device)
        dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)
        return max(sent, 0), float(elapsed.item())

    def measure(
        self, op: Callable[[], object], after: Callable[[], object] = lambda: None
    ) -> tuple[list[int], list[float]]:
        """Bytes sent (all processes together) and seconds of each repetition, after a warm-up.

        ``after`` runs on every process after each window, outside it: the place to collect
        what ``op`` recorded without counting those bytes.
        """
        op()
        windows = []
        for _ in range(self.repeats):
            windows.append(self.window(op))
            after()
        return [b for b, _ in windows], [t for _, t in windows]


def _record(
    name: str,
    kind: str,
    formula: str,
    inputs: dict[str, int],
    senders: int,
    measured: tuple[list[int], list[float]],
    error: float,
    loopback: bool,
) -> Record:
    raw, seconds = measured
    return {
        "name": name,
        "kind": kind,
        "formula": formula,
        "inputs": inputs,
        "formula_bytes": formulas.get(formula)(**inputs),
        "senders": senders,
        "loopback_bytes": [b / senders for b in raw] if loopback else None,
        "seconds": seconds,
        "max_error": error,
    }


def _max_error(value: torch.Tensor, reference: torch.Tensor) -> float:
    """Largest absolute difference, the largest over all processes."""
    error = (value - reference).abs().max().reshape(1).to(torch.float64)
    dist.all_reduce(error, op=dist.ReduceOp.MAX)
    return float(error.item())


def _generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


# -- data parallel -------------------------------------------------------------------------
def _data_parallel(rank: int, world: int, sizes: Sizes, meter: _Meter) -> list[Record]:
    """All-reduce the gradient of a two-layer MLP, as data-parallel training does each step."""
    h, batch = sizes.dp_width, sizes.dp_batch * world
    torch.manual_seed(0)  # the same initial weights on every process
    model = torch.nn.Sequential(torch.nn.Linear(h, h), torch.nn.ReLU(), torch.nn.Linear(h, h)).to(
        meter.device
    )
    x = torch.randn(batch, h, generator=_generator(1)).to(meter.device)
    y = torch.randn(batch, h, generator=_generator(2)).to(meter.device)

    def gradient(rows: slice) -> torch.Tensor:
        model.zero_grad()
        # Summed over samples and divided by the global batch: the local gradients add up.
        (((model(x[rows]) - y[rows]) ** 2).sum() / batch).backward()
        return torch.cat([p.grad.flatten() for p in model.parameters() if p.grad is not None])

    local = gradient(slice(rank * sizes.dp_batch, (rank + 1) * sizes.dp_batch))
    reference = gradient(slice(None))
    n_params = local.numel()
    records = []
    # Sub-groups of the first k processes show how the bytes per device grow with W.
    for k in range(2, world + 1):
        group = dist.new_group(list(range(k))) if k < world else None
        buffer = local.clone()

        def allreduce(group: Any = group, k: int = k, buffer: torch.Tensor = buffer) -> None:
            if rank < k:
                buffer.copy_(local)
                dist.all_reduce(buffer, group=group)

        measured = meter.measure(allreduce)
        error = _max_error(buffer, reference) if k == world else 0.0
        records.append(
            _record(
                "all-reduce" if k == world else f"all-reduce, {k} of {world} processes",
                "data parallel" if k == world else "world-size sweep",
                "ring_allreduce_bytes",
                {"n_params": n_params, "s": 4, "W": k},
                k,
                measured,
                error,
                meter.loopback,
            )
        )
    return records


def _sweep(_rank: int, world: int, sizes: Sizes, meter: _Meter) -> list[Record]:
    """All-reduces of growing buffers, for the latency-bandwidth fit."""
    records = []
    for n in sizes.sweep:
        buffer = torch.ones(n, device=meter.device)

        def allreduce(buffer: torch.Tensor = buffer) -> None:
            dist.all_reduce(buffer)

        measured = meter.measure(allreduce)
        records.append(
            _record(
                f"all-reduce of {plain_number(n)} values",
                "size sweep",
                "ring_allreduce_bytes",
                {"n_params": n, "s": 4, "W": world},
                world,
                measured,
                0.0,
                meter.loopback,
            )
        )
    return records


# -- sharded embedding lookup -----------------------------------------------------------------
def _embeddings(rank: int, world: int, sizes: Sizes, meter: _Meter) -> list[Record]:
    """One sharded embedding-bag lookup in each scheme; each sends the rows other devices need."""
    n_tables, batch, rows, d, lookups = sizes.embedding(world)
    local_batch = batch // world
    mine = slice(rank * local_batch, (rank + 1) * local_batch)
    dev = meter.device
    tables = [torch.randn(rows, d, generator=_generator(10 + t)).to(dev) for t in range(n_tables)]
    ids = [
        torch.randint(rows, (batch, lookups), generator=_generator(100 + t)).to(dev)
        for t in range(n_tables)
    ]
    # The answer one device holding every table would give, for this process's samples.
    reference = torch.stack(
        [F.embedding_bag(ids[t][mine], tables[t], mode="sum") for t in range(n_tables)]
    )

    clock: dict[str, float] = {}

    def exchange(parts: torch.Tensor) -> list[torch.Tensor]:
        """Send each process the samples it owns (dim 1 of ``parts``); return what arrives.
        Packing (the per-destination copies) and the all-to-all are timed apart."""
        start = time.perf_counter()
        send = torch.stack(
            [parts[:, q * local_batch : (q + 1) * local_batch] for q in range(world)]
        )
        received = torch.empty_like(send)
        meter.sync()
        clock["pack"] = time.perf_counter() - start
        dist.barrier()  # the exchange's timer must not hold a wait for the other's packing
        start = time.perf_counter()
        # the single-tensor form: gloo has no list all_to_all before torch 2.13 (seen on 2.11)
        dist.all_to_all_single(received, send)
        meter.sync()
        clock["exchange"] = time.perf_counter() - start
        clock["unpacked"] = time.perf_counter()
        return list(received.unbind(0))

    # Table-wise: process r owns tables r, r + W, ...; it pools them for every sample.
    owned = list(range(rank, n_tables, world))
    pooled_tables = torch.stack([F.embedding_bag(ids[t], tables[t], mode="sum") for t in owned])
    # Row-wise: process r holds rows [r N/W, (r+1) N/W) of every table: partial sums.
    share = rows // world
    low = rank * share
    partial = []
    for t in range(n_tables):
        inside = (ids[t] >= low) & (ids[t] < low + share)
        local_ids = (ids[t] - low).clamp(0, share - 1)
        weights = inside.to(tables[t].dtype)
        partial.append(
            F.embedding_bag(
                local_ids, tables[t][low : low + share], per_sample_weights=weights, mode="sum"
            )
        )
    partial_sums = torch.stack(partial)
    # Column-wise: process r holds columns [r d/W, (r+1) d/W) of every table.
    width = d // world
    columns = slice(rank * width, (rank + 1) * width)
    slices = torch.stack(
        [F.embedding_bag(ids[t], tables[t][:, columns], mode="sum") for t in range(n_tables)]
    )

    results: dict[str, torch.Tensor] = {}

    def tablewise() -> None:
        received = exchange(pooled_tables)
        out = torch.empty_like(reference)
        for r in range(world):
            out[r::world] = received[r]
        results["table-wise"] = out

    def rowwise() -> None:
        results["row-wise"] = torch.stack(exchange(partial_sums)).sum(0)

    def columnwise() -> None:
        results["column-wise"] = torch.cat(exchange(slices), dim=2)

    def unpacked(op: Callable[[], None]) -> None:
        """Run ``op``; what it does after its all-to-all is the unpacking."""
        op()
        meter.sync()
        clock["unpack"] = time.perf_counter() - clock["unpacked"]

    schemes = {
        "table-wise": (tablewise, "tablewise_alltoall_bytes"),
        "row-wise": (rowwise, "rowwise_alltoall_bytes"),
        "column-wise": (columnwise, "columnwise_alltoall_bytes"),
    }
    windows: dict[str, list[tuple[int, float]]] = {name: [] for name in schemes}
    phases: dict[str, dict[str, list[float]]] = {name: {} for name in schemes}
    order: dict[str, list[int]] = {name: [] for name in schemes}
    for op, _ in schemes.values():
        op()  # warm-up, outside the rounds
    # Paired rounds: every round times each scheme once, in an order shuffled by a seed all
    # processes share (they must call the same collectives), so no scheme always runs first.
    shuffle = random.Random(sizes.repeats)
    for _ in range(PAIRED_ROUNDS_PER_REPEAT * sizes.repeats):
        for position, name in enumerate(shuffle.sample(list(schemes), len(schemes))):
            windows[name].append(meter.window(functools.partial(unpacked, schemes[name][0])))
            spent = torch.tensor([clock[phase] for phase in PHASES], dtype=torch.float64).to(dev)
            dist.all_reduce(spent, op=dist.ReduceOp.MAX)  # the slowest process's, as windows
            for phase, seconds in zip(PHASES, spent.tolist(), strict=True):
                phases[name].setdefault(phase, []).append(seconds)
            order[name].append(position)
    inputs = {"B": batch, "n_tables": n_tables, "d": d, "s": 4, "W": world}
    records = []
    for name, (_, formula) in schemes.items():
        error = _max_error(results[name], reference)
        record = _record(
            f"{name} lookup",
            "sharded embedding",
            formula,
            inputs,
            world,
            ([b for b, _ in windows[name]], [t for _, t in windows[name]]),
            error,
            meter.loopback,
        )
        records.append(record | {"phases": phases[name], "order": order[name]})
    return records


# -- tensor parallel ------------------------------------------------------------------------
class _Comm:
    """Seconds spent in the tensor-parallel all-reduces (the rest of the step is arithmetic)."""

    seconds = 0.0
    group: Any = None


def _timed_allreduce(tensor: torch.Tensor) -> torch.Tensor:
    # Meet first, so the timer holds the collective and not a wait for the other's matmul.
    dist.barrier(group=_Comm.group)
    start = time.perf_counter()
    dist.all_reduce(tensor, group=_Comm.group)
    if tensor.is_cuda:  # NCCL returns before the GPU is done
        torch.cuda.synchronize()
    _Comm.seconds += time.perf_counter() - start
    return tensor


class _CopyToParallel(torch.autograd.Function):
    """Megatron's f: identity going forward, all-reduce of the gradient going back."""

    @staticmethod
    def forward(_ctx: Any, x: torch.Tensor) -> torch.Tensor:
        return x.view_as(x)

    @staticmethod
    def backward(_ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        return _timed_allreduce(grad.contiguous().clone())


class _ReduceFromParallel(torch.autograd.Function):
    """Megatron's g: all-reduce of the partial outputs going forward, identity going back."""

    @staticmethod
    def forward(_ctx: Any, x: torch.Tensor) -> torch.Tensor:
        return _timed_allreduce(x.clone())

    @staticmethod
    def backward(_ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        return grad


def _tensor_parallel(rank: int, world: int, sizes: Sizes, meter: _Meter) -> list[Record]:
    """A two-way Megatron MLP on processes 0 and 1: the first weight split by columns, the
    second by rows; one all-reduce forward and one backward."""
    tp = 2
    batch, seq, d = sizes.tp_batch, sizes.tp_seq, sizes.tp_width
    hidden = 4 * d
    dev = meter.device
    _Comm.group = dist.new_group([0, 1]) if world > tp else None
    x_full = torch.randn(batch, seq, d, generator=_generator(3)).to(dev)
    a_full = (torch.randn(d, hidden, generator=_generator(4)) / d**0.5).to(dev)
    b_full = (torch.randn(hidden, d, generator=_generator(5)) / hidden**0.5).to(dev)
    half = hidden // tp
    part = slice((rank % tp) * half, (rank % tp + 1) * half)
    a, b = a_full[:, part].contiguous(), b_full[part].contiguous()
    out: dict[str, torch.Tensor] = {}

    def step() -> None:
        _Comm.seconds = 0.0
        if rank >= tp:
            return
        x = x_full.clone().requires_grad_(True)
        inner = _CopyToParallel.apply(x)  # type: ignore[no-untyped-call]
        y = _ReduceFromParallel.apply(F.gelu(inner @ a) @ b)  # type: ignore[no-untyped-call]
        (y.square().sum() / 2).backward()
        out["y"], out["dx"] = y.detach(), x.grad if x.grad is not None else x

    x_ref = x_full.clone().requires_grad_(True)
    y_ref = F.gelu(x_ref @ a_full) @ b_full
    (y_ref.square().sum() / 2).backward()
    # Time only the all-reduces: the matmuls around them are not communication.
    comm: list[float] = []

    def collect() -> None:
        spent = torch.tensor([_Comm.seconds], dtype=torch.float64, device=dev)
        dist.all_reduce(spent, op=dist.ReduceOp.MAX)
        comm.append(float(spent.item()))

    raw, _ = meter.measure(step, after=collect)
    if rank < tp:
        y_err = (out["y"] - y_ref.detach()).abs().max()
        dx_err = (out["dx"] - x_ref.grad).abs().max() if x_ref.grad is not None else y_err
        error = torch.stack([y_err, dx_err]).max().reshape(1).to(torch.float64)
    else:
        error = torch.zeros(1, dtype=torch.float64, device=dev)
    dist.all_reduce(error, op=dist.ReduceOp.MAX)
    inputs = {"B": batch, "S": seq, "d": d, "s": 4, "W": tp}
    return [
        _record(
            "two-way tensor-parallel MLP",
            "tensor parallel",
            "tensor_parallel_mlp_bytes",
            inputs,
            tp,
            (raw, comm),
            float(error.item()),
            meter.loopback,
        )
    ]


# -- pipeline -----------------------------------------------------------------------------
def _pipeline(rank: int, world: int, sizes: Sizes, meter: _Meter) -> list[Record]:
    """The pipeline at ``sizes.pp_micro`` micro-batches, then at each other m of
    ``sizes.pp_sweep`` with micro-batches of the same size (kind ``"pipeline sweep"``)."""
    micro = sizes.pp_batch // sizes.pp_micro
    records = _pipeline_at(rank, world, sizes, meter, sizes.pp_micro, micro)
    for m in sizes.pp_sweep:
        if m != sizes.pp_micro:
            swept = _pipeline_at(rank, world, sizes, meter, m, micro)
            records += [r | {"kind": "pipeline sweep"} for r in swept]
    return records


def _pipeline_at(
    rank: int, world: int, sizes: Sizes, meter: _Meter, m: int, micro: int
) -> list[Record]:
    """A forward GPipe pipeline: W stages, m micro-batches of ``micro`` rows; each stage records
    its busy time.

    The bubble is measured as one minus the stages' mean busy time over the wall time of the
    whole pipeline. Each stage's work is also timed alone (the others waiting), so a run in
    which the stages slowed each other down (too few cores) can be told apart.
    """
    # One stage per core at most (two at least): stages that share a core cannot overlap.
    p = max(2, min(world, cpu_cores()))
    batch, d = m * micro, sizes.pp_width
    dev = meter.device
    weights = [
        (torch.randn(d, d, generator=_generator(200 + rank * 16 + i)) / d**0.5).to(dev)
        for i in range(sizes.pp_layers)
    ]
    x = torch.randn(batch, d, generator=_generator(6)).to(dev)
    clock = {"busy": 0.0, "start": 0.0, "end": 0.0}
    far = 1e30  # a process outside the pipeline must not move its first start or last end

    def stage(h: torch.Tensor) -> torch.Tensor:
        start = time.perf_counter()
        for w in weights:
            h = torch.tanh(h @ w)
        meter.sync()
        clock["busy"] += time.perf_counter() - start
        return h

    def run() -> None:
        clock["busy"] = 0.0
        sends = []
        clock["start"] = time.perf_counter()
        clock["end"] = clock["start"]
        if rank >= p:
            return
        for i in range(m):
            if rank == 0:
                h = x[i * micro : (i + 1) * micro].clone()
            else:
                h = torch.empty(micro, d, device=dev)
                dist.recv(h, src=rank - 1)
            h = stage(h)
            if rank < p - 1:
                sends.append(dist.isend(h, dst=rank + 1))
        for work in sends:
            if work is not None:
                work.wait()
        clock["end"] = time.perf_counter()

    bubbles: list[float] = []
    busy: list[float] = []

    def collect() -> None:
        # perf_counter is the system's monotonic clock on Linux: one clock for all processes.
        inside = rank < p
        first = torch.tensor([-clock["start"] if inside else -far], dtype=torch.float64, device=dev)
        last = torch.tensor([clock["end"] if inside else -far], dtype=torch.float64, device=dev)
        work = torch.tensor([clock["busy"]], dtype=torch.float64, device=dev)
        dist.all_reduce(first, op=dist.ReduceOp.MAX)
        dist.all_reduce(last, op=dist.ReduceOp.MAX)
        dist.all_reduce(work)
        busy.append(float(work.item()) / p)
        bubbles.append(1.0 - busy[-1] / float(last.item() + first.item()))

    raw, seconds = meter.measure(run, after=collect)
    # Each stage's work alone, one stage at a time, for the slowdown check.
    alone = []
    for r in range(p):
        dist.barrier()
        if rank == r:
            clock["busy"] = 0.0
            for i in range(m):
                stage(x[i * micro : (i + 1) * micro])
            alone.append(clock["busy"])
    solo = torch.tensor([sum(alone)], dtype=torch.float64, device=dev)
    dist.all_reduce(solo)
    record = _record(
        f"{p}-stage pipeline, {m} micro-batches",
        "pipeline",
        "pipeline_activation_bytes",
        {"B": batch, "d": d, "s": 4},
        p - 1,
        (raw, seconds),
        0.0,
        meter.loopback,
    )
    record |= {  # Collective's own field names: records.from_record reads it
        "bubble": bubbles,
        "schedule": {"p": p, "m": m},
        "busy_seconds": busy,
        "solo_seconds": float(solo.item()) / p,
    }
    return [record]


def run_growth(rank: int, world: int, sizes_record: dict[str, Any], out: str) -> None:
    """The entry of a byte count alone: the data-parallel all-reduce over the first 2, 3, ...
    ``world`` processes (kind ``"world-size sweep"`` throughout). Bytes do not depend on how
    many cores the processes share; their times do, and are not read."""
    sizes = from_record(Sizes, sizes_record)
    meter = _Meter(rank, sizes.repeats, torch.device("cpu"))
    records = [
        r
        | {
            "kind": "world-size sweep",
            "name": f"all-reduce, {r['inputs']['W']} of {world} processes",
        }
        for r in _data_parallel(rank, world, sizes, meter)
    ]
    if rank == 0:
        write_atomic(out, json.dumps({"records": records}))


WORKLOADS: dict[str, Callable[[int, int, Sizes, _Meter], list[Record]]] = {
    "data parallel": _data_parallel,
    "size sweep": _sweep,
    "sharded embedding": _embeddings,
    "tensor parallel": _tensor_parallel,
    "pipeline": _pipeline,
}
"""Every workload, in the order they run."""


def run_all(rank: int, world: int, sizes_record: dict[str, Any], out: str) -> None:
    """The spawned processes' entry: run every workload; process 0 writes the records."""
    sizes = from_record(Sizes, sizes_record)
    device = torch.device(f"cuda:{rank}" if dist.get_backend() == "nccl" else "cpu")
    meter = _Meter(rank, sizes.repeats, device)
    records: list[Record] = []
    timings = {}
    for name, workload in WORKLOADS.items():
        start = time.perf_counter()
        records += workload(rank, world, sizes, meter)
        timings[name] = time.perf_counter() - start
    if rank == 0:
        payload = {"records": records, "timings": timings, "threads": torch.get_num_threads()}
        write_atomic(out, json.dumps(payload))
