"""gpuconcepts: how five neural-network families load a GPU, as formulas you can compute.

>>> from gpuconcepts import formulas
>>> formulas.kv_cache_memory(B=2, S=1000, d=512, s=2)
4096000

Importing the package needs only sympy and numpy; torch and matplotlib are imported by
the modules that need them (``gpuconcepts.kernels``, ``gpuconcepts.roofline``, ...).
"""

from __future__ import annotations

from gpuconcepts import formulas, units
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.formula import Formula

__version__ = "0.1.0"

__all__ = ["Formula", "GpuConceptsError", "__version__", "formulas", "units"]
