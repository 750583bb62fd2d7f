"""DLRM: embedding-bag lookups (random, sequential, hot rows) and the dense MLP part.

The lookups read a few rows of a large table and add them up: about one FLOP per
element read, so they sit far left of the ridge point, whatever the device.

>>> from gpuconcepts.roofline import Peaks
>>> peaks = Peaks(device="cpu", flops_per_s=1e11, bytes_per_s=1e10, dtype="float32")
>>> m = embedding_lookup("cpu", peaks, N=1000, B=8, L=4, d=16, pattern="random", repeats=2)
>>> m.workload, m.flops, m.bytes, m.flush
('dlrm-random', 512, 2560, True)
"""

from __future__ import annotations

from typing import Literal

import torch
import torch.nn.functional as F

from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.kernels._common import Kernel, check_sizes, default_dtype, prepare, tensor, timed
from gpuconcepts.kernels.mlp import linear_kernel
from gpuconcepts.roofline import Peaks
from gpuconcepts.workloads import HOT_ROWS

Pattern = Literal["random", "sequential", "hot"]
PATTERNS: tuple[Pattern, ...] = ("random", "sequential", "hot")


def lookup_indices(pattern: str, *, N: int, B: int, L: int, device: str, seed: int = 0) -> object:
    """The B·L row indices of one batch for an access pattern (an int64 tensor).

    ``random``: uniform over all N rows. ``sequential``: consecutive rows (wrapping at N).
    ``hot``: uniform over the first min(N, 1024) rows.

    >>> lookup_indices("sequential", N=5, B=2, L=4, device="cpu").tolist()
    [0, 1, 2, 3, 4, 0, 1, 2]
    """
    generator = torch.Generator(device="cpu").manual_seed(seed)
    count = B * L
    if pattern == "random":
        index = torch.randint(0, N, (count,), generator=generator)
    elif pattern == "sequential":
        index = torch.arange(count) % N
    elif pattern == "hot":
        index = torch.randint(0, min(N, HOT_ROWS), (count,), generator=generator)
    else:
        raise GpuConceptsError(f"pattern {pattern!r} is not one of {', '.join(PATTERNS)}")
    return index.to(device)


def embedding_lookup_kernel(
    device: str,
    peaks: Peaks,
    *,
    N: int,
    B: int,
    L: int,
    d: int,
    pattern: str = "random",
    dtype: str | None = None,
) -> Kernel:
    """Time ``F.embedding_bag`` (sum of L rows per sample) into an N × d table.

    Counts: ``embedding_bag_flops(B, L, d)`` and ``embedding_bag_bytes(B, L, d, s)``; the
    caches are flushed before each repetition, so only the ``hot`` pattern finds its rows
    in cache (and beats the DRAM roofline, which is the point of showing it).
    """
    check_sizes("dlrm.embedding_lookup", N=N, B=B, L=L, d=d)
    if pattern not in PATTERNS:
        raise GpuConceptsError(f"pattern {pattern!r} is not one of {', '.join(PATTERNS)}")
    dtype = dtype or default_dtype(device, "embedding")
    table = tensor((N, d), dtype, device)
    index = lookup_indices(pattern, N=N, B=B, L=L, device=device)
    assert isinstance(index, torch.Tensor)
    offsets = torch.arange(0, B * L, L, device=device)

    def fn() -> torch.Tensor:
        return F.embedding_bag(index, table, offsets, mode="sum")

    return prepare(
        f"dlrm-{pattern}",
        device,
        peaks,
        fn,
        params={"N": N, "B": B, "L": L, "d": d, "s": table.element_size()},
        flush=True,
        dtype=dtype,
    )


embedding_lookup = timed(embedding_lookup_kernel)


def dense_mlp_kernel(
    device: str,
    peaks: Peaks,
    *,
    B: int,
    d_in: int,
    d_out: int,
    dtype: str | None = None,
) -> Kernel:
    """The dense part of DLRM: one fully connected layer, workload ``dlrm-dense``."""
    return linear_kernel(
        device,
        peaks,
        B=B,
        d_in=d_in,
        d_out=d_out,
        dtype=dtype,
        workload="dlrm-dense",
    )


dense_mlp = timed(dense_mlp_kernel)
