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
>>> [key for key, c in CLAIMS.items() if c.tests == "direction"]
['rnn-batch-vs-critical-path']
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from gpuconcepts.errors import GpuConceptsError

Kind = Literal["core", "whole model", "distributed"]

Tests = Literal["prediction", "direction", "fact"]
"""What a claim's test checks. ``"prediction"``: a number the measured ceilings predict, its
pass region within [p/2, 2p] (:data:`~gpuconcepts.claims.thresholds.PREDICTION_FACTOR`).
``"direction"``: only the side of the alternative a measurement falls on, its region wider
(at most :data:`~gpuconcepts.claims.thresholds.MAX_DIRECTION_ONLY` claims, each saying so in
its text). ``"fact"``: an exact
check (a count, an allocation's size), not a measured time."""


@dataclass(frozen=True)
class Claim:
    """Where a claim is judged (``module:function``), the chapter that shows it, its kind, and
    what its test checks (:data:`Tests`)."""

    judge: str
    chapter: str
    kind: Kind
    tests: Tests = "prediction"


def _core(judge: str, chapter: str, tests: Tests = "prediction") -> Claim:
    return Claim(f"gpuconcepts.claims.{judge}", chapter, "core", tests)


def _whole(judge: str, tests: Tests = "prediction") -> Claim:
    return Claim(f"gpuconcepts.claims.wholemodel:{judge}", "model", "whole model", tests)


def _dist(judge: str, tests: Tests = "prediction") -> Claim:
    return Claim(f"gpuconcepts.distributed.claims:{judge}", "distributed", "distributed", tests)


_ROOFLINE = _core("roofline:judge_roles", "roofline")
_TRAFFIC = _dist("traffic_claim", "fact")  # bytes counted on the loopback interface

CLAIMS: dict[str, Claim] = {
    "dlrm-random-vs-sequential": _core("dlrm:judge_dlrm_lookups", "dlrm"),
    "mlp-batch-trend": _core("mlp:judge_mlp_trend", "mlp"),
    "mlp-crossover": _core("mlp:judge_mlp_crossover", "mlp"),
    "cnn-weight-sharing": _core("cnn:judge_weight_sharing", "cnn", "fact"),
    "cnn-dense-vs-depthwise": _core("cnn:judge_conv_vs_depthwise", "cnn"),
    "rnn-linear-in-S": _core("rnn:judge_rnn_length", "rnn"),
    "rnn-loop-vs-gemm": _core("rnn:judge_rnn_loop_vs_gemm", "rnn"),
    "rnn-batch-vs-critical-path": _core("rnn:judge_rnn_batch", "rnn", "direction"),
    "attention-quadratic": _core("transformer:judge_attention_exponent", "transformer"),
    "attention-doubling": _core("transformer:judge_attention_doubling", "transformer"),
    "prefill-vs-decode": _core("transformer:judge_prefill_vs_decode", "transformer"),
    "kv-cache-exact": _core("transformer:judge_kv_cache", "transformer", "fact"),
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
    "training-memory": _whole("judge_training_memory", "fact"),
    "traffic-all-reduce": _TRAFFIC,
    "traffic-table-wise-lookup": _TRAFFIC,
    "traffic-row-wise-lookup": _TRAFFIC,
    "traffic-column-wise-lookup": _TRAFFIC,
    "traffic-two-way-tensor-parallel-mlp": _TRAFFIC,
    "traffic-pipeline": _TRAFFIC,
    "allreduce-grows-with-w": _dist("allreduce_growth_claim", "fact"),
    "rowwise-more-than-tablewise": _dist("rowwise_claim", "fact"),
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
