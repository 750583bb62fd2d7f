"""Every claim of the book in one place: its key, the function that judges it, the experiment
it needs, its chapter and its kind (a core claim, judged from the five workloads' measurements;
a whole-model claim; a
claim beyond one device). A claim is added here with one line, and a test
(tests/test_falsifiable.py) fails until it also has a run that violates it.

Judges are named by dotted path, imported only when asked for, so reading the registry loads
neither torch nor the judges.

>>> CLAIMS["decode-knee"].kind, CLAIMS["decode-knee"].chapter
('whole model', 'model')
>>> judge("rnn-linear-in-S").__name__
'judge_rnn_length'
>>> CLAIMS["roofline-cnn-conv"].experiment, CLAIMS["backward-pass"].experiment
('gpuconcepts.claims.cnn:EXPERIMENT', None)
>>> [e.name for e in experiments()]
['DLRM', 'MLP', 'CNN', 'RNN', 'Transformer']
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
    """Where a claim is judged (``module:function``), the chapter that shows it, its kind,
    what its test checks (:data:`Tests`) and the experiment it needs (``module:name`` of a
    :class:`~gpuconcepts.claims.plan.Experiment`, which says which kernels at which sizes
    are measured for it when a run is collected; None for the whole model's and the
    distributed claims, which read their part's results)."""

    judge: str
    chapter: str
    kind: Kind
    tests: Tests = "prediction"
    experiment: str | None = None

    @property
    def ledger(self) -> Ledger:
        """Where its verdict is counted (:data:`Ledger`)."""
        return "fact" if self.tests == "fact" else "model" if self.tests == "model" else "post"


def _core(judge: str, chapter: str, tests: Tests = "prediction", measured_by: str = "") -> Claim:
    """A core claim, judged by ``module:function`` of the claims package, from the experiment
    of ``measured_by`` (a module of the claims package; the judge's own by default)."""
    module = measured_by or judge.split(":", maxsplit=1)[0]
    experiment = f"gpuconcepts.claims.{module}:EXPERIMENT"
    return Claim(f"gpuconcepts.claims.{judge}", chapter, "core", tests, experiment)


def _whole(judge: str, tests: Tests = "prediction") -> Claim:
    """A whole-model claim, judged by ``module:function`` of the claims package."""
    return Claim(f"gpuconcepts.claims.{judge}", "model", "whole model", tests)


def _dist(judge: str, tests: Tests = "prediction") -> Claim:
    """A claim beyond one device, judged by ``module:function`` of the claims package."""
    return Claim(f"gpuconcepts.claims.{judge}", "distributed", "distributed", tests)


def _roofline(measured_by: str) -> Claim:
    """A roofline claim, read from a kernel that ``measured_by``'s experiment times beside
    its roof's reference."""
    return _core("roofline:judge_roles", "roofline", "bound", measured_by)


_TRAFFIC = _dist("collectives:traffic_claim", "fact")  # bytes counted on the loopback interface

CLAIMS: dict[str, Claim] = {
    "dlrm-random-vs-sequential": _core("dlrm:judge_dlrm_lookups", "dlrm", "direction"),
    "mlp-batch-trend": _core("mlp:judge_mlp_trend", "mlp", "direction"),
    # where the knee lies is the book's (the post says only that large batches "can make
    # computation the dominant cost", which the roofline-mlp claims test): the model's
    "mlp-crossover": _core("mlp:judge_mlp_crossover", "mlp", "model"),
    "cnn-weight-sharing": _core("cnn:judge_weight_sharing", "cnn", "fact"),
    "cnn-dense-vs-depthwise": _core("cnn:judge_conv_vs_depthwise", "cnn", "direction"),
    "rnn-linear-in-S": _core("rnn:judge_rnn_length", "rnn", "exponent"),
    "rnn-loop-vs-gemm": _core("rnn_steps:judge_rnn_loop_vs_gemm", "rnn", "direction", "rnn"),
    "rnn-batch-vs-critical-path": _core("rnn_steps:judge_rnn_batch", "rnn", "direction", "rnn"),
    "attention-quadratic": _core("transformer:judge_attention_exponent", "transformer", "exponent"),
    "attention-doubling": _core("transformer:judge_attention_doubling", "transformer", "exponent"),
    "prefill-vs-decode": _core("transformer:judge_prefill_vs_decode", "transformer", "direction"),
    "kv-cache-exact": _core("transformer:judge_kv_cache", "transformer", "fact"),
    "roofline-dlrm-random": _roofline("dlrm"),
    "roofline-mlp-small-batch": _roofline("mlp"),
    "roofline-mlp-large-batch": _roofline("mlp"),
    "roofline-cnn-conv": _roofline("cnn"),
    "roofline-cnn-depthwise": _roofline("cnn"),
    "roofline-transformer-prefill": _roofline("transformer"),
    "roofline-transformer-decode": _roofline("transformer"),
    "backward-pass": _whole("wholemodel:judge_backward"),
    "decode-knee": _whole("decode:judge_decode_knee", "model"),
    "decode-long-context": _whole("decode:judge_decode_long_context", "model"),
    "decode-floor": _whole("decode:judge_decode_floor", "bound"),
    "training-memory": _whole("wholemodel:judge_training_memory", "fact"),
    "traffic-all-reduce": _TRAFFIC,
    "traffic-table-wise-lookup": _TRAFFIC,
    "traffic-row-wise-lookup": _TRAFFIC,
    "traffic-column-wise-lookup": _TRAFFIC,
    "traffic-two-way-tensor-parallel-mlp": _TRAFFIC,
    "traffic-pipeline": _TRAFFIC,
    "allreduce-grows-with-w": _dist("collectives:allreduce_growth_claim", "fact"),
    "rowwise-more-than-tablewise": _dist("collectives:rowwise_claim", "fact"),
    "tablewise-columnwise-same-exchange": _dist("collectives:same_exchange_claim"),
    "alpha-beta-predicts": _dist("collectives:alpha_beta_claim", "model"),
    "pipeline-bubble": _dist("distributed:bubble_claim", "model"),
    "pipeline-bubble-shrinks": _dist("distributed:bubble_sweep_claim", "exponent"),
}
"""Every claim, in the book's order: the core claims, then the whole model, then beyond one
device (the claims appendix lists them; the API page hides the value, whose slugs are not
prose).

:meta hide-value:
"""


def ledger(key: str) -> Ledger:
    """Where the claim ``key``'s verdict is counted; a key the registry does not hold (an
    example's) counts as the post's."""
    claim = CLAIMS.get(key)
    return "post" if claim is None else claim.ledger


def _imported(path: str) -> Any:
    module, name = path.split(":")
    return getattr(importlib.import_module(module), name)


def judge(key: str) -> Callable[..., Any]:
    """The function that judges the claim ``key`` (imported now)."""
    if key not in CLAIMS:
        raise GpuConceptsError(f"claim key {key!r} is not registered; known: {', '.join(CLAIMS)}")
    found: Callable[..., Any] = _imported(CLAIMS[key].judge)
    return found


def experiments() -> tuple[Any, ...]:
    """The experiments the core claims need (:attr:`Claim.experiment`, imported now), each
    once, in the book's order: what a run measures for them, and what judges them."""
    paths = dict.fromkeys(c.experiment for c in CLAIMS.values() if c.experiment)
    return tuple(_imported(path) for path in paths)
