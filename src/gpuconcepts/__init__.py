"""gpuconcepts: how five neural-network families load a GPU, as formulas you can compute.

>>> from gpuconcepts import formulas
>>> formulas.kv_cache_memory(B=2, S=1000, d=512, s=2)
4096000

Importing the package loads nothing: each name below is imported when it is first asked for
(PEP 562), so ``import gpuconcepts.files`` does not pay for sympy. The formulas need sympy and
numpy; torch and matplotlib are imported by the modules that need them
(``gpuconcepts.kernels``, ``gpuconcepts.roofline``, ...). ``gpuconcepts.analyze(model,
*inputs)`` places your own model's layers on the roofline; it loads torch on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpuconcepts import analyze as analyze
    from gpuconcepts import formulas as formulas
    from gpuconcepts import units as units
    from gpuconcepts.errors import GpuConceptsError as GpuConceptsError
    from gpuconcepts.formula import Formula as Formula

__version__ = "0.1.0"

__all__ = ["Formula", "GpuConceptsError", "__version__", "analyze", "formulas", "units"]

_HOME = {
    "analyze": "gpuconcepts.analyze",  # a module that is callable; it needs torch
    "formulas": "gpuconcepts.formulas",
    "units": "gpuconcepts.units",
    "GpuConceptsError": "gpuconcepts.errors",
    "Formula": "gpuconcepts.formula",
}
"""Each name of the package's namespace and the module it comes from (a module itself where
the name is the module's last part)."""


def __getattr__(name: str) -> object:
    """A name of :data:`__all__`, imported on first use."""
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'gpuconcepts' has no attribute {name!r}")
    module = importlib.import_module(home)
    value = module if home.endswith("." + name) else getattr(module, name)
    globals()[name] = value  # asked once: later lookups find it without this function
    return value
