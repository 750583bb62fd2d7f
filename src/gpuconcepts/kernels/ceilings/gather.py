"""The random-access sweep: line fetches per second of a gather of rows at random addresses,
on tables at least 2x away from every judged lookup's (the memory roof of random rows)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
import torch.nn.functional as F

from gpuconcepts import formulas
from gpuconcepts.kernels.ceilings.rounds import SweepPoint, median_in_rounds
from gpuconcepts.measure import LLC_MULTIPLE, transfer_unit_bytes
from gpuconcepts.roofline import RANDOM_ROWS_BEFORE
from gpuconcepts.roofline.points import random_key
from gpuconcepts.sweeps import random_tables
from gpuconcepts.units import MiB

RANDOM_ROW_BYTES = (4, 16, 64, 128, 256, 512, 1024)
"""Row widths of the random-access sweep: from one float32 to sixteen cache lines, and every
power of two from a line up (a row of two lines had been read against the four-line row's
rate, which the hardware's prefetch of the lines beside a miss raises)."""

RANDOM_CALL_ROWS = (2**16, RANDOM_ROWS_BEFORE, 2**20)
"""Rows per call of the random-access sweep, each call timed right after a flush, as the
lookups it judges are: the call's cold start (the page-table entries of the rows it reaches,
the index it reads, the output it writes and, for a table a cache holds, the table's first
touch of each line) is paid once, so the rate of line fetches rises with the rows that share
it (2026-12-04, the 2-core CPU's recorded run: 2**20 rows of 16 bytes from 1 GiB fetched 171
million lines a second, where calls of 2**18 had reached 116, and 2**16 rows of 256 bytes
reached 0.45 of them). A lookup is read against the smallest call at least as large as its
own (:meth:`~gpuconcepts.roofline.Peaks.random_point`)."""

RANDOM_CALL_MAX_BYTES = 64 * MiB
"""The most one call of the random-access sweep fetches (rows × the transfer units of a row):
the book's lookups fetch 8 to 16 MiB a call, and a call of 2**20 rows of 1 KiB (a GiB) took
most of the sweep's time. Every width is swept in calls of the fewest rows, so a lookup has a
point at its own width; one larger than every call swept at its width is read against a
narrower row's call as large as its own (:meth:`~gpuconcepts.roofline.Peaks.random_point`)."""

RANDOM_BAG = 16
"""Rows summed into one bag by a call of the random-access sweep (the lookups' own bags, of
8 to 512 rows, fetch their rows at the same rate: 2026-12-04, 2**19 rows of 16 bytes in bags
of 16 and of 256 reached 130 and 132 million rows a second in the same rounds)."""


def random_access(
    device: str,
    cache_bytes: int,
    *,
    beyond_bytes: int | None = None,
    first_cache_bytes: int | None = None,
    largest_table_bytes: int | None = None,
    judged_tables: Sequence[int] = (),
    repeats: int = 5,
    keep: dict[str, tuple[float, ...]] | None = None,
) -> tuple[tuple[int, int, int, float], ...]:
    """The random-access sweep: line fetches per second of ``F.embedding_bag`` (sum) over rows
    at uniformly random addresses, for a table inside the first cache level (a quarter of
    ``first_cache_bytes``, when given and smaller, so that it stays there beside the index
    and the output a call streams through), inside the last-level cache (half of it) and one
    of ``beyond_bytes``, which DRAM serves (4x the cache when not given; and one of
    ``largest_table_bytes``, the largest table the run's lookups read, when larger still:
    the address translations of a table of gigabytes miss too), at each width of
    :data:`RANDOM_ROW_BYTES`; each point is (table bytes, row bytes, rows per call, lines/s),
    read against a lookup of the table its level serves (a hot set inside a cache, a large
    table beyond them: :meth:`~gpuconcepts.roofline.Peaks.random_point`).

    A row costs ⌈row bytes / line⌉ whole lines (:data:`gpuconcepts.formulas.random_row_bytes`);
    the memory system keeps only so many misses in flight, so for narrow rows the rate of line
    fetches, not the bytes per second, is the ceiling.

    Every table is timed as the lookups it judges are: right after a cache flush, in calls of
    each size of :data:`RANDOM_CALL_ROWS`. Warm repetitions of one index would find the
    previous repetition's rows, index and output (and the page-table entries that map them)
    in the cache, and a table beyond the caches would be read at the cache's rate; a table a
    cache holds, read warm, would be read 2.8 times as fast as a flushed lookup of the same
    hot rows (2026-12-04, 2**16 rows of 256 bytes from a table of 256 KiB).

    Every table stays at least 2x away from each table of ``judged_tables`` (the lookups the
    run judges: :func:`judged_table_bytes`), within the level it was chosen for
    (:func:`random_tables`), so that the sweep never times the lookup it bounds. ``keep``
    receives each point's seconds round by round, by its key (:func:`random_key`).
    """
    generator = torch.Generator(device="cpu").manual_seed(7)
    shapes = random_call_shapes(transfer_unit_bytes(device))
    sweep, kept = [], {} if keep is None else keep
    tables = random_tables(
        cache_bytes,
        beyond_bytes=beyond_bytes or LLC_MULTIPLE * cache_bytes,
        first_cache_bytes=first_cache_bytes,
        largest_table_bytes=largest_table_bytes,
        judged_tables=judged_tables,
    )
    for table_bytes in tables:
        store = torch.ones(table_bytes // 4, dtype=torch.float32, device=device)
        gathers = [gather_call(store, row, calls, generator) for row, calls in shapes]
        points = [SweepPoint(gather, flush=True) for gather, _ in gathers]
        # one table at a time (the largest is a gigabyte), its row widths in rounds
        times: list[tuple[float, ...]] = []
        middle = median_in_rounds(points, device, repeats=repeats, keep=times)
        for (row, calls), (_, lines), seconds in zip(shapes, gathers, middle, strict=True):
            sweep.append((table_bytes, row, calls, lines / seconds))
        kept.update(zip(map(random_key, sweep[len(sweep) - len(times) :]), times, strict=True))
        del store, points
    return tuple(sweep)


def random_call_shapes(unit: int) -> list[tuple[int, int]]:
    """The (row bytes, rows per call) the random-access sweep times on each table: every width
    of :data:`RANDOM_ROW_BYTES` in calls of the fewest rows, and in the larger calls of
    :data:`RANDOM_CALL_ROWS` that fetch at most :data:`RANDOM_CALL_MAX_BYTES` of ``unit``-byte
    transfer units.

    >>> random_call_shapes(64)[:4]
    [(4, 65536), (4, 262144), (4, 1048576), (16, 65536)]
    """
    return [
        (row, calls)
        for row in RANDOM_ROW_BYTES
        for calls in RANDOM_CALL_ROWS
        if calls == RANDOM_CALL_ROWS[0] or calls * max(row, unit) <= RANDOM_CALL_MAX_BYTES
    ]


def gather_call(
    store: torch.Tensor, row: int, rows: int, generator: torch.Generator
) -> tuple[Callable[[], torch.Tensor], int]:
    """A call of the random-access sweep: ``rows`` rows of ``row`` bytes at uniformly random
    addresses of ``store`` (float32, read as a table of such rows), summed in bags of
    :data:`RANDOM_BAG` by ``F.embedding_bag``; and the transfer units the call fetches
    (``formulas.random_row_bytes`` of each row)."""
    d = row // 4
    table = store[: store.numel() // d * d].view(-1, d)
    index = torch.randint(0, table.shape[0], (rows,), generator=generator).to(store.device)
    offsets = torch.arange(0, rows, RANDOM_BAG, device=store.device)
    line = transfer_unit_bytes(store.device.type)
    lines = int(rows * formulas.random_row_bytes(d=row, s=1, c=line) // line)
    return (lambda: F.embedding_bag(index, table, offsets, mode="sum")), lines
