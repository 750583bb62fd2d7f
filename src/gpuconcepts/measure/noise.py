"""How busy the machine was: the noise probe a run takes before and after it measures, and
torch's CPU threads pinned for the run so that its probes and peaks say what its kernels ran on."""

# torch is imported inside functions on purpose (README, Rules: 3).
# ruff: noqa: PLC0415

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

from gpuconcepts.measure.devices import cpu_mhz, cpu_threads
from gpuconcepts.measure.physical import measured_hz
from gpuconcepts.measure.timing import time_function
from gpuconcepts.measurement import NOISE_THRESHOLD, Measurement
from gpuconcepts.units import percent, plain_number, plural, significant

REFERENCE_REPEATS = 21
"""Repetitions of the noise probe's reference kernel (a few milliseconds in all)."""


@dataclass(frozen=True)
class NoiseProbe:
    """How busy the machine was at one moment: its load, its clock and the spread of a fixed
    reference kernel (a small matrix product timed :data:`REFERENCE_REPEATS` times).

    A run takes one before and one after its measurements and keeps both in its provenance,
    so a reader sees how much noise its verdicts had to get through.

    >>> probe = NoiseProbe(load_average=0.2, cores=2, cpu_mhz=None, reference_seconds=1e-4,
    ...                    reference_spread=0.35)
    >>> probe.busy, probe.text()
    (True, "load average 0.2 on 2 cores, a reference kernel's spread 35%")
    """

    load_average: float
    cores: int
    cpu_mhz: float | None
    reference_seconds: float
    reference_spread: float
    measured_mhz: float | None = None
    """One core's clock as measured (:func:`~gpuconcepts.measure.physical.measured_hz`), not
    the "cpu MHz" of /proc/cpuinfo (``cpu_mhz``, which boost clocks pass); None on a GPU, where
    it cannot run, and in runs recorded before 2026-12-07."""
    threads: int | None = None
    """The threads torch ran on at the probe (the run pins them: :func:`pinned_threads`);
    None on a GPU and in runs recorded before 2026-12-07."""

    OPTIONAL_KEYS: ClassVar[frozenset[str]] = frozenset({"measured_mhz", "threads"})
    """Written only when set, so a run recorded before them saves as it was."""

    @property
    def busy(self) -> bool:
        """True when the reference kernel's spread (IQR over median) was over
        :data:`NOISE_THRESHOLD`, the level at which a single measurement is called noisy."""
        return self.reference_spread > NOISE_THRESHOLD

    def text(self) -> str:
        """The probe in words."""
        if self.measured_mhz:
            clock = f", a measured clock of {plain_number(round(self.measured_mhz))} MHz"
        else:
            clock = f", {plain_number(round(self.cpu_mhz))} MHz" if self.cpu_mhz else ""
        threads = f", {plural(self.threads, 'thread')}" if self.threads else ""
        return (
            f"load average {significant(self.load_average, 2)} on "
            f"{plural(self.cores, 'core')}{clock}{threads}, a reference kernel's spread "
            f"{percent(self.reference_spread)}"
        )


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
