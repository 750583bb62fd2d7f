r"""The verdict logic: measurements in, one :class:`ClaimResult` per claim out.

Each ``judge_*`` function takes measurements (real ones from :mod:`gpuconcepts.kernels`,
or synthetic ones in the tests), derives the prediction from :mod:`gpuconcepts.formulas`
(through :mod:`~gpuconcepts.claims.quantities`), and compares the measurement with a
constant of :mod:`gpuconcepts.claims.thresholds`. Nothing here runs a kernel, so every
branch of every verdict is unit-tested. Claims of one shape share one builder: a power law
in S (:func:`_power_law`), a bar chart of measured against predicted (:func:`_bars`).

>>> from gpuconcepts.measure import Measurement
>>> def loop(S: int, seconds: float) -> Measurement:
...     return Measurement("rnn-module", "cpu", {"B": 8, "S": S, "d_in": 64, "d_h": 64, "s": 4},
...                        (seconds,), 1e6 * S, 1e4 * S)
>>> result = judge_rnn_length([loop(S, 1e-4 * S) for S in (16, 32, 64, 128)], device="demo")
>>> result.verdict, round(result.values["exponent"], 3)
(True, 1.0)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from gpuconcepts import formulas
from gpuconcepts.claims import thresholds as T
from gpuconcepts.claims.fit import crossing, fit_power_law, fit_upper, rank_correlation
from gpuconcepts.claims.quantities import (
    attainable,
    formula_along,
    formula_at,
    limit_of,
    param,
    size_values,
    sizes,
    solve_for,
    sorted_sweep,
)
from gpuconcepts.claims.result import ClaimResult, PlotSpec, Series
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.formula import Formula
from gpuconcepts.measure import Measurement
from gpuconcepts.questions import question
from gpuconcepts.render import sizes as sizes_text
from gpuconcepts.roofline import Peaks, place
from gpuconcepts.units import binary_bytes, describe_bytes, plain_number, si
from gpuconcepts.workloads import workload


def _seconds(m: Measurement) -> float:
    """The book's one statistic of a measurement (its median, see Measurement.seconds)."""
    return m.seconds


# -- building results ------------------------------------------------------------------------
def _ratio_text(value: float) -> str:
    return f"{value:.2f}×"


def _bars(
    title: str,
    x_label: str,
    y_label: str,
    categories: tuple[str, ...],
    measured: tuple[float, ...],
    predicted: tuple[float, ...] = (),
    *,
    labels: tuple[str, str] = ("measured", "roofline"),
    log_y: bool = True,
    hlines: tuple[tuple[str, float], ...] = (),
) -> PlotSpec:
    """A bar chart of one measured value per category, beside its prediction when given."""
    at = tuple(float(i) for i in range(len(categories)))
    series = [Series(labels[0], at, measured)]
    if predicted:
        series.append(Series(labels[1], at, predicted, role="predicted"))
    return PlotSpec(
        title,
        x_label,
        y_label,
        tuple(series),
        log_x=False,
        log_y=log_y,
        hlines=hlines,
        categories=categories,
    )


def _power_law(
    sweep: Sequence[Measurement],
    formula: Formula,
    *,
    exponent: float,
    tolerance: float,
    fixed: Sequence[str],
    what: str,
    key: str,
    architecture: str,
    claim: str,
    title: str,
    device: str,
) -> ClaimResult:
    """Time grows like S**exponent: the exponent fitted on the upper half of a sweep over S.

    The prediction is the exponent of ``formula`` (the FLOP count) over the same sweep;
    ``title`` is completed with the sizes the sweep holds fixed.
    """
    ordered = sorted_sweep(sweep, "S", fixed=fixed, what=what)
    lengths = size_values(ordered, "S")
    seconds = tuple(_seconds(m) for m in ordered)
    flops = formula_along(formula, ordered)
    predicted = fit_power_law(lengths, flops).exponent
    fit = fit_upper(lengths, seconds)
    fitted = lengths[-fit.points :]
    held = ", ".join(f"{name}={param(ordered[0], name)}" for name in fixed)
    first, last = plain_number(lengths[0]), plain_number(lengths[-1])
    return ClaimResult(
        key=key,
        architecture=architecture,
        claim=claim,
        prediction=f"{formula.text()}: exponent {predicted:.3g} in S ({held})",
        measured=f"time ∝ S^{fit.exponent:.2f} fitted over S = {plain_number(fitted[0])} … "
        f"{last} (R² {fit.r_squared:.3f}); {si(seconds[0], 's')} at S={first}, "
        f"{si(seconds[-1], 's')} at S={last}",
        threshold=f"|exponent − {exponent:g}| ≤ {tolerance:g} "
        "(upper half of the sweep, at least 3 points)",
        verdict=abs(fit.exponent - exponent) <= tolerance,
        device=device,
        values={
            "exponent": fit.exponent,
            "predicted_exponent": predicted,
            "r_squared": fit.r_squared,
            "fit_points": fit.points,
        },
        plot=PlotSpec(
            title=f"{title} ({held})",
            x_label="sequence length S",
            y_label="seconds",
            series=(
                Series("measured", lengths, seconds),
                Series(
                    f"∝ {formula.name} (anchored at the largest S)",
                    lengths,
                    tuple(seconds[-1] * f / flops[-1] for f in flops),
                    role="predicted",
                ),
                Series(
                    f"fit: S^{fit.exponent:.2f}",
                    fitted,
                    tuple(fit.predict(x) for x in fitted),
                    role="threshold",
                ),
            ),
        ),
    )


# -- DLRM ------------------------------------------------------------------------------------
def _row_bytes(m: Measurement) -> float:
    """Bytes of one embedding row: the table's formula at N = 1."""
    return float(formulas.embedding_memory(N=1, d=param(m, "d"), s=param(m, "s")))


def judge_dlrm_lookups(
    random: Measurement,
    sequential: Measurement,
    *,
    peaks: Peaks,
    cache_bytes: int,
    device: str,
    widths: Sequence[tuple[Measurement, Measurement]] = (),
) -> ClaimResult:
    """Random lookups reach much lower bandwidth than sequential ones; batch ≪ table.

    The prediction restates the post's 51.2 GB table and 1 MiB batch (Q10, Q11) and the same
    formulas at the table size that fits here. Visible only when the table is at least
    :data:`~gpuconcepts.claims.thresholds.DLRM_MIN_CACHE_MULTIPLE` times the last-level cache.

    The verdict is taken at the post's row width. ``widths`` may add (random, sequential)
    pairs at other row widths with the same bytes per batch: they are plotted and reported,
    to show where the access order starts to matter, but do not change the verdict.
    """
    names = ("N", "B", "L", "d", "s")
    if sizes(random, *names) != sizes(sequential, *names):
        raise GpuConceptsError("random and sequential lookups must use the same N, B, L, d, s")
    N, B, L, d, s = sizes(random, *names)
    post_table, post_batch = float(question(10).steps[0].value), float(question(11).steps[0].value)
    table = formula_at(formulas.embedding_memory, random)
    batch = formula_at(formulas.embedding_payload, random)
    intensity = formula_at(formulas.embedding_intensity, random)
    row = _row_bytes(random)
    ridge = peaks.ridge_point
    ratio = sequential.bytes_per_s / random.bytes_per_s
    multiple = table / cache_bytes
    visible = multiple >= T.DLRM_MIN_CACHE_MULTIPLE
    reason = (
        ""
        if visible
        else f"the table ({binary_bytes(table)}) is only {multiple:.1f}× the "
        f"{binary_bytes(cache_bytes)} last-level cache, so random rows are served from cache"
    )
    pairs = sorted([*widths, (random, sequential)], key=lambda pair: param(pair[0], "d"))
    row_bytes = tuple(_row_bytes(r) for r, _ in pairs)
    if len(set(row_bytes)) != len(row_bytes):
        raise GpuConceptsError(f"row widths must differ; got {sorted(row_bytes)} bytes")
    ratios = tuple(q.bytes_per_s / r.bytes_per_s for r, q in pairs)
    measured = (
        f"random {si(random.bytes_per_s, 'B/s')}, sequential "
        f"{si(sequential.bytes_per_s, 'B/s')} (DRAM peak {si(peaks.bytes_per_s, 'B/s')})"
        f": sequential/random = {_ratio_text(ratio)} with {plain_number(row)}-byte rows"
    )
    dram = (("measured DRAM bandwidth", peaks.bytes_per_s),)
    if len(pairs) > 1:
        measured += "; at other widths: " + ", ".join(
            f"{_ratio_text(x)} ({plain_number(b)}-byte rows)"
            for b, x in zip(row_bytes, ratios, strict=True)
            if b != row
        )
        plot = PlotSpec(
            title="Embedding lookups: achieved bandwidth by access order and row width",
            x_label="bytes per embedding row (d·s)",
            y_label="achieved bandwidth (bytes/s)",
            series=(
                Series("random rows", row_bytes, tuple(r.bytes_per_s for r, _ in pairs)),
                Series("consecutive rows", row_bytes, tuple(q.bytes_per_s for _, q in pairs)),
            ),
            hlines=dram,
            vlines=((f"the post's rows (d={d})", row),),
        )
    else:
        plot = _bars(
            "Embedding lookups: achieved bandwidth by access order",
            "access order",
            "achieved bandwidth (bytes/s)",
            ("random rows", "consecutive rows"),
            (random.bytes_per_s, sequential.bytes_per_s),
            log_y=False,
            hlines=dram,
        )
    return ClaimResult(
        key="dlrm-random-vs-sequential",
        architecture="DLRM",
        claim="Random embedding lookups reach much lower bandwidth than sequential ones; "
        "a batch touches a tiny part of a huge table.",
        prediction=f"The post's table is {describe_bytes(post_table)}; one batch reads "
        f"{describe_bytes(post_batch)}, {post_batch / post_table:.4%} of it. Here the table has "
        f"{plain_number(N)} rows ({binary_bytes(table)}) and a batch of {plain_number(B)}×"
        f"{plain_number(L)} rows reads {binary_bytes(batch)}, {batch / table:.4%} of it. "
        f"Intensity {intensity:.3g} FLOP/byte, far below the ridge point {ridge:.3g}: "
        "memory-bound, and scattered rows should stream slower than consecutive ones.",
        measured=measured,
        threshold=f"sequential/random ≥ {T.DLRM_MIN_BANDWIDTH_RATIO:g}×; shown only when the "
        f"table is ≥ {T.DLRM_MIN_CACHE_MULTIPLE:g}× the last-level cache "
        f"({binary_bytes(cache_bytes)})",
        verdict=visible and ratio >= T.DLRM_MIN_BANDWIDTH_RATIO,
        device=device,
        visible=visible,
        reason=reason,
        values={
            "post_table_bytes": post_table,
            "post_batch_bytes": post_batch,
            "post_fraction": post_batch / post_table,
            "N": N,
            "B": B,
            "L": L,
            "d": d,
            "s": s,
            "table_bytes": table,
            "batch_bytes": batch,
            "fraction": batch / table,
            "intensity": intensity,
            "ridge_point": ridge,
            "random_bytes_per_s": random.bytes_per_s,
            "sequential_bytes_per_s": sequential.bytes_per_s,
            "ratio": ratio,
            "cache_bytes": cache_bytes,
            "cache_multiple": multiple,
            **{f"ratio_{int(b)}B_rows": x for b, x in zip(row_bytes, ratios, strict=True)},
        },
        plot=plot,
    )


# -- MLP -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _MlpSweep:
    """An MLP batch sweep, sorted by B, with its intensities and roofline from the formulas."""

    batches: tuple[float, ...]
    flops_per_s: tuple[float, ...]
    intensity: tuple[float, ...]
    attainable: tuple[float, ...]
    d_in: int
    d_out: int
    s: int
    peaks: Peaks

    @classmethod
    def of(cls, sweep: Sequence[Measurement], peaks: Peaks) -> _MlpSweep:
        """Sort and check a sweep (the layer and its dtype fixed), then derive from it."""
        fixed = ("d_in", "d_out", "s")
        ordered = sorted_sweep(sweep, "B", fixed=fixed, what="an MLP batch sweep")
        intensity = formula_along(formulas.mlp_intensity, ordered)
        d_in, d_out, s = sizes(ordered[0], *fixed)
        return cls(
            batches=size_values(ordered, "B"),
            flops_per_s=tuple(m.flops_per_s for m in ordered),
            intensity=intensity,
            attainable=attainable(intensity, peaks),
            d_in=d_in,
            d_out=d_out,
            s=s,
            peaks=peaks,
        )

    def series(self) -> tuple[Series, Series]:
        """Measured FLOP/s against the roofline's, both over B."""
        return (
            Series("measured", self.batches, self.flops_per_s),
            Series(
                "roofline (mlp_intensity × bandwidth, capped at peak)",
                self.batches,
                self.attainable,
                role="predicted",
            ),
        )


def judge_mlp_trend(sweep: Sequence[Measurement], *, peaks: Peaks, device: str) -> ClaimResult:
    """Larger batches raise both the intensity (formula) and the achieved FLOP/s (measured)."""
    w = _MlpSweep.of(sweep, peaks)
    trend = rank_correlation(w.batches, w.flops_per_s)
    gain = w.flops_per_s[-1] / w.flops_per_s[0]
    b0, b1 = plain_number(w.batches[0]), plain_number(w.batches[-1])
    return ClaimResult(
        key="mlp-batch-trend",
        architecture="MLP",
        claim="A larger batch raises both arithmetic intensity and achieved FLOP/s.",
        prediction=f"mlp_intensity for a {w.d_in}→{w.d_out} layer ({w.s}-byte values) rises "
        f"from {w.intensity[0]:.3g} FLOP/byte at B={b0} to {w.intensity[-1]:.3g} at B={b1}: the "
        "weights are read once and reused by every row, so achieved FLOP/s should rise with B "
        f"(the roofline allows {si(w.attainable[0], 'FLOP/s')} → {si(w.attainable[-1], 'FLOP/s')}).",
        measured=f"{si(w.flops_per_s[0], 'FLOP/s')} at B={b0} → {si(w.flops_per_s[-1], 'FLOP/s')} "
        f"at B={b1} ({_ratio_text(gain)}); rank correlation with B {trend:.2f}",
        threshold=f"rank correlation of FLOP/s with B ≥ {T.MLP_MIN_TREND:g} and FLOP/s at the "
        f"largest batch ≥ {T.MLP_MIN_GAIN:g}× the smallest",
        verdict=trend >= T.MLP_MIN_TREND and gain >= T.MLP_MIN_GAIN,
        device=device,
        values={
            "d_in": w.d_in,
            "d_out": w.d_out,
            "B_min": w.batches[0],
            "B_max": w.batches[-1],
            "intensity_min": w.intensity[0],
            "intensity_max": w.intensity[-1],
            "flops_per_s_min": w.flops_per_s[0],
            "flops_per_s_max": w.flops_per_s[-1],
            "gain": gain,
            "rank_correlation": trend,
        },
        plot=PlotSpec(
            title=f"MLP {w.d_in}→{w.d_out}: achieved FLOP/s against batch size",
            x_label="batch size B",
            y_label="FLOP/s",
            series=w.series(),
            hlines=(("measured peak FLOP/s", w.peaks.flops_per_s),),
        ),
    )


def judge_mlp_crossover(sweep: Sequence[Measurement], *, peaks: Peaks, device: str) -> ClaimResult:
    """The batch where the layer turns compute-bound: measured knee against the ridge point.

    Predicted: the B solving ``mlp_intensity(B) = ridge_point``. Measured: the first B at
    which achieved FLOP/s reaches :data:`~gpuconcepts.claims.thresholds.MLP_KNEE_FRACTION`
    of the measured peak (log-log interpolation between sweep points).
    """
    w = _MlpSweep.of(sweep, peaks)
    layer = {"d_in": w.d_in, "d_out": w.d_out, "s": w.s}
    ridge, peak = w.peaks.ridge_point, w.peaks.flops_per_s
    predicted = solve_for(formulas.mlp_intensity, "B", ridge, **layer)
    ceiling = limit_of(formulas.mlp_intensity, "B", **layer)
    knee = T.MLP_KNEE_FRACTION * peak
    measured_b = crossing(w.batches, w.flops_per_s, level=knee)
    lo, hi = w.batches[0], w.batches[-1]
    # the claim can only be seen when the predicted crossover lies inside the sweep
    if predicted is None:
        reason = (
            f"this layer's intensity never exceeds {ceiling:.3g} FLOP/byte (its limit as B grows),"
            f" below this device's ridge point {ridge:.3g}: it stays memory-bound at any batch"
        )
    elif not lo <= predicted <= hi:
        reason = (
            f"the predicted crossover B ≈ {predicted:.3g} lies outside the sweep "
            f"(B = {plain_number(lo)} … {plain_number(hi)})"
        )
    else:
        reason = ""
    visible = not reason
    factor = (
        max(measured_b / predicted, predicted / measured_b)
        if (predicted is not None and measured_b is not None)
        else None
    )
    vlines: list[tuple[str, float]] = []
    if predicted is not None:
        vlines.append(("predicted crossover (intensity = ridge)", predicted))
    if measured_b is not None:
        vlines.append(("measured crossover (half of peak)", measured_b))
    return ClaimResult(
        key="mlp-crossover",
        architecture="MLP",
        claim="Batch size moves the MLP from memory-bound to compute-bound where its "
        "intensity crosses the ridge point.",
        prediction=f"ridge point {ridge:.3g} FLOP/byte (measured peaks {si(peak, 'FLOP/s')} / "
        f"{si(w.peaks.bytes_per_s, 'B/s')}); mlp_intensity reaches it at "
        + (f"B ≈ {predicted:.3g}" if predicted is not None else "no batch size")
        + f" (its limit as B grows: {ceiling:.3g} FLOP/byte)",
        measured=f"achieved FLOP/s first reaches {T.MLP_KNEE_FRACTION:g} × peak "
        f"({si(knee, 'FLOP/s')}) at "
        + (f"B ≈ {measured_b:.3g}" if measured_b is not None else "no batch of the sweep")
        + (f", {factor:.2f}× from the prediction" if factor is not None else ""),
        threshold=f"measured crossover within {T.MLP_MAX_CROSSOVER_FACTOR:g}× of the predicted B "
        f"(knee = first B with FLOP/s ≥ {T.MLP_KNEE_FRACTION:g} × measured peak)",
        verdict=visible and factor is not None and factor <= T.MLP_MAX_CROSSOVER_FACTOR,
        device=device,
        visible=visible,
        reason=reason,
        values={
            "ridge_point": ridge,
            "predicted_B": predicted,
            "measured_B": measured_b,
            "factor": factor,
            "intensity_limit": ceiling,
            "peak_flops_per_s": peak,
        },
        plot=PlotSpec(
            title="MLP: where the batch sweep crosses the ridge point",
            x_label="batch size B",
            y_label="FLOP/s",
            series=w.series(),
            hlines=(("measured peak FLOP/s", peak), ("half of peak", knee)),
            vlines=tuple(vlines),
        ),
    )


# -- CNN -------------------------------------------------------------------------------------
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


def judge_weight_sharing(counts: WeightCounts, *, device: str) -> ClaimResult:
    """48 weights fully connected against 9 shared ones, each counted and equal to the formulas."""
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
    got = {name: getattr(counts, name) for name in expected}
    mismatches = [n for n in expected if got[n] != expected[n]]
    uses = formulas.conv_macs(**conv) // int(expected["conv_weights"])
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
        measured=f"{linear} has {counts.linear_weights} weights, {filt} has "
        f"{counts.conv_weights}, visiting {counts.positions} positions; FlopCounterMode counts "
        f"{counts.linear_flops} and {counts.conv_flops} FLOPs",
        threshold="every count equal to its formula, exactly"
        + (f" (mismatch: {', '.join(mismatches)})" if mismatches else ""),
        verdict=not mismatches,
        device=device,
        values={
            **{f"{k}_expected": v for k, v in expected.items()},
            **{f"{k}_counted": v for k, v in got.items()},
            "uses_per_weight": uses,
        },
        plot=_bars(
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
    ratio = dense_flops / dw_flops
    dw_fraction = dw_flops / peaks.flops_per_s
    B, C_in, H, W = sizes(dense, "B", "C_in", "H", "W")
    return ClaimResult(
        key="cnn-dense-vs-depthwise",
        architecture="CNN",
        claim="A dense 3×3 convolution is compute-heavy; a depthwise one has far lower "
        "intensity and runs memory- or overhead-bound.",
        prediction=f"conv_intensity {dense_i:.3g} FLOP/byte against depthwise_conv_intensity "
        f"{dw_i:.3g} ({dense_i / dw_i:.3g}× lower); ridge point {ridge:.3g}. The roofline allows "
        f"{si(dense_roof, 'FLOP/s')} for the dense conv and {si(dw_roof, 'FLOP/s')} for the "
        "depthwise one.",
        measured=f"dense {si(dense_flops, 'FLOP/s')}, depthwise {si(dw_flops, 'FLOP/s')} "
        f"({_ratio_text(ratio)} apart); depthwise at {dw_fraction:.1%} of the measured peak "
        f"{si(peaks.flops_per_s, 'FLOP/s')}",
        threshold=f"dense FLOP/s ≥ {T.CNN_MIN_FLOPS_RATIO:g}× depthwise, and depthwise ≤ "
        f"{T.DEPTHWISE_MAX_PEAK_FRACTION:.0%} of peak FLOP/s",
        verdict=ratio >= T.CNN_MIN_FLOPS_RATIO and dw_fraction <= T.DEPTHWISE_MAX_PEAK_FRACTION,
        device=device,
        values={
            "dense_intensity": dense_i,
            "depthwise_intensity": dw_i,
            "ridge_point": ridge,
            "dense_flops_per_s": dense_flops,
            "depthwise_flops_per_s": dw_flops,
            "flops_ratio": ratio,
            "depthwise_peak_fraction": dw_fraction,
            "dense_attainable": dense_roof,
            "depthwise_attainable": dw_roof,
        },
        plot=_bars(
            f"3×3 convolutions on {B}×{C_in}×{H}×{W}: dense against depthwise",
            "kernel",
            "FLOP/s",
            ("dense conv2d", "depthwise conv2d"),
            (dense_flops, dw_flops),
            (dense_roof, dw_roof),
            hlines=(("measured peak FLOP/s", peaks.flops_per_s),),
        ),
    )


# -- RNN -------------------------------------------------------------------------------------
def judge_rnn_length(sweep: Sequence[Measurement], *, device: str) -> ClaimResult:
    """RNN time grows linearly with S: the fitted exponent over the upper sweep is about 1."""
    return _power_law(
        sweep,
        formulas.rnn_flops,
        exponent=T.RNN_EXPONENT,
        tolerance=T.RNN_EXPONENT_TOLERANCE,
        fixed=("B", "d_in", "d_h"),
        what="an RNN length sweep",
        key="rnn-linear-in-S",
        architecture="RNN",
        claim="RNN time grows linearly with the sequence length S: one step after another.",
        title="nn.RNN time against sequence length",
        device=device,
    )


def judge_rnn_loop_vs_gemm(
    loop: Measurement, gemm: Measurement, *, peaks: Peaks, device: str
) -> ClaimResult:
    """The dependent step loop is much slower than the same FLOPs run as one GEMM."""
    if loop.flops != gemm.flops:
        raise GpuConceptsError(
            f"loop and GEMM must do the same FLOPs; got {loop.flops} and {gemm.flops}"
        )
    S = param(loop, "S")
    slowdown = _seconds(loop) / _seconds(gemm)
    return ClaimResult(
        key="rnn-loop-vs-gemm",
        architecture="RNN",
        claim="The step-by-step recurrence is much slower than the same arithmetic done at once.",
        prediction=f"both do rnn_flops = {plain_number(loop.flops)} FLOPs on "
        f"rnn_bytes = {plain_number(loop.bytes)} bytes, so the roofline gives both "
        f"{si(place(loop, peaks).predicted_seconds, 's')}; only the loop must run its {S} steps in order",
        measured=f"step loop {si(_seconds(loop), 's')}, one GEMM {si(_seconds(gemm), 's')}: "
        f"{_ratio_text(slowdown)} slower",
        threshold=f"loop time ≥ {T.RNN_MIN_LOOP_SLOWDOWN:g}× GEMM time",
        verdict=slowdown >= T.RNN_MIN_LOOP_SLOWDOWN,
        device=device,
        values={
            "loop_seconds": _seconds(loop),
            "gemm_seconds": _seconds(gemm),
            "slowdown": slowdown,
            "roofline_seconds": place(loop, peaks).predicted_seconds,
        },
        plot=_bars(
            f"The same RNN FLOPs, with and without the step dependency (S={S})",
            "implementation",
            "seconds",
            (f"step loop ({S} steps)", "one batched GEMM"),
            (_seconds(loop), _seconds(gemm)),
            (place(loop, peaks).predicted_seconds, place(gemm, peaks).predicted_seconds),
        ),
    )


def judge_rnn_batch(sweep: Sequence[Measurement], *, device: str) -> ClaimResult:
    """More batch raises throughput, yet the time per step (the critical path) does not fall."""
    ordered = sorted_sweep(sweep, "B", fixed=("S", "d_in", "d_h"), what="an RNN batch sweep")
    batches = size_values(ordered, "B")
    flops = formula_along(formulas.rnn_flops, ordered)
    S = param(ordered[0], "S")
    per_step = tuple(_seconds(m) / S for m in ordered)
    throughput = tuple(b * S / _seconds(m) for b, m in zip(batches, ordered, strict=True))
    gain = throughput[-1] / throughput[0]
    latency_ratio = per_step[-1] / per_step[0]
    b0, b1 = plain_number(batches[0]), plain_number(batches[-1])
    return ClaimResult(
        key="rnn-batch-vs-critical-path",
        architecture="RNN",
        claim="More batch raises throughput but does not shorten the sequential critical path.",
        prediction=f"rnn_flops grows {flops[-1] / flops[0]:g}× from B={b0} to B={b1}, all "
        f"of it parallel within a step; the {S} steps stay in order, so time per step cannot "
        "fall below its value at the smallest batch",
        measured=f"throughput {plain_number(round(throughput[0]))} → "
        f"{plain_number(round(throughput[-1]))} tokens/s ({_ratio_text(gain)}); time per step "
        f"{si(per_step[0], 's')} → {si(per_step[-1], 's')} ({_ratio_text(latency_ratio)})",
        threshold=f"throughput gain ≥ {T.RNN_MIN_THROUGHPUT_GAIN:g}× and time per step at the "
        f"largest batch ≥ {T.RNN_MIN_LATENCY_RATIO:g}× that at the smallest",
        verdict=gain >= T.RNN_MIN_THROUGHPUT_GAIN and latency_ratio >= T.RNN_MIN_LATENCY_RATIO,
        device=device,
        values={
            "throughput_gain": gain,
            "latency_ratio": latency_ratio,
            "per_step_seconds_min_B": per_step[0],
            "per_step_seconds_max_B": per_step[-1],
        },
        plot=PlotSpec(
            title=f"nn.RNN over S={S}: batch against throughput and time per step",
            x_label="batch size B",
            y_label=f"relative to B={b0}",
            series=(
                Series(
                    "throughput (tokens/s)", batches, tuple(t / throughput[0] for t in throughput)
                ),
                Series("time per step", batches, tuple(p / per_step[0] for p in per_step)),
            ),
            hlines=(
                (f"time per step floor ({T.RNN_MIN_LATENCY_RATIO:g}×)", T.RNN_MIN_LATENCY_RATIO),
            ),
        ),
    )


# -- Transformer -------------------------------------------------------------------------------
_ATTENTION_FIXED = ("B", "d")
"""The sizes an attention sweep over S holds fixed."""
_ATTENTION_SWEEP = "an attention sweep over S"
"""Its name in an error message."""


def judge_attention_exponent(sweep: Sequence[Measurement], *, device: str) -> ClaimResult:
    """Attention time grows like S² for large S: the exponent fitted on the upper sweep."""
    return _power_law(
        sweep,
        formulas.attention_flops,
        exponent=T.ATTENTION_EXPONENT,
        tolerance=T.ATTENTION_EXPONENT_TOLERANCE,
        fixed=_ATTENTION_FIXED,
        what=_ATTENTION_SWEEP,
        key="attention-quadratic",
        architecture="Transformer",
        claim="Attention time grows like S² for long sequences.",
        title="Attention prefill time against S",
        device=device,
    )


def judge_attention_doubling(sweep: Sequence[Measurement], *, device: str) -> ClaimResult:
    """Doubling S costs about 4×: the largest doubling of the sweep against the formula's ratio."""
    ordered = sorted_sweep(sweep, "S", fixed=_ATTENTION_FIXED, what=_ATTENTION_SWEEP)
    lengths, seconds = size_values(ordered, "S"), tuple(_seconds(m) for m in ordered)
    flops = formula_along(formulas.attention_flops, ordered)
    pairs = [(i, j) for j in range(len(lengths)) for i in range(j) if lengths[j] == 2 * lengths[i]]
    post = question(16)
    post_S = " → ".join(plain_number(step.values["S"]) for step in post.steps)
    low = 2.0 ** (T.ATTENTION_EXPONENT - T.ATTENTION_EXPONENT_TOLERANCE)
    high = 2.0 ** (T.ATTENTION_EXPONENT + T.ATTENTION_EXPONENT_TOLERANCE)
    claim = f"Doubling S makes attention about {post.ratio}× as expensive."
    threshold = f"{low:.2f}× ≤ t(2S)/t(S) ≤ {high:.2f}× at the largest doubling of the sweep"
    if not pairs:
        B, S, d = param(ordered[0], "B"), param(ordered[-1], "S"), param(ordered[0], "d")
        doubled = formulas.attention_flops(B=B, S=2 * S, d=d) / formulas.attention_flops(
            B=B, S=S, d=d
        )
        return ClaimResult(
            key="attention-doubling",
            architecture="Transformer",
            claim=claim,
            prediction=f"attention_flops(2S)/attention_flops(S) = {doubled:g}; the post's Q16: "
            f"{post.ratio}×",
            measured="no pair S, 2S in the sweep",
            threshold=threshold,
            verdict=False,
            device=device,
            visible=False,
            reason=f"the sweep S = {[plain_number(x) for x in lengths]} holds no doubling",
        )
    i, j = pairs[-1]
    predicted = flops[j] / flops[i]
    ratio = seconds[j] / seconds[i]
    before = tuple(lengths[a] for a, _ in pairs)
    return ClaimResult(
        key="attention-doubling",
        architecture="Transformer",
        claim=claim,
        prediction=f"attention_flops(S={plain_number(lengths[j])}) / attention_flops("
        f"S={plain_number(lengths[i])}) = {predicted:g}; the post's Q16 ({post_S} tokens):"
        f" {post.ratio}× the scores",
        measured=f"{si(seconds[i], 's')} → {si(seconds[j], 's')}: {_ratio_text(ratio)}",
        threshold=threshold,
        verdict=low <= ratio <= high,
        device=device,
        values={
            "ratio": ratio,
            "predicted_ratio": predicted,
            "S": lengths[i],
            "low": low,
            "high": high,
        },
        plot=PlotSpec(
            title="Attention: cost of doubling S, at each doubling of the sweep",
            x_label="S (before doubling)",
            y_label="t(2S) / t(S)",
            series=(
                Series("measured", before, tuple(seconds[b] / seconds[a] for a, b in pairs)),
                Series(
                    "attention_flops ratio",
                    before,
                    tuple(flops[b] / flops[a] for a, b in pairs),
                    role="predicted",
                ),
            ),
            log_y=False,
            hlines=((f"lower bound {low:.2f}×", low), (f"upper bound {high:.2f}×", high)),
        ),
    )


def judge_prefill_vs_decode(
    prefill: Measurement, decode: Measurement, *, peaks: Peaks, device: str
) -> ClaimResult:
    """Prefill handles all S tokens at once; decode goes one token at a time and is slower per
    token. ``prefill`` is a decoder's (causal) or an encoder's prefill: its FLOPs per token come
    from its own workload's formula, so a causal prefill is counted with about half the
    scores."""
    B, S, d = sizes(prefill, "B", "S", "d")
    if sizes(decode, "B", "S", "d") != (B, S, d):
        raise GpuConceptsError(
            "prefill and decode must share B, S and d to compare time per token; got "
            f"prefill {(B, S, d)} and decode {sizes(decode, 'B', 'S', 'd')}"
        )
    # per token: prefill's counts and time cover B·S tokens, one decode step's cover B
    prefill_per_token = _seconds(prefill) / (B * S)
    decode_per_token = _seconds(decode) / B
    slowdown = decode_per_token / prefill_per_token
    counted = workload(prefill.workload).flops  # attention_flops_causal for a decoder's prefill
    flops_prefill = prefill.flops / (B * S)
    flops_decode = decode.flops / B
    i_prefill, i_decode = prefill.intensity, decode.intensity
    roof_prefill = place(prefill, peaks).predicted_seconds / (B * S)
    roof_decode = place(decode, peaks).predicted_seconds / B
    return ClaimResult(
        key="prefill-vs-decode",
        architecture="Transformer",
        claim="Prefill processes the prompt's tokens in parallel; decode generates one token at "
        "a time.",
        prediction=f"per token, the prefill does {plain_number(round(flops_prefill))} attention "
        f"FLOPs on average ({counted.name}) and a decode step at S={plain_number(S)} "
        f"{plain_number(round(flops_decode))} ({flops_decode / flops_prefill:.2g}×), at intensity "
        f"{i_prefill:.3g} against {i_decode:.3g} FLOP/byte: the roofline gives "
        f"{si(roof_prefill, 's')} against {si(roof_decode, 's')} per token "
        f"({roof_decode / roof_prefill:.3g}×)",
        measured=f"prefill {si(prefill_per_token, 's')} per token, decode "
        f"{si(decode_per_token, 's')} per token: {_ratio_text(slowdown)}",
        threshold=f"decode time per token ≥ {T.DECODE_MIN_SLOWDOWN:g}× prefill time per token",
        verdict=slowdown >= T.DECODE_MIN_SLOWDOWN,
        device=device,
        values={
            "prefill_seconds_per_token": prefill_per_token,
            "decode_seconds_per_token": decode_per_token,
            "slowdown": slowdown,
            "predicted_slowdown": roof_decode / roof_prefill,
            "prefill_intensity": i_prefill,
            "decode_intensity": i_decode,
        },
        plot=_bars(
            f"Attention time per token at S={plain_number(S)} (B={B}, d={d})",
            "phase",
            "seconds per token",
            ("prefill (all tokens at once)", "decode (one token per step)"),
            (prefill_per_token, decode_per_token),
            (roof_prefill, roof_decode),
        ),
    )


def judge_kv_cache(
    *,
    B: int,
    d: int,
    s: int,
    lengths: Sequence[int],
    cache_bytes: Sequence[int],
    device: str,
) -> ClaimResult:
    """The KV cache measured after every decode step equals ``kv_cache_memory`` exactly."""
    if len(lengths) != len(cache_bytes) or not lengths:
        raise GpuConceptsError(
            f"need one measured cache size per length; got {len(lengths)} lengths and "
            f"{len(cache_bytes)} sizes"
        )
    expected = tuple(int(formulas.kv_cache_memory(B=B, S=n, d=d, s=s)) for n in lengths)
    worst = max(abs(int(c) - e) for c, e in zip(cache_bytes, expected, strict=True))
    growth = expected[1] - expected[0] if len(expected) > 1 else expected[0] // lengths[0]
    tokens = tuple(float(n) for n in lengths)
    return ClaimResult(
        key="kv-cache-exact",
        architecture="Transformer",
        claim="The KV cache grows by one K and one V vector per token: "
        f"{formulas.kv_cache_memory.text()} bytes per layer.",
        prediction=f"kv_cache_memory(B={B}, S, d={d}, s={s}) = "
        f"{describe_bytes(expected[0])} at S={plain_number(lengths[0])} … "
        f"{describe_bytes(expected[-1])} at S={plain_number(lengths[-1])}, "
        f"+{plain_number(growth)} bytes per step; the post's Q17: {question(17).answer}",
        measured=f"{len(lengths)} steps measured; largest difference from the formula "
        f"{plain_number(worst)} bytes (last: {plain_number(int(cache_bytes[-1]))} bytes)",
        threshold=f"|measured − kv_cache_memory| ≤ {T.KV_CACHE_TOLERANCE_BYTES} bytes at every step",
        verdict=worst <= T.KV_CACHE_TOLERANCE_BYTES,
        device=device,
        values={
            "steps": len(lengths),
            "max_difference_bytes": worst,
            "first_bytes": int(cache_bytes[0]),
            "last_bytes": int(cache_bytes[-1]),
            "bytes_per_step": growth,
        },
        plot=PlotSpec(
            title=f"KV cache size during decode (B={B}, d={d}, {s}-byte values)",
            x_label="tokens in the cache S",
            y_label="bytes",
            series=(
                Series("measured (K and V storage)", tokens, tuple(float(c) for c in cache_bytes)),
                Series("kv_cache_memory", tokens, tuple(float(e) for e in expected), "predicted"),
            ),
            log_x=False,
            log_y=False,
        ),
    )


# -- Roofline ----------------------------------------------------------------------------------
def judge_roofline(
    m: Measurement,
    *,
    role: str,
    peaks: Peaks,
    expected: str,
    label: str,
    source: str,
    device: str,
) -> ClaimResult:
    """The post's tendency for a workload, its roofline class, and its measured behaviour agree.

    ``role`` names the measurement's part (a key of :data:`ROOFLINE_EXPECTATIONS`),
    ``expected`` is the post's word (``"memory"`` or ``"compute"``), ``label`` names the
    workload for people and ``source`` says where the post says so. The values keep the
    measurement's workload and sizes, so a page can find it in the run again.
    Compute-bound means reaching :data:`~gpuconcepts.claims.thresholds.COMPUTE_MIN_PEAK_FRACTION`
    of the measured peak; memory-bound means moving the minimal bytes at no more than
    :data:`~gpuconcepts.claims.thresholds.MEMORY_MAX_BANDWIDTH_RATIO` times the measured bandwidth.
    """
    if expected not in ("memory", "compute"):
        raise GpuConceptsError(f"expected must be 'memory' or 'compute'; got {expected!r}")
    where = place(m, peaks)
    peak_fraction = m.flops_per_s / peaks.flops_per_s
    bandwidth_ratio = m.bytes_per_s / peaks.bytes_per_s
    roofline_ratio = where.ratio
    if where.bound == "compute":
        behaves = peak_fraction >= T.COMPUTE_MIN_PEAK_FRACTION
        rule = f"compute-bound: FLOP/s ≥ {T.COMPUTE_MIN_PEAK_FRACTION:.0%} of the measured peak"
    else:
        behaves = bandwidth_ratio <= T.MEMORY_MAX_BANDWIDTH_RATIO
        rule = f"memory-bound: bytes/s ≤ {T.MEMORY_MAX_BANDWIDTH_RATIO:g}× the measured bandwidth"
    return ClaimResult(
        key=f"roofline-{role}",
        architecture="Roofline",
        claim=f"{label} is {expected}-bound ({source}).",
        prediction=f"intensity {m.intensity:.3g} FLOP/byte against the ridge point "
        f"{peaks.ridge_point:.3g}: the roofline says {where.bound}-bound",
        measured=f"{si(m.flops_per_s, 'FLOP/s')} ({peak_fraction:.1%} of peak), "
        f"{si(m.bytes_per_s, 'B/s')} ({bandwidth_ratio:.2f}× the measured bandwidth); "
        f"{roofline_ratio:.2g}× the roofline time",
        threshold=f"roofline class = the post's ({expected}), and {rule}",
        verdict=where.bound == expected and behaves,
        device=device,
        values={
            "workload": m.workload,
            "sizes": sizes_text(m.params),
            "intensity": m.intensity,
            "ridge_point": peaks.ridge_point,
            "bound": where.bound,
            "expected": expected,
            "peak_fraction": peak_fraction,
            "bandwidth_ratio": bandwidth_ratio,
            "roofline_ratio": roofline_ratio,
        },
    )


ROOFLINE_EXPECTATIONS: Mapping[str, tuple[str, str, str]] = {
    "dlrm-random": ("memory", "DLRM's random embedding lookup", "the post: DLRM, memory-bound"),
    "mlp-small-batch": (
        "memory",
        "An MLP layer at batch 1",
        "the post, Q19: only large batches make computation dominant",
    ),
    "mlp-large-batch": (
        "compute",
        "An MLP layer at a large batch",
        "the post: MLP, compute-intensive, often compute-bound",
    ),
    "cnn-conv": ("compute", "A dense 3×3 convolution", "the post: CNN, often compute-bound"),
    "cnn-depthwise": (
        "memory",
        "A depthwise 3×3 convolution",
        "the post: depthwise convolutions can become memory-bound",
    ),
    "transformer-prefill": (
        "compute",
        "Attention prefill over a long prompt",
        "the post: attention computation grows as S²",
    ),
    "transformer-decode": (
        "memory",
        "One decode step over the KV cache",
        "the post: the KV cache's memory",
    ),
}
"""For each workload of the roofline claim: the post's tendency, a label, and where it says so.

The RNN is left out on purpose: the post names its sequential dependency, not compute or
memory, as its limit (checked by the RNN claims instead)."""
