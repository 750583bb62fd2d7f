"""Measured windows on the loopback interface, and the record each workload returns.

Every workload is timed in a *window*: all processes meet at a barrier, process 0 reads the
bytes the loopback interface has sent, the workload runs, all meet again and process 0 reads
the counter a second time. The difference is every byte the processes sent one another, read
by the kernel rather than by us; a window with nothing in it gives the barriers' own bytes,
which are taken off. Each workload is also checked against the same computation on one
device (:func:`max_error`), so a fast but wrong exchange cannot pass.

This module imports torch at the top: only the spawned processes import it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import torch
import torch.distributed as dist

from gpuconcepts import formulas
from gpuconcepts.distributed.traffic import loopback_bytes
from gpuconcepts.measure.timing import time_in_blocks

Record = dict[str, Any]
"""One measured collective as the worker writes it (read back as a ``Collective``)."""


class Meter:
    """Runs measured windows; every process calls it at the same points (the barriers).

    ``repeats`` windows per workload, in ``blocks`` independent blocks (each after its own
    warm-up: :meth:`measure`)."""

    def __init__(self, rank: int, repeats: int, device: torch.device, blocks: int = 1) -> None:
        self.rank = rank
        self.repeats = repeats
        self.blocks = blocks
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
        """Bytes sent (all processes together, the barriers' own taken off) and seconds of
        one run of ``op``, the slowest process's."""
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
        """Bytes sent (all processes together) and seconds of each of :attr:`repeats`
        repetitions, in :attr:`blocks` independent blocks.

        ``after`` runs on every process after each window, outside it: the place to collect
        what ``op`` recorded without counting those bytes.

        The repetitions are split into consecutive blocks by the rule the architectures' and
        the whole model's timings follow (:func:`~gpuconcepts.measure.timing.time_in_blocks`),
        each block after its own untimed run of ``op`` (its warm-up), so a block does not
        inherit the state of the one before it. The record keeps the count
        (:attr:`~gpuconcepts.results.distributed.Collective.blocks`, by
        :func:`collective_record`), and the distributed judges' intervals resample the blocks,
        then the repetitions inside them (the bubble's median and slope in
        :mod:`~gpuconcepts.claims.distributed`, the schemes' ratio and the α-β fit's in
        :mod:`~gpuconcepts.claims.collectives`): they include the variation from one moment
        of the run to the next. The lookups' paired rounds are blocked the same way
        (:mod:`~gpuconcepts.distributed.lookups`). The same split leaves the run's time about
        as it was: the repetitions are divided, not multiplied; only the warm-ups are added.
        """
        windows = _Windows(self, op, after)
        time_in_blocks(windows, self.repeats, self.blocks)
        return windows.sent, windows.seconds


class _Windows:
    """One workload's windows as :func:`~gpuconcepts.measure.timing.time_in_blocks` times
    them (:class:`~gpuconcepts.measure.timing.Blocks`): made warmed up, warmed up again at
    each new block."""

    def __init__(self, meter: Meter, op: Callable[[], object], after: Callable[[], object]):
        self.meter, self.op, self.after = meter, op, after
        self.sent: list[int] = []
        self.seconds: list[float] = []
        self.new_block()

    def new_block(self) -> None:
        """One untimed run of the workload, outside any window."""
        self.op()

    def more(self, rounds: int = 1) -> None:
        """``rounds`` more windows, each followed by ``after``."""
        for _ in range(rounds):
            sent, seconds = self.meter.window(self.op)
            self.sent.append(sent)
            self.seconds.append(seconds)
            self.after()


def collective_record(
    name: str,
    kind: str,
    formula: str,
    inputs: dict[str, int],
    senders: int,
    measured: tuple[list[int], list[float]],
    error: float,
    meter: Meter,
) -> Record:
    """The record of one measured collective: its formula's bytes beside the loopback bytes
    per sender (None off the loopback interface), the seconds of each repetition and the
    blocks ``meter`` timed them in."""
    raw, seconds = measured
    return {
        "name": name,
        "kind": kind,
        "formula": formula,
        "inputs": inputs,
        "formula_bytes": formulas.get(formula)(**inputs),
        "senders": senders,
        "loopback_bytes": [b / senders for b in raw] if meter.loopback else None,
        "seconds": seconds,
        "max_error": error,
        "blocks": meter.blocks,
    }


def max_error(value: torch.Tensor, reference: torch.Tensor) -> float:
    """Largest absolute difference, the largest over all processes."""
    error = (value - reference).abs().max().reshape(1).to(torch.float64)
    dist.all_reduce(error, op=dist.ReduceOp.MAX)
    return float(error.item())


def seeded(seed: int) -> torch.Generator:
    """A CPU generator seeded with ``seed``: every process draws the same data from it."""
    return torch.Generator().manual_seed(seed)
