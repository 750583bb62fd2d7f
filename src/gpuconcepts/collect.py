"""Collecting a Run on this machine: peaks, the profile, every claim, the whole-model and the
distributed parts (:func:`collect`). It sits above the Run value, which never imports it."""

# torch is imported inside functions on purpose (README, Rules: 3).
# ruff: noqa: PLC0415

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, replace
from typing import Any

from gpuconcepts.claims.judge import part_claims
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.lab import Budget, Lab, profile_all
from gpuconcepts.machine import provenance_here
from gpuconcepts.measure.hierarchy import Sizing
from gpuconcepts.results.distributed import DistributedReport
from gpuconcepts.results.wholemodel import WholeModelResults
from gpuconcepts.roofline import Peaks
from gpuconcepts.run.run import Run
from gpuconcepts.sizing import RunSizes
from gpuconcepts.units import significant

DISTRIBUTED_WORLD_SIZE = 2
"""Processes in the distributed part of a run (gloo over the loopback interface): the fewest
that exchange anything, so every machine can run it and the pipeline's two stages get a core
each on a 2-core machine. Where fewer cores are free, it runs all the same: its bytes are
counted, and the claims that read its times say they cannot (not visible)."""

GROWTH_WORLD_SIZE = 4
"""Processes over which a run counts the all-reduce's bytes in groups of 2, 3 and 4 (claim
``allreduce-grows-with-w``): bytes do not need a core per process, so any machine can."""


def collect(device: str, quick: bool, **options: Any) -> Run:
    """Measure a whole run on a resolved device: peaks, the five workloads, every claim, the
    whole-model experiments and the distributed measurement.

    Each kernel runs once per size (a :class:`~gpuconcepts.lab.Lab` hands the same
    measurement to the profile and to every claim that asks for it). The whole-model and
    distributed claims are judged from the results stored in the run
    (:meth:`Run.part_claims`), exactly as :meth:`Run.rejudged` judges them again later.

    It measures on the cores no other program keeps busy (:func:`~gpuconcepts.measure.free_cores`).
    Every argument after ``quick`` is a keyword. The run's sizes are decided here, once
    (:class:`~gpuconcepts.sizing.RunSizes`), and handed to every step.

    Args:
        device: ``"cpu"`` or ``"cuda"`` (see :func:`gpuconcepts.measure.resolve_device`).
        quick: the smaller sizes (``--quick``).
        sizes: the run's sizes, resolved already for ``device`` and ``quick`` by a command that
            uses them too (the peaks it keeps); None resolves them here.
        progress: called with one line of text before each step.
        command: what to record as the command (default: this process's command line).
        claims: False to measure the profile only (no claim experiments).
        dtype: run every kernel and the peak GEMM in this data type (``float32``, ``tf32``,
            ``float16``, ``bfloat16``); None keeps the book's defaults (float32 on a CPU,
            bfloat16 on a GPU with float32 embedding tables). The whole-model experiments
            keep their own (:attr:`~gpuconcepts.sizing.RunSizes.wholemodel`).
        wholemodel: False to leave out the whole-model experiments.
        peaks: this machine's peaks measured earlier (:mod:`~gpuconcepts.peaks_cache`);
            None measures them now.
        distributed: False to leave out the distributed measurement (gloo over loopback TCP
            in :data:`DISTRIBUTED_WORLD_SIZE` processes, about a minute on 2 cores). A machine
            that cannot run it gets the part skipped, with the reason recorded.
    """
    from gpuconcepts.measure import free_cores, pinned_threads

    sizes = options.pop("sizes", None) or RunSizes.resolve(device, quick)
    if (sizes.device, sizes.quick) != (device, quick):
        raise GpuConceptsError(
            f"collect: sizes resolved for {sizes.device}, quick={sizes.quick}; "
            f"the run is on {device}, quick={quick}"
        )
    # torch's threads pinned for the whole run (the probes, the peaks and every measurement
    # record them); a core another program keeps busy is left to it
    with pinned_threads(device), free_cores(device) as busy:
        run = _collect(sizes, **options)
    provenance = replace(run.provenance, cores_left_out=len(busy))
    return replace(run, provenance=provenance)


def _collect(
    sizes: RunSizes,
    *,
    progress: Callable[[str], None] | None = None,
    command: str | None = None,
    claims: bool = True,
    dtype: str | None = None,
    wholemodel: bool = True,
    distributed: bool = True,
    peaks: Peaks | None = None,
) -> Run:
    """:func:`collect` on the cores it was given."""
    from gpuconcepts.claims.experiments import measure_claims
    from gpuconcepts.claims.judge import judge_all
    from gpuconcepts.kernels import torch_dtype
    from gpuconcepts.kernels.peaks import machine_sizing
    from gpuconcepts.measure import free_memory_bytes, probe_noise

    device = sizes.device
    say = progress or (lambda _line: None)
    start = time.perf_counter()
    noise_before = probe_noise(device)

    def timed(line: str) -> None:
        say(f"[{significant(time.perf_counter() - start):>6} s] {line}")

    if dtype is not None:
        torch_dtype(dtype)  # an unknown name is an error before anything runs
    free = free_memory_bytes(device)
    peaks = _peaks(sizes, peaks, dtype, timed)
    fit = machine_sizing(device, peaks.sweep, sizes.budget, free)
    lab = _lab(sizes, peaks, fit, free, dtype=dtype, progress=timed)
    profile_all(lab, sizes.presets, sizes.sweeps)
    # the claims' experiments are measured first; the judges then only read the measurements
    results = judge_all(measure_claims(lab, sizes.claims), sizes.claims) if claims else ()
    whole, report, skipped = _parts(sizes, wholemodel, distributed, timed)
    provenance = provenance_here(
        sizes,
        command=command if command is not None else " ".join(["gpuconcepts", *sys.argv[1:]]),
        seconds=time.perf_counter() - start,
        sizes=_sizes_record(sizes, peaks, fit, claims=claims),
        noise=(noise_before, probe_noise(device)),
        cache_bytes=fit.cache_bytes,
    )
    run = Run(provenance, peaks, lab.measurements, lab.facts, results, whole, report, skipped)
    # The peaks stand as measured: a kernel above its roof is an anomaly the claims show, never
    # a reason to raise the ceiling (issue 45: raised ceilings graded themselves)
    timed("done")
    return replace(run, claims=(*results, *part_claims(run)))


def _peaks(
    sizes: RunSizes, peaks: Peaks | None, dtype: str | None, say: Callable[[str], None]
) -> Peaks:
    """The peaks kept from an earlier measurement (put to use within the run's budget), or
    this machine's measured now at the run's ``sizes``."""
    from gpuconcepts.kernels import measure_peaks
    from gpuconcepts.measure import device_name
    from gpuconcepts.peaks_cache import use_peaks

    name = device_name(sizes.device)
    if peaks is None:
        say(f"peaks on {name}: STREAM copy/triad and a GEMM")
        return measure_peaks(sizes.device, sizes, dtype=dtype)
    say(f"peaks on {name}: kept from an earlier measurement")
    use_peaks(peaks, sizes.budget)
    return peaks


def _lab(
    sizes: RunSizes,
    peaks: Peaks,
    fit: Sizing,
    free: int,
    *,
    dtype: str | None,
    progress: Callable[[str], None],
) -> Lab:
    """The Lab that measures every kernel of the run once, at the presets' timing."""
    from gpuconcepts.measure import device_name

    timing = sizes.presets.get("timing", {})
    return Lab(
        sizes.device,
        peaks,
        repeats=timing.get("repeats", 7),
        cache_bytes=fit.cache_bytes,
        free_bytes=free,
        label=device_name(sizes.device),
        dtype=dtype,
        progress=progress,
        budget=Budget.from_timing(timing),  # fixed rounds, in blocks
        largest_array_bytes=fit.largest_array_bytes,
    )


def _parts(
    sizes: RunSizes, wholemodel: bool, distributed: bool, say: Callable[[str], None]
) -> tuple[WholeModelResults | None, DistributedReport | None, dict[str, str]]:
    """The whole-model and distributed parts the run measures, and the reason for each part
    it skips."""
    skipped: dict[str, str] = {}
    whole = None
    if wholemodel:
        from gpuconcepts.kernels.decoder import whole_model

        whole = whole_model(sizes.device, sizes.wholemodel, progress=say)
    else:
        skipped["wholemodel"] = _LEFT_OUT
    report = None
    if distributed:
        report, reason = _measure_distributed(sizes, say)
        if report is None:
            skipped["distributed"] = reason
    else:
        skipped["distributed"] = _LEFT_OUT
    return whole, report, skipped


def _sizes_record(sizes: RunSizes, peaks: Peaks, fit: Sizing, *, claims: bool) -> dict[str, Any]:
    """The sizes the run measured at, as its provenance records them (plain JSON types, as a
    loaded run has them)."""
    from gpuconcepts.measure import last_level_cache_bytes

    record = {
        # the precision the GEMM sweep's products ran in (every ceiling runs in the peaks'
        # precision, kernels.precision): ledger 2 leaves unjudged a prediction that reads a
        # sweep of another precision than its kernel's (claims.accuracy.sweep_mismatch)
        "gemm_sweep_dtype": peaks.dtype,
        "presets": sizes.presets,
        "sweeps": {k: list(v) for k, v in sizes.sweeps.items()},
        "claims": asdict(sizes.claims) if claims else None,
        "budget": {
            **sizes.budget.to_dict(),
            "largest_array_bytes": fit.largest_array_bytes,
            "cache_bytes_reported": last_level_cache_bytes(sizes.device),
            "dram_reached": fit.dram_reached,
            "beyond_bytes": fit.beyond_bytes,
            "shrunk": list(fit.shrunk),
        },
    }
    plain: dict[str, Any] = json.loads(json.dumps(record))
    return plain


_LEFT_OUT = "left out when the run was collected"


def _measure_distributed(
    sizes: RunSizes, say: Callable[[str], None]
) -> tuple[DistributedReport | None, str]:
    """The distributed measurement at the run's ``sizes``, or None and the reason this machine
    could not run it."""
    from gpuconcepts.distributed.report import measure

    world = DISTRIBUTED_WORLD_SIZE
    say(
        f"distributed: {world} gloo processes over loopback TCP, and the all-reduce's bytes in "
        f"groups of up to {GROWTH_WORLD_SIZE}"
    )
    try:  # on too few free cores the times are not read (DistributedReport.crowded)
        report = measure(world, sizes, backend="gloo", growth_world=GROWTH_WORLD_SIZE)
        return report, ""
    except GpuConceptsError as error:  # no loopback counter, no sockets, a process failed
        say(f"distributed: skipped ({error})")
        return None, f"this machine could not run it: {error}"
