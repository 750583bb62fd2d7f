"""The MLP's claims: a larger batch raises intensity and FLOP/s, and crosses the ridge point.

Its experiment (:data:`EXPERIMENT`) is one layer over a batch sweep; :func:`judge_mlp_trend`
and :func:`judge_mlp_crossover` read that sweep through :class:`_MlpSweep`, which derives the
intensities and the roofline at each batch from the formulas.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from gpuconcepts import formulas
from gpuconcepts.claims import thresholds as T
from gpuconcepts.claims.fit import rank_correlation
from gpuconcepts.claims.plan import ROOF_FACTS, CoreJudge, Experiment, WithRoofs, roles_reading
from gpuconcepts.claims.predict import predicted_rate
from gpuconcepts.claims.quantities import (
    attainable,
    formula_along,
    limit_of,
    size_values,
    sizes,
    solve_for,
    sorted_sweep,
    with_interval,
)
from gpuconcepts.claims.roofline import judge_roles
from gpuconcepts.claims.shape import interval_ends
from gpuconcepts.claims.thresholds import PREDICTION_FACTOR
from gpuconcepts.measure import Measurement
from gpuconcepts.results.claim import ClaimResult
from gpuconcepts.results.measured import Comparison, Measured
from gpuconcepts.results.plot import PlotSpec, Series
from gpuconcepts.results.twosided import TwoSided
from gpuconcepts.roofline import Peaks
from gpuconcepts.units import number, percent, plain_number, si

if TYPE_CHECKING:
    from gpuconcepts.results.claim_sizes import ClaimSizes


def _sweep(m: Measured, z: ClaimSizes) -> WithRoofs:
    """One layer over the batch sweep, its smallest and largest batch read by the roofline
    claims."""
    wanted = [("mlp", {"B": B, "d_in": z.mlp_d, "d_out": z.mlp_d}) for B in z.mlp_batches]
    roles = {"mlp-small-batch": 0, "mlp-large-batch": len(wanted) - 1}
    return WithRoofs.of(m, z, wanted, roles)


def _claims(sweep: Sequence[Measurement], m: Measured) -> list[ClaimResult]:
    return [*_on(judge_mlp_trend, sweep, m), *_on(judge_mlp_crossover, sweep, m)]


def _on(judge: CoreJudge, sweep: Sequence[Measurement], m: Measured) -> list[ClaimResult]:
    """How each of the MLP's judges is called on the batch sweep."""
    return [judge(sweep, peaks=m.peaks, device=m.label)]


def comparisons(m: Measured, z: ClaimSizes) -> tuple[Comparison, ...]:
    """The batch sweep, timed beside the roofs' references."""
    return (_sweep(m, z).comparison(lambda sweep, _refs: _claims(sweep, m), m),)


def _on_sweep(judge: CoreJudge, m: Measured, z: ClaimSizes) -> list[ClaimResult]:
    """``judge`` on the batch sweep, read from ``m``."""
    return _on(judge, _sweep(m, z).read(m)[0], m)


@dataclass(frozen=True)
class _MlpSweep:
    """An MLP batch sweep, sorted by B, with its intensities and roofline from the formulas."""

    ordered: tuple[Measurement, ...]
    batches: tuple[float, ...]
    flops_per_s: tuple[float, ...]
    intensity: tuple[float, ...]
    attainable: tuple[float, ...]
    predicted: tuple[float, ...]
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
            ordered=tuple(ordered),
            batches=size_values(ordered, "B"),
            flops_per_s=tuple(m.flops_per_s for m in ordered),
            intensity=intensity,
            attainable=attainable(intensity, peaks),
            predicted=tuple(predicted_rate(m, peaks) for m in ordered),
            d_in=d_in,
            d_out=d_out,
            s=s,
            peaks=peaks,
        )

    def series(self) -> tuple[Series, Series, Series]:
        """Measured FLOP/s (with its spread) against the roofline's and the measured
        ceilings' prediction, all over B."""
        low, high = interval_ends(m.interval_flops_per_s for m in self.ordered)
        return (
            Series("measured", self.batches, self.flops_per_s, low=low, high=high),
            Series(
                "roofline (mlp_intensity × bandwidth, capped at peak)",
                self.batches,
                self.attainable,
                role="predicted",
            ),
            Series(
                "predicted by the measured ceilings (GEMM sweep, floors)",
                self.batches,
                self.predicted,
                role="predicted",
            ),
        )

    def crossover_plot(
        self, plateau: float, crossovers: tuple[float | None, float | None, float | None]
    ) -> PlotSpec:
        """The sweep with the peak and the layer's plateau, and each crossover found: the
        post's (intensity = ridge), the predicted roofs' and the layer's own roofs'."""
        names = (
            "the post's crossover (intensity = ridge)",
            "predicted crossover (the predicted roofs meet)",
            "measured crossover (the layer's own roofs meet)",
        )
        return PlotSpec(
            title="MLP: where the batch sweep crosses the ridge point",
            x_label="batch size B",
            y_label="FLOP/s",
            series=self.series(),
            hlines=(
                ("measured peak FLOP/s", self.peaks.flops_per_s),
                ("the layer's plateau", plateau),
            ),
            vlines=tuple((n, B) for n, B in zip(names, crossovers, strict=True) if B is not None),
        )

    def own_roofs(self, rates: Sequence[float]) -> tuple[float, float, float | None]:
        """The layer's plateau (its best FLOP/s over the sweep), its bandwidth (the minimal
        bytes per second at the smallest batch) and the B where the two meet, at ``rates``."""
        layer = {"d_in": self.d_in, "d_out": self.d_out, "s": self.s}
        bandwidth = rates[0] / self.intensity[0]
        plateau = max(rates)
        return (
            plateau,
            bandwidth,
            solve_for(formulas.mlp_intensity, "B", plateau / bandwidth, **layer),
        )


def judge_mlp_trend(sweep: Sequence[Measurement], *, peaks: Peaks, device: str) -> ClaimResult:
    """Larger batches raise both the intensity (formula) and the achieved FLOP/s (measured)."""
    w = _MlpSweep.of(sweep, peaks)
    trend = rank_correlation(w.batches, w.flops_per_s)
    first, last = w.ordered[0], w.ordered[-1]
    gain, interval = with_interval(
        lambda t: (last.flops / t[1]) / (first.flops / t[0]), (first, last)
    )
    b0, b1 = plain_number(w.batches[0]), plain_number(w.batches[-1])
    gain_predicted = w.predicted[-1] / w.predicted[0]
    return ClaimResult(
        key="mlp-batch-trend",
        architecture="MLP",
        claim="A larger batch raises both arithmetic intensity and achieved FLOP/s.",
        prediction=f"mlp_intensity for a {w.d_in}→{w.d_out} layer ({w.s}-byte values) rises "
        f"from {number(w.intensity[0])} FLOP/byte at B={b0} to {number(w.intensity[-1])} at B={b1}: the "
        "weights are read once and reused by every row, so achieved FLOP/s should rise with B "
        f"(the roofline allows {si(w.attainable[0], 'FLOP/s')} → {si(w.attainable[-1], 'FLOP/s')}; "
        f"the measured ceilings, with the GEMM sweep's products of these shapes and a call's "
        f"floor, predict {si(w.predicted[0], 'FLOP/s')} → {si(w.predicted[-1], 'FLOP/s')}).",
        test=TwoSided(
            f"FLOP/s at B={b1} ÷ FLOP/s at B={b0}",
            predicted=gain_predicted,
            alternative="achieved FLOP/s does not depend on the batch",
            alternative_value=1.0,
            low=T.DIRECTION_MIN_EFFECT,  # "raises": the post's direction, its effect fixed
            high=None,
            measured=gain,
            interval=interval,
        ),
        detail=f"{si(w.flops_per_s[0], 'FLOP/s')} at B={b0} → {si(w.flops_per_s[-1], 'FLOP/s')} "
        f"at B={b1}; rank correlation with B {number(trend, 2)}",
        gates=(
            (
                f"rank correlation of FLOP/s with B ≥ {number(T.MLP_MIN_TREND)} (here {number(trend, 2)})",
                trend >= T.MLP_MIN_TREND,
            ),
        ),
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
    """The batch where the layer turns compute-bound: measured knee against the predicted one.

    The post's model puts the knee at the B solving ``mlp_intensity(B) = ridge_point`` of the
    measured peaks (shown beside the test). The test's prediction is the knee of the layer's
    predicted roofs: the same construction as the measured knee, on the FLOP/s that the
    once-measured ceilings predict at each batch
    (:func:`~gpuconcepts.claims.predict.predicted_rate`: the GEMM sweep's product of each
    shape, a call's floor, the peaks). Measured: where the layer's own two roofs meet, read in
    each round of the sweep. Its plateau is its best FLOP/s over the sweep; its bandwidth is the
    minimal bytes per second at the smallest batch; their ratio is the layer's own ridge, and
    the knee is the B whose intensity equals it: no flat top of the curve can move it, where
    half of the peak could (the change log, ``docs/changes.toml``, 2026-12-01, MLP knee). Both
    ends come from the same round, so load slows them alike.
    """
    w = _MlpSweep.of(sweep, peaks)
    layer = {"d_in": w.d_in, "d_out": w.d_out, "s": w.s}
    ridge, peak = w.peaks.ridge_point, w.peaks.flops_per_s
    at_ridge = solve_for(formulas.mlp_intensity, "B", ridge, **layer)
    # the predicted roofs meet only where the layer's intensity can reach the ridge at all
    predicted = w.own_roofs(w.predicted)[2] if at_ridge is not None else None
    ceiling = limit_of(formulas.mlp_intensity, "B", **layer)
    reason = _unseen_crossover(w, predicted, ceiling)
    ratio, interval = with_interval(partial(_knee_ratio, w, predicted), w.ordered)
    plateau, bandwidth, measured_b = w.own_roofs([m.flops / m.seconds for m in w.ordered])
    return ClaimResult(
        key="mlp-crossover",
        architecture="MLP",
        claim="Batch size moves the MLP from memory-bound to compute-bound where its "
        "intensity crosses the ridge point.",
        prediction=f"ridge point {number(ridge)} FLOP/byte (measured peaks {si(peak, 'FLOP/s')} / "
        f"{si(w.peaks.bytes_per_s, 'B/s')}); mlp_intensity reaches it at {_at_batch(at_ridge)} "
        f"(its limit as B grows: {number(ceiling)} FLOP/byte). The layer's roofs as the "
        "measured ceilings predict them (the GEMM sweep's products of its shapes, a call's "
        f"floor) meet at {_at_batch(predicted)}",
        test=TwoSided(
            "measured crossover B ÷ predicted B",
            predicted=math.inf if reason else 1.0,
            alternative="compute-bound from the first batch of the sweep",
            alternative_value=w.batches[0] / predicted if predicted else math.inf,
            low=1 / PREDICTION_FACTOR,
            high=PREDICTION_FACTOR,
            measured=ratio,
            interval=interval,
        ),
        detail=_own_ridge(w, plateau, bandwidth, measured_b),
        device=device,
        visible=not reason,
        reason=reason,
        values={
            "ridge_point": ridge,
            "ridge_B": at_ridge,
            "predicted_B": predicted,
            "measured_B": measured_b,
            "ratio": ratio,
            "intensity_limit": ceiling,
            "peak_flops_per_s": peak,
        },
        plot=w.crossover_plot(plateau, (at_ridge, predicted, measured_b)),
    )


def _own_ridge(w: _MlpSweep, plateau: float, bandwidth: float, measured_b: float | None) -> str:
    """The layer's own roofs in words: its plateau over its bandwidth at the smallest batch is
    its own ridge, reached at the measured crossover."""
    return (
        f"the layer's plateau {si(plateau, 'FLOP/s')} ({percent(plateau / w.peaks.flops_per_s)} "
        f"of the peak) over its bandwidth at B={plain_number(w.batches[0])}, "
        f"{si(bandwidth, 'B/s')} ({percent(bandwidth / w.peaks.bytes_per_s)} of DRAM's), is its "
        f"own ridge, {number(plateau / bandwidth)} FLOP/byte, reached at {_at_batch(measured_b)}"
    )


def _at_batch(B: float | None) -> str:
    return f"B ≈ {number(B)}" if B is not None else "no batch size"


def _unseen_crossover(w: _MlpSweep, predicted: float | None, ceiling: float) -> str:
    """Why the crossover cannot be seen in this sweep ("" when it can): the layer never
    reaches the ridge, or the predicted crossover lies outside the sweep."""
    lo, hi = w.batches[0], w.batches[-1]
    if predicted is None:
        return (
            f"this layer's intensity never exceeds {number(ceiling)} FLOP/byte (its limit as B grows),"
            f" below this device's ridge point {number(w.peaks.ridge_point)}: it stays "
            "memory-bound at any batch"
        )
    if not lo <= predicted <= hi:
        return (
            f"the predicted crossover B ≈ {number(predicted)} lies outside the sweep "
            f"(B = {plain_number(lo)} … {plain_number(hi)})"
        )
    return ""


def _knee_ratio(w: _MlpSweep, predicted: float | None, seconds: Sequence[float]) -> float:
    """The B where the layer's own roofs meet, at ``seconds`` per batch, over the predicted B."""
    rates = [m.flops / t for m, t in zip(w.ordered, seconds, strict=True)]
    found = w.own_roofs(rates)[2]
    return math.inf if found is None or predicted is None else found / predicted


EXPERIMENT = Experiment(
    "MLP",
    comparisons,
    {
        judge_mlp_trend: _on_sweep,
        judge_mlp_crossover: _on_sweep,
        judge_roles: roles_reading(lambda m, z: (_sweep(m, z),)),
    },
    ROOF_FACTS,
)
"""What the MLP's claims need measured, and how each of its judges reads it (the roofline
claims' on its smallest and largest batch)."""
