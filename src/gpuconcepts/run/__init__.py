"""The Run: everything one machine measured, saved once and read by every page and command.

Two parts, both re-exported here lazily (PEP 562: a name is imported when it is first asked
for): :mod:`gpuconcepts.run.run` holds the :class:`Run` value (JSON through
:mod:`gpuconcepts.records`, its file read with every check by
:mod:`gpuconcepts.run.reading`) and :mod:`gpuconcepts.run.provenance`
where and how it was measured (probing this machine for it is measuring:
:mod:`gpuconcepts.machine`). Collecting one measures the
kernels and judges the claims, so it sits at the top of the layers (:mod:`gpuconcepts.collect`,
issue 47); the value sits at the bottom and never imports it: importing
``gpuconcepts.run.run`` loads no kernel, lab or claim module, and reading a saved run needs no
torch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuconcepts.lazy import reexports

if TYPE_CHECKING:
    from gpuconcepts.run.provenance import Provenance as Provenance
    from gpuconcepts.run.provenance import catalogue_hash as catalogue_hash
    from gpuconcepts.run.reading import MAX_DEPTH as MAX_DEPTH
    from gpuconcepts.run.reading import MAX_RUN_BYTES as MAX_RUN_BYTES
    from gpuconcepts.run.reading import MAX_WHOLE as MAX_WHOLE
    from gpuconcepts.run.run import PARTS as PARTS
    from gpuconcepts.run.run import SCHEMA as SCHEMA
    from gpuconcepts.run.run import Run as Run
    from gpuconcepts.run.run import load as load
    from gpuconcepts.run.run import load_all as load_all

EXPORTS = {
    "gpuconcepts.run.provenance": ("Provenance", "catalogue_hash"),
    "gpuconcepts.run.reading": ("MAX_DEPTH", "MAX_RUN_BYTES", "MAX_WHOLE"),
    "gpuconcepts.run.run": (
        "PARTS",
        "SCHEMA",
        "Run",
        "load",
        "load_all",
    ),
}
"""Each module's names this package re-exports (the ``TYPE_CHECKING`` block says the same for
the type checker; ``tests/test_imports.py`` checks that they agree)."""

__getattr__, __dir__ = reexports(__name__, globals(), EXPORTS)
