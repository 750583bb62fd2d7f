"""This machine's peaks, measured once and kept in the user's cache folder.

``analyze`` and ``verify`` need the ceilings of the machine they run on. Measuring them takes
tens of seconds, so they are kept after the first measurement, in a file named by what they
depend on (the device and its CPU or GPU, the threads, torch and gpuconcepts versions, the data
type and whether the sizes were quick), in the user's cache folder as platformdirs places it
(``$XDG_CACHE_HOME/gpuconcepts`` or ``~/.cache/gpuconcepts`` on Linux,
``~/Library/Caches/gpuconcepts`` on macOS, ``%LOCALAPPDATA%\\gpuconcepts\\Cache`` on Windows;
``GPUCONCEPTS_CACHE_DIR`` overrides it). ``--fresh`` measures them again; ``profile`` always
measures and keeps what it measured.

>>> import tempfile, os
>>> os.environ["GPUCONCEPTS_CACHE_DIR"] = tempfile.mkdtemp()
>>> from gpuconcepts.roofline import Peaks
>>> here = Identity("cpu", "Example CPU", 2, None, "2.13.0", "0.1.0", "float32", quick=True)
>>> path = save_peaks(Peaks("cpu", 1e11, 1e10, "float32"), here)
>>> peaks, saved = load_peaks(here)
>>> peaks.flops_per_s, path.name.startswith("peaks-cpu-float32-quick-")
(100000000000.0, True)
>>> load_peaks(dataclasses.replace(here, torch_version="2.14.0")) is None
True
"""

# torch is imported inside functions on purpose (README, Rules: 3).
# ruff: noqa: PLC0415

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.records import from_record
from gpuconcepts.roofline import Peaks

if TYPE_CHECKING:
    from gpuconcepts.sizes import RunBudget
    from gpuconcepts.sizing import RunSizes

CACHE_ENV = "GPUCONCEPTS_CACHE_DIR"
"""An environment variable naming another cache folder (tests, shared machines)."""


@dataclasses.dataclass(frozen=True)
class Identity:
    """What a machine's peaks depend on: a cached file is used only when all of it matches."""

    device: str
    cpu_model: str
    threads: int
    gpu_name: str | None
    torch_version: str
    gpuconcepts_version: str
    dtype: str
    quick: bool
    model_version: str = ""
    """The ceilings' definitions (:func:`~gpuconcepts.roofline.version.model_version`): peaks
    kept by code that measured them otherwise are measured again."""
    sweeps_version: str = ""
    """Every sweep's code, the diagnoses' too (:func:`~gpuconcepts.roofline.version.sweeps_version`)."""

    @property
    def key(self) -> str:
        """A short, stable name for this identity (the cache file's stem)."""
        text = json.dumps(dataclasses.asdict(self), sort_keys=True)
        digest = hashlib.sha256(text.encode()).hexdigest()[:16]
        return f"peaks-{self.device}-{self.dtype}-{'quick' if self.quick else 'full'}-{digest}"


def identity_here(sizes: RunSizes, dtype: str | None = None) -> Identity:
    """This machine's :class:`Identity` for peaks measured at ``sizes`` (the run's, resolved
    once at the top) in ``dtype`` (the book's default when None)."""
    import torch

    import gpuconcepts
    from gpuconcepts.hardware import dtype_name
    from gpuconcepts.kernels import default_dtype
    from gpuconcepts.measure import cpu_model, cpu_threads
    from gpuconcepts.roofline.version import model_version, sweeps_version

    device = sizes.device
    gpu = torch.cuda.get_device_name(torch.cuda.current_device()) if device == "cuda" else None
    return Identity(
        device=device,
        cpu_model=cpu_model(),
        threads=cpu_threads(),
        gpu_name=gpu,
        torch_version=str(torch.__version__),
        gpuconcepts_version=gpuconcepts.__version__,
        dtype=dtype_name(dtype or default_dtype(device)),
        quick=sizes.quick,
        model_version=model_version(),
        sweeps_version=sweeps_version(),
    )


def cache_folder() -> Path:
    """The folder that keeps measured peaks (see the module's docstring)."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    home = Path.home()
    if sys.platform == "darwin":
        return home / "Library" / "Caches" / "gpuconcepts"
    if sys.platform == "win32":
        local = os.environ.get("LOCALAPPDATA") or str(home / "AppData" / "Local")
        return Path(local) / "gpuconcepts" / "Cache"
    return Path(os.environ.get("XDG_CACHE_HOME") or home / ".cache") / "gpuconcepts"


def save_peaks(peaks: Peaks, identity: Identity) -> Path:
    """Keep ``peaks`` for ``identity``; returns the file. A folder that cannot be written is
    an error naming it."""
    path = cache_folder() / f"{identity.key}.json"
    record = {
        "identity": dataclasses.asdict(identity),
        "saved_utc": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "peaks": peaks.to_dict(),
    }
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(".part")
        partial.write_text(json.dumps(record, allow_nan=False))
        partial.replace(path)  # a reader never sees half a file
    except OSError as error:
        raise GpuConceptsError(
            f"cannot keep the measured peaks in {path.parent} ({error.strerror}); "
            f"set {CACHE_ENV} to a folder that can be written"
        ) from None
    return path


def load_peaks(identity: Identity) -> tuple[Peaks, str] | None:
    """The peaks kept for ``identity`` and when they were saved (UTC), or None when there are
    none, or the file is unreadable or was written for something else (it is measured again
    then, and overwritten)."""
    path = cache_folder() / f"{identity.key}.json"
    try:
        record = json.loads(path.read_text())
        if record["identity"] != dataclasses.asdict(identity):
            return None
        return from_record(Peaks, record["peaks"], str(path)), str(record["saved_utc"])
    except (OSError, ValueError, KeyError, TypeError, GpuConceptsError):
        return None


def this_machine_peaks(
    sizes: RunSizes,
    *,
    dtype: str | None = None,
    fresh: bool = False,
    progress: Callable[[str], None] | None = None,
) -> tuple[Peaks, str]:
    """This machine's peaks at ``sizes`` and where they come from, in words: kept from an
    earlier measurement when one matches (unless ``fresh``), else measured now and kept."""
    from gpuconcepts.kernels import measure_peaks

    identity = identity_here(sizes, dtype)
    kept = None if fresh else kept_peaks(identity, sizes.budget)
    if kept is not None:
        return kept
    if progress is not None:
        progress("measuring this machine's peaks (kept for next time; --fresh measures again)")
    peaks = measure_peaks(sizes.device, sizes, dtype=dtype)
    if progress is None:
        save_peaks(peaks, identity)
    else:
        keep_peaks(peaks, identity, lambda text: progress(f"warning: {text}"))
    return peaks, "measured now"


def keep_peaks(peaks: Peaks, identity: Identity, warn: Callable[[str], None]) -> Path | None:
    """Keep ``peaks`` as :func:`save_peaks` does; returns the file. A cache folder that cannot
    be written is said through ``warn`` (one line) and None is returned: the command that
    measured them still gives its result, and the next one measures them again.
    """
    try:
        return save_peaks(peaks, identity)
    except GpuConceptsError as error:
        warn(str(error))
        return None


def kept_peaks(identity: Identity, budget: RunBudget) -> tuple[Peaks, str] | None:
    """The peaks kept for ``identity``, ready to use (they size this process's flush within
    ``budget``, :func:`use_peaks`), and where they come from in words; None when none are kept.
    """
    kept = load_peaks(identity)
    if kept is None:
        return None
    peaks, saved = kept
    use_peaks(peaks, budget)
    return peaks, f"kept from {saved} ({cache_folder()}; --fresh measures them again)"


def use_peaks(peaks: Peaks, budget: RunBudget) -> None:
    """Size this process's cache flush from peaks measured earlier (their sweep says where
    DRAM begins; :func:`gpuconcepts.measure.set_flush_bytes`), within the run's ``budget``."""
    from gpuconcepts.kernels.peaks import machine_sizing
    from gpuconcepts.measure import set_flush_bytes

    set_flush_bytes(peaks.device, machine_sizing(peaks.device, peaks.sweep, budget).beyond_bytes)
