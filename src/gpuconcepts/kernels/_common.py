"""Shared plumbing of the kernel modules: dtypes, tensor creation, timing into a Measurement."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

import torch

from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.measure import Measurement, time_function
from gpuconcepts.roofline import Peaks
from gpuconcepts.workloads import workload as describe

Role = Literal["compute", "embedding"]

DTYPES = ("float32", "float16", "bfloat16", "tf32")
"""dtype names the kernels accept; ``tf32`` is float32 storage with TF32 matmuls (CUDA)."""

DEFAULT_REPEATS = 7
"""Timed repetitions of a kernel unless the caller (or the presets) says otherwise."""


def default_dtype(device: str, role: Role = "compute") -> str:
    """The book's dtype: float32 on CPU; bfloat16 on CUDA except for embedding tables.

    >>> default_dtype("cpu"), default_dtype("cuda"), default_dtype("cuda", "embedding")
    ('float32', 'bfloat16', 'float32')
    """
    if device == "cuda" and role == "compute":
        return "bfloat16"
    return "float32"


def torch_dtype(name: str) -> torch.dtype:
    """The torch dtype of a dtype name (``tf32`` stores float32)."""
    table = {
        "float32": torch.float32,
        "tf32": torch.float32,
        "float16": torch.float16,
        "bfloat16": torch.bfloat16,
    }
    if name not in table:
        raise GpuConceptsError(f"dtype {name!r} is not one of {', '.join(DTYPES)}")
    return table[name]


def check_sizes(kernel: str, **sizes: object) -> None:
    """Every size must be a positive int; the message names the kernel and the size."""
    for name, value in sizes.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise GpuConceptsError(f"{kernel}: {name} must be a positive integer; got {value!r}")


def tensor(shape: tuple[int, ...], dtype: str, device: str, seed: int = 0) -> torch.Tensor:
    """A tensor of uniform values in [-1, 1), written to memory (no lazily-zeroed pages)."""
    generator = torch.Generator(device=device).manual_seed(seed)
    out = torch.empty(shape, dtype=torch_dtype(dtype), device=device)
    return out.uniform_(-1.0, 1.0, generator=generator)


def run(
    workload: str,
    device: str,
    peaks: Peaks,
    fn: Callable[[], Any],
    *,
    params: Mapping[str, object],
    repeats: int,
    dtype: str,
    flush: bool | None = None,
    series: Mapping[str, tuple[float, ...]] | None = None,
) -> Measurement:
    """Time ``fn`` (no autograd, TF32 only when asked for) and wrap it in a Measurement.

    The FLOPs and bytes come from the workload's descriptor (:mod:`gpuconcepts.workloads`)
    at ``params``. ``flush=None`` flushes the caches before each repetition exactly when the
    kernel is memory-bound by its formulas (intensity below the ridge point of ``peaks``), so
    that it reads from DRAM as the roofline assumes; compute-bound kernels keep their operands
    warm. The peaks decide only that: the measurement does not keep them.
    """
    check_sizes(workload, repeats=repeats)
    flops, nbytes = describe(workload).counts(params)
    if flush is None:
        flush = flops / nbytes < peaks.ridge_point
    tf32 = dtype == "tf32"
    previous = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    try:
        with torch.inference_mode():
            raw = time_function(fn, device, repeats=repeats, flush=flush)
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = previous
    return Measurement(
        workload=workload,
        device=device,
        params={**params, "dtype": dtype},
        raw_seconds=raw,
        flops=flops,
        bytes=nbytes,
        flush=flush,
        series=dict(series or {}),
    )
