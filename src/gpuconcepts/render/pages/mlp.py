"""The MLP chapter: the layer and its diagram, three houses through one weight matrix, a wide
layer's intensity, this build's batch sweep, and the exercises' answers.

>>> glue = houses([[1000, 2], [1500, 3]], [[5], [10]], [[5020], [7530]])
>>> glue["weights"], glue["macs"], glue["uses"], glue["big_uses"]
('2', '4', '2', '1,000')
>>> glue["house2"].latex
'\\\\text{house 2: } 5 \\\\times 1500 + 10 \\\\times 3 = 7530'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
import sympy as sp

from gpuconcepts import formulas, units
from gpuconcepts.hardware import GPUS
from gpuconcepts.questions import question
from gpuconcepts.render import cold_read_sentence, measurement_table, plots
from gpuconcepts.render.pages import Glue, Math, bound, from_batch

if TYPE_CHECKING:
    from gpuconcepts.measure import Measurement
    from gpuconcepts.run import Run

P_SPAM = 0.87
"""The post's illustrative output for its message, not a trained model's."""

MANY_HOUSES = 1000
"""The batch the chapter sets beside its three houses: the same weights, used far more often."""

WIDE_LAYER = {"d_in": 4096, "d_out": 1024, "s": 2}
"""A wide layer in FP16, whose intensity the chapter reads at a batch of 1 and of 512."""


def intro() -> Glue:
    """The diagram of stacked layers and the post's illustrative output."""
    return {
        "layers": plots.mlp_layers(),
        "p_spam": Math(rf"P(\text{{this message is spam}}) = {P_SPAM}"),
    }


def houses(X: npt.ArrayLike, W: npt.ArrayLike, prices: npt.ArrayLike) -> Glue:
    """The houses' features ``X``, the weights ``W`` and ``prices = X @ W`` as matrices, each
    house's price worked out, and how often every weight is used (for these houses and for
    :data:`MANY_HOUSES`)."""
    X, W, prices = np.asarray(X), np.asarray(W), np.asarray(prices)
    n_houses, features = X.shape
    outputs = W.shape[1]
    weights = formulas.mlp_weights(d_in=features, d_out=outputs)
    macs = formulas.mlp_macs(B=n_houses, d_in=features, d_out=outputs)
    many = formulas.mlp_macs(B=MANY_HOUSES, d_in=features, d_out=outputs)
    glue: Glue = {
        "X": Math("X = " + sp.latex(sp.Matrix(X))),
        "W": Math("W = " + sp.latex(sp.Matrix(W))),
        "XW": Math(
            "XW = "
            + sp.latex(sp.Matrix(X))
            + sp.latex(sp.Matrix(W))
            + " = "
            + sp.latex(sp.Matrix(prices))
        ),
        "w1": units.plain_number(int(W[0, 0])),
        "w2": units.plain_number(int(W[1, 0])),
        "houses": units.plain_number(n_houses),
        "weights": units.plain_number(weights),
        "macs": units.plain_number(macs),
        "uses": units.plain_number(macs // weights),
        "big": units.plain_number(MANY_HOUSES),
        "big_uses": units.plain_number(many // weights),
    }
    for i, (row, price) in enumerate(zip(X, prices[:, 0], strict=True), start=1):
        terms = " + ".join(f"{w} \\times {x}" for w, x in zip(W[:, 0], row, strict=True))
        glue[f"house{i}"] = Math(rf"\text{{house {i}: }} {terms} = {price}")
    return glue


def intensity() -> Glue:
    """The layer's MACs, bytes and intensity as equations, and :data:`WIDE_LAYER`'s intensity
    at a batch of 1 and of 512.

    >>> glue = intensity()
    >>> glue["I_1"], glue["I_512"]
    ('0.999', '315')
    """
    glue: Glue = {
        "macs_eq": Math(formulas.mlp_macs.equation()),
        "bytes_eq": Math(formulas.mlp_bytes.equation()),
        "intensity_eq": Math(formulas.mlp_intensity.equation()),
    }
    glue |= {name: units.plain_number(value) for name, value in WIDE_LAYER.items()}
    for batch in (1, 512):
        glue[f"I_{batch}"] = units.significant(formulas.mlp_intensity(B=batch, **WIDE_LAYER))
        glue[f"B_{batch}"] = units.plain_number(batch)
    return glue


def measured(run: Run, sweep: list[Measurement]) -> Glue:
    """This build's batch sweep of one layer: its table and figure, and its two ends' bounds."""
    peaks = run.peaks
    small, large = sweep[0], sweep[-1]
    return {
        "device": run.provenance.device_name,
        "table": measurement_table(sweep, peaks),
        "ridge": units.significant(peaks.ridge_point),
        "B_small": units.plain_number(small.size("B")),
        "B_large": units.plain_number(large.size("B")),
        "bound_small": bound(small, run),
        "bound_large": bound(large, run),
        "speedup": units.how_many(large.flops_per_s / small.flops_per_s),
        "cold_read": cold_read_sentence(small, peaks),
        "sweep_fig": plots.roofline_chart(peaks, sweep),
    }


def exercises() -> Glue:
    """The exercises' answers for Q12's layer on an H100, from the formulas and the datasheet.

    >>> glue = exercises()
    >>> glue["ex_q12_layer"], glue["ex_batch_bf16"], glue["ex_batch_fp32"]
    ('512 → 256', 'Never', 'From a batch of 53')
    """
    h100 = GPUS["H100 SXM"]
    q12 = question(12).steps[0].values  # B, d_in, d_out of the post's layer
    shape = {"d_in": q12["d_in"], "d_out": q12["d_out"]}
    glue: Glue = {
        "ex_q12_layer": f"{units.plain_number(shape['d_in'])} → "
        f"{units.plain_number(shape['d_out'])}",
    }
    for dtype, size in (("bf16", 2), ("fp32", 4)):
        ridge = h100.ridge_point(dtype)
        first = formulas.mlp_intensity.reaches(ridge, "B", **shape, s=size)
        glue[f"ex_ridge_{dtype}"] = units.significant(ridge)
        glue[f"ex_limit_{dtype}"] = units.significant(
            formulas.mlp_intensity.supremum("B", **shape, s=size)
        )
        glue[f"ex_batch_{dtype}"] = from_batch(first)
        glue[f"ex_batch_{dtype}_I"] = units.significant(
            formulas.mlp_intensity(B=first or 1, **shape, s=size)
        )
    uses = formulas.mlp_macs(B=q12["B"], **shape) // formulas.mlp_weights(**shape)
    glue["ex_uses"] = units.plural(uses, "time")
    glue["ex_q12_B"] = units.plain_number(q12["B"])
    return glue
