"""Ledger 2, the model scored, and the flips of ledger 1 (issue 45).

Every kernel of a run beside the time the post's model predicts for it: max(F/P, Q/β of the
level its working set fits in) with the overhead floor, from the run's own ceilings (the one
placement, :func:`~gpuconcepts.roofline.roofs.verdict`). A miss is a finding: the diagnosis
of a gap (:mod:`~gpuconcepts.roofline.diagnosis`) is shown beside it and never changes a
prediction or a verdict. A row is "out" of sample when the run was recorded with this model
version (:func:`~gpuconcepts.roofline.version.model_version`) and "in" sample when it was
recorded before: a model changed after a run was seen was fitted, in part, to it.

A recorded run judged by today's judges keeps the verdicts it was saved with
(:attr:`Run.saved_claims <gpuconcepts.run.Run.saved_claims>`); :func:`flips` lists every
claim whose verdict changed.

>>> from gpuconcepts.measure import Measurement
>>> from gpuconcepts.roofline import Peaks
>>> from gpuconcepts.run import Provenance, Run
>>> m = Measurement("mlp", "cpu", {"B": 4, "d_in": 8, "d_out": 16, "s": 4, "dtype": "float32"},
...                 (1.2e-7, 1.2e-7, 1.2e-7), 1024, 896)
>>> run = Run(Provenance.example(), Peaks("cpu", 1e11, 1e10, "float32"), (m,), {}, ())
>>> row, = accuracy(run)
>>> row.kernel, row.bound, row.sample, round(row.ratio, 2), within(row)
('mlp at B=4, d_in=8, d_out=16, float32', 'memory', 'out', 1.34, True)
>>> summary(accuracy(run)).share_within
1.0
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from gpuconcepts.claims.roofline import ROOF_REFERENCES
from gpuconcepts.claims.scored_interval import over as _over
from gpuconcepts.claims.scored_interval import predicted_interval, ratio_interval
from gpuconcepts.claims.thresholds import PREDICTION_FACTOR
from gpuconcepts.hardware import dtype_name
from gpuconcepts.results.claim import ClaimResult, Verdict
from gpuconcepts.results.measured import is_second_look
from gpuconcepts.roofline import diagnosis, gemm_products
from gpuconcepts.roofline.roofs import RoofKind, verdict
from gpuconcepts.roofline.version import model_version
from gpuconcepts.units import plain_number, plural
from gpuconcepts.units import sizes as sizes_text

if TYPE_CHECKING:
    from gpuconcepts.measure import Measurement
    from gpuconcepts.roofline import Peaks
    from gpuconcepts.run import Run

Sample = Literal["in", "out"]
"""``"out"``: the run was recorded with this model version; ``"in"``: before it."""


READS_GEMM_SWEEP: Mapping[str, frozenset[str]] = {"mlp-crossover": frozenset({"mlp"})}
"""Each claim whose verdict reads the GEMM sweep (by its registry key), with the workloads
whose products the sweep stands for there. It holds the MLP's crossover claim, with the
MLP's products: the predicted knee is where the layer's roofs as the ceilings predict them
meet, each batch's product at the sweep's rate
(:func:`~gpuconcepts.claims.predict.predicted_rate`). Ledger 2's rows read none: the post's
model is max(F/P, Q/β, overhead), and the sweep is a diagnosis beside it. :func:`unjudged`
hides a claim listed here when the sweep ran in another precision than those workloads'
kernels.

:meta hide-value:
"""


def gemm_sweep_dtype(run: Run) -> str | None:
    """The precision the GEMM sweep of ``run`` ran in: as the run recorded it
    (``sizes["gemm_sweep_dtype"]``; a run recorded before it was kept has it from its
    migration, ``PRECISION_SINCE`` of ``run/_migrations.py``), else the peaks' dtype (a run
    made in memory). None for a run without a sweep."""
    if not run.peaks.gemm_sweep:
        return None
    recorded = run.provenance.sizes.get("gemm_sweep_dtype")
    return dtype_name(recorded if isinstance(recorded, str) else run.peaks.dtype)


def sweep_mismatch(sweep_dtype: str | None, measurements: Sequence[Measurement]) -> str:
    """Why a prediction that reads the GEMM sweep is not judged on these measurements: the
    sweep ran in another precision than the kernels whose products it stands for (every
    measurement with a matrix product); "" when it ran in theirs, or there is no sweep.

    >>> from gpuconcepts.measure import Measurement
    >>> tf32 = Measurement("mlp", "cuda", {"B": 4, "d_in": 8, "d_out": 8, "s": 4,
    ...                    "dtype": "tf32"}, (1e-6,), 512, 256)
    >>> sweep_mismatch("float32", [tf32])
    'not judged: its GEMM sweep ran in float32 while its kernels ran in tf32 (record the run again)'
    >>> sweep_mismatch("tf32", [tf32]), sweep_mismatch(None, [tf32])
    ('', '')
    """
    if sweep_dtype is None:
        return ""
    ran = sorted(
        {
            dtype_name(str(m.params["dtype"]))
            for m in measurements
            if "dtype" in m.params and gemm_products(m)
        }
        - {sweep_dtype}
    )
    if not ran:
        return ""
    return (
        f"not judged: its GEMM sweep ran in {sweep_dtype} while its kernels ran in "
        f"{' and '.join(ran)} (record the run again)"
    )


PREDICTION_READS_GEMM_SWEEP: Mapping[str, frozenset[str]] = {
    "mlp-batch-trend": frozenset({"mlp"}),
    "rnn-loop-vs-gemm": frozenset({"rnn-loop", "rnn-gemm"}),
    "prefill-vs-decode": frozenset({"transformer-prefill-causal", "transformer-decode"}),
}
"""Each claim whose prediction alone reads the GEMM sweep, and the workloads it reads there.

:meta hide-value:"""


def unjudged(
    results: Sequence[ClaimResult], sweep_dtype: str | None, measurements: Sequence[Measurement]
) -> tuple[ClaimResult, ...]:
    """``results`` when the GEMM sweep ran in another precision than its kernels (the reason:
    :func:`sweep_mismatch`): a claim whose verdict reads it (:data:`READS_GEMM_SWEEP`) not
    visible, a prediction alone (:data:`PREDICTION_READS_GEMM_SWEEP`) unknown, said why."""
    return tuple(_unjudged(r, sweep_dtype, measurements) for r in results)


def _unjudged(r: ClaimResult, sweep: str | None, ms: Sequence[Measurement]) -> ClaimResult:
    workloads = READS_GEMM_SWEEP.get(r.key) or PREDICTION_READS_GEMM_SWEEP.get(r.key, frozenset())
    reason = sweep_mismatch(sweep, [m for m in ms if m.workload in workloads])
    if not reason or r.key in READS_GEMM_SWEEP:
        return replace(r, visible=False, reason=reason) if reason else r
    shown = f"{r.prediction} (the measured ceilings' numbers here are {reason})"
    values = {**r.values, "prediction_not_judged": reason}
    return replace(r, prediction=shown, test=replace(r.test, predicted=math.nan), values=values)


def fewer_threads(m: Measurement, peaks: Peaks) -> str:
    """Why ``m`` is not scored against ``peaks``: it was timed on fewer CPU threads than its
    ceilings were measured on (``free_cores`` narrows torch's threads mid-run when another
    program takes a core,
    :func:`~gpuconcepts.measure.devices.free_cores`), so the ceilings are another
    machine's; "" when it ran on as many, or either count is unknown (a GPU, an older run).

    >>> from gpuconcepts.measure import Measurement
    >>> from gpuconcepts.roofline import Peaks
    >>> m = Measurement("mlp", "cpu", {"B": 4}, (1e-6,), 512, 256, threads=1)
    >>> fewer_threads(m, Peaks("cpu", 1e11, 1e10, "float32", threads=2))
    'not judged: it ran on 1 thread while its ceilings were measured on 2'
    >>> fewer_threads(m, Peaks("cpu", 1e11, 1e10, "float32", threads=1))
    ''
    """
    if not (m.threads and peaks.threads and m.threads < peaks.threads):
        return ""
    return (
        f"not judged: it ran on {plural(m.threads, 'thread')} while its ceilings were "
        f"measured on {plain_number(peaks.threads)}"
    )


@dataclass(frozen=True)
class AccuracyRow:
    """One kernel of a run against the post's model: the predicted and measured seconds,
    measured ÷ predicted with its interval (the median time's over the prediction's, each by
    the same bootstrap rule, at their conservative ends:
    :func:`~gpuconcepts.claims.scored_interval.ratio_interval`) and ``ceiling_interval``, the
    prediction's least and greatest seconds over its ceilings' intervals (None where the run
    did not record the repetitions of the ceiling that binds it, the interval then the
    measured time's alone: :func:`~gpuconcepts.claims.scored_interval.predicted_interval`),
    the bound's kind, the model version that scores it, and whether the run is in or out of
    sample for that version. ``not_judged``: why the row is left out of the score (a bound
    read from a ceiling measured in another precision than the kernel ran in, or ceilings
    measured on more CPU threads than the kernel ran on, :func:`fewer_threads`), "" when it
    is scored. ``diagnosis`` names the mechanism measured apart that accounts for most of the
    time beyond the prediction (:func:`~gpuconcepts.roofline.diagnosis`) and
    ``diagnosis_seconds`` the least time it allows; "" and nan when none does. A diagnosis
    sits beside a miss and never changes the prediction, the ratio or the bound.
    ``stored_predicted_seconds``: the prediction the run registered when it was measured
    (:attr:`Run.registered_seconds <gpuconcepts.run.Run.registered_seconds>`), None where it
    stored none; beside today's, it shows what a model refitted on the run gained in sample."""

    kernel: str
    predicted_seconds: float
    measured_seconds: float
    ratio: float
    interval: tuple[float, float]
    bound: RoofKind
    model: str
    sample: Sample
    not_judged: str = ""
    diagnosis: str = ""
    diagnosis_seconds: float = math.nan
    stored_predicted_seconds: float | None = None
    ceiling_interval: tuple[float, float] | None = None

    @property
    def stored_ratio(self) -> float | None:
        """Measured ÷ the stored prediction, None where the run stored none."""
        stored = self.stored_predicted_seconds
        return None if stored is None else _over(self.measured_seconds, stored)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: a number JSON cannot hold (an infinity, nan) is null, and so is a
        diagnosis that no mechanism gives."""
        return {
            "kernel": self.kernel,
            "predicted_seconds": _finite(self.predicted_seconds),
            "measured_seconds": _finite(self.measured_seconds),
            "ratio": _finite(self.ratio),
            "interval": [_finite(x) for x in self.interval],
            "ceiling_interval": _pair(self.ceiling_interval),
            "bound": self.bound,
            "model": self.model,
            "sample": self.sample,
            "judged": not self.not_judged,
            "not_judged": self.not_judged,
            "diagnosis": self.diagnosis or None,
            "diagnosis_seconds": _finite(self.diagnosis_seconds),
            "stored_predicted_seconds": _stored(self.stored_predicted_seconds),
            "stored_ratio": _stored(self.stored_ratio),
        }


def sample_of(run: Run) -> Sample:
    """``"out"`` when ``run`` was recorded with this model version, else ``"in"``."""
    return "out" if run.provenance.model_version == model_version() else "in"


def accuracy(run: Run) -> tuple[AccuracyRow, ...]:
    """Every kernel of ``run`` against the post's model under the run's peaks, in run order;
    the roofs' own reference kernels (a square GEMM, the STREAM triad) are left out: they
    measure the ceilings, not a kernel the model predicts; so are the second looks at an
    anomaly (:func:`~gpuconcepts.results.measured.is_second_look`)."""
    version, sample = model_version(), sample_of(run)
    references = set(ROOF_REFERENCES.values())
    peak = dtype_name(run.peaks.dtype)
    rows = []
    for m, stored in zip(run.measurements, run.registered_seconds, strict=True):
        # a second look at an anomaly is shown beside its claim, never scored: only anomalies
        # were timed twice, so scoring them would weigh the misses twice
        if m.workload in references or is_second_look(m):
            continue
        found = verdict(m, run.peaks)
        predicted = found.roof_seconds
        ceiling = predicted_interval(m, run.peaks)  # None: its ceiling's was not recorded
        ran = dtype_name(str(m.params.get("dtype", run.peaks.dtype)))
        # a compute bound read from a peak of another precision predicts another machine
        other = found.kind == "compute" and ran != peak
        why = diagnosis(m, run.peaks)  # beside the miss, never in the prediction
        precision = (
            f"not judged: its compute peak ran in {peak} while the kernel ran in {ran}"
            if other
            else ""
        )
        rows.append(
            AccuracyRow(
                kernel=f"{m.workload} at {sizes_text(m.params)}",
                predicted_seconds=predicted,
                measured_seconds=m.seconds,
                ratio=_over(m.seconds, predicted),
                interval=ratio_interval(m, predicted, ceiling),
                bound=found.kind,
                model=version,
                sample=sample,
                not_judged=precision or fewer_threads(m, run.peaks),
                diagnosis=why.mechanism if why else "",
                diagnosis_seconds=why.seconds if why else math.nan,
                stored_predicted_seconds=stored,
                ceiling_interval=ceiling,
            )
        )
    return tuple(rows)


def within(row: AccuracyRow, factor: float = PREDICTION_FACTOR) -> bool:
    """Whether the kernel measured within ``factor`` of its prediction either way."""
    return 1 / factor <= row.ratio <= factor


@dataclass(frozen=True)
class AccuracySummary:
    """Ledger 2 of a run in three numbers: the share of kernels within 2x of their prediction,
    the median ``|log2 measured ÷ predicted|``, and the worst kernel with its ratio; beside the
    first two, the same over the predictions the run stored when it was measured
    (``stored_kernels`` the judged kernels that stored one; nan when none did), so that the
    gain of a model refitted on old runs shows in sample."""

    kernels: int
    share_within: float
    median_abs_log2: float
    worst: str
    worst_ratio: float
    stored_kernels: int = 0
    stored_share_within: float = math.nan
    stored_median_abs_log2: float = math.nan

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: a number JSON cannot hold is null."""
        return {
            "kernels": self.kernels,
            "share_within_2x": _finite(self.share_within),
            "median_abs_log2": _finite(self.median_abs_log2),
            "worst": self.worst,
            "worst_ratio": _finite(self.worst_ratio),
            "stored_kernels": self.stored_kernels,
            "stored_share_within_2x": _finite(self.stored_share_within),
            "stored_median_abs_log2": _finite(self.stored_median_abs_log2),
        }


def summary(rows: Sequence[AccuracyRow]) -> AccuracySummary:
    """The share within :data:`PREDICTION_FACTOR`, the median ``|log2 ratio|`` and the worst row
    (nan and "" for no row), over the rows that are judged (a row ``not_judged`` is left out
    of every number); and the share and median over the stored predictions of those rows
    that stored one."""
    judged = [r for r in rows if not r.not_judged]
    stored = [r.stored_ratio for r in judged if r.stored_ratio is not None]
    share_stored, median_stored = _share_and_median(stored)
    scored = [r for r in judged if _scored(r.ratio)]
    if not scored:
        return AccuracySummary(
            len(judged), math.nan, math.nan, "", math.nan, len(stored), share_stored,
            median_stored,
        )  # fmt: skip
    share, median = _share_and_median([r.ratio for r in judged])
    worst = max(scored, key=lambda r: abs(math.log2(r.ratio)))
    return AccuracySummary(
        kernels=len(judged),
        share_within=share,
        median_abs_log2=median,
        worst=worst.kernel,
        worst_ratio=worst.ratio,
        stored_kernels=len(stored),
        stored_share_within=share_stored,
        stored_median_abs_log2=median_stored,
    )


def _scored(ratio: float) -> bool:
    """Whether a ratio is scored: positive and finite (an unbounded prediction is not)."""
    return ratio > 0 and math.isfinite(ratio)


def _share_and_median(ratios: Sequence[float]) -> tuple[float, float]:
    """The share of ``ratios`` within :data:`PREDICTION_FACTOR` either way (of them all, an
    unscored one counting as a miss) and the median ``|log2|`` of the scored ones; nan for
    both when none is scored."""
    misses = [abs(math.log2(r)) for r in ratios if _scored(r)]
    if not misses:
        return math.nan, math.nan
    inside = sum(1 / PREDICTION_FACTOR <= r <= PREDICTION_FACTOR for r in ratios)
    return inside / len(ratios), statistics.median(misses)


@dataclass(frozen=True)
class Flip:
    """A claim whose verdict in a recorded run (``stored``) differs from today's judges'
    (``now``)."""

    key: str
    run: str
    stored: Verdict
    now: Verdict

    def to_dict(self) -> dict[str, str]:
        """JSON-ready."""
        return {"key": self.key, "run": self.run, "stored": self.stored, "now": self.now}


def flips(run: Run) -> tuple[Flip, ...]:
    """Every claim of ``run`` whose saved verdict differs from the one it has now (a run not
    judged again has none); a claim only one side has is listed with "not visible" on the
    other."""
    saved = {r.key: r.verdict for r in run.saved_claims}
    now = {r.key: r.verdict for r in run.claims}
    keys = [*now, *(key for key in saved if key not in now)]
    missing: Verdict = "not visible"
    return tuple(
        Flip(key, run.label, saved.get(key, missing), now.get(key, missing))
        for key in keys
        if saved.get(key, missing) != now.get(key, missing)
    )


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _stored(x: float | None) -> float | None:
    return None if x is None else _finite(x)


def _pair(pair: tuple[float, float] | None) -> list[float | None] | None:
    return None if pair is None else [_finite(x) for x in pair]
