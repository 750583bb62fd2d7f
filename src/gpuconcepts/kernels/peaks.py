r"""Measured peaks: the ceilings of :class:`~gpuconcepts.roofline.Peaks`, each from its own
sweep (one module per mechanism in :mod:`gpuconcepts.kernels.ceilings`), put together by
:func:`measure_peaks`.

The arrays reach past where the working-set sweep finds DRAM's plateau (and at least four
times the last cache it measured), within the run's memory budget, so the bandwidth is DRAM's
(HBM's) and not the cache's. Each rate is taken at the median repetition, the statistic the
kernels a ceiling bounds are read by: a best repetition, or a ceiling raised whenever a kernel
beat it, would sit above what the machine sustains (issue 45: the DRAM roof read 1.45x
STREAM's triad on a 2-core EPYC). The sweeps' names are importable from here as before.

>>> rate = copy_bandwidth("cpu", array_bytes=4 * 1024**2, repeats=2)
>>> rate > 0
True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field

import torch

from gpuconcepts import formulas
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.hardware import dtype_name
from gpuconcepts.kernels._common import default_dtype, precision, torch_dtype
from gpuconcepts.kernels.ceilings import diagnosis_sweeps
from gpuconcepts.kernels.ceilings.activation import (
    ACTIVATION_ELEMENTS,
    activation_call,
    activation_rate,
)
from gpuconcepts.kernels.ceilings.cache import (
    MEASURED_LEVEL,
    SWEEP_READ_BYTES,
    SWEEP_SMALLEST,
    cache_hierarchy,
    level_seconds,
    read_bandwidth,
    sweep_sizes,
    working_set_sweep,
)
from gpuconcepts.kernels.ceilings.cold import cold_reads
from gpuconcepts.kernels.ceilings.compute import (
    GEMM_BACKENDS,
    GEMM_REPEATS,
    gemm_backends,
    gemm_flops,
    gemm_kernel,
    gemm_shape_flops,
    gemm_sweep,
    linear_call,
)
from gpuconcepts.kernels.ceilings.gather import (
    RANDOM_BAG,
    RANDOM_CALL_MAX_BYTES,
    RANDOM_CALL_ROWS,
    RANDOM_ROW_BYTES,
    gather_call,
    random_access,
)
from gpuconcepts.kernels.ceilings.rounds import (
    PEAK_REPEATS,
    SweepPoint,
    median_in_rounds,
    peak_repeats,
    rounds_of,
)
from gpuconcepts.kernels.ceilings.stream import copy_bandwidth, triad_bandwidth, triad_kernel
from gpuconcepts.kernels.dispatch import latency_floor, op_floor
from gpuconcepts.measure import (
    COLUMNS,
    cache_levels,
    free_memory_bytes,
    set_flush_bytes,
    stream_array_bytes,
    transfer_unit_bytes,
)
from gpuconcepts.measure.hierarchy import (
    Sizing,
    dram_start_bytes,
    largest_array_bytes,
    sizing,
)
from gpuconcepts.measure.physical import cpu_id, fma_core, measured_hz
from gpuconcepts.roofline import MemoryLevel, Peaks, RateSweep
from gpuconcepts.sizes import RunBudget
from gpuconcepts.sizing import RunSizes
from gpuconcepts.sweeps import judged_table_bytes
from gpuconcepts.units import MiB

__all__ = [
    "ACTIVATION_ELEMENTS",
    "COLUMNS",
    "GEMM_BACKENDS",
    "GEMM_REPEATS",
    "MEASURED_LEVEL",
    "PEAK_REPEATS",
    "RANDOM_BAG",
    "RANDOM_CALL_MAX_BYTES",
    "RANDOM_CALL_ROWS",
    "RANDOM_ROW_BYTES",
    "SWEEP_READ_BYTES",
    "SWEEP_SMALLEST",
    "DramCeiling",
    "SweepPoint",
    "activation_call",
    "activation_rate",
    "cache_hierarchy",
    "cold_reads",
    "copy_bandwidth",
    "diagnosis_rate_sweeps",
    "dram_ceiling",
    "gather_call",
    "gemm_backends",
    "gemm_flops",
    "gemm_kernel",
    "gemm_shape_flops",
    "gemm_sweep",
    "linear_call",
    "machine_sizing",
    "measure_peaks",
    "median_in_rounds",
    "peak_repeats",
    "physical_flops",
    "random_access",
    "read_bandwidth",
    "rounds_of",
    "stream_array_bytes",
    "sweep_sizes",
    "transfer_unit_bytes",
    "triad_bandwidth",
    "triad_kernel",
    "working_set_sweep",
]


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
    hz = None if core is None else measured_hz()  # never /proc/cpuinfo's clock
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
    (:func:`gemm_flops`, ``torch.mm``), and DRAM's roof the STREAM triad on arrays far beyond
    every cache (:func:`dram_ceiling`), each at its median repetition: no ceiling is timed from
    a kernel the book judges, nor within 2x of one's shape in every dimension
    (``tests/test_ceilings.py``), and none is raised when a kernel beats it (an anomaly, or a
    finding when the kernel runs a faster path than the peak's, as oneDNN's convolution on a
    CPU may). The copy and the
    read of the same arrays are recorded beside the triad, not as the roof. The GEMM runs in
    ``dtype`` (default: the book's, see :func:`~gpuconcepts.kernels.default_dtype`). The cache
    levels (:func:`cache_hierarchy`), the latency floor
    (:func:`~gpuconcepts.kernels.dispatch.latency_floor`), the floor of one
    dispatched operation (:func:`~gpuconcepts.kernels.dispatch.op_floor`), the random-access
    sweep (:func:`random_access`), the cold sweep (:func:`cold_reads`), the GEMM sweep
    (:func:`gemm_sweep`) and each diagnosis's own sweep (:func:`diagnosis_rate_sweeps`)
    complete them. Every ceiling runs in ``dtype``'s
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
        peaks = _ceilings(device, presets, repeats, dtype, claims)
        return peaks.with_rate_sweeps(
            diagnosis_rate_sweeps(device, presets, dtype, peaks.sweep_rounds or 1)
        )


def diagnosis_rate_sweeps(
    device: str, presets: Mapping[str, Mapping[str, int]], dtype: str, rounds: int
) -> dict[str, RateSweep]:
    """What every diagnosis's own sweep (:func:`~gpuconcepts.kernels.ceilings.diagnosis_sweeps`)
    measured at the presets' sizes, by the diagnosis's name (a sweep the presets give no sizes
    is left out)."""
    found = {}
    for sweep in diagnosis_sweeps():
        measured = sweep.measure(device, presets, dtype, rounds)
        if measured is not None:
            found[sweep.name] = measured
    return found


@dataclass(frozen=True)
class DramCeiling:
    """DRAM's roof as measured: the STREAM arrays' bytes, the triad's median bytes/s on them,
    the working-set sweep that sized them and the sizes that follow from it; the triad's
    seconds repetition by repetition, and each working set's round by round, by its bytes."""

    array_bytes: int
    bytes_per_s: float
    sweep: tuple[tuple[int, float], ...]
    sizing: Sizing
    seconds: tuple[float, ...] = ()
    sweep_seconds: Mapping[int, tuple[float, ...]] = field(default_factory=dict)


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
    sweep_seconds: dict[int, tuple[float, ...]] = {}
    sweep = working_set_sweep(
        device,
        largest_array_bytes(budget.memory_bytes, free),
        repeats=rounds_of(presets),
        keep=sweep_seconds,
    )
    fit = machine_sizing(device, sweep, budget, free)
    array = stream_array_bytes(
        presets["peaks"]["stream_mib"] * MiB, fit.cache_bytes, free, fit.largest_array_bytes
    )
    kept: dict[str, tuple[float, ...]] = {}
    rate = triad_bandwidth(device, array_bytes=array, repeats=reps, keep=kept)
    return DramCeiling(array, rate, sweep, fit, kept.get("bytes_per_s", ()), sweep_seconds)


def _ceilings(
    device: str,
    presets: Mapping[str, Mapping[str, int]],
    repeats: int | None,
    dtype: str,
    claims: Mapping[str, object] | None,
) -> Peaks:
    """:func:`measure_peaks`'s measurements, in the precision it sets, with the seconds of
    every repetition P, DRAM's β, each cache level's β and each random-access point were read
    from (``ceiling_seconds``), and of the floors' and each cold sweep point's: the overhead
    roof reads the floors timed beside a kernel where it has them, these where it has not, and
    a page gives each with its spread."""
    reps = repeats or peak_repeats(presets)
    rounds = rounds_of(presets)
    free = free_memory_bytes(device)
    dram = dram_ceiling(device, presets, repeats=reps)
    array, triad, fit, sweep = dram.array_bytes, dram.bytes_per_s, dram.sizing, dram.sweep
    set_flush_bytes(device, fit.beyond_bytes)
    copy = copy_bandwidth(device, array_bytes=array, repeats=reps)
    kept: dict[str, tuple[float, ...]] = {"bytes_per_s": dram.seconds}
    n, gemm_repeats = presets["peaks"]["gemm_n"], repeats or GEMM_REPEATS
    flops = gemm_flops(device, n=n, dtype=dtype, repeats=gemm_repeats, keep=kept)
    read = read_bandwidth(device, array, repeats=reps)  # a DRAM read: the array reaches past it
    levels = cache_hierarchy(cache_levels(device), sweep, triad, dram_start_bytes(sweep))
    kept |= level_seconds(levels, sweep, dram.sweep_seconds)
    judged = judged_table_bytes(presets, claims, free)
    random = random_access(
        device,
        fit.cache_bytes,
        beyond_bytes=fit.beyond_bytes,
        first_cache_bytes=_first_cache_bytes(levels),
        largest_table_bytes=min(max(judged, default=0), free // 4) or None,
        judged_tables=judged,
        repeats=rounds,
        keep=kept,
    )
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
        latency_seconds=latency_floor(device, keep=kept),
        cold_latency_seconds=latency_floor(device, repeats=max(5, reps), cold=True, keep=kept),
        physical_flops_per_s=physical_flops(device, dtype),
        op_seconds=op_floor(device, keep=kept),
        line_bytes=transfer_unit_bytes(device),
        random_sweep=random,
        cold_sweep=cold_reads(device, fit.beyond_bytes, repeats=reps, keep=kept),
        gemm_sweep=gemm_sweep(device, flops / triad, dtype=dtype, repeats=rounds),
        activation_per_s=activation_rate(device, dtype=dtype, repeats=reps),
        threads=torch.get_num_threads() if device == "cpu" else None,
        sweep_rounds=rounds,
        ceiling_seconds={key: seconds for key, seconds in kept.items() if seconds},
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
