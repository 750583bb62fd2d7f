"""Every claim can fail: for each one, a run that violates it, judged by the real judges.

The runs are synthetic (tests/synthetic.py): every kernel's FLOPs and bytes are the real
counts at the full CPU sizes, and its time is that of an ideal roofline machine, except for the
one violation each case introduces. A claim with no case here is a defect.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping

import pytest
import test_distributed as td
import test_wholemodel as wm
from synthetic import Timing, synthetic_lab, synthetic_run

from gpuconcepts import formulas
from gpuconcepts.claims import collectives as dclaims
from gpuconcepts.claims import wholemodel as W
from gpuconcepts.claims.distributed import bubble_claim, bubble_sweep_claim
from gpuconcepts.claims.experiments import judge_claims, measure_claims
from gpuconcepts.measure import transfer_unit_bytes
from gpuconcepts.results import registry
from gpuconcepts.results.claim import ClaimResult
from gpuconcepts.results.distributed import AlphaBeta
from gpuconcepts.results.wholemodel import TrainingPeak
from gpuconcepts.roofline import Peaks
from gpuconcepts.sizing import RunSizes

LATENCY = 2e-4
PEAKS = Peaks("cpu", 1e11, 1e10, "float32", latency_seconds=LATENCY, op_seconds=LATENCY)
"""An ideal machine: ridge point 10 FLOP/byte, and a latency floor, of a call and of one
operation in a chain, long enough that a loop of small steps is slower than one GEMM."""


LINE = transfer_unit_bytes("cpu")
"""The ideal machine moves memory in this machine's cache lines (the judge reads the same)."""
EFFICIENCY = 0.8
"""...and reaches 80% of each roof."""
RANDOM_ROWS = 2.5
"""...and streams random rows this many times slower than their whole lines allow, the post's
"much lower bandwidth" at any row width: a random row misses the prefetcher and opens a DRAM
page of its own, which the line model leaves out (the DLRM claim is judged at the post's
512-byte rows, whole lines, since 2026-12-07)."""


def ideal(name: str, params: Mapping[str, object], flops: float, nbytes: float) -> float:
    """The roofline time at 80% of the roofs, never below the latency floor; a random row
    costs whole lines, streamed :data:`RANDOM_ROWS` times slower; a recurrence pays the
    latency floor at every step."""
    if name == "dlrm-random":
        lines = float(formulas.lookup_order_ratio(d=params["d"], s=params["s"], c=LINE))
        nbytes *= lines * RANDOM_ROWS
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
    """The decode run's allocator saw half the cache: the keys only (as the run records it,
    since the judges read the run's measurements)."""
    measure = lab.measure  # type: ignore[attr-defined]
    done: list[object] = []

    def halved(name: str, **sizes: object) -> object:
        m = measure(name, **sizes)
        if name != "transformer-decode" or any(m is seen for seen in done):
            return m
        series = {**m.series, "cache_bytes": tuple(b / 2 for b in m.series["cache_bytes"])}
        done.append(dataclasses.replace(m, series=series))
        lab._measured[(name, tuple(sorted(sizes.items())))] = done[-1]  # type: ignore[attr-defined]
        return done[-1]

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
    sizes = RunSizes.resolve("cpu", False, free_bytes=2**36).claims
    return {r.key: r for r in judge_claims(measure_claims(lab, sizes), sizes)}


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


# -- the whole-model and distributed claims: each fed one violating result ----------------------
def _traffic(key: str) -> ClaimResult:
    """The synthetic run's collective judged as ``key``, with twice the formula's bytes."""
    found = synthetic_run().distributed
    assert found is not None
    doubled = [
        dataclasses.replace(c, loopback_bytes=(2 * c.formula_bytes,) * 2)
        for c in found.collectives
        if c.loopback_bytes is not None
    ]
    judged = [dclaims.traffic_claim(c, "cpu (violating run)") for c in doubled]
    return next(r for r in judged if r.key == key)


def _decode_floor() -> ClaimResult:
    floor = formulas.decode_seconds_lower_bound(M_w=10**8, M_kv=10**4, beta=1e10)
    slow = wm.sweep([10 * floor] * 5)
    return W.judge_decode_floor(slow, wm.PEAKS, cache_bytes=10**6, device="t")


def _training_memory() -> ClaimResult:
    tokens = 2 * wm.TOY.seq
    activations = tokens * wm.TOY.layers * formulas.layer_activation_memory(d=32, d_ff=64, s=4)
    n = wm.params(wm.TOY)
    no_moments = TrainingPeak(
        n_params=n, tokens=tokens, peak_bytes=8 * n + activations, state_bytes=16 * n
    )
    return W.judge_training_memory(no_moments, wm.TOY, device="t")


def _alpha_beta() -> ClaimResult:
    fit = AlphaBeta(alpha_s=1e-4, bytes_per_s=1e9, points=5)
    inputs = {"B": 2048, "n_tables": 4, "d": 64, "s": 4, "W": 2}
    seconds = 10 * fit.seconds(formulas.rowwise_alltoall_bytes(**inputs))
    slow = td._collective("sharded embedding", "rowwise_alltoall_bytes", inputs, seconds=seconds)
    return dclaims.alpha_beta_claim([slow], fit, "demo")


PART_VIOLATIONS: dict[str, Callable[[], ClaimResult]] = {
    "backward-pass": lambda: W.judge_backward(wm.backward(1.0, 2.0), device="t"),  # 1x
    "decode-knee": lambda: W.judge_decode_knee(wm.sweep([1e-2] * 5), wm.PEAKS, device="t"),
    "decode-long-context": lambda: W.judge_decode_long_context(
        wm.long_sweep([1e-2] * 4), wm.SHORT, wm.PEAKS, cache_bytes=wm.LLC, device="t"
    ),
    "decode-floor": _decode_floor,
    "training-memory": _training_memory,
    **{
        f"traffic-{slug}": (lambda key=f"traffic-{slug}": _traffic(key))  # type: ignore[misc]
        for slug in (
            "all-reduce",
            "table-wise-lookup",
            "row-wise-lookup",
            "column-wise-lookup",
            "two-way-tensor-parallel-mlp",
            "pipeline",
        )
    },
    "allreduce-grows-with-w": lambda: dclaims.allreduce_growth_claim(
        [
            td._collective(inputs={"n_params": 1000, "s": 4, "W": w}, measured=4000.0 * 1.001)
            for w in (2, 3, 4)
        ],
        "demo",
    ),
    "rowwise-more-than-tablewise": lambda: dclaims.rowwise_claim(td._lookups(1.0), "demo"),
    "tablewise-columnwise-same-exchange": lambda: dclaims.same_exchange_claim(
        td._paired(td._ROUNDS, [4 * t for t in td._ROUNDS]), "demo"
    ),
    "alpha-beta-predicts": _alpha_beta,
    "pipeline-bubble": lambda: bubble_claim(td._pipeline(0.5), td.FREE, 2, "demo"),
    "pipeline-bubble-shrinks": lambda: bubble_sweep_claim(
        td._swept({1: 0.3, 2: 0.3, 4: 0.3, 8: 0.3}), td.FREE, 2, "demo"
    ),
}
"""One violating result for each whole-model and distributed claim (the builders are those of
tests/test_wholemodel.py and tests/test_distributed.py)."""


@pytest.mark.parametrize("key", sorted(PART_VIOLATIONS))
def test_a_violating_result_fails_the_part_claim(key: str) -> None:
    result = PART_VIOLATIONS[key]()
    assert result.verdict == "fails", result.why
    assert result.why


def test_every_registered_claim_has_a_violating_run() -> None:
    """A claim registered in results/registry.py without a case here fails this test."""
    missing = set(registry.CLAIMS) - set(VIOLATIONS) - set(PART_VIOLATIONS)
    assert missing == set(), f"claims with no violating run: {sorted(missing)}"
    assert set(VIOLATIONS) | set(PART_VIOLATIONS) == set(registry.CLAIMS)


def test_the_registry_lists_every_claim_the_judges_give() -> None:
    core = judged(ideal, None)
    parts = {c.key for c in synthetic_run().claims}
    assert set(core) | parts == set(registry.CLAIMS)
    assert {k for k, c in registry.CLAIMS.items() if c.kind == "core"} == set(core)
