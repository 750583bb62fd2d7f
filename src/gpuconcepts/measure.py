r"""Device choice, timing done right, and the ``Measurement`` value a kernel run produces.

Measuring and reporting are kept apart (the habit of ``torch.utils.benchmark``): the
timers here return raw per-repetition seconds, and :class:`Measurement` is a plain frozen
value that knows its own statistics (median and interquartile range) and nothing of any
machine: :func:`gpuconcepts.roofline.place` puts it under a device's peaks.

>>> m = Measurement(workload="mlp", device="cpu", params={"B": 64},
...                 raw_seconds=(0.011, 0.010, 0.012, 0.010, 0.013),
...                 flops=1e9, bytes=2e7)
>>> m.seconds, m.interval_seconds, m.intensity
(0.011, (0.01, 0.012), 50.0)

Public API (others code against it):

* ``resolve_device(spec="auto") -> "cpu" | "cuda"``; :class:`~gpuconcepts.errors.GpuConceptsError`
  for an unknown spec or ``"cuda"`` without a GPU.
* ``device_name(device) -> str``, e.g. ``"cpu (AMD EPYC, 2 threads)"`` or ``"cuda (NVIDIA H200)"``.
* :class:`Measurement` ``(workload, device, params, raw_seconds, flops, bytes, flush=False,
  series={})`` with ``.seconds`` (median), ``.interval_seconds`` (quartiles),
  ``.iqr_seconds``, ``.noisy``, ``.flops_per_s``, ``.bytes_per_s`` (and their spread,
  ``.interval_flops_per_s``, ``.interval_bytes_per_s``), ``.intensity``, ``.size(name)``, ``.to_dict()`` and ``Measurement.from_dict``.
* Timers: ``time_cpu(fn, repeats=..., ...)``, ``time_cuda(fn, repeats=..., backend=...)`` and
  ``time_function(fn, device, repeats=..., flush=...)``; each returns raw seconds per repetition.
* Cache and memory sizes: ``cache_levels(device)``, ``cpu_last_level_cache_bytes()``,
  ``last_level_cache_bytes(device)``,
  ``flush_buffer_bytes(cache_bytes)``, ``make_flusher(device)``, ``cpu_free_memory_bytes()``,
  ``free_memory_bytes(device)``.

The CUDA timer takes its events and synchronisation from a small ``CudaBackend`` object,
so its logic (warm-up, one event pair per repetition, cache flush before each one) is
unit-tested on a machine without a GPU.
"""

# torch and matplotlib are imported inside functions on purpose (README, Rules: 3).
# ruff: noqa: PLC0415

from __future__ import annotations

import contextlib
import math
import os
import platform
import random
import statistics
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.units import GiB, MiB, percent, plain_number, plural, significant

DEVICES = ("auto", "cpu", "cuda")
"""Device specs the CLI and :func:`resolve_device` accept."""

NOISE_THRESHOLD = 0.1
"""A measurement whose IQR exceeds this fraction of its median is flagged ``noisy``."""


# -- devices ---------------------------------------------------------------------------------
def _cuda_available() -> bool:
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is an optional extra
        return False
    return bool(torch.cuda.is_available())


def resolve_device(spec: str = "auto") -> str:
    """The device a spec names: ``"auto"`` picks CUDA when a GPU is present, else the CPU.

    >>> resolve_device("cpu")
    'cpu'
    >>> resolve_device("tpu")
    Traceback (most recent call last):
    ...
    gpuconcepts.errors.GpuConceptsError: device 'tpu' is not one of auto, cpu, cuda

    Raises:
        GpuConceptsError: for an unknown spec, or ``"cuda"`` when no CUDA device is usable.
    """
    text = spec.strip().lower()
    if text not in DEVICES:
        raise GpuConceptsError(f"device {spec!r} is not one of {', '.join(DEVICES)}")
    if text == "cpu":
        return "cpu"
    if _cuda_available():
        return "cuda"
    if text == "cuda":
        raise GpuConceptsError(
            "device 'cuda' was asked for, but torch sees no CUDA device "
            "(no GPU, no driver, or a CPU-only torch build)"
        )
    return "cpu"


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo (falls back to :func:`platform.processor`)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def cpu_threads() -> int:
    """Threads torch uses for CPU kernels (all cores unless the user said otherwise)."""
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is an optional extra
        return os.cpu_count() or 1
    return int(torch.get_num_threads())


def device_name(device: str) -> str:
    """A human description of a resolved device.

    >>> device_name("cpu").startswith("cpu (")
    True
    """
    if device == "cpu":
        return f"cpu ({cpu_model()}, {plural(cpu_threads(), 'thread')})"
    if device == "cuda":
        import torch

        return f"cuda ({torch.cuda.get_device_name(torch.cuda.current_device())})"
    raise GpuConceptsError(f"device {device!r} is not a resolved device (cpu or cuda)")


# -- values ----------------------------------------------------------------------------------
def _positive(value: object) -> bool:
    """A finite number above zero (booleans and text are not numbers here)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return math.isfinite(value) and value > 0


def quartiles(values: Sequence[float]) -> tuple[float, float]:
    """The first and third quartiles of ``values``, the book's one spread statistic: inclusive
    (linear interpolation between the sorted values, as ``numpy.percentile`` does); a single
    value is both.

    >>> quartiles([1.0, 2.0, 3.0, 4.0, 5.0]), quartiles([1.0, 2.0]), quartiles([7.0])
    ((2.0, 4.0), (1.25, 1.75), (7.0, 7.0))
    """
    if len(values) < 2:
        return values[0], values[0]
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[0], q[2]


ACCESS_FIELDS = ("ops", "calls", "steps", "random_rows", "row_bytes")
"""The optional counts of a :class:`Measurement` that the roofs beyond compute and bandwidth
read (see its docstring)."""


@dataclass(frozen=True)
class Measurement:
    """One timed kernel: its raw repetition times and its counts (from the formulas).

    The statistic, chosen here once for every table, plot and verdict, is the **median** of
    the repetitions, with the **interquartile range** as its spread. A measurement holds no
    machine model: :func:`gpuconcepts.roofline.place` reads it against a set of peaks.

    ``flush`` says whether the caches were flushed before each repetition; ``series`` holds
    what was observed alongside the timing (e.g. the KV-cache bytes after each decode step).
    ``group`` names the paired comparison the kernel was timed in ("" when it was timed
    alone): then ``raw_seconds[i]`` ran in round ``i``, beside the ``i``-th repetition of
    every other member of the group (see :class:`Rounds` and :func:`paired`).

    What the roofs beyond compute and bandwidth need (None when unknown or not applicable):
    ``ops``, the operations one call dispatches (counted from the code path,
    :func:`gpuconcepts.kernels.dispatch.count_dispatch`), and ``calls``, those of them that
    Python called (the rest ran inside the framework's C++); ``steps``, how many depend on
    each other in a chain (an RNN's S, a decode's steps); ``random_rows`` and ``row_bytes``,
    rows of that many bytes fetched at random addresses (a random embedding lookup).

    >>> m = Measurement("dlrm-random", "cpu", {"B": 8}, (2e-3, 4e-3, 3e-3), 1e6, 1e7)
    >>> m.seconds, m.iqr_seconds, m.interval_seconds, m.intensity
    (0.003, 0.001, (0.0025, 0.0035), 0.1)
    >>> m.noisy
    True
    >>> [round(rate / 1e6) for rate in m.interval_flops_per_s]
    [286, 400]
    """

    workload: str
    device: str
    params: Mapping[str, object]
    raw_seconds: tuple[float, ...]
    flops: float
    bytes: float
    flush: bool = False
    series: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    group: str = ""
    ops: int | None = None
    steps: int | None = None
    random_rows: int | None = None
    row_bytes: int | None = None
    calls: int | None = None

    def __post_init__(self) -> None:
        for name in ACCESS_FIELDS:
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                      or value < 1):  # fmt: skip
                raise GpuConceptsError(
                    f"Measurement {self.workload!r}: {name} must be a positive integer; "
                    f"got {value!r}"
                )
        if not self.raw_seconds:
            raise GpuConceptsError(f"Measurement {self.workload!r}: raw_seconds is empty")
        bad = [t for t in self.raw_seconds if not _positive(t)]
        if bad:
            raise GpuConceptsError(
                f"Measurement {self.workload!r}: every raw time must be positive; got {bad[0]!r}"
            )
        # a pure data movement (a copy, a gather) does no arithmetic: FLOPs may be zero
        if not (_positive(self.flops) or self.flops == 0) or isinstance(self.flops, bool):
            raise GpuConceptsError(
                f"Measurement {self.workload!r}: flops must be zero or more; got {self.flops!r}"
            )
        if not _positive(self.bytes):
            raise GpuConceptsError(
                f"Measurement {self.workload!r}: bytes must be positive; got {self.bytes!r}"
            )

    @property
    def seconds(self) -> float:
        """Median of the repetitions: the one statistic of the book."""
        return float(statistics.median(self.raw_seconds))

    @property
    def interval_seconds(self) -> tuple[float, float]:
        """The first and third quartiles of the repetitions: the spread shown beside a time."""
        return quartiles(self.raw_seconds)

    @property
    def iqr_seconds(self) -> float:
        """Interquartile range of the repetitions (0 for a single one)."""
        low, high = self.interval_seconds
        return high - low

    @property
    def noisy(self) -> bool:
        """True when the IQR is over 10 % of the median (as torch.utils.benchmark warns)."""
        return self.iqr_seconds > NOISE_THRESHOLD * self.seconds

    @property
    def flops_per_s(self) -> float:
        """Achieved FLOP/s at the median time."""
        return self.flops / self.seconds

    @property
    def bytes_per_s(self) -> float:
        """Achieved bytes/s at the median time (model bytes, see the formulas' traffic model)."""
        return self.bytes / self.seconds

    @property
    def interval_flops_per_s(self) -> tuple[float, float]:
        """FLOP/s at the slow and fast quartile ends of the time: the spread of a rate."""
        fast, slow = self.interval_seconds
        return self.flops / slow, self.flops / fast

    @property
    def interval_bytes_per_s(self) -> tuple[float, float]:
        """Bytes/s at the slow and fast quartile ends of the time."""
        fast, slow = self.interval_seconds
        return self.bytes / slow, self.bytes / fast

    @property
    def intensity(self) -> float:
        """Arithmetic intensity, FLOPs per byte."""
        return self.flops / self.bytes

    def size(self, name: str) -> int:
        """An integer size of the kernel (``B``, ``S``, ``s``...), with a clear error if absent.

        >>> Measurement("mlp", "cpu", {"B": 4}, (1.0,), 1.0, 1.0).size("B")
        4
        """
        value = self.params.get(name)
        if isinstance(value, bool) or not isinstance(value, int):
            raise GpuConceptsError(
                f"measurement {self.workload!r} has no integer size {name!r}; "
                f"params: {dict(self.params)}"
            )
        return value

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict of the fields (what a saved Run stores; the statistics derive)."""
        record: dict[str, Any] = {
            "workload": self.workload,
            "device": self.device,
            "params": dict(self.params),
            "raw_seconds": list(self.raw_seconds),
            "flops": self.flops,
            "bytes": self.bytes,
            "flush": self.flush,
        }
        if self.series:
            record["series"] = {k: list(v) for k, v in self.series.items()}
        if self.group:
            record["group"] = self.group
        for name in ACCESS_FIELDS:
            if getattr(self, name) is not None:
                record[name] = getattr(self, name)
        return record

    @classmethod
    def from_dict(cls, record: Mapping[str, Any]) -> Measurement:
        """The inverse of :meth:`to_dict`; a missing field is a :class:`GpuConceptsError`.

        >>> m = Measurement("mlp", "cpu", {"B": 4}, (1.0, 2.0), 8, 4, flush=True)
        >>> Measurement.from_dict(m.to_dict()) == m
        True
        """
        fields = ("workload", "device", "params", "raw_seconds", "flops", "bytes")
        missing = [f for f in fields if f not in record]
        if missing:
            raise GpuConceptsError(f"missing field {missing[0]!r}")
        if not isinstance(record["params"], Mapping):
            raise GpuConceptsError("params must be an object")
        if not isinstance(record["raw_seconds"], list):
            raise GpuConceptsError("raw_seconds must be a list of seconds")
        series = record.get("series", {})
        if not isinstance(series, Mapping) or not all(isinstance(v, list) for v in series.values()):
            raise GpuConceptsError("series must be an object of lists")
        return cls(
            workload=str(record["workload"]),
            device=str(record["device"]),
            params=dict(record["params"]),
            raw_seconds=tuple(record["raw_seconds"]),
            flops=record["flops"],
            bytes=record["bytes"],
            flush=bool(record.get("flush", False)),
            series={str(k): tuple(v) for k, v in series.items()},
            group=str(record.get("group", "")),
            **{name: record[name] for name in ACCESS_FIELDS if record.get(name) is not None},
        )


# -- cache and memory sizes ------------------------------------------------------------------
_SIZE_SUFFIX = {"K": 1024, "M": MiB, "G": GiB}
DEFAULT_LLC_BYTES = 32 * MiB
"""Fallback last-level cache size when sysfs says nothing (a generous server L3)."""


def parse_cache_size(text: str) -> int:
    """Bytes of a sysfs cache size such as ``32768K``.

    >>> parse_cache_size("32768K"), parse_cache_size("1M"), parse_cache_size("512")
    (33554432, 1048576, 512)
    """
    text = text.strip().upper()
    if text and text[-1] in _SIZE_SUFFIX:
        return int(text[:-1]) * _SIZE_SUFFIX[text[-1]]
    return int(text)


def cpu_last_level_cache_bytes(
    cache_dir: Path = Path("/sys/devices/system/cpu/cpu0/cache"),
) -> int:
    """Size of the highest-level data/unified cache seen by CPU 0 (the last of
    :func:`cpu_cache_levels`).

    Falls back to :data:`DEFAULT_LLC_BYTES` when sysfs is missing or unreadable.
    """
    levels = cpu_cache_levels(cache_dir)
    return levels[-1][1] if levels else DEFAULT_LLC_BYTES


def cpu_cache_levels(
    cache_dir: Path = Path("/sys/devices/system/cpu/cpu0/cache"),
) -> tuple[tuple[str, int], ...]:
    """The data caches CPU 0 sees, smallest first: ``(("L1", 32768), ("L2", ...), ...)``.

    From sysfs; instruction caches are left out. Empty when sysfs says nothing.
    """
    levels: dict[int, int] = {}
    try:
        for index in sorted(cache_dir.glob("index*")):
            if (index / "type").read_text().strip() == "Instruction":
                continue
            level = int((index / "level").read_text())
            levels[level] = max(
                levels.get(level, 0), parse_cache_size((index / "size").read_text())
            )
    except (OSError, ValueError):
        return ()
    return tuple((f"L{level}", size) for level, size in sorted(levels.items()))


DEFAULT_CACHE_LINE_BYTES = 64
"""Fallback CPU cache line when sysfs says nothing: the line of every x86-64 CPU and of most
Arm server cores."""

GPU_SECTOR_BYTES = 32
"""The unit an NVIDIA GPU's L2 cache and DRAM move: a 32-byte sector (four per 128-byte cache
line), as the CUDA C++ Best Practices Guide describes coalesced access since compute capability
6.0. CUDA does not report it, so it is written here once."""

TRANSFER_UNIT_NAMES = {"cpu": "cache line", "cuda": "sector"}
"""What each device calls its unit of memory transfer (see :func:`transfer_unit_bytes`)."""


def cpu_cache_line_bytes(cache_dir: Path = Path("/sys/devices/system/cpu/cpu0/cache")) -> int:
    """The cache line of CPU 0's data caches (sysfs ``coherency_line_size``, the largest when
    the levels differ), or :data:`DEFAULT_CACHE_LINE_BYTES` when sysfs says nothing.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> cpu_cache_line_bytes(folder)  # no sysfs entries: the fallback
    64
    >>> (folder / "index0").mkdir()
    >>> _ = (folder / "index0" / "type").write_text("Data\\n")
    >>> _ = (folder / "index0" / "coherency_line_size").write_text("128\\n")
    >>> cpu_cache_line_bytes(folder)
    128
    """
    sizes = []
    try:
        for index in sorted(cache_dir.glob("index*")):
            if (index / "type").read_text().strip() == "Instruction":
                continue
            sizes.append(int((index / "coherency_line_size").read_text()))
    except (OSError, ValueError):
        return DEFAULT_CACHE_LINE_BYTES
    return max(sizes, default=DEFAULT_CACHE_LINE_BYTES)


def transfer_unit_bytes(device: str) -> int:
    """Bytes memory moves as one unit on ``device``: the CPU's cache line (sysfs), or a GPU's
    :data:`GPU_SECTOR_BYTES`. A random access narrower than this still costs the whole unit
    (see :data:`gpuconcepts.formulas.random_row_bytes`)."""
    return GPU_SECTOR_BYTES if device == "cuda" else cpu_cache_line_bytes()


def cache_levels(device: str) -> tuple[tuple[str, int], ...]:
    """The caches between the cores and DRAM: a CPU's L1, L2, L3 (sysfs), a GPU's L2."""
    if device == "cuda":
        return (("L2", last_level_cache_bytes(device)),)
    return cpu_cache_levels()


def last_level_cache_bytes(device: str) -> int:
    """LLC of the CPU (sysfs) or the L2 of the current CUDA device."""
    if device == "cuda":
        import torch

        props = torch.cuda.get_device_properties(torch.cuda.current_device())
        return int(props.L2_cache_size)
    return cpu_last_level_cache_bytes()


def flush_buffer_bytes(cache_bytes: int) -> int:
    """Bytes to write so that nothing of a kernel's data survives in a cache of this size.

    Four times the cache (the same margin as the STREAM arrays: caches are not strictly
    LRU, and 2× proved too little on the dev CPU), at least 8 MiB, in whole MiB.

    >>> flush_buffer_bytes(50 * 1024**2) // 1024**2
    200
    >>> flush_buffer_bytes(1024) // 1024**2
    8
    """
    wanted = max(4 * cache_bytes, 8 * MiB)
    return -(-wanted // MiB) * MiB


# -- STREAM arrays ----------------------------------------------------------------------------
COLUMNS = 1024
"""STREAM arrays are N × 1024 tables (the formulas count an N × d array)."""

LLC_MULTIPLE = 4
"""STREAM arrays are at least this many times the last-level cache."""


def stream_array_bytes(preset_bytes: int, cache_bytes: int, free_bytes: int) -> int:
    """Bytes of one STREAM array: the preset, raised to 4× the cache, capped to fit 3 in half
    the free memory; a whole number of 1024-element float32 rows.

    >>> stream_array_bytes(128 * 1024**2, 32 * 1024**2, 64 * 1024**3) // 1024**2
    128
    >>> stream_array_bytes(64 * 1024**2, 50 * 1024**2, 64 * 1024**3) // 1024**2
    200
    >>> stream_array_bytes(2048 * 1024**2, 50 * 1024**2, 3 * 1024**3) // 1024**2
    512
    """
    wanted = max(preset_bytes, LLC_MULTIPLE * cache_bytes)
    wanted = min(wanted, free_bytes // 6)
    row = COLUMNS * 4
    return max(row, wanted // row * row)


def stream_rows(array_bytes: int, s: int = 4) -> int:
    """Rows of a STREAM array of about ``array_bytes`` (``COLUMNS`` elements of ``s`` bytes each).

    >>> stream_rows(128 * 1024**2)
    32768
    """
    return max(1, array_bytes // (COLUMNS * s))


def make_flusher(device: str) -> Callable[[], None]:
    """A function that evicts the last-level cache by writing a buffer larger than it.

    >>> flush = make_flusher("cpu")
    >>> flush()
    """
    import torch

    size = flush_buffer_bytes(last_level_cache_bytes(device))
    buffer = torch.zeros(size // 4, dtype=torch.int32, device=device)

    def flush() -> None:
        if device == "cuda":
            # triton's do_bench: zeroing a buffer larger than L2 leaves nothing else in it.
            buffer.zero_()
        else:
            # On a CPU a large zero fill uses non-temporal stores that bypass the cache (and
            # so do not evict it); a read-modify-write goes through the cache.
            buffer.add_(1)

    return flush


def parse_meminfo(text: str) -> int:
    """Available bytes from the text of /proc/meminfo (MemAvailable, else MemFree).

    >>> parse_meminfo("MemTotal: 100 kB\\nMemFree: 10 kB\\nMemAvailable: 60 kB\\n")
    61440
    """
    fields: dict[str, int] = {}
    for line in text.splitlines():
        name, _, rest = line.partition(":")
        parts = rest.split()
        if parts and parts[0].isdigit():
            scale = 1024 if len(parts) > 1 and parts[1].lower() == "kb" else 1
            fields[name.strip()] = int(parts[0]) * scale
    for key in ("MemAvailable", "MemFree"):
        if key in fields:
            return fields[key]
    raise GpuConceptsError("/proc/meminfo has neither MemAvailable nor MemFree")


def cpu_free_memory_bytes(meminfo: Path = Path("/proc/meminfo")) -> int:
    """Available host memory: /proc/meminfo, else ``os.sysconf`` free pages × page size."""
    try:
        return parse_meminfo(meminfo.read_text())
    except (OSError, GpuConceptsError):
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (OSError, ValueError, AttributeError):  # pragma: no cover - non-POSIX
        return 4 * 1024**3


def free_memory_bytes(device: str) -> int:
    """Free memory of a device: host memory for the CPU, ``torch.cuda.mem_get_info`` for CUDA."""
    if device == "cuda":
        import torch

        free, _total = torch.cuda.mem_get_info()
        return int(free)
    return cpu_free_memory_bytes()


# -- timers ----------------------------------------------------------------------------------
class EventLike(Protocol):
    """The part of ``torch.cuda.Event`` the CUDA timer uses."""

    def record(self) -> None: ...

    def elapsed_time(self, end: Any) -> float: ...


class CudaBackend(Protocol):
    """Event factory and synchronisation; the real one wraps ``torch.cuda``, tests use fakes."""

    def event(self) -> EventLike: ...

    def synchronize(self) -> None: ...


class TorchCudaBackend:
    """:class:`CudaBackend` over ``torch.cuda``."""

    def event(self) -> EventLike:
        import torch

        event: EventLike = torch.cuda.Event(enable_timing=True)  # type: ignore[no-untyped-call]
        return event

    def synchronize(self) -> None:
        import torch

        torch.cuda.synchronize()


def _check_repeats(repeats: int, warmup: int) -> None:
    if repeats < 1:
        raise GpuConceptsError(f"repeats must be at least 1; got {repeats}")
    if warmup < 0:
        raise GpuConceptsError(f"warmup must be 0 or more; got {warmup}")


def calls_per_repetition(estimate_seconds: float, min_rep_seconds: float, cap: int = 1000) -> int:
    """How many calls one timed repetition holds so it lasts at least ``min_rep_seconds``.

    >>> calls_per_repetition(0.02, 1e-3), calls_per_repetition(1e-5, 1e-3), calls_per_repetition(0, 1)
    (1, 100, 1000)
    """
    if estimate_seconds <= 0:
        return cap
    return max(1, min(cap, math.ceil(min_rep_seconds / estimate_seconds)))


def time_cpu(
    fn: Callable[[], object],
    *,
    repeats: int = 7,
    warmup: int = 1,
    flush: Callable[[], None] | None = None,
    num_threads: int | None = None,
    min_rep_seconds: float = 1e-3,
) -> tuple[float, ...]:
    """Seconds per call for each of ``repeats`` repetitions, on all CPU threads.

    torch runs with ``num_threads`` (default: all of :func:`cpu_threads`) for the whole
    timing; ``torch.utils.benchmark.Timer`` would default to one thread, halving a 2-core
    result, and its ``timeit`` runs two untimed calls right before the timed ones, which
    would undo a cache flush, so the loop here is a plain ``perf_counter`` one.
    Without ``flush`` a repetition of a fast kernel holds several calls (at least
    ``min_rep_seconds`` in all) and reports their mean. With ``flush`` (memory-bound
    kernels) each repetition is exactly one call right after ``flush()``, which is not timed.

    >>> times = time_cpu(lambda: sum(range(100)), repeats=3)
    >>> len(times), all(t > 0 for t in times)
    (3, True)
    """
    _check_repeats(repeats, warmup)
    import torch

    threads = num_threads if num_threads is not None else cpu_threads()
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        estimate = math.inf
        for _ in range(max(1, warmup)):
            if flush is not None:
                flush()
            start = time.perf_counter()
            fn()
            estimate = min(estimate, time.perf_counter() - start)
        number = 1 if flush is not None else calls_per_repetition(estimate, min_rep_seconds)
        times = []
        for _ in range(repeats):
            if flush is not None:
                flush()
            start = time.perf_counter()
            for _ in range(number):
                fn()
            times.append((time.perf_counter() - start) / number)
    finally:
        torch.set_num_threads(previous)
    return tuple(times)


def time_cuda(
    fn: Callable[[], object],
    *,
    repeats: int = 7,
    warmup: int = 3,
    flush: Callable[[], None] | None = None,
    backend: CudaBackend | None = None,
) -> tuple[float, ...]:
    """Seconds of each of ``repeats`` calls, timed with one CUDA event pair per call.

    The triton ``do_bench`` recipe: ``warmup`` untimed calls, then for each repetition
    ``flush()`` (if given; it writes a buffer larger than L2) *before* the start event, the
    call between a start and an end event, and one synchronisation at the end before the
    elapsed times (milliseconds) are read.
    """
    _check_repeats(repeats, warmup)
    cuda = backend if backend is not None else TorchCudaBackend()
    for _ in range(warmup):
        fn()
    cuda.synchronize()
    pairs = []
    for _ in range(repeats):
        if flush is not None:
            flush()
        start, end = cuda.event(), cuda.event()
        start.record()
        fn()
        end.record()
        pairs.append((start, end))
    cuda.synchronize()
    return tuple(start.elapsed_time(end) / 1000.0 for start, end in pairs)


def time_function(
    fn: Callable[[], object],
    device: str,
    *,
    repeats: int = 7,
    warmup: int | None = None,
    flush: bool = False,
) -> tuple[float, ...]:
    """Time ``fn`` on a resolved device; ``flush=True`` evicts caches before each repetition.

    >>> len(time_function(lambda: None, "cpu", repeats=2))
    2
    """
    flusher = make_flusher(device) if flush else None
    if device == "cuda":
        return time_cuda(fn, repeats=repeats, warmup=3 if warmup is None else warmup, flush=flusher)
    if device == "cpu":
        return time_cpu(fn, repeats=repeats, warmup=1 if warmup is None else warmup, flush=flusher)
    raise GpuConceptsError(f"device {device!r} is not a resolved device (cpu or cuda)")


# -- paired rounds ---------------------------------------------------------------------------
class Timeable(Protocol):
    """What :class:`Rounds` times: a call, whether to flush the caches before it, and the
    settings it runs under (a :class:`gpuconcepts.kernels._common.Kernel` is one)."""

    @property
    def fn(self) -> Callable[[], Any]: ...

    @property
    def flush(self) -> bool: ...

    def settings(self) -> AbstractContextManager[None]: ...


class Rounds:
    """Kernels that are compared, timed in interleaved rounds.

    Each round times every kernel once (one repetition: one call right after a cache flush
    for a memory-bound kernel, else enough calls to last ``min_rep_seconds``), in an order
    shuffled anew each round, so that drift and background load fall on all of them alike and
    the ``i``-th times of two kernels can be compared as a pair. :meth:`more` adds rounds;
    :attr:`times` holds each kernel's times, round by round.

    >>> import contextlib
    >>> class Call:
    ...     flush = False
    ...     def __init__(self): self.fn = lambda: sum(range(50))
    ...     def settings(self): return contextlib.nullcontext()
    >>> rounds = Rounds([Call(), Call()], "cpu")
    >>> rounds.more(3)
    >>> [len(t) for t in rounds.times], rounds.count
    ([3, 3], 3)
    """

    def __init__(
        self,
        kernels: Sequence[Timeable],
        device: str,
        *,
        seed: int = 0,
        min_rep_seconds: float = 1e-3,
    ) -> None:
        if not kernels:
            raise GpuConceptsError("Rounds: give at least one kernel to time")
        self.kernels = tuple(kernels)
        self.device = device
        self._order = random.Random(seed)
        self._flusher = make_flusher(device) if any(k.flush for k in kernels) else None
        self.times: tuple[list[float], ...] = tuple([] for _ in kernels)
        # warm-up: one untimed call each, which also says how many calls a repetition needs
        self._calls = tuple(
            1 if k.flush else calls_per_repetition(self._repetition(k, 1), min_rep_seconds)
            for k in self.kernels
        )

    @property
    def count(self) -> int:
        """Rounds timed so far."""
        return len(self.times[0])

    def _repetition(self, kernel: Timeable, calls: int) -> float:
        """Seconds per call of one repetition of ``calls`` calls (flushed first if needed)."""
        import torch

        with kernel.settings():
            if kernel.flush and self._flusher is not None:
                self._flusher()
            if self.device == "cuda":
                backend = TorchCudaBackend()
                backend.synchronize()
                start, end = backend.event(), backend.event()
                start.record()
                for _ in range(calls):
                    kernel.fn()
                end.record()
                backend.synchronize()
                return start.elapsed_time(end) / 1000.0 / calls
            threads = cpu_threads()
            previous = torch.get_num_threads()
            torch.set_num_threads(threads)
            try:
                begin = time.perf_counter()
                for _ in range(calls):
                    kernel.fn()
                return (time.perf_counter() - begin) / calls
            finally:
                torch.set_num_threads(previous)

    def more(self, rounds: int = 1) -> None:
        """Time ``rounds`` more rounds, each kernel once per round in a shuffled order."""
        for _ in range(rounds):
            order = list(range(len(self.kernels)))
            self._order.shuffle(order)
            for i in order:
                self.times[i].append(self._repetition(self.kernels[i], self._calls[i]))


# -- noise -----------------------------------------------------------------------------------
REFERENCE_REPEATS = 21
"""Repetitions of the noise probe's reference kernel (a few milliseconds in all)."""


@dataclass(frozen=True)
class NoiseProbe:
    """How busy the machine was at one moment: its load, its clock and the spread of a fixed
    reference kernel (a small matrix product timed :data:`REFERENCE_REPEATS` times).

    A run takes one before and one after its measurements and keeps both in its provenance,
    so a reader sees how much noise its verdicts had to get through.

    >>> probe = NoiseProbe(load_average=0.2, cores=2, cpu_mhz=None, reference_seconds=1e-4,
    ...                    reference_spread=0.35)
    >>> probe.busy, probe.text()
    (True, "load average 0.2 on 2 cores, a reference kernel's spread 35%")
    """

    load_average: float
    cores: int
    cpu_mhz: float | None
    reference_seconds: float
    reference_spread: float

    @property
    def busy(self) -> bool:
        """True when the reference kernel's spread (IQR over median) was over
        :data:`NOISE_THRESHOLD`, the level at which a single measurement is called noisy."""
        return self.reference_spread > NOISE_THRESHOLD

    def text(self) -> str:
        """The probe in words."""
        clock = f", {plain_number(round(self.cpu_mhz))} MHz" if self.cpu_mhz else ""
        return (
            f"load average {significant(self.load_average, 2)} on "
            f"{plural(self.cores, 'core')}{clock}, a reference kernel's spread "
            f"{percent(self.reference_spread)}"
        )


def _cpuinfo(cpuinfo: Path) -> tuple[set[str], list[float]] | None:
    """The CPU flags and each core's "cpu MHz" in /proc/cpuinfo (None when unreadable)."""
    try:
        lines = cpuinfo.read_text().splitlines()
    except OSError:
        return None
    flags: set[str] = set()
    mhz: list[float] = []
    for line in lines:
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):  # x86, Arm
            flags.update(value.split())
        elif key.strip() == "cpu MHz":
            try:
                mhz.append(float(value))
            except ValueError:
                continue
    return flags, mhz


def cpu_mhz(cpuinfo: Path = Path("/proc/cpuinfo")) -> float | None:
    """The mean clock of the CPU's cores from /proc/cpuinfo ("cpu MHz"), when it says."""
    found = _cpuinfo(cpuinfo)
    if found is None or not found[1]:
        return None
    return sum(found[1]) / len(found[1])


VECTOR_BITS = (("avx512f", 512), ("avx2", 256), ("avx", 256), ("sse2", 128), ("asimd", 128))
"""The widest vector a CPU flag promises, widest first (``asimd``: Arm's 128-bit NEON; SVE's
width is not in the flags, so an SVE core is credited with NEON's)."""

FMA_UNITS = 2
"""Fused multiply-add units per core: two on x86 cores since Haswell and Zen and on Arm's
Neoverse cores. No file says it, and a limit must not sit below what a core can do, so two is
assumed for every core that has FMA (one when the flags show no FMA)."""


@dataclass(frozen=True)
class CpuVector:
    """What /proc/cpuinfo says of one core's arithmetic: its widest vector, its FMA units and
    its fastest clock (the largest "cpu MHz" of any core, or cpufreq's maximum when sysfs has
    it: a VM's /proc/cpuinfo shows the base clock, and boost may pass it).

    >>> v = CpuVector(vector_bits=512, fma_units=2, hz=2.6e9)
    >>> v.lanes(4), v.lanes(2)
    (16, 32)
    """

    vector_bits: int
    fma_units: int
    hz: float

    def lanes(self, element_bytes: int) -> int:
        """Elements of ``element_bytes`` one vector holds."""
        return self.vector_bits // (8 * element_bytes)


def cpu_vector(
    cpuinfo: Path = Path("/proc/cpuinfo"), cpufreq: Path = Path("/sys/devices/system/cpu")
) -> CpuVector | None:
    """This CPU's :class:`CpuVector`, or None when /proc/cpuinfo names no known vector or no
    clock.

    >>> import tempfile
    >>> info = Path(tempfile.mkdtemp()) / "cpuinfo"
    >>> _ = info.write_text("flags\\t: fpu sse2 avx avx2 fma\\ncpu MHz\\t: 2400.0\\n"
    ...                     "flags\\t: fpu sse2 avx avx2 fma\\ncpu MHz\\t: 2600.5\\n")
    >>> cpu_vector(info, info.parent)
    CpuVector(vector_bits=256, fma_units=2, hz=2600500000.0)
    """
    found = _cpuinfo(cpuinfo)
    if found is None:
        return None
    flags, mhz = found
    hz = max(mhz, default=0.0) * 1e6
    for path in cpufreq.glob("cpu[0-9]*/cpufreq/cpuinfo_max_freq"):
        try:
            hz = max(hz, int(path.read_text()) * 1e3)  # kHz
        except (OSError, ValueError):
            continue
    bits = next((width for flag, width in VECTOR_BITS if flag in flags), None)
    if bits is None or hz <= 0:
        return None
    units = FMA_UNITS if flags & {"fma", "avx512f", "asimd"} else 1
    return CpuVector(vector_bits=bits, fma_units=units, hz=hz)


def probe_noise(device: str) -> NoiseProbe:
    """A :class:`NoiseProbe` of this machine now (a few milliseconds)."""
    import torch

    n = 256 if device == "cpu" else 2048
    a = torch.ones((n, n), device=device)
    b = torch.ones((n, n), device=device)
    times = Measurement(
        "probe",
        device,
        {},
        time_function(lambda: a @ b, device, repeats=REFERENCE_REPEATS, warmup=3),
        0,
        1,
    )
    try:
        load = os.getloadavg()[0]
    except OSError:  # pragma: no cover - not on this platform
        load = 0.0
    return NoiseProbe(
        load_average=round(load, 2),
        cores=os.cpu_count() or 1,
        cpu_mhz=cpu_mhz() if device == "cpu" else None,
        reference_seconds=times.seconds,
        reference_spread=times.iqr_seconds / times.seconds,
    )


BUSY_CORE_FRACTION = 0.5
"""A core another program kept busy more than half of a short sample is left to it: a kernel
whose threads share a busy core runs at the pace of its slowest thread, which would slow some
kernels far more than others and decide verdicts by the load rather than by the hardware."""


def parse_proc_stat(text: str) -> dict[int, tuple[int, int]]:
    r"""(busy, total) jiffies of each core from the text of /proc/stat.

    >>> parse_proc_stat("cpu  9 0 9 9 0\ncpu0 10 0 5 80 5\ncpu1 1 0 1 98 0\n")
    {0: (15, 100), 1: (2, 100)}
    """
    out = {}
    for line in text.splitlines():
        name, *fields = line.split()
        if not name.startswith("cpu") or name == "cpu":
            continue
        values = [int(v) for v in fields]
        idle = values[3] + (values[4] if len(values) > 4 else 0)  # idle and iowait
        out[int(name[3:])] = (sum(values) - idle, sum(values))
    return out


def busy_cores(sample_seconds: float = 0.5, stat: Path = Path("/proc/stat")) -> frozenset[int]:
    """The cores of this process's affinity that other programs kept busy over a short sample
    (more than :data:`BUSY_CORE_FRACTION`; empty where /proc/stat cannot be read)."""
    try:
        before = parse_proc_stat(stat.read_text())
        time.sleep(sample_seconds)
        after = parse_proc_stat(stat.read_text())
        mine = os.sched_getaffinity(0)
    except (OSError, AttributeError, ValueError):
        return frozenset()
    busy = set()
    for core in mine & before.keys() & after.keys():
        worked = after[core][0] - before[core][0]
        elapsed = after[core][1] - before[core][1]
        if elapsed > 0 and worked / elapsed > BUSY_CORE_FRACTION:
            busy.add(core)
    return frozenset(busy)


@contextlib.contextmanager
def free_cores(device: str) -> Iterator[frozenset[int]]:
    """Run the block on the cores no other program keeps busy: this process's affinity and torch's
    threads are narrowed to them (at least one core), then restored. On a GPU (whose kernels do
    not share the CPU's cores) or a quiet machine, nothing changes. Yields the cores left out."""
    import torch

    busy = busy_cores() if device == "cpu" else frozenset()
    mine = os.sched_getaffinity(0) if busy else set()
    free = mine - busy
    if not busy or not free:
        yield frozenset()
        return
    threads = torch.get_num_threads()
    os.sched_setaffinity(0, free)
    torch.set_num_threads(min(threads, len(free)))
    try:
        yield busy
    finally:
        torch.set_num_threads(threads)
        os.sched_setaffinity(0, mine)
