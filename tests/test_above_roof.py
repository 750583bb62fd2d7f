"""Why a kernel ran above its roof, as the pages say it: above the compute peak P but within the
hardware's limit it ran a faster code path than P's square GEMM (a finding, as the roofline
claims' detail says since 3184be1); above that limit, or above a memory roof, it is a faulty
measurement or a ceiling measured in a busy moment. Where the run records no limit,
``roofline.PATH_FACTOR`` times P stands for it."""

from __future__ import annotations

from gpuconcepts.measure import Measurement
from gpuconcepts.render.text.sentences import why_unexplained
from gpuconcepts.roofline import Peaks

PEAKS = Peaks("cpu", 1e11, 1e10, "float32", physical_flops_per_s=4e11)


def _said(seconds: float, flops: float, nbytes: float, peaks: Peaks = PEAKS) -> str:
    said = why_unexplained(Measurement("cnn-conv", "cpu", {}, (seconds,), flops, nbytes), peaks)
    assert said is not None
    return said


def test_a_compute_kernel_above_p_within_the_hardware_is_a_finding() -> None:
    said = _said(0.005, 1e9, 1e6)  # 200 GFLOP/s: twice P, half the hardware's limit
    assert "faster code path than P's" in said
    assert "faulty" not in said


def test_a_compute_kernel_above_the_hardware_is_an_anomaly() -> None:
    said = _said(0.001, 1e9, 1e6)  # 1 TFLOP/s against a 400 GFLOP/s limit
    assert "faulty measurement" in said
    assert "faster code path" not in said


def test_a_kernel_above_a_memory_roof_is_an_anomaly() -> None:
    said = _said(1e-5, 1e3, 1e6)  # 100 GB/s against a 10 GB/s roof
    assert "faulty measurement" in said
    assert "faster code path" not in said


def test_without_a_limit_up_to_four_times_p_is_a_faster_path() -> None:
    # the run records no hardware limit: the book takes PATH_FACTOR times P for one, as the
    # roofline claims and the analysis do (roofline.faster_path, one rule)
    bare = Peaks("cpu", 1e11, 1e10, "float32")
    said = _said(0.005, 1e9, 1e6, bare)  # 2x P
    assert "faster code path than P's" in said
    assert "within 4× P, as the run records no hardware limit" in said
    beyond = _said(0.001, 1e9, 1e6, bare)  # 10x P
    assert "more than 4× P, so a faulty measurement" in beyond
    assert "faster code path" not in beyond
