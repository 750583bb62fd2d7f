"""gpuconcepts: how five neural-network families load a GPU, as formulas you can compute.

>>> from gpuconcepts import formulas
>>> formulas.kv_cache_memory(B=2, S=1000, d=512, s=2)
4096000

Importing the package needs only sympy and numpy; torch and matplotlib are imported by
the modules that need them (``gpuconcepts.kernels``, ``gpuconcepts.roofline``, ...).
``gpuconcepts.analyze(model, *inputs)`` places your own model's layers on the roofline; it
loads torch on first use.
"""

from __future__ import annotations

import importlib

from gpuconcepts import formulas, units
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.formula import Formula

__version__ = "0.1.0"

__all__ = ["Formula", "GpuConceptsError", "__version__", "analyze", "formulas", "units"]


def __getattr__(name: str) -> object:
    """``gpuconcepts.analyze``, imported on first use (it needs torch)."""
    if name == "analyze":
        return importlib.import_module("gpuconcepts.analyze")  # a module that is callable
    raise AttributeError(f"module 'gpuconcepts' has no attribute {name!r}")
