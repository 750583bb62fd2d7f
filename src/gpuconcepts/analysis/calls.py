"""A call the counting pass recorded (:class:`Call`), and what is read from it: its FLOPs and
bytes (:func:`count`), its warning, its name, the storages a replay reads; with the helpers
that read a call's values: the tensors in them, their bytes counted once, their shapes and
dtype, a copy to replay, and the signature identical calls share."""

# torch is imported inside functions (README, Rules: 3).
# ruff: noqa: PLC0415

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gpuconcepts.analysis.layers import Counted, inner_ops, known_function, known_module
from gpuconcepts.analysis.report import COUNTER, TENSORS

if TYPE_CHECKING:
    import torch


def tensors_in(value: object) -> Iterator[torch.Tensor]:
    """Every tensor in a value, through its lists, tuples and dicts, in order."""
    import torch

    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, list | tuple):
        for item in value:
            yield from tensors_in(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from tensors_in(item)


def unique_bytes(tensors: Iterator[torch.Tensor]) -> int:
    """Bytes of the tensors, each counted once (self-attention passes x as q, k and v)."""
    seen: dict[tuple[object, ...], int] = {}
    for t in tensors:
        key = (t.data_ptr(), tuple(t.shape), tuple(t.stride()), t.dtype)
        seen[key] = t.numel() * t.element_size()
    return sum(seen.values())


def replay_copy(value: Any) -> Any:
    """A copy of a call's arguments to replay it later (in-place layers change their input)."""
    import torch

    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, list | tuple):
        items = [replay_copy(v) for v in value]
        return type(value)(items) if isinstance(value, list) else tuple(items)
    if isinstance(value, dict):
        return {k: replay_copy(v) for k, v in value.items()}
    return value


def shapes_of(value: object) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(int(n) for n in t.shape) for t in tensors_in(value))


def compute_dtype(*groups: object) -> str:
    """The dtype a call computes in: its first floating-point tensor's, else its first tensor's."""
    tensors = [t for group in groups for t in tensors_in(group)]
    chosen = next((t for t in tensors if t.is_floating_point()), tensors[0] if tensors else None)
    return str(chosen.dtype).removeprefix("torch.") if chosen is not None else "none"


def signature(value: object) -> object:
    """What makes two calls the same work: tensors by shape, dtype, strides and device, plain
    values by value, anything else by type (the timing of identical calls is shared).

    >>> signature((3, "mean", [None, 2.5]))
    (3, 'mean', (None, 2.5))
    """
    import torch

    if isinstance(value, torch.Tensor):
        return ("tensor", tuple(value.shape), str(value.dtype), value.stride(), str(value.device))
    if isinstance(value, list | tuple):
        return tuple(signature(v) for v in value)
    if isinstance(value, dict):
        return tuple((str(k), signature(v)) for k, v in value.items())
    if value is None or isinstance(value, bool | int | float | str | torch.dtype):
        return value
    return type(value).__qualname__


def module_signature(module: Any) -> object:
    """A module's configuration: its type, ``extra_repr``, plain attributes and weights' shapes."""
    plain = tuple(
        (k, v)
        for k, v in sorted(vars(module).items())
        if not k.startswith("_") and (v is None or isinstance(v, bool | int | float | str | tuple))
    )
    weights = tuple(
        (name, signature(t))
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
