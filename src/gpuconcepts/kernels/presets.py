r"""The rules every kernel size keeps, and the sizes themselves through :mod:`gpuconcepts.sizes`.

The sizes are read without torch by :mod:`gpuconcepts.sizes` (``load_presets``,
``load_sweeps``, ``load_claim_sizes``); they are named here too, so
``from gpuconcepts.kernels import load_presets`` keeps working. A run reads them once, at the
top, into :class:`gpuconcepts.sizing.RunSizes`, and the kernels are handed that value. This
module adds what a size table must respect on each device class: outputs small enough for the
allocator, working sets large enough to come from DRAM, repetitions long enough for the timer.

>>> output_bytes("mlp", {"B": 4, "d_in": 8, "d_out": 16, "s": 4})
256
"""

from __future__ import annotations

from collections.abc import Mapping

from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.files import presets_path
from gpuconcepts.sizes import (
    FOOTPRINTS,
    KERNELS,
    MEMORY_FRACTION,
    SMALL_GPU_BYTES,
    DeviceClass,
    Footprint,
    cap_presets,
    device_class,
    load_claim_sizes,
    load_presets,
    load_sweeps,
)
from gpuconcepts.units import MiB

__all__ = [
    "CPU_MAX_OUTPUT_BYTES",
    "FOOTPRINTS",
    "KERNELS",
    "LLC_BYTES",
    "MEMORY_FRACTION",
    "MIN_LLC_MULTIPLE",
    "MIN_TIMER_MULTIPLE",
    "OUTPUT_SHAPES",
    "SMALL_GPU_BYTES",
    "TIMER_RESOLUTION_SECONDS",
    "DeviceClass",
    "Footprint",
    "cap_presets",
    "device_class",
    "load_claim_sizes",
    "load_presets",
    "load_sweeps",
    "output_bytes",
    "presets_path",
]


# -- the rules every size table keeps ---------------------------------------------------------
CPU_MAX_OUTPUT_BYTES = 32 * MiB
"""On a CPU every kernel's output stays under 32 MiB: glibc hands out larger blocks as fresh mmap
pages on every call, and their page faults (not the kernel) would be timed."""

LLC_BYTES: dict[DeviceClass, int] = {
    "cpu": 32 * MiB,
    "cuda-small": 48 * MiB,
    "cuda-large": 60 * MiB,
}
"""The largest last-level cache each class is sized against: the dev CPU's 32 MiB L3, an L4's
48 MiB L2, an H200's 60 MiB L2 (hardware.GPUS)."""

MIN_LLC_MULTIPLE = 4
"""The working sets that must come from DRAM by their size are at least 4x the LLC: an
embedding table, and the STREAM arrays of the peaks and of the roofs' reference triad. The
other memory-bound kernels (depthwise convolutions, decode steps, small MLP batches) have their
caches flushed before each repetition instead: on a CPU a depthwise convolution's output is as
large as its input, so 4x a 32 MiB cache would break the output rule above."""

MIN_TIMER_MULTIPLE = 20
"""No timed repetition is shorter than 20x the timer's resolution. A kernel that keeps its
caches runs as many calls per repetition as last a millisecond (measure.calls_per_repetition);
a flushed one is one call, at least its roofline time at the fastest roofs of its class."""

TIMER_RESOLUTION_SECONDS: dict[DeviceClass, float] = {
    "cpu": 1e-9,  # time.perf_counter on Linux (clock_gettime, CLOCK_MONOTONIC)
    "cuda-small": 5e-7,  # CUDA events: "a resolution of around 0.5 microseconds" (CUDA docs)
    "cuda-large": 5e-7,
}
"""What each class's timer can resolve."""


def output_bytes(workload: str, params: Mapping[str, int]) -> int:
    """Bytes of the tensor one call of ``workload`` allocates for its result.

    >>> output_bytes("mlp", {"B": 4, "d_in": 8, "d_out": 16, "s": 4})
    256
    """
    if workload not in OUTPUT_SHAPES:
        raise GpuConceptsError(f"output_bytes: no output shape for workload {workload!r}")
    shape = OUTPUT_SHAPES[workload]
    if shape is None:
        return 0
    elements = 1
    for size in shape:
        elements *= params[size]
    return elements * params["s"]


_BAG, _LAYER, _SEQUENCE = ("B", "d"), ("B", "d_out"), ("B", "S", "d_h")
OUTPUT_SHAPES: dict[str, tuple[str, ...] | None] = {
    "dlrm-random": _BAG,
    "dlrm-sequential": _BAG,
    "dlrm-hot": _BAG,
    "dlrm-dense": _LAYER,
    "mlp": _LAYER,
    "cnn-conv": ("B", "C_out", "H", "W"),
    "cnn-depthwise": ("B", "C", "H", "W"),
    "rnn-module": _SEQUENCE,
    "rnn-loop": _SEQUENCE,
    "rnn-hoisted": _SEQUENCE,
    "rnn-gemm": _SEQUENCE,
    "transformer-prefill": ("B", "S", "d"),
    "transformer-prefill-causal": ("B", "S", "d"),
    "transformer-decode": ("B", "d"),
    "peak-gemm": ("n", "n"),
    "peak-triad": None,  # written into an array made once (out=): nothing allocated per call
}
"""The sizes whose product is the element count of each workload's result."""
