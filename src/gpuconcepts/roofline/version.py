"""The model's version: a hash of the code that predicts a kernel's time, of the code that
defines the ceilings it reads, and of the sizes the presets give those ceilings (issue 45:
predictions are registered before the measurement).

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
import json
import tomllib
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from gpuconcepts.files import presets_path

MODEL_SOURCES = (
    "roofline/roofs.py",
    "roofline/counts.py",
    "roofline/references.py",
    "roofline/peaks.py",
    "roofline/points.py",
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
    "workloads.py",
    "formulas/cnn.py",
    "formulas/embeddings.py",
    "formulas/mlp.py",
    "formulas/rnn.py",
    "formulas/roofline.py",
    "formulas/transformer.py",
    "claims/decode.py",
    "kernels/decoder.py",
    "formulas/wholemodel.py",
)
"""The files of the package that make the model: the prediction (ledger 2's,
:func:`~gpuconcepts.roofline.roofs.verdict`: the roofs, the counts they read through each
workload's descriptor in ``workloads.py`` and the formulas modules whose counts those
descriptors call, the floors timed beside a kernel) and the ceilings' definitions (the peaks,
the sweeps that measure them, one module each under ``kernels/ceilings``, the latency and
operation floors and the calls that time them). The decode floor and knee, the model's
predictions beside the kernels', are in it too: their judge, the sweep that times the weights'
floor beside the steps, and the formulas they read. The diagnoses (``roofline/mechanisms.py``,
with :func:`~gpuconcepts.roofline.mechanisms.model_seconds`), ``roofline/model.py`` (the
pages' placements, beside the prediction) and a diagnosis's own sweep (a module of
``kernels/ceilings`` that defines ``RATE_SWEEP``) are read beside a miss, never in a
prediction, so they leave the version as it is."""

CEILING_SIZES = ("gemm_n", "stream_mib")
"""The keys of the presets' ``peaks`` tables that size the ceilings a prediction reads: the
square GEMM's side (the compute peak) and the STREAM arrays' MiB (DRAM's roof). The stencil's
sizes there size a diagnosis's sweep, and leave the version as it is."""


PACKAGE = Path(__file__).resolve().parent.parent


def ceiling_sizes(presets: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The :data:`CEILING_SIZES` of every ``peaks`` table of ``presets`` (a device class's,
    and its quick runs'), by the table's dotted name.

    >>> ceiling_sizes({"cpu": {"peaks": {"gemm_n": 4096, "stencil_HW": 14},
    ...                        "quick": {"peaks": {"stream_mib": 256}}}})
    {'cpu.peaks': {'gemm_n': 4096}, 'cpu.quick.peaks': {'stream_mib': 256}}
    """
    found: dict[str, dict[str, Any]] = {}

    def walk(table: Mapping[str, Any], where: str) -> None:
        for name, value in table.items():
            if not isinstance(value, Mapping):
                continue
            here = f"{where}.{name}" if where else name
            if name == "peaks":
                found[here] = {k: value[k] for k in CEILING_SIZES if k in value}
            walk(value, here)

    walk(presets, "")
    return found


def _hash(names: tuple[str, ...]) -> str:
    """A short hash of the package files ``names``' text, in that order (each named, so
    moving code between them changes it too), and of the presets' :func:`ceiling_sizes`."""
    digest = hashlib.sha256()
    for name in names:
        digest.update(f"{name}\n".encode())
        digest.update((PACKAGE / name).read_bytes())
    sizes = ceiling_sizes(tomllib.loads(presets_path().read_text("utf-8")))
    digest.update(f"presets.toml\n{json.dumps(sizes, sort_keys=True)}".encode())
    return digest.hexdigest()[:16]


@cache
def model_version() -> str:
    """A short hash of :data:`MODEL_SOURCES` and of the presets' :func:`ceiling_sizes`."""
    return _hash(MODEL_SOURCES)


@cache
def sweeps_version() -> str:
    """A short hash of :data:`MODEL_SOURCES`, of the presets' :func:`ceiling_sizes` and of every
    module of ``kernels/ceilings``, the
    diagnoses' sweeps included: what measured a machine's peaks, so that kept peaks are
    measured again when any sweep changes (a diagnosis's sweep leaves the model's version as it
    is, but not the numbers it stored)."""
    sweeps = sorted(
        p.relative_to(PACKAGE).as_posix() for p in PACKAGE.glob("kernels/ceilings/*.py")
    )
    return _hash((*MODEL_SOURCES, *(name for name in sweeps if name not in MODEL_SOURCES)))
