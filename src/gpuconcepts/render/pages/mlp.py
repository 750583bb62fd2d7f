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
from gpuconcepts.render import EXPLAINED, cold_read_sentence, measurement_table, plots
from gpuconcepts.render.pages import Glue, Math, bound, from_batch
from gpuconcepts.render.text import time_spread
from gpuconcepts.roofline import place

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


TWO_STEP_LAYER = {"d_in": 8192, "d_out": 8192, "s": 2}
"""The square BF16 layer the recorded GPU runs timed, for the two-step exercise."""


def two_step() -> Glue:
    """The two-step exercise: the L4's ridge point from its datasheet, then the first batch at
    which :data:`TWO_STEP_LAYER` reaches it, beside the H200's.

    >>> glue = two_step()
    >>> glue["ex2_ridge_L4"], glue["ex2_batch_L4"], glue["ex2_batch_H200"]
    ('403', 'from a batch of 448', 'from a batch of 217')
    """
    glue: Glue = {
        "ex2_layer": f"{units.plain_number(TWO_STEP_LAYER['d_in'])} → "
        f"{units.plain_number(TWO_STEP_LAYER['d_out'])}",
    }
    for name in ("L4", "H200"):
        gpu = GPUS[name]
        peak, beta = gpu.flops_per_s["bf16"], gpu.bytes_per_s
        ridge = float(formulas.ridge_point(P=peak, beta=beta))
        first = formulas.mlp_intensity.reaches(ridge, "B", **TWO_STEP_LAYER)
        glue[f"ex2_ridge_{name}"] = units.significant(ridge)
        glue[f"ex2_ridge_{name}_eq"] = Math(
            f"{formulas.ridge_point.lhs} = {formulas.ridge_point.worked(P=peak, beta=beta)}"
        )
        glue[f"ex2_batch_{name}"] = from_batch(first, "never", "from a batch of ")
        if first is not None:
            at = {"B": first, **TWO_STEP_LAYER}
            glue[f"ex2_I_{name}_eq"] = Math(
                f"{formulas.mlp_intensity.lhs} = {formulas.mlp_intensity.worked(**at)}"
            )
    glue["ex2_ratio"] = units.how_many(
        GPUS["L4"].ridge_point("bf16") / GPUS["H200"].ridge_point("bf16")
    )
    return glue


def takeaways(run: Run | None) -> Glue:
    """The chapter's two measured takeaways, true to ``run`` (the recorded GPU run the chapter
    leads with): whether the batches left of its ridge point shared one read of the weights,
    and whether a large batch reached the compute roof. "—" without a run.

    >>> takeaways(None)["take_flat"]
    '—'
    """
    from gpuconcepts.render.pages.gpu import chapter  # noqa: PLC0415
    from gpuconcepts.render.pages.lead import run_words  # noqa: PLC0415

    if run is None or not (sweep := chapter(run, "mlp")):
        return dict.fromkeys(("take_flat", "take_compute"), units.NOTHING)
    who = run_words(run)
    left = [m for m in sweep if place(m, run.peaks).bound == "memory"]
    if len(left) >= 2:
        first, last = left[0], left[-1]
        rows = units.plural(last.size("B"), "row")
        than = f"{time_spread(first)} for {units.plural(first.size('B'), 'row')}"
        ratio = last.seconds / first.seconds
        flat = (
            f"Left of the ridge point a layer's time is the read of its weights: in {who}, "
            f"{rows} took {time_spread(last)} against {than}."
            if ratio < FLAT_RATIO
            else f"In {who} the batches left of the ridge point did not share one read of "
            f"the weights: {rows} took {units.how_many(ratio)} times as long as {than}."
        )
    else:
        flat = f"In {who} fewer than two batches lay left of the ridge point."
    reached = [
        m
        for m in sweep
        if (where := place(m, run.peaks)).kind == "compute" and where.attained >= EXPLAINED[0]
    ]
    if reached:
        big = reached[0]
        compute = (
            "Batching turns a memory-bound layer into a compute-bound one: in "
            f"{who}, from a batch of {units.plain_number(big.size('B'))} the layer ran at "
            f"{units.percent(place(big, run.peaks).attained)} of the compute roof."
        )
    else:
        big = sweep[-1]
        compute = (
            f"In {who} no batch reached half of the compute roof: the largest, "
            f"{units.plain_number(big.size('B'))}, ran at "
            f"{units.percent(big.flops_per_s / run.peaks.flops_per_s)} of the peak."
        )
    return {"take_flat": flat, "take_compute": compute}


FLAT_RATIO = 1.5
"""Below this ratio of times, two batches left of the ridge point took about one read of the
weights (the batch cost little)."""
