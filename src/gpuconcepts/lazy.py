"""A package's names imported on first use (PEP 562), so that importing a package loads only
what is asked of it: ``import gpuconcepts.run.run`` loads no kernel, and a package's namespace
still offers every name it re-exports.

A package's ``__init__`` lists each module's names in ``EXPORTS`` (its ``TYPE_CHECKING``
block says the same for the type checker; ``tests/test_imports.py`` checks that they agree)
and ends with ``__getattr__, __dir__ = reexports(__name__, globals(), EXPORTS)``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def reexports(
    package: str, namespace: dict[str, Any], exports: Mapping[str, tuple[str, ...]]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module ``__getattr__`` and ``__dir__`` of ``package``, whose globals are
    ``namespace``, re-exporting ``exports`` (module → the names it gives).

    >>> space: dict[str, Any] = {}
    >>> get, names = reexports("pkg", space, {"gpuconcepts.units": ("si",)})
    >>> get("si")(2e9, "B"), "si" in space, names()
    ('2 GB', True, ['si'])
    >>> get("nothing")
    Traceback (most recent call last):
    AttributeError: module 'pkg' has no attribute 'nothing'
    """
    home = {name: module for module, names in exports.items() for name in names}

    def __getattr__(name: str) -> Any:
        if name not in home:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home[name]), name)
        namespace[name] = value  # asked once: later lookups find it without this function
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *home})

    return __getattr__, __dir__
