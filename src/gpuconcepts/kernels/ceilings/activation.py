"""The activation rate: what a product kernel's activation costs beside its products (a
diagnosis of the products' shapes, never a roof)."""

from __future__ import annotations

import statistics
from collections.abc import Callable

import torch

from gpuconcepts.kernels._common import default_dtype, tensor
from gpuconcepts.measure import time_function

ACTIVATION_ELEMENTS = 2**18
"""Elements of the activation-rate array: 1 MiB of float32, inside a CPU's caches, and long
enough that one call's floor is a few percent of its time."""


def activation_rate(device: str, *, dtype: str | None = None, repeats: int = 5) -> float:
    """Elements per second of ``torch.tanh`` over :data:`ACTIVATION_ELEMENTS` elements that a
    cache holds, at the median repetition: what a product kernel's activation costs beside
    its products (an exponential, as a softmax takes, costs about as much)."""
    with torch.inference_mode():
        times = time_function(activation_call(device, dtype), device, repeats=repeats)
    return ACTIVATION_ELEMENTS / statistics.median(times)


def activation_call(device: str, dtype: str | None = None) -> Callable[[], object]:
    """The call :func:`activation_rate` times: ``tanh`` of :data:`ACTIVATION_ELEMENTS`."""
    x = tensor((ACTIVATION_ELEMENTS,), dtype or default_dtype(device), device, seed=5)
    out = torch.empty_like(x)
    return lambda: torch.tanh(x, out=out)
