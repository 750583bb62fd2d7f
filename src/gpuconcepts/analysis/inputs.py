"""The forward pass's example inputs from ``--input`` specs: shapes, dtypes, value ranges,
keywords; integer inputs drawn over the rows of the embedding that reads them."""

# torch is imported inside functions (README, Rules: 3).
# ruff: noqa: PLC0415

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gpuconcepts.analysis.failures import is_out_of_memory, out_of_memory_message
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.units import binary_bytes, with_article

INPUT_DTYPES = ("float32", "float64", "float16", "bfloat16", "int64", "int32", "bool")
"""Element types an ``--input`` may name after its shape."""

_SHAPE = re.compile(r"^\d+(?:x\d+)*$")
NAME = re.compile(r"^[A-Za-z_]\w*$")
_RANGE = re.compile(r"^(-?\d{1,30}(?:\.\d{1,30})?)\.\.(-?\d{1,30}(?:\.\d{1,30})?)$")
_OWN_KEYWORDS = ("device", "dtype", "peaks", "repeats", "progress", "launch_floors")
INPUT_RULE = (
    "an input is [NAME=]SHAPE[:DTYPE[:LOW..HIGH]] or [NAME=]ones:SHAPE[:DTYPE], such as "
    "8x3x224x224, 64x26:int64:0..999 or attention_mask=ones:1x128"
)


_RANGE_LIMITS: dict[str, tuple[int, int]] = {
    "int64": (-(2**63), 2**63 - 2),  # HIGH + 1, the end torch.randint excludes, fits too
    "int32": (-(2**31), 2**31 - 2),
    "bool": (0, 1),
    "": (-(2**63), 2**63),  # floating point: far beyond any input, and a float holds it
}
"""The ranges ``LOW..HIGH`` may span, by element type (``""``: floating point)."""


HELD_COPIES = 4
"""How many times over the analysis holds its inputs at least: the inputs, the copy of them
that replays the first call, that call's output (as large for most layers) and the output of
its replay. 640 MB into one Linear layer took 2.3 GB; inputs above a quarter of the free
memory are refused before anything is allocated."""


@dataclass(frozen=True)
class InputSpec:
    """One ``--input``: the keyword it is passed as (None: positional), its shape and dtype
    (None: the model's floating-point type), the range its values are drawn from (both ends
    included for integers), or all ones."""

    name: str | None
    shape: tuple[int, ...]
    dtype: str | None = None
    low: float | None = None
    high: float | None = None
    ones: bool = False


def parse_input(text: str) -> InputSpec:
    """An ``--input`` value (:data:`INPUT_RULE`).

    >>> parse_input("8x3x224x224")
    InputSpec(name=None, shape=(8, 3, 224, 224), dtype=None, low=None, high=None, ones=False)
    >>> parse_input("input_ids=1x128:int64:0..30521")
    InputSpec(name='input_ids', shape=(1, 128), dtype='int64', low=0, high=30521, ones=False)
    >>> parse_input("attention_mask=ones:1x128")
    InputSpec(name='attention_mask', shape=(1, 128), dtype=None, low=None, high=None, ones=True)
    >>> parse_input("8x-3")
    Traceback (most recent call last):
    ...
    gpuconcepts.errors.GpuConceptsError: --input '8x-3': a shape is positive integers joined by x; an input is [NAME=]SHAPE[:DTYPE[:LOW..HIGH]] or [NAME=]ones:SHAPE[:DTYPE], such as 8x3x224x224, 64x26:int64:0..999 or attention_mask=ones:1x128
    """
    given = text.strip()
    name, eq, rest = given.partition("=")
    if not eq:
        name, rest = "", given
    elif not NAME.match(name):
        raise GpuConceptsError(
            f"--input {text!r}: {name!r} is not a keyword name (letters, digits and _)"
        )
    elif name in _OWN_KEYWORDS:
        raise GpuConceptsError(
            f"--input {text!r}: {name} is one of analyze's own options, not the model's input"
        )
    parts = rest.split(":")
    ones = parts[0] == "ones"
    parts = parts[1:] if ones else parts
    if len(parts) > (2 if ones else 3):
        raise GpuConceptsError(f"--input {text!r}: too many ':' parts; {INPUT_RULE}")
    if not _SHAPE.match(parts[0]) or 0 in (shape := tuple(int(n) for n in parts[0].split("x"))):
        raise GpuConceptsError(
            f"--input {text!r}: a shape is positive integers joined by x; {INPUT_RULE}"
        )
    dtype = parts[1] if len(parts) > 1 else None
    if dtype is not None and dtype not in INPUT_DTYPES:
        raise GpuConceptsError(
            f"--input {text!r}: element type {dtype!r} is not one of {', '.join(INPUT_DTYPES)}"
        )
    low = high = None
    if len(parts) > 2:
        found = _RANGE.match(parts[2])
        if found is None:
            raise GpuConceptsError(
                f"--input {text!r}: a range is LOW..HIGH, two numbers such as 0..999"
            )
        low, high = (float(v) if "." in v else int(v) for v in found.groups())
        if low > high:
            raise GpuConceptsError(f"--input {text!r}: the range's LOW is above its HIGH")
        if dtype in ("int64", "int32", "bool") and not (type(low) is int and type(high) is int):
            raise GpuConceptsError(f"--input {text!r}: an {dtype} range is whole numbers")
        least, most = _RANGE_LIMITS.get(dtype or "", _RANGE_LIMITS[""])
        if not least <= low <= high <= most:
            raise GpuConceptsError(
                f"--input {text!r}: {with_article(dtype or 'floating-point')} range lies "
                f"within {least}..{most}"
            )
    return InputSpec(name or None, shape, dtype, low, high, ones)


def make_inputs(
    model: Any, specs: Sequence[InputSpec], device: str, dtype: str | None
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Example inputs for ``model`` from ``--input`` specs: positional ones, then keywords.

    Floating-point inputs are standard normal in ``dtype`` (else the model's). Integer inputs
    index the embedding that reads them: one probe forward pass finds, for each, the table
    it is looked up in, and its values are uniform over that table's rows; an integer input
    that no embedding reads (a mask) is all ones. A ``LOW..HIGH`` range or ``ones`` overrides
    both. Raises before allocating when the inputs would not fit in the free memory.
    """
    import torch

    from gpuconcepts.kernels import torch_dtype

    floating = next((p.dtype for p in model.parameters() if p.is_floating_point()), torch.float32)
    if dtype is not None:
        floating = torch_dtype(dtype)
    kinds = [getattr(torch, s.dtype) if s.dtype else floating for s in specs]
    _check_fits(specs, kinds, device)
    generator = torch.Generator(device=device).manual_seed(0)

    def draw(spec: InputSpec, kind: torch.dtype, rows: int | None) -> torch.Tensor:
        if spec.ones or (spec.low is None and not kind.is_floating_point and rows is None):
            return torch.ones(spec.shape, dtype=kind, device=device)
        if kind.is_floating_point:
            values = torch.randn(spec.shape, dtype=kind, device=device, generator=generator)
            if spec.low is None or spec.high is None:
                return values
            uniform = torch.rand(spec.shape, device=device, generator=generator)
            return (spec.low + (spec.high - spec.low) * uniform).to(kind)
        low, high = (0, rows or 2) if spec.low is None else (int(spec.low), int(spec.high or 0) + 1)
        return torch.randint(low, high, spec.shape, dtype=kind, device=device, generator=generator)

    tables = [
        m.num_embeddings
        for m in model.modules()
        if isinstance(m, torch.nn.Embedding | torch.nn.EmbeddingBag)
    ]
    # first guess: any table can take indices below the smallest one
    rows: dict[int, int | None] = {i: min(tables, default=None) for i in range(len(specs))}
    try:
        tensors = [draw(s, k, rows[i]) for i, (s, k) in enumerate(zip(specs, kinds, strict=True))]
    except RuntimeError as error:  # the memory went to something else meanwhile
        if is_out_of_memory(error):
            raise GpuConceptsError(out_of_memory_message(error, "the inputs", device)) from None
        raise
    if tables and any(not k.is_floating_point and s.low is None and not s.ones
                      for s, k in zip(specs, kinds, strict=True)):  # fmt: skip
        rows = dict.fromkeys(range(len(specs))) | _embedding_rows(model, specs, tensors)
        tensors = [draw(s, k, rows[i]) for i, (s, k) in enumerate(zip(specs, kinds, strict=True))]
    args = tuple(t for s, t in zip(specs, tensors, strict=True) if s.name is None)
    return args, {s.name: t for s, t in zip(specs, tensors, strict=True) if s.name is not None}


def _check_fits(specs: Sequence[InputSpec], kinds: Sequence[Any], device: str) -> None:
    """A one-line error, before anything is allocated, when the inputs of ``specs`` (of dtypes
    ``kinds``) held :data:`HELD_COPIES` times over would not fit in ``device``'s free memory."""
    import torch

    from gpuconcepts.measure import free_memory_bytes

    needed = sum(
        math.prod(s.shape) * torch.empty((), dtype=k).element_size()
        for s, k in zip(specs, kinds, strict=True)
    )
    free = free_memory_bytes(device)
    if needed * HELD_COPIES > free:
        raise GpuConceptsError(
            f"out of memory for the inputs: they need {binary_bytes(needed)}, and analyze holds "
            f"them about {HELD_COPIES} times over (the inputs, the copy that replays the call "
            f"that reads them, its output and a replay's), but {binary_bytes(free)} is free "
            f"on {device}"
        )


def _embedding_rows(
    model: Any, specs: Sequence[InputSpec], tensors: Sequence[Any]
) -> dict[int, int]:
    """For each input an embedding reads directly (its values or a view of them) in one
    forward pass, the rows of the smallest such table, by the input's position."""
    import torch

    storages = {t.untyped_storage().data_ptr(): i for i, t in enumerate(tensors)}
    found: dict[int, int] = {}

    def seen(module: Any, args: tuple[Any, ...]) -> None:
        if args and isinstance(args[0], torch.Tensor):
            i = storages.get(args[0].untyped_storage().data_ptr())
            if i is not None:
                found[i] = min(found.get(i, module.num_embeddings), module.num_embeddings)

    embeddings = (torch.nn.Embedding, torch.nn.EmbeddingBag)
    handles = [
        m.register_forward_pre_hook(seen) for m in model.modules() if isinstance(m, embeddings)
    ]
    place = next((p.device for p in model.parameters()), torch.device("cpu"))
    moved = [t.to(place) for t in tensors]
    storages = {t.untyped_storage().data_ptr(): i for i, t in enumerate(moved)}
    args = [t for s, t in zip(specs, moved, strict=True) if s.name is None]
    kwargs = {s.name: t for s, t in zip(specs, moved, strict=True) if s.name is not None}
    try:
        with torch.no_grad():
            model(*args, **kwargs)
    except Exception:  # noqa: BLE001, S110 - the analysis runs it again and names what fails
        pass
    finally:
        for handle in handles:
            handle.remove()
    return found
