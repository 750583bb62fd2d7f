r"""Kernel sizes per device class from ``conf/presets.toml``, capped by free memory.

The file ships inside the package as ``gpuconcepts/presets.toml`` (a symlink to
``conf/presets.toml`` in the source tree, so there is one copy to edit).

>>> sizes = load_presets("cpu", quick=True, free_bytes=64 * 1024**3)
>>> sorted(sizes)[:4]
['cnn', 'cnn_depthwise', 'dlrm', 'dlrm_dense']
>>> mlp = {"mlp": {"B": 1024, "d_in": 1024, "d_out": 1024}}
>>> cap_presets(mlp, free_bytes=20 * 1024**2)["mlp"]["B"]
512
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Mapping
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import torch

from gpuconcepts import formulas
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.measure import free_memory_bytes
from gpuconcepts.units import MiB

DeviceClass = Literal["cpu", "cuda-small", "cuda-large"]

SMALL_GPU_BYTES = 24 * 1024**3
"""GPUs with less total memory than this use the ``cuda-small`` presets."""

MEMORY_FRACTION = 0.5
"""Share of the free memory one kernel's footprint may take."""

KERNELS = (
    "peaks",
    "dlrm",
    "dlrm_dense",
    "mlp",
    "cnn",
    "cnn_depthwise",
    "rnn",
    "transformer_prefill",
    "transformer_decode",
)
"""Tables every device class must define (besides ``timing`` and ``sweeps``)."""


def presets_path() -> Path:
    """The presets file: the packaged copy, else ``conf/presets.toml`` of a source checkout."""
    packaged = resources.files("gpuconcepts") / "presets.toml"
    if packaged.is_file():
        return Path(str(packaged))
    source = Path(__file__).resolve().parents[3] / "conf" / "presets.toml"
    if source.is_file():
        return source
    raise GpuConceptsError(f"no presets file: neither {packaged} nor {source} exists")


def device_class(device: str, total_bytes: int | None = None) -> DeviceClass:
    """``cpu``, or ``cuda-small`` / ``cuda-large`` by the GPU's total memory.

    >>> device_class("cpu"), device_class("cuda", 16 * 1024**3), device_class("cuda", 80 * 1024**3)
    ('cpu', 'cuda-small', 'cuda-large')
    """
    if device == "cpu":
        return "cpu"
    if device != "cuda":
        raise GpuConceptsError(f"device {device!r} is not a resolved device (cpu or cuda)")
    if total_bytes is None:
        total_bytes = int(
            torch.cuda.get_device_properties(torch.cuda.current_device()).total_memory
        )
    return "cuda-small" if total_bytes < SMALL_GPU_BYTES else "cuda-large"


def _read(path: Path | None, device_cls: str, quick: bool) -> dict[str, Any]:
    source = path or presets_path()
    with Path(source).open("rb") as handle:
        data = tomllib.load(handle)
    if device_cls not in data:
        raise GpuConceptsError(f"{source}: no table for device class {device_cls!r}")
    full = {k: v for k, v in data[device_cls].items() if k != "quick"}
    overrides = data[device_cls].get("quick", {}) if quick else {}
    merged: dict[str, Any] = {}
    for name in sorted(set(full) | set(overrides)):
        merged[name] = {**full.get(name, {}), **overrides.get(name, {})}
    missing = [k for k in (*KERNELS, "timing", "sweeps", "claims") if k not in merged]
    if missing:
        raise GpuConceptsError(f"{source}: device class {device_cls!r} lacks tables {missing}")
    return merged


Footprint = Callable[[Mapping[str, int], int], float]
"""Bytes a kernel holds at once, from its sizes and s (bytes per element)."""


def _decode_cache(v: Mapping[str, int], s: int) -> float:
    cache = formulas.kv_cache_memory(B=v["B"], S=v["S_prompt"] + v["steps"], d=v["d"], s=s)
    return 2 * cache  # torch.cat holds the old and the new cache for a moment


FOOTPRINTS: dict[tuple[str, str], Footprint] = {
    ("peaks", "stream_mib"): lambda v, _s: 3 * v["stream_mib"] * MiB,
    ("peaks", "gemm_n"): lambda v, s: formulas.mlp_bytes(
        B=v["gemm_n"], d_in=v["gemm_n"], d_out=v["gemm_n"], s=s
    ),
    ("dlrm", "N"): lambda v, s: formulas.embedding_memory(N=v["N"], d=v["d"], s=s),
    ("dlrm_dense", "B"): lambda v, s: formulas.mlp_bytes(
        B=v["B"], d_in=v["d_in"], d_out=v["d_out"], s=s
    ),
    ("mlp", "B"): lambda v, s: formulas.mlp_bytes(B=v["B"], d_in=v["d_in"], d_out=v["d_out"], s=s),
    ("cnn", "B"): lambda v, s: (
        2
        * formulas.conv_bytes(
            B=v["B"], H_out=v["H"], W_out=v["W"], K=v["K"], C_in=v["C_in"], C_out=v["C_out"], s=s
        )
    ),
    ("cnn_depthwise", "B"): lambda v, s: (
        2
        * formulas.depthwise_conv_bytes(
            B=v["B"], H_out=v["H"], W_out=v["W"], K=v["K"], C=v["C"], s=s
        )
    ),
    ("rnn", "B"): lambda v, s: (
        2 * formulas.rnn_bytes(B=v["B"], S=v["S"], d_in=v["d_in"], d_h=v["d_h"], s=s)
    ),
    ("transformer_prefill", "B"): lambda v, s: (
        2 * formulas.attention_bytes(B=v["B"], S=v["S"], d=v["d"], s=s)
    ),
    ("transformer_decode", "B"): _decode_cache,
}
"""(table, the size halved to fit) -> memory footprint. Embedding tables are float32 (s=4);
the footprints assume s=4 everywhere, an upper bound for the 2-byte CUDA dtypes. The factor
2 leaves room for workspaces (cuDNN, oneDNN) and outputs. Prefill assumes fused attention
(flash or memory-efficient, what ``scaled_dot_product_attention`` picks on CPU and CUDA),
which never holds the S×S scores."""


def cap_presets(
    presets: Mapping[str, Mapping[str, int]],
    free_bytes: int,
    *,
    fraction: float = MEMORY_FRACTION,
    s: int = 4,
) -> dict[str, dict[str, int]]:
    """Halve each kernel's batch-like size until its footprint fits ``fraction × free_bytes``.

    Raises:
        GpuConceptsError: when a kernel does not fit even with that size at 1.
    """
    budget = fraction * free_bytes
    capped = {name: dict(sizes) for name, sizes in presets.items()}
    for (table, key), footprint in FOOTPRINTS.items():
        if table not in capped:
            continue
        sizes = capped[table]
        while footprint(sizes, s) > budget:
            if sizes[key] <= 1:
                raise GpuConceptsError(
                    f"presets: {table} needs {footprint(sizes, s):,.0f} bytes even with "
                    f"{key}=1, over {fraction:.0%} of the {free_bytes:,} bytes free"
                )
            sizes[key] = max(1, sizes[key] // 2)
    return capped


def load_presets(
    device: str,
    quick: bool,
    *,
    free_bytes: int | None = None,
    path: Path | None = None,
    device_cls: DeviceClass | None = None,
) -> dict[str, dict[str, int]]:
    """Sizes per kernel for a resolved device, capped by its free memory.

    Args:
        device: ``"cpu"`` or ``"cuda"``.
        quick: use the ``quick`` overrides (the CLI's ``--quick``).
        free_bytes: free memory to cap against; measured when None.
        path: another presets file (tests).
        device_cls: force a device class instead of detecting it.
    """
    cls = device_cls or device_class(device)
    merged = _read(path, cls, quick)
    tables = {k: v for k, v in merged.items() if k not in ("sweeps", "claims")}
    for table, sizes in tables.items():
        for key, value in sizes.items():
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise GpuConceptsError(
                    f"presets: {cls}.{table}.{key} must be a positive integer; got {value!r}"
                )
    free = free_memory_bytes(device) if free_bytes is None else free_bytes
    return cap_presets(tables, free)


def load_sweeps(
    device: str,
    quick: bool,
    *,
    free_bytes: int | None = None,
    path: Path | None = None,
    device_cls: DeviceClass | None = None,
) -> dict[str, tuple[int, ...]]:
    """Sweep values: ``mlp_B`` (batch sizes) and ``transformer_S`` (prefill lengths).

    A value whose kernel would not fit in memory (with the other sizes of its table, as
    :func:`cap_presets` judges it) is dropped.

    >>> load_sweeps("cpu", quick=True, free_bytes=64 * 1024**3)["mlp_B"]
    (1, 64, 512)
    >>> load_sweeps("cpu", quick=True, free_bytes=40 * 1024**2)["mlp_B"]
    (1, 64)
    """
    cls = device_cls or device_class(device)
    merged = _read(path, cls, quick)
    free = free_memory_bytes(device) if free_bytes is None else free_bytes
    swept = {"mlp_B": ("mlp", "B"), "transformer_S": ("transformer_prefill", "S")}
    out: dict[str, tuple[int, ...]] = {}
    for name, values in merged["sweeps"].items():
        kept = []
        for value in values:
            if name in swept:
                table, key = swept[name]
                sizes = {**merged[table], key: int(value)}
                try:
                    if cap_presets({table: sizes}, free)[table] != sizes:
                        continue
                except GpuConceptsError:
                    continue
            kept.append(int(value))
        out[name] = tuple(kept)
    return out


def load_claim_sizes(
    device: str,
    quick: bool,
    *,
    path: Path | None = None,
    device_cls: DeviceClass | None = None,
) -> dict[str, object]:
    """The ``claims`` table of a device class: every size the claims' experiments use.

    :meth:`gpuconcepts.claims.experiments.ClaimSizes.from_table` checks them.

    >>> load_claim_sizes("cpu", quick=True)["mlp_batches"][:4]
    [1, 2, 4, 8]
    """
    cls = device_cls or device_class(device)
    return dict(_read(path, cls, quick)["claims"])


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
