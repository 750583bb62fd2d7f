"""The ceilings' sweeps, one module per mechanism: the compute peak and the GEMM sweep
(:mod:`.compute`), DRAM's STREAM arrays (:mod:`.stream`), the working-set sweep and its cache
levels (:mod:`.cache`), the cold sweep (:mod:`.cold`), the random-access gather
(:mod:`.gather`) and the activation rate (:mod:`.activation`), each timed as :mod:`.rounds`
says. :func:`gpuconcepts.kernels.peaks.measure_peaks` puts them together.

A diagnosis with a sweep of its own is one module here that defines ``RATE_SWEEP``, a
:class:`DiagnosisSweep`: :func:`diagnosis_sweeps` finds it, ``measure_peaks`` stores what it
measures in ``Peaks.rate_sweeps``, and :class:`~gpuconcepts.roofline.mechanisms.SweptRate`
reads it beside every kernel of its workload (the depthwise stencil, :mod:`.stencil`).

>>> [sweep.name for sweep in diagnosis_sweeps()]
['depthwise stencil']
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpuconcepts.roofline import RateSweep


@dataclass(frozen=True)
class DiagnosisSweep:
    """A diagnosis's own sweep: the diagnosis's name, and the call that measures it on a device
    in the run's dtype (``measure(device, presets, dtype, repeats)``), None when the presets
    give it no sizes."""

    name: str
    measure: Callable[[str, Mapping[str, Mapping[str, int]], str, int], RateSweep | None]


def diagnosis_sweeps() -> tuple[DiagnosisSweep, ...]:
    """Every :class:`DiagnosisSweep` a module of this package defines as ``RATE_SWEEP``, by
    module name."""
    found = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        sweep = getattr(module, "RATE_SWEEP", None)
        if isinstance(sweep, DiagnosisSweep):
            found.append(sweep)
    return tuple(found)
