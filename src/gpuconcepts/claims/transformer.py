"""The Transformer's claims: attention grows like S², doubling S costs about 4×, decode is
slower per token than prefill, and the KV cache matches its formula exactly.

Its experiment (:data:`EXPERIMENT`) measures a prefill sweep over S, a decode run and the causal
prefill it is compared with; the ``judge_*`` functions here turn them into verdicts.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from gpuconcepts import formulas
from gpuconcepts.claims import thresholds as T
from gpuconcepts.claims.fit import fit_upper
from gpuconcepts.claims.plan import ROOF_FACTS, CoreJudge, Experiment, WithRoofs, roles_reading
from gpuconcepts.claims.predict import predicted_rate_ratio
from gpuconcepts.claims.quantities import (
    formula_along,
    param,
    size_values,
    sizes,
    sorted_sweep,
    time_each,
    with_interval,
)
from gpuconcepts.claims.roofline import judge_roles
from gpuconcepts.claims.shape import bars, interval_ends, median_seconds, power_law
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.measure import Measurement
from gpuconcepts.questions import question
from gpuconcepts.results.claim import ClaimResult
from gpuconcepts.results.measured import Comparison, Measured
from gpuconcepts.results.plot import PlotSpec, Series
from gpuconcepts.results.twosided import TwoSided
from gpuconcepts.roofline import Peaks, place
from gpuconcepts.units import describe_bytes, number, plain_number, si, times
from gpuconcepts.workloads import workload

if TYPE_CHECKING:
    from gpuconcepts.results.claim_sizes import ClaimSizes


_ATTENTION_FIXED = ("B", "d")
"""The sizes an attention sweep over S holds fixed."""
_ATTENTION_SWEEP = "an attention sweep over S"
"""Its name in an error message."""


def _plan(m: Measured, z: ClaimSizes) -> tuple[WithRoofs, WithRoofs]:
    """A prefill sweep over S (its longest read by a roofline claim), and a decode run beside
    the causal prefill that ends where it does (the decode read by a roofline claim)."""
    attention = {"B": z.attn_B, "d": z.attn_d, "heads": z.attn_heads}
    lengths = [("transformer-prefill", {"S": S, **attention}) for S in z.attn_lengths]
    S = z.attn_lengths[-2]  # decode ends where a prefill was measured, to compare per token
    steps = {"S_prompt": S - z.decode_steps, "steps": z.decode_steps}
    decoding = [
        ("transformer-prefill-causal", {"S": S, **attention}),  # a decoder's prefill
        ("transformer-decode", {**steps, **attention}),
    ]
    return (
        WithRoofs.of(m, z, lengths, {"transformer-prefill": len(lengths) - 1}),
        WithRoofs.of(m, z, decoding, {"transformer-decode": 1}),
    )


def _on_sweep(judge: CoreJudge, m: Measured, ms: Sequence[Measurement]) -> list[ClaimResult]:
    """How a judge of the attention's growth is called on the prefill sweep."""
    return [judge(ms, device=m.label)]


def _on_pair(judge: CoreJudge, m: Measured, ms: Sequence[Measurement]) -> list[ClaimResult]:
    """How the per-token judge is called on the causal prefill and the decode run."""
    return [judge(*ms, peaks=m.peaks, device=m.label)]


def comparisons(m: Measured, z: ClaimSizes) -> tuple[Comparison, ...]:
    """The prefill sweep and the decode run, each timed beside its roofs' references."""
    sweep, decoding = _plan(m, z)
    growth = (judge_attention_exponent, judge_attention_doubling)
    return (
        sweep.comparison(lambda ms, _refs: [r for j in growth for r in _on_sweep(j, m, ms)], m),
        decoding.comparison(lambda ms, _refs: _on_pair(judge_prefill_vs_decode, m, ms), m),
    )


def _growth(judge: CoreJudge, m: Measured, z: ClaimSizes) -> list[ClaimResult]:
    """``judge`` on the prefill sweep, read from ``m``."""
    return _on_sweep(judge, m, _plan(m, z)[0].read(m)[0])


def _per_token(judge: CoreJudge, m: Measured, z: ClaimSizes) -> list[ClaimResult]:
    """``judge`` on the causal prefill and the decode run, read from ``m``."""
    return _on_pair(judge, m, _plan(m, z)[1].read(m)[0])


def _kv_cache(judge: CoreJudge, m: Measured, z: ClaimSizes) -> list[ClaimResult]:
    """``judge`` on the decode run's own series of cache sizes, read from ``m``."""
    decode = _plan(m, z)[1].read(m)[0][1]
    lengths, cached = (tuple(int(n) for n in decode.series[k]) for k in ("lengths", "cache_bytes"))
    sizes = {"B": z.attn_B, "d": z.attn_d, "s": param(decode, "s")}
    return [judge(**sizes, lengths=lengths, cache_bytes=cached, device=m.label)]


def judge_attention_exponent(sweep: Sequence[Measurement], *, device: str) -> ClaimResult:
    """Attention time grows like S² for large S: the exponent fitted on the upper sweep."""
    return power_law(
        sweep,
        formulas.attention_flops,
        exponent=T.ATTENTION_EXPONENT,
        tolerance=T.ATTENTION_EXPONENT_TOLERANCE,
        alternative=("attention time ∝ S", 1.0),
        fixed=_ATTENTION_FIXED,
        what=_ATTENTION_SWEEP,
        key="attention-quadratic",
        architecture="Transformer",
        claim="Attention time grows like S² for long sequences.",
        title="Attention prefill time against S",
        device=device,
    )


def judge_attention_doubling(sweep: Sequence[Measurement], *, device: str) -> ClaimResult:
    """Doubling S costs about 4×: 2 to the exponent fitted over the upper sweep (the same fit
    and interval as :func:`judge_attention_exponent`), against the formula's ratio at the
    largest doubling of the sweep."""
    ordered = sorted_sweep(sweep, "S", fixed=_ATTENTION_FIXED, what=_ATTENTION_SWEEP)
    lengths = size_values(ordered, "S")
    flops = formula_along(formulas.attention_flops, ordered)
    pairs = [(i, j) for j in range(len(lengths)) for i in range(j) if lengths[j] == 2 * lengths[i]]
    post = question(16)
    if not pairs:
        return _no_doubling(ordered, device)
    i, j = pairs[-1]
    predicted = flops[j] / flops[i]
    # one fit serves both attention claims (the exponent's, see power_law), so they cannot
    # disagree: doubling S multiplies the time by 2 to the fitted exponent
    exponent, (low_exponent, high_exponent) = with_interval(
        lambda t: fit_upper(lengths, t).exponent, ordered
    )
    ratio, interval = 2.0**exponent, (2.0**low_exponent, 2.0**high_exponent)
    post_S = " → ".join(plain_number(step.values["S"]) for step in post.steps)
    test = _doubling_test(predicted, ratio, interval)
    return ClaimResult(
        key="attention-doubling",
        architecture="Transformer",
        claim=f"Doubling S makes attention about {post.ratio}× as expensive.",
        prediction=f"attention_flops(S={plain_number(lengths[j])}) / attention_flops("
        f"S={number(lengths[i])}) = {number(predicted)}; the post's Q16 ({post_S} tokens):"
        f" {post.ratio}× the scores",
        test=test,
        detail=f"{time_each(ordered[i])} → {time_each(ordered[j])}",
        device=device,
        values={
            "ratio": ratio,
            "predicted_ratio": predicted,
            "S": lengths[i],
            "low": _DOUBLING[0],
            "high": _DOUBLING[1],
        },
        plot=_doubling_plot(ordered, pairs, _DOUBLING),
    )


_DOUBLING = (
    2.0 ** (T.ATTENTION_EXPONENT - T.ATTENTION_EXPONENT_TOLERANCE),
    2.0 ** (T.ATTENTION_EXPONENT + T.ATTENTION_EXPONENT_TOLERANCE),
)
"""The doubling claim's region: 2 to the ends of the exponent's."""


def _doubling_test(predicted: float, measured: float, interval: tuple[float, float]) -> TwoSided:
    """The doubling claim's test: 2 to the fitted exponent, within the exponent's region."""
    return TwoSided(
        "t(2S) ÷ t(S) = 2^(exponent fitted over the upper sweep)",
        predicted=predicted,
        alternative="attention time ∝ S",
        alternative_value=2.0,
        low=_DOUBLING[0],
        high=_DOUBLING[1],
        measured=measured,
        interval=interval,
    )


def _no_doubling(ordered: Sequence[Measurement], device: str) -> ClaimResult:
    """The doubling claim of a sweep that holds no doubling of S: not visible, with the
    formula's ratio at its longest S."""
    post = question(16)
    B, S, d = param(ordered[0], "B"), param(ordered[-1], "S"), param(ordered[0], "d")
    doubled = formulas.attention_flops(B=B, S=2 * S, d=d) / formulas.attention_flops(B=B, S=S, d=d)
    return ClaimResult(
        key="attention-doubling",
        architecture="Transformer",
        claim=f"Doubling S makes attention about {post.ratio}× as expensive.",
        prediction=f"attention_flops(2S)/attention_flops(S) = {number(doubled)}; the post's Q16: "
        f"{post.ratio}×",
        test=_doubling_test(doubled, math.nan, (math.nan, math.nan)),
        device=device,
        visible=False,
        reason=f"the sweep S = {[plain_number(x) for x in size_values(ordered, 'S')]} holds no "
        "doubling",
    )


def _doubling_plot(
    ordered: Sequence[Measurement], pairs: Sequence[tuple[int, int]], region: tuple[float, float]
) -> PlotSpec:
    """The measured and the formula's ratio at each doubling of the sweep, each measured one
    with its widest spread (one time at its fast quartile over the other at its slow one)."""
    lengths, seconds = size_values(ordered, "S"), tuple(median_seconds(m) for m in ordered)
    flops = formula_along(formulas.attention_flops, ordered)
    before = tuple(lengths[a] for a, _ in pairs)
    quartiles = tuple(m.interval_seconds for m in ordered)
    ratio_low, ratio_high = interval_ends(
        (quartiles[b][0] / quartiles[a][1], quartiles[b][1] / quartiles[a][0]) for a, b in pairs
    )
    low, high = region
    return PlotSpec(
        title="Attention: cost of doubling S, at each doubling of the sweep",
        x_label="S (before doubling)",
        y_label="t(2S) / t(S)",
        series=(
            Series(
                "measured",
                before,
                tuple(seconds[b] / seconds[a] for a, b in pairs),
                low=ratio_low,
                high=ratio_high,
            ),
            Series(
                "attention_flops ratio",
                before,
                tuple(flops[b] / flops[a] for a, b in pairs),
                role="predicted",
            ),
        ),
        log_y=False,
        hlines=((f"lower bound {times(low)}", low), (f"upper bound {times(high)}", high)),
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
    prefill_per_token = median_seconds(prefill) / (B * S)
    decode_per_token = median_seconds(decode) / B
    slowdown = decode_per_token / prefill_per_token
    rate_ratio, interval = with_interval(
        lambda t: (prefill.flops / t[0]) / (decode.flops / t[1]), (prefill, decode)
    )
    flops_prefill, flops_decode = prefill.flops / (B * S), decode.flops / B
    roof_prefill = place(prefill, peaks).predicted_seconds / (B * S)
    roof_decode = place(decode, peaks).predicted_seconds / B
    predicted = predicted_rate_ratio(prefill, decode, peaks)
    return ClaimResult(
        key="prefill-vs-decode",
        architecture="Transformer",
        claim="Prefill processes the prompt's tokens in parallel; decode generates one token at "
        "a time.",
        prediction=f"per token, the prefill does {plain_number(round(flops_prefill))} attention "
        f"FLOPs on average ({workload(prefill.workload).flops.name}) and a decode step at "
        f"S={plain_number(S)} {plain_number(round(flops_decode))} "
        f"({times(flops_decode / flops_prefill)}), at intensity "
        f"{number(prefill.intensity)} against {number(decode.intensity)} FLOP/byte: the roofline gives "
        f"{si(roof_prefill, 's')} against {si(roof_decode, 's')} per token "
        f"({number(roof_decode / roof_prefill)}×); with the GEMM sweep's products and a call's "
        f"floor, the measured ceilings predict prefill at {times(predicted)} decode's FLOP/s",
        test=TwoSided(
            "prefill FLOP/s ÷ decode FLOP/s",
            predicted=predicted,
            alternative="decode computes as efficiently as prefill",
            alternative_value=1.0,
            low=T.DIRECTION_MIN_EFFECT,  # "in parallel" against "one at a time": a direction
            high=None,
            measured=rate_ratio,
            interval=interval,
        ),
        detail=f"prefill {time_each(prefill, B * S)} per token, decode "
        f"{time_each(decode, B)} per token ({times(slowdown)})",
        device=device,
        values={
            "prefill_seconds_per_token": prefill_per_token,
            "decode_seconds_per_token": decode_per_token,
            "slowdown": slowdown,
            "predicted_slowdown": roof_decode / roof_prefill,
            "prefill_intensity": prefill.intensity,
            "decode_intensity": decode.intensity,
        },
        plot=_per_token_bars(prefill, decode, (roof_prefill, roof_decode)),
    )


def _per_token_bars(
    prefill: Measurement, decode: Measurement, roofs: tuple[float, float]
) -> PlotSpec:
    """Prefill's and a decode step's time per token, beside the roofline's (``roofs``)."""
    B, S, d = sizes(prefill, "B", "S", "d")
    tokens = (B * S, B)  # prefill's time covers B·S tokens, one decode step's B
    return bars(
        f"Attention time per token at S={plain_number(S)} (B={B}, d={d})",
        "phase",
        "seconds per token",
        ("prefill (all tokens at once)", "decode (one token per step)"),
        tuple(median_seconds(m) / n for m, n in zip((prefill, decode), tokens, strict=True)),
        roofs,
        spread=tuple(
            (m.interval_seconds[0] / n, m.interval_seconds[1] / n)
            for m, n in zip((prefill, decode), tokens, strict=True)
        ),
    )


def judge_kv_cache(
    *, B: int, d: int, s: int, lengths: Sequence[int], cache_bytes: Sequence[int], device: str
) -> ClaimResult:
    """The KV cache measured after every decode step equals ``kv_cache_memory`` exactly."""
    if len(lengths) != len(cache_bytes) or not lengths:
        raise GpuConceptsError(
            f"need one measured cache size per length; got {len(lengths)} lengths and "
            f"{len(cache_bytes)} sizes"
        )
    expected = tuple(int(formulas.kv_cache_memory(B=B, S=n, d=d, s=s)) for n in lengths)
    worst = max(abs(int(c) - e) for c, e in zip(cache_bytes, expected, strict=True))
    relative = max(abs(int(c) - e) / e for c, e in zip(cache_bytes, expected, strict=True))
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
        test=TwoSided(
            "largest |measured − kv_cache_memory| ÷ kv_cache_memory",
            predicted=0.0,
            alternative="the cache keeps the keys only (half the formula)",
            alternative_value=0.5,
            low=0.0,
            high=T.KV_CACHE_TOLERANCE,
            measured=relative,
            interval=(relative, relative),  # the allocator's count: no spread
        ),
        detail=f"{len(lengths)} steps measured; largest difference from the formula "
        f"{plain_number(worst)} bytes (last: {plain_number(int(cache_bytes[-1]))} bytes)",
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
                Series("measured (allocator)", tokens, tuple(float(c) for c in cache_bytes)),
                Series("kv_cache_memory", tokens, tuple(float(e) for e in expected), "predicted"),
            ),
            log_x=False,
            log_y=False,
        ),
    )


EXPERIMENT = Experiment(
    "Transformer",
    comparisons,
    {
        judge_attention_exponent: _growth,
        judge_attention_doubling: _growth,
        judge_prefill_vs_decode: _per_token,
        judge_kv_cache: _kv_cache,
        judge_roles: roles_reading(_plan),
    },
    ROOF_FACTS,
)
"""What the Transformer's claims need measured, and how each of its judges reads it (the
roofline claims' on the longest prefill and on the decode run)."""
