"""The working-set sweep and the cache levels it finds: the read bandwidth of arrays from a
few KiB to the largest the run's budget allows; where it levels off is where DRAM begins."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence

import torch

from gpuconcepts.kernels.ceilings.rounds import SweepPoint, median_in_rounds
from gpuconcepts.measure import time_function
from gpuconcepts.roofline import MemoryLevel
from gpuconcepts.units import MiB

SWEEP_SMALLEST = 4 * 1024
"""The smallest working set of the cache sweep: well inside any L1."""

SWEEP_READ_BYTES = 64 * MiB
"""Bytes one timed call of the sweep reads (the working set read again and again), so that a
call outlasts its own overhead even when the working set is a few KiB."""


def sweep_sizes(top: int, smallest: int = SWEEP_SMALLEST) -> list[int]:
    """Working sets of the cache sweep: powers of two from ``smallest`` to ``top`` (the largest
    array the run's budget allows, :attr:`~gpuconcepts.measure.hierarchy.Sizing.largest_array_bytes`).

    >>> [s // 1024 for s in sweep_sizes(256 * 1024)]
    [4, 8, 16, 32, 64, 128, 256]
    """
    sizes = [smallest]
    while sizes[-1] * 2 <= top:
        sizes.append(sizes[-1] * 2)
    return sizes


def read_bandwidth(device: str, working_set: int, *, repeats: int = 5) -> float:
    """Bytes/s of reading a ``working_set``-byte float32 array again and again in one call.

    The array is broadcast (a stride-0 view, no copy) to as many rows as make
    :data:`SWEEP_READ_BYTES` and summed: every row reads the same bytes, so once the first
    has brought them into a cache that holds them, the rest is served from that cache.
    """
    read, nbytes = _repeated_read(device, working_set)
    return nbytes / statistics.median(time_function(read, device, repeats=repeats, warmup=1))


def _repeated_read(device: str, working_set: int) -> tuple[Callable[[], object], int]:
    """:func:`read_bandwidth`'s call, and the bytes one call reads."""
    n = max(1, working_set // 4)
    rows = max(1, SWEEP_READ_BYTES // (4 * n))
    view = torch.ones(n, dtype=torch.float32, device=device).expand(rows, n)
    out = torch.empty((), dtype=torch.float32, device=device)
    return (lambda: torch.sum(view, dim=(0, 1), out=out)), rows * n * 4


def working_set_sweep(
    device: str,
    top: int,
    *,
    repeats: int = 5,
    keep: dict[int, tuple[float, ...]] | None = None,
) -> tuple[tuple[int, float], ...]:
    """The read bandwidth of every working set of :func:`sweep_sizes` up to ``top``, as
    (bytes, bytes/s), every working set read once a round (:func:`median_in_rounds`);
    ``keep``, when given, receives each working set's seconds round by round, by its bytes."""
    sizes = sweep_sizes(top)
    reads = [_repeated_read(device, size) for size in sizes]
    times: list[tuple[float, ...]] = []
    points = [SweepPoint(read) for read, _ in reads]
    middle = median_in_rounds(points, device, repeats=repeats, keep=times)
    if keep is not None and times:
        keep.update(zip(sizes, times, strict=True))
    return tuple(
        (size, nbytes / t) for size, (_, nbytes), t in zip(sizes, reads, middle, strict=True)
    )


MEASURED_LEVEL = "LLC"
"""The name of a cache level that sysfs does not name and the working-set sweep found: faster
than DRAM up to where DRAM's plateau begins (:func:`cache_hierarchy`)."""


def cache_hierarchy(
    levels: Sequence[tuple[str, int]],
    sweep: Sequence[tuple[int, float]],
    dram_bytes_per_s: float,
    dram_start: int | None,
) -> tuple[MemoryLevel, ...]:
    """Each cache level's measured read bandwidth, from the working-set sweep.

    A level's bandwidth is the best of the sweep's working sets that fit in half of it and not
    in the level before (the other half leaves room for what else the machine keeps there).
    A level ends where the sweep found DRAM's plateau (``dram_start``), whatever sysfs says of
    its size: a shared L3 of hundreds of MiB reaches only so far for this process. A level
    that came out no faster than every level behind it and DRAM is left out: a cache slower
    than the memory it caches is a noisy measurement, and would mislabel kernels.
    Where sysfs names no level reaching that far (no L3 in sysfs, as on Arm, Apple and some
    VMs, or one smaller than the sweep shows), the working sets between its last level and
    DRAM's plateau are served by a cache all the same: :data:`MEASURED_LEVEL`, up to the plateau.

    >>> sweep = ((2**15, 1.3e11), (2**20, 9e10), (2**22, 2.3e10), (2**25, 1.3e10))
    >>> [(level.name, level.size_bytes >> 20) for level in cache_hierarchy(
    ...     (("L1", 2**16), ("L2", 2**21), ("L3", 300 * 2**20)), sweep, 1.3e10, 2**25)]
    [('L1', 0), ('L2', 2), ('L3', 32)]
    >>> [(level.name, level.size_bytes >> 20) for level in cache_hierarchy(
    ...     (("L1", 2**16), ("L2", 2**21)), sweep, 1.3e10, 2**25)]  # sysfs names no L3
    [('L1', 0), ('L2', 2), ('LLC', 32)]
    """
    found = []
    below = 0
    for name, sysfs_size in levels:
        size = min(sysfs_size, dram_start or sysfs_size)
        inside = [rate for s, rate in sweep if below < s <= size // 2]
        if inside:
            found.append(MemoryLevel(name, size, max(inside)))
        below = size
    if dram_start is not None and below < dram_start:
        inside = [rate for s, rate in sweep if below < s <= dram_start // 2]
        if inside:
            found.append(MemoryLevel(MEASURED_LEVEL, dram_start, max(inside)))
    kept: list[MemoryLevel] = []
    for level in reversed(found):  # from the largest cache down
        if level.bytes_per_s > max([dram_bytes_per_s, *(k.bytes_per_s for k in kept)]):
            kept.insert(0, level)
    return tuple(kept)


def level_seconds(
    levels: Sequence[MemoryLevel],
    sweep: Sequence[tuple[int, float]],
    seconds: Mapping[int, tuple[float, ...]],
) -> dict[str, tuple[float, ...]]:
    """Each cache level's repetitions, by its key among :attr:`Peaks.ceiling_seconds
    <gpuconcepts.roofline.Peaks.ceiling_seconds>` (``level <name>``): those of the sweep's
    working set whose rate is the level's (:func:`cache_hierarchy` takes the best of those it
    holds); a level whose working set's seconds were not kept is left out.

    >>> levels = (MemoryLevel("L2", 2**20, 9e10),)
    >>> level_seconds(levels, ((2**15, 1.3e11), (2**19, 9e10)), {2**19: (1e-3, 2e-3)})
    {'level L2': (0.001, 0.002)}
    """
    found = {}
    for level in levels:
        size = next((s for s, rate in sweep if rate == level.bytes_per_s), None)
        if size is not None and seconds.get(size):
            found[f"level {level.name}"] = tuple(seconds[size])
    return found
