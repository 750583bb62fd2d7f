"""Where and how a Run was measured: the :class:`Provenance` value (probing this machine and its
software for one is :func:`gpuconcepts.machine.provenance_here`, above the values)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any

import gpuconcepts
from gpuconcepts.formulas import CATALOGUE
from gpuconcepts.measurement import NoiseProbe
from gpuconcepts.records import POSITIVE, to_record
from gpuconcepts.roofline.version import model_version
from gpuconcepts.units import plural


def catalogue_hash() -> str:
    """A short hash of every formula of the catalogue (name and expression).

    A Run records it, so a reader can tell whether the formulas changed since it was saved
    (the per-measurement count check says which numbers that touches).

    >>> len(catalogue_hash()), catalogue_hash() == catalogue_hash()
    (16, True)
    """
    digest = hashlib.sha256()
    for name in sorted(CATALOGUE):
        digest.update(f"{name}={CATALOGUE[name].expr!r};".encode())
    return digest.hexdigest()[:16]


# -- provenance --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Provenance:
    """Where and how a Run was measured.

    ``device`` is ``"cpu"`` or ``"cuda"``; ``device_name`` says which one for people. The GPU
    fields are None on a CPU run; ``git_commit`` is None outside a source checkout.
    ``cache_bytes`` and ``free_bytes`` are the last-level cache and the free memory when the
    run was collected: the experiments sized themselves from them. ``sizes`` holds every size
    used (the kernel presets, the sweeps and the claims' sizes), so a saved run can be judged
    again without the machine that made it.
    """

    device: str
    device_name: str
    cpu_model: str
    cpu_threads: Annotated[int, POSITIVE]
    gpu_name: str | None
    gpu_sm_count: int | None
    gpu_memory_bytes: int | None
    driver_version: str | None
    cuda_version: str | None
    torch_version: str
    python_version: str
    gpuconcepts_version: str
    git_commit: str | None
    created_utc: str
    command: str
    quick: bool
    catalogue_hash: str
    cache_bytes: Annotated[int, POSITIVE]
    free_bytes: int
    seconds: float
    sizes: Mapping[str, Any]
    noise_before: NoiseProbe | None = None
    noise_after: NoiseProbe | None = None
    cores_left_out: int = 0
    model_version: str = ""
    """The model's version the run was measured with
    (:func:`~gpuconcepts.roofline.version.model_version`); "" for a run recorded before
    versions were kept (schema 3), which ledger 2 scores as in sample."""

    @classmethod
    def example(cls) -> Provenance:
        """A made-up CPU provenance, for examples and tests."""
        return cls(
            device="cpu",
            device_name="cpu (Example CPU, 2 threads)",
            cpu_model="Example CPU",
            cpu_threads=2,
            gpu_name=None,
            gpu_sm_count=None,
            gpu_memory_bytes=None,
            driver_version=None,
            cuda_version=None,
            torch_version="2.13.0",
            python_version="3.11.7",
            gpuconcepts_version=gpuconcepts.__version__,
            git_commit=None,
            created_utc="2026-01-01T00:00:00Z",
            command="gpuconcepts profile --quick",
            quick=True,
            catalogue_hash=catalogue_hash(),
            cache_bytes=32 * 1024**2,
            free_bytes=16 * 1024**3,
            seconds=1.0,
            sizes={},
            model_version=model_version(),
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict of every field."""
        return to_record(self)

    @property
    def summary(self) -> str:
        """One line for a caption: device, software and date.

        >>> Provenance.example().summary
        'cpu (Example CPU, 2 threads) with torch 2.13.0 on 2026-01-01, quick sizes'
        """
        cuda = f" / CUDA {self.cuda_version}" if self.cuda_version else ""
        sizes = "quick sizes" if self.quick else "full sizes"
        return (
            f"{self.device_name} with torch {self.torch_version}{cuda} on "
            f"{self.created_utc[:10]}, {sizes}"
        )

    @property
    def label(self) -> str:
        """A name no other run shares: device, time, commit and sizes.

        >>> Provenance.example().label
        'cpu (Example CPU, 2 threads), 2026-01-01 00:00 UTC, no commit, quick'
        """
        when = self.created_utc[:16].replace("T", " ")
        commit = self.git_commit[:7] if self.git_commit else "no commit"
        return f"{self.device_name}, {when} UTC, {commit}, {'quick' if self.quick else 'full'}"

    @property
    def noise(self) -> str:
        """The noise the run's verdicts had to get through, in a sentence.

        >>> Provenance.example().noise
        'This run recorded no noise probe (it was saved before runs had one).'
        """
        if self.noise_before is None or self.noise_after is None:
            return "This run recorded no noise probe (it was saved before runs had one)."
        probes = (self.noise_before, self.noise_after)
        # busy: a noisy reference kernel, a core left to another program, or at least one
        # runnable task per core on average (a load of 2.3 on 2 cores is no quiet machine)
        loaded = any(p.load_average >= p.cores for p in probes)
        busy = any(p.busy for p in probes) or loaded or self.cores_left_out > 0
        state = "busy" if busy else "quiet"
        left = (
            f" Other programs kept {plural(self.cores_left_out, 'core')} busy, so the run "
            f"measured on the other {plural(self.noise_before.cores - self.cores_left_out, 'core')} "
            "only."
            if self.cores_left_out
            else ""
        )
        return (
            # two sentences: the verdict, then the probes (one sentence ran past 60 words)
            f"This run's machine was {state}. Before the run: {self.noise_before.text()}; "
            f"after it: {self.noise_after.text()}.{left}"
        )
