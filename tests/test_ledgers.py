"""Ledger 1's bound claims tested as the post states them (issue 45): the binding roof's kind
and the share of it attained decide, never a time prediction; a violating run fails."""

from __future__ import annotations

from gpuconcepts.claims.roofline import judge_roofline
from gpuconcepts.claims.thresholds import ROOF_MIN_SHARE
from gpuconcepts.measure import Measurement
from gpuconcepts.roofline import Peaks

PEAKS = Peaks("cpu", 1e11, 1e10, "float32")  # ridge 10 FLOP/byte


def _compute(seconds: float, nbytes: float = 1e7) -> str:
    """The verdict of "compute-bound" on a 1 GFLOP kernel (its compute roof: 10 ms)."""
    m = Measurement("mlp", "cpu", {"B": 1024}, (seconds,) * 3, 1e9, nbytes)
    return judge_roofline(
        m, role="mlp-large-batch", peaks=PEAKS, expected="compute", label="MLP",
        source="the post", device="demo",
    ).verdict  # fmt: skip


def test_a_compute_bound_kernel_near_its_roof_holds_whatever_a_time_prediction_says() -> None:
    assert _compute(0.0102) == "holds"  # 98 % of the compute roof


def test_a_compute_bound_kernel_far_below_its_roof_fails() -> None:
    assert _compute(0.01 / (ROOF_MIN_SHARE / 2)) == "fails"  # an eighth of the roof


def test_a_kernel_whose_binding_roof_is_memory_fails_compute_bound() -> None:
    assert _compute(0.11, nbytes=1e9) == "fails"  # DRAM's bound, 100 ms, binds it
