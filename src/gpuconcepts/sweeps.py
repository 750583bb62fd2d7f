"""The peaks' fixed sweeps, without torch: the GEMM sweep's products per device kind, the cold
sweep's smallest read, the rounds of every sweep, and the rule every ceiling's sweep keeps
(:func:`too_close`: no point within :data:`AWAY` of a judged kernel's shape in every
dimension).

:mod:`gpuconcepts.kernels.peaks` runs the sweeps; they sit here so that a page which only says
them in a sentence needs no torch (README, Rules: 3). The sizes that change with the device
class are in ``conf/presets.toml``, read by :mod:`gpuconcepts.sizes`.

>>> gemm_sweep_points("cpu")[0], SWEEP_ROUNDS
((1, 32), 9)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.units import MiB
from gpuconcepts.workloads import HOT_ROWS

__all__ = [
    "AWAY",
    "COLD_SMALLEST",
    "GEMM_SWEEP",
    "GEMM_SWEEP_MAX_FLOPS",
    "SWEEP_ROUNDS",
    "clear_of",
    "gemm_sweep_points",
    "judged_table_bytes",
    "random_tables",
    "too_close",
]

SWEEP_ROUNDS = 9
"""Rounds of each sweep (GEMM products, cache sizes, random rows:
:func:`~gpuconcepts.kernels.peaks.median_in_rounds`); each point is its median over them, the
statistic the kernels it bounds are read by."""

COLD_SMALLEST = MiB
"""The smallest read of the cold sweep (:func:`~gpuconcepts.kernels.peaks.cold_reads`)."""

AWAY = 2.0
"""How far a ceiling's sweep point stays from every judged kernel's shape: at least this factor
in at least one dimension (ERT, STREAM and likwid measure the machine, not the application).
A sweep point within it in every dimension would time the kernel it judges."""

_ROWS = (1, 2, 4, 8, 16, 32, 64, 256, 1024, 4096)

GEMM_SWEEP: dict[str, tuple[tuple[int, tuple[int, ...]], ...]] = {
    # The book's CPU kernels multiply at widths 16, 64, 512 and 2048 (an RNN step, an MLP),
    # and its whole model at 768: the sweep takes the widths between, and 1,024 only at rows
    # at least twice the decode batches (1-64).
    "cpu": ((32, _ROWS), (128, _ROWS), (256, _ROWS), (1024, (256, 1024, 4096)), (4096, _ROWS)),
    # A GPU's kernels multiply at 256 to 8,192 and its whole model at 2,048 (decode batches up
    # to 2,048): the narrow widths, 2,048 from 4,096 rows on, and 16,384.
    "cuda": (
        (16, _ROWS),
        (32, _ROWS),
        (64, _ROWS),
        (128, _ROWS),
        (2048, (4096, 8192, 16384)),
        (16384, (1, 4, 16, 64, 256, 1024)),
    ),
}
"""The GEMM sweep's products per device kind, as (width, the rows swept at it): a rows × width
input by a width × width weight. No product lies within :data:`AWAY` of a judged kernel's in
every dimension, for every preset (``tests/test_ceilings.py`` checks each workload, claim and
whole-model product of the quick and full presets of every device class); the rows span
matrix-vector products (the weights' bandwidth) to full tiles (compute)."""

GEMM_SWEEP_MAX_FLOPS = {"cpu": 2**35, "cuda": 2**40}
"""The largest product the GEMM sweep times per device kind (a CPU: 4,096 × 4,096 × 1,024,
about 34 GFLOP). Products beyond the sweep take its fastest rate
(:meth:`~gpuconcepts.roofline.Peaks.gemm_point`)."""


def gemm_sweep_points(device: str) -> tuple[tuple[int, int], ...]:
    """The GEMM sweep's (rows, width) products on ``device`` ("cpu" or "cuda"), narrowest width
    first, within :data:`GEMM_SWEEP_MAX_FLOPS`.

    >>> gemm_sweep_points("cpu")[-1]
    (1024, 4096)
    >>> gemm_sweep_points("tpu")
    Traceback (most recent call last):
    ...
    gpuconcepts.errors.GpuConceptsError: GEMM sweep: device 'tpu' is not one of cpu, cuda
    """
    if device not in GEMM_SWEEP:
        raise GpuConceptsError(
            f"GEMM sweep: device {device!r} is not one of {', '.join(GEMM_SWEEP)}"
        )
    top = GEMM_SWEEP_MAX_FLOPS[device]
    return tuple(
        (rows, width)
        for width, swept in GEMM_SWEEP[device]
        for rows in swept
        if 2 * rows * width * width <= top
    )


def too_close(point: Sequence[float], shape: Sequence[float], factor: float = AWAY) -> bool:
    """Whether a sweep ``point`` lies within ``factor`` of a kernel's ``shape`` in every
    dimension (both in the same units, dimension by dimension).

    >>> too_close((64, 2048, 2048), (64, 2048, 2048)), too_close((128, 2048, 2048), (64, 2048, 2048))
    (True, False)
    >>> too_close((3, 1), (2, 1))
    True
    """
    if len(point) != len(shape):
        raise GpuConceptsError(
            f"too_close: point {tuple(point)} and shape {tuple(shape)} differ in dimensions"
        )
    return all(max(a, b) < factor * min(a, b) for a, b in zip(point, shape, strict=True))


def clear_of(
    value: int, taken: Iterable[int], *, low: int, high: int, factor: float = AWAY
) -> int | None:
    """``value``, or the nearest size within [``low``, ``high``] that is at least ``factor``
    away from every size of ``taken`` (a judged kernel's), looking down first (a smaller
    working set stays in the level it was chosen for); None when there is none.

    >>> clear_of(2**30, [2**30, 5 * 10**8], low=2**26, high=2**30)
    250000000
    >>> clear_of(2**20, [2**30], low=2**10, high=2**21)
    1048576
    >>> clear_of(2**20, [2**20], low=2**20, high=2**20) is None
    True
    """
    near = sorted(t for t in taken if t > 0)

    def blocked(v: float) -> list[int]:
        return [t for t in near if too_close((v,), (t,), factor)]

    found: float = value
    while found >= low and blocked(found):
        found = min(blocked(found)) / factor
    if found >= low and found <= high:
        return int(found)
    found = value
    while found <= high and blocked(found):
        found = max(blocked(found)) * factor
    return int(found) if low <= found <= high else None


def judged_table_bytes(
    presets: Mapping[str, Mapping[str, int]],
    claims: Mapping[str, object] | None,
    free_bytes: int,
    s: int = 4,
) -> tuple[int, ...]:
    """The tables the run's random lookups read, in bytes: the DLRM kernel's (``presets``'
    ``dlrm`` table), the DLRM claims' (``claims``' ``dlrm_table_mib``, capped at a quarter of
    ``free_bytes`` as the claims cap it), and each hot set (:data:`HOT_ROWS` rows at every row
    width either uses). ``s``: bytes per element (the tables are float32).

    >>> judged_table_bytes({"dlrm": {"N": 10**6, "d": 64}}, {"dlrm_table_mib": 256,
    ...                    "dlrm_widths": [4, 64]}, 2**36)
    (16384, 262144, 256000000, 268435456)
    """
    tables: set[int] = set()
    widths: set[int] = set()
    if "dlrm" in presets:
        table = presets["dlrm"]
        tables.add(table["N"] * table["d"] * s)
        widths.add(table["d"])
    mib, found = (claims or {}).get("dlrm_table_mib"), (claims or {}).get("dlrm_widths", ())
    if isinstance(mib, int):
        tables.add(min(mib * MiB, free_bytes // 4))  # as the DLRM claims cap it
    if isinstance(found, list | tuple):
        widths.update(w for w in found if isinstance(w, int))
    tables.update(HOT_ROWS * d * s for d in widths)
    return tuple(sorted(tables))


def random_tables(
    cache_bytes: int,
    *,
    beyond_bytes: int,
    first_cache_bytes: int | None = None,
    largest_table_bytes: int | None = None,
    judged_tables: Sequence[int] = (),
) -> tuple[int, ...]:
    """The tables of the random-access sweep, smallest first: one inside the first cache (a
    quarter of ``first_cache_bytes``, when given and smaller than ``cache_bytes``), one inside
    the last (half of ``cache_bytes``), one of ``beyond_bytes`` that DRAM serves, and one as
    large as ``largest_table_bytes`` (the run's largest lookup table, whose address
    translations miss too) when larger still. Each is moved at least :data:`AWAY` from every
    table of ``judged_tables`` (:func:`clear_of`) within its level: a cache's table no larger
    than it was, DRAM's no smaller than half of ``beyond_bytes`` (where DRAM's plateau began);
    a table that cannot move is left out.

    >>> [t >> 20 for t in random_tables(2**25, beyond_bytes=2**27, largest_table_bytes=2**30,
    ...                                 judged_tables=(2**30, 5 * 10**8))]
    [16, 128, 238]
    """
    wanted: list[tuple[int, int, int]] = []  # (size, low, high)
    if first_cache_bytes and first_cache_bytes < cache_bytes:
        inner = first_cache_bytes // 4
        wanted.append((inner, inner // 4, inner))
    wanted.append((cache_bytes // 2, cache_bytes // 8, cache_bytes // 2))
    wanted.append((beyond_bytes, beyond_bytes // 2, 2 * beyond_bytes))
    if largest_table_bytes and largest_table_bytes > beyond_bytes:
        wanted.append((largest_table_bytes, beyond_bytes // 2, largest_table_bytes))
    found = {clear_of(size, judged_tables, low=low, high=high) for size, low, high in wanted}
    return tuple(sorted(t for t in found if t is not None))
