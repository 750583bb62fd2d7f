"""The calls on each datasheet GPU: the roofline with a launch floor per call, float32
judged against TF32 where PyTorch's settings send it there, and what was assumed, in words."""

# torch is imported inside functions (README, Rules: 3).
# ruff: noqa: PLC0415

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from gpuconcepts import formulas
from gpuconcepts.analysis.report import GpuPrediction, Layer
from gpuconcepts.roofline import classify
from gpuconcepts.units import si

if TYPE_CHECKING:
    from gpuconcepts.hardware import GPU

TF32_DEFAULTS = {"matmul": False, "conv": True}
"""PyTorch's defaults for float32 on TF32 tensor cores: ``torch.backends.cuda.matmul.allow_tf32``
is off (matmuls keep FP32 precision), ``torch.backends.cudnn.allow_tf32`` is on
(convolutions use TF32)."""

_TF32_FLAGS = {"matmul": "torch.backends.cuda.matmul.allow_tf32", "conv": "cudnn.allow_tf32"}


def tf32_settings() -> dict[str, bool]:
    """Whether this process lets PyTorch run float32 matmuls and convolutions on TF32 tensor
    cores (see :data:`TF32_DEFAULTS`)."""
    import torch

    return {
        "matmul": bool(torch.backends.cuda.matmul.allow_tf32),
        "conv": bool(torch.backends.cudnn.allow_tf32),
    }


def _kind(layer: Layer) -> str:
    """``conv`` for a convolution (cuDNN's TF32 setting), else ``matmul``."""
    conv = "conv" in layer.flops_source or layer.type.startswith(("Conv", "F.conv"))
    return "conv" if conv else "matmul"


class LaunchFloors:
    """The launch floor each datasheet GPU's predictions use, and where it came from.

    A GPU's own floor is the least that a run on it measured: this machine's
    (``launch_here``), or a recorded run's (``measured``: a run's label, which names its
    device, and its latency floor, as :func:`gpuconcepts.book.gpu_latency_floors` gives them).
    A GPU that measured none takes the least floor measured on any GPU, since a launch is
    mostly the host's work (Python, the dispatcher, ``cudaLaunchKernel``); with no floor
    measured at all, every GPU takes :data:`gpuconcepts.hardware.LAUNCH_FLOOR_SECONDS`,
    an assumption.

    >>> floors = LaunchFloors([("cuda (NVIDIA H200) in its bfloat16 run", 13.5e-6),
    ...                        ("cuda (NVIDIA H200) in its tf32 run", 14.9e-6)])
    >>> floors.seconds("H200"), floors.seconds("T4")
    (1.35e-05, 1.35e-05)
    >>> print(floors.sentence())
    a launch floor per call measured on a GPU, not assumed: 13.5 µs on the H200 (the least of its runs: cuda (NVIDIA H200) in its bfloat16 run); on each other GPU that least measured floor, a launch being mostly the host's work, in place of the 5 µs assumed where no GPU measured one (hardware.LAUNCH_FLOOR_SECONDS).
    >>> print(LaunchFloors([]).sentence())
    a launch floor of 5 µs per call on each GPU (hardware.LAUNCH_FLOOR_SECONDS: one eager op's dispatch and kernel launch), assumed: no GPU run at hand measured one.
    """

    def __init__(
        self,
        measured: Sequence[tuple[str, float]],
        launch_here: float | None = None,
        here: Any = None,
    ) -> None:
        from gpuconcepts.hardware import lookup

        self.own: dict[str, tuple[float, str]] = {}  # GPU name: (seconds, where measured)
        for label, seconds in measured:
            gpu = lookup(label)
            if gpu is not None and seconds < self.own.get(gpu.name, (float("inf"), ""))[0]:
                self.own[gpu.name] = (seconds, f"the least of its runs: {label}")
        if launch_here and here is not None:
            self.own[here.name] = (launch_here, "measured here")
        floors = [seconds for _, seconds in measured if seconds > 0]
        floors += [seconds for seconds, _ in self.own.values()]
        self.least: float | None = min(floors) if floors else None

    def seconds(self, gpu: str) -> float:
        """The floor of one datasheet GPU's calls (see the class)."""
        from gpuconcepts.hardware import LAUNCH_FLOOR_SECONDS

        if gpu in self.own:
            return self.own[gpu][0]
        return LAUNCH_FLOOR_SECONDS if self.least is None else self.least

    def sentence(self) -> str:
        """Which floor the predictions used, in words (an entry of ``Report.assumptions``)."""
        from gpuconcepts.hardware import LAUNCH_FLOOR_SECONDS

        assumed = si(LAUNCH_FLOOR_SECONDS, "s")
        if self.least is None:
            return (
                f"a launch floor of {assumed} per call on each GPU "
                "(hardware.LAUNCH_FLOOR_SECONDS: one eager op's dispatch and kernel launch), "
                "assumed: no GPU run at hand measured one."
            )
        own = "; ".join(
            f"{si(seconds, 's')} on the {name} ({where})"
            for name, (seconds, where) in self.own.items()
        )
        others = (
            f"on each other GPU that least measured floor, a launch being mostly the host's "
            f"work, in place of the {assumed} assumed where no GPU measured one "
            "(hardware.LAUNCH_FLOOR_SECONDS)"
            if own
            else f"{si(self.least, 's')} on each GPU, the least measured, in place of the "
            f"{assumed} assumed where no GPU measured one (hardware.LAUNCH_FLOOR_SECONDS)"
        )
        return (
            "a launch floor per call measured on a GPU, not assumed: "
            + (f"{own}; {others}" if own else others)
            + "."
        )


def predictions(
    layers: Sequence[Layer],
    dtype: str,
    launch_here: float | None,
    measured: Sequence[tuple[str, float]] = (),
) -> tuple[tuple[GpuPrediction, ...], list[dict[str, str | None]], tuple[str, ...]]:
    """Each datasheet GPU's time for the calls by :data:`formulas.kernel_seconds` (the
    roofline with a launch floor per call), each call's bound there, and what was assumed.

    A float32 call that does arithmetic is read against the TF32 peak when this process's
    settings (:func:`tf32_settings`) send its kind there. The launch floors are measured ones
    where there are any (:class:`LaunchFloors`): ``launch_here``, the latency floor measured on
    this machine's GPU, for that GPU's row, and ``measured``, the floors of GPU runs recorded
    elsewhere (label, seconds); :data:`hardware.LAUNCH_FLOOR_SECONDS` only without either.
    """
    import numpy as np

    from gpuconcepts.hardware import GPUS, current_gpu

    settings = tf32_settings()
    here = current_gpu() if launch_here is not None else None
    floors = LaunchFloors(measured, launch_here, here)
    flops = np.array([float(layer.flops) for layer in layers])
    traffic = np.array([float(layer.bytes) for layer in layers])
    per_layer: list[dict[str, str | None]] = [{} for _ in layers]
    predictions = []
    for gpu in GPUS.values():
        if gpu.peak(dtype) is None:  # the T4 has no bf16: no prediction in the model's dtype
            for bounds in per_layer:
                bounds[gpu.name] = None
            continue
        keys = [_peak_key(layer, gpu, dtype, settings) for layer in layers]
        launch = floors.seconds(gpu.name)
        values = {
            # The formulas want F > 0; one FLOP in place of none leaves the bound at Q/beta.
            "F": np.maximum(flops, 1.0),
            "Q": traffic,
            "P": np.array([gpu.flops_per_s[key] for key in keys]),
            "beta": np.full_like(flops, gpu.bytes_per_s),
        }
        roof = formulas.roofline_seconds.vectorized(**values)
        seconds = formulas.kernel_seconds.vectorized(**values, t_launch=np.full_like(flops, launch))
        roofs = {key: gpu.datasheet_peaks(key) for key in set(keys)}  # each dtype's, once
        for i, (layer, key) in enumerate(zip(layers, keys, strict=True)):
            per_layer[i][gpu.name] = (
                "overhead" if roof[i] <= launch else classify(layer.intensity, roofs[key])
            )
        here_bounds = [str(layer_bounds[gpu.name]) for layer_bounds in per_layer]
        predictions.append(_prediction(gpu, dtype, seconds, here_bounds, launch))
    return tuple(predictions), per_layer, _assumed(layers, settings, floors)


def _peak_key(layer: Layer, gpu: GPU, dtype: str, settings: Mapping[str, bool]) -> str:
    """The datasheet peak ``gpu`` runs ``layer`` at: its own dtype's (the model's where the GPU
    has none), TF32's for a float32 call that computes where this process sends its kind."""
    from gpuconcepts.hardware import TORCH_DTYPES

    key = TORCH_DTYPES.get(layer.dtype, TORCH_DTYPES.get(dtype, dtype))
    if key not in gpu.flops_per_s:
        key = TORCH_DTYPES.get(dtype, dtype)
    if key == "fp32" and layer.flops > 0 and settings[_kind(layer)] and gpu.peak("tf32"):
        key = "tf32"
    return key


def _prediction(
    gpu: GPU, dtype: str, seconds: Any, bounds: Sequence[str], launch: float
) -> GpuPrediction:
    """``gpu``'s prediction from each call's ``seconds`` (an array) and bound there: the total
    and the shares spent memory-bound and on launch overhead."""
    import numpy as np

    from gpuconcepts.hardware import TORCH_DTYPES

    total = float(np.sum(seconds))
    spent = {"memory": 0.0, "overhead": 0.0, "compute": 0.0}
    for t, bound in zip(seconds, bounds, strict=True):
        spent[bound] += float(t)
    return GpuPrediction(
        gpu=gpu.name,
        dtype=TORCH_DTYPES.get(dtype, dtype),
        ridge_point=gpu.ridge_point(dtype),
        seconds=total,
        memory_share=spent["memory"] / total if total > 0 else 0.0,
        overhead_share=spent["overhead"] / total if total > 0 else 0.0,
        launch_seconds=launch,
    )


def _assumed(
    layers: Sequence[Layer], settings: Mapping[str, bool], floors: LaunchFloors
) -> tuple[str, ...]:
    """What the GPU predictions assumed, in words: TF32 where float32 computes, the floor."""
    said = []
    kinds = {_kind(layer) for layer in layers if layer.dtype == "float32" and layer.flops > 0}
    what = {"conv": "convolutions", "matmul": "matmuls (linear layers, attention, recurrences)"}
    for kind in sorted(kinds):
        on = settings[kind]
        where = "TF32 tensor cores (the tf32 peak)" if on else "CUDA cores (the fp32 peak)"
        default = "PyTorch's default" if on == TF32_DEFAULTS[kind] else "as set in this process"
        said.append(
            f"on a GPU, float32 {what[kind]} run on {where}: {_TF32_FLAGS[kind]} = {on}, {default}."
        )
    return (*said, floors.sentence())
