r"""Every size the book measures at, read from ``conf/presets.toml`` without torch.

One file holds the sizes: kernel presets, sweeps, the claims' sizes and the timing budgets,
per device class, and the sizes of the parts (the whole-model experiments, per device; the
distributed run). A source checkout (an editable install, or ``PYTHONPATH=src``) reads
``conf/presets.toml`` itself; an installed package reads the copy its build put inside it
(``setup.py`` copies the file at build time, so the repository holds one copy and no link).
torch is imported only to ask a GPU its total memory when the caller does not say it.

>>> sizes = load_presets("cpu", quick=True, free_bytes=64 * 1024**3)
>>> sorted(sizes)[:4]
['budget', 'cnn', 'cnn_depthwise', 'dlrm']
>>> mlp = {"mlp": {"B": 1024, "d_in": 1024, "d_out": 1024}}
>>> cap_presets(mlp, free_bytes=20 * 1024**2)["mlp"]["B"]
512
"""

# torch is imported inside a function on purpose (README, Rules: 3).
# ruff: noqa: PLC0415

from __future__ import annotations

import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from gpuconcepts import formulas
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.files import presets_path
from gpuconcepts.units import MiB, percent, plain_number

DeviceClass = Literal["cpu", "cuda-small", "cuda-large"]

SMALL_GPU_BYTES = 24 * 1024**3
"""GPUs with less total memory than this use the ``cuda-small`` presets."""

MEMORY_FRACTION = 0.5
"""Share of the free memory one kernel's footprint may take."""

KERNELS = (
    "budget",
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
        import torch

        total_bytes = int(
            torch.cuda.get_device_properties(torch.cuda.current_device()).total_memory
        )
    return "cuda-small" if total_bytes < SMALL_GPU_BYTES else "cuda-large"


@dataclass(frozen=True)
class PresetsFile:
    """The presets file as read: its path and its tables. :meth:`read` is the one place the
    file is opened; the loaders below and :class:`gpuconcepts.sizing.RunSizes` read its tables.
    """

    source: Path
    data: dict[str, Any]

    @classmethod
    def read(cls, path: Path | None = None) -> PresetsFile:
        """The file at ``path``, or :func:`~gpuconcepts.files.presets_path`'s."""
        source = Path(path or presets_path())
        with source.open("rb") as handle:
            return cls(source, tomllib.load(handle))

    def device_tables(self, device_cls: str, quick: bool) -> dict[str, Any]:
        """The tables of one device class, its ``quick`` tables over them when ``quick``."""
        if device_cls not in self.data:
            raise GpuConceptsError(f"{self.source}: no table for device class {device_cls!r}")
        full = {k: v for k, v in self.data[device_cls].items() if k != "quick"}
        overrides = self.data[device_cls].get("quick", {}) if quick else {}
        merged: dict[str, Any] = {}
        for name in sorted(set(full) | set(overrides)):
            merged[name] = {**full.get(name, {}), **overrides.get(name, {})}
        missing = [k for k in (*KERNELS, "timing", "sweeps", "claims") if k not in merged]
        if missing:
            raise GpuConceptsError(
                f"{self.source}: device class {device_cls!r} lacks tables {missing}"
            )
        return merged

    def part(self, part: str, quick: bool, device: str | None = None) -> dict[str, Any]:
        """The sizes of ``part`` (a table of :data:`PARTS`), for ``device`` where the part has
        a table per device, its ``quick`` table over the full one when ``quick``."""
        if part not in PARTS:
            raise GpuConceptsError(f"part {part!r} has no sizes; choose from {', '.join(PARTS)}")
        devices = PARTS[part]
        if devices and device not in devices:
            raise GpuConceptsError(
                f"part {part!r} has sizes per device ({', '.join(devices)}); got device {device!r}"
            )
        table = self.data.get(part)
        if devices and isinstance(table, dict):
            table = table.get(str(device))
        if not isinstance(table, dict):
            heading = f"{part}.{device}" if devices else part
            raise GpuConceptsError(f"{self.source}: no table [{heading}]")
        full = {k: v for k, v in table.items() if k != "quick"}
        return full | (table.get("quick", {}) if quick else {})


PARTS: dict[str, tuple[str, ...]] = {"distributed": (), "wholemodel": ("cpu", "cuda")}
"""The tables of the presets file that hold one part's sizes, each with the resolved devices it
has a table for (none: one table for every device)."""


def load_part_sizes(
    part: str, quick: bool, *, device: str | None = None, path: Path | None = None
) -> dict[str, Any]:
    """The sizes of ``part`` (:meth:`PresetsFile.part`) from the presets file.

    >>> load_part_sizes("distributed", quick=True)["repeats"], load_part_sizes("distributed", False)["repeats"]
    (6, 10)
    >>> load_part_sizes("wholemodel", quick=True, device="cpu")["batches"]
    [1, 4, 16, 64]
    """
    return PresetsFile.read(path).part(part, quick, device)


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
                    f"presets: {table} needs {plain_number(footprint(sizes, s))} bytes even "
                    f"with {key}=1, over {percent(fraction)} of the {plain_number(free_bytes)} "
                    "bytes free"
                )
            sizes[key] = max(1, sizes[key] // 2)
    return capped


@dataclass(frozen=True)
class RunBudget:
    """What one run may spend: ``seconds`` of wall time and ``memory_bytes`` for the arrays it
    allocates (the ``budget`` table of each device class; ``--quick`` reads ``quick.budget``).

    >>> RunBudget.from_presets(load_presets("cpu", quick=True, free_bytes=64 * 1024**3))
    RunBudget(seconds=60.0, memory_bytes=2147483648)
    """

    seconds: float
    memory_bytes: int

    @classmethod
    def from_presets(cls, presets: Mapping[str, Mapping[str, int]]) -> RunBudget:
        """The budget of a presets dict (:func:`load_presets`)."""
        table = presets.get("budget")
        if not table or not {"seconds", "memory_mib"} <= set(table):
            raise GpuConceptsError(
                f"presets: the budget table needs seconds and memory_mib; got {sorted(table or {})}"
            )
        return cls(seconds=float(table["seconds"]), memory_bytes=int(table["memory_mib"]) * MiB)

    def to_dict(self) -> dict[str, float | int]:
        """Plain JSON types, as a run records them."""
        return {"seconds": self.seconds, "memory_bytes": self.memory_bytes}


def load_presets(
    device: str,
    quick: bool,
    *,
    free_bytes: int | None = None,
    path: Path | None = None,
    device_cls: DeviceClass | None = None,
) -> dict[str, dict[str, int]]:
    """Sizes per kernel for a resolved device, capped by its free memory
    (:func:`presets_within` of the device class's tables).

    Args:
        device: ``"cpu"`` or ``"cuda"``.
        quick: use the ``quick`` overrides (the CLI's ``--quick``).
        free_bytes: free memory to cap against; measured when None.
        path: another presets file (tests).
        device_cls: force a device class instead of detecting it.
    """
    cls = device_cls or device_class(device)
    tables = PresetsFile.read(path).device_tables(cls, quick)
    return presets_within(tables, cls, free_memory(device, free_bytes))


def presets_within(
    tables: Mapping[str, Any], device_cls: str, free_bytes: int
) -> dict[str, dict[str, int]]:
    """The kernel tables of a device class's ``tables`` (:meth:`PresetsFile.device_tables`),
    each size a positive integer, capped to fit ``free_bytes`` (:func:`cap_presets`)."""
    kernels = {k: v for k, v in tables.items() if k not in ("sweeps", "claims")}
    for table, sizes in kernels.items():
        for key, value in sizes.items():
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise GpuConceptsError(
                    f"presets: {device_cls}.{table}.{key} must be a positive integer; got {value!r}"
                )
    return cap_presets(kernels, free_bytes)


def load_sweeps(
    device: str,
    quick: bool,
    *,
    free_bytes: int | None = None,
    path: Path | None = None,
    device_cls: DeviceClass | None = None,
) -> dict[str, tuple[int, ...]]:
    """Sweep values: ``mlp_B`` (batch sizes) and ``transformer_S`` (prefill lengths), as
    :func:`sweeps_within` keeps them.

    >>> load_sweeps("cpu", quick=True, free_bytes=64 * 1024**3)["mlp_B"]
    (1, 64, 512)
    >>> load_sweeps("cpu", quick=True, free_bytes=40 * 1024**2)["mlp_B"]
    (1, 64)
    """
    cls = device_cls or device_class(device)
    tables = PresetsFile.read(path).device_tables(cls, quick)
    return sweeps_within(tables, free_memory(device, free_bytes))


def sweeps_within(tables: Mapping[str, Any], free_bytes: int) -> dict[str, tuple[int, ...]]:
    """The ``sweeps`` table of a device class's ``tables``, less each value whose kernel would
    not fit in ``free_bytes`` (with the other sizes of its table, as :func:`cap_presets`
    judges it)."""
    swept = {"mlp_B": ("mlp", "B"), "transformer_S": ("transformer_prefill", "S")}
    out: dict[str, tuple[int, ...]] = {}
    for name, values in tables["sweeps"].items():
        kept = []
        for value in values:
            if name in swept:
                table, key = swept[name]
                sizes = {**tables[table], key: int(value)}
                try:
                    if cap_presets({table: sizes}, free_bytes)[table] != sizes:
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

    :meth:`gpuconcepts.results.claim_sizes.ClaimSizes.from_table` checks them.

    >>> load_claim_sizes("cpu", quick=True)["mlp_batches"][:4]
    [1, 2, 4, 8]
    """
    cls = device_cls or device_class(device)
    return dict(PresetsFile.read(path).device_tables(cls, quick)["claims"])


def free_memory(device: str, free_bytes: int | None = None) -> int:
    """``free_bytes``, or the device's free memory measured now when None."""
    if free_bytes is not None:
        return free_bytes
    from gpuconcepts.measure import free_memory_bytes

    return free_memory_bytes(device)
