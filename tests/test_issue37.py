"""Issue 37: each factual error the review found on a page, pinned so it cannot come back."""

from __future__ import annotations

from pathlib import Path

from gpuconcepts.book import recorded_runs
from gpuconcepts.claims.judge import profile_of
from gpuconcepts.hardware import GPUS
from gpuconcepts.render.pages import distributed

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_the_gpus_too_small_for_the_post_table_are_counted_not_called_most() -> None:
    too_small = [g for g in GPUS.values() if distributed.devices_needed(g).hold > 1]
    glued = distributed.devices()["too_large"]
    assert glued == f"{len(too_small)} of the {len(GPUS)} GPUs above"
    assert "most of the GPUs above" not in (DOCS / "distributed.md").read_text(encoding="utf-8")


def test_a_recorded_gpu_run_s_distributed_column_names_the_cpu_it_ran_on() -> None:
    runs = [r for r in recorded_runs(DOCS) if r.distributed is not None]
    assert any(r.provenance.device == "cuda" for r in runs)
    for run, name in zip(runs, distributed.claim_columns([runs[0], *runs])[1:], strict=True):
        assert run.distributed is not None
        assert run.distributed.device in name
        if run.distributed.backend == "gloo":
            assert "loopback" in name


def test_the_prefill_exercise_calls_its_kv_the_whole_layer_s_not_one_head_s() -> None:
    from gpuconcepts import formulas
    from gpuconcepts.questions import question
    from gpuconcepts.render.pages import transformer
    from gpuconcepts.units import binary_bytes, plural

    glue = transformer.exercises()
    q17 = question(17).steps[0].values
    tokens = int(glue["ex_prefill_S"].split()[0].replace(",", ""))
    assert glue["ex_prefill_S"] == plural(tokens, "token")
    whole_layer = formulas.kv_cache_memory(B=1, S=tokens, d=q17["d"], s=q17["s"])
    assert glue["ex_prefill_head"] == binary_bytes(whole_layer)
    page = " ".join((DOCS / "transformer.md").read_text(encoding="utf-8").split())
    assert "one head's $K$ and $V$ take {glue:md}`ex_prefill_head`" not in page
    assert "the whole layer's $K$ and $V$ for one sequence take {glue:md}`ex_prefill_head`" in page


def test_the_bf16_lookup_exercise_is_answered_in_bf16() -> None:
    from gpuconcepts import formulas
    from gpuconcepts.questions import question
    from gpuconcepts.render.pages import dlrm
    from gpuconcepts.units import significant

    table, batch = question(10).steps[0].values, question(11).steps[0].values
    assert table["s"] == 4  # the post's table is FP32; the exercise asks in BF16
    glue = dlrm.exercises()
    sizes = {"B": batch["B"], "L": batch["L"], "d": table["d"]}
    assert glue["ex_lookup_batch_I"] == significant(formulas.embedding_intensity(**sizes, s=2))
    assert glue["ex_lookup_rows_limit"] == significant(
        formulas.embedding_intensity.supremum("L", B=batch["B"], d=table["d"], s=2)
    )


def test_a_machine_with_a_load_above_its_cores_is_not_called_quiet() -> None:
    import dataclasses

    from gpuconcepts.measure.noise import NoiseProbe
    from gpuconcepts.run.provenance import Provenance

    calm = NoiseProbe(
        load_average=0.1, cores=2, cpu_mhz=None, reference_seconds=1e-4, reference_spread=0.01
    )
    loaded = dataclasses.replace(calm, load_average=2.3)
    quiet = dataclasses.replace(Provenance.example(), noise_before=calm, noise_after=calm)
    assert quiet.noise.startswith("This run's machine was quiet")
    busy = dataclasses.replace(quiet, noise_after=loaded)
    assert busy.noise.startswith("This run's machine was busy")
    assert "load average 2.3 on 2 cores" in busy.noise


def test_the_causal_prefill_time_reads_as_a_comparison_not_a_bare_one() -> None:
    import dataclasses

    from gpuconcepts.book import chapter
    from gpuconcepts.render.pages import transformer
    from gpuconcepts.run import load
    from gpuconcepts.units import as_long, percent

    run = load(DOCS / "runs" / "cpu-amd-epyc-float32.json")
    *sweep, causal, _ = chapter(run, "transformer")
    encoder = next(x for x in sweep if x.size("S") == causal.size("S"))
    # a causal kernel exactly as slow as the encoder: "as long as", never "took 1 of ..."
    same = dataclasses.replace(causal, raw_seconds=encoder.raw_seconds)
    glue = transformer.prefill(run, sweep, same)
    assert glue["causal_time"] == "as long as the encoder"
    assert glue["causal_flops"] == percent(causal.flops / encoder.flops)
    glue = transformer.prefill(run, sweep, causal)
    assert glue["causal_time"] == as_long(causal.seconds / encoder.seconds, "the encoder")


def test_the_claims_audit_gives_measured_over_predicted_per_machine() -> None:
    from gpuconcepts.render.markdown import markdown_claims_summary
    from gpuconcepts.render.pages.claims import LABELS
    from gpuconcepts.units import significant

    runs = recorded_runs(DOCS)
    table = markdown_claims_summary(runs, LABELS, [r.label for r in runs])
    first = runs[0].claims[0]
    row = table.splitlines()[2]
    ratio = significant(first.test.measured / first.test.predicted, 2)
    assert f"| {first.verdict} ({ratio}× predicted) |" in row


def test_the_claims_audit_tables_part_the_posts_claims_from_facts_and_the_models() -> None:
    from gpuconcepts.render.markdown import markdown_claims_summary
    from gpuconcepts.render.pages.claims import LABELS
    from gpuconcepts.results.registry import anchor, ledger

    runs = recorded_runs(DOCS)
    names = [r.label for r in runs]
    post = markdown_claims_summary(runs, LABELS, names)
    apart = markdown_claims_summary(runs, LABELS, names, ledgers=("fact", "model"))
    keys = [r.key for r in runs[0].claims]
    for key in keys:
        shown_in_post, shown_apart = f"<{anchor(key)}>`" in post, f"<{anchor(key)}>`" in apart
        assert (shown_in_post, shown_apart) == (
            (True, False) if ledger(key) == "post" else (False, True)
        ), key
    # each table numbers its own rows from 1 (a header, a rule, then one row per claim)
    n_post = sum(ledger(k) == "post" for k in keys)
    assert post.splitlines()[2].startswith("| 1 |")
    assert len(post.splitlines()) == 2 + n_post
    assert len(apart.splitlines()) == 2 + len(keys) - n_post
    # the second table says which kind each row is: its first row is the MLP's knee, the model's
    assert apart.splitlines()[0].startswith("| # | Section | Claim | What it checks |")
    assert "| the model's own prediction |" in apart.splitlines()[2]
    assert "What it checks" not in post


def test_the_model_page_names_both_llama_2_counts_for_what_they_count() -> None:
    from gpuconcepts.render.pages import model
    from gpuconcepts.units import in_words

    glue = model.flops()
    shape = model.MODELS[glue["mult_model"]]
    table = model.tables()[glue["mult_model"]]
    total, multiplied = table.value("params"), table.value("forward_flops") / 2
    assert glue["mult_total"] == in_words(total)
    assert glue["mult_params"] == in_words(multiplied)
    norms = (2 * shape.layers + 1) * shape.d  # two RMS norms a layer and the final one
    assert total - multiplied == shape.vocab * shape.d + norms  # the embedding, looked up
    assert glue["mult_lookup"] == in_words(total - multiplied)
    assert "{glue:md}`mult_params` weights multiplied" in " ".join(
        (DOCS / "model.md").read_text(encoding="utf-8").split()
    )


def test_the_analyze_page_predicts_the_datasheet_gpus_with_the_floor_the_gpu_runs_measured() -> (
    None
):
    import pytest

    torch = pytest.importorskip("torch")
    from gpuconcepts import analyze
    from gpuconcepts.book import gpu_latency_floors
    from gpuconcepts.hardware import LAUNCH_FLOOR_SECONDS
    from gpuconcepts.render.pages.analyze import measured_floors
    from gpuconcepts.roofline import Peaks
    from gpuconcepts.units import how_many, si

    floors = gpu_latency_floors(recorded_runs(DOCS))
    assert floors  # the H200 runs measured theirs
    label, least = min(floors, key=lambda floor: floor[1])
    assert least > LAUNCH_FLOOR_SECONDS  # the review: 5 µs assumed where 13.5 µs was measured
    model, x = torch.nn.Linear(64, 64, bias=False), torch.randn(8, 64)
    peaks = Peaks("cpu", 1e11, 1e10, "float32")
    measured = analyze(model, x, device="cpu", peaks=peaks, repeats=1, launch_floors=floors)
    assumed = analyze(model, x, device="cpu", peaks=peaks, repeats=1)
    for with_floors, without in zip(measured.gpus, assumed.gpus, strict=True):
        assert with_floors.launch_seconds == least  # its own (the H200) or the least measured
        assert without.launch_seconds == LAUNCH_FLOOR_SECONDS
        # one call below every GPU's launch: the floor sets its predicted time
        assert with_floors.seconds == least
        assert without.seconds == LAUNCH_FLOOR_SECONDS
    said = measured.assumptions[-1]
    assert said.startswith("a launch floor per call measured on a GPU, not assumed: ")
    assert f"{si(least, 's')} on the H200 (the least of its runs: {label})" in said
    assert "5 µs" in assumed.assumptions[-1]
    assert assumed.assumptions[-1].endswith("assumed: no GPU run at hand measured one.")
    # the page says which floor it used, and what the assumption would have been
    page = measured_floors(floors, {g.gpu: g.launch_seconds for g in measured.gpus})
    assert page.startswith(
        f"Every datasheet GPU's prediction uses a launch floor of {si(least, 's')}"
    )
    assert f"({label}), {how_many(least / LAUNCH_FLOOR_SECONDS)} times the" in page
    from gpuconcepts.errors import GpuConceptsError

    with pytest.raises(GpuConceptsError, match="launch_floors must be"):
        analyze(model, x, device="cpu", peaks=peaks, repeats=1, launch_floors=[(label, -1.0)])
    text = (DOCS / "analyze.md").read_text(encoding="utf-8")
    assert "{glue:md}`measured_floors`" in text
    assert "launch_floors=floors" in text


def test_no_physical_limit_is_below_the_peak_measured_under_it() -> None:
    from gpuconcepts.render.pages import roofline
    from gpuconcepts.units import percent

    runs = recorded_runs(DOCS)
    assert {r.provenance.device for r in runs} == {"cpu", "cuda"}
    for run in runs:
        physical = run.peaks.physical_flops_per_s
        if physical is None:  # the recorded CPU run's limit, from the retired rule, is dropped
            assert run.provenance.device == "cpu", run.label
            said = roofline.machine(run, profile_of(run))["physical"]
            assert said.startswith("This machine's physical limit is not known")
            continue
        assert run.peaks.flops_per_s <= physical, run.label  # the review found 130 %
        share = run.peaks.flops_per_s / physical
        said = roofline.machine(run, profile_of(run))["physical"]
        assert f"peak reaches {percent(share)} of it" in said
        assert float(percent(share).rstrip("%")) <= 100


def test_the_rnn_chain_bound_on_a_gpu_counts_every_operation_of_every_step() -> None:
    from gpuconcepts.render.text import chain_sentence
    from gpuconcepts.render.text.runs import time_spread
    from gpuconcepts.roofline import OPERATION_CHAIN, diagnoses, paired_peaks
    from gpuconcepts.units import percent, si

    runs = [r for r in recorded_runs(DOCS) if r.provenance.device == "cuda"]
    assert runs
    for run in runs:
        loop = next(m for m in profile_of(run) if m.workload == "rnn-loop")
        peaks = paired_peaks(loop, run.peaks)
        assert loop.ops is not None
        assert loop.steps is not None
        assert peaks.op_seconds is not None
        assert loop.ops >= 4 * loop.steps  # four operations a step, every step counted
        least = loop.ops * min(peaks.op_seconds, peaks.latency_seconds or peaks.op_seconds)
        said = chain_sentence(loop, run.peaks)
        bound = next(d.seconds for d in diagnoses(loop, peaks) if d.mechanism == OPERATION_CHAIN)
        assert bound >= least * (1 - 1e-9)
        assert f"cannot take less than {si(bound, 's')}" in said
        # the loop's time with its spread, the book's one format (median ± IQR)
        assert f"It took {time_spread(loop)}: the chain accounts for" in said
        # the review found 0.041 %: one operation's floor against the loop's 26.5 ms
        assert f"accounts for {percent(bound / loop.seconds)} of its time" in said
        assert bound / loop.seconds > 0.1
    # the recorded bfloat16 run's loop, as its page gives it
    bf16 = next(r for r in runs if r.peaks.dtype == "bfloat16")
    loop = next(m for m in profile_of(bf16) if m.workload == "rnn-loop")
    assert "It took 26.5 ms ± 3.3 ms: the chain" in chain_sentence(loop, bf16.peaks)


def test_a_kernel_faster_than_dram_is_named_among_those_a_cache_serves() -> None:
    from gpuconcepts.render.pages import roofline
    from gpuconcepts.roofline import place

    seen = 0
    for run in recorded_runs(DOCS):
        measurements = profile_of(run)
        cached = roofline.observed(measurements, run.peaks)["cached"]
        for m in measurements:
            if m.bytes_per_s > 1.1 * run.peaks.bytes_per_s:  # beyond DRAM's measured rate
                seen += 1
                assert f"`{m.workload}` ({place(m, run.peaks).observed})" in cached, run.label
                assert cached != "none"
    assert seen  # the CPU run's dlrm-hot reads its hot rows from L3, above DRAM's rate


def test_a_gpu_floor_is_set_beside_its_own_gpu_s_roofline_times_and_a_cpu_floor_beside_none() -> (
    None
):
    from gpuconcepts import roofline as model
    from gpuconcepts.book import gpu_latency_floors
    from gpuconcepts.hardware import datasheet_peaks
    from gpuconcepts.render.pages import hardware
    from gpuconcepts.units import how_many, si

    runs = recorded_runs(DOCS)
    cpu = next(r for r in runs if r.provenance.device == "cpu")
    floors = gpu_latency_floors(runs)
    assert floors
    h200 = GPUS["H200"].datasheet_peaks("fp16")
    own = max(model.predicted_seconds(f, q, h200) for f, q in hardware._small().values())
    glue = hardware.small_layers(cpu, floors)
    for label, seconds in floors:
        assert "NVIDIA H200" in label
        said = f"{label}, {si(seconds, 's')} ({how_many(seconds / own)} times the longest "
        assert said + f"roofline time on the H200, {si(own, 's')})" in glue["gpu_floors"]
    # the build's CPU floor is set beside no GPU's times (the review found "11 times")
    assert "times the longest" not in glue["build_floor"]
    assert glue["build_floor"].endswith("is not set beside these times.")
    # a floor longer than the H200's times but shorter than the slowest GPU's (an L4's):
    # against its own GPU, launch-bound
    between = 2 * own
    slowest = max(
        model.predicted_seconds(f, q, p)
        for p in datasheet_peaks("fp16")
        for f, q in hardware._small().values()
    )
    assert between < slowest
    assert glue["small_longest"] == si(slowest, "s")
    mid = hardware.small_layers(cpu, [("cuda (NVIDIA H200) in its bfloat16 run", between)])
    assert mid["small_verdict"].startswith("Every GPU floor measured is longer")
    short = hardware.small_layers(cpu, [("cuda (NVIDIA H200) in its bfloat16 run", own / 2)])
    assert short["small_verdict"].startswith("A measured GPU floor is shorter")


def test_each_chapter_says_in_words_what_the_gpu_runs_showed() -> None:
    from gpuconcepts.render.pages import gpu, gpu_recorded
    from gpuconcepts.render.text import chain_bound
    from gpuconcepts.results.registry import CLAIMS
    from gpuconcepts.units import percent, si

    runs = recorded_runs(DOCS)
    on_gpu = gpu.gpu_runs(runs)
    assert on_gpu
    for family in (*gpu.FAMILIES, "distributed"):
        passage = gpu.chapter_passage(runs, family)
        page = (DOCS / f"{family}.md").read_text(encoding="utf-8")
        # a chapter led by the recorded GPU run says it in its lead's words (issue 46)
        led = f'lead(recorded_runs(), "{family}")' in page
        assert (
            led
            or f'chapter_passage(recorded_runs(), "{family}")' in page
            or (f'chapter_passage(recorded, "{family}")' in page)
        ), family
        assert ("{glue:md}`lead_words`" if led else "{glue:md}`gpu_showed:myst`") in page, family
        for run in on_gpu:  # one sentence a GPU run, naming it
            assert f"In {gpu_recorded.run_phrase(run)}, " in passage, family
    rnn = gpu.chapter_passage(runs, "rnn")
    for run in on_gpu:
        loop = next(m for m in profile_of(run) if m.workload == "rnn-loop")
        bound = chain_bound(loop, run.peaks)
        assert bound is not None
        assert f"accounts for {percent(bound / loop.seconds)} of the loop's time" in rnn
    distributed = gpu.chapter_passage(runs, "distributed")
    for run in on_gpu:
        report = run.distributed
        assert report is not None
        assert report.backend == "gloo"  # the H200 runs' distributed part ran on the host
        judged = [r for r in run.claims if CLAIMS[r.key].chapter == "distributed"]
        held = sum(r.verdict == "holds" for r in judged)
        said = gpu.SENTENCES["distributed"](run)
        assert said.startswith("the distributed part ran on the machine's host CPU, not on ")
        assert f"{held} of its {len(judged)} distributed claims held" in said
        assert report.fit is not None
        assert f". Its collectives cost {si(report.fit.alpha_s, 's')} (interval [" in said
        assert "]) a call plus their bytes at " in said
        assert said in distributed
