"""MLP: a fully connected layer (``nn.Linear``) and a batch-size sweep.

The weights are shared by every row of the batch, so the intensity grows with B: a
batch of one is memory-bound, a large batch compute-bound.

>>> from gpuconcepts.measure import Peaks
>>> peaks = Peaks(device="cpu", flops_per_s=1e11, bytes_per_s=1e10, dtype="float32")
>>> [m.workload for m in batch_sweep("cpu", peaks, batches=(1, 4), d_in=8, d_out=8, repeats=2)]
['mlp-B1', 'mlp-B4']
"""

from __future__ import annotations

from collections.abc import Iterable

import torch

from gpuconcepts import formulas
from gpuconcepts.kernels._common import DEFAULT_REPEATS, check_sizes, default_dtype, run, tensor
from gpuconcepts.measure import Measurement, Peaks


def linear(
    device: str,
    peaks: Peaks,
    *,
    B: int,
    d_in: int,
    d_out: int,
    dtype: str | None = None,
    repeats: int = DEFAULT_REPEATS,
    workload: str = "mlp",
) -> Measurement:
    """Time ``nn.Linear(d_in, d_out, bias=False)`` on a B × d_in batch.

    Counts: ``mlp_flops(B, d_in, d_out)`` and ``mlp_bytes(B, d_in, d_out, s)``. Caches are
    flushed before each repetition when the layer is memory-bound at the measured peaks.
    """
    check_sizes("mlp.linear", B=B, d_in=d_in, d_out=d_out)
    dtype = dtype or default_dtype(device)
    x = tensor((B, d_in), dtype, device, seed=1)
    layer = torch.nn.Linear(d_in, d_out, bias=False, device=device, dtype=x.dtype)
    with torch.no_grad():
        layer.weight.copy_(tensor((d_out, d_in), dtype, device, seed=2))
    s = x.element_size()
    flops = formulas.mlp_flops(B=B, d_in=d_in, d_out=d_out)
    nbytes = formulas.mlp_bytes(B=B, d_in=d_in, d_out=d_out, s=s)
    return run(
        workload,
        device,
        peaks,
        lambda: layer(x),
        flops=flops,
        bytes=nbytes,
        params={"B": B, "d_in": d_in, "d_out": d_out, "s": s},
        repeats=repeats,
        dtype=dtype,
    )


def batch_sweep(
    device: str,
    peaks: Peaks,
    *,
    batches: Iterable[int],
    d_in: int,
    d_out: int,
    dtype: str | None = None,
    repeats: int = DEFAULT_REPEATS,
) -> list[Measurement]:
    """:func:`linear` at each batch size; workloads ``mlp-B<B>``."""
    return [
        linear(
            device,
            peaks,
            B=B,
            d_in=d_in,
            d_out=d_out,
            dtype=dtype,
            repeats=repeats,
            workload=f"mlp-B{B}",
        )
        for B in batches
    ]
