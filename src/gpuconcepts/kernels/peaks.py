r"""Measured peaks: STREAM-like copy and triad bandwidth, a large GEMM's FLOP/s, the bandwidth
of each cache level (a working-set sweep) and a latency floor.

The arrays reach past where the working-set sweep finds DRAM's plateau (and at least four
times the last cache it measured), within the run's memory budget, so the bandwidth is DRAM's
(HBM's) and not the cache's. Copy counts the bytes
read and the bytes written (``formulas.stream_copy_bytes``), as STREAM does. Each rate is
taken at the median repetition, the statistic the kernels a ceiling bounds are read by: a
best repetition, or a ceiling raised whenever a kernel beat it, would sit above what the
machine sustains (issue 45: the DRAM roof read 1.45x STREAM's triad on a 2-core EPYC).

>>> rate = copy_bandwidth("cpu", array_bytes=4 * 1024**2, repeats=2)
>>> rate > 0
True
"""

from __future__ import annotations

import contextlib
import statistics
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F

from gpuconcepts import formulas
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.hardware import dtype_name
from gpuconcepts.kernels._common import (
    Kernel,
    check_sizes,
    default_dtype,
    precision,
    prepare,
    tensor,
    torch_dtype,
)
from gpuconcepts.kernels.dispatch import latency_floor, op_floor
from gpuconcepts.measure import (
    COLUMNS,
    LLC_MULTIPLE,
    Rounds,
    cache_levels,
    free_memory_bytes,
    set_flush_bytes,
    stream_array_bytes,
    stream_rows,
    time_function,
    transfer_unit_bytes,
)
from gpuconcepts.measure.hierarchy import (
    Sizing,
    dram_start_bytes,
    largest_array_bytes,
    sizing,
)
from gpuconcepts.measure.physical import clock_hz, cpu_id, fma_core
from gpuconcepts.roofline import (
    RANDOM_ROWS_BEFORE,
    MemoryLevel,
    Peaks,
)
from gpuconcepts.sizes import RunBudget
from gpuconcepts.sizing import RunSizes
from gpuconcepts.sweeps import (
    COLD_SMALLEST,
    SWEEP_ROUNDS,
    gemm_sweep_points,
    judged_table_bytes,
    random_tables,
)
from gpuconcepts.units import MiB

PEAK_REPEATS = 10
"""Repetitions of each peak kernel (at least; more if the presets' timing says so)."""

GEMM_REPEATS = 5
"""Repetitions of the compute peak's square GEMM: a 4,096-wide product takes about half a
second on two cores, and its median settles within five."""


@dataclass(frozen=True)
class SweepPoint:
    """One point of a sweep as :class:`~gpuconcepts.measure.Rounds` times it: a call, and
    whether the caches are flushed before it."""

    fn: Callable[[], object]
    flush: bool = False

    @contextlib.contextmanager
    def settings(self) -> Iterator[None]:
        with torch.inference_mode():
            yield


def median_in_rounds(points: Sequence[SweepPoint], device: str, *, repeats: int) -> list[float]:
    """Each point's median seconds per call over ``repeats`` interleaved rounds, every round
    timing every point once in a shuffled order.

    A sweep point is read by the statistic of the kernels it bounds, their median. Timed one
    point after another, a busy moment of a second slows every repetition of the points it
    falls on; in rounds, it slows one repetition of each, which the median passes over.

    >>> calls = [SweepPoint(lambda: sum(range(100))), SweepPoint(lambda: sum(range(10_000)))]
    >>> small, large = median_in_rounds(calls, "cpu", repeats=3)
    >>> 0 < small < large
    True
    """
    rounds = Rounds(points, device)
    rounds.more(repeats)
    return [statistics.median(times) for times in rounds.times]


def copy_bandwidth(device: str, *, array_bytes: int, repeats: int = 5) -> float:
    """Bytes/s of ``dst.copy_(src)`` on float32 arrays of ``array_bytes`` (read + write)."""
    rows = stream_rows(array_bytes, 4)
    src = torch.ones((rows, COLUMNS), dtype=torch.float32, device=device)
    dst = torch.zeros_like(src)
    times = time_function(lambda: dst.copy_(src), device, repeats=repeats)
    nbytes = formulas.stream_copy_bytes(N=rows, d=COLUMNS, s=src.element_size())
    return float(nbytes) / statistics.median(times)


def triad_kernel(device: str, peaks: Peaks | None = None, *, N: int, d: int = COLUMNS) -> Kernel:
    """The triad ``a = b + 3·c`` on N × d float32 arrays (two reads, one write per element):
    workload ``peak-triad``, the reference of the DRAM roof.

    A claim that reads a memory-bound kernel against DRAM's bandwidth times this kernel in the
    same rounds (:meth:`~gpuconcepts.lab.Lab.compare`), so that load on the machine slows the
    roof and the kernel alike.
    """
    check_sizes("peaks.triad", N=N, d=d)
    b = torch.ones((N, d), dtype=torch.float32, device=device)
    c = torch.full_like(b, 2.0)
    a = torch.zeros_like(b)
    return prepare(
        "peak-triad",
        device,
        peaks,
        lambda: torch.add(b, c, alpha=3.0, out=a),
        params={"N": N, "d": d, "s": a.element_size()},
        dtype="float32",
        flush=False,  # arrays of at least 4x the last-level cache: DRAM serves them anyway
    )


def triad_bandwidth(device: str, *, array_bytes: int, repeats: int = 5) -> float:
    """Bytes/s of the triad ``a = b + 3·c`` (two reads, one write per element, as STREAM
    counts it), at its median repetition: DRAM's roof."""
    kernel = triad_kernel(device, N=stream_rows(array_bytes))
    return kernel.bytes / statistics.median(kernel.time(repeats).raw_seconds)


GEMM_BACKENDS = ("mm", "onednn")
"""``mm``: ``torch.mm`` (MKL or OpenBLAS on a CPU, cuBLAS on CUDA). ``onednn``: the oneDNN
(mkldnn) linear that torch's CPU convolutions also use; CPU only."""


def gemm_backends(device: str) -> tuple[str, ...]:
    """GEMM paths worth timing on a device.

    >>> gemm_backends("cuda")
    ('mm',)
    """
    if device == "cpu" and torch.backends.mkldnn.is_available():  # type: ignore[no-untyped-call]
        return GEMM_BACKENDS
    return ("mm",)


def _gemm_call(
    device: str, shape: tuple[int, int, int], backend: str, dtype: str
) -> tuple[Callable[[], object], int]:
    """The call of an m × k by k × n GEMM through ``backend``, and its element size."""
    m, k, n = shape
    a = tensor((m, k), dtype, device, seed=1)
    b = tensor((k, n), dtype, device, seed=2)
    if backend == "mm":
        out = torch.empty((m, n), dtype=torch_dtype(dtype), device=device)
        return (lambda: torch.mm(a, b, out=out)), a.element_size()
    if backend == "onednn" and device == "cpu":
        # aten's oneDNN linear: y = x wᵀ on oneDNN's blocked layout (what to_mkldnn makes).
        x_onednn = a.to_mkldnn()
        w_onednn = b.T.contiguous().to_mkldnn()
        return (lambda: torch.ops.aten.mkldnn_linear(x_onednn, w_onednn)), a.element_size()
    raise GpuConceptsError(f"GEMM backend {backend!r} is not one of {gemm_backends(device)}")


def gemm_kernel(
    device: str,
    peaks: Peaks | None = None,
    *,
    n: int,
    backend: str = "mm",
    dtype: str | None = None,
) -> Kernel:
    """An n × n × n GEMM through ``backend`` (see :data:`GEMM_BACKENDS`): workload
    ``peak-gemm``, the reference of the compute roof (``formulas.mlp_flops(n, n, n)`` FLOPs).

    A claim that reads a compute-bound kernel against the peak times this kernel in the same
    rounds, so that load on the machine slows the roof and the kernel alike.
    """
    check_sizes("peaks.gemm", n=n)
    name = dtype or default_dtype(device)
    fn, s = _gemm_call(device, (n, n, n), backend, name)
    params = {"n": n, "backend": backend, "s": s}
    return prepare("peak-gemm", device, peaks, fn, params=params, dtype=name, flush=False)


def gemm_shape_flops(
    device: str,
    shape: tuple[int, int, int],
    *,
    backend: str = "mm",
    dtype: str | None = None,
    repeats: int = 5,
) -> float:
    """FLOP/s of an m × k by k × n GEMM through ``backend``, at its median repetition
    (``formulas.mlp_flops(B=m, d_in=k, d_out=n)`` FLOPs)."""
    check_sizes("peaks.gemm", m=shape[0], k=shape[1], n=shape[2])
    fn, _ = _gemm_call(device, shape, backend, dtype or default_dtype(device))
    flops = formulas.mlp_flops(B=shape[0], d_in=shape[1], d_out=shape[2])
    return float(flops) / statistics.median(time_function(fn, device, repeats=repeats))


def gemm_flops(
    device: str,
    *,
    n: int,
    dtype: str | None = None,
    repeats: int = 5,
    backend: str = "mm",
) -> float:
    """FLOP/s of an n × n × n GEMM in ``dtype``, at its median repetition: the compute peak
    (square products only; the book's convolution is a kernel it judges, never a part of it).

    The peak is the library's own product, ``torch.mm`` (MKL or OpenBLAS on a CPU, cuBLAS on
    CUDA): the path ``F.linear`` and ``nn.Linear`` run, so the GEMMs the book judges are read
    against the rate their own path reaches. A faster path (oneDNN's GEMM, which torch's CPU
    convolutions use) is not the peak: a convolution faster than it is a finding
    (issue 45: on a 2-core AMD EPYC the fastest path read 1.74x a canonical SGEMM).
    """
    return gemm_shape_flops(device, (n, n, n), backend=backend, dtype=dtype, repeats=repeats)


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


def working_set_sweep(device: str, top: int, *, repeats: int = 5) -> tuple[tuple[int, float], ...]:
    """The read bandwidth of every working set of :func:`sweep_sizes` up to ``top``, as
    (bytes, bytes/s), every working set read once a round (:func:`median_in_rounds`)."""
    sizes = sweep_sizes(top)
    reads = [_repeated_read(device, size) for size in sizes]
    middle = median_in_rounds([SweepPoint(read) for read, _ in reads], device, repeats=repeats)
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


def cold_reads(device: str, top: int, *, repeats: int = 5) -> tuple[tuple[int, float], ...]:
    """The cold sweep: seconds to read an array once, in one call, right after the cache
    flush that kernels timed flushed get, for arrays of 1 MiB doubling up to ``top`` (a working
    set DRAM serves, :attr:`~gpuconcepts.measure.hierarchy.Sizing.beyond_bytes`); each point is
    (bytes, seconds), the median of interleaved rounds (:func:`median_in_rounds`).

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
    return tuple(zip(sizes, median_in_rounds(points, device, repeats=repeats), strict=True))


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
) -> tuple[tuple[int, int, int, float], ...]:
    """The random-access sweep: line fetches per second of ``F.embedding_bag`` (sum) over rows
    at uniformly random addresses, for a table inside the first cache level (a quarter of
    ``first_cache_bytes``, when given and smaller, so that it stays there beside the index
    and the output a call streams through), inside the last-level cache (half of it) and one
    of ``beyond_bytes``, which DRAM serves (4x the cache when not given; and one of
    ``largest_table_bytes``, the largest table the run's lookups read, when larger still:
    the address translations of a table of gigabytes miss too), at each width of
    :data:`RANDOM_ROW_BYTES`; each point is (table bytes, row bytes, rows per call, lines/s).
    A lookup is read against the table its own level serves (a hot set inside a cache, a
    large table beyond them: :meth:`~gpuconcepts.roofline.Peaks.random_point`).

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
    (:func:`random_tables`), so that the sweep never times the lookup it bounds.
    """
    generator = torch.Generator(device="cpu").manual_seed(7)
    unit = transfer_unit_bytes(device)
    sweep = []
    tables = random_tables(
        cache_bytes,
        beyond_bytes=beyond_bytes or LLC_MULTIPLE * cache_bytes,
        first_cache_bytes=first_cache_bytes,
        largest_table_bytes=largest_table_bytes,
        judged_tables=judged_tables,
    )
    for table_bytes in tables:
        store = torch.ones(table_bytes // 4, dtype=torch.float32, device=device)
        shapes = [
            (row, calls)
            for row in RANDOM_ROW_BYTES
            for calls in RANDOM_CALL_ROWS
            if calls == RANDOM_CALL_ROWS[0] or calls * max(row, unit) <= RANDOM_CALL_MAX_BYTES
        ]
        points = []
        gathers = [gather_call(store, row, calls, generator) for row, calls in shapes]
        points = [SweepPoint(gather, flush=True) for gather, _ in gathers]
        # one table at a time (the largest is a gigabyte), its row widths in rounds
        for (row, calls), (_, lines), seconds in zip(
            shapes, gathers, median_in_rounds(points, device, repeats=repeats), strict=True
        ):
            sweep.append((table_bytes, row, calls, lines / seconds))
        del store, points
    return tuple(sweep)


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


def gemm_sweep(
    device: str, ridge_point: float, *, dtype: str | None = None, repeats: int = 5
) -> tuple[tuple[int, int, bool, float], ...]:
    """The GEMM sweep: the library's matrix product ``F.linear`` (what ``nn.Linear`` and an RNN
    step run) of a rows × width input by a width × width weight, at every product of
    :func:`~gpuconcepts.sweeps.gemm_sweep_points` (none within 2x of a product the book's
    kernels run, in every dimension); each point is (rows, width, flushed, FLOP/s) at the
    median of its rounds, counted by ``formulas.mlp_flops``, every point timed once a round
    (:func:`median_in_rounds`).

    Every product is timed warm, and one below ``ridge_point`` FLOP/byte also after a cache
    flush before each repetition, as the book times a memory-bound kernel. A small product
    cannot fill the vector units or the cores, and a matrix-vector product streams its weights
    at the rate it reads them, not at the streaming kernels'. These rates are a diagnosis of
    a kernel whose time rests on products the sweep's hold
    (:meth:`~gpuconcepts.roofline.Peaks.gemm_point`), never its prediction.
    """
    name = dtype or default_dtype(device)
    shapes, points = [], []
    weights: dict[int, torch.Tensor] = {}
    for rows, width in gemm_sweep_points(device):
        w = weights.setdefault(width, tensor((width, width), name, device, seed=2))
        flops = formulas.mlp_flops(B=rows, d_in=width, d_out=width)
        nbytes = formulas.mlp_bytes(B=rows, d_in=width, d_out=width, s=w.element_size())
        product = linear_call(device, name, rows, w)
        for flush in (False, True) if flops / nbytes < ridge_point else (False,):
            shapes.append((rows, width, flush, float(flops)))
            points.append(SweepPoint(product, flush))
    middle = median_in_rounds(points, device, repeats=repeats)
    return tuple(
        (rows, width, flush, flops / t)
        for (rows, width, flush, flops), t in zip(shapes, middle, strict=True)
    )


def linear_call(device: str, dtype: str, rows: int, weight: torch.Tensor) -> Callable[[], object]:
    """The library's product that the GEMM sweep times, ``F.linear`` of a rows × depth input by
    ``weight`` (columns × depth), as ``nn.Linear`` and an RNN step run it."""
    x = tensor((rows, weight.shape[1]), dtype, device, seed=1)
    return lambda: F.linear(x, weight)


ACTIVATION_ELEMENTS = 2**18
"""Elements of the activation-rate array: 1 MiB of float32, inside a CPU's caches, and long
enough that one call's floor is a few percent of its time."""


def activation_rate(device: str, *, dtype: str | None = None, repeats: int = 5) -> float:
    """Elements per second of ``torch.tanh`` over :data:`ACTIVATION_ELEMENTS` elements that a
    cache holds, at the median repetition: what a product kernel's activation costs beside
    its products (an exponential, as a softmax takes, costs about as much)."""
    with torch.inference_mode():
        times = time_function(activation_call(device, dtype), device, repeats=repeats)
    return ACTIVATION_ELEMENTS / statistics.median(times)


def activation_call(device: str, dtype: str | None = None) -> Callable[[], object]:
    """The call :func:`activation_rate` times: ``tanh`` of :data:`ACTIVATION_ELEMENTS`."""
    x = tensor((ACTIVATION_ELEMENTS,), dtype or default_dtype(device), device, seed=5)
    out = torch.empty_like(x)
    return lambda: torch.tanh(x, out=out)


def physical_flops(device: str, dtype: str | None = None) -> float | None:
    """The most FLOP/s the hardware could issue in ``dtype``, or None when unknown.

    On a CPU, :data:`gpuconcepts.formulas.cpu_peak_flops` over the threads torch uses, from
    the FMA pipes and their width that :data:`~gpuconcepts.measure.physical.FMA_TABLE` gives
    for the CPU's family and model, at the clock of a chain of dependent additions
    (:func:`~gpuconcepts.measure.physical.measured_hz`; the fastest "cpu MHz" of
    /proc/cpuinfo where that cannot run). None for a CPU the table does not know, or whose
    clock neither says. On a GPU, the datasheet's peak for the dtype
    (:func:`gpuconcepts.hardware.current_gpu`). Drawn above the measured roof: the distance
    between them is what the software leaves on the table.
    """
    name = dtype or default_dtype(device)
    if device == "cuda":
        from gpuconcepts.hardware import current_gpu  # noqa: PLC0415 - a GPU only

        gpu = current_gpu()
        return None if gpu is None else gpu.peak(name)
    found = cpu_id()
    core = None if found is None else fma_core(found)
    hz = None if core is None else clock_hz()
    if core is None or hz is None:
        return None
    element = torch.empty((), dtype=torch_dtype(name)).element_size()
    return float(
        formulas.cpu_peak_flops(
            n_cores=torch.get_num_threads(), lanes=core.lanes(element), n_fma=core.units, f_clk=hz
        )
    )


def measure_peaks(
    device: str,
    sizes: RunSizes | None = None,
    *,
    presets: Mapping[str, Mapping[str, int]] | None = None,
    repeats: int | None = None,
    dtype: str | None = None,
) -> Peaks:
    """Measure a device's compute and bandwidth ceilings at the run's ``sizes`` (its presets'
    ``peaks``, ``timing`` and ``budget`` tables; ``presets`` alone instead, in tests).

    The working-set sweep comes first, up to the largest array the run's budget allows
    (:func:`working_set_sweep`): where its rate levels off is where DRAM begins, and every size
    that must reach DRAM follows from it (:func:`~gpuconcepts.measure.hierarchy.sizing`): the
    STREAM arrays, the cache flush (:func:`~gpuconcepts.measure.set_flush_bytes`), the cold
    and random-access sweeps. A cache size read from sysfs names the levels and sizes nothing.

    The compute roof is a square GEMM of the presets' ``gemm_n`` through the library's product
    (:func:`gemm_flops`, ``torch.mm``), and DRAM's roof the STREAM triad on arrays far beyond every cache
    (:func:`dram_ceiling`), each at its median repetition: no ceiling is timed from a kernel
    the book judges, nor within 2x of one's shape in every dimension (``tests/test_ceilings.py``),
    and none is raised when a kernel beats it (such a kernel is an anomaly). The copy and the
    read of the same arrays are recorded beside the triad, not as the roof. The GEMM runs in
    ``dtype`` (default: the book's, see :func:`~gpuconcepts.kernels.default_dtype`). The cache
    levels (:func:`cache_hierarchy`), the latency floor
    (:func:`~gpuconcepts.kernels.dispatch.latency_floor`), the floor of one
    dispatched operation (:func:`~gpuconcepts.kernels.dispatch.op_floor`), the random-access
    sweep (:func:`random_access`), the cold sweep (:func:`cold_reads`) and the GEMM sweep
    (:func:`gemm_sweep`) complete them. Every ceiling runs in ``dtype``'s
    :func:`~gpuconcepts.kernels.precision`, as the kernels it bounds do (for tf32, TF32 tensor
    cores in products and convolutions alike).
    """
    if presets is None:
        if sizes is None:
            raise GpuConceptsError(
                "measure_peaks: give the run's sizes (gpuconcepts.sizing.RunSizes.resolve) "
                "or presets"
            )
        presets = sizes.presets
    dtype = dtype_name(dtype or default_dtype(device))
    claims = asdict(sizes.claims) if sizes is not None and "dlrm" in presets else None
    with precision(dtype):
        return _ceilings(device, presets, repeats, dtype, claims)


@dataclass(frozen=True)
class DramCeiling:
    """DRAM's roof as measured: the STREAM arrays' bytes, the triad's median bytes/s on them,
    the working-set sweep that sized them and the sizes that follow from it."""

    array_bytes: int
    bytes_per_s: float
    sweep: tuple[tuple[int, float], ...]
    sizing: Sizing


def dram_ceiling(
    device: str, presets: Mapping[str, Mapping[str, int]], *, repeats: int | None = None
) -> DramCeiling:
    """DRAM's roof as :func:`measure_peaks` measures it: the working-set sweep, the sizes that
    follow from it, and the STREAM triad's median bytes/s on arrays of the presets'
    ``stream_mib``, raised to :data:`~gpuconcepts.measure.LLC_MULTIPLE` times the last cache
    the sweep found and capped by the budget.
    A benchmark reads it beside McCalpin's STREAM (``benchmarks/bench_ceilings.py``)."""
    reps = repeats or peak_repeats(presets)
    free = free_memory_bytes(device)
    budget = RunBudget.from_presets(presets)
    sweep = working_set_sweep(
        device, largest_array_bytes(budget.memory_bytes, free), repeats=_rounds(presets)
    )
    fit = machine_sizing(device, sweep, budget, free)
    array = stream_array_bytes(
        presets["peaks"]["stream_mib"] * MiB, fit.cache_bytes, free, fit.largest_array_bytes
    )
    rate = triad_bandwidth(device, array_bytes=array, repeats=reps)
    return DramCeiling(array, rate, sweep, fit)


def peak_repeats(presets: Mapping[str, Mapping[str, int]]) -> int:
    """Repetitions of each ceiling's kernel: :data:`PEAK_REPEATS`, or the presets' more."""
    return max(PEAK_REPEATS, presets.get("timing", {}).get("repeats", 5))


def _rounds(presets: Mapping[str, Mapping[str, int]]) -> int:
    return int(presets.get("timing", {}).get("sweep_rounds", SWEEP_ROUNDS))


def _ceilings(
    device: str,
    presets: Mapping[str, Mapping[str, int]],
    repeats: int | None,
    dtype: str,
    claims: Mapping[str, object] | None,
) -> Peaks:
    """:func:`measure_peaks`'s measurements, in the precision it sets."""
    reps = repeats or peak_repeats(presets)
    rounds = _rounds(presets)
    free = free_memory_bytes(device)
    dram = dram_ceiling(device, presets, repeats=reps)
    array, triad, fit, sweep = dram.array_bytes, dram.bytes_per_s, dram.sizing, dram.sweep
    set_flush_bytes(device, fit.beyond_bytes)
    copy = copy_bandwidth(device, array_bytes=array, repeats=reps)
    flops = gemm_flops(
        device, n=presets["peaks"]["gemm_n"], dtype=dtype, repeats=repeats or GEMM_REPEATS
    )
    read = read_bandwidth(device, array, repeats=reps)  # a DRAM read: the array reaches past it
    levels = cache_hierarchy(cache_levels(device), sweep, triad, dram_start_bytes(sweep))
    judged = judged_table_bytes(presets, claims, free)
    return Peaks(
        device=device,
        flops_per_s=flops,
        bytes_per_s=triad,
        dtype=dtype,
        copy_bytes_per_s=copy,
        triad_bytes_per_s=triad,
        read_bytes_per_s=read,
        levels=levels,
        sweep=sweep,
        latency_seconds=latency_floor(device),
        cold_latency_seconds=latency_floor(device, repeats=max(5, reps), cold=True),
        physical_flops_per_s=physical_flops(device, dtype),
        op_seconds=op_floor(device),
        line_bytes=transfer_unit_bytes(device),
        random_sweep=random_access(
            device,
            fit.cache_bytes,
            beyond_bytes=fit.beyond_bytes,
            first_cache_bytes=_first_cache_bytes(levels),
            largest_table_bytes=min(max(judged, default=0), free // 4) or None,
            judged_tables=judged,
            repeats=rounds,
        ),
        cold_sweep=cold_reads(device, fit.beyond_bytes, repeats=reps),
        gemm_sweep=gemm_sweep(device, flops / triad, dtype=dtype, repeats=rounds),
        activation_per_s=activation_rate(device, dtype=dtype, repeats=reps),
        threads=torch.get_num_threads() if device == "cpu" else None,
        sweep_rounds=rounds,
    )


def machine_sizing(
    device: str,
    sweep: Sequence[tuple[int, float]],
    budget: RunBudget,
    free_bytes: int | None = None,
) -> Sizing:
    """The sizes that follow from a device's measured sweep within ``budget``
    (:func:`~gpuconcepts.measure.hierarchy.sizing`, with the last cache sysfs or the GPU
    reports, which only ever makes the cache smaller, and the one below it, which DRAM's plateau
    cannot start within)."""
    levels = cache_levels(device)
    return sizing(
        sweep,
        sysfs_cache_bytes=levels[-1][1] if levels else None,
        budget_bytes=budget.memory_bytes,
        free_bytes=free_bytes,
        private_cache_bytes=levels[-2][1] if len(levels) > 1 else None,
    )


def _first_cache_bytes(levels: Sequence[MemoryLevel]) -> int | None:
    """The size of the first cache level the sweep found, if any."""
    return levels[0].size_bytes if levels else None
