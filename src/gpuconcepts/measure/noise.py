"""How busy the machine was: the noise probe a run takes before and after it measures, and
torch's CPU threads pinned for the run so that its probes and peaks say what its kernels ran on."""

# torch is imported inside functions on purpose (README, Rules: 3).
# ruff: noqa: PLC0415

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

from gpuconcepts.measure.devices import cpu_mhz, cpu_threads
from gpuconcepts.measure.physical import measured_hz
from gpuconcepts.measure.timing import time_function
from gpuconcepts.measurement import Measurement, NoiseProbe

REFERENCE_REPEATS = 21
"""Repetitions of the noise probe's reference kernel (a few milliseconds in all)."""


def probe_noise(device: str) -> NoiseProbe:
    """A :class:`NoiseProbe` of this machine now (a few milliseconds)."""
    import torch

    n = 256 if device == "cpu" else 2048
    a = torch.ones((n, n), device=device)
    b = torch.ones((n, n), device=device)
    times = Measurement(
        "probe",
        device,
        {},
        time_function(lambda: a @ b, device, repeats=REFERENCE_REPEATS, warmup=3),
        0,
        1,
    )
    try:
        load = os.getloadavg()[0]
    except OSError:  # pragma: no cover - not on this platform
        load = 0.0
    measured = measured_hz(tries=3) if device == "cpu" else None
    return NoiseProbe(
        load_average=round(load, 2),
        cores=os.cpu_count() or 1,
        cpu_mhz=cpu_mhz() if device == "cpu" else None,
        reference_seconds=times.seconds,
        reference_spread=times.iqr_seconds / times.seconds,
        measured_mhz=None if measured is None else round(measured / 1e6, 1),
        threads=int(torch.get_num_threads()) if device == "cpu" else None,
    )


@contextlib.contextmanager
def pinned_threads(device: str, threads: int | None = None) -> Iterator[int | None]:
    """torch's CPU threads fixed at ``threads`` (default: :func:`cpu_threads`, what torch
    chose) for the block, and the count handed to it, so that a run records the threads its
    kernels ran on (its noise probes and its peaks say it); None on a GPU, where nothing is
    pinned. The count in force before is restored after.

    >>> with pinned_threads("cpu", 1) as threads:
    ...     threads
    1
    """
    if device != "cpu":
        yield None
        return
    import torch

    previous = torch.get_num_threads()
    chosen = threads if threads is not None else cpu_threads()
    torch.set_num_threads(chosen)
    try:
        yield chosen
    finally:
        torch.set_num_threads(previous)
