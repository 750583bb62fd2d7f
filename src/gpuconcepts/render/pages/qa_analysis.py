"""The analysis questions page: a wide FP16 layer over batch sizes, and the weight counts of
the CNN chapter's example.

>>> glue = layer_over_batches()
>>> glue["fc"], glue["conv"], glue["weights_share"]
('48', '9', 'an 8.39 MB')
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuconcepts import formulas, units
from gpuconcepts.render.markdown import markdown_table

if TYPE_CHECKING:
    from gpuconcepts.render.pages import Glue

LAYER = {"d_in": 4096, "d_out": 1024, "s": 2}
"""A wide FP16 layer."""
BATCHES = (1, 8, 64, 512, 4096)


def layer_over_batches() -> Glue:
    """The layer's FLOPs, bytes and intensity at each batch, and its weights' size."""
    widths = {"d_in": LAYER["d_in"], "d_out": LAYER["d_out"]}
    rows = [
        [
            units.plain_number(b),
            units.in_words(formulas.mlp_flops(B=b, **widths)),
            units.decimal_bytes(formulas.mlp_bytes(B=b, **LAYER)),
            units.significant(formulas.mlp_intensity(B=b, **LAYER)),
        ]
        for b in BATCHES
    ]
    return {
        "batch_table": markdown_table(["Batch $B$", "FLOPs", "Bytes", "FLOP/byte"], rows),
        "weights_share": units.with_article(
            units.decimal_bytes(formulas.mlp_weight_memory(**LAYER))
        ),
        "fc": units.plain_number(formulas.mlp_weights(d_in=16, d_out=3)),
        "conv": units.plain_number(formulas.conv_weights(K=3, C_in=1, C_out=1)),
    }
