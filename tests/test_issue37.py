"""Issue 37: each factual error the review found on a page, pinned so it cannot come back."""

from __future__ import annotations

from pathlib import Path

from gpuconcepts.book import recorded_runs
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

    from gpuconcepts.measure.timing import NoiseProbe
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
    assert f"| {first.verdict}, {ratio} |" in row


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


def test_the_analyze_page_sets_the_measured_gpu_floors_beside_the_assumed_one() -> None:
    from gpuconcepts.book import gpu_latency_floors
    from gpuconcepts.hardware import LAUNCH_FLOOR_SECONDS
    from gpuconcepts.render.pages.analyze import measured_floors
    from gpuconcepts.units import how_many, si

    floors = gpu_latency_floors(recorded_runs(DOCS))
    assert floors  # the H200 runs measured theirs
    said = measured_floors(floors)
    for label, seconds in floors:
        assert seconds > LAUNCH_FLOOR_SECONDS  # the assumption is short of every measured one
        assert (
            f"{label}, {si(seconds, 's')} ({how_many(seconds / LAUNCH_FLOOR_SECONDS)} times" in said
        )
    assert "measured a longer floor" in said
    page = (DOCS / "analyze.md").read_text(encoding="utf-8")
    assert "{glue:md}`measured_floors`" in page
