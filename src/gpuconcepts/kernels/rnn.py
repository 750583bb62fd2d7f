r"""RNN: ``nn.RNN``, the explicit step loop, and the same FLOPs as one batched GEMM.

All three do ``rnn_flops`` of work on ``rnn_bytes`` of minimal traffic; only the GEMM is
free of the step-to-step dependency h_t = tanh(W_x x_t + W_h h_{t-1} + b), which is
what limits the other two.

>>> from gpuconcepts.roofline import Peaks
>>> peaks = Peaks(device="cpu", flops_per_s=1e11, bytes_per_s=1e10, dtype="float32")
>>> ms = [f("cpu", peaks, B=2, S=3, d_in=4, d_h=8, repeats=2)
...       for f in (rnn_module, step_loop, hoisted_loop, batched_gemm)]
>>> [(m.workload, m.flops) for m in ms]
[('rnn-module', 1152), ('rnn-loop', 1152), ('rnn-hoisted', 1152), ('rnn-gemm', 1152)]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from gpuconcepts.kernels._common import Kernel, check_sizes, default_dtype, prepare, tensor, timed
from gpuconcepts.roofline import Peaks


def _checked(kernel: str, **sizes: int) -> dict[str, int]:
    """The sizes B, S, d_in, d_h every RNN kernel takes, checked under the kernel's name."""
    check_sizes(f"rnn.{kernel}", **sizes)
    return sizes


def _kernel(
    workload: str,
    device: str,
    peaks: Peaks,
    fn: Callable[[], Any],
    x: torch.Tensor,
    dtype: str,
    sizes: dict[str, int],
) -> Kernel:
    """The RNN kernels' parameters: their sizes, and ``s`` from ``x``."""
    params = {**sizes, "s": x.element_size()}
    return prepare(workload, device, peaks, fn, params=params, dtype=dtype)


def _recurrence(
    d_in: int, d_h: int, dtype: str, device: str
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The step loops' weights W_x, W_h and bias b (seeds fixed, so every kernel gets the
    same ones)."""
    w_x = tensor((d_in, d_h), dtype, device, seed=2)
    w_h = tensor((d_h, d_h), dtype, device, seed=3)
    bias = tensor((d_h,), dtype, device, seed=4)
    return w_x, w_h, bias


def _rnn(d_in: int, d_h: int, x: torch.Tensor) -> torch.nn.RNN:
    """An ``nn.RNN`` on x's device and dtype, its weights in one chunk as cuDNN wants them."""
    module = torch.nn.RNN(d_in, d_h, batch_first=True, device=x.device, dtype=x.dtype)
    module.flatten_parameters()  # without it cuDNN warns and copies the weights every call
    return module


def rnn_module_kernel(
    device: str, peaks: Peaks, *, B: int, S: int, d_in: int, d_h: int, dtype: str | None = None
) -> Kernel:
    """Time ``nn.RNN(d_in, d_h, nonlinearity="tanh", batch_first=True)`` over S steps.

    With the default dtype, a CUDA RNN runs in float16 rather than bfloat16: the same
    Tensor Core peak, and the dtype cuDNN can pack into one weight buffer (with bfloat16,
    ``flatten_parameters`` does nothing and every call re-packs the weights, which would
    time the packing rather than the recurrence). ``params["dtype"]`` says which one ran.
    """
    sizes = _checked("rnn_module", B=B, S=S, d_in=d_in, d_h=d_h)
    chosen = dtype or default_dtype(device)
    if dtype is None and chosen == "bfloat16":
        chosen = "float16"
    x = tensor((B, S, d_in), chosen, device, seed=1)
    module = _rnn(d_in, d_h, x)
    dtype = chosen
    return _kernel("rnn-module", device, peaks, lambda: module(x), x, dtype, sizes)


rnn_module = timed(rnn_module_kernel)


def step_loop_kernel(
    device: str, peaks: Peaks, *, B: int, S: int, d_in: int, d_h: int, dtype: str | None = None
) -> Kernel:
    """Time the explicit loop h_t = tanh(x_t W_x + h_{t-1} W_h + b), one step after another."""
    sizes = _checked("step_loop", B=B, S=S, d_in=d_in, d_h=d_h)
    dtype = dtype or default_dtype(device)
    x = tensor((S, B, d_in), dtype, device, seed=1)
    w_x, w_h, bias = _recurrence(d_in, d_h, dtype, device)
    out = torch.empty((S, B, d_h), dtype=x.dtype, device=device)

    def fn() -> torch.Tensor:
        h = torch.zeros((B, d_h), dtype=x.dtype, device=device)
        for t in range(S):
            h = torch.tanh(torch.addmm(torch.addmm(bias, x[t], w_x), h, w_h))
            out[t] = h
        return out

    return _kernel("rnn-loop", device, peaks, fn, x, dtype, sizes)


step_loop = timed(step_loop_kernel)


def hoisted_loop_kernel(
    device: str, peaks: Peaks, *, B: int, S: int, d_in: int, d_h: int, dtype: str | None = None
) -> Kernel:
    """The step loop with the input projection hoisted out: x_t W_x for every t is one GEMM
    up front (it depends on no hidden state), and only h_{t-1} W_h stays on the critical path.

    This is what cuDNN and careful implementations do; the same ``rnn_flops`` in all.
    """
    sizes = _checked("hoisted_loop", B=B, S=S, d_in=d_in, d_h=d_h)
    dtype = dtype or default_dtype(device)
    x = tensor((S * B, d_in), dtype, device, seed=1)
    w_x, w_h, bias = _recurrence(d_in, d_h, dtype, device)
    out = torch.empty((S, B, d_h), dtype=x.dtype, device=device)

    def fn() -> torch.Tensor:
        projected = torch.addmm(bias, x, w_x).view(S, B, d_h)  # every step's input at once
        h = torch.zeros((B, d_h), dtype=x.dtype, device=device)
        for t in range(S):
            h = torch.tanh(torch.addmm(projected[t], h, w_h))  # the dependent part only
            out[t] = h
        return out

    return _kernel("rnn-hoisted", device, peaks, fn, x, dtype, sizes)


hoisted_loop = timed(hoisted_loop_kernel)


def batched_gemm_kernel(
    device: str, peaks: Peaks, *, B: int, S: int, d_in: int, d_h: int, dtype: str | None = None
) -> Kernel:
    """The RNN's FLOPs as one GEMM: [x_t, h_{t-1}] for all B·S steps at once times [W_x; W_h].

    The previous hidden states are given up front (as if the recurrence were known), so
    nothing waits: this is the speed the same arithmetic reaches without the dependency.
    """
    sizes = _checked("batched_gemm", B=B, S=S, d_in=d_in, d_h=d_h)
    dtype = dtype or default_dtype(device)
    z = tensor((B * S, d_in + d_h), dtype, device, seed=1)
    w = tensor((d_in + d_h, d_h), dtype, device, seed=2)
    bias = tensor((d_h,), dtype, device, seed=4)

    def fn() -> torch.Tensor:
        return torch.tanh(torch.addmm(bias, z, w))

    return _kernel("rnn-gemm", device, peaks, fn, z, dtype, sizes)


batched_gemm = timed(batched_gemm_kernel)
