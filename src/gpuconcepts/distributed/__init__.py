"""Beyond one device: sharding and parallelism measured with ``torch.distributed``.

W processes join one ``torch.distributed`` group (gloo over loopback TCP on a CPU, NCCL
between GPUs) and run a data-parallel gradient all-reduce, a sharded embedding-bag lookup in
each scheme (table-, row- and column-wise), a two-way tensor-parallel MLP and a pipeline.
The traffic is checked independently of the formulas: the bytes the loopback interface
carried, read from /proc/net/dev, against the formulas' bytes. A latency-bandwidth fit of an
all-reduce size sweep predicts the other collectives' times.

* :mod:`~gpuconcepts.distributed.launch` — input checks, spawning, cleanup;
* :mod:`~gpuconcepts.distributed.worker` — what each process runs (imports torch), with
  :mod:`~gpuconcepts.distributed.meter` (the measured windows),
  :mod:`~gpuconcepts.distributed.lookups`, :mod:`~gpuconcepts.distributed.tensor_parallel`
  and :mod:`~gpuconcepts.distributed.pipeline` (the workloads);
* :mod:`~gpuconcepts.distributed.traffic` — the loopback byte counter;
* :mod:`~gpuconcepts.distributed.report` — :func:`measure`, which collects the report;
* :mod:`~gpuconcepts.results.distributed` — the report a Run holds (sizes, collectives, the
  α-β fit), a value; :mod:`~gpuconcepts.claims.distributed` judges it and
  :mod:`~gpuconcepts.render.text.distributed` writes it for people;
* :mod:`~gpuconcepts.render.plots.distributed` — the sharding diagram and the traffic chart.

Importing this package loads neither torch nor matplotlib.

>>> from gpuconcepts.distributed import quick_sizes
>>> quick_sizes().embedding(2)[:2]
(4, 2048)
"""

from __future__ import annotations

from gpuconcepts.distributed.report import measure, quick_sizes
from gpuconcepts.results.distributed import (
    AlphaBeta,
    Collective,
    DistributedReport,
    Sizes,
)

__all__ = [
    "AlphaBeta",
    "Collective",
    "DistributedReport",
    "Sizes",
    "measure",
    "quick_sizes",
]
