"""Real runs moved into every state a busy or different machine can leave them in (issue 44).

Each state is a small function from a Run to a Run: a claim the machine could not show, one
noise left undecided, one with no measurement, an infinite or a zero ratio, one a recorded run
lacks; a distributed part skipped, crowded onto one core or empty; a whole model left out; the
optional ceilings a machine may not measure. They start from the runs committed in docs/runs/
and from a quick run saved on a 2-core CPU, so every page meets values it really meets.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from pathlib import Path

from gpuconcepts.claims.judge import judged_now
from gpuconcepts.results.claim import ClaimResult
from gpuconcepts.run import Run, load

ROOT = Path(__file__).resolve().parents[1]
RUN_FILES = (
    *sorted((ROOT / "docs" / "runs").glob("*.json")),
    ROOT / "tests" / "data" / "quick-run-amd-epyc.json",
)
"""The real runs every state starts from: the recorded ones, then a quick run of this suite's
kind of machine (2 cores, a busy neighbour), saved by ``gpuconcepts profile --quick``."""

ClaimState = Callable[[ClaimResult], ClaimResult]
RunState = Callable[[Run], Run]


def _test(result: ClaimResult, **changes: object) -> ClaimResult:
    return dataclasses.replace(result, test=dataclasses.replace(result.test, **changes))


def not_visible(result: ClaimResult) -> ClaimResult:
    """The machine could not show the effect: no measured value at all."""
    unmeasured = _test(result, measured=math.nan, interval=(math.nan, math.nan))
    return dataclasses.replace(
        unmeasured, visible=False, reason="2 processes shared 1 free core, so nothing was timed"
    )


def unmeasured(result: ClaimResult) -> ClaimResult:
    """Visible, yet nothing measured (a value that is not a number)."""
    return _test(result, measured=math.nan, interval=(math.nan, math.nan))


def undecided(result: ClaimResult) -> ClaimResult:
    """The interval straddles an edge of the pass region: noise could still decide it."""
    test = result.test
    edge = test.low if test.low is not None else test.high
    assert edge is not None
    spread = abs(edge) * 0.5 or 1.0
    return _test(result, measured=edge, interval=(edge - spread, edge + spread))


def infinite(result: ClaimResult) -> ClaimResult:
    """A measurement that never ended, or a ratio over nothing: infinite."""
    return _test(result, measured=math.inf, interval=(math.inf, math.inf))


def zero_prediction(result: ClaimResult) -> ClaimResult:
    """A prediction of zero: measured ÷ predicted is infinite."""
    return _test(result, predicted=0.0)


def zero(result: ClaimResult) -> ClaimResult:
    """A measured value of zero (a time too short for the clock, a rate of nothing)."""
    return _test(result, measured=0.0, interval=(0.0, 0.0))


MEASURED_NAMES = ("ratio", "per_s", "seconds", "measured", "knee", "share")
"""What names a measured number among a claim's values (sizes, counts and the model's
predictions are computed, so a busy machine never leaves them out)."""


def unmeasured_values(result: ClaimResult) -> ClaimResult:
    """Every measured number of the claim's values missing (None, as JSON stores what it
    cannot hold); sizes, counts, predictions and words stay."""
    values = {
        k: None
        if isinstance(v, float) and "predicted" not in k and any(n in k for n in MEASURED_NAMES)
        else v
        for k, v in result.values.items()
    }
    return dataclasses.replace(result, values=values)


CLAIM_STATES: dict[str, ClaimState] = {
    f.__name__: f
    for f in (
        not_visible,
        unmeasured,
        undecided,
        infinite,
        zero_prediction,
        zero,
        unmeasured_values,
    )
}


def each_claim(state: ClaimState, keys: Sequence[str] | None = None) -> RunState:
    """A run state: ``state`` applied to the claims named (every claim when None)."""

    def apply(run: Run) -> Run:
        claims = tuple(state(r) if keys is None or r.key in keys else r for r in run.claims)
        return dataclasses.replace(run, claims=claims)

    apply.__name__ = f"{state.__name__}({'every claim' if keys is None else ', '.join(keys)})"
    return apply


def without_claims(keys: Sequence[str]) -> RunState:
    """A run that lacks these claims (recorded before they existed)."""

    def apply(run: Run) -> Run:
        return dataclasses.replace(run, claims=tuple(r for r in run.claims if r.key not in keys))

    apply.__name__ = f"without({', '.join(keys)})"
    return apply


def distributed_skipped(run: Run) -> Run:
    """No distributed part: it could not start here."""
    reason = "torch.distributed could not start 2 processes here"
    return dataclasses.replace(
        run, distributed=None, skipped={**run.skipped, "distributed": reason}
    )


def distributed_crowded(run: Run) -> Run:
    """The distributed part's processes shared one core, and its sweep gave no fit (what a
    busy 2-core machine measured when the build failed, issue 44)."""
    report = run.distributed
    if report is None:
        return run
    crowded = dataclasses.replace(
        report, cores=1, fit=None, fit_problem="the sweep's times did not grow with size"
    )
    return dataclasses.replace(run, distributed=crowded)


def distributed_empty(run: Run) -> Run:
    """A distributed part that measured no collective at all."""
    report = run.distributed
    if report is None:
        return run
    empty = dataclasses.replace(
        report, collectives=(), fit=None, fit_problem="no collective was measured"
    )
    return dataclasses.replace(run, distributed=empty)


def wholemodel_skipped(run: Run) -> Run:
    """No whole-model part: left out of this run."""
    reason = "left out: the machine had too little free memory"
    return dataclasses.replace(run, wholemodel=None, skipped={**run.skipped, "wholemodel": reason})


def fewer_ceilings(run: Run) -> Run:
    """Only the ceilings every run has: no optional one (latency, physical limit, per-op
    floor, cold start, sweeps) was measured."""
    peaks = dataclasses.replace(
        run.peaks,
        latency_seconds=None,
        physical_flops_per_s=None,
        op_seconds=None,
        cold_latency_seconds=None,
        activation_per_s=None,
    )
    return dataclasses.replace(run, peaks=peaks)


PART_STATES: dict[str, RunState] = {
    f.__name__: f
    for f in (
        distributed_skipped,
        distributed_crowded,
        distributed_empty,
        wholemodel_skipped,
        fewer_ceilings,
    )
}
"""States of a run's measured parts: the run's claims are judged again after them."""


def real_runs() -> list[Run]:
    """The real runs, each judged by this version's judges (as the book reads them)."""
    return [judged_now(load(path)) for path in RUN_FILES]


def moved(run: Run, parts: Sequence[RunState], claims: Sequence[RunState]) -> Run:
    """``run`` with its parts in states ``parts`` (then judged again, as a build or ``verify``
    judges them), then its claims in states ``claims`` (left as they are: a page must show a
    stored claim in any state, whatever the judges would say now)."""
    for state in parts:
        run = state(run)
    if parts:
        run = judged_now(run)
    for state in claims:
        run = state(run)
    return run
