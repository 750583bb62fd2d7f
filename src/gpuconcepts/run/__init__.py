"""The Run: everything one machine measured, saved once and read by every page and command.

Three parts, all re-exported here: :mod:`gpuconcepts.run.run` holds the :class:`Run` value
(JSON through :mod:`gpuconcepts.records`, loading with every check),
:mod:`gpuconcepts.run.provenance` where and how it was measured (and probing this machine for
it), and :mod:`gpuconcepts.run.collect` measures one; collecting sits above the value, which
never imports it, so reading a saved run needs no torch.

The module ``gpuconcepts.run.collect`` shares its name with the function :func:`collect`,
which this package's namespace holds: reach the module through ``sys.modules`` or a ``from
gpuconcepts.run.collect import ...``.
"""

from __future__ import annotations

from gpuconcepts.run.collect import (
    DISTRIBUTED_WORLD_SIZE,
    GROWTH_WORLD_SIZE,
    PEAKS_MEASURED_AGAIN,
    collect,
    reached,
)
from gpuconcepts.run.provenance import (
    Provenance,
    catalogue_hash,
    provenance_here,
)
from gpuconcepts.run.run import (
    MAX_DEPTH,
    MAX_RUN_BYTES,
    MAX_WHOLE,
    PARTS,
    SCHEMA,
    Run,
    load,
    load_all,
)

__all__ = [
    "DISTRIBUTED_WORLD_SIZE",
    "GROWTH_WORLD_SIZE",
    "MAX_DEPTH",
    "MAX_RUN_BYTES",
    "MAX_WHOLE",
    "PARTS",
    "PEAKS_MEASURED_AGAIN",
    "SCHEMA",
    "Provenance",
    "Run",
    "catalogue_hash",
    "collect",
    "load",
    "load_all",
    "provenance_here",
    "reached",
]
