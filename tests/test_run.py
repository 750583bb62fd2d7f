"""The Run: saved, reloaded, validated, compared; and the Lab that measures each size once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from synthetic import fake_measurement, synthetic_run

from gpuconcepts import cli
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.lab import Lab
from gpuconcepts.render import compare_rows, format_compare
from gpuconcepts.roofline import Peaks
from gpuconcepts.run import SCHEMA, Run, load, load_all


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
        (lambda d: d.update(schema=99), "unknown schema version 99; this gpuconcepts reads 1"),
        (lambda d: d.pop("peaks"), "missing field 'peaks'"),
        (lambda d: d["provenance"].pop("torch_version"), "provenance: missing field 'torch_version'"),
        (lambda d: d["measurements"][2].pop("raw_seconds"), r"measurements\[2\]: missing field"),
        (lambda d: d["measurements"][0].update(raw_seconds=[-1.0]), "every raw time must be positive"),
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
    assert [r.label for r in load_all(tmp_path)] == ["gpu A", "gpu B"]


def test_select_and_measurement(run: Run) -> None:
    sweep = run.select("mlp", d_in=8, d_out=8)
    assert [m.size("B") for m in sweep] == [4, 1, 2]  # the preset, then the sweep
    assert run.measurement("mlp", B=2).size("B") == 2
    with pytest.raises(GpuConceptsError, match="no mlp measurement at B=3"):
        run.measurement("mlp", B=3)


def test_a_live_lab_measures_each_size_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from gpuconcepts.kernels import suite

    calls: list[dict[str, object]] = []

    def kernel(device: str, peaks: Peaks, *, repeats: int, **sizes: object) -> object:
        del device, peaks, repeats
        calls.append(sizes)
        return fake_measurement("mlp", sizes)

    monkeypatch.setitem(suite.KERNELS, "mlp", kernel)
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


def test_a_replaying_lab_never_measures(run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    from gpuconcepts.kernels import suite

    def boom(*_: object, **__: object) -> object:
        raise AssertionError("a replay ran a kernel")

    monkeypatch.setattr(suite, "KERNELS", dict.fromkeys(suite.KERNELS, boom))
    lab = run.lab()
    assert lab.measure("mlp", B=1, d_in=8, d_out=8) is run.measurement("mlp", B=1)
    with pytest.raises(GpuConceptsError, match="this run holds no mlp measurement at B=64"):
        lab.measure("mlp", B=64, d_in=8, d_out=8)
    with pytest.raises(GpuConceptsError, match="this run holds no fact 'cnn-weights'"):
        lab.fact("cnn-weights", dict)


def test_rejudging_needs_the_claim_sizes(run: Run) -> None:
    with pytest.raises(GpuConceptsError, match="this run records no claim sizes"):
        run.rejudged()


def test_compare_puts_devices_side_by_side() -> None:
    fast, slow = synthetic_run("machine A", 1e-3), synthetic_run("machine B", 4e-3)
    rows = compare_rows([fast, slow])
    assert len(rows) == len(fast.measurements)
    first = rows[0]
    assert (first["workload"], first["sizes"]) == ("dlrm-random", "N=256, d=8, B=4, L=2")
    assert first["runs"]["machine B"]["seconds"] == pytest.approx(
        4 * first["runs"]["machine A"]["seconds"]
    )
    text = format_compare([fast, slow])
    assert "[1] machine A" in text
    assert "[2] machine B" in text


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
