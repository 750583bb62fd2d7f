"""gpuconcepts.profile: the ``profile`` command at tiny sizes (presets swapped for a tiny file)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")

from gpuconcepts import formulas, profile
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.kernels import presets

TINY_TOML = """
[cpu.timing]
repeats = 2
[cpu.peaks]
gemm_n = 32
stream_mib = 1
[cpu.dlrm]
N = 512
d = 8
B = 4
L = 2
[cpu.dlrm_dense]
B = 4
d_in = 8
d_out = 8
[cpu.mlp]
B = 4
d_in = 8
d_out = 8
[cpu.cnn]
B = 1
H = 6
W = 6
C_in = 2
C_out = 2
K = 3
[cpu.cnn_depthwise]
B = 1
H = 6
W = 6
C = 2
K = 3
[cpu.rnn]
B = 2
S = 3
d_in = 4
d_h = 4
[cpu.transformer_prefill]
B = 1
S = 8
d = 8
heads = 2
[cpu.transformer_decode]
B = 1
S_prompt = 4
steps = 2
d = 8
heads = 2
[cpu.sweeps]
mlp_B = [1, 2]
transformer_S = [4, 16]
[cpu.quick.sweeps]
mlp_B = [1]
transformer_S = [4]
"""

FAMILIES = {"dlrm", "mlp", "cnn", "rnn", "transformer"}


@pytest.fixture(autouse=True)
def tiny_presets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "presets.toml"
    path.write_text(TINY_TOML)
    monkeypatch.setattr(presets, "presets_path", lambda: path)
    return path


def test_profile_json_structure(capsys: pytest.CaptureFixture[str]) -> None:
    assert profile.run_profile("cpu", quick=True, as_json=True) == 0
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert data["device"] == "cpu"
    assert data["device_name"].startswith("cpu (")
    assert data["quick"] is True
    assert data["datasheet"] is None
    peaks = data["peaks"]
    assert peaks["flops_per_s"] > 0
    assert peaks["bytes_per_s"] > 0
    assert peaks["ridge_point"] == pytest.approx(peaks["flops_per_s"] / peaks["bytes_per_s"])
    names = [m["workload"] for m in data["measurements"]]
    assert names == [
        "dlrm-random",
        "dlrm-sequential",
        "dlrm-hot",
        "dlrm-dense",
        "mlp",
        "mlp-B1",
        "cnn-conv3x3",
        "cnn-depthwise3x3",
        "rnn-module",
        "rnn-loop",
        "rnn-gemm",
        "transformer-prefill",
        "transformer-prefill-S4",
        "transformer-decode",
    ]
    for m in data["measurements"]:
        assert m["workload"].split("-")[0] in FAMILIES
        assert m["seconds"] > 0
        assert len(m["raw_seconds"]) == 2
        assert m["flops_per_s"] == pytest.approx(m["flops"] / m["seconds"])
        assert m["bytes_per_s"] == pytest.approx(m["bytes"] / m["seconds"])
        assert m["intensity"] == pytest.approx(m["flops"] / m["bytes"])
        assert m["predicted_seconds"] == pytest.approx(
            float(
                formulas.roofline_seconds(
                    F=m["flops"], Q=m["bytes"], P=peaks["flops_per_s"], beta=peaks["bytes_per_s"]
                )
            )
        )
        assert m["bound"] == ("memory" if m["intensity"] < peaks["ridge_point"] else "compute")
    mlp = data["measurements"][4]
    assert (mlp["flops"], mlp["bytes"]) == (
        formulas.mlp_flops(B=4, d_in=8, d_out=8),
        formulas.mlp_bytes(B=4, d_in=8, d_out=8, s=4),
    )
    # progress went to stderr, one line per step, nothing of it on stdout
    assert "profiling on cpu" in captured.err
    assert "transformer: decode" in captured.err
    assert captured.out.lstrip().startswith("{")


def test_profile_full_sizes_use_the_full_sweeps(capsys: pytest.CaptureFixture[str]) -> None:
    assert profile.run_profile("cpu", quick=False, as_json=True) == 0
    names = [m["workload"] for m in json.loads(capsys.readouterr().out)["measurements"]]
    assert "mlp-B2" in names
    assert "transformer-prefill-S16" in names


def test_profile_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert profile.run_profile("cpu", quick=True, as_json=False) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("device: cpu (")
    assert out[0].endswith("(quick sizes)")
    assert out[1].startswith("peaks: compute ")
    header = next(i for i, line in enumerate(out) if line.startswith("workload"))
    rows = out[header + 1 : header + 15]
    assert [row.split()[0] for row in rows][:3] == ["dlrm-random", "dlrm-sequential", "dlrm-hot"]
    assert all(row.split()[-1] in {"memory", "compute"} for row in rows)
    assert out[-1].startswith("wall time ")


def test_profile_bad_device() -> None:
    with pytest.raises(GpuConceptsError, match="device 'npu' is not one of auto, cpu, cuda"):
        profile.run_profile("npu", quick=True, as_json=True)
