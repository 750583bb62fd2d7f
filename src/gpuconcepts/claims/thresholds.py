"""Every threshold a verdict uses, fixed here before any experiment runs.

A verdict is ``measured value`` compared with one of these constants; nothing is tuned
after seeing a result. Each constant carries the reason for its value, and a change made
after a run had been seen is a dated ``*_CHANGES`` entry beside it (:func:`changes`). Every
claim's thresholds are here, the core claims', the whole model's
(:mod:`~gpuconcepts.claims.wholemodel`) and those beyond one device
(:mod:`~gpuconcepts.distributed.claims`), which import theirs by name. The docs print them
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

# -- predictions -----------------------------------------------------------------------------
PREDICTION_FACTOR = 2.0
"""A claim that predicts a number passes only within 2x of it: its pass region lies within
[p/2, 2p] and leaves the alternative out (issue 36). A prediction is a model, not a fit: a
factor of 2 leaves room for what the once-measured ceilings do not see (a kernel at half its
roof is a finding, not a failure), and still tells a right prediction from one that is only
on the right side of the alternative."""

MAX_DIRECTION_ONLY = 3
"""At most 3 claims may test only on which side of the alternative a measurement falls, with a
pass region wider than [p/2, 2p]; each says so in its text and is labelled in the registry
(issue 36). A claim that predicts no number has no factor to miss by, so they stay few."""

# -- MLP -------------------------------------------------------------------------------------
MLP_MIN_TREND = 0.8
"""Spearman rank correlation of achieved FLOP/s against batch size must be at least 0.8: FLOP/s
"rises with B" over the sweep, while one noisy point out of order is still tolerated."""

MLP_KNEE_CHANGES = (
    "2026-12-01: the measured crossover was the batch at which the layer's FLOP/s first reached "
    "half of the measured peak (the corner of the additive model F/P + Q/beta). On the dev CPU "
    "a 2048-wide layer levels off at about 60% of the peak, so half of the peak sat on the "
    "flat top of the curve, where the crossing is ill-conditioned: the quick run read 3.6x the "
    "prediction and the full run 4.5x (fails) with no change in the physics. It is now where "
    "the layer's own roofs meet (its plateau over its bandwidth at the smallest batch), which "
    "the smooth roofline puts exactly at the ridge point and which no flat part of the curve "
    "can move. The pass region (MLP_MAX_CROSSOVER_FACTOR) is unchanged."
)
"""Why the MLP crossover is read as it is, and when that changed."""

# The roofs' dated changes are data: docs/changes.toml (gpuconcepts.changelog), shown in the
# book's appendix.

# -- RNN -------------------------------------------------------------------------------------
RNN_MIN_LOOP_SLOWDOWN = 2.0
"""The RNN page calls the explicit step loop "much slower" than one GEMM with the same FLOPs
from 2x ("at most half the speed"). Since 2026-12-06 the claim rnn-loop-vs-gemm no longer
passes at 2x or more. It passes within PREDICTION_FACTOR of the ratio the measured ceilings
predict (see PREDICTION_CHANGES)."""

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
of the weights) must lie within 2x of decode_compute_bound_batch at the measured peaks
(PREDICTION_FACTOR; it was 4x until 2026-12-06, see PREDICTION_CHANGES). The alternative
"compute-bound from batch 1" (knee ≤ 1) and "memory-bound at every batch" (no knee) both fall
outside."""

DECODE_LONG_KNEE_FACTOR = 2.0
"""At a long context the measured decode knee must lie within 2x of the knee of the roofline
with the KV cache counted (decode_step_flops against decode_step_bytes at the measured peaks;
while the batch's intensity stays under the ridge point, that is the batch whose caches weigh as
much as the weights): PREDICTION_FACTOR, 4x until 2026-12-06 (see PREDICTION_CHANGES). The
alternative, the weights-only knee decode_compute_bound_batch, must fall outside, or the claim
is not visible."""

DECODE_LONG_MIN_CACHE_MULTIPLE = 2.0
"""The long-context knee is visible only when the KV caches of the sweep's largest batch are at
least twice the last-level cache: otherwise the caches could be read from it, not from DRAM."""

DECODE_FLOOR_MIN_RATIO = 0.5
"""A decode step at batch 1 must take at least half of decode_seconds_lower_bound at the
measured bandwidth. The bound reads every weight from DRAM; a last-level cache that keeps part
of the weights between steps can beat it by the cached share, under half when the weights are
at least twice the cache (a condition of the claim)."""

DECODE_FLOOR_MAX_RATIO = 2.0
"""A decode step at batch 1 must take at most 2x decode_seconds_lower_bound (PREDICTION_FACTOR;
3x until 2026-12-06, see PREDICTION_CHANGES): reading the weights sets the time. The
alternative "the step's FLOPs at the peak set the time" gives a ratio of 2/(s × ridge point),
far below the pass region."""

DECODE_FLOOR_CHANGES = (
    "2026-12-01: the decode floor was the weights at the bandwidth of a STREAM triad timed in "
    "the same rounds. A decode step at batch 1 streams its weights through matrix-vector "
    "products, which on the dev CPU read at a quarter to a half of the triad's rate (an MLP "
    "layer at batch 1 reached 31-46% of DRAM's roof): the quick run's step came out at 4.2x "
    "that floor (fails) on two threads and 2.2x on one, the full run's at 2.9x, so the verdict "
    "followed the thread count, not the physics. The floor is now read at the rate a batch-1 "
    "product through as many weight bytes as the model reaches in the same round: the "
    "machine's own roof for reading weights. The pass region is unchanged. "
    "2026-12-04: the first GPU run (an H200, eager PyTorch) judged the decode claims on "
    "Python's kernel launches, not on the GPU: a batch-1 step of the 461 MiB model took 1.66 ms "
    "against a 156 us floor (10.6x, fails), and the knee came out at batch 3,670 against 181. "
    "A step launches about a hundred kernels, microseconds of host time each, while reading "
    "its weights takes a tenth of a millisecond. On CUDA each step is now captured once as a "
    "CUDA graph and replayed, as servers run decode (DecodeSweep.graphed); a CPU runs as "
    "before. Pass regions unchanged."
)
"""Why the decode floor is read against the reference it is, and when that changed."""

GPU_SIZES_CHANGES = (
    "2026-12-04: the GPU's DLRM claims read batches of B = 32,768 bags of L = 2 rows at "
    "d = 128 (conf/presets.toml, [cuda-*.claims]): 32 MiB a batch, less than an H200's 60 MB "
    "L2, and two rows a bag, so the first GPU run timed the per-bag work rather than memory "
    "(the random lookup read 0.11x the triad's bandwidth, where the same kernel at the "
    "profile's 64 rows a bag read 0.36x). The bags now hold L = 32 rows at d = 128 (512 MiB a "
    "batch, 8x the L2; the same bytes at every width), on both GPU classes. Pass regions "
    "unchanged."
)
"""Sizes of the GPU's claim experiments changed after a GPU run, and why."""

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

# -- Beyond one device (distributed/claims.py) -----------------------------------------------
BYTES_LOW = 0.98
"""Measured loopback bytes may fall at most 2 % short of the formula: the interface counts
every byte the processes send, so fewer means the formula counts bytes that never move."""

BYTES_HIGH = 1.15
"""And exceed it by at most 15 %: TCP/IP headers add about 0.1 % to messages of hundreds of
kB (loopback frames are up to 64 kB), gloo adds a small header per message, and the barriers
that delimit a window are measured separately and taken off."""

ALPHA_BETA_FACTOR = 2.0
"""A time predicted by the latency-bandwidth fit must be within 2x of the measured one
(PREDICTION_FACTOR; 3x until 2026-12-06, see PREDICTION_CHANGES). The fit comes from ring
all-reduces and is applied to all-to-alls, whose message pattern differs."""

SAME_EXCHANGE_FACTOR = 1.4
"""Column-wise and table-wise all-to-alls of the same bytes in the same messages take the same
time when their exchange-time ratio lies within 1.4x of 1 either way. The alternative, time
following the rows sent (column-wise sends W times as many rows, each W times shorter), gives
ratio W; at W = 2, the smallest world, 1.4 is about half way to it on a log scale (√2). The
ratio is taken within paired rounds, so the drift of a shared machine cancels."""

BUBBLE_MARGIN = 0.5
"""The measured pipeline bubble passes when it lies within half the distance between the
GPipe prediction and the alternative (no overlap between stages), on either side. The same
half-way rule fixes the bubble sweep's pass region: the fitted slope of the measured bubble
against (p - 1)/(m + p - 1) lies within 0.5 of the predicted 1, half the way to the slope 0 of
a bubble that does not shrink with m, and as far above."""

PIPELINE_MAX_SLOWDOWN = 1.5
"""The bubble is only judged when each stage's work took at most 1.5x as long inside the
pipeline as alone. The formula assumes stages run side by side; when they share a core, their
work stretches and the idle time measures the scheduler, not the schedule."""

PREDICTION_CHANGES = (
    "2026-12-06: the roofline claims (roofline-*) predicted a share of 1 of the expected roof "
    "and passed between 30% and 110% of the peak FLOP/s (compute) or 0.2x and 1.5x the DRAM "
    "bandwidth (memory): regions 3.7x and 7.5x wide, so a decode step at a quarter of its roof "
    "'held' (issue 36). The prediction is now the share at the time the once-measured ceilings "
    "predict (claims.predict.predicted_seconds: the tightest of compute, each memory level, "
    "the GEMM sweep's product of the kernel's shape, the random-access sweep's line rate and "
    "the per-call floor), and the pass region is [p/2, 2p] (PREDICTION_FACTOR); the constants "
    "COMPUTE_MIN_PEAK_FRACTION, COMPUTE_MAX_PEAK_FRACTION, MEMORY_MIN_BANDWIDTH_RATIO and "
    "MEMORY_MAX_BANDWIDTH_RATIO are gone. Effect on the recorded runs, re-judged: the seven "
    "claims measure 0.77-1.19x their prediction on the EPYC (four had been under half of 1) "
    "and 0.57-1.14x on the H200 in bf16, all holding; in tf32 the large-batch MLP ran 8.3x "
    "faster than the GEMM sweep's product of its shape and decode at 0.1x its prediction, and "
    "both now fail where they had held. "
    "2026-12-06: the rate and time ratios between two kernels (mlp-batch-trend, "
    "cnn-dense-vs-depthwise, prefill-vs-decode, rnn-loop-vs-gemm) passed from a fixed floor "
    "(MLP_MIN_GAIN, CNN_MIN_FLOPS_RATIO, PREFILL_MIN_RATE_RATIO, RNN_MIN_LOOP_SLOWDOWN: 2x) to "
    "5x the roofline's ratio (RATE_RATIO_MAX_EXCESS) or without end: mlp-batch-trend held "
    "anywhere in [2, 44] on the EPYC, and rnn-loop-vs-gemm, predicted at 2.11 by the latency "
    "floor alone, held at 17.9. Each now predicts the ratio of the two kernels' times under "
    "the measured ceilings (predicted_seconds, with the GEMM sweep, the chain of per-operation "
    "floors and a call's floor) and passes within [p/2, 2p]. Effect, re-judged: on the EPYC "
    "1.2x, 1.87x, 1.02x and 1.56x their predictions (rnn-loop-vs-gemm had been 'not visible' "
    "at a predicted 1.43); on the H200 bf16 1.31x, 1.25x, 0.90x and 0.59x, all holding; in "
    "tf32 the batch trend (12.7x) and prefill-vs-decode (7.6x) fail, as the GEMM sweep of "
    "that run reached 49 TFLOP/s against a 410 TFLOP/s peak. "
    "2026-12-06: mlp-crossover compared the measured knee with the B where mlp_intensity meets "
    "the ridge point and passed within 4x (MLP_MAX_CROSSOVER_FACTOR): the EPYC's knee measured "
    "3.0x that B. Its prediction is now the knee of the layer's roofs as the measured ceilings "
    "predict them (the same construction as the measured knee, on predicted FLOP/s), within "
    "2x; the ridge's B is shown beside it. Effect: 1.20x on the EPYC, 1.37x on the H200 bf16, "
    "14x in tf32 (fails, the same GEMM sweep). "
    "2026-12-06: dlrm-random-vs-sequential predicted lookup_order_ratio (whole lines per random "
    "row) and passed from 2x without end; it was 'not visible' when the table was under 4x a "
    "last-level cache read from sysfs (DLRM_MIN_CACHE_MULTIPLE), which a cloud CPU reports as "
    "hundreds of MiB (issue 38). It now predicts the ratio of the two lookups' times under the "
    "measured ceilings, random rows at the random-access sweep's line rate for the table's "
    "level, and every row, consecutive or not, no faster than the sweep's smallest table "
    "served rows of its width (claims.predict.row_issue_seconds, a new mechanism measured "
    "apart: a gather issues rows one by one); it passes within 2x and is 'not visible' when "
    "that region holds 1. Effect: the EPYC 1.22x its prediction at 16-byte rows (holds); the "
    "H200 runs predict at most 1.4x at any width, measure 1.26x and 0.99x, and so are 'not "
    "visible' where they had failed against a predicted 4x. "
    "2026-12-06: four pass regions were wider than [p/2, 2p] and are narrowed to it, the "
    "models unchanged: DECODE_KNEE_FACTOR and DECODE_LONG_KNEE_FACTOR 4 -> 2, "
    "DECODE_FLOOR_MAX_RATIO 3 -> 2, ALPHA_BETA_FACTOR 3 -> 2, and the pipeline bubble's region "
    "(half the way to the alternative, BUBBLE_MARGIN) is cut to within 2x of its prediction "
    "(distributed/claims.py). Effect, re-judged: the EPYC's decode knee (2.99x its "
    "prediction) now fails and its alpha-beta check (1.52x, interval past 2) is undecided; "
    "the H200 bf16's alpha-beta check (2.17x) fails; the tf32 run's decode knee (3.6x) "
    "fails. The knee models are left as they were, to be improved by a mechanism measured "
    "apart, not by the width of their regions. "
    "2026-12-06: rnn-batch-vs-critical-path keeps its region (time per step at the largest "
    "batch between 0.8x and B_max/B_min ÷ 2 of the smallest's) and is labelled a direction-only "
    "claim (registry.CLAIMS, tests='direction'), the only one: the ceilings' chain roof does "
    "not see the steps inside a fused cuDNN kernel, so its time ratio predicted 0.49 on the "
    "H200 bf16 where 1.03 was measured. "
    "2026-12-06: a prediction now reads the memory level that holds a kernel's working set by "
    "the measured hierarchy (claims.predict.holding_level: DRAM after a flush, else the first "
    "measured level as large as its table or bytes), not always DRAM's; no recorded run's "
    "count moved. "
    "2026-12-06: rnn-linear-in-S fitted a log-log exponent of time in S over the upper half of "
    "the sweep and passed within 0.2 of 1 (RNN_EXPONENT, RNN_EXPONENT_TOLERANCE): a cost paid "
    "once per call reads as slower growth, and the claim failed at 0.709 on a 2-core Xeon and "
    "measured 0.852 and 0.737 on the H200 (issue 38). Time is now fitted as a fixed cost plus "
    "a cost per step (claims.fit.fit_affine, over the whole sweep), and the cost per step "
    "passes within [p/2, 2p] of the per-step cost of the times the measured ceilings predict "
    "(the chain of operations at the per-operation floor); the GEMM's cost per token is the "
    "alternative. Effect, re-judged with the chain's and fused kernels' products charged "
    "without their calls (docs/changes.toml, 2026-12-06, diagnoses): the EPYC 3.27 µs a step "
    "against 3.44 predicted, a 2-core Xeon's quick run 4.50 against 4.84, the H200 1.72 "
    "against 2.83 in bf16 (all hold) and 1.83 against 4.33 in tf32 (fails, 0.42x; that run's "
    "GEMM sweep is suspect, see above)."
)
"""Predictions made numbers a measurement can miss, and the pass regions that follow, dated."""


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


def changes(*modules: ModuleType) -> list[tuple[str, str]]:
    """Every change made to a claim after a run had been seen, as ``(name, entry)``: the
    constants of this module whose name ends in ``_CHANGES``, each a dated sentence with its
    reason, so that a reader sees what was tuned and why. ``modules`` are read too, for a
    change a module keeps beside its code (none today: each is written here), and a change
    is listed once however many of them import it.

    >>> [name for name, _ in changes()]
    ['MLP_KNEE_CHANGES', 'DECODE_FLOOR_CHANGES', 'GPU_SIZES_CHANGES', 'PREDICTION_CHANGES']
    >>> changes()[0][1][:11]
    '2026-12-01:'
    """
    found: dict[str, str] = {}
    for namespace in (globals(), *(vars(m) for m in modules)):
        for name, value in namespace.items():
            if name.endswith("_CHANGES") and isinstance(value, str):
                found.setdefault(name, value)
    return list(found.items())
