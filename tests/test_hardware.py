"""gpuconcepts.hardware: the datasheet table, its ridge points, the device lookup, the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpuconcepts import cli, formulas, hardware
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.hardware import GPUS, lookup


def test_required_gpus_are_listed() -> None:
    assert {"A100 80GB SXM", "H100 SXM", "H200", "L4", "T4", "RTX 4090"} <= set(GPUS)


def test_h100_bf16_ridge_point_is_about_295() -> None:
    ridge = GPUS["H100 SXM"].ridge_point("bf16")
    assert round(ridge) == 295
    assert ridge == float(formulas.ridge_point(P=989e12, beta=3.35e12))
    assert GPUS["H100 SXM"].ridge_point("bfloat16") == ridge  # kernel dtype names work too


@pytest.mark.parametrize(
    ("gpu", "dtype", "tflops", "tb_per_s"),
    [
        ("A100 80GB SXM", "bf16", 312, 2.039),
        ("A100 80GB SXM", "tf32", 156, 2.039),
        ("H100 SXM", "fp16", 989, 3.35),
        ("H200", "bf16", 989, 4.8),
        ("L4", "fp16", 121, 0.3),
        ("T4", "fp16", 65, 0.32),
        ("RTX 4090", "bf16", 165.2, 1.008),
    ],
)
def test_dense_peaks_and_decimal_bandwidth(
    gpu: str, dtype: str, tflops: float, tb_per_s: float
) -> None:
    row = GPUS[gpu]
    assert row.flops_per_s[dtype] == pytest.approx(tflops * 1e12)
    assert row.bytes_per_s == pytest.approx(tb_per_s * 1e12)  # 1 TB = 1e12 bytes, not 2**40


def test_no_sparse_figures() -> None:
    # dense tensor-core peaks are at most ~16x fp32 on these parts; a 2:4-sparse number would
    # also show up as exactly 1979 or 624 on the Hopper and Ampere rows.
    assert GPUS["H100 SXM"].flops_per_s["bf16"] != 1979e12
    assert GPUS["A100 80GB SXM"].flops_per_s["bf16"] != 624e12
    for row in GPUS.values():
        for dtype, value in row.flops_per_s.items():
            assert value <= 16 * row.flops_per_s["fp32"], (row.name, dtype)


def test_every_row_has_source_l2_and_ridges() -> None:
    for row in GPUS.values():
        assert row.source.startswith("NVIDIA")
        assert "." not in row.source.split()[0]  # a document name, not a web address
        assert row.l2_bytes >= 4 * 1024**2
        data = row.to_dict()
        assert set(data["ridge_points"]) == set(row.flops_per_s)


def test_t4_has_no_bf16() -> None:
    assert GPUS["T4"].peak("bfloat16") is None
    assert GPUS["T4"].peak("float16") == 65e12
    with pytest.raises(GpuConceptsError, match=r"T4 has no 'bf16' peak; it lists fp32, fp16"):
        GPUS["T4"].ridge_point("bf16")


@pytest.mark.parametrize(
    ("device_name", "expected"),
    [
        ("NVIDIA A100-SXM4-80GB", "A100 80GB SXM"),
        ("NVIDIA H100 80GB HBM3", "H100 SXM"),
        ("NVIDIA H200", "H200"),
        ("NVIDIA L4", "L4"),
        ("Tesla T4", "T4"),
        ("NVIDIA GeForce RTX 4090", "RTX 4090"),
        ("NVIDIA A100-SXM4-40GB", None),
        ("NVIDIA A100 80GB PCIe", None),
        ("NVIDIA H100 PCIe", None),
        ("NVIDIA H200 NVL", None),
        ("NVIDIA GeForce RTX 4090 D", None),
        ("NVIDIA L40S", None),
    ],
)
def test_lookup_by_cuda_device_name(device_name: str, expected: str | None) -> None:
    row = lookup(device_name)
    assert (row.name if row else None) == expected


def test_current_gpu_is_none_without_cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(hardware, "nvidia_driver_seen", lambda: True)  # torch is asked
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert hardware.current_gpu() is None
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda _i: "NVIDIA H200")
    gpu = hardware.current_gpu()
    assert gpu is not None
    assert gpu.name == "H200"


def test_run_hardware_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["hardware"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["GPU", "fp32", "TFLOP/s"]
    h100 = next(line for line in lines if line.startswith("H100 SXM"))
    assert h100.split()[-2:] == ["295", "(bf16)"]
    t4 = next(line for line in lines if line.startswith("T4"))
    assert t4.split()[-2:] == ["203", "(fp16)"]
    assert "dense (not 2:4 sparse)" in out
    for name in GPUS:
        assert f"  {name}: NVIDIA" in out


def test_run_hardware_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["hardware", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    rows = {row["name"]: row for row in data["gpus"]}
    assert set(rows) == set(GPUS)
    assert round(rows["H100 SXM"]["ridge_points"]["bf16"]) == 295
    assert rows["H200"]["bytes_per_s"] == 4.8e12


# -- the hardware page: the post's small layers on every GPU, and Q12's intensity ceiling ----------
def test_datasheet_peaks_are_the_table_rows_in_one_dtype() -> None:
    h100 = GPUS["H100 SXM"].datasheet_peaks("float16")
    assert (h100.flops_per_s, h100.bytes_per_s, h100.dtype) == (989e12, 3.35e12, "fp16")
    assert h100.ridge_point == GPUS["H100 SXM"].ridge_point("fp16")
    assert [p.name for p in hardware.datasheet_peaks("bf16")] == [
        "A100 80GB SXM", "H100 SXM", "H200", "L4", "RTX 4090"
    ]  # fmt: skip
    # a datasheet GPU is a CUDA device: its memory roof is HBM, as a measured GPU's is
    assert {p.device for p in hardware.datasheet_peaks("bf16")} == {"cuda"}
    assert [level.name for level in h100.memory_roofs] == ["HBM"]
    with pytest.raises(GpuConceptsError, match="T4 has no 'bf16' peak"):
        GPUS["T4"].datasheet_peaks("bf16")


def test_q12_and_q14_are_bandwidth_limited_in_nanoseconds_on_an_h100() -> None:
    from gpuconcepts.questions import question
    from gpuconcepts.roofline import predicted_seconds

    h100 = GPUS["H100 SXM"].datasheet_peaks("fp16")
    q12, q14 = question(12).steps[1].values, question(14).steps[0].values
    q12_bytes = formulas.mlp_bytes(**q12, s=2)
    q14_bytes = formulas.conv_bytes(**q14, s=2)
    assert (q12_bytes, q14_bytes) == (360_448, 107_520)  # 2·(64·512 + 512·256 + 64·256), ...
    # the bytes, not the FLOPs, set the roofline time, and it is about a tenth of a microsecond
    assert predicted_seconds(formulas.mlp_flops(**q12), q12_bytes, h100) == q12_bytes / 3.35e12
    assert predicted_seconds(formulas.conv_flops(**q14), q14_bytes, h100) == q14_bytes / 3.35e12
    assert q12_bytes / 3.35e12 == pytest.approx(1.076e-7, rel=1e-3)


def test_q12_intensity_ceiling_is_the_limit_of_the_formula_and_below_the_h100_ridge() -> None:
    import sympy as sp

    from gpuconcepts.symbols import sym

    limit = sp.limit(formulas.mlp_intensity.expr, sym("B"), sp.oo)
    d_in, d_out, s = sym("d_in"), sym("d_out"), sym("s")
    assert sp.simplify(limit - 2 * d_in * d_out / (s * (d_in + d_out))) == 0
    cap = formulas.mlp_intensity.supremum("B", d_in=512, d_out=256, s=2)
    assert cap == pytest.approx(2 * 512 * 256 / (2 * (512 + 256)))  # 170.67 FLOP/byte
    for name in ("H100 SXM", "H200", "L4", "T4"):  # FP16 ridge above the ceiling: never
        ridge = GPUS[name].ridge_point("fp16")
        assert ridge > cap
        assert formulas.mlp_intensity.reaches(ridge, "B", d_in=512, d_out=256, s=2) is None
    # below it, a (huge) batch gets there: the first batch at or past the A100's ridge
    a100 = GPUS["A100 80GB SXM"].ridge_point("fp16")
    first = formulas.mlp_intensity.reaches(a100, "B", d_in=512, d_out=256, s=2)
    assert first == 1480
    assert formulas.mlp_intensity(B=first, d_in=512, d_out=256, s=2) >= a100
    assert formulas.mlp_intensity(B=first - 1, d_in=512, d_out=256, s=2) < a100


def test_without_an_nvidia_driver_current_gpu_asks_no_torch(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # this machine's own answer, in a fresh process: torch is imported only where a driver is
    code = (
        "import sys; from gpuconcepts import hardware; gpu = hardware.current_gpu(); "
        "print(hardware.nvidia_driver_seen(), 'torch' in sys.modules, gpu is None)"
    )
    src = str(Path(__file__).resolve().parents[1] / "src")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [src, os.environ.get("PYTHONPATH")])),
    }
    seen, imported, none = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    ).stdout.split()
    assert imported == seen
    assert none == "True" or seen == "True"
    # a Linux-like system without /proc/driver/nvidia, /dev/nvidia* or /dev/dxg has no CUDA
    monkeypatch.setattr(hardware, "Path", lambda p: tmp_path / p.strip("/"))
    (tmp_path / "dev").mkdir()
    (tmp_path / "proc").mkdir()
    assert hardware.nvidia_driver_seen() is False
    (tmp_path / "dev" / "dxg").touch()
    assert hardware.nvidia_driver_seen() is True
