"""Every claim of the book in one place: its key, the function that judges it, its chapter and
its kind (a core claim, judged from the five workloads' measurements; a whole-model claim; a
claim beyond one device). A claim is added here with one line, and a test
(tests/test_falsifiable.py) fails until it also has a run that violates it.

Judges are named by dotted path, imported only when asked for, so reading the registry loads
neither torch nor the judges.

>>> CLAIMS["decode-knee"].kind, CLAIMS["decode-knee"].chapter
('whole model', 'model')
>>> judge("rnn-linear-in-S").__name__
'judge_rnn_length'
>>> sorted({c.kind for c in CLAIMS.values()})
['core', 'distributed', 'whole model']
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from gpuconcepts.errors import GpuConceptsError

Kind = Literal["core", "whole model", "distributed"]


@dataclass(frozen=True)
class Claim:
    """Where a claim is judged (``module:function``), the chapter that shows it, its kind."""

    judge: str
    chapter: str
    kind: Kind


def _core(judge: str, chapter: str) -> Claim:
    return Claim(f"gpuconcepts.claims.{judge}", chapter, "core")


def _whole(judge: str) -> Claim:
    return Claim(f"gpuconcepts.claims.wholemodel:{judge}", "model", "whole model")


def _dist(judge: str) -> Claim:
    return Claim(f"gpuconcepts.distributed.claims:{judge}", "distributed", "distributed")


_ROOFLINE = _core("roofline:judge_roles", "roofline")

CLAIMS: dict[str, Claim] = {
    "dlrm-random-vs-sequential": _core("dlrm:judge_dlrm_lookups", "dlrm"),
    "mlp-batch-trend": _core("mlp:judge_mlp_trend", "mlp"),
    "mlp-crossover": _core("mlp:judge_mlp_crossover", "mlp"),
    "cnn-weight-sharing": _core("cnn:judge_weight_sharing", "cnn"),
    "cnn-dense-vs-depthwise": _core("cnn:judge_conv_vs_depthwise", "cnn"),
    "rnn-linear-in-S": _core("rnn:judge_rnn_length", "rnn"),
    "rnn-loop-vs-gemm": _core("rnn:judge_rnn_loop_vs_gemm", "rnn"),
    "rnn-batch-vs-critical-path": _core("rnn:judge_rnn_batch", "rnn"),
    "attention-quadratic": _core("transformer:judge_attention_exponent", "transformer"),
    "attention-doubling": _core("transformer:judge_attention_doubling", "transformer"),
    "prefill-vs-decode": _core("transformer:judge_prefill_vs_decode", "transformer"),
    "kv-cache-exact": _core("transformer:judge_kv_cache", "transformer"),
    "roofline-dlrm-random": _ROOFLINE,
    "roofline-mlp-small-batch": _ROOFLINE,
    "roofline-mlp-large-batch": _ROOFLINE,
    "roofline-cnn-conv": _ROOFLINE,
    "roofline-cnn-depthwise": _ROOFLINE,
    "roofline-transformer-prefill": _ROOFLINE,
    "roofline-transformer-decode": _ROOFLINE,
    "backward-pass": _whole("judge_backward"),
    "decode-knee": _whole("judge_decode_knee"),
    "decode-long-context": _whole("judge_decode_long_context"),
    "decode-floor": _whole("judge_decode_floor"),
    "training-memory": _whole("judge_training_memory"),
    "traffic-all-reduce": _dist("traffic_claim"),
    "traffic-table-wise-lookup": _dist("traffic_claim"),
    "traffic-row-wise-lookup": _dist("traffic_claim"),
    "traffic-column-wise-lookup": _dist("traffic_claim"),
    "traffic-two-way-tensor-parallel-mlp": _dist("traffic_claim"),
    "traffic-pipeline": _dist("traffic_claim"),
    "allreduce-grows-with-w": _dist("allreduce_growth_claim"),
    "rowwise-more-than-tablewise": _dist("rowwise_claim"),
    "tablewise-columnwise-same-exchange": _dist("same_exchange_claim"),
    "alpha-beta-predicts": _dist("alpha_beta_claim"),
    "pipeline-bubble": _dist("bubble_claim"),
    "pipeline-bubble-shrinks": _dist("bubble_sweep_claim"),
}
"""Every claim, in the book's order: the core claims, then the whole model, then beyond one
device."""


def judge(key: str) -> Callable[..., Any]:
    """The function that judges the claim ``key`` (imported now)."""
    if key not in CLAIMS:
        raise GpuConceptsError(f"claim key {key!r} is not registered; known: {', '.join(CLAIMS)}")
    module, name = CLAIMS[key].judge.split(":")
    found: Callable[..., Any] = getattr(importlib.import_module(module), name)
    return found
