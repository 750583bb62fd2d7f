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
>>> [key for key, c in CLAIMS.items() if c.tests == "model"]
['mlp-crossover', 'decode-knee', 'decode-long-context', 'alpha-beta-predicts', 'pipeline-bubble']
>>> ledger("kv-cache-exact"), ledger("decode-knee"), ledger("roofline-cnn-conv"), ledger("demo")
('fact', 'model', 'post', 'post')
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from gpuconcepts.errors import GpuConceptsError

Kind = Literal["core", "whole model", "distributed"]

Tests = Literal["bound", "direction", "exponent", "prediction", "fact", "model"]
"""What a claim's test checks, as the post states the claim (ledger 1, the post checked; issue
45). ``"bound"``: which roof binds (the verdict's kind) and how much of it the kernel attains.
``"direction"``: the direction of an effect, with an effect size fixed in advance (a ratio
between the sweep's ends, a rank correlation). ``"exponent"``: a fitted exponent within its
tolerance. ``"prediction"``: a number the post's own formula gives, within its fixed region.
``"fact"``: an exact check (a count, an allocation's size): shown apart, never tallied.
``"model"``: a prediction the book adds beyond the post (a knee, the MLP's or a decode step's;
a fit; a schedule priced with its messages): the model's, scored in ledger 2 with the kernels' times, not tallied as the
post's claims."""

TESTS_WORDS: dict[Tests, str] = {
    "bound": "the roof that binds, and its share",
    "direction": "a direction, its effect fixed",
    "exponent": "an exponent, within its tolerance",
    "prediction": "a number the post's formula gives",
    "fact": "an exact check (a fact)",
    "model": "the model's own prediction",
}
"""Each label of :data:`Tests` in words, for pages and tables: the one place that says them.

>>> from typing import get_args
>>> list(TESTS_WORDS) == list(get_args(Tests))
True
"""

Ledger = Literal["post", "fact", "model"]
"""Where a claim's verdict is counted: the post's claims (tallied), the facts (shown apart),
the model's predictions (scored with ledger 2)."""


@dataclass(frozen=True)
class Claim:
    """Where a claim is judged (``module:function``), the chapter that shows it, its kind, and
    what its test checks (:data:`Tests`)."""

    judge: str
    chapter: str
    kind: Kind
    tests: Tests = "prediction"

    @property
    def ledger(self) -> Ledger:
        """Where its verdict is counted (:data:`Ledger`)."""
        return "fact" if self.tests == "fact" else "model" if self.tests == "model" else "post"


def _core(judge: str, chapter: str, tests: Tests = "prediction") -> Claim:
    return Claim(f"gpuconcepts.claims.{judge}", chapter, "core", tests)


def _whole(judge: str, tests: Tests = "prediction") -> Claim:
    return Claim(f"gpuconcepts.claims.wholemodel:{judge}", "model", "whole model", tests)


def _dist(judge: str, tests: Tests = "prediction") -> Claim:
    return Claim(f"gpuconcepts.distributed.claims:{judge}", "distributed", "distributed", tests)


_ROOFLINE = _core("roofline:judge_roles", "roofline", "bound")
_TRAFFIC = _dist("traffic_claim", "fact")  # bytes counted on the loopback interface

CLAIMS: dict[str, Claim] = {
    "dlrm-random-vs-sequential": _core("dlrm:judge_dlrm_lookups", "dlrm", "direction"),
    "mlp-batch-trend": _core("mlp:judge_mlp_trend", "mlp", "direction"),
    # where the knee lies is the book's (the post says only that large batches "can make
    # computation the dominant cost", which the roofline-mlp claims test): the model's
    "mlp-crossover": _core("mlp:judge_mlp_crossover", "mlp", "model"),
    "cnn-weight-sharing": _core("cnn:judge_weight_sharing", "cnn", "fact"),
    "cnn-dense-vs-depthwise": _core("cnn:judge_conv_vs_depthwise", "cnn", "direction"),
    "rnn-linear-in-S": _core("rnn:judge_rnn_length", "rnn", "exponent"),
    "rnn-loop-vs-gemm": _core("rnn:judge_rnn_loop_vs_gemm", "rnn", "direction"),
    "rnn-batch-vs-critical-path": _core("rnn:judge_rnn_batch", "rnn", "direction"),
    "attention-quadratic": _core("transformer:judge_attention_exponent", "transformer", "exponent"),
    "attention-doubling": _core("transformer:judge_attention_doubling", "transformer", "exponent"),
    "prefill-vs-decode": _core("transformer:judge_prefill_vs_decode", "transformer", "direction"),
    "kv-cache-exact": _core("transformer:judge_kv_cache", "transformer", "fact"),
    "roofline-dlrm-random": _ROOFLINE,
    "roofline-mlp-small-batch": _ROOFLINE,
    "roofline-mlp-large-batch": _ROOFLINE,
    "roofline-cnn-conv": _ROOFLINE,
    "roofline-cnn-depthwise": _ROOFLINE,
    "roofline-transformer-prefill": _ROOFLINE,
    "roofline-transformer-decode": _ROOFLINE,
    "backward-pass": _whole("judge_backward"),
    "decode-knee": _whole("judge_decode_knee", "model"),
    "decode-long-context": _whole("judge_decode_long_context", "model"),
    "decode-floor": _whole("judge_decode_floor", "bound"),
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
    "alpha-beta-predicts": _dist("alpha_beta_claim", "model"),
    "pipeline-bubble": _dist("bubble_claim", "model"),
    "pipeline-bubble-shrinks": _dist("bubble_sweep_claim", "exponent"),
}
"""Every claim, in the book's order: the core claims, then the whole model, then beyond one
device."""


def ledger(key: str) -> Ledger:
    """Where the claim ``key``'s verdict is counted; a key the registry does not hold (an
    example's) counts as the post's."""
    claim = CLAIMS.get(key)
    return "post" if claim is None else claim.ledger


def judge(key: str) -> Callable[..., Any]:
    """The function that judges the claim ``key`` (imported now)."""
    if key not in CLAIMS:
        raise GpuConceptsError(f"claim key {key!r} is not registered; known: {', '.join(CLAIMS)}")
    module, name = CLAIMS[key].judge.split(":")
    found: Callable[..., Any] = getattr(importlib.import_module(module), name)
    return found
