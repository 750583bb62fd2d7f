"""The floors measured with the peaks (the latency floors and the per-operation floor) and the
cold sweep's points keep their repetitions in ``Peaks.ceiling_seconds``, as P and the
bandwidths do: ledger 2 reads their interval where a kernel's overhead roof reads them, and
every page gives them as "median ± IQR" (a recorded run's, which kept none, bare and said
once)."""

from __future__ import annotations

import dataclasses
import re
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gpuconcepts.book import gpu_floor_texts, gpu_latency_floors, recorded_runs
from gpuconcepts.claims.accuracy import accuracy
from gpuconcepts.claims.scored_interval import binding_ceilings
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.measure import Measurement
from gpuconcepts.render.pages import hardware
from gpuconcepts.render.pages.gpu_basics import anatomy
from gpuconcepts.render.text.runs import NO_FLOOR_SPREAD, floor_spread
from gpuconcepts.render.text.sentences import cold_read_sentence, cold_start_sentence
from gpuconcepts.roofline import Peaks
from gpuconcepts.run import Provenance, Run, load

DOCS = Path(__file__).resolve().parents[1] / "docs"
MiB = 2**20
# 1, 2 and 4 (× a unit): the median 2, and every bootstrap resample of three draws has the
# median 1, 2 or 4, 1 and 4 each in 7 of 27, above the 5% of each tail: the interval [1, 4]
WIDE = (1.0, 2.0, 4.0)


def _run(peaks: Peaks, *ms: Measurement) -> Run:
    return Run(Provenance.example(), peaks, ms, {}, ())


def test_a_floor_measured_with_the_peaks_gives_an_overhead_row_its_interval() -> None:
    # no floor timed beside it: 2 calls at 0.1 µs and 100 operations at the peaks' per-operation
    # floor, whose repetitions were 0.5, 1 and 2 µs (median 1 µs, interval [0.5, 2] µs)
    chain = Measurement("x", "cpu", {}, (2e-4,) * 3, 1, 1, calls=2, ops=102)
    kept = {"op_seconds": tuple(1e-6 * t / 2 for t in WIDE)}
    bare = Peaks("cpu", 1e11, 1e10, "float32", latency_seconds=1e-7, op_seconds=1e-6)
    exact, wide = (accuracy(_run(p, chain))[0] for p in (bare, replace_kept(bare, kept)))
    assert exact.bound == wide.bound == "overhead"
    assert exact.predicted_seconds == wide.predicted_seconds == pytest.approx(100.2e-6)
    assert exact.ceiling_interval is None  # a recorded run's peaks kept none
    assert wide.ceiling_interval == pytest.approx((50.2e-6, 200.2e-6), rel=1e-12)
    assert wide.interval == pytest.approx((2e-4 / 200.2e-6, 2e-4 / 50.2e-6), rel=1e-12)


def test_a_floor_timed_beside_the_kernel_takes_the_place_of_the_peaks_one() -> None:
    # the latency floor beside the kernel never varied: the peaks' wide one is not read
    calls = Measurement("x", "cpu", {}, (8e-6,) * 3, 1, 1, calls=2, ops=2,
                        references={"latency_seconds": (2e-6,) * 3})  # fmt: skip
    peaks = Peaks("cpu", 1e11, 1e10, "float32", latency_seconds=2e-6,
                  ceiling_seconds={"latency_seconds": tuple(1e-6 * t for t in WIDE)})  # fmt: skip
    row = accuracy(_run(peaks, calls))[0]
    assert row.ceiling_interval == pytest.approx((4e-6, 4e-6), rel=1e-12)


def replace_kept(peaks: Peaks, kept: dict[str, tuple[float, ...]]) -> Peaks:
    return dataclasses.replace(peaks, ceiling_seconds=kept)


def test_a_cold_point_is_kept_but_sets_no_prediction() -> None:
    # the cold sweep is a diagnosis: doubling its speed moves no roof, so no row reads it
    peaks = Peaks("cpu", 1e11, 1e10, "float32", cold_sweep=((MiB, 3e-4), (4 * MiB, 6e-4)),
                  ceiling_seconds={"cold 1048576": WIDE})  # fmt: skip
    assert peaks.ceiling("cold 1048576") == 3e-4
    flushed = Measurement("x", "cpu", {}, (1e-3,) * 3, 1, MiB, flush=True)
    assert binding_ceilings(flushed, peaks, ["cold 1048576"]) == ()
    assert accuracy(_run(peaks, flushed))[0].ceiling_interval is None


@pytest.mark.parametrize(
    ("peaks", "key"),
    [
        (Peaks("cpu", 1e11, 1e10, "f", cold_sweep=((MiB, 3e-4),)), "cold 2097152"),
        (Peaks("cpu", 1e11, 1e10, "f"), "op_seconds"),  # a floor these peaks did not measure
        (Peaks("cpu", 1e11, 1e10, "f"), "cold one"),
    ],
)
def test_a_kept_key_that_names_no_floor_or_cold_point_is_refused(peaks: Peaks, key: str) -> None:
    message = (
        f"Peaks: ceiling_seconds[{key!r}] names no ceiling these peaks hold (a rate or floor "
        "field, 'level <name>', 'random <table> <row> <rows>' or 'cold <bytes>')"
    )
    with pytest.raises(GpuConceptsError, match="^" + re.escape(message) + "$"):
        dataclasses.replace(peaks, ceiling_seconds={key: (1.0,)})


def test_the_floors_and_cold_points_travel_in_the_run_file() -> None:
    kept = {"latency_seconds": (7e-7, 8e-7), "op_seconds": (5e-7,), "cold 1048576": (3e-4,)}
    peaks = Peaks("cpu", 1e11, 1e10, "float32", latency_seconds=7.5e-7, op_seconds=5e-7,
                  cold_sweep=((MiB, 3e-4),), ceiling_seconds=kept)  # fmt: skip
    assert Run.from_json(_run(peaks).to_json()).peaks.ceiling_seconds == kept


def test_a_floor_is_given_as_median_and_iqr_and_bare_where_none_was_kept() -> None:
    # quartiles of 1, 2, 4, 8, 16 ns: 2 and 8, so the IQR is 6 ns
    peaks = Peaks("cpu", 1e11, 1e10, "f", latency_seconds=4e-9, cold_latency_seconds=5e-6,
                  ceiling_seconds={"latency_seconds": (1e-9, 2e-9, 4e-9, 8e-9, 16e-9)})  # fmt: skip
    assert floor_spread(peaks, "latency_seconds") == "4 ns ± 6 ns"
    assert floor_spread(peaks, "cold_latency_seconds") == "5 µs"
    for key in ("flops_per_s", "op_seconds"):
        message = (
            f"floor_spread: {key!r} is not a time these peaks hold (a floor field set, or "
            "'cold <bytes>' of a swept point)"
        )
        with pytest.raises(GpuConceptsError, match="^" + re.escape(message) + "$"):
            floor_spread(peaks, key)


def test_the_floors_keep_the_repetitions_they_are_the_median_of(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from gpuconcepts.kernels import dispatch

    times = iter([(3e-6, 4e-6, 5e-6), (1e-6, 2e-6, 9e-6), (4e-3, 8e-3, 2e-3)])

    def fake(_call: Callable[[], object], _device: str, **_kw: Any) -> tuple[float, ...]:
        return next(times)

    monkeypatch.setattr(dispatch, "time_function", fake)
    monkeypatch.setattr(dispatch, "op_chain", lambda: ((lambda: None), 1000))
    kept: dict[str, tuple[float, ...]] = {}
    assert dispatch.latency_floor("cpu", cold=True, keep=kept) == 2e-6  # the cheaper call
    assert dispatch.op_floor("cpu", keep=kept) == pytest.approx(4e-6)  # per operation
    assert kept["cold_latency_seconds"] == (1e-6, 2e-6, 9e-6)
    assert kept["op_seconds"] == pytest.approx((4e-6, 8e-6, 2e-6))
    assert statistics.median(kept["op_seconds"]) == pytest.approx(4e-6)


def test_the_cold_sweep_keeps_each_points_rounds(monkeypatch: pytest.MonkeyPatch) -> None:
    from gpuconcepts.kernels.ceilings import cold

    def rounds(points: list[object], _device: str, *, repeats: int, keep: list[Any]) -> list[float]:
        keep.extend((1e-4 * (i + 1),) * repeats for i in range(len(points)))
        return [1e-4 * (i + 1) for i in range(len(points))]

    monkeypatch.setattr(cold, "median_in_rounds", rounds)
    kept: dict[str, tuple[float, ...]] = {}
    assert cold.cold_reads("cpu", 2 * MiB, repeats=3, keep=kept) == ((MiB, 1e-4), (2 * MiB, 2e-4))
    assert kept == {"cold 1048576": (1e-4,) * 3, "cold 2097152": (2e-4,) * 3}


def _cold_peaks() -> Peaks:
    return Peaks("cpu", 1e11, 1e10, "float32", cold_sweep=((8 * MiB, 2e-3), (32 * MiB, 3e-3)),
                 ceiling_seconds={"cold 8388608": (1.9e-3, 2e-3, 2.3e-3),
                                  "cold 33554432": (2.9e-3, 3e-3, 3.1e-3)})  # fmt: skip


@pytest.mark.parametrize(
    ("nbytes", "said"),
    [
        (8 * MiB, "took 2 ms ± 200 µs (the cold sweep's own read)"),
        (
            4 * MiB,
            (
                "takes 1 ms, read off the cold sweep's line from nothing to its smallest read, "
                "of 8 MiB (2 ms ± 200 µs)"
            ),
        ),
        (
            16 * MiB,
            (
                "takes 2.33 ms, read off the cold sweep's line between its reads of 8 MiB "
                "(2 ms ± 200 µs) and 32 MiB (3 ms ± 100 µs)"
            ),
        ),
        (
            64 * MiB,
            (
                "takes 6.36 ms, read off the cold sweep's largest read, of 32 MiB (3 ms ± 100 µs), "
                "and the rest at DRAM's bandwidth"
            ),
        ),
    ],
)
def test_a_cold_read_says_how_it_was_read_off_the_sweep(nbytes: int, said: str) -> None:
    m = Measurement("mlp", "cpu", {"B": 1}, (1e-2,) * 3, 1, nbytes, flush=True)
    sentence = cold_read_sentence(m, _cold_peaks())
    assert f"A plain read of as many bytes, started the same way, {said}; streaming" in sentence


def test_the_cold_start_gives_each_end_of_the_sweep_with_its_spread() -> None:
    assert cold_start_sentence(_cold_peaks()).startswith(
        "Read once right after a flush, 8 MiB took 2 ms ± 200 µs, 2.4× what streaming at DRAM's "
        "bandwidth allows, and 32 MiB took 3 ms ± 100 µs, 0.89× it"
    )


def test_the_recorded_gpu_floors_are_bare_and_say_why_once() -> None:
    runs = recorded_runs(DOCS)
    cpu = load(DOCS / "runs" / "cpu-amd-epyc-float32.json")
    floors, texts = gpu_latency_floors(runs), gpu_floor_texts(runs)
    said = hardware.small_layers(cpu, floors, texts)["gpu_floors"]
    assert said.count(NO_FLOOR_SPREAD) == 1
    assert [texts[label] for label, _ in floors] == ["13.5 µs", "14.9 µs"]
    # a GPU run that kept its floor's repetitions gives its spread, and nothing to excuse
    gpu = next(r for r in runs if r.peaks.device == "cuda")
    kept = dataclasses.replace(gpu, peaks=dataclasses.replace(
        gpu.peaks, ceiling_seconds={"latency_seconds": (1.3e-5, 1.35e-5, 1.4e-5)}))  # fmt: skip
    label, _ = gpu_latency_floors([kept])[0]
    fresh = hardware.small_layers(cpu, gpu_latency_floors([kept]), gpu_floor_texts([kept]))
    assert f"{label}, 13.5 µs ± 500 ns (" in fresh["gpu_floors"]
    assert NO_FLOOR_SPREAD not in fresh["gpu_floors"]


def test_the_launch_of_a_recorded_gpu_run_is_said_bare_once() -> None:
    glue = anatomy(recorded_runs(DOCS))
    assert glue["launch"] == "13.5 µs"
    assert NO_FLOOR_SPREAD in glue["launch_where"]
    assert NO_FLOOR_SPREAD not in glue["launch_source"]
