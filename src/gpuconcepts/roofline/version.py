"""The model's version: a hash of the code that predicts a kernel's time and of the code that
defines the ceilings it reads (issue 45: predictions are registered before the measurement).

A run records the version it was measured with
(:attr:`~gpuconcepts.run.provenance.Provenance.model_version`); ledger 2
(:mod:`gpuconcepts.claims.accuracy`) scores a run recorded with this version as out of
sample, and one recorded before it as in sample: a model changed after a run was seen was
fitted, in part, to that run.

The source text is read, never imported, so the version costs no torch.

>>> len(model_version()), model_version() == model_version()
(16, True)
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

MODEL_SOURCES = (
    "roofline/roofs.py",
    "roofline/counts.py",
    "roofline/references.py",
    "roofline/peaks.py",
    "sweeps.py",
    "kernels/peaks.py",
    "kernels/ceilings/__init__.py",
    "kernels/ceilings/rounds.py",
    "kernels/ceilings/compute.py",
    "kernels/ceilings/stream.py",
    "kernels/ceilings/cache.py",
    "kernels/ceilings/cold.py",
    "kernels/ceilings/gather.py",
    "kernels/ceilings/activation.py",
    "kernels/dispatch.py",
    "kernels/references.py",
)
"""The files of the package that make the model: the prediction (the roofs, the counts they
read, the floors timed beside a kernel) and the ceilings'
definitions (the peaks, the sweeps that measure them, one module each under
``kernels/ceilings``, the latency and operation floors and the calls that time them). The
diagnoses (``roofline/mechanisms.py``) and a diagnosis's own sweep (a module of
``kernels/ceilings`` that defines ``RATE_SWEEP``) are read beside a miss, never in a
prediction, so they leave the version as it is."""


PACKAGE = Path(__file__).resolve().parent.parent


def _hash(names: tuple[str, ...]) -> str:
    """A short hash of the package files ``names``' text, in that order (each named, so
    moving code between them changes it too)."""
    digest = hashlib.sha256()
    for name in names:
        digest.update(f"{name}\n".encode())
        digest.update((PACKAGE / name).read_bytes())
    return digest.hexdigest()[:16]


@cache
def model_version() -> str:
    """A short hash of :data:`MODEL_SOURCES`."""
    return _hash(MODEL_SOURCES)


@cache
def sweeps_version() -> str:
    """A short hash of :data:`MODEL_SOURCES` and of every module of ``kernels/ceilings``, the
    diagnoses' sweeps included: what measured a machine's peaks, so that kept peaks are
    measured again when any sweep changes (a diagnosis's sweep leaves the model's version as it
    is, but not the numbers it stored)."""
    sweeps = sorted(
        p.relative_to(PACKAGE).as_posix() for p in PACKAGE.glob("kernels/ceilings/*.py")
    )
    return _hash((*MODEL_SOURCES, *(name for name in sweeps if name not in MODEL_SOURCES)))
