"""The model page's measured part: this build's whole-model checks, their claims and
thresholds, and the decode sweeps at a short and a long context with their figures.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from gpuconcepts import formulas, units
from gpuconcepts.changelog import about
from gpuconcepts.claims import thresholds, wholemodel
from gpuconcepts.render import markdown_claims_table, markdown_table
from gpuconcepts.render.pages import Glue, unmeasured
from gpuconcepts.render.pages.model_shapes import ADAM_ITEMS, FP32_ITEMS
from gpuconcepts.render.plots import draw_result
from gpuconcepts.render.plots.claims import unmeasured_figure
from gpuconcepts.results.registry import CLAIMS

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from gpuconcepts.changelog import Change
    from gpuconcepts.claims import ClaimResult
    from gpuconcepts.results.wholemodel import DecodeSweep
    from gpuconcepts.run import Run


def region_changes(changes: Sequence[Change]) -> Glue:
    """Which changes of the change log concern the whole model's claims (an entry whose topic
    names one, or whose text names its key: :func:`~gpuconcepts.changelog.about`), by day and
    topic: their pass regions and predictions were not all fixed before the runs were seen.

    >>> import datetime as dt
    >>> from gpuconcepts.changelog import Change
    >>> print(region_changes([Change(dt.date(2026, 12, 1), "decode floor", "w", "y", "e"),
    ...                       Change(dt.date(2026, 12, 2), "roofs", "w", "y", "e")])["region_changes"])
    The change log dates 1 change to these checks, made after runs had been seen: 2026-12-01 (decode floor).
    >>> region_changes([])["region_changes"]
    'The change log dates no change to these checks.'
    """
    keys = [key for key, claim in CLAIMS.items() if claim.kind == "whole model"]
    found = about(changes, keys)
    if not found:
        return {"region_changes": "The change log dates no change to these checks."}
    days = ", ".join(f"{c.date.isoformat()} ({c.topic})" for c in found)
    return {
        "region_changes": f"The change log dates {units.plural(len(found), 'change')} to these "
        f"checks, made after runs had been seen: {days}."
    }


def intensity_limit(sweep: DecodeSweep) -> float:
    """The decode intensity no batch of ``sweep`` can pass, at its cached context."""
    shape = sweep.shape
    return float(
        formulas.decode_intensity_limit(
            n_params=sweep.weight_bytes // formulas.weight_memory(n_params=1, s=shape.s),
            S=sweep.cached, n_layers=shape.layers, n_kv=shape.n_kv, d_head=shape.d_head,
            s=shape.s,
        )
    )  # fmt: skip


def plot(result: ClaimResult) -> Figure:
    """A claim's figure (``draw_result``); one that says why, where it has nothing to draw."""
    figure = draw_result(result)
    if figure is None:
        return unmeasured_figure(result.why or "this run holds nothing to draw for it")
    return figure


def not_measured(run: Run) -> str:
    """Why ``run`` holds no whole-model measurement to show, in words; "" when it holds one."""
    if run.wholemodel is None:
        return run.skipped.get("wholemodel", "this run did not measure the whole model")
    if run.wholemodel.long_decode is None:
        return "this run did not sweep decoding at a long context"
    if not any(r.key == "decode-long-context" for r in run.claims):
        return "this run holds no long-context decode claim"
    return ""


MEASURED_TEXTS = (
    "decode_shape", "fp32_dtype", "claims_table", "claims_details", "check_context", "check_cache_share",
    "check_largest_batch", "check_limit", "check_limit_vs_ridge", "n_checks", "long_context",
    "long_per_sequence", "long_weights", "long_limit", "long_limit_vs_ridge", "long_alternative",
    "long_predicted", "long_measured", "long_short_knee", "long_verdict",
)  # fmt: skip
MEASURED_FIGURES = ("knee_fig", "long_fig")
"""What :func:`measured` glues from the whole-model results (a test checks they agree), so
that a run without them still glues every name the page reads."""


def peaks_and_thresholds(run: Run) -> Glue:
    """What the measured part says whatever the run measured: its device and peaks, the
    whole-model thresholds with their reasons, and the float32 checks' bytes per weight against
    mixed precision's."""
    peaks = run.peaks
    fp32_total = sum(b for _, b in FP32_ITEMS)
    same = fp32_total == sum(b for _, b in ADAM_ITEMS)
    return {
        "device": run.provenance.device_name,
        "peak_flops": units.si(peaks.flops_per_s, "FLOP/s"),
        "peak_bw": units.si(peaks.bytes_per_s, "B/s"),
        "ridge": units.significant(peaks.ridge_point),
        "thresholds_table": markdown_table(
            ["Threshold", "Value", "Why this value"],
            [[f"`{name}`", units.plain_number(value), reason]
             for name, value, reason in thresholds.described(wholemodel)],
        ),
        "fp32_items": " + ".join(str(b) for _, b in FP32_ITEMS),
        "mixed_items": " + ".join(str(b) for _, b in ADAM_ITEMS),
        "fp32_total": str(fp32_total),
        "fp32_same": "the same total" if same else "a different total",
    }  # fmt: skip


def measured(run: Run) -> Glue:
    """This build's whole-model checks: their claims and thresholds, the decode sweeps at a
    short and a long context with their figures, and what the float32 checks check. A run
    that measured none of it glues "—" and says why (:func:`not_measured`)."""
    glue = peaks_and_thresholds(run)
    why = not_measured(run)
    if why:
        glue |= unmeasured(MEASURED_TEXTS, MEASURED_FIGURES, why)
        glue["long_verdict"] = f"nothing was measured: {why}"
        return glue
    peaks = run.peaks
    assert run.wholemodel is not None
    assert run.wholemodel.long_decode is not None
    results = [r for r in run.claims if r.architecture == wholemodel.ARCHITECTURE]
    by_key = {r.key: r for r in results}
    sweep, long = run.wholemodel.decode, run.wholemodel.long_decode
    check_limit, long_limit = intensity_limit(sweep), intensity_limit(long)
    long_result = by_key["decode-long-context"]
    shown = units.measured_or_dash
    return glue | {
        "decode_shape": run.wholemodel.sizes.decode.describe(),
        "fp32_dtype": run.wholemodel.sizes.training.dtype,
        "claims_table": markdown_claims_table(results),
        "claims_details": "\n".join(f"* **{r.claim}** Measured: {r.measured}." for r in results),
        # The knee and the floor are measured at a short context, where the cache is small.
        "check_context": units.plural(sweep.cached, "token"),
        "check_cache_share": units.percent(
            sweep.cache_bytes[-1] / (sweep.weight_bytes + sweep.cache_bytes[-1])
        ),
        "check_largest_batch": units.plain_number(sweep.batches[-1]),
        "check_limit": units.describe(check_limit, "FLOP/byte"),
        "check_limit_vs_ridge": units.times(check_limit / peaks.ridge_point),
        "knee_fig": plot(by_key["decode-knee"]) if "decode-knee" in by_key
        else unmeasured_figure("this run holds no decode-knee claim"),
        "n_checks": str(len(results)),
        # The long-context sweep: the KV cache takes over and the knee moves.
        "long_context": units.plural(long.cached, "token"),
        "long_per_sequence": units.binary_bytes(long.cache_bytes[0] // long.batches[0]),
        "long_weights": units.binary_bytes(long.weight_bytes),
        "long_limit": units.describe(long_limit, "FLOP/byte"),
        "long_limit_vs_ridge": units.times(long_limit / peaks.ridge_point),
        "long_alternative": shown(long_result.test.alternative_value),
        "long_predicted": shown(long_result.test.predicted),
        "long_measured": shown(long_result.test.measured),
        # the knee measured at the short context; None where no batch reached it
        "long_short_knee": shown(long_result.values.get("short_knee")),
        "long_verdict": f"the check {long_result.verdict}"
        + (f" ({long_result.why})" if long_result.why else ""),
        "long_fig": plot(long_result),
    }  # fmt: skip
