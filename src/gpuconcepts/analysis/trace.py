"""The counting pass: one forward pass with hooks on the model's leaf modules and a
``TorchFunctionMode`` that sees the functional calls between them, all inside
``FlopCounterMode``. Each call that does work becomes one
:class:`~gpuconcepts.analysis.calls.Call`, in execution order, with copies of its arguments to
replay it alone; :func:`~gpuconcepts.analysis.calls.count` gives its FLOPs and bytes.

A call that only views or passes on its input (a reshape, ``nn.Identity``, eval-mode dropout)
moves nothing and is no call (``Recorder.views`` names it). A recorded call and what is read
from it are in :mod:`~gpuconcepts.analysis.calls`.
"""

# torch is imported inside functions (README, Rules: 3).
# ruff: noqa: PLC0415

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gpuconcepts.analysis.calls import (
    Call,
    compute_dtype,
    module_signature,
    replay_copy,
    shapes_of,
    signature,
    tensors_in,
    unique_bytes,
)
from gpuconcepts.analysis.layers import COMPUTE_OPS, KNOWN_OPS, known_function

if TYPE_CHECKING:
    import torch


@dataclass
class _Open:
    """A leaf module call under way: what its pre-hook saw, and the compute ops run inside."""

    before: int
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    input_bytes: int
    storages: set[int]
    versions: list[int] | None
    inner: list[tuple[str, int, int]] = field(default_factory=list)
    ops: list[str] = field(default_factory=list)


def _function_name(func: Callable[..., Any]) -> str:
    """How a call reads in the report: ``F.relu``, ``torch.matmul``, ``Tensor.add``."""
    try:
        return _NAMES[func]
    except (KeyError, TypeError):  # TypeError: an unhashable callable, named each time
        pass
    import torch
    import torch.nn.functional as F

    name = getattr(func, "__name__", repr(func))
    if getattr(F, name, None) is func:
        named = f"F.{name}"
    elif getattr(torch, name, None) is func:
        named = f"torch.{name}"
    elif getattr(func, "__qualname__", "").startswith(("TensorBase.", "Tensor.")):
        named = f"Tensor.{name}"
    else:
        named = str(name)
    with contextlib.suppress(TypeError):
        _NAMES[func] = named
    return named


_NAMES: dict[Callable[..., Any], str] = {}
"""Names already worked out: a forward pass makes thousands of calls of a few dozen functions."""


@contextlib.contextmanager
def _unobserved() -> Iterator[None]:
    """The recorder's own bookkeeping, out of sight of both modes: its tensor queries and
    copies are neither recorded nor counted, and pay no Python dispatch of theirs."""
    import torch
    from torch.utils._python_dispatch import _disable_current_modes

    with torch._C.DisableTorchFunction(), _disable_current_modes():
        yield


def _writes(name: str) -> bool:
    """An in-place tensor method (``add_``, ``__iadd__``) writes its input: traffic, no new tensor.

    >>> [_writes(n) for n in ("Tensor.add_", "Tensor.__iadd__", "Tensor.__iter__", "F.relu")]
    [True, True, False, False]
    """
    short = name.rsplit(".", 1)[-1]
    in_place_operators = {"add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul"}
    in_place_operators |= {"and", "or", "xor", "lshift", "rshift"}
    if short.startswith("__i") and short.endswith("__"):
        return short[3:-2] in in_place_operators
    return short.endswith("_") and not short.startswith("_")


def _versions(tensors: Sequence[torch.Tensor]) -> list[int] | None:
    """The tensors' version counters (an in-place write bumps them); None where not kept."""
    try:
        return [t._version for t in tensors]
    except RuntimeError:  # inference tensors keep no version counter
        return None


def _weight_matrix(module: Any) -> str:
    """Why a module computes by its weights: a weight of two or more dimensions (a matrix, a
    filter bank), except the tables that embeddings gather from; empty otherwise."""
    import torch

    if isinstance(module, torch.nn.Embedding | torch.nn.EmbeddingBag):
        return ""
    for name, weight in module.named_parameters():
        if weight.dim() >= 2:
            return f"its {name} is {'×'.join(map(str, weight.shape))}"
    return ""


class Recorder:
    """Hooks on the model's modules plus a TorchFunctionMode: records every counted call."""

    def __init__(self, model: Any, counter: Any, root_name: str) -> None:
        import torch

        self.counter = counter
        self.calls: list[Call] = []
        self.views: list[str] = []
        self.stack: list[tuple[str, str, tuple[tuple[int, ...], ...]]] = []
        self.leaves: list[_Open] = []
        self.current: str | None = None
        self.handles: list[Any] = []
        self.times_called: dict[int, int] = {}
        leaves = leaf_paths(model)
        for path, module in model.named_modules(remove_duplicate=True):
            if any(_inside(path, leaf) for leaf in leaves):
                continue
            name = path or root_name
            is_leaf = path in leaves
            self.handles.append(
                module.register_forward_pre_hook(self._pre(name, is_leaf), with_kwargs=True)
            )
            self.handles.append(
                module.register_forward_hook(self._post(name, is_leaf), with_kwargs=True)
            )
        recorder = self

        class Mode(torch.overrides.TorchFunctionMode):
            def __torch_function__(
                self,
                func: Callable[..., Any],
                types: Any,
                args: tuple[Any, ...] = (),
                kwargs: dict[str, Any] | None = None,
            ) -> Any:
                return recorder.function(func, args, kwargs or {})

        self.mode = Mode()

    def _pre(self, name: str, is_leaf: bool) -> Callable[..., None]:
        def hook(module: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
            with _unobserved():
                self.stack.append((name, type(module).__name__, shapes_of((args, kwargs))))
                if is_leaf:
                    ins = list(tensors_in((args, kwargs)))
                    self.leaves.append(
                        _Open(
                            before=int(self.counter.get_total_flops()),
                            args=replay_copy(args),
                            kwargs=replay_copy(kwargs),
                            input_bytes=unique_bytes(iter(ins)),
                            storages={t.untyped_storage().data_ptr() for t in ins},
                            versions=_versions(ins),
                        )
                    )

        return hook

    def _post(self, name: str, is_leaf: bool) -> Callable[..., None]:
        def hook(module: Any, args: tuple[Any, ...], kwargs: dict[str, Any], output: Any) -> None:
            with _unobserved():
                self.stack.pop()
                if not is_leaf:
                    return
                opened = self.leaves.pop()
                number = self.times_called.get(id(module), 0) + 1
                self.times_called[id(module)] = number
                counted = int(self.counter.get_total_flops()) - opened.before
                outs = list(tensors_in(output))
                ins = list(tensors_in((args, kwargs)))
                if (
                    counted == 0
                    and outs
                    and not any(True for _ in module.parameters())
                    and all(t.untyped_storage().data_ptr() in opened.storages for t in outs)
                    and opened.versions is not None
                    and _versions(ins) == opened.versions
                ):
                    # a reshape, an identity, eval-mode dropout: it hands on what it was given
                    self.views.append(f"{name} ({type(module).__name__})")
                    return
                weights = unique_bytes(
                    iter([*module.parameters(), *module.buffers()])  # recurse: MHA's out_proj
                )
                computes = _weight_matrix(module) or next(
                    (f"it calls {op}" for op in opened.ops if op in COMPUTE_OPS), ""
                )
                self.calls.append(
                    Call(
                        path=name,
                        type=type(module).__name__,
                        call=number,
                        target=module,
                        module=module,
                        args=opened.args,
                        kwargs=opened.kwargs,
                        input_shapes=shapes_of(args) + shapes_of(kwargs),
                        output_shapes=shapes_of(output),
                        dtype=compute_dtype(list(module.parameters()), output, args),
                        counter_flops=counted,
                        tensor_bytes=opened.input_bytes + weights + unique_bytes(iter(outs)),
                        key=("module", module_signature(module), signature((args, kwargs))),
                        inner=opened.inner,
                        computes=computes,
                    )
                )

        return hook

    def function(
        self, func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        """Run a functional call; record it when it ran outside any leaf and did some work.
        Inside a leaf, a known compute op is counted by its formula for the leaf's row."""
        if self.leaves:
            return self._inside_leaf(func, args, kwargs)
        name = _function_name(func)
        self.current = name
        before = int(self.counter.get_total_flops())
        # only an in-place call changes its arguments; any other is copied once it is recorded
        with _unobserved():
            cloned = (replay_copy(args), replay_copy(kwargs)) if _writes(name) else None
        output = func(*args, **kwargs)
        self.current = None
        with _unobserved():
            return self._record(func, name, (args, kwargs), output, before, cloned)

    def _record(
        self,
        func: Callable[..., Any],
        name: str,
        given: tuple[tuple[Any, ...], dict[str, Any]],
        output: Any,
        before: int,
        cloned: tuple[Any, Any] | None,
    ) -> Any:
        """Record a functional call that ran outside any leaf, unless it did no work."""
        args, kwargs = given
        flops = int(self.counter.get_total_flops()) - before
        ins = list(tensors_in((args, kwargs)))
        storages = {t.untyped_storage().data_ptr() for t in ins}
        outs = list(tensors_in(output))
        new = [t for t in outs if t.untyped_storage().data_ptr() not in storages]
        if flops == 0 and not new and not (outs and _writes(name)):
            return output  # a view, a shape query: no arithmetic, no traffic
        cloned = cloned or (replay_copy(args), replay_copy(kwargs))
        parent = self.stack[-1][0] if self.stack else "(top level)"
        self.calls.append(
            Call(
                path=parent,
                type=name,
                call=1,
                target=func,
                module=None,
                args=cloned[0],
                kwargs=cloned[1],
                input_shapes=shapes_of((args, kwargs)),
                output_shapes=shapes_of(output),
                dtype=compute_dtype(output, (args, kwargs)),
                counter_flops=flops,
                tensor_bytes=unique_bytes(iter(ins)) + unique_bytes(iter(outs)),
                key=("function", name, signature((args, kwargs))),
                computes=f"it is {name}" if name in COMPUTE_OPS else "",
            )
        )
        return output

    def _inside_leaf(
        self, func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        name = _function_name(func)
        opened = self.leaves[-1]
        if name in COMPUTE_OPS:
            opened.ops.append(name)
        if name not in KNOWN_OPS:
            return func(*args, **kwargs)
        before = int(self.counter.get_total_flops())
        output = func(*args, **kwargs)
        known = known_function(name, args, kwargs)
        if known is not None:
            flops, source = known
            opened.inner.append((source, flops, int(self.counter.get_total_flops()) - before))
        return output

    def where(self) -> str:
        """The innermost module (and functional call) running now, for an error message."""
        if not self.stack:
            return "the model"
        name, kind, shapes = self.stack[-1]
        shown = ", ".join("×".join(map(str, s)) or "scalar" for s in shapes) or "no tensors"
        call = f" (in {self.current})" if self.current else ""
        return f"layer {name!r} ({kind}){call}, given inputs of shape {shown},"

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()
        self.handles.clear()


def leaf_paths(model: Any) -> set[str]:
    """Modules without children, and known types that are counted whole (attention)."""
    import torch

    leaves = set()
    for path, module in model.named_modules():
        if isinstance(module, torch.nn.MultiheadAttention) or not any(module.children()):
            leaves.add(path)
    # a known type's own submodules (MultiheadAttention.out_proj) are inside it, not beside it
    return {p for p in leaves if not any(_inside(p, q) for q in leaves)}


def _inside(path: str, outer: str) -> bool:
    """True when module ``path`` lies within module ``outer`` ("" is the model itself).

    >>> _inside("attn.out_proj", "attn"), _inside("attn", "attn"), _inside("fc", "")
    (True, False, True)
    """
    return path != outer and (outer == "" or path.startswith(f"{outer}."))
