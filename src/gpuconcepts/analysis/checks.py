"""The checks :func:`~gpuconcepts.analysis.analyze` makes of its arguments before it runs
anything, each failing with one line that names the argument and the rule."""

# torch is imported inside functions (README, Rules: 3).
# ruff: noqa: PLC0415

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gpuconcepts.analysis.calls import tensors_in
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.hardware import dtype_name
from gpuconcepts.roofline import Peaks
from gpuconcepts.units import plain_number

MAX_REPEATS = 1000
"""The most timed repetitions of each call: a thousand times a forward pass is already
minutes on a large model, and the spread of the times stops shrinking long before."""


def check_repeats(repeats: object, what: str) -> int:
    """``repeats``, or a one-line error naming ``what`` when it is not a whole number from 1
    to :data:`MAX_REPEATS`.

    >>> check_repeats(10**9, "--repeats")
    Traceback (most recent call last):
    ...
    gpuconcepts.errors.GpuConceptsError: --repeats must be a whole number from 1 to 1,000 (each call is timed that many times); got 1000000000
    """
    if type(repeats) is not int or not 1 <= repeats <= MAX_REPEATS:
        huge = type(repeats) is int and repeats.bit_length() > 64  # past what repr() writes
        raise GpuConceptsError(
            f"{what} must be a whole number from 1 to {plain_number(MAX_REPEATS)} (each call "
            f"is timed that many times); got {'more than 2**64' if huge else f'{repeats!r:.40}'}"
        )
    return repeats


def check_arguments(
    model: Any,
    args: Sequence[Any],
    kwargs: Mapping[str, Any],
    device: object,
    dtype: object,
    peaks: object,
    repeats: object,
) -> str:
    """The model's name, once every argument of :func:`analyze` is one it can use."""
    import torch

    if not isinstance(model, torch.nn.Module):
        raise GpuConceptsError(
            f"analyze: model must be a torch.nn.Module; got {type(model).__name__}"
        )
    root = type(model).__name__
    if isinstance(model, torch.jit.ScriptModule):
        raise GpuConceptsError(
            f"analyze: {root} is a TorchScript module, whose layers hooks cannot see; "
            "pass the Python module it was scripted or traced from"
        )
    if not args and not kwargs:
        raise GpuConceptsError("analyze: give at least one example input (the forward's arguments)")
    check_repeats(repeats, "analyze: repeats")
    if device not in ("auto", "cpu", "cuda"):
        raise GpuConceptsError(f"analyze: device must be 'auto', 'cpu' or 'cuda'; got {device!r}")
    if dtype is not None and not isinstance(dtype, str):
        raise GpuConceptsError(f"analyze: dtype must be a name such as 'float32'; got {dtype!r}")
    if dtype is not None and dtype_name(dtype) == "tf32":
        raise GpuConceptsError(
            "analyze: dtype 'tf32' is float32 storage: run in float32, and PyTorch's TF32 "
            "settings decide which calls use TF32 (the GPU predictions follow them)"
        )
    if peaks is not None and not isinstance(peaks, Peaks):
        raise GpuConceptsError(
            "analyze: peaks must be a gpuconcepts.roofline.Peaks (a saved run's run.peaks); "
            f"got {type(peaks).__name__}"
        )
    if any(t.is_meta for t in [*model.parameters(), *model.buffers()]):
        raise GpuConceptsError(
            f"analyze: {root} has its weights on the meta device, with no data to run; "
            "build it on a real device (or model.to_empty(device='cpu') and load the weights)"
        )
    for where, value in [*enumerate(args, start=1), *kwargs.items()]:
        if any(t.is_meta for t in tensors_in(value)):
            raise GpuConceptsError(
                f"analyze: input {where} is a meta tensor, with no data to run; give real values"
            )
    return root


def check_launch_floors(launch_floors: Sequence[tuple[str, float]]) -> None:
    """A one-line error unless every launch floor is a (label, seconds) pair, its seconds
    positive and finite."""
    for floor in launch_floors:
        pair: object = floor  # the caller's, whatever the annotation says
        if not (
            isinstance(pair, tuple)
            and len(pair) == 2
            and isinstance(pair[0], str)
            and isinstance(pair[1], int | float)
            and 0 < pair[1] < float("inf")
        ):
            raise GpuConceptsError(
                "analyze: launch_floors must be (label, seconds) pairs, seconds positive and "
                f"finite; got {floor!r}"
            )
