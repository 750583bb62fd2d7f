"""The memory a run probes of its machine: the caches between the cores and DRAM (their sizes
and line), the unit memory moves, the flush that empties the caches before a timed repetition,
the STREAM arrays sized past them, and the free memory."""

# torch is imported inside functions on purpose (README, Rules: 3).
# ruff: noqa: PLC0415

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path

from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.units import GiB, MiB

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


SYSFS_CACHE_ENV = "GPUCONCEPTS_CPU_CACHE_DIR"
"""An environment variable naming a folder laid out as sysfs's ``cpu0/cache`` (``index*/level``,
``type``, ``size``, ``coherency_line_size``) to read instead: a run on this machine that sees
another machine's reported caches (a 1.1 GiB L3, none), as the book's tests and
``benchmarks/bench_cost.py --sysfs`` do. An empty folder reports no caches."""


def sysfs_cache_dir() -> Path:
    """CPU 0's caches in sysfs, or the folder :data:`SYSFS_CACHE_ENV` names."""
    return Path(os.environ.get(SYSFS_CACHE_ENV) or "/sys/devices/system/cpu/cpu0/cache")


def write_cache_dir(folder: Path, levels: dict[int, int], line_bytes: int = 64) -> Path:
    """Lay out ``folder`` as sysfs's ``cpu0/cache`` with one data cache per level of ``levels``
    (level -> bytes), for :data:`SYSFS_CACHE_ENV`: how the tests and benchmarks present another
    machine's caches.

    >>> import tempfile
    >>> folder = write_cache_dir(Path(tempfile.mkdtemp()), {2: 2**21, 3: 1152 * 2**20})
    >>> cpu_cache_levels(folder), cpu_last_level_cache_bytes(folder) // 2**20
    ((('L2', 2097152), ('L3', 1207959552)), 1152)
    """
    folder.mkdir(parents=True, exist_ok=True)
    for number, (level, size) in enumerate(sorted(levels.items())):
        index = folder / f"index{number}"
        index.mkdir(exist_ok=True)
        for name, value in (
            ("level", level),
            ("type", "Unified" if level > 1 else "Data"),
            ("size", f"{size // 1024}K"),
            ("coherency_line_size", line_bytes),
        ):
            (index / name).write_text(f"{value}\n")
    return folder


def cpu_last_level_cache_bytes(cache_dir: Path | None = None) -> int:
    """Size of the highest-level data/unified cache seen by CPU 0 (the last of
    :func:`cpu_cache_levels`).

    Falls back to :data:`DEFAULT_LLC_BYTES` when sysfs is missing or unreadable.
    """
    levels = cpu_cache_levels(cache_dir)
    return levels[-1][1] if levels else DEFAULT_LLC_BYTES


def cpu_cache_levels(cache_dir: Path | None = None) -> tuple[tuple[str, int], ...]:
    """The data caches CPU 0 sees, smallest first: ``(("L1", 32768), ("L2", ...), ...)``.

    From sysfs; instruction caches are left out. Empty when sysfs says nothing.
    """
    levels: dict[int, int] = {}
    try:
        for index in sorted((cache_dir or sysfs_cache_dir()).glob("index*")):
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


def cpu_cache_line_bytes(cache_dir: Path | None = None) -> int:
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
        for index in sorted((cache_dir or sysfs_cache_dir()).glob("index*")):
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


def flush_buffer_bytes(beyond_bytes: int) -> int:
    """Bytes to write so that nothing of a kernel's data survives in the caches: a working set
    DRAM serves (:attr:`gpuconcepts.measure.hierarchy.Sizing.beyond_bytes`, twice where the
    measured sweep found DRAM's plateau), at least 8 MiB, in whole MiB.

    >>> flush_buffer_bytes(64 * 1024**2) // 1024**2
    64
    >>> flush_buffer_bytes(1024) // 1024**2
    8
    """
    wanted = max(beyond_bytes, 8 * MiB)
    return -(-wanted // MiB) * MiB


FLUSH_BEFORE_SWEEP_BYTES = 128 * MiB
"""The most a CPU's flush writes before a sweep has measured where DRAM begins (4x a 32 MiB
L3): sysfs may report an L3 of hundreds of MiB that other tenants share, and a flush of 4x that
took most of a run (2026-12-06, a 2-core Xeon reporting 300 MiB: 1.2 GB written before every
flushed repetition)."""

_FLUSH_BYTES: dict[str, int] = {}


def set_flush_bytes(device: str, beyond_bytes: int) -> None:
    """Flush ``device``'s caches with :func:`flush_buffer_bytes` of ``beyond_bytes`` from now
    on in this process (what the measured hierarchy says reaches DRAM: the peaks set it once
    their sweep is measured, and a lab or an analysis that reuses saved peaks sets it again)."""
    _FLUSH_BYTES[device] = flush_buffer_bytes(beyond_bytes)


def flush_bytes(device: str) -> int:
    """Bytes a flush of ``device`` writes: as :func:`set_flush_bytes` said, else 4x the last
    cache (a GPU's L2 from its properties; a CPU's sysfs size, at most
    :data:`FLUSH_BEFORE_SWEEP_BYTES`)."""
    if device in _FLUSH_BYTES:
        return _FLUSH_BYTES[device]
    wanted = 4 * last_level_cache_bytes(device)
    return flush_buffer_bytes(wanted if device == "cuda" else min(wanted, FLUSH_BEFORE_SWEEP_BYTES))


# -- STREAM arrays ----------------------------------------------------------------------------
COLUMNS = 1024
"""STREAM arrays are N × 1024 tables (the formulas count an N × d array)."""

LLC_MULTIPLE = 4
"""STREAM arrays are at least this many times the last-level cache."""


def stream_array_bytes(
    preset_bytes: int, cache_bytes: int, free_bytes: int, largest_bytes: int | None = None
) -> int:
    """Bytes of one STREAM array: the preset, raised to 4× the cache, capped to fit 3 in half
    the free memory and at ``largest_bytes`` (the run's budget,
    :func:`~gpuconcepts.measure.hierarchy.largest_array_bytes`); a whole number of
    1024-element float32 rows.

    >>> stream_array_bytes(128 * 1024**2, 32 * 1024**2, 64 * 1024**3) // 1024**2
    128
    >>> stream_array_bytes(64 * 1024**2, 50 * 1024**2, 64 * 1024**3) // 1024**2
    200
    >>> stream_array_bytes(2048 * 1024**2, 50 * 1024**2, 3 * 1024**3) // 1024**2
    512
    >>> stream_array_bytes(128 * 1024**2, 300 * 1024**2, 64 * 1024**3, 256 * 1024**2) // 1024**2
    256
    """
    wanted = max(preset_bytes, LLC_MULTIPLE * cache_bytes)
    wanted = min(wanted, free_bytes // 6, largest_bytes or wanted)
    row = COLUMNS * 4
    return max(row, wanted // row * row)


def stream_rows(array_bytes: int, s: int = 4) -> int:
    """Rows of a STREAM array of about ``array_bytes`` (``COLUMNS`` elements of ``s`` bytes each).

    >>> stream_rows(128 * 1024**2)
    32768
    """
    return max(1, array_bytes // (COLUMNS * s))


def make_flusher(device: str) -> Callable[[], None]:
    """A function that evicts the caches by writing :func:`flush_bytes` of a buffer (one buffer
    per device and size, made once: allocating it again for every timed group cost its page
    faults each time).

    >>> flush = make_flusher("cpu")
    >>> flush()
    """
    return _flusher(device, flush_bytes(device))


@functools.lru_cache(maxsize=2)
def _flusher(device: str, nbytes: int) -> Callable[[], None]:
    import torch

    buffer = torch.zeros(nbytes // 4, dtype=torch.int32, device=device)

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
