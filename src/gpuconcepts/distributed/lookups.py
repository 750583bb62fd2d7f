"""A sharded embedding-bag lookup in each scheme (table-, row- and column-wise), timed in
paired rounds, in the run's independent blocks; each scheme sends the rows other devices need
in one all-to-all.

This module imports torch at the top: only the spawned processes import it.
"""

from __future__ import annotations

import functools
import random
import time
from collections.abc import Callable

import torch
import torch.distributed as dist
import torch.nn.functional as F

from gpuconcepts.distributed.meter import Meter, Record, collective_record, max_error, seeded
from gpuconcepts.measure.timing import time_in_blocks
from gpuconcepts.results.distributed import PHASES, Sizes

PAIRED_ROUNDS_PER_REPEAT = 3
"""The lookups run 3 rounds per repetition of the other workloads: their ratio's interval is
bootstrapped over blocks, then the rounds in them, and 5 rounds left it wider than the pass
region on the shared 2-core machine; a round of three lookups takes milliseconds."""

SCHEME_FORMULAS = {
    "table-wise": "tablewise_alltoall_bytes",
    "row-wise": "rowwise_alltoall_bytes",
    "column-wise": "columnwise_alltoall_bytes",
}
"""Each scheme, in the order they warm up, with the formula of the bytes it sends."""


class _Exchange:
    """The all-to-all that sends each process the samples it owns, with its phases (packing,
    exchange, unpacking) timed apart in :attr:`clock`."""

    def __init__(self, meter: Meter, world: int, local_batch: int) -> None:
        self.meter = meter
        self.world = world
        self.local_batch = local_batch
        self.clock: dict[str, float] = {}

    def __call__(self, parts: torch.Tensor) -> list[torch.Tensor]:
        """Send each process the samples it owns (dim 1 of ``parts``); return what arrives."""
        start = time.perf_counter()
        step = self.local_batch
        send = torch.stack([parts[:, q * step : (q + 1) * step] for q in range(self.world)])
        received = torch.empty_like(send)
        self.meter.sync()
        self.clock["pack"] = time.perf_counter() - start
        dist.barrier()  # the exchange's timer must not hold a wait for the other's packing
        start = time.perf_counter()
        # the single-tensor form: gloo has no list all_to_all before torch 2.13 (seen on 2.11)
        dist.all_to_all_single(received, send)
        self.meter.sync()
        self.clock["exchange"] = time.perf_counter() - start
        self.clock["unpacked"] = time.perf_counter()
        return list(received.unbind(0))

    def unpacked(self, op: Callable[[], None]) -> None:
        """Run ``op``; what it does after its all-to-all is the unpacking."""
        op()
        self.meter.sync()
        self.clock["unpack"] = time.perf_counter() - self.clock["unpacked"]


def _shards(
    rank: int, world: int, tables: list[torch.Tensor], ids: list[torch.Tensor]
) -> dict[str, torch.Tensor]:
    """What this process computes before the exchange in each scheme, from its own shard."""
    n_tables, rows, d = len(tables), tables[0].shape[0], tables[0].shape[1]
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
    # Column-wise: process r holds columns [r d/W, (r+1) d/W) of every table.
    width = d // world
    columns = slice(rank * width, (rank + 1) * width)
    slices = torch.stack(
        [F.embedding_bag(ids[t], tables[t][:, columns], mode="sum") for t in range(n_tables)]
    )
    return {"table-wise": pooled_tables, "row-wise": torch.stack(partial), "column-wise": slices}


class _PairedRounds:
    """Each scheme's windows, phases (the slowest process's, as windows) and place in its
    round, timed as :func:`~gpuconcepts.measure.timing.time_in_blocks` times rounds
    (:class:`~gpuconcepts.measure.timing.Blocks`). Every round times each scheme once, in an
    order shuffled by a seed all processes share (they must call the same collectives), so no
    scheme always runs first; every block begins with each scheme run once, untimed."""

    def __init__(self, schemes: dict[str, Callable[[], None]], exchange: _Exchange, seed: int):
        self.schemes, self.exchange = schemes, exchange
        self.windows: dict[str, list[tuple[int, float]]] = {name: [] for name in schemes}
        self.phases: dict[str, dict[str, list[float]]] = {name: {} for name in schemes}
        self.order: dict[str, list[int]] = {name: [] for name in schemes}
        self._shuffle = random.Random(seed)
        self.new_block()

    def new_block(self) -> None:
        """Warm every scheme up again, outside the rounds."""
        for op in self.schemes.values():
            op()

    def more(self, rounds: int = 1) -> None:
        """``rounds`` more rounds, each scheme once per round in a shuffled order."""
        meter, schemes = self.exchange.meter, self.schemes
        for _ in range(rounds):
            for position, name in enumerate(self._shuffle.sample(list(schemes), len(schemes))):
                op = functools.partial(self.exchange.unpacked, schemes[name])
                self.windows[name].append(meter.window(op))
                clock = self.exchange.clock
                spent = torch.tensor([clock[phase] for phase in PHASES], dtype=torch.float64)
                spent = spent.to(meter.device)
                dist.all_reduce(spent, op=dist.ReduceOp.MAX)
                for phase, seconds in zip(PHASES, spent.tolist(), strict=True):
                    self.phases[name].setdefault(phase, []).append(seconds)
                self.order[name].append(position)


def embedding_lookups(rank: int, world: int, sizes: Sizes, meter: Meter) -> list[Record]:
    """One sharded embedding-bag lookup in each scheme; each sends the rows other devices need."""
    n_tables, batch, rows, d, lookups = sizes.embedding(world)
    local_batch = batch // world
    mine = slice(rank * local_batch, (rank + 1) * local_batch)
    dev = meter.device
    tables = [torch.randn(rows, d, generator=seeded(10 + t)).to(dev) for t in range(n_tables)]
    ids = [
        torch.randint(rows, (batch, lookups), generator=seeded(100 + t)).to(dev)
        for t in range(n_tables)
    ]
    # The answer one device holding every table would give, for this process's samples.
    reference = torch.stack(
        [F.embedding_bag(ids[t][mine], tables[t], mode="sum") for t in range(n_tables)]
    )
    exchange = _Exchange(meter, world, local_batch)
    shards = _shards(rank, world, tables, ids)
    results: dict[str, torch.Tensor] = {}

    def tablewise() -> None:
        received = exchange(shards["table-wise"])
        out = torch.empty_like(reference)
        for r in range(world):
            out[r::world] = received[r]
        results["table-wise"] = out

    def rowwise() -> None:
        results["row-wise"] = torch.stack(exchange(shards["row-wise"])).sum(0)

    def columnwise() -> None:
        results["column-wise"] = torch.cat(exchange(shards["column-wise"]), dim=2)

    schemes = {"table-wise": tablewise, "row-wise": rowwise, "column-wise": columnwise}
    paired = _PairedRounds(schemes, exchange, seed=sizes.repeats)
    time_in_blocks(paired, PAIRED_ROUNDS_PER_REPEAT * sizes.repeats, meter.blocks)
    windows, phases, order = paired.windows, paired.phases, paired.order
    inputs = {"B": batch, "n_tables": n_tables, "d": d, "s": 4, "W": world}
    records = []
    for name, formula in SCHEME_FORMULAS.items():
        error = max_error(results[name], reference)
        record = collective_record(
            f"{name} lookup",
            "sharded embedding",
            formula,
            inputs,
            world,
            ([b for b, _ in windows[name]], [t for _, t in windows[name]]),
            error,
            meter,
        )
        records.append(record | {"phases": phases[name], "order": order[name]})
    return records
