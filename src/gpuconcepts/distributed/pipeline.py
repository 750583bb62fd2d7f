"""A forward GPipe pipeline: W stages, m micro-batches, its bubble measured from the stages'
busy time, at the run's micro-batch count and at each other of its sweep.

This module imports torch at the top: only the spawned processes import it.
"""

from __future__ import annotations

import time

import torch
import torch.distributed as dist

from gpuconcepts.distributed.launch import cpu_cores
from gpuconcepts.distributed.meter import Meter, Record, collective_record, seeded
from gpuconcepts.results.distributed import Sizes

FAR = 1e30
"""A process outside the pipeline reports this, so it never moves the first start or last end."""


class _Stages:
    """This process's stage of a ``p``-stage pipeline of ``m`` micro-batches of ``micro`` rows,
    and the clock it keeps: its busy time, when it began and when it ended."""

    def __init__(self, rank: int, p: int, m: int, micro: int, sizes: Sizes, meter: Meter) -> None:
        self.rank, self.p, self.m, self.micro, self.meter = rank, p, m, micro, meter
        self.d = d = sizes.pp_width
        self.weights = [
            (torch.randn(d, d, generator=seeded(200 + rank * 16 + i)) / d**0.5).to(meter.device)
            for i in range(sizes.pp_layers)
        ]
        self.x = torch.randn(m * micro, d, generator=seeded(6)).to(meter.device)
        self.clock = {"busy": 0.0, "start": 0.0, "end": 0.0}

    def stage(self, h: torch.Tensor) -> torch.Tensor:
        """This stage's layers on one micro-batch, its time added to the busy time."""
        start = time.perf_counter()
        for w in self.weights:
            h = torch.tanh(h @ w)
        self.meter.sync()
        self.clock["busy"] += time.perf_counter() - start
        return h

    def run(self) -> None:
        """One pass of every micro-batch: received from the stage before (or sliced from the
        input on the first), worked, and sent on to the next."""
        clock, rank, micro = self.clock, self.rank, self.micro
        clock["busy"] = 0.0
        sends = []
        clock["start"] = time.perf_counter()
        clock["end"] = clock["start"]
        if rank >= self.p:
            return
        for i in range(self.m):
            if rank == 0:
                h = self.x[i * micro : (i + 1) * micro].clone()
            else:
                h = torch.empty(micro, self.d, device=self.meter.device)
                dist.recv(h, src=rank - 1)
            h = self.stage(h)
            if rank < self.p - 1:
                sends.append(dist.isend(h, dst=rank + 1))
        for work in sends:
            if work is not None:
                work.wait()
        clock["end"] = time.perf_counter()

    def spans(self) -> tuple[float, float]:
        """The mean busy time of the stages and the pipeline's wall time, from the first start
        to the last end over all processes (perf_counter is the system's monotonic clock on
        Linux: one clock for all processes)."""
        inside, dev = self.rank < self.p, self.meter.device
        start, end = (-self.clock["start"], self.clock["end"]) if inside else (-FAR, -FAR)
        first = torch.tensor([start], dtype=torch.float64, device=dev)
        last = torch.tensor([end], dtype=torch.float64, device=dev)
        work = torch.tensor([self.clock["busy"]], dtype=torch.float64, device=dev)
        dist.all_reduce(first, op=dist.ReduceOp.MAX)
        dist.all_reduce(last, op=dist.ReduceOp.MAX)
        dist.all_reduce(work)
        return float(work.item()) / self.p, float(last.item() + first.item())

    def alone(self) -> float:
        """The stages' mean busy time with each run alone, one stage at a time (the others
        waiting), for the slowdown check."""
        alone = []
        for r in range(self.p):
            dist.barrier()
            if self.rank == r:
                self.clock["busy"] = 0.0
                for i in range(self.m):
                    self.stage(self.x[i * self.micro : (i + 1) * self.micro])
                alone.append(self.clock["busy"])
        solo = torch.tensor([sum(alone)], dtype=torch.float64, device=self.meter.device)
        dist.all_reduce(solo)
        return float(solo.item()) / self.p


def pipeline(rank: int, world: int, sizes: Sizes, meter: Meter) -> list[Record]:
    """The pipeline at ``sizes.pp_micro`` micro-batches, then at each other m of
    ``sizes.pp_sweep`` with micro-batches of the same size (kind ``"pipeline sweep"``)."""
    micro = sizes.pp_batch // sizes.pp_micro
    records = pipeline_at(rank, world, sizes, meter, sizes.pp_micro, micro)
    for m in sizes.pp_sweep:
        if m != sizes.pp_micro:
            swept = pipeline_at(rank, world, sizes, meter, m, micro)
            records += [r | {"kind": "pipeline sweep"} for r in swept]
    return records


def pipeline_at(
    rank: int, world: int, sizes: Sizes, meter: Meter, m: int, micro: int
) -> list[Record]:
    """A forward GPipe pipeline: W stages, m micro-batches of ``micro`` rows; each stage records
    its busy time.

    The bubble is measured as one minus the stages' mean busy time over the wall time of the
    whole pipeline. Each stage's work is also timed alone (the others waiting), so a run in
    which the stages slowed each other down (too few cores) can be told apart.
    """
    # One stage per core at most (two at least): stages that share a core cannot overlap.
    p = max(2, min(world, cpu_cores()))
    stages = _Stages(rank, p, m, micro, sizes, meter)
    bubbles: list[float] = []
    busy: list[float] = []

    def collect() -> None:
        mean_busy, wall = stages.spans()
        busy.append(mean_busy)
        bubbles.append(1.0 - mean_busy / wall)

    raw, seconds = meter.measure(stages.run, after=collect)
    solo = stages.alone()
    record = collective_record(
        f"{p}-stage pipeline, {m} micro-batches",
        "pipeline",
        "pipeline_activation_bytes",
        {"B": m * micro, "d": sizes.pp_width, "s": 4},
        p - 1,
        (raw, seconds),
        0.0,
        meter,
    )
    record |= {  # Collective's own field names: records.from_record reads it
        "bubble": bubbles,
        "schedule": {"p": p, "m": m},
        "busy_seconds": busy,
        "solo_seconds": solo,
    }
    return [record]
