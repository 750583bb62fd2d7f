"""What each of the W processes runs: the collectives, measured on the loopback interface.

Each workload is one function of (rank, world, sizes, meter), timed in the windows of
:class:`~gpuconcepts.distributed.meter.Meter`: the data-parallel all-reduce and the size
sweep here, the sharded lookups in :mod:`~gpuconcepts.distributed.lookups`, the
tensor-parallel MLP in :mod:`~gpuconcepts.distributed.tensor_parallel` and the pipeline in
:mod:`~gpuconcepts.distributed.pipeline`.

This module imports torch at the top: only the spawned processes import it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import torch
import torch.distributed as dist

from gpuconcepts.distributed.lookups import embedding_lookups
from gpuconcepts.distributed.meter import Meter, Record, collective_record, max_error, seeded
from gpuconcepts.distributed.pipeline import pipeline
from gpuconcepts.distributed.tensor_parallel import tensor_parallel
from gpuconcepts.files import write_atomic
from gpuconcepts.records import from_record
from gpuconcepts.results.distributed import Sizes
from gpuconcepts.units import plain_number


# -- data parallel -------------------------------------------------------------------------
def _data_parallel(rank: int, world: int, sizes: Sizes, meter: Meter) -> list[Record]:
    """All-reduce the gradient of a two-layer MLP, as data-parallel training does each step."""
    h, batch = sizes.dp_width, sizes.dp_batch * world
    torch.manual_seed(0)  # the same initial weights on every process
    model = torch.nn.Sequential(torch.nn.Linear(h, h), torch.nn.ReLU(), torch.nn.Linear(h, h)).to(
        meter.device
    )
    x = torch.randn(batch, h, generator=seeded(1)).to(meter.device)
    y = torch.randn(batch, h, generator=seeded(2)).to(meter.device)

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
        error = max_error(buffer, reference) if k == world else 0.0
        records.append(
            collective_record(
                "all-reduce" if k == world else f"all-reduce, {k} of {world} processes",
                "data parallel" if k == world else "world-size sweep",
                "ring_allreduce_bytes",
                {"n_params": n_params, "s": 4, "W": k},
                k,
                measured,
                error,
                meter,
            )
        )
    return records


def _sweep(_rank: int, world: int, sizes: Sizes, meter: Meter) -> list[Record]:
    """All-reduces of growing buffers, for the latency-bandwidth fit."""
    records = []
    for n in sizes.sweep:
        buffer = torch.ones(n, device=meter.device)

        def allreduce(buffer: torch.Tensor = buffer) -> None:
            dist.all_reduce(buffer)

        measured = meter.measure(allreduce)
        records.append(
            collective_record(
                f"all-reduce of {plain_number(n)} values",
                "size sweep",
                "ring_allreduce_bytes",
                {"n_params": n, "s": 4, "W": world},
                world,
                measured,
                0.0,
                meter,
            )
        )
    return records


def run_growth(rank: int, world: int, sizes_record: dict[str, Any], out: str) -> None:
    """The entry of a byte count alone: the data-parallel all-reduce over the first 2, 3, ...
    ``world`` processes (kind ``"world-size sweep"`` throughout). Bytes do not depend on how
    many cores the processes share; their times do, and are not read."""
    sizes = from_record(Sizes, sizes_record)
    meter = Meter(rank, sizes.repeats, torch.device("cpu"), sizes.timed_blocks)
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


WORKLOADS: dict[str, Callable[[int, int, Sizes, Meter], list[Record]]] = {
    "data parallel": _data_parallel,
    "size sweep": _sweep,
    "sharded embedding": embedding_lookups,
    "tensor parallel": tensor_parallel,
    "pipeline": pipeline,
}
"""Every workload, in the order they run."""


def run_all(rank: int, world: int, sizes_record: dict[str, Any], out: str) -> None:
    """The spawned processes' entry: run every workload; process 0 writes the records."""
    sizes = from_record(Sizes, sizes_record)
    device = torch.device(f"cuda:{rank}" if dist.get_backend() == "nccl" else "cpu")
    meter = Meter(rank, sizes.repeats, device, sizes.timed_blocks)
    records: list[Record] = []
    timings = {}
    for name, workload in WORKLOADS.items():
        start = time.perf_counter()
        records += workload(rank, world, sizes, meter)
        timings[name] = time.perf_counter() - start
    if rank == 0:
        payload = {"records": records, "timings": timings, "threads": torch.get_num_threads()}
        write_atomic(out, json.dumps(payload))
