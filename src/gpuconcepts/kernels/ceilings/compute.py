"""The compute ceiling and the GEMM sweep: the library's square GEMM (``torch.mm``, the path
``F.linear`` and ``nn.Linear`` run: the compute peak P) and its products at small shapes (a
diagnosis, never a roof).

>>> gemm_backends("cuda")
('mm',)
"""

from __future__ import annotations

import statistics
from collections.abc import Callable

import torch
import torch.nn.functional as F

from gpuconcepts import formulas
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.kernels._common import (
    Kernel,
    check_sizes,
    default_dtype,
    prepare,
    tensor,
    torch_dtype,
)
from gpuconcepts.kernels.ceilings.rounds import SweepPoint, median_in_rounds
from gpuconcepts.measure import time_function
from gpuconcepts.roofline import Peaks
from gpuconcepts.sweeps import gemm_sweep_points

GEMM_REPEATS = 5
"""Repetitions of the compute peak's square GEMM: a 4,096-wide product takes about half a
second on two cores, and its median settles within five."""


GEMM_BACKENDS = ("mm", "onednn")
"""``mm``: ``torch.mm`` (MKL or OpenBLAS on a CPU, cuBLAS on CUDA). ``onednn``: the oneDNN
(mkldnn) linear that torch's CPU convolutions also use; CPU only."""


def gemm_backends(device: str) -> tuple[str, ...]:
    """GEMM paths worth timing on a device.

    >>> gemm_backends("cuda")
    ('mm',)
    """
    if device == "cpu" and torch.backends.mkldnn.is_available():  # type: ignore[no-untyped-call]
        return GEMM_BACKENDS
    return ("mm",)


def _gemm_call(
    device: str, shape: tuple[int, int, int], backend: str, dtype: str
) -> tuple[Callable[[], object], int]:
    """The call of an m × k by k × n GEMM through ``backend``, and its element size."""
    m, k, n = shape
    a = tensor((m, k), dtype, device, seed=1)
    b = tensor((k, n), dtype, device, seed=2)
    if backend == "mm":
        out = torch.empty((m, n), dtype=torch_dtype(dtype), device=device)
        return (lambda: torch.mm(a, b, out=out)), a.element_size()
    if backend == "onednn" and device == "cpu":
        # aten's oneDNN linear: y = x wᵀ on oneDNN's blocked layout (what to_mkldnn makes).
        x_onednn = a.to_mkldnn()
        w_onednn = b.T.contiguous().to_mkldnn()
        return (lambda: torch.ops.aten.mkldnn_linear(x_onednn, w_onednn)), a.element_size()
    raise GpuConceptsError(f"GEMM backend {backend!r} is not one of {gemm_backends(device)}")


def gemm_kernel(
    device: str,
    peaks: Peaks | None = None,
    *,
    n: int,
    backend: str = "mm",
    dtype: str | None = None,
) -> Kernel:
    """An n × n × n GEMM through ``backend`` (see :data:`GEMM_BACKENDS`): workload
    ``peak-gemm``, the reference of the compute roof (``formulas.mlp_flops(n, n, n)`` FLOPs).

    A claim that reads a compute-bound kernel against the peak times this kernel in the same
    rounds, so that load on the machine slows the roof and the kernel alike.
    """
    check_sizes("peaks.gemm", n=n)
    name = dtype or default_dtype(device)
    fn, s = _gemm_call(device, (n, n, n), backend, name)
    params = {"n": n, "backend": backend, "s": s}
    return prepare("peak-gemm", device, peaks, fn, params=params, dtype=name, flush=False)


def gemm_shape_flops(
    device: str,
    shape: tuple[int, int, int],
    *,
    backend: str = "mm",
    dtype: str | None = None,
    repeats: int = 5,
) -> float:
    """FLOP/s of an m × k by k × n GEMM through ``backend``, at its median repetition
    (``formulas.mlp_flops(B=m, d_in=k, d_out=n)`` FLOPs)."""
    flops, seconds = _gemm_seconds(device, shape, backend, dtype, repeats)
    return flops / statistics.median(seconds)


def _gemm_seconds(
    device: str, shape: tuple[int, int, int], backend: str, dtype: str | None, repeats: int
) -> tuple[float, tuple[float, ...]]:
    """The FLOPs of an m × k by k × n GEMM through ``backend``, and its seconds repetition by
    repetition."""
    check_sizes("peaks.gemm", m=shape[0], k=shape[1], n=shape[2])
    fn, _ = _gemm_call(device, shape, backend, dtype or default_dtype(device))
    flops = formulas.mlp_flops(B=shape[0], d_in=shape[1], d_out=shape[2])
    return float(flops), tuple(time_function(fn, device, repeats=repeats))


def gemm_flops(
    device: str,
    *,
    n: int,
    dtype: str | None = None,
    repeats: int = 5,
    backend: str = "mm",
    keep: dict[str, tuple[float, ...]] | None = None,
) -> float:
    """FLOP/s of an n × n × n GEMM in ``dtype``, at its median repetition: the compute peak
    (square products only; the book's convolution is a kernel it judges, never a part of it).
    ``keep``, when given, receives its seconds repetition by repetition under
    ``flops_per_s``, the peak's key among :attr:`Peaks.ceiling_seconds
    <gpuconcepts.roofline.Peaks.ceiling_seconds>`.

    The peak is the library's own product, ``torch.mm`` (MKL or OpenBLAS on a CPU, cuBLAS on
    CUDA): the path ``F.linear`` and ``nn.Linear`` run, so the GEMMs the book judges are read
    against the rate their own path reaches. A faster path (oneDNN's GEMM, which torch's CPU
    convolutions use) is not the peak: a convolution faster than it is a finding
    (issue 45: on a 2-core AMD EPYC the fastest path read 1.74x a canonical SGEMM).
    """
    flops, seconds = _gemm_seconds(device, (n, n, n), backend, dtype, repeats)
    if keep is not None:
        keep["flops_per_s"] = seconds
    return flops / statistics.median(seconds)


def gemm_sweep(
    device: str, ridge_point: float, *, dtype: str | None = None, repeats: int = 5
) -> tuple[tuple[int, int, bool, float], ...]:
    """The GEMM sweep: the library's matrix product ``F.linear`` (what ``nn.Linear`` and an RNN
    step run) of a rows × width input by a width × width weight, at every product of
    :func:`~gpuconcepts.sweeps.gemm_sweep_points` (none within 2x of a product the book's
    kernels run, in every dimension); each point is (rows, width, flushed, FLOP/s) at the
    median of its rounds, counted by ``formulas.mlp_flops``, every point timed once a round
    (:func:`median_in_rounds`).

    Every product is timed warm, and one below ``ridge_point`` FLOP/byte also after a cache
    flush before each repetition, as the book times a memory-bound kernel. A small product
    cannot fill the vector units or the cores, and a matrix-vector product streams its weights
    at the rate it reads them, not at the streaming kernels'. These rates are a diagnosis of
    a kernel whose time rests on products the sweep's hold
    (:meth:`~gpuconcepts.roofline.Peaks.gemm_point`), never its prediction.
    """
    name = dtype or default_dtype(device)
    shapes, points = [], []
    weights: dict[int, torch.Tensor] = {}
    for rows, width in gemm_sweep_points(device):
        w = weights.setdefault(width, tensor((width, width), name, device, seed=2))
        flops = formulas.mlp_flops(B=rows, d_in=width, d_out=width)
        nbytes = formulas.mlp_bytes(B=rows, d_in=width, d_out=width, s=w.element_size())
        product = linear_call(device, name, rows, w)
        for flush in (False, True) if flops / nbytes < ridge_point else (False,):
            shapes.append((rows, width, flush, float(flops)))
            points.append(SweepPoint(product, flush))
    middle = median_in_rounds(points, device, repeats=repeats)
    return tuple(
        (rows, width, flush, flops / t)
        for (rows, width, flush, flops), t in zip(shapes, middle, strict=True)
    )


def linear_call(device: str, dtype: str, rows: int, weight: torch.Tensor) -> Callable[[], object]:
    """The library's product that the GEMM sweep times, ``F.linear`` of a rows × depth input by
    ``weight`` (columns × depth), as ``nn.Linear`` and an RNN step run it."""
    x = tensor((rows, weight.shape[1]), dtype, device, seed=1)
    return lambda: F.linear(x, weight)
