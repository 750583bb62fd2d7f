"""A two-way tensor-parallel (Megatron) MLP: the first weight split by columns, the second by
rows, one all-reduce forward and one backward, with only the all-reduces timed.

This module imports torch at the top: only the spawned processes import it.
"""

from __future__ import annotations

import time
from typing import Any

import torch
import torch.distributed as dist
import torch.nn.functional as F

from gpuconcepts.distributed.meter import Meter, Record, collective_record, seeded
from gpuconcepts.results.distributed import Sizes


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


def tensor_parallel(rank: int, world: int, sizes: Sizes, meter: Meter) -> list[Record]:
    """A two-way Megatron MLP on processes 0 and 1: the first weight split by columns, the
    second by rows; one all-reduce forward and one backward."""
    tp = 2
    batch, seq, d = sizes.tp_batch, sizes.tp_seq, sizes.tp_width
    hidden = 4 * d
    dev = meter.device
    _Comm.group = dist.new_group([0, 1]) if world > tp else None
    x_full = torch.randn(batch, seq, d, generator=seeded(3)).to(dev)
    a_full = (torch.randn(d, hidden, generator=seeded(4)) / d**0.5).to(dev)
    b_full = (torch.randn(hidden, d, generator=seeded(5)) / hidden**0.5).to(dev)
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
        collective_record(
            "two-way tensor-parallel MLP",
            "tensor parallel",
            "tensor_parallel_mlp_bytes",
            inputs,
            tp,
            (raw, comm),
            float(error.item()),
            meter,
        )
    ]
