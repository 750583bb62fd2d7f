"""The counting pass: one forward pass with hooks on the model's leaf modules and a
``TorchFunctionMode`` that sees the functional calls between them, all inside
``FlopCounterMode``. Each call that does work becomes one :class:`Call`, in execution order,
with copies of its arguments to replay it alone; :func:`count` gives its FLOPs and bytes.

A call that only views or passes on its input (a reshape, ``nn.Identity``, eval-mode dropout)
moves nothing and is no call (``Recorder.views`` names it).
"""

# torch is imported inside functions (README, Rules: 3).
# ruff: noqa: PLC0415

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gpuconcepts.analysis.layers import (
    COMPUTE_OPS,
    KNOWN_OPS,
    Counted,
    inner_ops,
    known_function,
    known_module,
)
from gpuconcepts.analysis.report import COUNTER, TENSORS

if TYPE_CHECKING:
    import torch


def tensors_in(value: object) -> Iterator[torch.Tensor]:
    import torch

    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, list | tuple):
        for item in value:
            yield from tensors_in(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from tensors_in(item)


def _unique_bytes(tensors: Iterator[torch.Tensor]) -> int:
    """Bytes of the tensors, each counted once (self-attention passes x as q, k and v)."""
    seen: dict[tuple[object, ...], int] = {}
    for t in tensors:
        key = (t.data_ptr(), tuple(t.shape), tuple(t.stride()), t.dtype)
        seen[key] = t.numel() * t.element_size()
    return sum(seen.values())


def _clone(value: Any) -> Any:
    """A copy of a call's arguments to replay it later (in-place layers change their input)."""
    import torch

    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, list | tuple):
        items = [_clone(v) for v in value]
        return type(value)(items) if isinstance(value, list) else tuple(items)
    if isinstance(value, dict):
        return {k: _clone(v) for k, v in value.items()}
    return value


def _shapes(value: object) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(int(n) for n in t.shape) for t in tensors_in(value))


def _dtype(*groups: object) -> str:
    """The dtype a call computes in: its first floating-point tensor's, else its first tensor's."""
    tensors = [t for group in groups for t in tensors_in(group)]
    chosen = next((t for t in tensors if t.is_floating_point()), tensors[0] if tensors else None)
    return str(chosen.dtype).removeprefix("torch.") if chosen is not None else "none"


def _signature(value: object) -> object:
    """What makes two calls the same work: tensors by shape, dtype, strides and device, plain
    values by value, anything else by type (the timing of identical calls is shared).

    >>> _signature((3, "mean", [None, 2.5]))
    (3, 'mean', (None, 2.5))
    """
    import torch

    if isinstance(value, torch.Tensor):
        return ("tensor", tuple(value.shape), str(value.dtype), value.stride(), str(value.device))
    if isinstance(value, list | tuple):
        return tuple(_signature(v) for v in value)
    if isinstance(value, dict):
        return tuple((str(k), _signature(v)) for k, v in value.items())
    if value is None or isinstance(value, bool | int | float | str | torch.dtype):
        return value
    return type(value).__qualname__


def _module_signature(module: Any) -> object:
    """A module's configuration: its type, ``extra_repr``, plain attributes and weights' shapes."""
    plain = tuple(
        (k, v)
        for k, v in sorted(vars(module).items())
        if not k.startswith("_") and (v is None or isinstance(v, bool | int | float | str | tuple))
    )
    weights = tuple(
        (name, _signature(t))
        for name, t in [*module.named_parameters(), *module.named_buffers()]  # recurse
    )
    return (type(module).__module__, type(module).__qualname__, module.extra_repr(), plain, weights)


@dataclass
class Call:
    """A call seen during the counting pass, before it is timed.

    ``inner`` holds the known compute ops run inside a leaf module (``torch._grouped_mm``,
    attention) as (formula, its FLOPs, FlopCounterMode's); ``computes`` says why the call
    should have FLOPs (a weight matrix, a compute op), empty when nothing says so; ``key`` is
    what identical calls share (their timing).
    """

    path: str
    type: str
    call: int
    target: Callable[..., Any]
    module: Any
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    input_shapes: tuple[tuple[int, ...], ...]
    output_shapes: tuple[tuple[int, ...], ...]
    dtype: str
    counter_flops: int
    tensor_bytes: int
    key: object = None
    inner: list[tuple[str, int, int]] = field(default_factory=list)
    computes: str = ""


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
                self.stack.append((name, type(module).__name__, _shapes((args, kwargs))))
                if is_leaf:
                    ins = list(tensors_in((args, kwargs)))
                    self.leaves.append(
                        _Open(
                            before=int(self.counter.get_total_flops()),
                            args=_clone(args),
                            kwargs=_clone(kwargs),
                            input_bytes=_unique_bytes(iter(ins)),
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
                weights = _unique_bytes(
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
                        input_shapes=_shapes(args) + _shapes(kwargs),
                        output_shapes=_shapes(output),
                        dtype=_dtype(list(module.parameters()), output, args),
                        counter_flops=counted,
                        tensor_bytes=opened.input_bytes + weights + _unique_bytes(iter(outs)),
                        key=("module", _module_signature(module), _signature((args, kwargs))),
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
            cloned = (_clone(args), _clone(kwargs)) if _writes(name) else None
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
        cloned = cloned or (_clone(args), _clone(kwargs))
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
                input_shapes=_shapes((args, kwargs)),
                output_shapes=_shapes(output),
                dtype=_dtype(output, (args, kwargs)),
                counter_flops=flops,
                tensor_bytes=_unique_bytes(iter(ins)) + _unique_bytes(iter(outs)),
                key=("function", name, _signature((args, kwargs))),
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


def count(call: Call) -> tuple[int, str, int, str]:
    """(FLOPs, the formula that counted them, bytes, the bytes' source) of a call: a known
    layer's formulas (:mod:`gpuconcepts.analysis.layers`), else what ``FlopCounterMode``
    counted and the tensors' bytes."""
    shapes, out = call.input_shapes, call.output_shapes
    known: Counted | None = None
    if shapes and out and not any(0 in s for s in (*shapes, *out)):
        if call.module is None:
            by_formula = known_function(call.type, call.args, call.kwargs)
            known = None if by_formula is None else (*by_formula, None, TENSORS)
        else:
            known = known_module(call.module, shapes, out) or inner_ops(
                call.counter_flops, call.inner
            )
    flops, formula, traffic, source = known or (call.counter_flops, COUNTER, None, TENSORS)
    return flops, formula, call.tensor_bytes if traffic is None else traffic, source


def uncounted(call: Call) -> str:
    """The warning of a call that computes but was counted 0 FLOPs; empty when it does not."""
    if not call.computes:
        return ""
    return (
        f"{call.type} computes ({call.computes}) but was counted 0 FLOPs: no catalogue "
        "formula fits it and FlopCounterMode has no rule for the kernel it ran, so the total "
        "is short by its FLOPs"
    )


def call_name(call: Call) -> str:
    """``path`` with the call number of a reused module (as :attr:`Layer.name`)."""
    return call.path if call.call == 1 else f"{call.path} (call {call.call})"


def storages(call: Call) -> frozenset[int]:
    """The storages a replay of ``call`` reads: its copied arguments' and its module's weights'
    (what another call timed after the same cache flush must not share)."""
    weights = [] if call.module is None else [*call.module.parameters(), *call.module.buffers()]
    tensors = [*tensors_in((call.args, call.kwargs)), *weights]
    return frozenset(t.untyped_storage().data_ptr() for t in tensors)
