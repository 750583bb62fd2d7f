"""Ledger 2's ratio interval takes in the ceilings' own uncertainty (issue 45, items 2 and 5):
the repetitions each ceiling was read from are kept in ``Peaks.ceiling_seconds``, checked when
the peaks are made, carried by the run file and the peaks cache, and a row's interval is the
measured median's over the prediction's at their conservative ends; a recorded run, whose
ceilings kept none, says so and keeps its measured-only interval."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from gpuconcepts.claims.accuracy import accuracy
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.measure import Measurement
from gpuconcepts.roofline import MemoryLevel, Peaks
from gpuconcepts.run import Provenance, Run, load
from gpuconcepts.verify import verify_dict

RUNS = Path(__file__).resolve().parents[1] / "docs" / "runs"
# P = 1e11 FLOP/s read from repetitions of 1, 2 and 4 s: the median 2 s. Every bootstrap
# resample of three draws has the median 1, 2 or 4, and 1 and 4 each come out in 7 of 27 (two
# draws or three of it), above the 5% of each tail: the median's interval is [1 s, 4 s], so
# P's is [P × 2/4, P × 2/1] = [5e10, 2e11]
P_SECONDS = (1.0, 2.0, 4.0)
# L2's bandwidth read from 1, 1 and 3 s: the median 1 s, its interval [1 s, 3 s], so the
# bandwidth's is [4e10 / 3, 4e10]
L2_SECONDS = (1.0, 1.0, 3.0)


def _peaks(**kept: tuple[float, ...]) -> Peaks:
    return Peaks(
        "cpu",
        1e11,
        1e10,
        "float32",
        levels=(MemoryLevel("L2", 2**20, 4e10),),
        ceiling_seconds=dict(kept),
    )


def _run(peaks: Peaks, *ms: Measurement) -> Run:
    return Run(Provenance.example(), peaks, ms, {}, ())


GEMM = Measurement("mlp", "cpu", {"B": 64}, (0.04, 0.04, 0.04), 2e9, 1e6)
"""2 GFLOP at P: 20 ms predicted (its bytes 100 µs), 40 ms measured every time."""
HOT = Measurement("x", "cpu", {}, (2e-5, 2e-5, 2e-5), 1, 4e5)
"""400 kB from L2 at 40 GB/s: 10 µs predicted, 20 µs measured every time."""


@pytest.mark.parametrize(
    ("kept", "message"),
    [
        ({"level L3": (1.0,)}, "ceiling_seconds['level L3'] names no ceiling these peaks hold"),
        ({"threads": (1.0,)}, "ceiling_seconds['threads'] names no ceiling"),
        ({"flops_per_s": ()}, "ceiling_seconds['flops_per_s'] must hold at least one time"),
        (
            {"flops_per_s": (1.0, -2.0)},
            (
                "ceiling_seconds['flops_per_s'] must hold at least one time, each a positive finite "
                "number of seconds; got (1.0, -2.0)"
            ),
        ),
        ({"bytes_per_s": (float("inf"),)}, "ceiling_seconds['bytes_per_s'] must hold"),
    ],
)
def test_peaks_with_a_bad_ceiling_interval_say_which_and_the_rule(
    kept: dict[str, tuple[float, ...]], message: str
) -> None:
    with pytest.raises(GpuConceptsError, match="^" + re.escape(f"Peaks: {message}")):
        _peaks(**kept)


def test_a_wide_binding_ceiling_widens_the_ratio_by_the_conservative_ends() -> None:
    exact, kept = (
        accuracy(_run(_peaks(), GEMM))[0],
        accuracy(_run(_peaks(flops_per_s=P_SECONDS), GEMM))[0],
    )
    assert exact.ratio == kept.ratio == 2.0
    assert exact.interval == (2.0, 2.0)
    assert exact.ceiling_interval is None
    # the prediction 2e9 FLOP at P's ends: 2e9 / 2e11 = 10 ms and 2e9 / 5e10 = 40 ms; the ratio
    # from the measured fast end over the slow prediction to the slow end over the fast one
    assert kept.ceiling_interval == pytest.approx((0.01, 0.04), rel=1e-12)
    assert kept.interval == pytest.approx((0.04 / 0.04, 0.04 / 0.01), rel=1e-12)
    # a cache level's repetitions: 4e5 B at 4e10 B/s and at 4e10/3 B/s
    row = accuracy(_run(_peaks(**{"level L2": L2_SECONDS}), HOT))[0]
    assert row.bound == "memory"
    assert row.ceiling_interval == pytest.approx((1e-5, 3e-5), rel=1e-12)
    assert row.interval == pytest.approx((2e-5 / 3e-5, 2e-5 / 1e-5), rel=1e-12)


def test_a_kept_ceiling_the_binding_bound_does_not_read_leaves_the_row_as_it_was() -> None:
    # DRAM's and L2's repetitions are kept, but P binds the GEMM: its interval was not recorded
    row = accuracy(_run(_peaks(bytes_per_s=P_SECONDS, **{"level L2": L2_SECONDS}), GEMM))[0]
    assert row.ceiling_interval is None
    assert row.interval == (2.0, 2.0)
    assert row.to_dict()["ceiling_interval"] is None


def test_only_the_ceilings_that_set_the_binding_bound_lend_it_their_interval() -> None:
    # 2**24 bytes streamed from DRAM at 1e10 B/s (1.68 ms) bind; its 5e4 random lines at 5e7 a
    # second (1 ms) sit below. The random point's interval reaches a hundredfold (1, 1, 100 s:
    # [1 s, 100 s]) and sets nothing; DRAM's [1e10 / 2, 1e10 × 2] does, and at its fast end the
    # random term (1 ms) takes over as the longest
    kept = {"bytes_per_s": P_SECONDS, "random 268435456 16 262144": (1.0, 1.0, 100.0)}
    peaks = Peaks("cpu", 1e11, 1e10, "float32", line_bytes=64, random_sweep=((2**28, 16, 5e7),),
                  ceiling_seconds=kept)  # fmt: skip
    rows = Measurement("x", "cpu", {}, (4e-3,) * 3, 1, 2**24, random_rows=5 * 10**4, row_bytes=16)
    row = accuracy(_run(peaks, rows))[0]
    assert row.predicted_seconds == pytest.approx(2**24 / 1e10, rel=1e-12)
    assert row.ceiling_interval == pytest.approx((1e-3, 2**24 / 5e9), rel=1e-12)
    assert row.interval == pytest.approx((4e-3 / (2**24 / 5e9), 4e-3 / 1e-3), rel=1e-12)


def test_a_floor_timed_beside_the_kernel_gives_the_overhead_bound_its_interval() -> None:
    # two calls at the latency floor, timed beside the kernel at 1, 2 and 4 µs: the floor's
    # median 2 µs, its interval [1 µs, 4 µs], the prediction's 2 × [1, 4] µs
    calls = Measurement("x", "cpu", {}, (8e-6,) * 3, 1, 1, calls=2, ops=2,
                        references={"latency_seconds": (1e-6, 2e-6, 4e-6)})  # fmt: skip
    row = accuracy(_run(_peaks(), calls))[0]
    assert row.bound == "overhead"
    assert row.predicted_seconds == pytest.approx(4e-6)
    assert row.ceiling_interval == pytest.approx((2e-6, 8e-6), rel=1e-12)
    assert row.interval == pytest.approx((1.0, 4.0), rel=1e-12)


@pytest.mark.parametrize("name", ["nvidia-h200-bfloat16.json", "cpu-amd-epyc-float32.json"])
def test_a_recorded_run_read_through_the_migration_has_no_ceiling_interval(name: str) -> None:
    raw = json.loads((RUNS / name).read_text())
    assert "ceiling_seconds" not in raw["peaks"]
    run = load(RUNS / name)
    assert run.peaks.ceiling_seconds == {}
    rows = accuracy(run)
    # only a floor timed beside its kernel carries one: the CPU run's overhead-bound rows
    assert [r.kernel for r in rows if r.ceiling_interval is not None] == [
        r.kernel for r in rows if r.bound == "overhead" and run.peaks.device == "cpu"
    ]
    assert all(r.to_dict()["ceiling_interval"] is None for r in rows if r.bound != "overhead")
    assert "ceiling_seconds" not in run.peaks.to_dict()  # written back as it was


def test_verify_json_of_a_fresh_run_carries_the_ceilings_repetitions_and_intervals() -> None:
    # an MLP layer whose 896 bytes L2 holds: 896 / 4e10 = 22.4 ns predicted, 44.8 ns measured
    layer = Measurement("mlp", "cpu", {"B": 4, "d_in": 8, "d_out": 16, "s": 4,
                        "dtype": "float32"}, (4.48e-8,) * 3, 1024, 896)  # fmt: skip
    peaks = _peaks(flops_per_s=P_SECONDS, **{"level L2": L2_SECONDS})
    run = Run.from_json(_run(peaks, layer).to_json())  # through the run file
    assert run.peaks.ceiling_seconds == {"flops_per_s": P_SECONDS, "level L2": L2_SECONDS}
    payload = json.loads(json.dumps(verify_dict(run, run.claims)))
    assert payload["peaks"]["ceiling_seconds"]["flops_per_s"] == list(P_SECONDS)
    (row,) = payload["accuracy"]
    assert row["bound"] == "memory"
    assert row["ratio"] == pytest.approx(2.0, rel=1e-12)
    # L2 at 4e10 and 4e10 / 3 B/s: 22.4 and 67.2 ns
    assert row["ceiling_interval"] == pytest.approx([2.24e-8, 6.72e-8], rel=1e-12)
    assert row["interval"] == pytest.approx([4.48 / 6.72, 2.0], rel=1e-12)
    # within 2x stays a count of point ratios, whatever the interval
    assert payload["accuracy_summary"]["share_within_2x"] == 1.0


def test_the_peaks_cache_keeps_the_repetitions_and_reads_an_older_entry_without_them(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from gpuconcepts import peaks_cache

    monkeypatch.setenv(peaks_cache.CACHE_ENV, str(tmp_path))
    here = peaks_cache.Identity("cpu", "Example", 2, None, "2.13", "0.1", "float32", quick=True)
    kept = _peaks(flops_per_s=P_SECONDS)
    path = peaks_cache.save_peaks(kept, here)
    loaded = peaks_cache.load_peaks(here)
    assert loaded is not None
    assert loaded[0].ceiling_seconds == {"flops_per_s": P_SECONDS}
    # an entry written before the field: read, its ceilings exact
    record = json.loads(path.read_text())
    del record["peaks"]["ceiling_seconds"]
    path.write_text(json.dumps(record))
    older = peaks_cache.load_peaks(here)
    assert older is not None
    assert older[0] == replace(kept, ceiling_seconds={})
    assert older[0].ceiling_seconds == {}
