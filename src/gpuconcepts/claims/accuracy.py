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
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from gpuconcepts.claims.result import Verdict
from gpuconcepts.claims.roofline import ROOF_REFERENCES
from gpuconcepts.claims.thresholds import PREDICTION_FACTOR
from gpuconcepts.roofline.roofs import RoofKind, verdict
from gpuconcepts.roofline.version import model_version
from gpuconcepts.units import sizes as sizes_text

if TYPE_CHECKING:
    from gpuconcepts.run import Run

Sample = Literal["in", "out"]
"""``"out"``: the run was recorded with this model version; ``"in"``: before it."""


@dataclass(frozen=True)
class AccuracyRow:
    """One kernel of a run against the post's model: the predicted and measured seconds,
    measured ÷ predicted with its interval (the time's quartiles over the prediction), the
    bound's kind, the model version that scores it, and whether the run is in or out of
    sample for that version."""

    kernel: str
    predicted_seconds: float
    measured_seconds: float
    ratio: float
    interval: tuple[float, float]
    bound: RoofKind
    model: str
    sample: Sample

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: a number JSON cannot hold (an infinity, nan) is null."""
        return {
            "kernel": self.kernel,
            "predicted_seconds": _finite(self.predicted_seconds),
            "measured_seconds": _finite(self.measured_seconds),
            "ratio": _finite(self.ratio),
            "interval": [_finite(x) for x in self.interval],
            "bound": self.bound,
            "model": self.model,
            "sample": self.sample,
        }


def sample_of(run: Run) -> Sample:
    """``"out"`` when ``run`` was recorded with this model version, else ``"in"``."""
    return "out" if run.provenance.model_version == model_version() else "in"


def accuracy(run: Run) -> tuple[AccuracyRow, ...]:
    """Every kernel of ``run`` against the post's model under the run's peaks, in run order;
    the roofs' own reference kernels (a square GEMM, the STREAM triad) are left out: they
    measure the ceilings, not a kernel the model predicts."""
    version, sample = model_version(), sample_of(run)
    references = set(ROOF_REFERENCES.values())
    rows = []
    for m in run.measurements:
        if m.workload in references:
            continue
        found = verdict(m, run.peaks)
        predicted = found.roof_seconds
        fast, slow = m.interval_seconds
        rows.append(
            AccuracyRow(
                kernel=f"{m.workload} at {sizes_text(m.params)}",
                predicted_seconds=predicted,
                measured_seconds=m.seconds,
                ratio=_over(m.seconds, predicted),
                interval=(_over(fast, predicted), _over(slow, predicted)),
                bound=found.kind,
                model=version,
                sample=sample,
            )
        )
    return tuple(rows)


def within(row: AccuracyRow, factor: float = PREDICTION_FACTOR) -> bool:
    """Whether the kernel measured within ``factor`` of its prediction either way."""
    return 1 / factor <= row.ratio <= factor


@dataclass(frozen=True)
class AccuracySummary:
    """Ledger 2 of a run in three numbers: the share of kernels within 2x of their prediction,
    the median |log2 measured ÷ predicted|, and the worst kernel with its ratio."""

    kernels: int
    share_within: float
    median_abs_log2: float
    worst: str
    worst_ratio: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: a number JSON cannot hold is null."""
        return {
            "kernels": self.kernels,
            "share_within_2x": _finite(self.share_within),
            "median_abs_log2": _finite(self.median_abs_log2),
            "worst": self.worst,
            "worst_ratio": _finite(self.worst_ratio),
        }


def summary(rows: Sequence[AccuracyRow]) -> AccuracySummary:
    """The share within :data:`PREDICTION_FACTOR`, the median |log2 ratio| and the worst row
    (nan and "" for no row)."""
    scored = [r for r in rows if r.ratio > 0 and math.isfinite(r.ratio)]
    if not scored:
        return AccuracySummary(len(rows), math.nan, math.nan, "", math.nan)
    misses = [abs(math.log2(r.ratio)) for r in scored]
    worst = max(scored, key=lambda r: abs(math.log2(r.ratio)))
    return AccuracySummary(
        kernels=len(rows),
        share_within=sum(within(r) for r in scored) / len(rows),
        median_abs_log2=statistics.median(misses),
        worst=worst.kernel,
        worst_ratio=worst.ratio,
    )


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


def _over(seconds: float, predicted: float) -> float:
    return seconds / predicted if predicted > 0 else math.inf


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None
