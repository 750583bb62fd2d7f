# ruff: noqa: PLC0415
# (torch is imported inside functions, through gpuconcepts.kernels: README, Rules: 3)
"""The CNN's claims: a shared filter needs far fewer weights, and depthwise runs far below a
dense convolution.

:func:`count_weights` builds the post's 4×4-image layers in torch and counts them
(:class:`WeightCounts`); its experiment (:data:`EXPERIMENT`) records that count and measures a
dense and a depthwise 3×3 convolution; :func:`judge_weight_sharing` and :func:`judge_conv_vs_depthwise`
give the verdicts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from gpuconcepts import formulas
from gpuconcepts.claims.plan import ROOF_FACTS, CoreJudge, Experiment, WithRoofs, roles_reading
from gpuconcepts.claims.predict import predicted_rate_ratio
from gpuconcepts.claims.quantities import attainable, formula_at, sizes, with_interval
from gpuconcepts.claims.roofline import judge_roles
from gpuconcepts.claims.shape import bars
from gpuconcepts.claims.thresholds import DIRECTION_MIN_EFFECT
from gpuconcepts.measure import Measurement
from gpuconcepts.results.claim import ClaimResult
from gpuconcepts.results.measured import Comparison, Measured
from gpuconcepts.results.plot import PlotSpec
from gpuconcepts.results.twosided import TwoSided
from gpuconcepts.roofline import Peaks, gap_split
from gpuconcepts.units import number, percent, si, times

if TYPE_CHECKING:
    from gpuconcepts.results.claim_sizes import ClaimSizes


@dataclass(frozen=True)
class WeightCounts:
    """Weights and FLOPs counted from real torch modules for the post's 4×4-image example.

    ``image`` is the side of the square one-channel image, ``neurons`` the outputs of the
    fully connected layer and ``K`` the filter side; the convolution has no padding, so the
    filter visits ``positions`` places. FLOPs are counted by ``torch.utils.flop_counter``.
    """

    image: int
    neurons: int
    K: int
    linear_weights: int
    conv_weights: int
    positions: int
    linear_flops: int
    conv_flops: int


POST_IMAGE_SIDE = 4
"""The post's example image is 4×4 pixels (16 inputs)."""
POST_NEURONS = 3
"""...fully connected to 3 output neurons."""
POST_KERNEL = 3
"""...against one 3×3 filter."""


def count_weights(
    image: int = POST_IMAGE_SIDE, neurons: int = POST_NEURONS, K: int = POST_KERNEL
) -> WeightCounts:
    """Build the post's two layers in torch and count their weights, positions and FLOPs.

    >>> c = count_weights()
    >>> c.linear_weights, c.conv_weights, c.positions
    (48, 9, 4)
    """
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    linear = torch.nn.Linear(image * image, neurons, bias=False)
    conv = torch.nn.Conv2d(1, 1, K, bias=False)
    pixels = torch.zeros(1, 1, image, image)
    with torch.no_grad():
        with FlopCounterMode(display=False) as linear_counter:
            linear(pixels.flatten(1))
        with FlopCounterMode(display=False) as conv_counter:
            out = conv(pixels)
    return WeightCounts(
        image=image,
        neurons=neurons,
        K=K,
        linear_weights=sum(p.numel() for p in linear.parameters()),
        conv_weights=sum(p.numel() for p in conv.parameters()),
        positions=int(out.shape[-1] * out.shape[-2]),
        linear_flops=int(linear_counter.get_total_flops()),
        conv_flops=int(conv_counter.get_total_flops()),
    )


def _pair(m: Measured, z: ClaimSizes) -> WithRoofs:
    """A dense and a depthwise 3×3 convolution of the same map, both read by roofline claims."""
    shape = {"B": z.cnn_B, "H": z.cnn_HW, "W": z.cnn_HW, "K": 3}
    wanted = [
        ("cnn-conv", {"C_in": z.cnn_C, "C_out": z.cnn_C, **shape}),
        ("cnn-depthwise", {"C": z.cnn_C, **shape}),
    ]
    return WithRoofs.of(m, z, wanted, {"cnn-conv": 0, "cnn-depthwise": 1})


def comparisons(m: Measured, z: ClaimSizes) -> tuple[Comparison, ...]:
    """The two convolutions, timed beside the roofs' references."""

    def check(pair: Sequence[Measurement], _refs: object) -> list[ClaimResult]:
        return _on_pair(judge_conv_vs_depthwise, pair, m)

    return (_pair(m, z).comparison(check, m),)


def _on_pair(judge: CoreJudge, pair: Sequence[Measurement], m: Measured) -> list[ClaimResult]:
    """``judge`` on the dense and the depthwise convolution."""
    return [judge(*pair, peaks=m.peaks, device=m.label)]


def _convolutions(judge: CoreJudge, m: Measured, z: ClaimSizes) -> list[ClaimResult]:
    """``judge`` on the two convolutions, read from ``m``."""
    return _on_pair(judge, _pair(m, z).read(m)[0], m)


def _weights(judge: CoreJudge, m: Measured, _z: ClaimSizes) -> list[ClaimResult]:
    """``judge`` on the weights counted when the run was collected (a fact of the run)."""
    return [judge(WeightCounts(**m.fact("cnn-weights")), device=m.label)]


def _expected_counts(counts: WeightCounts) -> tuple[dict[str, Any], Any]:
    """What the formulas say the post's two layers count (weights, positions, FLOPs), and how
    often the filter uses each weight."""
    pixels = counts.image**2
    side = counts.image - counts.K + 1  # a filter without padding fits this many times per row
    conv = {"B": 1, "H_out": side, "W_out": side, "K": counts.K, "C_in": 1, "C_out": 1}
    expected = {
        "linear_weights": formulas.mlp_weights(d_in=pixels, d_out=counts.neurons),
        "conv_weights": formulas.conv_weights(K=counts.K, C_in=1, C_out=1),
        "positions": side * side,
        "linear_flops": formulas.mlp_flops(B=1, d_in=pixels, d_out=counts.neurons),
        "conv_flops": formulas.conv_flops(**conv),
    }
    return expected, formulas.conv_macs(**conv) // int(expected["conv_weights"])


def judge_weight_sharing(counts: WeightCounts, *, device: str) -> ClaimResult:
    """48 weights fully connected against 9 shared ones, each counted and equal to the formulas."""
    pixels = counts.image**2
    expected, uses = _expected_counts(counts)
    got = {name: getattr(counts, name) for name in expected}
    mismatches = [n for n in expected if got[n] != expected[n]]
    linear, filt = f"nn.Linear({pixels}, {counts.neurons})", f"nn.Conv2d(1, 1, {counts.K})"
    return ClaimResult(
        key="cnn-weight-sharing",
        architecture="CNN",
        claim=f"A fully connected layer from a {counts.image}×{counts.image} image to "
        f"{counts.neurons} neurons needs {expected['linear_weights']} weights; a "
        f"{counts.K}×{counts.K} filter needs {expected['conv_weights']}, reused at every position.",
        prediction=f"mlp_weights(d_in={pixels}, d_out={counts.neurons}) = "
        f"{expected['linear_weights']}; conv_weights(K={counts.K}, C_in=1, C_out=1) = "
        f"{expected['conv_weights']}, each used at {expected['positions']} positions ({uses} "
        f"times) on a {counts.image}×{counts.image} image; FLOPs {expected['linear_flops']} and "
        f"{expected['conv_flops']}",
        test=TwoSided(
            "fully connected weights ÷ filter weights, counted",
            predicted=expected["linear_weights"] / expected["conv_weights"],
            alternative="no sharing: one filter per position",
            alternative_value=expected["linear_weights"]
            / (expected["conv_weights"] * expected["positions"]),
            low=expected["linear_weights"] / expected["conv_weights"],
            high=expected["linear_weights"] / expected["conv_weights"],
            measured=counts.linear_weights / counts.conv_weights,
            interval=(counts.linear_weights / counts.conv_weights,) * 2,  # a count: no spread
        ),
        detail=f"{linear} has {counts.linear_weights} weights, {filt} has "
        f"{counts.conv_weights}, visiting {counts.positions} positions; FlopCounterMode counts "
        f"{counts.linear_flops} and {counts.conv_flops} FLOPs",
        gates=(
            (
                "every count equal to its formula, exactly"
                + (f" (mismatch: {', '.join(mismatches)})" if mismatches else ""),
                not mismatches,
            ),
        ),
        device=device,
        values={
            **{f"{k}_expected": v for k, v in expected.items()},
            **{f"{k}_counted": v for k, v in got.items()},
            "uses_per_weight": uses,
        },
        plot=bars(
            "Weights to learn: fully connected against one shared filter",
            "layer",
            "weights",
            (linear, filt),
            (float(counts.linear_weights), float(counts.conv_weights)),
            (float(expected["linear_weights"]), float(expected["conv_weights"])),
            labels=("counted from torch modules", "formula"),
            log_y=False,
        ),
    )


def judge_conv_vs_depthwise(
    dense: Measurement, depthwise: Measurement, *, peaks: Peaks, device: str
) -> ClaimResult:
    """A dense 3×3 conv is compute-heavy; the depthwise one has far lower intensity and runs
    memory- or overhead-bound (far below the compute roof)."""
    same = {"H_out": "H", "W_out": "W"}  # 'same' padding: the output map is the input's size
    dense_i = formula_at(formulas.conv_intensity, dense, **same)
    dw_i = formula_at(formulas.depthwise_conv_intensity, depthwise, **same)
    ridge = peaks.ridge_point
    dense_roof, dw_roof = attainable((dense_i, dw_i), peaks)
    dense_flops, dw_flops = dense.flops_per_s, depthwise.flops_per_s
    split = gap_split(dense, depthwise, peaks)  # how much of the gap is reuse, how much kernels
    ratio, interval = with_interval(
        lambda t: (dense.flops / t[0]) / (depthwise.flops / t[1]), (dense, depthwise)
    )
    predicted = predicted_rate_ratio(dense, depthwise, peaks)
    return ClaimResult(
        key="cnn-dense-vs-depthwise",
        architecture="CNN",
        claim="A dense 3×3 convolution is compute-heavy; a depthwise one has far lower "
        "intensity and runs memory- or overhead-bound.",
        prediction=f"conv_intensity {number(dense_i)} FLOP/byte against depthwise_conv_intensity "
        f"{number(dw_i)} ({number(dense_i / dw_i)}× lower); ridge point {number(ridge)}. The roofline allows "
        f"{si(dense_roof, 'FLOP/s')} for the dense conv and {si(dw_roof, 'FLOP/s')} for the "
        f"depthwise one; with a call's floor, the measured ceilings predict "
        f"{times(predicted)}.",
        test=TwoSided(
            "dense FLOP/s ÷ depthwise FLOP/s",
            predicted=predicted,
            alternative="intensity does not matter: both run at the same FLOP/s",
            alternative_value=1.0,
            low=DIRECTION_MIN_EFFECT,  # "far lower": the post's direction, its effect fixed
            high=None,
            measured=ratio,
            interval=interval,
        ),
        detail=f"dense {si(dense_flops, 'FLOP/s')} ({percent(split.fast_attained)} of its roof), "
        f"depthwise {si(dw_flops, 'FLOP/s')} ({percent(split.slow_attained)} of its roof): "
        f"{times(split.roofline)} of the gap from reuse, {times(split.rest)} from the kernels",
        device=device,
        values={
            "dense_intensity": dense_i,
            "depthwise_intensity": dw_i,
            "ridge_point": ridge,
            "dense_flops_per_s": dense_flops,
            "depthwise_flops_per_s": dw_flops,
            "flops_ratio": ratio,
            "dense_roof_fraction": split.fast_attained,
            "depthwise_roof_fraction": split.slow_attained,
            "gap_from_kernels": split.rest,
            "dense_attainable": dense_roof,
            "depthwise_attainable": dw_roof,
        },
        plot=_conv_bars(dense, depthwise, (dense_roof, dw_roof), peaks),
    )


def _conv_bars(
    dense: Measurement, depthwise: Measurement, roofs: tuple[float, float], peaks: Peaks
) -> PlotSpec:
    """The two convolutions' FLOP/s beside what the roofline allows each."""
    B, C_in, H, W = sizes(dense, "B", "C_in", "H", "W")
    return bars(
        f"3×3 convolutions on {B}×{C_in}×{H}×{W}: dense against depthwise",
        "kernel",
        "FLOP/s",
        ("dense conv2d", "depthwise conv2d"),
        (dense.flops_per_s, depthwise.flops_per_s),
        roofs,
        hlines=(("measured peak FLOP/s", peaks.flops_per_s),),
        spread=(dense.interval_flops_per_s, depthwise.interval_flops_per_s),
    )


EXPERIMENT = Experiment(
    "CNN",
    comparisons,
    {
        judge_weight_sharing: _weights,
        judge_conv_vs_depthwise: _convolutions,
        judge_roles: roles_reading(lambda m, z: (_pair(m, z),)),
    },
    {"cnn-weights": lambda _device, _z: asdict(count_weights()), **ROOF_FACTS},
)
"""What the CNN's claims need measured (the weights counted first), and how each of its
judges reads it (the roofline claims' on both convolutions)."""
