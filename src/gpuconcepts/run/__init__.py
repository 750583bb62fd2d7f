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
    DISTRIBUTED_WORLD_SIZE as DISTRIBUTED_WORLD_SIZE,
)
from gpuconcepts.run.collect import (
    GROWTH_WORLD_SIZE as GROWTH_WORLD_SIZE,
)
from gpuconcepts.run.collect import (
    collect as collect,
)
from gpuconcepts.run.provenance import (
    Provenance as Provenance,
)
from gpuconcepts.run.provenance import (
    catalogue_hash as catalogue_hash,
)
from gpuconcepts.run.provenance import (
    provenance_here as provenance_here,
)
from gpuconcepts.run.run import (
    MAX_DEPTH as MAX_DEPTH,
)
from gpuconcepts.run.run import (
    MAX_RUN_BYTES as MAX_RUN_BYTES,
)
from gpuconcepts.run.run import (
    MAX_WHOLE as MAX_WHOLE,
)
from gpuconcepts.run.run import (
    PARTS as PARTS,
)
from gpuconcepts.run.run import (
    SCHEMA as SCHEMA,
)
from gpuconcepts.run.run import (
    Run as Run,
)
from gpuconcepts.run.run import (
    load as load,
)
from gpuconcepts.run.run import (
    load_all as load_all,
)
