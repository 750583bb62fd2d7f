"""Where DRAM begins, read from the measured working-set sweep, and the sizes that follow from
it within a run's memory budget.

A cache size read from sysfs says what the chip has, not what this process gets: a cloud VM of
two cores on a large Xeon or EPYC reports an L3 of hundreds of MiB that other tenants share,
and on Arm, Apple and some VMs sysfs reports no L3 at all. So the sizes that must reach past
every cache (the STREAM arrays, the cache flush, the cold and random-access sweeps) follow the
sweep, which always reaches the largest array the budget allows: DRAM begins where the read
bandwidth stops falling. Nothing grows with sysfs, and nothing grows past the budget.

>>> sweep = ((2**20, 9e10), (2**22, 2.3e10), (2**24, 2.2e10), (2**25, 1.3e10), (2**26, 1.2e10),
...          (2**27, 1.25e10))
>>> dram_start_bytes(sweep) // 2**20
32
>>> s = sizing(sweep, sysfs_cache_bytes=300 * 2**20, budget_bytes=2 * 2**30)
>>> s.cache_bytes // 2**20, s.beyond_bytes // 2**20, s.dram_reached
(32, 64, True)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.units import MiB, binary_bytes

PLATEAU_TOLERANCE = 1.25
"""A working set read within 1.25x of the largest one's rate belongs to the same plateau: the
sweep's points are medians of a few rounds on a shared machine, and a cache level is at least that
much faster than the memory behind it (the 2-core EPYC's L3 read 1.7x its DRAM, the 2-core
Xeon's 1.8x)."""

BEYOND_MULTIPLE = 2
"""A working set twice the start of DRAM's plateau is served by DRAM whatever the caches keep;
the same bytes, written before a kernel, flush them (2x the plateau's start is 4x the L3 on the
EPYC, whose plateau starts at twice its 32 MiB L3: the multiple its flush had before)."""

ARRAY_SHARE = 8
"""The largest array a run allocates is an eighth of its memory budget: the sweeps time every
size of a sweep in the same rounds (about twice the largest alive at once), the STREAM triad
holds three, and torch itself takes a few hundred MiB."""

SMALLEST_BEYOND_BYTES = 8 * MiB
"""No flush or DRAM working set is smaller than 8 MiB, whatever a sweep says."""


def dram_start_bytes(sweep: Sequence[tuple[int, float]]) -> int | None:
    """The smallest working set of the sweep from which every larger one reads within
    :data:`PLATEAU_TOLERANCE` of the largest one's rate: where DRAM's plateau begins. None when
    the plateau holds the largest working set alone (the sweep ended before the rate levelled
    off: DRAM was not reached within its budget) or the sweep has fewer than two points.

    >>> dram_start_bytes(((1, 100.0), (2, 50.0), (4, 20.0), (8, 19.0), (16, 18.0)))
    4
    >>> dram_start_bytes(((1, 100.0), (2, 50.0), (4, 20.0))) is None
    True
    """
    points = sorted(sweep)
    if len(points) < 2:
        return None
    floor = points[-1][1] * PLATEAU_TOLERANCE
    start = len(points) - 1
    while start > 0 and points[start - 1][1] <= floor:
        start -= 1
    return None if start == len(points) - 1 else points[start][0]


@dataclass(frozen=True)
class Sizing:
    """The sizes a run takes from its measured hierarchy.

    ``cache_bytes``: the last cache as this process sees it (the sysfs size, or where DRAM's
    plateau begins when that is smaller). ``beyond_bytes``: a working set that DRAM serves (the
    STREAM arrays' least size, the flush buffer, the largest table of the cold and
    random-access sweeps). ``dram_reached``: whether the sweep found DRAM's plateau within the
    budget. ``shrunk``: what was made smaller than the rule asked, and why, in words.
    """

    cache_bytes: int
    beyond_bytes: int
    dram_reached: bool
    largest_array_bytes: int
    shrunk: tuple[str, ...] = ()


def largest_array_bytes(budget_bytes: int, free_bytes: int | None = None) -> int:
    """The largest array a run may allocate: :data:`ARRAY_SHARE` of its budget (and of the free
    memory, when that is smaller), in whole MiB.

    >>> largest_array_bytes(2 * 2**30) // 2**20, largest_array_bytes(2 * 2**30, 2**30) // 2**20
    (256, 128)
    """
    if budget_bytes < ARRAY_SHARE * MiB:
        raise GpuConceptsError(
            f"memory budget: must be at least {ARRAY_SHARE} MiB; got {budget_bytes} bytes"
        )
    room = min(budget_bytes, free_bytes if free_bytes is not None else budget_bytes)
    return max(MiB, room // ARRAY_SHARE // MiB * MiB)


def sizing(
    sweep: Sequence[tuple[int, float]],
    *,
    sysfs_cache_bytes: int | None,
    budget_bytes: int,
    free_bytes: int | None = None,
    private_cache_bytes: int | None = None,
) -> Sizing:
    """The sizes that follow from a measured sweep within a memory budget (:class:`Sizing`).

    Where the sweep found DRAM's plateau, the last cache ends at its start (or at the sysfs
    size, if smaller), and DRAM serves :data:`BEYOND_MULTIPLE` times that start. The plateau
    never starts within twice ``private_cache_bytes`` (the largest cache sysfs reports below the
    last: a core's own L2, whose size is its own): on a busy machine every working set may read
    alike, and a flush sized from such a sweep would leave the caches full. Where it did
    not, DRAM's rate is the slowest the budget reached: the cache is the sysfs size (or the
    sweep's top, without one) and the DRAM working sets are the largest array allowed.

    >>> laptop = ((2**22, 6e10), (2**23, 5e10), (2**24, 2e10), (2**25, 1.9e10))
    >>> sizing(laptop, sysfs_cache_bytes=8 * 2**20, budget_bytes=2**31).cache_bytes // 2**20
    8
    >>> vcache = ((2**26, 6e10), (2**27, 4e10), (2**28, 2.5e10))  # still falling at its top
    >>> s = sizing(vcache, sysfs_cache_bytes=1152 * 2**20, budget_bytes=2**31)
    >>> s.dram_reached, s.beyond_bytes // 2**20, len(s.shrunk)
    (False, 256, 1)
    """
    largest = largest_array_bytes(budget_bytes, free_bytes)
    start = dram_start_bytes(sweep)
    if start is not None and private_cache_bytes:
        start = max(start, 2 * private_cache_bytes)
    shrunk: list[str] = []
    top = max((size for size, _ in sweep), default=largest)
    if start is not None:
        cache = min(sysfs_cache_bytes or start, start)
        wanted = max(BEYOND_MULTIPLE * start, SMALLEST_BEYOND_BYTES)
        if sysfs_cache_bytes and start < sysfs_cache_bytes:
            shrunk.append(
                f"the last cache: sysfs reports {binary_bytes(sysfs_cache_bytes)}, but the sweep read "
                f"DRAM's rate from {binary_bytes(start)} on, so sizes follow {binary_bytes(start)}"
            )
    else:
        cache = min(sysfs_cache_bytes or top, top)
        wanted = largest
        shrunk.append(
            f"DRAM: the sweep's rate still fell at its largest working set ({binary_bytes(top)}, the "
            f"memory budget's limit), so DRAM's roof is the slowest rate it reached"
        )
    beyond = min(wanted, largest)
    if beyond < wanted:
        shrunk.append(
            f"DRAM working sets and the flush: {binary_bytes(beyond)} instead of {binary_bytes(wanted)}, an "
            f"eighth of the {binary_bytes(budget_bytes)} memory budget"
        )
    return Sizing(
        cache_bytes=cache,
        beyond_bytes=beyond,
        dram_reached=start is not None,
        largest_array_bytes=largest,
        shrunk=tuple(shrunk),
    )
