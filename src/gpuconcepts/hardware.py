r"""Datasheet peaks of common GPUs, each with its source, and their ridge points.

FLOP/s are **dense** Tensor Core (or CUDA core, for fp32) peaks: NVIDIA's datasheets
print the 2:4-sparse figure first, which is twice the dense one; it is never used here.
Bandwidths are decimal bytes per second (3.35 TB/s = 3.35e12 B/s), as datasheets mean
them. L2 sizes are the bytes the driver reports (NVIDIA's "50 MB" L2 is 50 MiB).

>>> h100 = GPUS["H100 SXM"]
>>> round(h100.ridge_point("bf16"))
295
>>> h100.flops_per_s["bf16"] / 1e12, h100.bytes_per_s / 1e12
(989.0, 3.35)
>>> lookup("NVIDIA H100 80GB HBM3").name
'H100 SXM'
>>> lookup("NVIDIA H100 PCIe") is None
True
"""

# torch and matplotlib are imported inside functions on purpose (README, Rules: 3).
# ruff: noqa: PLC0415

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpuconcepts import formulas
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.roofline import Peaks
from gpuconcepts.units import MiB, plain_number, significant

DTYPES = ("fp32", "tf32", "fp16", "bf16")
"""Dtype keys of :attr:`GPU.flops_per_s`, in table order."""

TORCH_DTYPES = {"float32": "fp32", "tf32": "tf32", "float16": "fp16", "bfloat16": "bf16"}
"""Kernel dtype names (``gpuconcepts.kernels``) to datasheet keys."""

DTYPE_BYTES: dict[str, int] = {"fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2}
"""Bytes per stored element of each datasheet dtype (TF32 is stored as a 4-byte FP32 word)."""


def dtype_bytes(name: str) -> int:
    """Bytes per stored element of a dtype given by its name or alias.

    >>> dtype_bytes("bf16"), dtype_bytes("bfloat16"), dtype_bytes("tf32"), dtype_bytes("fp32")
    (2, 2, 4, 4)
    """
    return DTYPE_BYTES[TORCH_DTYPES[dtype_name(name)]]


def dtype_name(name: str) -> str:
    """The kernel name of a dtype given by its kernel name or its datasheet alias.

    >>> dtype_name("bf16"), dtype_name("float16"), dtype_name("fp32"), dtype_name("tf32")
    ('bfloat16', 'float16', 'float32', 'tf32')
    >>> dtype_name("int8")
    Traceback (most recent call last):
    ...
    gpuconcepts.errors.GpuConceptsError: unknown dtype 'int8'; one of float32 (fp32), tf32, float16 (fp16), bfloat16 (bf16)
    """
    if name in TORCH_DTYPES:
        return name
    for kernel, key in TORCH_DTYPES.items():
        if name == key:
            return kernel
    known = ", ".join(k if k == v else f"{k} ({v})" for k, v in TORCH_DTYPES.items())
    raise GpuConceptsError(f"unknown dtype {name!r}; one of {known}")


_T = 1e12
_KIB = 1024

DEFAULT_GPU = "H100 SXM"
"""The datasheet GPU a question starts on unless told otherwise: the one the post's
ridge-point example uses (``gpuconcepts model``'s serving rows, the what-if panels)."""


@dataclass(frozen=True)
class GPU:
    """One datasheet row.

    Attributes:
        name: short name used as the table key.
        flops_per_s: dense peak FLOP/s by dtype (``fp32``, ``tf32``, ``fp16``, ``bf16``);
            a dtype the GPU lacks is absent.
        bytes_per_s: peak DRAM (HBM/GDDR) bandwidth, decimal bytes per second.
        l2_bytes: L2 cache size in bytes.
        memory_bytes: DRAM capacity in bytes (decimal GB as printed).
        source: the document the figures come from.
        device_names: regular expressions matched against ``torch.cuda.get_device_name()``.
        link_bytes_per_s: GPU-to-GPU bandwidth as the datasheet prints it, both directions
            together (NVLink where the GPU has it, else its PCIe link); None when the
            datasheet gives no figure. One direction carries half.
        link: what ``link_bytes_per_s`` is ("NVLink", "PCIe Gen4 x16", ...).
        sms: streaming multiprocessors (SMs), the GPU's independent processors.
        tensor_cores: Tensor Cores on the whole GPU (an equal share in each SM).
        shared_memory_per_sm_bytes: the most shared memory one SM can give its thread blocks
            (carved out of the SM's combined L1 and shared memory).
        registers_per_sm_bytes: one SM's register file (64 Ki 32-bit registers on all of these).
        anatomy_source: the document the four fields above come from.
    """

    name: str
    flops_per_s: Mapping[str, float] = field(compare=False)
    bytes_per_s: float
    l2_bytes: int
    memory_bytes: int
    source: str
    device_names: tuple[str, ...] = ()
    link_bytes_per_s: float | None = None
    link: str = ""
    sms: int | None = None
    tensor_cores: int | None = None
    shared_memory_per_sm_bytes: int | None = None
    registers_per_sm_bytes: int | None = None
    anatomy_source: str = ""

    @property
    def link_send_bytes_per_s(self) -> float | None:
        """Bytes per second one GPU can send over its link: half the datasheet's total.

        >>> GPUS["H100 SXM"].link_send_bytes_per_s / 1e9
        450.0
        """
        return None if self.link_bytes_per_s is None else self.link_bytes_per_s / 2

    def ridge_point(self, dtype: str) -> float:
        """``formulas.ridge_point(P, beta)`` for one dtype (``bf16`` or ``bfloat16``...)."""
        key = TORCH_DTYPES.get(dtype, dtype)
        if key not in self.flops_per_s:
            raise GpuConceptsError(
                f"{self.name} has no {dtype!r} peak; it lists {', '.join(self.flops_per_s)}"
            )
        return float(formulas.ridge_point(P=self.flops_per_s[key], beta=self.bytes_per_s))

    @property
    def sixteen_bit(self) -> str:
        """The GPU's 16-bit dtype for a model: bf16 where listed, else fp16 (the T4), the same
        two bytes per value.

        >>> GPUS["H100 SXM"].sixteen_bit, GPUS["T4"].sixteen_bit
        ('bf16', 'fp16')
        """
        return "bf16" if "bf16" in self.flops_per_s else "fp16"

    def peak(self, dtype: str) -> float | None:
        """Dense FLOP/s for a dtype (kernel or datasheet name), or None when not listed."""
        return self.flops_per_s.get(TORCH_DTYPES.get(dtype, dtype))

    def datasheet_peaks(self, dtype: str) -> Peaks:
        """The datasheet's two roofs in one dtype as :class:`~gpuconcepts.roofline.Peaks`, to
        place a kernel under this GPU's roofline (``roofline.place``, ``predicted_seconds``).

        >>> p = GPUS["H100 SXM"].datasheet_peaks("float16")
        >>> p.name, p.device, p.dtype, p.flops_per_s / 1e12, round(p.ridge_point)
        ('H100 SXM', 'cuda', 'fp16', 989.0, 295)
        >>> [level.name for level in p.memory_roofs]
        ['HBM']
        """
        self.ridge_point(dtype)  # the error names the dtypes listed when this one is not
        key = TORCH_DTYPES.get(dtype, dtype)
        return Peaks("cuda", self.flops_per_s[key], self.bytes_per_s, key, name=self.name)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict with the ridge point of every listed dtype."""
        return {
            "name": self.name,
            "flops_per_s": dict(self.flops_per_s),
            "bytes_per_s": self.bytes_per_s,
            "l2_bytes": self.l2_bytes,
            "memory_bytes": self.memory_bytes,
            "ridge_points": {k: self.ridge_point(k) for k in self.flops_per_s},
            "link_bytes_per_s": self.link_bytes_per_s,
            "link": self.link,
            "source": self.source,
        }


_ROWS = (
    GPU(
        "A100 80GB SXM",
        {"fp32": 19.5 * _T, "tf32": 156 * _T, "fp16": 312 * _T, "bf16": 312 * _T},
        bytes_per_s=2.039e12,
        l2_bytes=40 * MiB,
        memory_bytes=80 * 10**9,
        source="NVIDIA A100 Tensor Core GPU datasheet (80GB SXM column; dense = half the "
        "sparsity figures; interconnect: NVLink 600 GB/s); L2 from the NVIDIA A100 Tensor Core GPU Architecture whitepaper",
        device_names=(r"A100[- ]SXM4?[- ]80GB",),
        link_bytes_per_s=600e9,
        link="NVLink",
        sms=108,
        tensor_cores=432,
        shared_memory_per_sm_bytes=164 * _KIB,
        registers_per_sm_bytes=256 * _KIB,
        anatomy_source="NVIDIA A100 Tensor Core GPU Architecture whitepaper (A100: 108 SMs, "
        "432 Tensor Cores; 192 KB of combined L1 and shared memory per SM, up to 164 KB of it "
        "shared; 64K 32-bit registers per SM)",
    ),
    GPU(
        "H100 SXM",
        {"fp32": 67 * _T, "tf32": 494.5 * _T, "fp16": 989 * _T, "bf16": 989 * _T},
        bytes_per_s=3.35e12,
        l2_bytes=50 * MiB,
        memory_bytes=80 * 10**9,
        source="NVIDIA H100 Tensor Core GPU datasheet (H100 SXM column; dense = half the "
        "sparsity figures; interconnect: NVLink 900 GB/s); L2 from the NVIDIA H100 Tensor Core GPU Architecture whitepaper",
        device_names=(r"H100 80GB HBM3", r"H100[- ]SXM"),
        link_bytes_per_s=900e9,
        link="NVLink",
        sms=132,
        tensor_cores=528,
        shared_memory_per_sm_bytes=228 * _KIB,
        registers_per_sm_bytes=256 * _KIB,
        anatomy_source="NVIDIA H100 Tensor Core GPU Architecture whitepaper (H100 SXM5: 132 "
        "SMs, 528 Tensor Cores; 256 KB of combined L1 and shared memory per SM, up to 228 KB "
        "of it shared; 64K 32-bit registers per SM)",
    ),
    GPU(
        "H200",
        {"fp32": 67 * _T, "tf32": 494.5 * _T, "fp16": 989 * _T, "bf16": 989 * _T},
        bytes_per_s=4.8e12,
        l2_bytes=60 * MiB,
        memory_bytes=141 * 10**9,
        source="NVIDIA H200 Tensor Core GPU datasheet (H200 SXM column; dense = half the "
        "sparsity figures; interconnect: NVLink 900 GB/s); L2 as the CUDA driver reports it on an H200 "
        "(cudaDeviceProp.l2CacheSize = 62,914,560 bytes; the datasheet does not state it)",
        device_names=(r"\bH200\b(?!.*NVL)",),
        link_bytes_per_s=900e9,
        link="NVLink",
        sms=132,
        tensor_cores=528,
        shared_memory_per_sm_bytes=228 * _KIB,
        registers_per_sm_bytes=256 * _KIB,
        anatomy_source="The H200 is the H100 SXM's Hopper GPU with more and faster HBM (NVIDIA "
        "H200 Tensor Core GPU datasheet); its SMs as in the NVIDIA H100 Tensor Core GPU "
        "Architecture whitepaper (H100 SXM5 column)",
    ),
    GPU(
        "L4",
        {"fp32": 30.3 * _T, "tf32": 60 * _T, "fp16": 121 * _T, "bf16": 121 * _T},
        bytes_per_s=300e9,
        l2_bytes=48 * MiB,
        memory_bytes=24 * 10**9,
        source="NVIDIA L4 Tensor Core GPU datasheet (dense = half the sparsity figures; "
        "interconnect: PCIe Gen4 x16, 64 GB/s bidirectional); "
        "L2 from the NVIDIA Ada Lovelace GPU Architecture whitepaper (AD104)",
        device_names=(r"\bL4\b",),
        link_bytes_per_s=64e9,
        link="PCIe Gen4 x16",
        sms=58,
        tensor_cores=232,
        shared_memory_per_sm_bytes=100 * _KIB,
        registers_per_sm_bytes=256 * _KIB,
        anatomy_source="NVIDIA L4 Tensor Core GPU datasheet (7,424 CUDA cores, 232 Tensor "
        "Cores: 58 SMs of 128 cores); NVIDIA Ada Lovelace GPU Architecture whitepaper (128 KB of "
        "L1 and shared memory per SM, up to 100 KB of it shared; 64K 32-bit registers per SM)",
    ),
    GPU(
        "T4",
        {"fp32": 8.1 * _T, "fp16": 65 * _T},
        bytes_per_s=320e9,
        l2_bytes=4 * MiB,
        memory_bytes=16 * 10**9,
        source="NVIDIA T4 Tensor Core GPU datasheet (mixed-precision FP16/FP32 figure; Turing "
        "has no BF16, TF32 or sparsity); L2 from the NVIDIA Turing GPU Architecture whitepaper",
        device_names=(r"\bT4\b",),
        sms=40,
        tensor_cores=320,
        shared_memory_per_sm_bytes=64 * _KIB,
        registers_per_sm_bytes=256 * _KIB,
        anatomy_source="NVIDIA Turing GPU Architecture whitepaper (TU104 as in the T4: 40 SMs, "
        "320 Tensor Cores; 96 KB of L1 and shared memory per SM, up to 64 KB of it shared; "
        "64K 32-bit registers per SM)",
    ),
    GPU(
        "RTX 4090",
        {"fp32": 82.6 * _T, "tf32": 82.6 * _T, "fp16": 165.2 * _T, "bf16": 165.2 * _T},
        bytes_per_s=1.008e12,
        l2_bytes=72 * MiB,
        memory_bytes=24 * 10**9,
        source="NVIDIA Ada Lovelace GPU Architecture whitepaper, GeForce RTX 4090 column "
        "(dense, FP32 accumulate)",
        device_names=(r"RTX 4090(?![ -]?(D\b|Laptop))",),
        sms=128,
        tensor_cores=512,
        shared_memory_per_sm_bytes=100 * _KIB,
        registers_per_sm_bytes=256 * _KIB,
        anatomy_source="NVIDIA Ada Lovelace GPU Architecture whitepaper (GeForce RTX 4090: "
        "128 SMs, 512 Tensor Cores; 128 KB of L1 and shared memory per SM, up to 100 KB of it "
        "shared; 64K 32-bit registers per SM)",
    ),
)

LAUNCH_FLOOR_SECONDS = 5e-6
"""Least time of one eager PyTorch call on a GPU, assumed where no measurement on that GPU is
at hand: about 5 µs, the CPU-side cost of dispatching one op and launching its kernel
(PyTorch's dispatcher and ``cudaLaunchKernel`` take a few µs each on recent drivers), which a
kernel shorter than that cannot hide. A run measured on a GPU records its own
(``Peaks.latency_seconds``); CUDA graphs and ``torch.compile`` lower it."""

INFINIBAND_NDR_BYTES_PER_S = 400e9 / 8
"""One InfiniBand NDR port: 400 Gb/s in each direction (NVIDIA ConnectX-7 adapter product
brief), the link between the nodes of an H100-generation cluster; bits over 8 in bytes."""

GPUS: dict[str, GPU] = {gpu.name: gpu for gpu in _ROWS}
"""The datasheet table by short name (the book's hardware page shows it).

:meta hide-value:
"""


def datasheet_peaks(dtype: str) -> list[Peaks]:
    """Every datasheet GPU's roofs in ``dtype``, in table order; a GPU without that dtype is left
    out (the T4 has no BF16).

    >>> [p.name for p in datasheet_peaks("bfloat16")]
    ['A100 80GB SXM', 'H100 SXM', 'H200', 'L4', 'RTX 4090']
    """
    return [gpu.datasheet_peaks(dtype) for gpu in _ROWS if gpu.peak(dtype) is not None]


def lookup(device_name: str) -> GPU | None:
    """The table row for a CUDA device name (``torch.cuda.get_device_name()``), else None.

    >>> lookup("NVIDIA A100-SXM4-80GB").name, lookup("Tesla T4").name, lookup("NVIDIA L4").name
    ('A100 80GB SXM', 'T4', 'L4')
    >>> lookup("NVIDIA GeForce RTX 4090").name, lookup("NVIDIA H200").name
    ('RTX 4090', 'H200')
    >>> lookup("NVIDIA A100 80GB PCIe") is None
    True
    """
    for gpu in _ROWS:
        if any(re.search(pattern, device_name, re.IGNORECASE) for pattern in gpu.device_names):
            return gpu
    return None


def current_gpu() -> GPU | None:
    """The table row of the current CUDA device, or None without CUDA or for an unknown GPU.

    Where the system shows no NVIDIA driver (:func:`nvidia_driver_seen`), CUDA cannot run and
    the answer is None without importing torch: a book page that draws recorded GPU runs on a
    CPU would otherwise import it (a second) to learn that.
    """
    if not nvidia_driver_seen():
        return None
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is an optional extra
        return None
    if not torch.cuda.is_available():
        return None
    return lookup(torch.cuda.get_device_name(torch.cuda.current_device()))


def nvidia_driver_seen() -> bool:
    """False only where a Linux-like system shows no NVIDIA driver, which CUDA needs: no
    ``/proc/driver/nvidia`` (the kernel module), no ``/dev/nvidia*`` device and no ``/dev/dxg``
    (WSL's GPU); True wherever the system cannot tell (no ``/proc``: ask torch)."""
    dev, proc = Path("/dev"), Path("/proc")
    if not (dev.is_dir() and proc.is_dir()):
        return True
    return (
        (proc / "driver" / "nvidia").exists() or any(dev.glob("nvidia*")) or (dev / "dxg").exists()
    )


def _tera(value: float | None) -> str:
    return "-" if value is None else f"{plain_number(value / _T)}"


def table_rows() -> list[list[str]]:
    """The datasheet table as text cells, header first (what ``gpuconcepts hardware`` prints)."""
    header = [
        "GPU",
        *(f"{d} TFLOP/s" for d in DTYPES),
        "bandwidth TB/s",
        "L2 MiB",
        "ridge bf16/fp16 FLOP/B",
    ]
    rows = [header]
    for gpu in _ROWS:
        ridge_dtype = gpu.sixteen_bit
        rows.append(
            [
                gpu.name,
                *(_tera(gpu.flops_per_s.get(d)) for d in DTYPES),
                f"{plain_number(gpu.bytes_per_s / _T)}",
                f"{gpu.l2_bytes // MiB}",
                f"{significant(gpu.ridge_point(ridge_dtype))} ({ridge_dtype})",
            ]
        )
    return rows
