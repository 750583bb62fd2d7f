"""``gpuconcepts.analyze``: the analysis's public API where it has always been (the code lives
in :mod:`gpuconcepts.analysis`). The module is callable, ``gpuconcepts.analyze(model, x)``, as
the package attribute names both the module and its function.

>>> from gpuconcepts import analyze
>>> analyze.Report is __import__("gpuconcepts.analysis").analysis.Report
True
"""

from __future__ import annotations

import sys
import types
from typing import Any

from gpuconcepts.analysis import *
from gpuconcepts.analysis import (
    Report,
    __all__,  # noqa: F401 - the names above, public here too
    analyze,
)


class _CallableModule(types.ModuleType):
    """Importing ``gpuconcepts.analyze`` makes the package attribute this module, so the module
    itself analyzes when called."""

    def __call__(self, *args: Any, **kwargs: Any) -> Report:
        return analyze(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
