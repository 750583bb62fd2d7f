"""Shared plumbing of the kernel modules: dtypes, tensor creation, the :class:`Kernel` each
module prepares, and timing it into a Measurement."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

import torch

from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.hardware import dtype_name
from gpuconcepts.kernels.dispatch import Dispatch, count_dispatch
from gpuconcepts.measure import Measurement, Rounds
from gpuconcepts.roofline import Peaks
from gpuconcepts.workloads import workload as describe

Role = Literal["compute", "embedding"]

# The dtypes the kernels accept, and their aliases, are hardware.TORCH_DTYPES's (the one
# table); ``tf32`` is float32 storage with TF32 matmuls (CUDA).

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
    """The torch dtype of a dtype name or its alias (:func:`gpuconcepts.hardware.dtype_name`;
    ``tf32`` stores float32).

    >>> torch_dtype("bf16"), torch_dtype("float16"), torch_dtype("tf32")
    (torch.bfloat16, torch.float16, torch.float32)
    """
    table = {
        "float32": torch.float32,
        "tf32": torch.float32,
        "float16": torch.float16,
        "bfloat16": torch.bfloat16,
    }
    return table[dtype_name(name)]


@contextmanager
def precision(dtype: str) -> Iterator[None]:
    """TF32 tensor cores for matrix products and convolutions exactly when ``dtype`` is tf32,
    restored afterwards. PyTorch's own defaults differ between the two (convolutions on,
    products off), so a float32 convolution would run in TF32 and a tf32 product in FP32; a
    kernel and the ceilings that bound it must run in the same precision.

    >>> with precision("tf32"):
    ...     torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    (True, True)
    >>> with precision("float32"):
    ...     torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    (False, False)
    """
    tf32 = dtype_name(dtype) == "tf32"
    previous = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = previous


def check_sizes(kernel: str, **sizes: object) -> None:
    """Every size must be a positive int; the message names the kernel and the size."""
    for name, value in sizes.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise GpuConceptsError(f"{kernel}: {name} must be a positive integer; got {value!r}")


RANDOM_BLOCK = 2**16
"""Elements drawn at random for :func:`tensor`; a larger tensor repeats them."""


def tensor(shape: tuple[int, ...], dtype: str, device: str, seed: int = 0) -> torch.Tensor:
    """A tensor of uniform values in [-1, 1), written to memory (no lazily-zeroed pages).

    :data:`RANDOM_BLOCK` values are drawn and repeated to fill it: drawing every element of
    the tables took 11 of a quick run's 69 s on a 2-core CPU (2026-12-06, 409 tensors), and a
    timing needs values that are finite, nonzero and varied, not independent.

    >>> t = tensor((3, 2**16), "float32", "cpu")
    >>> bool((t[0] == t[2]).all()), bool((t[0, :8] != t[0, 8:16]).any())
    (True, True)
    >>> float(t.abs().max()) <= 1.0
    True
    """
    generator = torch.Generator(device=device).manual_seed(seed)
    out = torch.empty(shape, dtype=torch_dtype(dtype), device=device)
    flat = out.view(-1)
    size = min(flat.numel(), RANDOM_BLOCK)
    block = torch.empty(size, dtype=out.dtype, device=device).uniform_(
        -1.0, 1.0, generator=generator
    )
    whole = flat.numel() // size * size
    flat[:whole].view(-1, size).copy_(block.expand(whole // size, size))
    flat[whole:].copy_(block[: flat.numel() - whole])
    return out


@dataclass(frozen=True)
class Kernel:
    """A kernel ready to time: the call, what it counts, and how to time it.

    The kernel modules build their tensors and return one of these; timing is separate, so
    one kernel can be timed on its own (:meth:`time`) or in interleaved rounds beside the
    kernels it is compared with (:class:`~gpuconcepts.measure.Rounds`), and the measurement
    is the same value either way.
    """

    workload: str
    device: str
    fn: Callable[[], Any]
    params: Mapping[str, object]
    flops: int | float
    bytes: int | float
    flush: bool
    dtype: str
    series: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    access: Mapping[str, int] = field(default_factory=dict)

    @functools.cached_property
    def dispatch(self) -> Dispatch:
        """Operations one call dispatches, and those Python called
        (:func:`~gpuconcepts.kernels.dispatch.count_dispatch`), counted once, from one more
        call under the profiler."""
        with self.settings():
            return count_dispatch(self.fn)

    @contextmanager
    def settings(self) -> Iterator[None]:
        """The kernel's settings while it is timed: no autograd, and its dtype's
        :func:`precision`."""
        with precision(self.dtype), torch.inference_mode():
            yield

    def measurement(
        self,
        raw_seconds: Sequence[float],
        *,
        group: str = "",
        references: Mapping[str, tuple[float, ...]] | None = None,
    ) -> Measurement:
        """The measurement of these repetition times (``group``: the paired comparison they
        were timed in; ``references``: the roofs of its own kind timed in the same rounds, see
        :class:`~gpuconcepts.measure.Measurement`)."""
        return Measurement(
            workload=self.workload,
            device=self.device,
            params={**self.params, "dtype": self.dtype},
            raw_seconds=tuple(raw_seconds),
            flops=self.flops,
            bytes=self.bytes,
            flush=self.flush,
            series=dict(self.series),
            group=group,
            ops=self.dispatch.ops,
            calls=self.dispatch.calls,
            references=dict(references or {}),
            threads=torch.get_num_threads() if self.device == "cpu" else None,
            **self.access,
        )

    def time(self, repeats: int) -> Measurement:
        """Time this kernel alone, ``repeats`` repetitions (caches flushed first when
        :attr:`flush`): rounds of one kernel, the same timer a comparison uses."""
        check_sizes(self.workload, repeats=repeats)
        rounds = Rounds([self], self.device)
        rounds.more(repeats)
        return self.measurement(rounds.times[0])


def prepare(
    workload: str,
    device: str,
    peaks: Peaks | None,
    fn: Callable[[], Any],
    *,
    params: Mapping[str, object],
    dtype: str,
    flush: bool | None = None,
    series: Mapping[str, tuple[float, ...]] | None = None,
) -> Kernel:
    """A :class:`Kernel` of ``fn``, its counts from the workload's descriptor.

    The FLOPs and bytes come from the workload's descriptor (:mod:`gpuconcepts.workloads`)
    at ``params``. ``flush=None`` flushes the caches before each repetition exactly when the
    kernel is memory-bound by its formulas (intensity below the ridge point of ``peaks``), so
    that it reads from DRAM as the roofline assumes; compute-bound kernels keep their operands
    warm. The peaks decide only that: the measurement does not keep them.
    """
    flops, nbytes = describe(workload).counts(params)
    if flush is None:  # without peaks (measuring the peaks themselves) a kernel runs warm
        flush = peaks is not None and flops / nbytes < peaks.ridge_point
    description = describe(workload)
    return Kernel(
        workload,
        device,
        fn,
        dict(params),
        flops,
        nbytes,
        flush,
        dtype_name(dtype),  # the kernel name is what the measurement records
        dict(series or {}),
        description.access(params),
    )


def timed(make: Callable[..., Kernel]) -> Callable[..., Measurement]:
    """The measuring form of a kernel maker: the same arguments and ``repeats`` (default
    :data:`DEFAULT_REPEATS`); it makes the kernel and times it alone."""

    @functools.wraps(make)
    def measure(*args: Any, repeats: int = DEFAULT_REPEATS, **kwargs: Any) -> Measurement:
        return make(*args, **kwargs).time(repeats)

    return measure
