"""Probing this machine and its software for a Run's :class:`~gpuconcepts.run.provenance.Provenance`
(:func:`provenance_here`): the device, the processor, the versions, the commit, the caches and
the free memory, now."""

# torch is imported inside functions on purpose (README, Rules: 3).
# ruff: noqa: PLC0415

from __future__ import annotations

import platform
import subprocess
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import gpuconcepts
from gpuconcepts.measurement import NoiseProbe
from gpuconcepts.roofline.version import model_version
from gpuconcepts.run.provenance import Provenance, catalogue_hash

if TYPE_CHECKING:
    from gpuconcepts.sizing import RunSizes


def _git_commit() -> str | None:
    root = Path(__file__).resolve().parents[2]  # src/gpuconcepts/machine.py
    if not (root / ".git").exists():
        return None
    try:
        done = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None


def _driver_version() -> str | None:
    try:
        done = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip().splitlines()[0] if done.stdout.strip() else None


def provenance_here(
    run_sizes: RunSizes,
    *,
    command: str,
    seconds: float,
    sizes: Mapping[str, Any],
    noise: tuple[NoiseProbe, NoiseProbe] | None = None,
    cache_bytes: int | None = None,
) -> Provenance:
    """The provenance of this machine and its software, now, for a run on ``run_sizes``'
    device at those sizes (their ``quick`` recorded as the run's; ``sizes``: the record of
    them the run keeps; ``cache_bytes``: the last cache the run sized itself from, as its
    measured hierarchy found it; the reported one when not given)."""
    import torch

    from gpuconcepts.measure.devices import cpu_model, cpu_threads, device_name
    from gpuconcepts.measure.memory import free_memory_bytes, last_level_cache_bytes

    device = run_sizes.device
    gpu: dict[str, Any] = {"gpu_name": None, "gpu_sm_count": None, "gpu_memory_bytes": None}
    if device == "cuda":
        props = torch.cuda.get_device_properties(torch.cuda.current_device())
        gpu = {
            "gpu_name": str(props.name),
            "gpu_sm_count": int(props.multi_processor_count),
            "gpu_memory_bytes": int(props.total_memory),
        }
    return Provenance(
        device=device,
        device_name=device_name(device),
        cpu_model=cpu_model(),
        cpu_threads=cpu_threads(),
        **gpu,
        driver_version=_driver_version() if device == "cuda" else None,
        cuda_version=torch.version.cuda if device == "cuda" else None,
        torch_version=str(torch.__version__),
        python_version=platform.python_version(),
        gpuconcepts_version=gpuconcepts.__version__,
        git_commit=_git_commit(),
        created_utc=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        command=command,
        quick=run_sizes.quick,
        catalogue_hash=catalogue_hash(),
        cache_bytes=cache_bytes or last_level_cache_bytes(device),
        free_bytes=free_memory_bytes(device),
        seconds=seconds,
        sizes=sizes,
        noise_before=noise[0] if noise else None,
        noise_after=noise[1] if noise else None,
        model_version=model_version(),
    )
