"""Every claim can fail: for each one, a run that violates it, judged by the real judges.

The runs are synthetic (tests/synthetic.py): every kernel's FLOPs and bytes are the real
counts at the full CPU sizes, and its time is that of an ideal roofline machine, except for the
one violation each case introduces. A claim with no case here is a defect.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping

import pytest
from synthetic import Timing, synthetic_lab

from gpuconcepts import formulas
from gpuconcepts.claims.experiments import judge_claims
from gpuconcepts.claims.result import ClaimResult
from gpuconcepts.claims.sizes import claim_sizes
from gpuconcepts.measure import transfer_unit_bytes
from gpuconcepts.roofline import Peaks

LATENCY = 2e-4
PEAKS = Peaks("cpu", 1e11, 1e10, "float32", latency_seconds=LATENCY)
"""An ideal machine: ridge point 10 FLOP/byte, and a latency floor long enough that a loop of
small steps is slower than one GEMM."""


LINE = transfer_unit_bytes("cpu")
"""The ideal machine moves memory in this machine's cache lines (the judge reads the same)."""
EFFICIENCY = 0.8
"""...and reaches 80% of each roof."""


def ideal(name: str, params: Mapping[str, object], flops: float, nbytes: float) -> float:
    """The roofline time at 80% of the roofs, never below the latency floor; a random row
    costs whole lines; a recurrence pays the latency floor at every step."""
    if name == "dlrm-random":
        nbytes *= float(formulas.lookup_order_ratio(d=params["d"], s=params["s"], c=LINE))
    roof = max(flops / PEAKS.flops_per_s, nbytes / PEAKS.bytes_per_s) / EFFICIENCY
    if name in ("rnn-module", "rnn-loop"):
        steps = int(params["S"])  # type: ignore[call-overload]
        return steps * max(roof / steps, LATENCY)
    return max(roof, LATENCY)


def but(names: tuple[str, ...], seconds: Timing) -> Timing:
    """The ideal times, except for the kernels in ``names``."""

    def timing(name: str, params: Mapping[str, object], flops: float, nbytes: float) -> float:
        chosen = seconds if name in names else ideal
        return chosen(name, params, flops, nbytes)

    return timing


def at_rate(share: float) -> Timing:
    """FLOPs at ``share`` of the peak, whatever the bytes."""
    return lambda _n, _p, flops, _q: flops / (share * PEAKS.flops_per_s)


def at_bandwidth(share: float) -> Timing:
    """Bytes at ``share`` of the DRAM bandwidth, whatever the FLOPs."""
    return lambda _n, _p, _f, nbytes: nbytes / (share * PEAKS.bytes_per_s)


def sizes_power(size: str, power: float, scale: float = 1e-7) -> Timing:
    """Time ∝ size**power (of the kernel's parameter ``size``)."""
    return lambda _n, params, _f, _q: scale * float(params[size]) ** power  # type: ignore[arg-type]


def per_step_shrinking(_n: str, params: Mapping[str, object], _f: float, _q: float) -> float:
    """Time per step ∝ 1/B: batch would shorten the critical path."""
    return 1e-2 * float(params["S"]) / float(params["B"])  # type: ignore[arg-type]


Tweak = Callable[[object], None]


def no_sharing(lab: object) -> None:
    """The counted filter has a weight per position: nothing shared."""
    from gpuconcepts.claims.cnn import count_weights

    counts = dataclasses.asdict(count_weights())
    counts["conv_weights"] *= counts["positions"]
    lab._facts["cnn-weights"] = counts  # type: ignore[attr-defined]


def half_cache(lab: object) -> None:
    """The decode run's allocator saw half the cache: the keys only."""
    measure = lab.measure  # type: ignore[attr-defined]

    def halved(name: str, **sizes: object) -> object:
        m = measure(name, **sizes)
        if name != "transformer-decode":
            return m
        series = {**m.series, "cache_bytes": tuple(b / 2 for b in m.series["cache_bytes"])}
        return dataclasses.replace(m, series=series)

    lab.measure = halved  # type: ignore[attr-defined]


MEMORY_STARVED = at_bandwidth(0.02)  # a fiftieth of DRAM: something else sets the time
COMPUTE_STARVED = at_rate(0.05)  # a twentieth of the peak

VIOLATIONS: dict[str, tuple[Timing, Tweak | None]] = {
    # random rows as fast as consecutive ones, at every row width
    "dlrm-random-vs-sequential": (but(("dlrm-random",), at_bandwidth(EFFICIENCY)), None),
    "mlp-batch-trend": (but(("mlp",), at_rate(0.2)), None),  # FLOP/s flat in B
    "mlp-crossover": (but(("mlp",), at_rate(0.3)), None),  # flat FLOP/s: a knee at B=1
    "cnn-weight-sharing": (ideal, no_sharing),
    "cnn-dense-vs-depthwise": (but(("cnn-conv", "cnn-depthwise"), at_rate(0.1)), None),
    "rnn-linear-in-S": (but(("rnn-module",), sizes_power("S", 2.0)), None),
    "rnn-loop-vs-gemm": (but(("rnn-loop",), at_rate(EFFICIENCY)), None),  # as fast as a GEMM
    "rnn-batch-vs-critical-path": (but(("rnn-module",), per_step_shrinking), None),
    "attention-quadratic": (but(("transformer-prefill",), sizes_power("S", 1.0)), None),
    "attention-doubling": (but(("transformer-prefill",), sizes_power("S", 1.0)), None),
    "prefill-vs-decode": (
        but(("transformer-prefill-causal", "transformer-decode"), at_rate(0.05)),
        None,
    ),
    "kv-cache-exact": (ideal, half_cache),
    "roofline-dlrm-random": (but(("dlrm-random",), MEMORY_STARVED), None),
    "roofline-mlp-small-batch": (but(("mlp",), MEMORY_STARVED), None),
    "roofline-mlp-large-batch": (but(("mlp",), COMPUTE_STARVED), None),
    "roofline-cnn-conv": (but(("cnn-conv",), COMPUTE_STARVED), None),
    "roofline-cnn-depthwise": (but(("cnn-depthwise",), MEMORY_STARVED), None),
    "roofline-transformer-prefill": (but(("transformer-prefill",), COMPUTE_STARVED), None),
    "roofline-transformer-decode": (but(("transformer-decode",), MEMORY_STARVED), None),
}


def judged(seconds: Timing, tweak: Tweak | None) -> dict[str, ClaimResult]:
    lab = synthetic_lab(PEAKS, "cpu (violating run)", seconds, spread=0.02)
    if tweak is not None:
        tweak(lab)
    return {r.key: r for r in judge_claims(lab, claim_sizes("cpu", quick=False))}


def test_every_claim_has_a_violating_run_and_holds_on_the_ideal_machine() -> None:
    results = judged(ideal, None)
    assert set(results) == set(VIOLATIONS)
    assert {k: r.why for k, r in results.items() if r.verdict != "holds"} == {}


@pytest.mark.parametrize("key", sorted(VIOLATIONS))
def test_a_violating_run_fails_the_claim(key: str) -> None:
    seconds, tweak = VIOLATIONS[key]
    result = judged(seconds, tweak)[key]
    assert result.verdict == "fails", result.why
    assert result.why  # and says why, from the data
