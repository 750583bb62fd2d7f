"""``gpuconcepts profile`` and ``verify``, end to end at tiny sizes (presets swapped for a tiny file)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gpuconcepts.claims.judge import part_claims, rejudged

pytest.importorskip("torch")

from synthetic import PEAKS, synthetic_distributed, synthetic_wholemodel

from gpuconcepts import cli, formulas
from gpuconcepts import sizes as size_tables
from gpuconcepts.distributed import report
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.results.measured import SECOND_LOOK
from gpuconcepts.roofline import Peaks, verdict
from gpuconcepts.roofline.version import model_version
from gpuconcepts.run import Run, catalogue_hash, load

TINY_TOML = """
[cpu.timing]
repeats = 2
[cpu.budget]
seconds = 60
memory_mib = 256
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
[cpu.claims]
dlrm_table_mib = 1
dlrm_B = 64
dlrm_L = 2
dlrm_d = 16
dlrm_widths = [4, 16]
mlp_d = 32
mlp_batches = [1, 2, 4, 8]
cnn_B = 1
cnn_HW = 8
cnn_C = 4
rnn_B = 2
rnn_d = 8
rnn_lengths = [4, 8, 16]
rnn_length_B = 2
rnn_length_d = 8
rnn_S = 8
rnn_batches = [1, 2, 4]
attn_B = 1
attn_d = 16
attn_heads = 2
attn_lengths = [8, 16, 32]
decode_steps = 4
roof_gemm_n = 32
roof_triad_mib = 1
[cpu.quick.sweeps]
mlp_B = [1]
transformer_S = [4]
"""


@pytest.fixture(autouse=True)
def tiny_presets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "presets.toml"
    # the parts' tables (distributed, whole model) as shipped: their experiments are faked
    # (parts_as_if_measured), but a run resolves all its sizes before it measures anything
    shipped = size_tables.presets_path().read_text(encoding="utf-8")
    path.write_text(TINY_TOML + shipped[shipped.index("\n[distributed]\n") :])
    monkeypatch.setattr(size_tables, "presets_path", lambda: path)
    return path


@pytest.fixture(autouse=True)
def peaks_measured_once(measured_peaks: Peaks, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every profile of the module reads this machine's peaks measured once for the session
    (conftest's measured_peaks): measuring them (each roof's sweep, at this machine's cache
    sizes, whatever the presets) was most of each profile's time, and the tests check what a
    profile does with them."""
    monkeypatch.setattr("gpuconcepts.kernels.measure_peaks", lambda *_a, **_k: measured_peaks)


@pytest.fixture(autouse=True)
def parts_as_if_measured(monkeypatch: pytest.MonkeyPatch) -> list[tuple[object, ...]]:
    """The whole-model and distributed parts made up (their experiments are tested in
    test_wholemodel.py and test_distributed.py); the calls are recorded."""
    calls: list[tuple[object, ...]] = []

    def whole_model(device: str, sizes: object, **_: object) -> object:
        calls.append(("whole_model", device, sizes))
        return synthetic_wholemodel(PEAKS)

    def measure(world: int, sizes: object, **options: object) -> object:
        calls.append(("measure", world, sizes, options))
        return synthetic_distributed()

    monkeypatch.setattr("gpuconcepts.kernels.decoder.whole_model", whole_model)
    monkeypatch.setattr(report, "measure", measure)
    return calls


PROFILE = [
    "dlrm-random",
    "dlrm-sequential",
    "dlrm-hot",
    "dlrm-dense",
    "mlp",
    "mlp",
    "cnn-conv",
    "cnn-depthwise",
    "rnn-module",
    "rnn-loop",
    "rnn-hoisted",
    "rnn-gemm",
    "transformer-prefill",
    "transformer-prefill",
    "transformer-prefill-causal",
    "transformer-decode",
]


def test_profile_saves_a_run_that_verify_and_compare_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = tmp_path / "r.json"
    assert cli.main(["profile", "--device", "cpu", "--quick", "--json", "--save", str(saved)]) == 0
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert json.loads(saved.read_text()) == data  # --json prints what --save writes
    run = load(saved)
    assert run.provenance.device == "cpu"
    assert run.provenance.device_name.startswith("cpu (")
    assert run.provenance.quick is True
    assert run.provenance.catalogue_hash == catalogue_hash()
    peaks = data["peaks"]
    assert peaks["ridge_point"] == pytest.approx(peaks["flops_per_s"] / peaks["bytes_per_s"])
    # the profile comes first, in the order of the book; the claims' extra sizes follow
    assert [m["workload"] for m in data["measurements"][: len(PROFILE)]] == PROFILE
    for m in data["measurements"]:
        # two repetitions alone; a comparison runs two rounds at least, more while undecided
        assert len(m["raw_seconds"]) == 2 if not m.get("group") else len(m["raw_seconds"]) >= 2
        summary = m["summary"]
        assert summary["bound"] == (
            "memory" if summary["intensity"] < peaks["ridge_point"] else "compute"
        )
    # the prediction registered with each measurement is ledger 2's, under the run's peaks
    # and the model's version it was measured with
    assert run.provenance.model_version == model_version()
    for measured, registered in zip(run.measurements, run.registered_seconds, strict=True):
        assert registered == pytest.approx(verdict(measured, run.peaks).roof_seconds)
    mlp = data["measurements"][4]
    assert (mlp["flops"], mlp["bytes"]) == (
        formulas.mlp_flops(B=4, d_in=8, d_out=8),
        formulas.mlp_bytes(B=4, d_in=8, d_out=8, s=4),
    )
    # each (workload, sizes) was measured once per comparison, and the claims were judged
    keys = [
        (m["workload"], json.dumps(m["params"], sort_keys=True), m.get("group", ""))
        for m in data["measurements"]
    ]
    assert len(keys) == len(set(keys))
    # a size timed in several comparisons is a roof's reference kernel, timed beside each, or
    # an RNN size that these tiny presets put in two sweeps (a second look at an anomaly, kept
    # apart from the rounds a verdict reads, may repeat any)
    firsts = [k for k in keys if not k[2].endswith(SECOND_LOOK)]
    repeated = {k[:2] for k in firsts if sum(other[:2] == k[:2] for other in firsts) > 1}
    assert {workload for workload, _ in repeated} <= {
        "peak-gemm",
        "peak-triad",
        "rnn-gemm",
        "rnn-module",
    }
    assert len(data["claims"]) == len(run.claims) > 10
    assert "peaks on cpu (" in captured.err
    assert "transformer-decode: " in captured.err

    # the whole-model and distributed results are in the file, and their claims judged
    quick = size_tables.load_part_sizes("wholemodel", quick=True, device="cpu")
    assert data["wholemodel"]["sizes"]["repeats"] == quick["repeats"]
    assert data["distributed"]["world_size"] == 2
    assert data["skipped"] == {}
    keys = [c.key for c in run.claims]
    assert keys.index("backward-pass") < keys.index("traffic-all-reduce")
    assert run.claim("decode-knee").device == run.provenance.device_name

    # verify --run judges the saved run again, without measuring: the same verdicts
    assert cli.main(["verify", "--run", str(saved), "--json"]) == 0
    judged = json.loads(capsys.readouterr().out)
    # the post's claims, the facts and the model's predictions (two ledgers), together
    # every claim of the run, each with the same verdict
    shown = [c for part in ("claims", "facts", "predictions") for c in judged[part]]
    assert sorted((c["key"], c["verdict"]) for c in shown) == sorted(
        (c.key, c.verdict) for c in run.claims
    )
    assert cli.main(["compare", str(saved)]) == 0
    assert "[1] cpu (" in capsys.readouterr().out


def test_the_parts_are_measured_at_their_sizes_or_skipped_with_the_reason(
    parts_as_if_measured: list[tuple[object, ...]], monkeypatch: pytest.MonkeyPatch
) -> None:
    from gpuconcepts.collect import collect
    from gpuconcepts.sizing import RunSizes

    run = collect("cpu", True, claims=False)
    quick = RunSizes.resolve("cpu", True, free_bytes=2**36)
    whole, (name, world, given, options) = parts_as_if_measured
    assert whole == ("whole_model", "cpu", quick.wholemodel)
    assert (name, world, options) == ("measure", 2, {"backend": "gloo", "growth_world": 4})
    assert isinstance(given, RunSizes)  # the run's sizes, handed down
    assert (given.quick, given.distributed) == (True, quick.distributed)
    assert [r.key for r in run.claims] == [r.key for r in part_claims(run)]
    assert len(run.claims) == 17

    def no_loopback(*_: object, **__: object) -> object:
        raise GpuConceptsError("/proc/net/dev has no loopback interface here (Linux only)")

    monkeypatch.setattr(report, "measure", no_loopback)
    lines: list[str] = []
    run = collect("cpu", False, claims=False, wholemodel=False, progress=lines.append)
    assert (run.wholemodel, run.distributed, run.claims) == (None, None, ())
    assert run.skipped == {
        "wholemodel": "left out when the run was collected",
        "distributed": "this machine could not run it: /proc/net/dev has no loopback "
        "interface here (Linux only)",
    }
    assert any(line.endswith("distributed: skipped (/proc/net/dev has no loopback interface "
                             "here (Linux only))") for line in lines)  # fmt: skip
    again = Run.from_json(run.to_json())
    assert again.skipped == run.skipped
    with pytest.raises(GpuConceptsError, match="this run records no claim sizes"):
        rejudged(again)


def test_profile_full_sizes_use_the_full_sweeps(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["profile", "--device", "cpu", "--json"]) == 0
    measured = json.loads(capsys.readouterr().out)["measurements"][:18]
    batches = [m["params"]["B"] for m in measured if m["workload"] == "mlp"]
    lengths = [m["params"]["S"] for m in measured if m["workload"] == "transformer-prefill"]
    assert batches[:3] == [4, 1, 2]  # the preset, then the full sweep [1, 2]
    assert lengths[:3] == [8, 4, 16]  # the preset, then the full sweep [4, 16]


def test_profile_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["profile", "--device", "cpu", "--quick"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("device: cpu (")
    assert out[0].endswith("quick sizes")
    assert out[1].startswith("peaks: compute ")
    header = next(i for i, line in enumerate(out) if line.startswith("workload"))
    rows = out[header + 1 : header + 1 + len(PROFILE)]
    assert [row.split()[0] for row in rows] == PROFILE
    # the predicted bound, then the roof that binds it (its kind, and a memory roof's level)
    # with the share of it attained and that share's spread (left out when it rounds away)
    bound = r"(compute|overhead|memory \(\w+\))"
    share = r"\d[\d.,]*%( \(\d[\d.,]*%–\d[\d.,]*%\))?"
    # a kernel under half of every roof says so, and names the nearest (issue 46)
    label = rf"({bound} {share}|under half of every roof: {share} of the nearest, {bound})"
    assert all(re.search(rf"\s(memory|compute)\s+{label}$", row) for row in rows), rows
    assert out[-1].startswith("wall time ")


def test_profile_bad_device(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["profile", "--device", "npu", "--quick"]) == 2
    err = capsys.readouterr().err
    assert "argument --device: invalid choice: 'npu' (choose from" in err
    assert "Traceback" not in err
