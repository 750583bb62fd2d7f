"""The model and distributed pages' modules (gpuconcepts.render.pages.model, .distributed),
checked against the library's own answers and against the recorded run."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from gpuconcepts import exercises, formulas, units
from gpuconcepts.claims import wholemodel
from gpuconcepts.claims.distributed import judge_distributed
from gpuconcepts.hardware import GPUS
from gpuconcepts.model import PRESETS, account, serving, shape_from
from gpuconcepts.render.pages import (
    Math,
    distributed_measured,
    model_memory,
    model_serving,
    model_shapes,
)
from gpuconcepts.render.pages import distributed as distributed_page
from gpuconcepts.render.pages import model as model_page
from gpuconcepts.render.text.distributed import fit_intervals
from gpuconcepts.run import Run, load

RECORDED = Path(__file__).resolve().parents[1] / "docs" / "runs" / "cpu-amd-epyc-float32.json"


@pytest.fixture(scope="module")
def recorded() -> Run:
    return load(RECORDED)


def table_rows(markdown: str) -> list[list[str]]:
    """The cells of a Markdown table's body rows (header and rule left out)."""
    return [[c.strip() for c in line.strip("|").split("|")] for line in markdown.splitlines()[2:]]


def test_the_tables_read_the_model_accounting() -> None:
    tables = model_page.tables()
    assert [t.shape for t in tables.values()] == list(model_page.MODELS.values())
    params = table_rows(model_page.parameters()["params_table"])
    flops = table_rows(model_page.flops()["flops_table"])
    memory = table_rows(model_page.training_memory()["adam_table"])
    kv = table_rows(model_page.kv_caches()["kv_table"])
    for (name, t), p, f, m, k in zip(tables.items(), params, flops, memory, kv, strict=True):
        assert p[0] == f[0] == m[0] == k[0] == name
        assert p[-1] == f"**{units.in_words(t.value('params'))}**"
        assert f[2] == units.in_words(t.value("forward_flops"))
        assert m[2] == units.binary_bytes(t.value("adam"))
        assert k[-1].startswith(units.binary_bytes(t.value("kv_cache")))


def test_adam_items_add_up_to_the_formula_and_k_opt() -> None:
    items = dict(model_shapes.ADAM_ITEMS)
    assert sum(items.values()) == formulas.adam_training_memory(n_params=1)
    fp32 = sum(b for what, b in model_shapes.ADAM_ITEMS if "fp32" in what)
    assert fp32 == exercises.K_OPT_ADAM
    # ZeRO stage 0 is plain Adam: the same bytes
    assert formulas.zero_memory_per_device(
        n_params=1, N_d=1, stage=0, k_opt=exercises.K_OPT_ADAM
    ) == formulas.adam_training_memory(n_params=1)


def test_zero_table_says_which_stage_fits() -> None:
    rows = table_rows(model_page.training_memory()["zero_table"])
    assert [r[0] for r in rows] == ["0", "1", "2", "3"]
    fits = [r[-1] == "yes" for r in rows]
    assert fits == sorted(fits)  # once a stage fits, every later one does
    assert fits[-1]


def test_against_says_fits_or_not() -> None:
    l4 = GPUS["L4"]
    assert model_memory.against(l4.memory_bytes, l4).startswith("fits in the ")
    assert model_memory.against(l4.memory_bytes + 1, l4).startswith("is more than the ")


def test_floor_cells_follow_the_serving_answer() -> None:
    t4, h100 = GPUS["T4"], GPUS["H100 SXM"]
    assert (t4.sixteen_bit, h100.sixteen_bit) == ("fp16", "bf16")
    big = PRESETS["llama-2-70b"]
    assert model_serving.floor_cell(h100, big).startswith("does not fit in ")
    gpt2 = PRESETS["gpt2-small"]
    floor = account(shape_from(gpt2, dtype="fp16"), t4).value("decode_floor")
    assert model_serving.floor_cell(t4, gpt2) == (
        f"{units.si(floor, 's')} · {units.significant(1 / floor)}"
    )
    glue = model_page.decode_floor()
    assert glue["no_bf16"] == "T4"
    assert len(table_rows(glue["floor_table"])) == len(GPUS)


def test_the_knee_is_the_accounting_s_decode_knee() -> None:
    h100 = GPUS["H100 SXM"]
    knee = account(PRESETS["llama-2-7b-like"], h100).value("decode_knee")
    assert model_serving.weights_only_knee(h100) == pytest.approx(knee)


def test_serving_table_and_compute_bound_cells() -> None:
    answered = model_shapes.servings()
    h100 = GPUS["H100 SXM"]
    assert answered["Llama-2-7B-like"] == serving(PRESETS["llama-2-7b-like"], h100)
    glue = model_page.knees()
    rows = table_rows(glue["serve_table"])
    assert [r[-1] for r in rows] == [model_serving.compute_bound(a) for a in answered.values()]
    never = [name for name, a in answered.items() if a.compute_bound_batch is None]
    assert glue["never_models"] == (units.listing(never) if never else "none of the models")
    # a context of one token: decode turns compute-bound at a batch that fits
    short = serving(shape_from(PRESETS["gpt2-small"], seq=1), h100)
    assert short.compute_bound_batch is not None
    assert model_serving.compute_bound(short) == (
        f"from batch {units.plain_number(short.compute_bound_batch)} (fits)"
    )


def test_exercises_read_the_library() -> None:
    glue = model_page.exercises()
    l3 = serving(PRESETS["llama-3-8b-like"], GPUS["H100 SXM"])
    assert glue["ex_l3_batch"] == units.plural(l3.max_batch, "sequence")
    best, speedup = exercises.best_draft_length(alpha=0.8, c_draft=0.05)
    assert glue["ex_best_gamma"] == units.plain_number(best)
    assert glue["ex_best_speedup"] == units.times(speedup)


def test_measured_reads_the_recorded_run(recorded: Run) -> None:
    glue = model_page.measured(recorded)
    assert recorded.wholemodel is not None
    results = [r for r in recorded.claims if r.architecture == wholemodel.ARCHITECTURE]
    assert glue["n_checks"] == str(len(results))
    assert glue["fp32_same"] == "the same total"
    sweep = recorded.wholemodel.decode
    shape = sweep.shape
    limit = formulas.decode_intensity_limit(
        n_params=sweep.weight_bytes // shape.s, S=sweep.cached, n_layers=shape.layers,
        n_kv=shape.n_kv, d_head=shape.d_head, s=shape.s,
    )  # fmt: skip
    assert glue["check_limit"] == units.describe(limit, "FLOP/byte")
    assert not isinstance(glue["knee_fig"], str | Math)
    assert str(glue["long_verdict"]).startswith("the check ")


def test_devices_needed_round_up() -> None:
    table = distributed_page.TABLE.value
    tight = dataclasses.replace(GPUS["L4"], memory_bytes=table)
    assert distributed_page.devices_needed(tight).hold == 1
    assert distributed_page.devices_needed(tight).train == distributed_page.DENSE_ADAM_COPIES
    assert distributed_page.devices_needed(tight).fused == 2  # the row-wise state tips it over
    rows = table_rows(distributed_page.devices()["devices_table"])
    h100 = distributed_page.devices_needed(GPUS["H100 SXM"])
    assert next(r for r in rows if r[0] == "H100 SXM")[-2:] == [str(h100.train), str(h100.fused)]
    glue = distributed_page.exercises()
    assert glue["ex_train_dense"] == units.plural(h100.train, "H100")


def test_bubble_rows_hold_both_conventions() -> None:
    p = distributed_page.PIPELINE_STAGES
    for m in (1, 4, 16, 64):
        whole = formulas.pipeline_bubble_fraction(p=p, m=m)
        ideal = formulas.pipeline_bubble_fraction_interleaved(p=p, m=m, v=1)
        assert ideal == pytest.approx(whole / (1 - whole))  # one idle time, two denominators
        assert distributed_page.bubble_row(m)[1:3] == [units.percent(whole), units.percent(ideal)]


def test_distributed_measured_reads_the_recorded_run(recorded: Run) -> None:
    report = recorded.distributed
    assert report is not None
    pipelines = report.pipelines
    assert [c.schedule["m"] for c in pipelines] == sorted(c.schedule["m"] for c in pipelines)
    glue = distributed_page.measured(recorded)
    rows = table_rows(str(glue["bubble_sweep_rows"]))
    assert [r[3] for r in rows] == [units.percent(c.bubble_median) for c in pipelines]
    # the EPYC's bubble with its messages priced by the run's α-β fit (about 0.6 ms a message
    # beside 3.8 ms of work a micro-batch), beside GPipe's alone
    assert [r[2] for r in rows] == ["54%", "40%", "29%", "22%", "18%"]
    assert [r[1] for r in rows] == ["50%", "33%", "20%", "11%", "5.9%"]
    for key in distributed_measured.CLAIMS:
        assert f"claim_{key}" in glue
    alone = dataclasses.replace(report, cores=report.world_size)
    crowded = dataclasses.replace(report, cores=1)
    assert str(
        distributed_page.measured(dataclasses.replace(recorded, distributed=alone))["crowded"]
    ).endswith("so their times are read.")
    assert "shared 1 free core" in str(
        distributed_page.measured(dataclasses.replace(recorded, distributed=crowded))["crowded"]
    )


def test_distributed_measured_says_why_a_run_has_no_part(recorded: Run) -> None:
    """Issue 44: a skipped or empty part glues every name the page reads, "—" and words."""
    present = distributed_page.measured(recorded)
    skipped = dataclasses.replace(
        recorded, distributed=None, skipped={"distributed": "gloo could not start"}
    )
    assert recorded.distributed is not None
    empty = dataclasses.replace(
        recorded, distributed=dataclasses.replace(recorded.distributed, collectives=())
    )
    for run, why in ((skipped, "gloo could not start"), (empty, "measured no collective")):
        glue = distributed_page.measured(run)
        assert glue.keys() == present.keys()
        assert why in str(glue["crowded"])
        assert glue["world"] == units.NOTHING
        assert all(why in str(glue[f"claim_{key}"]) for key in distributed_measured.CLAIMS)
    assert empty.distributed is not None
    assert judge_distributed(empty.distributed) == ()
    assert "loopback (measured" not in distributed_page.links(skipped)["link_rows"]


def test_bubble_median_is_the_upper_middle() -> None:
    report = load(RECORDED).distributed
    assert report is not None
    (c, *_) = report.pipelines
    assert dataclasses.replace(c, bubble=(0.3, 0.1, 0.2)).bubble_median == 0.2
    assert dataclasses.replace(c, bubble=(0.4, 0.1, 0.2, 0.3)).bubble_median == 0.3


def test_links_breakeven_is_the_first_bag_as_long_as_the_exchange(recorded: Run) -> None:
    glue = distributed_page.links(recorded)
    example, h100 = distributed_page.EXAMPLE, GPUS["H100 SXM"]
    local = example["n_tables"] // example["W"]
    assert h100.link_send_bytes_per_s is not None
    send = formulas.tablewise_alltoall_bytes(**example) / h100.link_send_bytes_per_s
    bag = {"B": example["B"], "d": example["d"], "s": example["s"]}
    even = next(
        L
        for L in range(1, 10_000)
        if local * formulas.embedding_bag_bytes(L=L, **bag) / h100.bytes_per_s >= send
    )
    assert units.plural(even, "row") in glue["pool_breakeven"]
    report = recorded.distributed
    assert report is not None
    assert report.fit is not None
    # the measured rate, unlike the datasheets', has its bootstrap interval beside it
    found = fit_intervals(report)
    assert found is not None
    lo, hi = found[1][1:]
    assert lo < report.fit.bytes_per_s < hi
    assert (
        f"| this machine's loopback (measured, gloo) | {units.si(report.fit.bytes_per_s, 'B/s')} "
        f"(interval [{units.si(lo, 'B/s')}, {units.si(hi, 'B/s')}]) |"
    ) in glue["link_rows"]
    unfitted = dataclasses.replace(recorded, distributed=dataclasses.replace(report, fit=None))
    assert "loopback" not in distributed_page.links(unfitted)["link_rows"]


def test_model_measured_says_why_a_run_has_no_whole_model(recorded: Run) -> None:
    """Issue 44: a run that left the whole model out glues every name the page reads."""
    present = model_page.measured(recorded)
    skipped = dataclasses.replace(
        recorded, wholemodel=None, skipped={"wholemodel": "too little free memory"}
    )
    glue = model_page.measured(skipped)
    assert glue.keys() == present.keys()
    assert glue["long_verdict"] == "nothing was measured: too little free memory"
    assert glue["n_checks"] == units.NOTHING
    assert glue["peak_flops"] == present["peak_flops"]  # the roofs were still measured
    figure = glue["long_fig"]
    assert not isinstance(figure, str | Math)
    assert "too little free memory" in figure.axes[0].texts[0].get_text()
