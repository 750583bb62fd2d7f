"""The cold sweep: a read of each size right after a cache flush, the bound of a kernel timed
flushed that moves only a few MiB (a diagnosis, never a roof)."""

from __future__ import annotations

import torch

from gpuconcepts.kernels.ceilings.rounds import SweepPoint, median_in_rounds
from gpuconcepts.roofline.points import cold_key
from gpuconcepts.sweeps import COLD_SMALLEST


def cold_reads(
    device: str, top: int, *, repeats: int = 5, keep: dict[str, tuple[float, ...]] | None = None
) -> tuple[tuple[int, float], ...]:
    """The cold sweep: seconds to read an array once, in one call, right after the cache
    flush that kernels timed flushed get, for arrays of 1 MiB doubling up to ``top`` (a working
    set DRAM serves, :attr:`~gpuconcepts.measure.hierarchy.Sizing.beyond_bytes`); each point is
    (bytes, seconds), the median of interleaved rounds (:func:`median_in_rounds`). ``keep``,
    when given, receives each point's seconds round by round under its key among
    :attr:`Peaks.ceiling_seconds <gpuconcepts.roofline.Peaks.ceiling_seconds>`
    (:func:`~gpuconcepts.roofline.points.cold_key`), so that a page gives its spread.

    A kernel timed after a flush starts cold: its call is dispatched from a cold cache, the
    flush's dirty lines must be written back before its lines can come in, and the page-table
    entries that map its data are gone. The steady-state DRAM roof (arrays streamed again and
    again) pays none of that, so it is a bound such a kernel cannot approach when it moves only
    a few MiB. A read of the same bytes started the same way is the bound that it can.
    """
    out = torch.empty((), dtype=torch.float32, device=device)
    sizes, points = [], []
    size = COLD_SMALLEST
    while size <= max(top, COLD_SMALLEST):
        x = torch.ones(size // 4, dtype=torch.float32, device=device)

        def read(x: torch.Tensor = x) -> torch.Tensor:
            return torch.sum(x, dim=0, out=out)

        sizes.append(size)
        points.append(SweepPoint(read, flush=True))
        size *= 2
    rounds: list[tuple[float, ...]] = []
    middle = median_in_rounds(points, device, repeats=repeats, keep=rounds)
    if keep is not None:
        keep.update((cold_key(size), times) for size, times in zip(sizes, rounds, strict=True))
    return tuple(zip(sizes, middle, strict=True))
