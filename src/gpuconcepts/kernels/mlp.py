"""MLP: a fully connected layer (``nn.Linear``).

The weights are shared by every row of the batch, so the intensity grows with B: a
batch of one is memory-bound, a large batch compute-bound.

>>> from gpuconcepts.roofline import Peaks
>>> peaks = Peaks(device="cpu", flops_per_s=1e11, bytes_per_s=1e10, dtype="float32")
>>> [linear("cpu", peaks, B=B, d_in=8, d_out=8, repeats=2).flops for B in (1, 4)]
[128, 512]
"""

from __future__ import annotations

import torch

from gpuconcepts.kernels._common import Kernel, check_sizes, default_dtype, prepare, tensor, timed
from gpuconcepts.roofline import Peaks


def linear_kernel(
    device: str,
    peaks: Peaks | None,
    *,
    B: int,
    d_in: int,
    d_out: int,
    dtype: str | None = None,
    workload: str = "mlp",
) -> Kernel:
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
    return prepare(
        workload,
        device,
        peaks,
        lambda: layer(x),
        params={"B": B, "d_in": d_in, "d_out": d_out, "s": x.element_size()},
        dtype=dtype,
    )


linear = timed(linear_kernel)
