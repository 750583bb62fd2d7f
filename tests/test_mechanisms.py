"""The mechanism registry (issue 47, item 2): every roof and diagnosis is one object of
``roofline.mechanisms.MODEL``; a diagnosis with a sweep of its own (the depthwise stencil) is
its sweep plus its sizes, stored in ``Peaks.rate_sweeps``; a diagnosis never changes a
prediction or a verdict; and a compute kernel at 5x its roof is labelled compute everywhere."""

from __future__ import annotations

import dataclasses
import math

import pytest

from gpuconcepts.analysis.report import observed_bound
from gpuconcepts.claims.accuracy import accuracy
from gpuconcepts.claims.predict import bounds_on, predicted_seconds
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.kernels.ceilings import diagnosis_sweeps
from gpuconcepts.kernels.ceilings.stencil import stencil_sweep
from gpuconcepts.measure import Measurement
from gpuconcepts.records import from_record
from gpuconcepts.render.ledgers import format_accuracy
from gpuconcepts.roofline import (
    DIAGNOSES,
    MODEL,
    ROOFS,
    MemoryLevel,
    Peaks,
    RateSweep,
    diagnoses,
    diagnosis,
    model_seconds,
    place,
    verdict,
)
from gpuconcepts.run import Provenance, Run

STENCIL = "depthwise stencil"
PEAKS = Peaks(
    "cpu",
    1e11,
    1e10,
    "float32",
    latency_seconds=2e-6,
    op_seconds=1e-6,
    levels=(MemoryLevel("L2", 2**21, 1e11),),
)


def depthwise(seconds: float) -> Measurement:
    """A depthwise 3x3 convolution of 4 x 64 x 160² (float32), timed flushed in ``seconds``."""
    params = {"B": 4, "H": 160, "W": 160, "C": 64, "K": 3, "s": 4, "dtype": "float32"}
    flops = 2 * 4 * 160 * 160 * 9 * 64
    nbytes = 4 * (2 * 4 * 160 * 160 * 64 + 9 * 64)
    return Measurement("cnn-depthwise", "cpu", params, (seconds,) * 3, flops, nbytes, flush=True)


def with_stencil(rate: float) -> Peaks:
    sweep = RateSweep("cnn-depthwise", "flops", ((2**20, 4 * rate), (2**26, rate)), "a stencil")
    return PEAKS.with_rate_sweeps({STENCIL: sweep})


def run_of(m: Measurement, peaks: Peaks) -> Run:
    return Run(Provenance.example(), peaks, (m,), {}, ())


def test_the_registry_holds_every_roof_then_every_diagnosis_each_reading_peaks_fields() -> None:
    assert (*ROOFS, *DIAGNOSES) == MODEL
    assert [m.role for m in MODEL] == ["roof"] * len(ROOFS) + ["diagnosis"] * len(DIAGNOSES)
    names = {f.name for f in dataclasses.fields(Peaks)}
    for mechanism in MODEL:
        assert mechanism.needs, mechanism
        assert set(mechanism.needs) <= names, mechanism


def test_the_diagnoses_and_the_predictions_loop_over_the_registry() -> None:
    m = depthwise(5.3e-2)
    peaks = with_stencil(1.5e9)
    one_by_one = [d for mechanism in DIAGNOSES for d in mechanism.diagnose(m, peaks)]
    assert diagnoses(m, peaks) == tuple(one_by_one)
    times = dict(model_seconds(m, peaks))
    assert times["compute"] == pytest.approx(m.flops / 1e11)
    assert times[STENCIL] == pytest.approx(m.flops / 1.5e9)  # the DRAM-level point's rate
    assert {b.name for b in verdict(m, peaks).bounds} <= set(times)


def test_the_depthwise_row_gets_the_stencil_diagnosis_beside_its_miss() -> None:
    m = depthwise(5.3e-2)  # 8x its DRAM bound of 6.6 ms
    without, with_ = accuracy(run_of(m, PEAKS))[0], accuracy(run_of(m, with_stencil(2.5e9)))[0]
    assert without.ratio > 4
    assert with_.diagnosis == STENCIL
    assert with_.diagnosis_seconds == pytest.approx(m.flops / 2.5e9)  # 47 of its 53 ms
    assert with_.to_dict()["diagnosis"] == STENCIL
    assert "diagnosis: depthwise stencil" in format_accuracy([with_])
    # a diagnosis never changes the prediction, the ratio, the bound or the verdict
    assert (with_.predicted_seconds, with_.ratio, with_.bound) == (
        without.predicted_seconds,
        without.ratio,
        without.bound,
    )
    assert verdict(m, with_stencil(2.5e9)) == verdict(m, PEAKS)
    # a stencil rate the kernel beat beyond its spread (118 ms at 1 GFLOP/s) explains nothing
    assert diagnosis(m, with_stencil(1e9)) is None
    assert without.to_dict()["diagnosis"] is None


def test_a_diagnosis_with_its_own_sweep_bounds_no_claims_prediction() -> None:
    m = depthwise(5.3e-2)
    assert bounds_on(m, with_stencil(2.5e9)) == bounds_on(m, PEAKS)
    assert predicted_seconds(m, with_stencil(2.5e9)) == predicted_seconds(m, PEAKS)
    assert STENCIL in dict(model_seconds(m, with_stencil(2.5e9)))  # still beside it


def test_a_stencil_sweep_reads_the_point_its_memory_level_serves() -> None:
    peaks = with_stencil(1e9)
    sweep = peaks.rate_sweeps[STENCIL]
    assert sweep.rate_at(2**19, peaks) == 4e9  # L2 holds it: the cached point
    assert sweep.rate_at(2**30, peaks) == 1e9  # DRAM serves it


def test_peaks_keep_their_rate_sweeps_through_a_record_and_older_records_read() -> None:
    peaks = with_stencil(1e9)
    assert from_record(Peaks, peaks.to_dict()) == peaks
    older = PEAKS.to_dict()
    assert "rate_sweeps" not in older  # a run saved before them is written back as it was
    assert from_record(Peaks, older).rate_sweeps == {}


@pytest.mark.parametrize(
    ("points", "said"),
    [((), "at least one"), (((2**20, math.inf),), "positive and finite")],
)
def test_a_bad_rate_sweep_is_named(points: tuple[tuple[int, float], ...], said: str) -> None:
    with pytest.raises(GpuConceptsError, match=f"RateSweep: .*{said}"):
        RateSweep("cnn-depthwise", "flops", points, "a stencil")


def test_every_scalar_of_peaks_is_validated_by_one_rule() -> None:
    assert ("activation_per_s", True) in Peaks.scalar_fields()
    with pytest.raises(GpuConceptsError, match="Peaks: activation_per_s must be a positive"):
        dataclasses.replace(PEAKS, activation_per_s=-1.0)


def test_the_stencil_is_found_as_a_diagnosis_sweep_and_measures_its_points() -> None:
    assert [s.name for s in diagnosis_sweeps()] == [STENCIL]
    sizes = {"peaks": {"stencil_HW": 4, "stencil_C": 8, "stencil_points": 2}}
    sweep = stencil_sweep("cpu", sizes, "float32", 1)
    assert sweep is not None
    assert sweep.workload == "cnn-depthwise"
    assert [size for size, _ in sweep.points] == [
        4 * (2 * 16 * 8 + 9 * 8),
        4 * (2 * 16 * 64 + 9 * 64),
    ]
    assert all(rate > 0 for _, rate in sweep.points)
    assert stencil_sweep("cpu", {"peaks": {"gemm_n": 64}}, "float32", 1) is None


@pytest.mark.parametrize("factor", [5.0, 1 / 5])
def test_a_compute_kernel_at_5x_its_roof_is_labelled_compute_everywhere(factor: float) -> None:
    # issue 47: analysis/report.py once labelled a compute kernel 5x faster than its roof
    # "overhead"; faster (an anomaly) or slower (a finding), every label reads the roof's kind
    flops, nbytes = 2 * 2048**3, 3 * 4 * 2048**2  # a 2048-cubed product: 683 FLOP/byte
    roof = flops / PEAKS.flops_per_s
    m = Measurement("mlp", "cpu", {"B": 2048, "d_in": 2048, "d_out": 2048, "s": 4,
                    "dtype": "float32"}, (roof / factor,) * 3, flops, nbytes)  # fmt: skip
    found = verdict(m, PEAKS)
    assert found.kind == "compute"
    assert found.attained == pytest.approx(factor)
    assert found.beaten == (factor > 1)
    assert place(m, PEAKS).kind == "compute"
    assert observed_bound(m, PEAKS) == "compute"
    row = accuracy(run_of(m, PEAKS))[0]
    assert row.bound == "compute"
    assert row.to_dict()["bound"] == "compute"
