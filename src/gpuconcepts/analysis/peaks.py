"""Peaks worth a warning: measured now and far from a run recorded on this machine, or from
the GPU's datasheet (a busy machine, another clock, a measurement to doubt)."""

# torch is imported inside functions (README, Rules: 3).
# ruff: noqa: PLC0415

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.roofline import Peaks
from gpuconcepts.units import si, significant

FAR_FROM_RECORDED = 1.5
"""Peaks measured now that differ from a run recorded on the same machine by more than this
factor (either way) are worth a warning: a busy machine, another clock, another setting."""

FAR_BELOW_DATASHEET = 3.0
"""A GPU's measured peak below its datasheet's by more than this factor is worth a warning."""


def peaks_warnings(peaks: Peaks, device: str, runs: Sequence[Any] | None = None) -> tuple[str, ...]:
    """Warnings when peaks measured now are far from a run recorded on the same machine
    (``docs/runs/`` of a source checkout, or ``runs``) or from the GPU's datasheet.

    >>> from gpuconcepts.run import Provenance, Run
    >>> from gpuconcepts.measure import cpu_model, cpu_threads
    >>> from dataclasses import replace
    >>> here = replace(Provenance.example(), cpu_model=cpu_model(), cpu_threads=cpu_threads())
    >>> then = Run(here, Peaks("cpu", 150e9, 30e9, "float32"), (), {}, ())
    >>> peaks_warnings(Peaks("cpu", 55e9, 29e9, "float32"), "cpu", [then])[0][:60]
    'the compute roof measured now, 55 GFLOP/s, is 0.37x the 150 '
    """
    from gpuconcepts.hardware import current_gpu
    from gpuconcepts.measure import cpu_model, cpu_threads

    runs = _recorded_runs() if runs is None else runs
    said = []
    roofs = (("compute", "flops_per_s", "FLOP/s"), ("bandwidth", "bytes_per_s", "B/s"))
    for run in runs:
        origin = run.provenance
        if origin.device != device or run.peaks.dtype != peaks.dtype:
            continue
        if device == "cpu" and (origin.cpu_model, origin.cpu_threads) != (
            cpu_model(),
            cpu_threads(),
        ):
            continue
        gpu = current_gpu() if device == "cuda" else None
        if device == "cuda" and (
            gpu is None
            or origin.gpu_name is None
            or not any(re.search(pattern, origin.gpu_name) for pattern in gpu.device_names)
        ):
            continue
        for what, field_name, unit in roofs:
            now, then = getattr(peaks, field_name), getattr(run.peaks, field_name)
            if not 1 / FAR_FROM_RECORDED <= now / then <= FAR_FROM_RECORDED:
                said.append(
                    f"the {what} roof measured now, {si(now, unit)}, is {significant(now / then, 2)}x the "
                    f"{si(then, unit)} recorded on this machine ({origin.created_utc}): it may "
                    "be busy, and calls near the ridge may change label; --peaks RUN.json "
                    "reuses a saved run's peaks"
                )
    datasheet = current_gpu() if device == "cuda" else None
    if datasheet is not None and datasheet.peak(peaks.dtype) is not None:
        for what, now, limit, unit in (
            ("compute", peaks.flops_per_s, float(datasheet.peak(peaks.dtype) or 0), "FLOP/s"),
            ("bandwidth", peaks.bytes_per_s, datasheet.bytes_per_s, "B/s"),
        ):
            if now > limit * 1.05 or now < limit / FAR_BELOW_DATASHEET:
                said.append(
                    f"the {what} roof measured now, {si(now, unit)}, is {significant(now / limit, 2)}x "
                    f"{datasheet.name}'s datasheet ({si(limit, unit)}): a measurement to doubt"
                )
    return tuple(said)


def _recorded_runs() -> list[Any]:
    """The runs in ``docs/runs/`` of this source checkout (none in an installed package)."""
    from pathlib import Path

    from gpuconcepts.run import load_all

    folder = Path(__file__).resolve().parents[3] / "docs" / "runs"
    try:
        return load_all(folder)
    except GpuConceptsError:
        return []
