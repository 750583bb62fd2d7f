"""The CNN chapter: weight sharing, the edge filter's hits, Q14's convolution, this build's
dense and depthwise convolutions, and the exercises' answers.

>>> glue = weights(pixels=16, neurons=3)
>>> glue["fc"], glue["conv"], glue["ratio"]
('48', '9', '5.3')
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from gpuconcepts import formulas, units
from gpuconcepts.hardware import GPUS
from gpuconcepts.questions import question
from gpuconcepts.render import plots
from gpuconcepts.render.markdown import measurement_table
from gpuconcepts.render.pages import Glue, Math, bound, from_batch
from gpuconcepts.roofline import classify, gap_split

if TYPE_CHECKING:
    from gpuconcepts.measure import Measurement
    from gpuconcepts.run import Run

P_DOG = 0.95
"""The post's illustrative output for its photo, not a trained model's."""


def sharing() -> Glue:
    """The weight-sharing diagram and the post's illustrative output."""
    return {
        "sharing": plots.cnn_weight_sharing(image=4, outputs=3, kernel=3),
        "p_dog": Math(rf"P(\text{{this photo shows a dog}}) = {P_DOG}"),
    }


def weights(pixels: int, neurons: int) -> Glue:
    """A fully connected layer's weights against a 3×3 filter's, worked from the formulas."""
    fc = formulas.mlp_weights(d_in=pixels, d_out=neurons)
    conv = formulas.conv_weights(K=3, C_in=1, C_out=1)
    return {
        "pixels": units.plain_number(pixels),
        "neurons": units.plain_number(neurons),
        "fc": units.plain_number(fc),
        "conv": units.plain_number(conv),
        "ratio": units.how_many(fc / conv),
        "fc_eq": Math(formulas.mlp_weights.equation()),
        "fc_worked": Math(
            f"{formulas.mlp_weights.lhs} = "
            + formulas.mlp_weights.worked(d_in=pixels, d_out=neurons)
        ),
        "conv_eq": Math(formulas.conv_weights.equation()),
        "conv_worked": Math(
            f"{formulas.conv_weights.lhs} = " + formulas.conv_weights.worked(K=3, C_in=1, C_out=1)
        ),
    }


def edge_hits(hits: Sequence[Sequence[int]], side: Sequence[int]) -> Glue:
    """Where the one edge filter fires hardest (row, column), on an image of ``side``.

    >>> edge_hits([[0, 0], [3, 3], [6, 6]], (9, 9))
    {'hits': '(0, 0), (3, 3) and (6, 6)', 'n_hits': '3', 'side': '9×9'}
    """
    shown = ", ".join(f"({r}, {c})" for r, c in hits[:-1]) + f" and {tuple(hits[-1])}"
    return {
        "hits": shown,
        "n_hits": units.plain_number(len(hits)),
        "side": f"{side[0]}×{side[1]}",
    }


def q14() -> Glue:
    """Q14's convolution: its MACs worked, its intensity, and a depthwise one's."""
    step = question(14).steps[0]
    dw = {"B": 1, "H_out": 32, "W_out": 32, "K": 3, "C": 32, "s": 4}
    return {
        "macs_eq": Math(formulas.conv_macs.equation()),
        "macs_worked": Math(f"{formulas.conv_macs.lhs} = {step.worked}"),
        "macs": units.describe(step.value, "MACs"),
        "intensity_eq": Math(formulas.conv_intensity.equation()),
        "conv_I": units.significant(formulas.conv_intensity(**dict(step.values, s=4))),
        "dw_I": units.significant(formulas.depthwise_conv_intensity(**dw)),
        "dw_eq": Math(formulas.depthwise_conv_intensity.equation()),
    }


def measured(run: Run, runs: Sequence[Measurement]) -> Glue:
    """This build's dense and depthwise convolutions: their table and bounds, and their FLOP
    rate gap split into reuse (the roofs) and the rest (``roofline.gap_split``)."""
    dense, depthwise = runs
    peaks = run.peaks
    split = gap_split(dense, depthwise, peaks)
    if abs(math.log(split.rest / split.roofline)) < math.log(1.1):  # within 10 % of each other
        verdict = "Reuse and the kernels' efficiency account for about equal parts of the gap here."
    elif split.rest > split.roofline:
        verdict = "The kernels' efficiency accounts for more of the gap here than reuse does."
    else:
        verdict = "Reuse accounts for more of the gap here than the kernels' efficiency does."
    above = (
        " (more than all of it: the dense convolution beat the compute peak that this "
        "machine's large GEMM set)"
        if split.fast_attained > 1
        else ""
    )
    return {
        "device": run.provenance.device_name,
        "table": measurement_table(runs, peaks),
        "ridge": units.significant(peaks.ridge_point),
        "dense_bound": bound(dense, run),
        "dw_bound": bound(depthwise, run),
        "rate_ratio": units.how_many(dense.flops_per_s / depthwise.flops_per_s),
        "split_roof": units.how_many(split.roofline),
        "split_rest": units.how_many(split.rest),
        "dense_attained": units.percent(split.fast_attained, 3),
        "dw_attained": units.percent(split.slow_attained, 3),
        "above_roof": above,
        "split_verdict": verdict,
        "dw_left": units.how_many(1 / split.slow_attained),
    }


def exercises() -> Glue:
    """The exercises' answers, from the formulas and the datasheet table (H100, BF16).

    >>> glue = exercises()
    >>> glue["ex_q14_bound"], glue["ex_dw_answer"]
    ('memory-bound', 'Never')
    """
    h100 = GPUS["H100 SXM"]
    ridge_bf16 = h100.ridge_point("bf16")
    sizes = question(14).steps[0].values
    q14_I = formulas.conv_intensity(**sizes, s=2)
    but_batch = {k: v for k, v in sizes.items() if k != "B"}
    first = formulas.conv_intensity.reaches(ridge_bf16, "B", **but_batch, s=2)
    limit = formulas.conv_intensity.supremum("B", **but_batch, s=2)
    depthwise = {k: sizes[k] for k in ("H_out", "W_out", "K")} | {"C": sizes["C_in"]}
    dw_first = formulas.depthwise_conv_intensity.reaches(ridge_bf16, "B", **depthwise, s=2)
    return {
        "ex_ridge": units.significant(ridge_bf16),
        "ex_q14_flops": units.describe(formulas.conv_flops(**sizes), "FLOPs"),
        "ex_q14_I": units.significant(q14_I),
        "ex_q14_channels": f"{units.plain_number(sizes['C_in'])} input and "
        f"{units.plain_number(sizes['C_out'])} output channels",
        "ex_q14_bound": f"{classify(q14_I, h100.datasheet_peaks('bf16'))}-bound",
        "ex_q14_first": from_batch(
            first,
            "No batch makes it compute-bound: as the batch grows, the intensity only "
            f"approaches {units.significant(limit)} FLOP/byte",
            "It is compute-bound from a batch of ",
        ),
        "ex_dw_answer": from_batch(dw_first),
        "ex_dw_limit": units.significant(
            formulas.depthwise_conv_intensity.supremum("B", **depthwise, s=2)
        ),
        "ex_dw_C": units.plain_number(depthwise["C"]),
    }


TWO_STEP_BATCH = 64
"""The batch of the two-step exercise's depthwise layer (the recorded GPU runs' batch)."""


def two_step() -> Glue:
    """The two-step exercise: Q14's layer made depthwise at :data:`TWO_STEP_BATCH`, its
    intensity first, then the FLOP rate an H100's roofs allow it in BF16, against its peak.

    >>> glue = two_step()
    >>> glue["ex2_I"], glue["ex2_rate"], glue["ex2_share"]
    ('4.5', '15 TFLOP/s', '1.5%')
    """
    h100 = GPUS["H100 SXM"]
    sizes = question(14).steps[0].values
    depthwise = {k: sizes[k] for k in ("H_out", "W_out", "K")} | {"C": sizes["C_in"]}
    at = {"B": TWO_STEP_BATCH, **depthwise, "s": 2}
    intensity = formulas.depthwise_conv_intensity(**at)
    peak, beta = h100.flops_per_s["bf16"], h100.bytes_per_s
    rate = formulas.attainable_flops(P=peak, I=intensity, beta=beta)
    return {
        "ex2_B": units.plain_number(TWO_STEP_BATCH),
        "ex2_I": units.significant(intensity, 2),
        "ex2_I_eq": Math(
            f"{formulas.depthwise_conv_intensity.lhs} = "
            f"{formulas.depthwise_conv_intensity.worked(**at)}"
        ),
        "ex2_rate_eq": Math(
            rf"{formulas.attainable_flops.lhs} = {formulas.attainable_flops.latex()} = "
            rf"\min\left(\text{{{units.si(peak, 'FLOP/s')}}}, {units.significant(intensity, 2)}"
            rf" \times \text{{{units.si(beta, 'B/s')}}}\right) \approx "
            rf"\text{{{units.si(rate, 'FLOP/s', digits=2)}}}"
        ),
        "ex2_rate": units.si(rate, "FLOP/s", digits=2),
        "ex2_share": units.percent(rate / peak),
        "ex2_peak": units.si(peak, "FLOP/s"),
    }


def takeaways(run: Run | None) -> Glue:
    """The chapter's two measured takeaways, true to ``run``: which roof bound the dense and
    the depthwise convolution, and how their FLOP rates compare. "—" without a run.

    >>> takeaways(None)["take_bounds"]
    '—'
    """
    from gpuconcepts.render.pages.gpu import chapter  # noqa: PLC0415
    from gpuconcepts.render.pages.lead import run_words  # noqa: PLC0415
    from gpuconcepts.roofline import place  # noqa: PLC0415

    found = {m.workload: m for m in chapter(run, "cnn")} if run is not None else {}
    conv, depth = found.get("cnn-conv"), found.get("cnn-depthwise")
    if run is None or conv is None or depth is None:
        return dict.fromkeys(("take_bounds", "take_rate"), units.NOTHING)
    who = run_words(run)
    dense, thin = place(conv, run.peaks), place(depth, run.peaks)
    if dense.bound == "compute" and thin.bound == "memory":
        bounds = (
            f"The same filter size, two sides of the ridge point: in {who} the dense "
            f"convolution reached {units.percent(dense.attained)} of the {dense.observed} "
            f"roof, the depthwise one {units.percent(thin.attained)} of the {thin.observed} roof."
        )
    else:
        bounds = (
            f"In {who} the dense convolution's intensity put it on the {dense.bound} side of "
            f"the ridge point, and the depthwise one's on the {thin.bound} side."
        )
    ratio = conv.flops_per_s / depth.flops_per_s
    rate = (
        "Reuse, not the filter, sets the speed: in "
        f"{who} the dense convolution did {units.how_many(ratio)} times as many FLOPs per "
        "second as the depthwise one."
        if ratio >= FASTER
        else f"In {who} the dense convolution did no more FLOPs per second than the depthwise one."
    )
    return {"take_bounds": bounds, "take_rate": rate}


FASTER = 1.1
"""From this ratio of FLOP rates one convolution is said to run faster than the other."""
