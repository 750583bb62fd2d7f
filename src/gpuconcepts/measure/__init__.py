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

The package has three parts, each importable on its own and all re-exported here:
:mod:`~gpuconcepts.measure.devices` (device choice and what a run probes of its machine),
:mod:`~gpuconcepts.measure.timing` (the timers, paired rounds, the noise probe) and
:mod:`~gpuconcepts.measure.measurement` (the value and its statistics), which sits below
the timers and imports neither.
"""

from __future__ import annotations

from gpuconcepts.measure.devices import (
    BUSY_CORE_FRACTION,
    COLUMNS,
    DEFAULT_CACHE_LINE_BYTES,
    DEFAULT_LLC_BYTES,
    DEVICES,
    FMA_UNITS,
    GPU_SECTOR_BYTES,
    LLC_MULTIPLE,
    TRANSFER_UNIT_NAMES,
    VECTOR_BITS,
    CpuVector,
    busy_cores,
    cache_levels,
    cpu_cache_levels,
    cpu_cache_line_bytes,
    cpu_free_memory_bytes,
    cpu_last_level_cache_bytes,
    cpu_mhz,
    cpu_model,
    cpu_threads,
    cpu_vector,
    device_name,
    flush_buffer_bytes,
    free_cores,
    free_memory_bytes,
    last_level_cache_bytes,
    make_flusher,
    parse_cache_size,
    parse_meminfo,
    parse_proc_stat,
    resolve_device,
    stream_array_bytes,
    stream_rows,
    transfer_unit_bytes,
)
from gpuconcepts.measure.measurement import (
    ACCESS_FIELDS,
    NOISE_THRESHOLD,
    Measurement,
    quartiles,
)
from gpuconcepts.measure.timing import (
    REFERENCE_REPEATS,
    CudaBackend,
    EventLike,
    NoiseProbe,
    Rounds,
    Timeable,
    TorchCudaBackend,
    calls_per_repetition,
    probe_noise,
    time_cpu,
    time_cuda,
    time_function,
)

__all__ = [
    "ACCESS_FIELDS",
    "BUSY_CORE_FRACTION",
    "COLUMNS",
    "DEFAULT_CACHE_LINE_BYTES",
    "DEFAULT_LLC_BYTES",
    "DEVICES",
    "FMA_UNITS",
    "GPU_SECTOR_BYTES",
    "LLC_MULTIPLE",
    "NOISE_THRESHOLD",
    "REFERENCE_REPEATS",
    "TRANSFER_UNIT_NAMES",
    "VECTOR_BITS",
    "CpuVector",
    "CudaBackend",
    "EventLike",
    "Measurement",
    "NoiseProbe",
    "Rounds",
    "Timeable",
    "TorchCudaBackend",
    "busy_cores",
    "cache_levels",
    "calls_per_repetition",
    "cpu_cache_levels",
    "cpu_cache_line_bytes",
    "cpu_free_memory_bytes",
    "cpu_last_level_cache_bytes",
    "cpu_mhz",
    "cpu_model",
    "cpu_threads",
    "cpu_vector",
    "device_name",
    "flush_buffer_bytes",
    "free_cores",
    "free_memory_bytes",
    "last_level_cache_bytes",
    "make_flusher",
    "parse_cache_size",
    "parse_meminfo",
    "parse_proc_stat",
    "probe_noise",
    "quartiles",
    "resolve_device",
    "stream_array_bytes",
    "stream_rows",
    "time_cpu",
    "time_cuda",
    "time_function",
    "transfer_unit_bytes",
]
