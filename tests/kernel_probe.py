"""What a kernel of gpuconcepts.kernels really does: the function it timed, its own tensors,
and the bytes of the tensors that function touches. Only test modules that have torch use it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from gpuconcepts.kernels import KERNELS
from gpuconcepts.measure import Measurement
from gpuconcepts.roofline import Peaks

PEAKS = Peaks(device="cpu", flops_per_s=1e11, bytes_per_s=1e10, dtype="float32")

Timed = Callable[[], Any]


def timed_function(
    monkeypatch: pytest.MonkeyPatch, workload: str, sizes: Mapping[str, int]
) -> tuple[Timed, Measurement]:
    """Run the workload's kernel on the CPU and hand back the function it timed (holding the
    kernel's own tensors) with its measurement."""
    del monkeypatch  # the kernel hands its function over itself now
    kernel = KERNELS[workload]("cpu", PEAKS, **sizes)
    return kernel.fn, kernel.time(1)


def closure(fn: Timed) -> dict[str, Any]:
    """The variables a timed function closes over, by name: the kernel's tensors and sizes."""
    cells = fn.__closure__ or ()
    return dict(zip(fn.__code__.co_freevars, (c.cell_contents for c in cells), strict=True))


class _Touches(TorchDispatchMode):
    """Marks each element of a tensor an op is handed, unless an earlier op made its storage."""

    def __init__(self) -> None:
        super().__init__()
        self.made: set[int] = set()
        self.marks: dict[tuple[int, torch.dtype], torch.Tensor] = {}

    def mark(self, t: torch.Tensor) -> None:
        storage = t.untyped_storage()
        if storage.data_ptr() in self.made or storage.nbytes() == 0:
            return
        key = (storage.data_ptr(), t.dtype)
        if key not in self.marks:
            self.marks[key] = torch.zeros(storage.nbytes() // t.element_size(), dtype=torch.bool)
        self.marks[key].as_strided(t.shape, t.stride(), t.storage_offset()).fill_(True)

    def __torch_dispatch__(
        self,
        func: Any,
        types: Any,
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        kwargs = kwargs or {}
        for t in tree_leaves((args, kwargs)):
            if isinstance(t, torch.Tensor):
                self.mark(t)
        out = func(*args, **kwargs)
        seen = {ptr for ptr, _ in self.marks}
        for t in tree_leaves(out):
            if isinstance(t, torch.Tensor) and t.untyped_storage().data_ptr() not in seen:
                self.made.add(t.untyped_storage().data_ptr())  # a new tensor, not a view
        return out


def touched_bytes(fn: Timed) -> dict[torch.dtype, int]:
    """Bytes, by dtype, of the elements ``fn`` reads from tensors it did not make (its inputs
    and weights) or returns (its outputs), each element once however often it is used.

    Every aten op ``fn`` runs is watched; an element counts when an op is handed a view
    covering it, so a slice ``x[t]`` taken S times covers ``x`` once, and a tensor ``fn``
    only handed to an op whole (an embedding table) counts whole.
    """
    watch = _Touches()
    with torch.inference_mode():
        with watch:
            result = fn()
        watch.made.clear()  # what fn returns is its output, wherever it was made
        for t in tree_leaves(result):
            if isinstance(t, torch.Tensor):
                watch.mark(t)
    counts: dict[torch.dtype, int] = {}
    for (_, dtype), marked in watch.marks.items():
        size = torch.empty((), dtype=dtype).element_size()
        counts[dtype] = counts.get(dtype, 0) + int(marked.sum()) * size
    return counts
