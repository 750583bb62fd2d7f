"""Every claim of the book in one place: its key, the function that judges it, the experiment
it needs, its thresholds, its chapter and its kind (a core claim, judged from the five
workloads' measurements; a whole-model claim; a claim beyond one device). Judging loops over
these entries (:func:`dispatch`), calling each judge through the experiment its entry names. A
claim is added here with one line, beside its reading in that experiment (what its judge is
handed), and a test (tests/test_falsifiable.py) fails until it also has a run that violates it.

Judges are named by dotted path, imported only when asked for, so reading the registry loads
neither torch nor the judges.

>>> CLAIMS["decode-knee"].kind, CLAIMS["decode-knee"].chapter
('whole model', 'model')
>>> judge("rnn-linear-in-S").__name__
'judge_rnn_length'
>>> CLAIMS["roofline-cnn-conv"].experiment, CLAIMS["backward-pass"].experiment
('gpuconcepts.claims.cnn:EXPERIMENT', 'gpuconcepts.claims.wholemodel:BACKWARD')
>>> [e.name for e in experiments()]
['DLRM', 'MLP', 'CNN', 'RNN', 'Transformer']
>>> sorted({c.kind for c in CLAIMS.values()})
['core', 'distributed', 'whole model']
>>> [key for key, c in CLAIMS.items() if c.tests == "model"]
['mlp-crossover', 'backward-pass', 'decode-knee', 'decode-floor', 'decode-long-context',
 'tablewise-columnwise-same-exchange', 'alpha-beta-predicts', 'pipeline-bubble',
 'pipeline-bubble-shrinks']
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
``"model"``: a prediction the book adds beyond the post, which says nothing of it (a knee, the
MLP's or a decode step's; a decode step's floor; the backward pass's cost; a fit; sharded
lookups' exchanges; a pipeline's bubble): the model's, scored in ledger 2 with the kernels'
times, not tallied as the post's claims."""

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
    what its test checks (:data:`Tests`) and the experiment it needs, by ``module:name``: for
    a core claim a :class:`~gpuconcepts.claims.plan.Experiment`, which says which kernels at
    which sizes are measured for it when a run is collected and, through its readings, hands
    its judge what it reads of them; for a whole-model or distributed claim a
    :class:`~gpuconcepts.claims.plan.PartExperiment`, which hands its judge what it reads of
    its part's results. Every kind is judged by looping over its entries (:func:`dispatch`)."""

    judge: str
    chapter: str
    kind: Kind
    tests: Tests = "prediction"
    experiment: str | None = None
    thresholds: tuple[str, ...] = ()
    """The constants of :mod:`gpuconcepts.claims.thresholds` its verdict is compared with, by
    name (their one home stays there: :meth:`threshold_values` reads them from it)."""

    @property
    def ledger(self) -> Ledger:
        """Where its verdict is counted (:data:`Ledger`)."""
        return "fact" if self.tests == "fact" else "model" if self.tests == "model" else "post"

    @property
    def page(self) -> str:
        """The book's page that discusses it (its chapter's source under ``docs/``), where
        :func:`anchor` marks the place."""
        return f"{self.chapter}.md"

    def threshold_values(self) -> dict[str, float]:
        """Its thresholds (:attr:`thresholds`) by name, with the values
        :mod:`~gpuconcepts.claims.thresholds` fixes (imported now), for a page or a command
        to show beside the verdict.

        >>> CLAIMS["roofline-cnn-conv"].threshold_values()
        {'ROOF_MIN_SHARE': 0.25}
        """
        values = {}
        for name in self.thresholds:
            try:
                values[name] = float(_imported(f"{_THRESHOLDS}:{name}"))
            except AttributeError:
                raise GpuConceptsError(
                    f"threshold {name!r} of the claim judged by {self.judge} is not defined in "
                    f"{_THRESHOLDS}, the one home of every threshold"
                ) from None
        return values


_THRESHOLDS = "gpuconcepts.claims.thresholds"


def _core(judge: str, chapter: str, tests: Tests, *thresholds: str, measured_by: str = "") -> Claim:
    """A core claim, judged by ``module:function`` of the claims package against
    ``thresholds``, from the experiment of ``measured_by`` (a module of the claims package;
    the judge's own by default)."""
    module = measured_by or judge.split(":", maxsplit=1)[0]
    experiment = f"gpuconcepts.claims.{module}:EXPERIMENT"
    return Claim(f"gpuconcepts.claims.{judge}", chapter, "core", tests, experiment, thresholds)


def _whole(judge: str, experiment: str, tests: Tests, *thresholds: str) -> Claim:
    """A whole-model claim, judged by ``module:function`` of the claims package against
    ``thresholds``, on what ``experiment`` (a
    :class:`~gpuconcepts.claims.plan.PartExperiment` of
    :mod:`~gpuconcepts.claims.wholemodel`) reads of the whole-model results."""
    path, needs = f"gpuconcepts.claims.{judge}", f"gpuconcepts.claims.wholemodel:{experiment}"
    return Claim(path, "model", "whole model", tests, needs, thresholds)


def _dist(judge: str, experiment: str, tests: Tests, *thresholds: str) -> Claim:
    """A claim beyond one device, judged by ``module:function`` of the claims package against
    ``thresholds``, on what ``experiment`` (a
    :class:`~gpuconcepts.claims.plan.PartExperiment` of
    :mod:`~gpuconcepts.claims.distributed`) reads of a distributed run's report."""
    path, needs = f"gpuconcepts.claims.{judge}", f"gpuconcepts.claims.distributed:{experiment}"
    return Claim(path, "distributed", "distributed", tests, needs, thresholds)


def _roofline(measured_by: str) -> Claim:
    """A roofline claim, read from a kernel that ``measured_by``'s experiment times beside
    its roof's reference."""
    return _core(
        "roofline:judge_roles", "roofline", "bound", "ROOF_MIN_SHARE", measured_by=measured_by
    )


_EFFECT, _BYTES = "DIRECTION_MIN_EFFECT", ("BYTES_LOW", "BYTES_HIGH")
_ATTENTION = ("ATTENTION_EXPONENT", "ATTENTION_EXPONENT_TOLERANCE")
# bytes counted on the loopback interface
_TRAFFIC = _dist("collectives:traffic_claim", "EACH_COLLECTIVE", "fact", *_BYTES)

CLAIMS: dict[str, Claim] = {
    "dlrm-random-vs-sequential": _core("dlrm:judge_dlrm_lookups", "dlrm", "direction", _EFFECT),
    "mlp-batch-trend": _core("mlp:judge_mlp_trend", "mlp", "direction", _EFFECT, "MLP_MIN_TREND"),
    # where the knee lies is the book's (the post says only that large batches "can make
    # computation the dominant cost", which the roofline-mlp claims test): the model's
    "mlp-crossover": _core("mlp:judge_mlp_crossover", "mlp", "model", "PREDICTION_FACTOR"),
    "cnn-weight-sharing": _core("cnn:judge_weight_sharing", "cnn", "fact"),
    "cnn-dense-vs-depthwise": _core("cnn:judge_conv_vs_depthwise", "cnn", "direction", _EFFECT),
    "rnn-linear-in-S": _core(
        "rnn:judge_rnn_length", "rnn", "exponent", "RNN_EXPONENT", "RNN_EXPONENT_TOLERANCE"
    ),
    "rnn-loop-vs-gemm": _core(
        "rnn_steps:judge_rnn_loop_vs_gemm",
        "rnn",
        "direction",
        "RNN_MIN_LOOP_SLOWDOWN",
        measured_by="rnn",
    ),
    "rnn-batch-vs-critical-path": _core(
        "rnn_steps:judge_rnn_batch",
        "rnn",
        "direction",
        "RNN_MIN_THROUGHPUT_GAIN",
        "RNN_MIN_LATENCY_RATIO",
        measured_by="rnn",
    ),
    "attention-quadratic": _core(
        "transformer:judge_attention_exponent", "transformer", "exponent", *_ATTENTION
    ),
    "attention-doubling": _core(
        "transformer:judge_attention_doubling", "transformer", "exponent", *_ATTENTION
    ),
    "prefill-vs-decode": _core(
        "transformer:judge_prefill_vs_decode", "transformer", "direction", _EFFECT
    ),
    "kv-cache-exact": _core(
        "transformer:judge_kv_cache", "transformer", "fact", "KV_CACHE_TOLERANCE"
    ),
    "roofline-dlrm-random": _roofline("dlrm"),
    "roofline-mlp-small-batch": _roofline("mlp"),
    "roofline-mlp-large-batch": _roofline("mlp"),
    "roofline-cnn-conv": _roofline("cnn"),
    "roofline-cnn-depthwise": _roofline("cnn"),
    "roofline-transformer-prefill": _roofline("transformer"),
    "roofline-transformer-decode": _roofline("transformer"),
    # the post says nothing of a backward pass, a decode step's floor, sharded lookups or
    # pipelines: every claim from here on but the facts is the book's own, the model's
    "backward-pass": _whole(
        "wholemodel:judge_backward",
        "BACKWARD",
        "model",
        "BACKWARD_MIN_TIME_RATIO",
        "BACKWARD_MAX_TIME_RATIO",
        "BACKWARD_FLOP_TOLERANCE",
    ),
    "decode-knee": _whole("decode:judge_decode_knee", "DECODE", "model", "DECODE_KNEE_FACTOR"),
    "decode-floor": _whole(
        "decode:judge_decode_floor",
        "DECODE_CACHED",
        "model",
        "DECODE_FLOOR_MIN_RATIO",
        "DECODE_FLOOR_MAX_RATIO",
        "DECODE_MIN_WEIGHT_CACHE_MULTIPLE",
    ),
    "decode-long-context": _whole(
        "decode:judge_decode_long_context",
        "LONG_DECODE",
        "model",
        "DECODE_LONG_KNEE_FACTOR",
        "DECODE_LONG_MIN_CACHE_MULTIPLE",
    ),
    "training-memory": _whole(
        "wholemodel:judge_training_memory",
        "TRAINING",
        "fact",
        "TRAINING_MEMORY_MIN_RATIO",
        "TRAINING_MEMORY_MAX_RATIO",
    ),
    "traffic-all-reduce": _TRAFFIC,
    "traffic-table-wise-lookup": _TRAFFIC,
    "traffic-row-wise-lookup": _TRAFFIC,
    "traffic-column-wise-lookup": _TRAFFIC,
    "traffic-two-way-tensor-parallel-mlp": _TRAFFIC,
    "traffic-pipeline": _TRAFFIC,
    "allreduce-grows-with-w": _dist(
        "collectives:allreduce_growth_claim", "GROWTH", "fact", *_BYTES
    ),
    "rowwise-more-than-tablewise": _dist("collectives:rowwise_claim", "LOOKUPS", "fact", *_BYTES),
    "tablewise-columnwise-same-exchange": _dist(
        "collectives:same_exchange_claim", "PAIRED_LOOKUPS", "model", "SAME_EXCHANGE_FACTOR"
    ),
    "alpha-beta-predicts": _dist(
        "collectives:alpha_beta_claim", "FIT", "model", "ALPHA_BETA_FACTOR"
    ),
    "pipeline-bubble": _dist(
        "distributed:bubble_claim",
        "PIPELINES",
        "model",
        "BUBBLE_MARGIN",
        "PREDICTION_FACTOR",
        "PIPELINE_MAX_SLOWDOWN",
    ),
    "pipeline-bubble-shrinks": _dist(
        "distributed:bubble_sweep_claim",
        "PIPELINE_SWEEP",
        "model",
        "BUBBLE_MARGIN",
        "PIPELINE_MAX_SLOWDOWN",
    ),
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


def anchor(key: str) -> str:
    """The label that marks the claim ``key`` on its page (:attr:`Claim.page`), which the
    claims appendix links to: ``claim-`` and the key, in lower case as Sphinx writes every
    label and HTML id (``{ref}`claim-rnn-linear-in-s``` in MyST, ``#claim-rnn-linear-in-s`` in
    the built page).

    >>> anchor("rnn-linear-in-S"), CLAIMS["rnn-linear-in-S"].page
    ('claim-rnn-linear-in-s', 'rnn.md')
    """
    if key not in CLAIMS:
        raise GpuConceptsError(f"claim key {key!r} is not registered; known: {', '.join(CLAIMS)}")
    return f"claim-{key}".lower()


def judge(key: str) -> Callable[..., Any]:
    """The function that judges the claim ``key`` (imported now)."""
    if key not in CLAIMS:
        raise GpuConceptsError(f"claim key {key!r} is not registered; known: {', '.join(CLAIMS)}")
    found: Callable[..., Any] = _imported(CLAIMS[key].judge)
    return found


def experiments() -> tuple[Any, ...]:
    """The experiments the core claims need (:attr:`Claim.experiment`, imported now), each
    once, in the book's order: what a run measures for them, and how each hands its judges
    what they read."""
    paths = dict.fromkeys(c.experiment for c in CLAIMS.values() if c.kind == "core")
    return tuple(_imported(path) for path in paths if path)


def dispatch(kind: Kind) -> tuple[tuple[Callable[..., Any], Any], ...]:
    """Each judge of the claims of ``kind`` with the experiment it needs (both imported now),
    in the book's order; entries that share both (the traffic claims, the roofline claims of
    one experiment) give one pair, judged once. Judging loops over them: the core claims in
    :func:`~gpuconcepts.claims.experiments.judge_claims`, the others in
    :func:`~gpuconcepts.claims.plan.judged_part`.

    >>> [(j.__name__, e.name) for j, e in dispatch("whole model")][:2]
    [('judge_backward', 'backward against forward'), ('judge_decode_knee', 'decode sweep')]
    """
    pairs = dict.fromkeys((c.judge, c.experiment) for c in CLAIMS.values() if c.kind == kind)
    return tuple((_imported(j), _imported(e)) for j, e in pairs if e)
