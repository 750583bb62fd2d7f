r"""Device choice, timing done right, and the ``Measurement`` value a kernel run produces.

Measuring and reporting are kept apart (the habit of ``torch.utils.benchmark``): the
timers here return raw per-repetition seconds, and :class:`Measurement` is a plain frozen
value that knows its own statistics (median and interquartile range) and nothing of any
machine: :func:`gpuconcepts.roofline.place` puts it under a device's peaks.

>>> from gpuconcepts.measure import Measurement
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
  ``.interval_flops_per_s``, ``.interval_bytes_per_s``), ``.intensity``, ``.size(name)``, ``.to_dict()`` (read back with ``records.from_record``).
* Timers: ``time_cpu(fn, repeats=..., ...)``, ``time_cuda(fn, repeats=..., backend=...)`` and
  ``time_function(fn, device, repeats=..., flush=...)``; each returns raw seconds per repetition.
* Cache and memory sizes: ``cache_levels(device)``, ``cpu_last_level_cache_bytes()``,
  ``last_level_cache_bytes(device)``,
  ``flush_buffer_bytes(beyond_bytes)``, ``set_flush_bytes(device, beyond_bytes)``,
  ``flush_bytes(device)``, ``make_flusher(device)``, ``cpu_free_memory_bytes()``,
  ``free_memory_bytes(device)``.

The CUDA timer takes its events and synchronisation from a small ``CudaBackend`` object,
so its logic (warm-up, one event pair per repetition, cache flush before each one) is
unit-tested on a machine without a GPU.

Where DRAM begins and the sizes that follow from it within a run's memory budget are in
:mod:`~gpuconcepts.measure.hierarchy` (``dram_start_bytes(sweep)``, ``sizing(...)``), which
imports no torch.

The package has five parts, each importable on its own and all re-exported here lazily (PEP
562: a name is imported when it is first asked for, so importing the package alone loads none
of them):
:mod:`~gpuconcepts.measure.devices` (device choice and what a run probes of its processor),
:mod:`~gpuconcepts.measure.memory` (its caches, the flush, the STREAM arrays, free memory),
:mod:`~gpuconcepts.measure.timing` (the timers, paired rounds),
:mod:`~gpuconcepts.measure.noise` (the noise probe, the pinned threads), and the measured
values, :mod:`~gpuconcepts.measurement` (:class:`Measurement` with its statistics, the
:class:`NoiseProbe`), which sit in the values layer below the timers (issue 47) and are
re-exported here too. :mod:`gpuconcepts.machine`, beside this package, probes this machine and
its software for a run's provenance.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuconcepts.lazy import reexports

if TYPE_CHECKING:
    from gpuconcepts.measure.devices import BUSY_CORE_FRACTION as BUSY_CORE_FRACTION
    from gpuconcepts.measure.devices import DEVICES as DEVICES
    from gpuconcepts.measure.devices import busy_cores as busy_cores
    from gpuconcepts.measure.devices import cpu_mhz as cpu_mhz
    from gpuconcepts.measure.devices import cpu_model as cpu_model
    from gpuconcepts.measure.devices import cpu_threads as cpu_threads
    from gpuconcepts.measure.devices import device_name as device_name
    from gpuconcepts.measure.devices import free_cores as free_cores
    from gpuconcepts.measure.devices import parse_proc_stat as parse_proc_stat
    from gpuconcepts.measure.devices import resolve_device as resolve_device
    from gpuconcepts.measure.memory import COLUMNS as COLUMNS
    from gpuconcepts.measure.memory import DEFAULT_CACHE_LINE_BYTES as DEFAULT_CACHE_LINE_BYTES
    from gpuconcepts.measure.memory import DEFAULT_LLC_BYTES as DEFAULT_LLC_BYTES
    from gpuconcepts.measure.memory import GPU_SECTOR_BYTES as GPU_SECTOR_BYTES
    from gpuconcepts.measure.memory import LLC_MULTIPLE as LLC_MULTIPLE
    from gpuconcepts.measure.memory import TRANSFER_UNIT_NAMES as TRANSFER_UNIT_NAMES
    from gpuconcepts.measure.memory import cache_levels as cache_levels
    from gpuconcepts.measure.memory import cpu_cache_levels as cpu_cache_levels
    from gpuconcepts.measure.memory import cpu_cache_line_bytes as cpu_cache_line_bytes
    from gpuconcepts.measure.memory import cpu_free_memory_bytes as cpu_free_memory_bytes
    from gpuconcepts.measure.memory import cpu_last_level_cache_bytes as cpu_last_level_cache_bytes
    from gpuconcepts.measure.memory import flush_buffer_bytes as flush_buffer_bytes
    from gpuconcepts.measure.memory import flush_bytes as flush_bytes
    from gpuconcepts.measure.memory import free_memory_bytes as free_memory_bytes
    from gpuconcepts.measure.memory import last_level_cache_bytes as last_level_cache_bytes
    from gpuconcepts.measure.memory import make_flusher as make_flusher
    from gpuconcepts.measure.memory import parse_cache_size as parse_cache_size
    from gpuconcepts.measure.memory import parse_meminfo as parse_meminfo
    from gpuconcepts.measure.memory import set_flush_bytes as set_flush_bytes
    from gpuconcepts.measure.memory import stream_array_bytes as stream_array_bytes
    from gpuconcepts.measure.memory import stream_rows as stream_rows
    from gpuconcepts.measure.memory import transfer_unit_bytes as transfer_unit_bytes
    from gpuconcepts.measure.noise import REFERENCE_REPEATS as REFERENCE_REPEATS
    from gpuconcepts.measure.noise import pinned_threads as pinned_threads
    from gpuconcepts.measure.noise import probe_noise as probe_noise
    from gpuconcepts.measure.timing import CudaBackend as CudaBackend
    from gpuconcepts.measure.timing import EventLike as EventLike
    from gpuconcepts.measure.timing import Rounds as Rounds
    from gpuconcepts.measure.timing import Timeable as Timeable
    from gpuconcepts.measure.timing import TorchCudaBackend as TorchCudaBackend
    from gpuconcepts.measure.timing import calls_per_repetition as calls_per_repetition
    from gpuconcepts.measure.timing import time_cpu as time_cpu
    from gpuconcepts.measure.timing import time_cuda as time_cuda
    from gpuconcepts.measure.timing import time_function as time_function
    from gpuconcepts.measurement import ACCESS_FIELDS as ACCESS_FIELDS
    from gpuconcepts.measurement import NOISE_THRESHOLD as NOISE_THRESHOLD
    from gpuconcepts.measurement import Measurement as Measurement
    from gpuconcepts.measurement import NoiseProbe as NoiseProbe
    from gpuconcepts.measurement import block_bounds as block_bounds
    from gpuconcepts.measurement import quartiles as quartiles

EXPORTS = {
    "gpuconcepts.measure.devices": (
        "BUSY_CORE_FRACTION",
        "DEVICES",
        "busy_cores",
        "cpu_mhz",
        "cpu_model",
        "cpu_threads",
        "device_name",
        "free_cores",
        "parse_proc_stat",
        "resolve_device",
    ),
    "gpuconcepts.measure.memory": (
        "COLUMNS",
        "DEFAULT_CACHE_LINE_BYTES",
        "DEFAULT_LLC_BYTES",
        "GPU_SECTOR_BYTES",
        "LLC_MULTIPLE",
        "TRANSFER_UNIT_NAMES",
        "cache_levels",
        "cpu_cache_levels",
        "cpu_cache_line_bytes",
        "cpu_free_memory_bytes",
        "cpu_last_level_cache_bytes",
        "flush_buffer_bytes",
        "flush_bytes",
        "free_memory_bytes",
        "last_level_cache_bytes",
        "make_flusher",
        "parse_cache_size",
        "parse_meminfo",
        "set_flush_bytes",
        "stream_array_bytes",
        "stream_rows",
        "transfer_unit_bytes",
    ),
    "gpuconcepts.measure.noise": (
        "REFERENCE_REPEATS",
        "pinned_threads",
        "probe_noise",
    ),
    "gpuconcepts.measure.timing": (
        "CudaBackend",
        "EventLike",
        "Rounds",
        "Timeable",
        "TorchCudaBackend",
        "calls_per_repetition",
        "time_cpu",
        "time_cuda",
        "time_function",
    ),
    "gpuconcepts.measurement": (
        "ACCESS_FIELDS",
        "NOISE_THRESHOLD",
        "Measurement",
        "NoiseProbe",
        "block_bounds",
        "quartiles",
    ),
}
"""Each module's names this package re-exports (the ``TYPE_CHECKING`` block says the same for
the type checker; ``tests/test_imports.py`` checks that they agree)."""

__getattr__, __dir__ = reexports(__name__, globals(), EXPORTS)
