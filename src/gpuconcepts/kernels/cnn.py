"""CNN: a dense K×K convolution and its depthwise form (stride 1, 'same' padding, no bias).

A dense convolution reuses each input pixel K²·C_out times and is compute-bound; the
depthwise form mixes no channels, reuses each pixel only K² times and is memory-bound.

>>> from gpuconcepts.roofline import Peaks
>>> peaks = Peaks(device="cpu", flops_per_s=1e11, bytes_per_s=1e10, dtype="float32")
>>> m = conv2d("cpu", peaks, B=1, H=8, W=8, C_in=4, C_out=8, repeats=2)
>>> m.workload, m.flops, m.bytes
('cnn-conv', 36864, 4224)
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.kernels._common import Kernel, check_sizes, default_dtype, prepare, tensor, timed
from gpuconcepts.roofline import Peaks


def channels_last(x: torch.Tensor) -> torch.Tensor:
    """NHWC layout: what oneDNN and cuDNN run fastest (6x for depthwise on a CPU)."""
    return x.contiguous(memory_format=torch.channels_last)


def _odd(kernel: str, K: int) -> None:
    if K % 2 == 0:
        raise GpuConceptsError(f"{kernel}: K must be odd for 'same' padding; got {K}")


def conv2d_kernel(
    device: str,
    peaks: Peaks | None,
    *,
    B: int,
    H: int,
    W: int,
    C_in: int,
    C_out: int,
    K: int = 3,
    dtype: str | None = None,
) -> Kernel:
    """Time a dense K×K ``conv2d`` (channels-last); counts ``conv_flops`` and ``conv_bytes``."""

    check_sizes("cnn.conv2d", B=B, H=H, W=W, C_in=C_in, C_out=C_out, K=K)
    _odd("cnn.conv2d", K)
    dtype = dtype or default_dtype(device)
    x = channels_last(tensor((B, C_in, H, W), dtype, device, seed=1))
    weight = channels_last(tensor((C_out, C_in, K, K), dtype, device, seed=2))

    def fn() -> torch.Tensor:
        return F.conv2d(x, weight, padding=K // 2)

    return prepare(
        "cnn-conv",
        device,
        peaks,
        fn,
        params={
            "B": B,
            "H": H,
            "W": W,
            "C_in": C_in,
            "C_out": C_out,
            "K": K,
            "s": x.element_size(),
        },
        dtype=dtype,
    )


conv2d = timed(conv2d_kernel)


def depthwise_conv2d_kernel(
    device: str,
    peaks: Peaks,
    *,
    B: int,
    H: int,
    W: int,
    C: int,
    K: int = 3,
    dtype: str | None = None,
) -> Kernel:
    """Time a depthwise K×K ``conv2d`` (``groups=C``); counts ``depthwise_conv_*``."""

    check_sizes("cnn.depthwise_conv2d", B=B, H=H, W=W, C=C, K=K)
    _odd("cnn.depthwise_conv2d", K)
    dtype = dtype or default_dtype(device)
    x = channels_last(tensor((B, C, H, W), dtype, device, seed=1))
    weight = channels_last(tensor((C, 1, K, K), dtype, device, seed=2))

    def fn() -> torch.Tensor:
        return F.conv2d(x, weight, padding=K // 2, groups=C)

    return prepare(
        "cnn-depthwise",
        device,
        peaks,
        fn,
        params={"B": B, "H": H, "W": W, "C": C, "K": K, "s": x.element_size()},
        dtype=dtype,
    )


depthwise_conv2d = timed(depthwise_conv2d_kernel)
