"""Beyond one device: sharded tables, collectives, pipeline bubbles, ZeRO, all-to-all
traffic of the sharding schemes, tensor and expert parallelism.

Part of the catalogue (:mod:`gpuconcepts.formulas`), in the book's order."""

from __future__ import annotations

import sympy as sp

from gpuconcepts.formula import Formula, product, ratio, total
from gpuconcepts.symbols import sym
from gpuconcepts.units import FLOPS_PER_MAC

(
    N,
    d,
    s,
    B,
    d_in,
    d_out,
    S,
    W,
    n_params,
    p,
    m,
    n_tables,
    t_stage,
    t_msg,
    N_d,
    stage,
    k_opt,
    v,
    n_tokens,
    top_k,
) = (
    sym(n)
    for n in (
        "N",
        "d",
        "s",
        "B",
        "d_in",
        "d_out",
        "S",
        "W",
        "n_params",
        "p",
        "m",
        "n_tables",
        "t_stage",
        "t_msg",
        "N_d",
        "stage",
        "k_opt",
        "v",
        "n_tokens",
        "top_k",
    )
)

# -- Beyond one device ----------------------------------------------------------------------
sharded_table_memory = Formula(
    "sharded_table_memory",
    ratio(product(N, d, s), W),
    kind="bytes",
    lhs=r"\text{Memory}_{\text{device}}",
    summary="Memory per device of an embedding table split evenly over W devices "
    "(row-wise, or table-wise over W equal tables).",
    doc=r"""
    The post's 51.2 GB table over eight devices:

    >>> sharded_table_memory(N=100_000_000, d=128, s=4, W=8)
    6400000000
    >>> sharded_table_memory.worked(N=100_000_000, d=128, s=4, W=8)
    '\\frac{N d s}{W} = \\frac{100{,}000{,}000 \\times 128 \\times 4}{8} = 6{,}400{,}000{,}000'
    """,
)

ring_allreduce_bytes = Formula(
    "ring_allreduce_bytes",
    ratio(product(2, total(W, -1), n_params, s), W),
    kind="bytes",
    lhs=r"\text{Bytes}_{\text{all-reduce}}",
    summary="Bytes each device sends in a ring all-reduce of n_params values of s bytes: "
    "W - 1 steps of reduce-scatter and W - 1 of all-gather, each moving 1/W of the buffer.",
    doc="""
    The total is the same on every device and never reaches 2 n_params s: a 100-million
    parameter FP32 gradient costs each of 8 devices 700 MB, each of 2 devices 400 MB.

    >>> ring_allreduce_bytes(n_params=100_000_000, s=4, W=8)
    700000000
    >>> ring_allreduce_bytes(n_params=100_000_000, s=4, W=2)
    400000000
    """,
)

pipeline_bubble_fraction = Formula(
    "pipeline_bubble_fraction",
    ratio(total(p, -1), total(m, p, -1)),
    kind="count",
    lhs=r"\text{Bubble}",
    summary="Fraction of a pipeline's time each stage sits idle when a batch is cut into m "
    "micro-batches over p stages (GPipe schedule, equal stage times).",
    doc="""
    Each stage waits p - 1 slots for the first micro-batch and idles p - 1 slots after its
    last one, out of m + p - 1 slots in all. More micro-batches shrink the bubble:

    >>> pipeline_bubble_fraction(p=4, m=4)
    0.42857142857142855
    >>> round(pipeline_bubble_fraction(p=4, m=32), 3)
    0.086
    """,
)


pipeline_bubble_with_messages = Formula(
    "pipeline_bubble_with_messages",
    ratio(
        total(product(total(p, -1), t_stage), product(total(m, p, -2), t_msg)),
        total(product(total(m, p, -1), t_stage), product(total(m, p, -2), t_msg)),
    ),
    kind="count",
    lhs=r"\text{Bubble}_{\text{msg}}",
    summary="Fraction of a GPipe pipeline's time each stage sits idle when every micro-batch "
    "reaches a stage as a message of time t_msg that the stage receives only once it has "
    "finished the micro-batch before (m micro-batches, p stages of t_stage each).",
    doc="""
    A stage after the first takes each micro-batch in two steps: it receives it (t_msg), then
    works on it (t_stage). The last stage finishes after the p - 1 stages before it have each
    passed the first micro-batch on, and then m micro-batches of t_msg + t_stage: the whole
    pipeline lasts (m + p - 1)·t_stage + (m + p - 2)·t_msg, of which each stage works
    m·t_stage. Messages that cost next to nothing give :data:`pipeline_bubble_fraction`
    (3/7 at p = m = 4):

    >>> round(pipeline_bubble_with_messages(p=4, m=4, t_stage=1, t_msg=1e-9), 6)
    0.428571

    Costly ones keep an idle share that more micro-batches cannot remove,
    t_msg / (t_stage + t_msg). Two stages of 3.8 ms and messages of 0.6 ms, at m = 8 (GPipe
    alone says 0.111):

    >>> round(pipeline_bubble_with_messages(p=2, m=8, t_stage=3.8e-3, t_msg=0.6e-3), 3)
    0.221
    """,
)


zero_memory_per_device = Formula(
    "zero_memory_per_device",
    sp.Piecewise(
        (product(total(2, 2, k_opt), n_params), sp.Eq(stage, 0)),
        (total(product(4, n_params), ratio(product(k_opt, n_params), N_d)), sp.Eq(stage, 1)),
        (
            total(product(2, n_params), ratio(product(total(2, k_opt), n_params), N_d)),
            sp.Eq(stage, 2),
        ),
        (ratio(product(total(2, 2, k_opt), n_params), N_d), sp.Eq(stage, 3)),
    ),
    kind="bytes",
    lhs=r"\text{Memory}_{\text{ZeRO}}",
    summary="Model-state bytes per device under ZeRO over N_d data-parallel devices: 16-bit "
    "weights (2), 16-bit gradients (2) and k_opt optimizer bytes per parameter, the later ones "
    "partitioned from stage 1, 2 and 3 on.",
    doc=r"""
    Rajbhandari et al. (2020), figure 1: stage 1 partitions the optimizer states, stage 2 also
    the gradients, stage 3 also the weights; stage 0 is plain data parallelism, every device
    holding all 2 + 2 + k_opt bytes per parameter (:data:`adam_training_memory` when
    k_opt = 12: fp32 master weights and Adam's two moments). The paper calls k_opt K; here K
    is a convolution's kernel side. Activations and buffers come on top. The paper's example,
    7.5 billion parameters over 64 devices (120 GB, 31.4 GB, 16.6 GB, 1.88 GB):

    >>> [zero_memory_per_device(n_params=7_500_000_000, N_d=64, stage=z, k_opt=12)
    ...  for z in range(4)]
    [120000000000, 31406250000, 16640625000, 1875000000]
    >>> zero_memory_per_device.worked(n_params=7_500_000_000, N_d=64, stage=1, k_opt=12)
    '4 n_{params} + \\frac{k_{opt} n_{params}}{N_{d}} = 4 \\times 7{,}500{,}000{,}000 + \\frac{12 \\times 7{,}500{,}000{,}000}{64} = 31{,}406{,}250{,}000'
    """,
)

pipeline_bubble_fraction_interleaved = Formula(
    "pipeline_bubble_fraction_interleaved",
    ratio(total(p, -1), product(v, m)),
    kind="count",
    lhs=r"\text{Bubble}_{\text{interleaved}}",
    summary="Idle time of a pipeline over its ideal (bubble-free) time, for p stages, m "
    "micro-batches and v model chunks per device (Megatron's interleaved 1F1B schedule).",
    doc=r"""
    Narayanan et al. (2021) divide the bubble, (p - 1) slots of one chunk, by the ideal time
    of m micro-batches; with v chunks per device each slot is v times shorter, so the bubble
    shrinks v-fold (at the price of v times more messages between stages). Two conventions:
    :data:`pipeline_bubble_fraction` divides the same idle time by the *whole* time,
    ideal plus bubble, so it stays below 1; this one divides by the ideal time alone and can
    pass 1. For v = 1 they convert as b / (1 - b): at p = m = 4 the bubble is 3/7 of the
    whole time and 3/4 of the ideal time.

    >>> pipeline_bubble_fraction_interleaved(p=4, m=4, v=1)
    0.75
    >>> pipeline_bubble_fraction_interleaved(p=4, m=4, v=2)
    0.375
    """,
)

_ALLTOALL_ASSUMPTIONS = """
    Assumptions shared by the three sharding schemes: a global batch of B samples, split
    evenly as B/W samples per device for the dense layers that follow (data parallel); each
    sample looks up L rows in each of n_tables tables of width d and sum-pools them; every
    device already holds the indices it needs (the index exchange, 8 bytes per id, is not
    counted). Only the embedding rows crossing between devices in the forward pass are
    counted, as bytes each device sends; the backward pass sends the same amount of
    gradients back. L does not appear: pooling makes one row per sample and table, whatever L.
"""

tablewise_alltoall_bytes = Formula(
    "tablewise_alltoall_bytes",
    ratio(product(total(W, -1), B, n_tables, d, s), W**2),
    kind="bytes",
    lhs=r"\text{Bytes}_{\text{table-wise}}",
    summary="Bytes each device sends in the all-to-all of a table-wise sharded embedding "
    "lookup: every device owns n_tables/W whole tables and sends their pooled rows to the "
    "devices that own the samples.",
    doc=_ALLTOALL_ASSUMPTIONS
    + """
    A device owns n_tables/W tables (n_tables a multiple of W) and pools them for all B
    samples; it keeps the B/W rows of its own samples and sends the other (W - 1) B/W.

    >>> tablewise_alltoall_bytes(B=2048, n_tables=8, d=128, s=4, W=4)
    1572864
    """,
)

rowwise_alltoall_bytes = Formula(
    "rowwise_alltoall_bytes",
    ratio(product(total(W, -1), B, n_tables, d, s), W),
    kind="bytes",
    lhs=r"\text{Bytes}_{\text{row-wise}}",
    summary="Bytes each device sends in the exchange of a row-wise sharded embedding lookup: "
    "every device holds N/W rows of every table and sends its partial sums to the devices "
    "that own the samples.",
    doc=_ALLTOALL_ASSUMPTIONS
    + """
    A device pools the rows it holds for every sample of every table (a partial sum, full
    width d) and sends the partial sums of other devices' samples, which reduce them (a
    reduce-scatter). With L at least W a bag touches every device, so no partial sum is
    empty; TorchRec sends them all whatever L. That is W times the table-wise traffic:

    >>> rowwise_alltoall_bytes(B=2048, n_tables=8, d=128, s=4, W=4)
    6291456
    """,
)

columnwise_alltoall_bytes = Formula(
    "columnwise_alltoall_bytes",
    ratio(product(total(W, -1), B, n_tables, d, s), W**2),
    kind="bytes",
    lhs=r"\text{Bytes}_{\text{column-wise}}",
    summary="Bytes each device sends in the all-to-all of a column-wise sharded embedding "
    "lookup: every device holds d/W columns of every table and sends its pooled slices to "
    "the devices that own the samples.",
    doc=_ALLTOALL_ASSUMPTIONS
    + """
    A device pools its d/W columns for every sample of every table and sends the slices of
    the other (W - 1) B/W samples (d a multiple of W). The bytes equal the table-wise ones;
    what changes is that every device does the same work even when tables differ in size.

    >>> columnwise_alltoall_bytes(B=2048, n_tables=8, d=128, s=4, W=4)
    1572864
    """,
)

tensor_parallel_mlp_bytes = Formula(
    "tensor_parallel_mlp_bytes",
    ratio(product(4, total(W, -1), B, S, d, s), W),
    kind="bytes",
    lhs=r"\text{Bytes}_{\text{tensor-parallel}}",
    summary="Bytes each device sends per training step of one Megatron tensor-parallel MLP "
    "block: one ring all-reduce of the B S d output in the forward pass and one of the input "
    "gradient in the backward pass.",
    doc="""
    The first weight matrix is split by columns and the second by rows, so each device
    computes a partial output that one all-reduce of B·S·d values of s bytes completes; the
    backward pass all-reduces the gradient of the block's input, the same size. Each ring
    all-reduce sends 2 (W - 1)/W of its buffer per device, hence the 4. The post's Q17
    sizes (B=2, S=1000, d=512, FP16) split over two devices:

    >>> tensor_parallel_mlp_bytes(B=2, S=1000, d=512, s=2, W=2)
    4096000
    """,
)

pipeline_activation_bytes = Formula(
    "pipeline_activation_bytes",
    product(B, d, s),
    kind="bytes",
    lhs=r"\text{Bytes}_{\text{stage}}",
    summary="Bytes each pipeline stage but the last sends forward per batch: its output "
    "activations, B rows of d values of s bytes, in m micro-batches of B/m rows.",
    doc="""
    Cutting the batch into micro-batches does not change the bytes, only how many messages
    carry them. 2048 rows of width 1024 in FP16:

    >>> pipeline_activation_bytes(B=2048, d=1024, s=2)
    4194304
    """,
)

moe_alltoall_bytes = Formula(
    "moe_alltoall_bytes",
    ratio(product(n_tokens, top_k, d, s, total(W, -1)), W),
    kind="bytes",
    lhs=r"\text{Bytes}_{\text{MoE all-to-all}}",
    summary="Bytes each device sends to dispatch its tokens to the experts of one "
    "mixture-of-experts layer spread over W devices (expert parallelism).",
    doc=r"""
    Each of the n_tokens tokens on a device goes to top_k experts as a vector of d values of
    s bytes; with the experts spread evenly over W devices and routing balanced, a fraction
    (W - 1)/W of those copies lives on another device. The combine sends the same bytes back,
    and the backward pass both again. It is DLRM's table-wise all-to-all
    (:data:`tablewise_alltoall_bytes`) with tokens for samples and experts for tables, except
    that nothing is pooled before it is sent: every routed copy crosses whole. Mixtral-8x7B's
    width (d = 4,096, top-2), 4,096 tokens per device in bf16, 8 experts on 8 devices:

    >>> moe_alltoall_bytes(n_tokens=4096, top_k=2, d=4096, s=2, W=8)
    58720256
    """,
)

grouped_mm_flops = Formula(
    "grouped_mm_flops",
    product(FLOPS_PER_MAC, n_tokens, top_k, d_in, d_out),
    kind="FLOPs",
    lhs=r"\text{FLOPs}_{\text{grouped}}",
    summary="FLOPs of a grouped matmul as a mixture-of-experts layer runs it: each of n_tokens "
    "tokens through the d_in × d_out matrix of each of its top_k experts.",
    doc="""
    One grouped call (``torch._grouped_mm``) multiplies every expert's rows by that expert's
    matrix; the groups differ in size, but together they hold n_tokens·top_k rows, so the
    count is a dense layer's (:data:`mlp_flops`) over all routed rows. ``analyze`` reads the
    rows from the operands' shapes (the jagged dimension's total, or groups × rows). A top-2
    layer of 8 experts at Mixtral's width (4,096 → 14,336), 4,096 tokens, one of its three
    matrices:

    >>> grouped_mm_flops(n_tokens=4096, top_k=2, d_in=4096, d_out=14336)
    962072674304
    >>> grouped_mm_flops(n_tokens=4096, top_k=2, d_in=4096, d_out=14336) == mlp_flops(
    ...     B=4096 * 2, d_in=4096, d_out=14336)
    True
    """,
)
