"""Every threshold a verdict uses, fixed here before any experiment runs.

A verdict is ``measured value`` compared with one of these constants; nothing is tuned
after seeing a result. Each constant carries the reason for its value. A change made after a
run had been seen is a dated entry of the change log, ``docs/changes.toml`` (read by
:mod:`gpuconcepts.changelog`, shown in the book's appendix "changes"): the docstring keeps the
rule and a one-line reason, the log what changed, why and its effect on the runs. Every
claim's thresholds are here, the core claims', the whole model's
(:mod:`~gpuconcepts.claims.wholemodel`) and those beyond one device
(:mod:`~gpuconcepts.claims.collectives`, :mod:`~gpuconcepts.claims.distributed`), which import
theirs by name. The docs print them
from here, so the page and the code cannot disagree.

>>> PREDICTION_FACTOR, ATTENTION_EXPONENT, ATTENTION_EXPONENT_TOLERANCE
(2.0, 2.0, 0.3)

A claim states a pass region built from these: it holds only when the whole measured interval
(:data:`INTERVAL_COVERAGE`) lies inside.
"""

from __future__ import annotations

import ast
from pathlib import Path
from types import ModuleType

# -- intervals -------------------------------------------------------------------------------
INTERVAL_COVERAGE = 0.9
"""A claim's measured value comes with the central 90% of its bootstrap values: each
measurement's repetitions resampled, the median taken, the claim's quantity computed again.
A claim holds only when that whole interval lies in its pass region."""

INTERVAL_RESAMPLES = 400
"""Bootstrap resamples behind each interval (seeded: a saved run is judged the same way every
time). 400 puts the 5th and 95th percentiles within about a percentile of their limit."""

MIN_BLOCKS = 3
"""A live run times every comparison in at least 3 independent blocks (each prepared and warmed
up on its own, at another moment), and its intervals resample the blocks first, then the
rounds inside them: an interval from one block sees only the noise of that moment, and one
H200 claim read 0.852 [0.845, 0.86] in one run and 0.737 [0.722, 0.751] in the next (issue 45).
Three is the fewest from which a bootstrap over blocks can tell agreeing blocks from
disagreeing ones."""

WRONG_VERDICT_RATE = 0.05
"""The stated error rate of a verdict: a claim's interval (:data:`INTERVAL_COVERAGE`, 90%)
misses its true value on a given side at most 5% of the time, so a claim whose true value lies
in its pass region is called "fails" (or one outside it "holds") at most 5% of the time. This
holds because every comparison takes a fixed number of rounds, set before it runs
(``compare_rounds`` in ``compare_blocks`` blocks, ``conf/presets.toml``), whatever the rounds
show; runs recorded before 2026-12-07 added rounds until a claim was decided (optional
stopping), which raises that rate above what the interval's coverage says."""

# -- predictions -----------------------------------------------------------------------------
PREDICTION_FACTOR = 2.0
"""A claim that predicts a number passes only within 2x of it: its pass region lies within
[p/2, 2p] and leaves the alternative out (issue 36). A prediction is a model, not a fit: a
factor of 2 leaves room for what the once-measured ceilings do not see (a kernel at half its
roof is a finding, not a failure), and still tells a right prediction from one that is only
on the right side of the alternative."""

# -- the post's bounds (the roofline claims) ---------------------------------------------------
ROOF_MIN_SHARE = 0.25
"""A kernel the post calls compute- or memory-bound is so when the roof that binds it is of
that kind (the verdict's kind) and it attains at least a quarter of that roof, and at most four
times it (a share beyond would beat the roof). A quarter is the factor that the memory system's
line granularity alone can cost a kernel counted by its minimal bytes (a 16-byte row read in a
64-byte line); below it, something the roof does not see sets the time. Fixed 2026-12-07 after
the runs had been seen (docs/changes.toml): it replaced a region around a time prediction."""

DIRECTION_MIN_EFFECT = 2.0
"""A direction the post states with a qualifier ("much lower", "much slower", "raises",
"far lower", "in parallel") holds when the ratio between the two ends is at least 2 in the
stated direction: at most half the speed, as :data:`RNN_MIN_LOOP_SLOWDOWN` has said since
the first run. Fixed 2026-12-07 after the runs had been seen (docs/changes.toml): it
replaced regions around time predictions."""

# -- MLP -------------------------------------------------------------------------------------
MLP_MIN_TREND = 0.8
"""Spearman rank correlation of achieved FLOP/s against batch size must be at least 0.8: FLOP/s
"rises with B" over the sweep, while one noisy point out of order is still tolerated."""

# -- RNN -------------------------------------------------------------------------------------
RNN_MIN_LOOP_SLOWDOWN = 2.0
"""The RNN page calls the explicit step loop "much slower" than one GEMM with the same FLOPs
from 2x ("at most half the speed"). From 2026-12-06 to 2026-12-07 the claim passed within
PREDICTION_FACTOR of the ratio the measured ceilings predict, so that 331x failed to be "much
slower"; it tests the post's direction again, and the model's ratio is scored in ledger 2
(the change log, docs/changes.toml, dates both changes)."""

RNN_MIN_THROUGHPUT_GAIN = 2.0
"""Across the batch sweep, tokens per second must rise at least 2x: more batch fills the machine.
With k times the batch, the time per step may therefore grow at most k/2 times; the alternative
"the machine was already full" (time per step ∝ B, k times) falls outside."""

RNN_MIN_LATENCY_RATIO = 0.8
"""Time per step (the critical path) at the largest batch must stay at least 0.8x its value at the
smallest batch: a per-step time that fell by more than 20% would mean batch shortened the
dependency chain, which the recurrence forbids. The alternative "time per step ∝ 1/B" falls
far below."""

# -- Transformer -------------------------------------------------------------------------------
ATTENTION_EXPONENT = 2.0
"""attention_flops = 4 B S² d: time should grow like S**2 for large S."""

RNN_EXPONENT = 1.0
"""An RNN's time grows linearly with the sequence length: the exponent of time in S is 1."""

RNN_EXPONENT_TOLERANCE = 0.3
"""The exponent of the RNN's time fitted over the S sweep must lie within 0.3 of 1, the
tolerance attention's exponent has (:data:`ATTENTION_EXPONENT_TOLERANCE`). The alternatives,
a cost that does not grow with S (exponent 0, the steps in parallel) and a quadratic one (2),
fall outside. Fixed 2026-12-07 (docs/changes.toml): it replaced a region around a predicted
cost per step."""

ATTENTION_EXPONENT_TOLERANCE = 0.3
"""The exponent fitted on the upper half of the S sweep must be within 0.3 of 2. A linear cost
(exponent 1) is far outside; memory effects at large S move it by a tenth or two. Doubling S must
then cost between 2**1.7 and 2**2.3 times (3.25x to 4.92x), the same tolerance on one step."""

# -- KV cache ----------------------------------------------------------------------------------
KV_CACHE_TOLERANCE = 0.0
"""The measured cache size must equal kv_cache_memory exactly, at every decode step (the largest
relative difference is 0)."""

# -- Whole model (claims/wholemodel.py) ----------------------------------------------------
BACKWARD_MIN_TIME_RATIO = 1.4
"""The backward pass of a linear stack must take at least 1.4x its forward pass. It runs two
products of the forward's size (dX and dW), so 2x at equal speed; 1.4x allows its products
to run 30% faster than the forward ones, and leaves out the alternative "backward costs one
forward" (1x)."""

BACKWARD_MAX_TIME_RATIO = 3.0
"""The backward pass must take at most 3x its forward pass: its transposed products may run a
third slower than the forward ones (2 × 1.5 = 3); beyond that something other than the two
products would dominate."""

BACKWARD_FLOP_TOLERANCE = 0
"""FlopCounterMode's count of the backward pass must equal training_flops_per_token −
forward_flops_per_token exactly: both count the same matrix products."""

DECODE_KNEE_FACTOR = 2.0
"""The measured decode knee (the batch at which a step's arithmetic costs as much as its read
of the weights) must lie within 2x of decode_compute_bound_batch at the measured peak and
the rate a batch-1 product reads the weights (PREDICTION_FACTOR). The alternative
"compute-bound from batch 1" (knee ≤ 1) and "memory-bound at every batch" (no knee) both fall
outside. The bound was 4x until 2026-12-06,
when the regions wider than 2x were narrowed (the change log, docs/changes.toml, says why)."""

DECODE_LONG_KNEE_FACTOR = 2.0
"""At a long context the measured decode knee must lie within 2x of the knee of the roofline
with the KV cache counted (decode_step_flops against decode_step_bytes at the measured peaks;
while the batch's intensity stays under the ridge point, that is the batch whose caches weigh as
much as the weights): PREDICTION_FACTOR. The alternative, the weights-only knee
decode_compute_bound_batch, must fall outside, or the claim is not visible. The bound was 4x
until 2026-12-06, when the regions wider than 2x were narrowed (the change log,
docs/changes.toml, says why)."""

DECODE_LONG_MIN_CACHE_MULTIPLE = 2.0
"""The long-context knee is visible only when the KV caches of the sweep's largest batch are at
least twice the last-level cache: otherwise the caches could be read from it, not from DRAM."""

DECODE_FLOOR_MIN_RATIO = 0.5
"""A decode step at batch 1 must take at least half of decode_seconds_lower_bound at the
measured bandwidth. The bound reads every weight from DRAM; a last-level cache that keeps part
of the weights between steps can beat it by the cached share, under half when the weights are
at least twice the cache (a condition of the claim)."""

DECODE_FLOOR_MAX_RATIO = 2.0
"""A decode step at batch 1 must take at most 2x decode_seconds_lower_bound (PREDICTION_FACTOR):
reading the weights sets the time. The alternative "the step's FLOPs at the peak set the time"
gives a ratio of 2/(s × ridge point), far below the pass region. The bound was 3x until
2026-12-06, when the regions wider than 2x were narrowed. The floor is read against a batch-1
product through the weights, on CUDA a step replayed as a CUDA graph. The change log
(docs/changes.toml) dates each change and says why."""

DECODE_MIN_WEIGHT_CACHE_MULTIPLE = 2.0
"""The decode floor is visible only when the weights are at least twice the last-level cache."""

TRAINING_MEMORY_MIN_RATIO = 0.8
"""The peak memory of an Adam training step must be at least 0.8x adam_training_memory plus the
activations of every layer (layer_activation_memory). Below, the states the formula counts
would not all be there; the alternative "weights and gradients only" (8 of the 16 bytes per
parameter) falls below when the states dominate, as they do at the sizes run."""

TRAINING_MEMORY_MAX_RATIO = 1.5
"""The peak memory of an Adam training step must be at most 1.5x the formula: the logits, the
loss and the allocator's temporaries come on top of it, but not as much again as half of it."""

# -- Beyond one device (claims/collectives.py, claims/distributed.py) -------------------------
BYTES_LOW = 0.98
"""Measured loopback bytes may fall at most 2 % short of the formula: the interface counts
every byte the processes send, so fewer means the formula counts bytes that never move."""

BYTES_HIGH = 1.15
"""And exceed it by at most 15 %: TCP/IP headers add about 0.1 % to messages of hundreds of
kB (loopback frames are up to 64 kB), gloo adds a small header per message, and the barriers
that delimit a window are measured separately and taken off."""

ALPHA_BETA_FACTOR = 2.0
"""A time predicted by the latency-bandwidth fit must be within 2x of the measured one
(PREDICTION_FACTOR). The fit comes from ring all-reduces and is applied to all-to-alls, whose
message pattern differs. The bound was 3x until 2026-12-06, when the regions wider than 2x
were narrowed (the change log, docs/changes.toml, says why)."""

SAME_EXCHANGE_FACTOR = 1.4
"""Column-wise and table-wise all-to-alls of the same bytes in the same messages take the same
time when their exchange-time ratio lies within 1.4x of 1 either way. The alternative, time
following the rows sent (column-wise sends W times as many rows, each W times shorter), gives
ratio W; at W = 2, the smallest world, 1.4 is about half way to it on a log scale (√2). The
ratio is taken within paired rounds, so the drift of a shared machine cancels."""

BUBBLE_MARGIN = 0.5
"""The measured pipeline bubble passes when it lies within half the distance between the
prediction (GPipe's schedule with its messages priced) and the alternative (no overlap between
stages), on either side. The same half-way rule fixes the bubble sweep's pass region: the
fitted slope of the measured bubble against the predicted one lies within 0.5 of 1, half the
way to the slope 0 of a bubble that does not shrink with m, and as far above."""

PIPELINE_MAX_SLOWDOWN = 1.5
"""The bubble is only judged when each stage's work took at most 1.5x as long inside the
pipeline as alone. The formula assumes stages run side by side; when they share a core, their
work stretches and the idle time measures the scheduler, not the schedule."""


def described(module: ModuleType | None = None) -> list[tuple[str, float, str]]:
    """Every threshold as ``(name, value, reason)``, in the order written; with ``module`` (a
    claims module), only the thresholds it judges with: those it imports from here by name.

    The reason is the docstring under each constant, read from this module's source (as Sphinx
    autodoc does), so the book prints the same words as the code.

    >>> name, value, reason = described()[0]
    >>> name, value, reason.split(":")[0]
    ('INTERVAL_COVERAGE', 0.9, "A claim's measured value comes with the central 90% of its bootstrap values")
    >>> from gpuconcepts.claims import wholemodel
    >>> [name for name, _, _ in described(wholemodel)][:2]
    ['BACKWARD_MIN_TIME_RATIO', 'BACKWARD_MAX_TIME_RATIO']
    """
    tree = ast.parse(Path(__file__).read_text(encoding="utf-8"))
    out: list[tuple[str, float, str]] = []
    body = tree.body
    for node, following in zip(body, [*body[1:], None], strict=True):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            continue
        target = node.targets[0]
        if not (isinstance(target, ast.Name) and target.id.isupper()):
            continue
        doc = ""
        if (
            isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ):
            doc = " ".join(following.value.value.split())
        value = globals()[target.id]
        if module is not None and vars(module).get(target.id, None) is not value:
            continue
        if isinstance(value, int | float) and not isinstance(value, bool):  # not a label
            out.append((target.id, float(value), doc))
    return out
