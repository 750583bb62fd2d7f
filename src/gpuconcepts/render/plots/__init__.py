"""The figures, each a function returning a matplotlib Figure (matplotlib is imported inside
them): :mod:`~gpuconcepts.render.plots.roofline` (the roofline, the memory hierarchy),
:mod:`~gpuconcepts.render.plots.claims` (one renderer for every claim's plot),
:mod:`~gpuconcepts.render.plots.distributed` (sharding, traffic, the α-β fit),
:mod:`~gpuconcepts.render.plots.diagrams` (the post's diagrams of the architectures) and
:mod:`~gpuconcepts.render.plots.cnn_diagrams` (the CNN's), all re-exported here. The GPU's
diagrams (:mod:`~gpuconcepts.render.plots.gpu_diagrams`), the schedules
(:mod:`~gpuconcepts.render.plots.schedules`) and the ZeRO budgets
(:mod:`~gpuconcepts.render.plots.budgets`) are imported from their modules.
"""

from __future__ import annotations

from gpuconcepts.render.plots.claims import (
    draw as draw,
)
from gpuconcepts.render.plots.claims import (
    draw_result as draw_result,
)
from gpuconcepts.render.plots.cnn_diagrams import (
    cnn_weight_sharing as cnn_weight_sharing,
)
from gpuconcepts.render.plots.diagrams import (
    attention_heatmap as attention_heatmap,
)
from gpuconcepts.render.plots.diagrams import (
    dlrm_pipeline as dlrm_pipeline,
)
from gpuconcepts.render.plots.diagrams import (
    kv_cache_growth as kv_cache_growth,
)
from gpuconcepts.render.plots.diagrams import (
    mlp_layers as mlp_layers,
)
from gpuconcepts.render.plots.diagrams import (
    rnn_unrolled as rnn_unrolled,
)
from gpuconcepts.render.plots.distributed import (
    alpha_beta_chart as alpha_beta_chart,
)
from gpuconcepts.render.plots.distributed import (
    sharding_schemes as sharding_schemes,
)
from gpuconcepts.render.plots.distributed import (
    traffic_chart as traffic_chart,
)
from gpuconcepts.render.plots.roofline import (
    memory_hierarchy as memory_hierarchy,
)
from gpuconcepts.render.plots.roofline import (
    plot_roofline as plot_roofline,
)
from gpuconcepts.render.plots.roofline import (
    roofline_chart as roofline_chart,
)
