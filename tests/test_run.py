"""The Run: saved, reloaded, validated, compared; and the Lab that measures each size once."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from synthetic import (
    FakeKernel,
    fake_measurement,
    synthetic_distributed,
    synthetic_run,
    synthetic_wholemodel,
)

from gpuconcepts import cli
from gpuconcepts.claims.judge import measured_of, part_claims, rejudged
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.lab import Lab
from gpuconcepts.records import from_record
from gpuconcepts.render import compare_rows, format_compare
from gpuconcepts.roofline import Peaks
from gpuconcepts.run import SCHEMA, Run, load, load_all
from gpuconcepts.run.run import MIGRATIONS


def test_a_run_round_trips_through_json(run: Run, tmp_path: Path) -> None:
    path = tmp_path / "runs" / "cpu.json"
    run.save(path)
    again = load(path)
    assert again == run
    assert again.to_json() == run.to_json()
    data = json.loads(path.read_text())
    assert data["schema"] == SCHEMA
    first = data["measurements"][0]
    # readers of the file get the statistics too; loading ignores them
    assert first["summary"]["seconds"] == run.measurements[0].seconds
    assert first["summary"]["bound"] == "memory"
    # the whole-model and distributed results are plain JSON, every repetition kept
    whole = data["wholemodel"]
    assert whole["sizes"]["batches"] == [1, 4, 16, 64]
    assert whole["decode"]["shape"]["name"] == "decode-cpu"
    assert len(whole["decode"]["seconds"]) == 4
    assert whole["training"]["peak_bytes"] == run.wholemodel.training.peak_bytes  # type: ignore[union-attr]
    spread = data["distributed"]
    assert (spread["world_size"], spread["backend"]) == (2, "gloo")
    # ring_allreduce_bytes(n_params=10**6, s=4, W=2) = 4 MB, and 0.1% of headers
    assert spread["collectives"][0]["loopback_bytes"] == pytest.approx([4.004e6, 4.008e6])
    assert spread["fit"]["points"] == 3
    assert data["skipped"] == {}


RECORDED = sorted((Path(__file__).resolve().parents[1] / "docs" / "runs").glob("*.json"))


@pytest.mark.parametrize("path", RECORDED, ids=[p.name for p in RECORDED])
def test_a_recorded_run_saved_loaded_and_saved_again_gives_the_same_bytes(
    path: Path, tmp_path: Path
) -> None:
    once, twice = tmp_path / "once.json", tmp_path / "twice.json"
    load(path).save(once)
    load(once).save(twice)
    assert twice.read_bytes() == once.read_bytes()
    # the recorded file holds what this version writes, every number and key (ints stay ints),
    # once its schema is migrated (MIGRATIONS); only the order of keys may differ. A
    # measurement's derived summary is left out: it places the kernel by the model version that
    # saved the file (what it predicted then), which a newer model does not rewrite (issue 45)
    recorded = json.loads(path.read_text())
    while recorded["schema"] in MIGRATIONS:
        recorded = MIGRATIONS[recorded["schema"]](recorded)
    assert _canonical(once.read_text()) == _canonical(json.dumps(recorded))


def _canonical(text: str) -> str:
    data = json.loads(text)
    for m in data.get("measurements", []):
        m.pop("summary", None)  # derived (Measurement.DERIVED_KEYS): loading ignores it
    for claim in data.get("claims", []):
        if claim.get("visible", True):  # a visible claim's reason derives (ClaimRecord), in
            claim.pop("reason", None)  # the words of the version that wrote the file
    return json.dumps(data, sort_keys=True)


def test_the_recorded_runs_are_found() -> None:
    assert RECORDED, "docs/runs holds no run: the test above checks none"


def test_the_parts_round_trip_on_their_own() -> None:
    from gpuconcepts.results.distributed import DistributedReport
    from gpuconcepts.results.wholemodel import WholeModelResults

    whole, spread = synthetic_wholemodel(), synthetic_distributed()
    assert from_record(WholeModelResults, json.loads(json.dumps(whole.to_dict()))) == whole
    assert from_record(DistributedReport, json.loads(json.dumps(spread.record()))) == spread
    with pytest.raises(GpuConceptsError, match=r"^missing field 'decode\.shape'$"):
        from_record(WholeModelResults, {**whole.to_dict(), "decode": {"cached": 16}})


def _saved(run: Run, tmp_path: Path, edit: object = None) -> Path:
    data = json.loads(run.to_json())
    if callable(edit):
        edit(data)
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data))
    return path


def test_a_stale_count_is_refused_and_named(run: Run, tmp_path: Path) -> None:
    def bump(data: dict) -> None:  # type: ignore[type-arg]
        data["measurements"][4]["flops"] += 1

    path = _saved(run, tmp_path, bump)
    m = run.measurements[4]
    with pytest.raises(GpuConceptsError) as caught:
        load(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: measurements[4] (mlp at B=4, d_in=8, d_out=8, float32): ")
    assert f"flops is {int(m.flops) + 1}, but mlp_flops at its sizes is" in message
    assert "(a stale count)" in message


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d.update(schema=99), f"unknown schema version 99; this gpuconcepts reads {SCHEMA}"),
        (lambda d: d.update(schema=1), f"r.json: unknown schema version 1; this gpuconcepts reads {SCHEMA}"),
        (lambda d: d.pop("wholemodel"), "missing field 'wholemodel'"),
        (lambda d: d.pop("skipped"), "missing field 'skipped'"),
        (lambda d: d["wholemodel"]["decode"]["seconds"][2].__setitem__(0, "slow"),
         r"wholemodel: decode\.seconds\[2\]\[0\] must be a number; got 'slow'"),
        (lambda d: d["wholemodel"]["backward"].pop("step_seconds"),
         "wholemodel: missing field 'backward.step_seconds'"),
        (lambda d: d["wholemodel"]["sizes"]["decode"].update(d=0),
         r"wholemodel: sizes\.decode: model decode-cpu: d \(model width\) must be a positive"),
        (lambda d: d["wholemodel"]["training"].update(peak_bytes=True),
         "wholemodel: training.peak_bytes must be a whole number; got True"),
        (lambda d: d["distributed"]["collectives"][3].update(loopback_bytes="many"),
         r"distributed: collectives\[3\]\.loopback_bytes must be a list; got 'many'"),
        (lambda d: d["distributed"]["fit"].update(points=2.5),
         "distributed: fit.points must be a whole number; got 2.5"),
        (lambda d: d["distributed"].pop("world_size"), "distributed: missing field 'world_size'"),
        (lambda d: d["distributed"]["sizes"].pop("sweep"),
         "distributed: missing field 'sizes.sweep'"),
        (lambda d: d.update(skipped={"distributed": 3}), "skipped must be an object of reasons"),
        (lambda d: d.update(skipped={"gpu": "none here"}),
         "skipped names 'gpu', which is not a part this run left out"),
        (lambda d: d.update(skipped={"distributed": "no loopback"}),
         "skipped names 'distributed', which is not a part this run left out"),
        (lambda d: d.pop("peaks"), "missing field 'peaks'"),
        (lambda d: d["provenance"].pop("torch_version"), "provenance: missing field 'torch_version'"),
        (lambda d: d["measurements"][2].pop("raw_seconds"), r"measurements\[2\]: missing field"),
        (lambda d: d["measurements"][0].update(raw_seconds=[-1.0]),
         r"measurements\[0\]: raw_seconds\[0\] must be 0 or more; got -1.0"),
        (lambda d: d["measurements"][0].update(raw_seconds=[0]), "every raw time must be positive"),
        (lambda d: d["peaks"].update(bytes_per_s=0), "peaks: Peaks: bytes_per_s must be a positive"),
        (lambda d: d["measurements"][0].update(workload="gemm"), "unknown workload 'gemm'"),
        (lambda d: d.update(claims=[{"key": "x"}]), r"claims\[0\]: missing field 'architecture'"),
    ],
)  # fmt: skip
def test_every_bad_entry_is_named(run: Run, tmp_path: Path, edit: object, message: str) -> None:
    path = _saved(run, tmp_path, edit)
    with pytest.raises(GpuConceptsError, match=message):
        load(path)


def test_bad_files_are_named(tmp_path: Path, run: Run) -> None:
    with pytest.raises(GpuConceptsError, match=r"nope\.json: no such file"):
        load(tmp_path / "nope.json")
    truncated = tmp_path / "cut.json"
    truncated.write_text(run.to_json()[:500])
    with pytest.raises(GpuConceptsError, match=r"cut\.json: not a valid JSON file"):
        load(truncated)
    listed = tmp_path / "list.json"
    listed.write_text("[1, 2]")
    with pytest.raises(GpuConceptsError, match=r"list\.json: a run is a JSON object, not list"):
        load(listed)


def test_load_all_reads_a_folder_in_name_order(tmp_path: Path) -> None:
    assert load_all(tmp_path / "missing") == []
    synthetic_run("gpu B").save(tmp_path / "b.json")
    synthetic_run("gpu A").save(tmp_path / "a.json")
    assert [r.provenance.device_name for r in load_all(tmp_path)] == ["gpu A", "gpu B"]


def test_select_and_measurement(run: Run) -> None:
    sweep = run.select("mlp", d_in=8, d_out=8)
    assert [m.size("B") for m in sweep] == [4, 1, 2]  # the preset, then the sweep
    assert run.measurement("mlp", B=2).size("B") == 2
    with pytest.raises(GpuConceptsError, match="no mlp measurement at B=3"):
        run.measurement("mlp", B=3)


def test_a_live_lab_measures_each_size_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from gpuconcepts import kernels

    calls: list[dict[str, object]] = []

    def kernel(device: str, peaks: Peaks, **sizes: object) -> object:
        del device, peaks
        calls.append(sizes)
        return FakeKernel(fake_measurement("mlp", sizes))

    monkeypatch.setitem(kernels.KERNELS, "mlp", kernel)
    lines: list[str] = []
    lab = Lab("cpu", Peaks("cpu", 1e11, 1e10, "float32"), 3, cache_bytes=1, free_bytes=1,
              progress=lines.append)  # fmt: skip
    first = lab.measure("mlp", B=4, d_in=8, d_out=8)
    assert lab.measure("mlp", d_out=8, B=4, d_in=8) is first  # order of the sizes is no matter
    lab.measure("mlp", B=2, d_in=8, d_out=8)
    assert calls == [{"B": 4, "d_in": 8, "d_out": 8}, {"B": 2, "d_in": 8, "d_out": 8}]
    assert len(lab.measurements) == 2
    assert lines == ["mlp: B=4, d_in=8, d_out=8", "mlp: B=2, d_in=8, d_out=8"]
    assert lab.fact("n", lambda: {"x": 1}) == {"x": 1}
    assert lab.fact("n", lambda: {"x": 2}) == {"x": 1}  # computed once


def test_a_saved_run_is_read_never_measured(run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    from gpuconcepts import kernels

    def boom(*_: object, **__: object) -> object:
        raise AssertionError("reading a run ran a kernel")

    monkeypatch.setattr(kernels, "KERNELS", dict.fromkeys(kernels.KERNELS, boom))
    measured = measured_of(run)
    assert measured.time("mlp", B=1, d_in=8, d_out=8) is run.measurement("mlp", B=1)
    with pytest.raises(GpuConceptsError, match="this run holds no mlp measurement at B=64"):
        measured.time("mlp", B=64, d_in=8, d_out=8)
    with pytest.raises(GpuConceptsError, match="this run holds no fact 'cnn-weights'"):
        measured.fact("cnn-weights")


def test_rejudging_needs_the_claim_sizes() -> None:
    with pytest.raises(GpuConceptsError, match="this run records no claim sizes"):
        rejudged(synthetic_run(parts=False))


def test_the_parts_claims_and_counts(run: Run) -> None:
    keys = [r.key for r in run.claims]
    assert keys[:5] == [
        "backward-pass", "decode-knee", "decode-floor", "decode-long-context", "training-memory"
    ]  # fmt: skip
    assert keys[5:] == [
        "traffic-all-reduce", "traffic-table-wise-lookup", "traffic-row-wise-lookup",
        "traffic-column-wise-lookup", "traffic-two-way-tensor-parallel-mlp",
        "traffic-pipeline", "allreduce-grows-with-w",
        "rowwise-more-than-tablewise", "tablewise-columnwise-same-exchange",
        "alpha-beta-predicts", "pipeline-bubble", "pipeline-bubble-shrinks",
    ]  # fmt: skip
    # every made-up result sits where its formula puts it, the all-reduce's growth counted in
    # groups of 2, 3 and 4 processes
    # facts (the bytes counted) and the model's own predictions are not tallied, and the post
    # states no claim of the parts (a backward pass, a decode step, sharding, pipelines)
    assert run.counts == {"holds": 0, "fails": 0, "undecided": 0, "not visible": 0}
    assert all(r.verdict == "holds" for r in run.claims)
    assert run.claim("allreduce-grows-with-w").verdict == "holds"
    assert set(run.by_architecture()) == {"Whole model", "Beyond one device"}
    # the whole-model claims are judged under the run's peaks and cache, on its device
    assert run.claim("decode-knee").test.predicted == pytest.approx(20.0)
    assert run.claim("decode-floor").device == run.provenance.device_name
    assert run.claim("pipeline-bubble").device == run.distributed.device  # type: ignore[union-attr]


@pytest.fixture
def nothing_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every kernel, whole-model experiment and distributed launch an error."""
    from gpuconcepts import kernels
    from gpuconcepts.distributed import launch, report
    from gpuconcepts.kernels import decoder

    def boom(*_: object, **__: object) -> object:
        raise AssertionError("a replay ran an experiment")

    monkeypatch.setattr(kernels, "KERNELS", dict.fromkeys(kernels.KERNELS, boom))
    for name in ("backward_forward", "decode_sweep", "training_peak", "whole_model"):
        monkeypatch.setattr(decoder, name, boom)
    monkeypatch.setattr(report, "measure", boom)
    monkeypatch.setattr(launch, "launch", boom)


@pytest.mark.usefixtures("nothing_runs")
def test_rejudging_the_parts_runs_nothing(run: Run, tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    run.save(path)
    again = load(path)
    assert rejudged(again) == run.claims
    # the judges read the stored results: a slower backward pass in the file changes the verdict
    data = json.loads(path.read_text())
    data["wholemodel"]["backward"]["step_seconds"] = [9e-3, 9e-3, 9e-3]  # backward 8x forward
    path.write_text(json.dumps(data))
    judged = {r.key: r.verdict for r in rejudged(load(path))}
    assert judged["backward-pass"] == "fails"
    assert judged["decode-knee"] == "holds"


@pytest.mark.usefixtures("nothing_runs")
def test_verify_run_rejudges_the_parts(
    run: Run, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "r.json"
    run.save(path)
    assert cli.main(["verify", "--run", str(path), "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    every = [*record["claims"], *record["facts"], *record["predictions"]]
    assert sorted((c["key"], c["verdict"]) for c in every) == sorted(
        (r.key, r.verdict) for r in run.claims
    )
    assert all(c["stored_verdict"] == c["verdict"] for c in every)
    assert record["flips"] == []
    assert record["counts"] == run.counts
    assert cli.main(["verify", "--run", str(path)]) == 0
    text = capsys.readouterr().out
    assert "Of 0 claims: 0 hold, 0 fail, 0 undecided, 0 not visible on this device." in text
    assert "Facts, exact checks (not tallied):" in text
    assert "The model's own predictions (ledger 2) (not tallied):" in text
    assert "  backward-pass: holds\n" in text
    assert "  pipeline-bubble-shrinks: holds\n" in text


def test_a_schema_1_file_is_one_line_naming_it(
    run: Run, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _saved(run, tmp_path, lambda d: d.update(schema=1))
    for argv in (["verify", "--run", str(path)], ["compare", str(path)]):
        assert cli.main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert err.endswith(f"{path}: unknown schema version 1; this gpuconcepts reads {SCHEMA}")
        assert len(err.splitlines()) == 1


def test_a_run_whose_distributed_fit_failed_can_be_saved(run: Run, tmp_path: Path) -> None:
    import dataclasses

    spread = dataclasses.replace(
        run.distributed, fit=None, fit_problem="time does not grow with message size"
    )  # type: ignore[type-var]
    unfit = dataclasses.replace(run, distributed=spread)
    unfit = dataclasses.replace(unfit, claims=part_claims(unfit))
    assert unfit.claim("alpha-beta-predicts").verdict == "not visible"
    unfit.save(tmp_path / "r.json")
    assert rejudged(load(tmp_path / "r.json")) == unfit.claims


def test_compare_puts_devices_side_by_side() -> None:
    fast, slow = synthetic_run("machine A", 1e-3), synthetic_run("machine B", 4e-3)
    rows = compare_rows([fast, slow])
    assert len(rows) == len(fast.measurements)
    first = rows[0]
    assert (first["workload"], first["sizes"]) == ("dlrm-random", "N=256, d=8, B=4, L=2")
    assert first["runs"][1]["seconds"] == pytest.approx(4 * first["runs"][0]["seconds"])
    text = format_compare([fast, slow])
    assert "[1] machine A" in text
    assert "[2] machine B" in text


def test_two_runs_of_one_machine_are_two_columns() -> None:
    # the case: two runs of one CPU carried one label, and the table showed one run twice
    first = synthetic_run("cpu (AMD EPYC, 2 threads)", 1e-3)
    later = synthetic_run("cpu (AMD EPYC, 2 threads)", 2e-3)
    later = dataclasses.replace(
        later, provenance=dataclasses.replace(later.provenance, created_utc="2026-02-02T10:00:00Z")
    )
    assert first.provenance.device_name == later.provenance.device_name
    assert first.label != later.label
    assert later.label == "cpu (AMD EPYC, 2 threads), 2026-02-02 10:00 UTC, no commit, quick"
    rows = compare_rows([first, later])
    assert all(row["runs"][0]["seconds"] != row["runs"][1]["seconds"] for row in rows)


def test_cli_compare_and_its_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], run: Run
) -> None:
    good = tmp_path / "good.json"
    run.save(good)
    assert cli.main(["compare", str(good), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["devices"][0]["label"] == run.label
    assert data["workloads"][0]["workload"] == "dlrm-random"

    def bump(d: dict) -> None:  # type: ignore[type-arg]
        d["measurements"][0]["bytes"] *= 2

    bad = _saved(run, tmp_path, bump)
    for argv in (["compare", str(good), str(bad)], ["verify", "--run", str(bad)]):
        assert cli.main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1
        assert err.endswith("(a stale count)")
        assert "measurements[0] (dlrm-random at N=256, d=8, B=4, L=2, float32)" in err
    assert cli.main(["compare", str(tmp_path / "nope.json")]) == 2
    assert "nope.json: no such file" in capsys.readouterr().err


def test_a_run_keeps_the_prediction_it_registered(run: Run, tmp_path: Path) -> None:
    """A run's file stores each measurement's prediction as it was measured; loading keeps it
    (Run.registered) and saving writes it back, whatever today's model predicts (issue 45)."""
    data = json.loads(run.to_json())
    today = data["measurements"][0]["summary"]["predicted_seconds"]
    assert today == run.registered_seconds[0]  # a run made in memory registers today's
    data["measurements"][0]["summary"]["predicted_seconds"] = 2.5e-3
    data["measurements"][1]["summary"]["predicted_seconds"] = None
    path = tmp_path / "kept.json"
    path.write_text(json.dumps(data))
    again = load(path)
    assert again.registered_seconds[:2] == (2.5e-3, None)
    assert again.registered_seconds[2] == run.registered_seconds[2]
    saved = json.loads(again.to_json())["measurements"]
    assert saved[0]["summary"]["predicted_seconds"] == 2.5e-3
    assert saved[0]["summary"]["roofline_ratio"] == pytest.approx(
        run.measurements[0].seconds / 2.5e-3
    )
    assert saved[1]["summary"]["predicted_seconds"] is None


@pytest.mark.parametrize("value", ["soon", -1.0, 0, True])
def test_a_registered_prediction_that_is_not_seconds_is_refused(
    run: Run, tmp_path: Path, value: object
) -> None:
    def edit(d: dict) -> None:  # type: ignore[type-arg]
        d["measurements"][3]["summary"]["predicted_seconds"] = value

    with pytest.raises(GpuConceptsError, match=r"measurements\[3\]\.summary\.predicted_seconds "
                       "must be a positive number of seconds or null"):  # fmt: skip
        load(_saved(run, tmp_path, edit))


def test_registered_predictions_must_match_the_measurements(run: Run) -> None:
    with pytest.raises(GpuConceptsError, match=r"Run\.registered holds 1 predictions for"):
        dataclasses.replace(run, registered=(1.0,))
