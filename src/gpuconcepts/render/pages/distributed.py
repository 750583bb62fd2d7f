"""Beyond one device: how many GPUs the post's embedding table needs, the bytes of each way to
shard it, data, tensor and pipeline parallelism, ZeRO, mixture-of-experts, the links between
devices, this build's distributed run and the exercises' answers. The run's part lives in
:mod:`~gpuconcepts.render.pages.distributed_measured`; the page glues it through
:func:`measured`.

>>> devices_needed(GPUS["H100 SXM"])
Devices(hold=1, train=3, fused=1)
>>> glue = splits()
>>> glue["rowwise_bytes"], glue["tablewise_bytes"]
('6,291,456 bytes (6.29 MB, 6 MiB)', '1,572,864 bytes (1.57 MB, 1.5 MiB)')
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from gpuconcepts import exercises as answers
from gpuconcepts import formulas, units
from gpuconcepts.distributed import quick_sizes
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.hardware import GPU, GPUS, INFINIBAND_NDR_BYTES_PER_S
from gpuconcepts.questions import question
from gpuconcepts.render import markdown_table, plots
from gpuconcepts.render.pages import Glue, Math
from gpuconcepts.render.pages.distributed_measured import measured
from gpuconcepts.render.text.distributed import fit_values

if TYPE_CHECKING:
    from gpuconcepts.results.distributed import DistributedReport
    from gpuconcepts.run import Run

__all__ = [  # what the page (docs/distributed.md) and figures.py read from the page's module
    "PIPELINE_STAGES",
    "claim_columns",
    "devices",
    "exercises",
    "links",
    "measured",
    "parallelism",
    "splits",
]

TABLE = question(10).steps[0]
"""The post's 100-million-row embedding table (its bytes are the step's value)."""
N, D, S = (TABLE.values[k] for k in ("N", "d", "s"))

DENSE_ADAM_COPIES = 4
"""Dense Adam keeps the table, its dense gradient and two moment estimates."""
FUSED_ADAM_COPIES = 3
"""Fused Adam (TorchRec over FBGEMM's TBE kernels) updates inside the backward pass: the table
and its two moments, no table-sized gradient."""
ROWWISE_STATE = formulas.embedding_memory(N=N, d=1, s=4)
"""Row-wise Adagrad, TorchRec's default fused optimiser: one fp32 value of state per row."""

EXAMPLE = {
    "B": int(question(11).steps[0].values["B"]),
    "n_tables": 8,
    "d": int(D),
    "s": int(S),
    "W": 4,
}
"""The sharded lookup of the formulas: the post's batch, eight of the post's tables, four
devices."""

MOE = {"n_tokens": 4096, "top_k": 2, "d": 4096, "s": 2, "W": 8}
"""A mixture-of-experts layer's all-to-all: Mixtral's width, top-2 routing, bf16."""

PIPELINE_STAGES = 4
"""The stages of the pipeline-bubble table."""


class Devices(NamedTuple):
    """How many of one GPU the post's table needs: to hold it, to train it with dense Adam,
    and with a fused row-wise Adagrad."""

    hold: int
    train: int
    fused: int


def devices_needed(gpu: GPU) -> Devices:
    """The devices of ``gpu`` the post's table needs, each count rounded up."""
    return Devices(
        hold=math.ceil(TABLE.value / gpu.memory_bytes),
        train=math.ceil(DENSE_ADAM_COPIES * TABLE.value / gpu.memory_bytes),
        fused=math.ceil((TABLE.value + ROWWISE_STATE) / gpu.memory_bytes),
    )


def devices() -> Glue:
    """The table's bytes, and on each datasheet GPU the devices that hold and train it."""
    rows = []
    for gpu in GPUS.values():
        need = devices_needed(gpu)
        shard = formulas.sharded_table_memory(N=N, d=D, s=S, W=need.hold)
        full = units.percent(shard / gpu.memory_bytes)
        per_device = f"{units.decimal_bytes(shard)} ({full} full)"
        memory = units.decimal_bytes(gpu.memory_bytes)
        rows.append(
            [gpu.name, memory, str(need.hold), per_device, str(need.train), str(need.fused)]
        )
    most = max(GPUS.values(), key=lambda gpu: devices_needed(gpu).hold)
    too_large = sum(devices_needed(gpu).hold > 1 for gpu in GPUS.values())
    return {
        "table_bytes": units.describe_bytes(TABLE.value),
        "shard_eq": Math(formulas.sharded_table_memory.equation()),
        "devices_table": markdown_table(
            ["GPU", "Memory", "Devices to hold the table", "Table per device",
             "Devices to train it, dense Adam", "… fused row-wise Adagrad"],
            rows,
        ),
        "copies": str(DENSE_ADAM_COPIES),
        "fused_adam_copies": str(FUSED_ADAM_COPIES),
        "rowwise_state": units.describe_bytes(ROWWISE_STATE),
        "fused_share": units.percent(ROWWISE_STATE / TABLE.value),
        "most_gpu": most.name,
        "most_devices": str(devices_needed(most).hold),
        "too_large": f"{too_large} of the {len(GPUS)} GPUs above",
    }  # fmt: skip


def claim_columns(runs: Sequence[Run]) -> list[str]:
    """The verdict columns of the recorded-claims table: each run named by what ran its
    processes (the backend and the host's CPU), since a GPU machine's run exchanged its bytes
    over loopback on its CPU unless it used NCCL.

    >>> from types import SimpleNamespace as N
    >>> gpu = N(provenance=N(device_name="cuda (NVIDIA H200)"),
    ...         distributed=N(device="gloo over loopback TCP, 2 processes on Xeon"))
    >>> claim_columns([gpu, gpu])  # doctest: +NORMALIZE_WHITESPACE
    ['This machine: gloo over loopback TCP, 2 processes on Xeon (the host CPU)',
     'Recorded on cuda (NVIDIA H200): gloo over loopback TCP, 2 processes on Xeon (the host CPU)']
    """
    names = []
    for i, run in enumerate(runs):
        where = "This machine" if i == 0 else f"Recorded on {run.provenance.device_name}"
        report = run.distributed
        if report is None:
            names.append(where)
            continue
        host = " (the host CPU)" if report.device.startswith("gloo") else ""
        names.append(f"{where}: {report.device}{host}")
    return names


def splits() -> Glue:
    """The three ways to shard tables, drawn, and each one's all-to-all bytes worked."""
    glue: Glue = {
        "ex_B": units.plain_number(EXAMPLE["B"]),
        "ex_T": str(EXAMPLE["n_tables"]),
        "ex_d": str(D),
        "ex_W": str(EXAMPLE["W"]),
        "schemes": plots.sharding_schemes(world_size=2, n_tables=4),
    }
    for name, formula in (
        ("table", formulas.tablewise_alltoall_bytes),
        ("row", formulas.rowwise_alltoall_bytes),
        ("column", formulas.columnwise_alltoall_bytes),
    ):
        glue[f"{name}_eq"] = Math(formula.equation())
        glue[f"{name}_worked"] = Math(f"{formula.lhs} = {formula.worked(**EXAMPLE)}")
        glue[f"{name}wise_bytes"] = units.describe_bytes(formula(**EXAMPLE))
    return glue


def bubble_row(m: int) -> list[str]:
    """The pipeline bubble at ``m`` micro-batches in both conventions, and interleaved.

    >>> bubble_row(4)
    ['4', '43%', '75%', '38%']
    """
    whole = formulas.pipeline_bubble_fraction(p=PIPELINE_STAGES, m=m)
    ideal = formulas.pipeline_bubble_fraction_interleaved(p=PIPELINE_STAGES, m=m, v=1)
    interleaved = formulas.pipeline_bubble_fraction_interleaved(p=PIPELINE_STAGES, m=m, v=2)
    return [str(m), units.percent(whole), units.percent(ideal), units.percent(interleaved)]


def parallelism() -> Glue:
    """Data parallelism's ring all-reduce, tensor parallelism's MLP, the pipeline bubble,
    ZeRO's stages for a one-billion-parameter model on eight devices, and a mixture of
    experts' all-to-all."""
    mlp = question(12).steps[0].values  # the post's MLP layer
    n_params = formulas.mlp_weights(d_in=mlp["d_in"], d_out=mlp["d_out"])
    ring = {w: formulas.ring_allreduce_bytes(n_params=n_params, s=2, W=w) for w in (2, 8, 64)}
    attention = question(17).steps[0].values  # the post's Transformer sizes
    tp = {k: attention[k] for k in ("B", "S", "d", "s")} | {"W": 2}
    tp_bytes = formulas.tensor_parallel_mlp_bytes
    dense_params, zero_devices = 10**9, 8  # a model of one billion over one server's devices
    zero = [
        formulas.zero_memory_per_device(
            n_params=dense_params, N_d=zero_devices, stage=z, k_opt=answers.K_OPT_ADAM
        )
        for z in range(4)
    ]
    partitioned = ["nothing", "optimizer states", "and gradients", "and weights"]
    return {
        "dp_params": units.plain_number(n_params),
        "ring_eq": Math(formulas.ring_allreduce_bytes.equation()),
        "ring_rows": markdown_table(
            ["Devices W", "Bytes each device sends", "Share of 2·n_params·s"],
            [[str(w), units.describe_bytes(b), units.percent(b / (2 * n_params * 2))]
             for w, b in ring.items()],
        ),
        "tp_eq": Math(tp_bytes.equation()),
        "tp_worked": Math(f"{tp_bytes.lhs} = {tp_bytes.worked(**tp)}"),
        "bubble_eq": Math(formulas.pipeline_bubble_fraction.equation()),
        "bubble_p": str(PIPELINE_STAGES),
        "bubble_interleaved_eq": Math(formulas.pipeline_bubble_fraction_interleaved.equation()),
        "bubble_messages_eq": Math(formulas.pipeline_bubble_with_messages.equation()),
        "bubble_rows": markdown_table(
            ["Micro-batches m", "Bubble / whole time (GPipe)", "Bubble / ideal time, v = 1",
             "Bubble / ideal time, v = 2 (interleaved)"],
            [bubble_row(m) for m in (1, 4, 16, 64)],
        ),
        "stage_eq": Math(formulas.pipeline_activation_bytes.equation()),
        "zero_params": units.in_words(dense_params),
        "zero_devices": str(zero_devices),
        "zero_kopt": str(answers.K_OPT_ADAM),
        "adam_bytes": units.plain_number(formulas.adam_training_memory(n_params=1)),
        "zero_eq": Math(formulas.zero_memory_per_device.equation()),
        "zero_rows": markdown_table(
            ["Stage", "Partitioned over the devices", "Model states per device",
             "Share of stage 0"],
            [[str(z), what, units.describe_bytes(b), units.percent(b / zero[0])]
             for z, (what, b) in enumerate(zip(partitioned, zero, strict=True))],
        ),
        "zero_stage3_traffic": units.times(3 / 2),
        "moe_eq": Math(formulas.moe_alltoall_bytes.equation()),
        "moe_worked": Math(
            f"{formulas.moe_alltoall_bytes.lhs} = {formulas.moe_alltoall_bytes.worked(**MOE)}"
        ),
        "moe_tokens": units.plain_number(MOE["n_tokens"]),
        "moe_W": str(MOE["W"]),
    }  # fmt: skip


def link_rates(report: DistributedReport | None) -> list[tuple[str, float, str]]:
    """Each link's one-direction bandwidth, as a number and as its table cell: the datasheet
    GPUs' links that have one, an InfiniBand port, and this machine's loopback as the run's α-β
    fit measured it, its cell with the fit's bootstrap interval (a measured rate, unlike the
    datasheets')."""
    named = [(f"{gpu.name}, {gpu.link}", gpu.link_send_bytes_per_s) for gpu in GPUS.values()]
    rates = [(name, bw) for name, bw in named if bw is not None]
    rates.append(("InfiniBand NDR, one port between nodes", INFINIBAND_NDR_BYTES_PER_S))
    cells = [(name, bw, units.si(bw, "B/s")) for name, bw in rates]
    measured = None if report is None else fit_values(report)
    if report is not None and report.fit is not None and measured is not None:
        name = f"this machine's loopback (measured, {report.backend})"
        cells.append((name, report.fit.bytes_per_s, measured[1]))
    return cells


def links(run: Run) -> Glue:
    """The gradient all-reduce and the row-wise lookup on each link, NVLink against
    InfiniBand and HBM, and whether a table-wise lookup's exchange outlasts its pooling on an
    H100, at the bags the run's lookups pooled."""
    report = run.distributed  # None: a run without the part, priced at the quick sizes
    gradient_params, world = 10**9, 8  # a one-billion-parameter model's BF16 gradients, one server
    gradient = formulas.ring_allreduce_bytes(n_params=gradient_params, s=2, W=world)
    rowwise = formulas.rowwise_alltoall_bytes(**EXAMPLE)
    rates = link_rates(report)
    missing = [gpu.name for gpu in GPUS.values() if gpu.link_bytes_per_s is None]
    h100 = GPUS["H100 SXM"]
    nvlink = h100.link_send_bytes_per_s
    assert nvlink is not None  # the H100 SXM has NVLink
    # A table-wise lookup across devices: each pools its n_tables/W tables for all B samples,
    # L rows a bag (as many as the measured lookups pooled), and sends the pooled rows.
    bag = {"B": EXAMPLE["B"], "d": D, "s": S}
    pool_L = (quick_sizes() if report is None else report.sizes).emb_lookups
    local_tables = EXAMPLE["n_tables"] // EXAMPLE["W"]
    lookup_bytes = local_tables * formulas.embedding_bag_bytes(L=pool_L, **bag)
    send_bytes = formulas.tablewise_alltoall_bytes(**EXAMPLE)
    lookup_time, send_time = lookup_bytes / h100.bytes_per_s, send_bytes / nvlink
    # the bag at which pooling takes as long as the exchange
    even_L = formulas.embedding_bag_bytes.reaches(
        send_time * h100.bytes_per_s / local_tables, "L", **bag
    )
    if even_L is None:
        raise GpuConceptsError("no bag makes the lookup as long as its exchange")
    return {
        "grad_params": units.in_words(gradient_params),
        "grad_bytes": units.describe_bytes(gradient),
        "big_world": str(world),
        "link_rows": markdown_table(
            ["Link", "One direction", f"All-reduce of the gradient, W = {world}",
             "Row-wise lookup above"],
            [[name, shown, units.si(gradient / bw, "s"), units.si(rowwise / bw, "s")]
             for name, bw, shown in rates],
        ),
        "no_link": " and the ".join(missing),
        "nvlink_vs_ib": units.how_many(nvlink / INFINIBAND_NDR_BYTES_PER_S),
        "hbm_vs_nvlink": units.how_many(h100.bytes_per_s / nvlink),
        "pool_L": units.plain_number(pool_L),
        "pool_lookup_bytes": units.describe_bytes(lookup_bytes),
        "pool_send_bytes": units.describe_bytes(send_bytes),
        "pool_bytes_ratio": units.times(lookup_bytes / send_bytes),
        "pool_lookup_time": units.si(lookup_time, "s"),
        "pool_send_time": units.si(send_time, "s"),
        "pool_verdict": "more" if send_time > lookup_time else "less",
        "pool_breakeven": f"the exchange would dominate only with bags of fewer than "
        f"{units.plural(even_L, 'row')}"
        if pool_L >= even_L
        else f"the lookup would dominate only with bags of {units.plural(even_L, 'row')} or more",
    }  # fmt: skip


def exercises() -> Glue:
    """The exercises' answers, from :mod:`gpuconcepts.exercises` and the datasheet.

    >>> glue = exercises()
    >>> glue["ex_zero_stage"], glue["ex_train_dense"], glue["ex_train_fused"]
    ('2', '3 H100s', '1 H100')
    """
    zero = {"n_params": 7_500_000_000, "N_d": 64}  # the ZeRO paper's example
    l4 = GPUS["L4"].memory_bytes
    stage = answers.zero_stage_that_fits(**zero, memory_bytes=l4)
    if stage is None:
        raise GpuConceptsError("no ZeRO stage fits the exercise's model on L4s")
    p, bubble, v = 4, 0.1, 2
    h100 = devices_needed(GPUS["H100 SXM"])
    moe_sizes = {k: MOE[k] for k in ("n_tokens", "top_k", "d", "s")}
    return {
        "ex_zero_params": units.in_words(zero["n_params"]),
        "ex_zero_devices": str(zero["N_d"]),
        "ex_zero_memory": units.decimal_bytes(l4),
        "ex_zero_stage": str(stage),
        "ex_zero_need": units.describe_bytes(
            formulas.zero_memory_per_device(**zero, stage=stage, k_opt=answers.K_OPT_ADAM)
        ),
        "ex_p": str(p),
        "ex_bubble": units.percent(bubble),
        "ex_v": str(v),
        "ex_gpipe_m": str(answers.gpipe_micro_batches(p=p, bubble=bubble)),
        "ex_inter_m": str(answers.interleaved_micro_batches(p=p, v=v, bubble=bubble)),
        "ex_row_W": str(2 * EXAMPLE["W"]),
        "ex_row_ratio": units.times(float(answers.rowwise_over_tablewise(W=2 * EXAMPLE["W"]))),
        "ex_moe_to": str(8 * MOE["W"]),
        "ex_moe_growth": units.times(
            float(answers.moe_growth(**moe_sizes, W_from=MOE["W"], W_to=8 * MOE["W"]))
        ),
        "ex_train_dense": units.plural(h100.train, "H100"),
        "ex_train_fused": units.plural(h100.fused, "H100"),
    }
