"""Sizes from the measured hierarchy on machines unlike this one: sysfs reporting a 1.1 GiB L3
(a 3D V-Cache EPYC), 480 MiB (a large Xeon shared by tenants), 8 MiB (a laptop) or nothing (Arm,
Apple, some VMs). Nothing a run allocates grows with the reported cache or past its budget."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.measure.hierarchy import (
    ARRAY_SHARE,
    dram_start_bytes,
    largest_array_bytes,
    sizing,
)
from gpuconcepts.sizes import RunBudget, load_presets
from gpuconcepts.sizing import RunSizes

MiB = 2**20
GiB = 2**30

# this 2-core Xeon's sweep (2026-12-06, two threads): L2 to 2 MiB, a fast part of L3 to
# 16 MiB, DRAM's plateau from 64 MiB; its sysfs reports a 300 MiB L3
XEON = (
    (32 * 1024, 1.72e11),
    (MiB, 1.43e11),
    (2 * MiB, 1.34e11),
    (4 * MiB, 6.07e10),
    (16 * MiB, 5.53e10),
    (32 * MiB, 3.49e10),
    (64 * MiB, 2.35e10),
    (128 * MiB, 2.40e10),
    (256 * MiB, 2.39e10),
)
REPORTED = {"1.1 GiB": 1152 * MiB, "480 MiB": 480 * MiB, "8 MiB": 8 * MiB, "none": None}


@pytest.mark.parametrize("reported", REPORTED.values(), ids=REPORTED.keys())
def test_dram_sizes_follow_the_sweep_not_sysfs(reported: int | None) -> None:
    fit = sizing(XEON, sysfs_cache_bytes=reported, budget_bytes=2 * GiB)
    assert fit.dram_reached
    assert fit.beyond_bytes == 128 * MiB  # twice where the plateau begins, whatever sysfs says
    # the cache as this process sees it: where DRAM begins, or sysfs when that is smaller
    assert fit.cache_bytes == (8 * MiB if reported == 8 * MiB else 64 * MiB)


@pytest.mark.parametrize("budget_mib", [256, 2048, 4096])
@pytest.mark.parametrize("reported", REPORTED.values(), ids=REPORTED.keys())
def test_nothing_exceeds_the_budget(reported: int | None, budget_mib: int) -> None:
    budget = budget_mib * MiB
    # a sweep that never levels off: the budget ends it inside a cache (the sweep stops at the
    # largest array, as measure_peaks runs it)
    top = largest_array_bytes(budget).bit_length() - 1
    falling = tuple((2**k, 1e15 / 1.5**k) for k in range(12, top + 1))
    for sweep in (tuple(p for p in XEON if p[0] <= 2**top), falling):
        fit = sizing(sweep, sysfs_cache_bytes=reported, budget_bytes=budget)
        assert fit.largest_array_bytes == budget // ARRAY_SHARE
        assert fit.beyond_bytes <= fit.largest_array_bytes
    fit = sizing(falling, sysfs_cache_bytes=reported, budget_bytes=budget)
    assert not fit.dram_reached
    assert any("still fell" in line for line in fit.shrunk)


def test_a_sweep_that_load_flattened_cannot_put_dram_inside_a_cores_own_cache() -> None:
    # under load every working set read alike (2026-12-06, load 7 on 2 cores: 5-12 GB/s from
    # 512 KiB to 256 MiB); the plateau then "began" at 1 MiB, inside the 2 MiB L2
    busy = tuple((2**k, 6e9 + 1e9 * (k % 3)) for k in range(19, 29))
    assert dram_start_bytes(busy) == 2**19
    fit = sizing(
        busy, sysfs_cache_bytes=300 * MiB, budget_bytes=2 * GiB, private_cache_bytes=2 * MiB
    )
    assert fit.cache_bytes == 4 * MiB
    assert fit.beyond_bytes == 8 * MiB


def test_what_was_shrunk_is_said() -> None:
    fit = sizing(XEON, sysfs_cache_bytes=480 * MiB, budget_bytes=512 * MiB)
    assert fit.shrunk == (
        (
            "the last cache: sysfs reports 480 MiB, but the sweep read DRAM's rate from 64 MiB on, "
            "so sizes follow 64 MiB"
        ),
        (
            "DRAM working sets and the flush: 64 MiB instead of 128 MiB, an eighth of the 512 MiB "
            "memory budget"
        ),
    )
    assert sizing(XEON, sysfs_cache_bytes=32 * MiB, budget_bytes=2 * GiB).shrunk == ()


@pytest.mark.parametrize(
    ("sweep", "start"),
    [
        (((1, 9.0), (2, 4.0), (4, 2.0), (8, 1.9)), 4),
        (((1, 9.0), (2, 4.0), (4, 2.0)), None),  # still falling at its top
        (((1, 2.0), (2, 2.1), (4, 1.9)), 1),  # flat: one level the budget reaches
        (((4, 2.0),), None),
        ((), None),
    ],
)
def test_where_the_plateau_begins(sweep: Sequence[tuple[int, float]], start: int | None) -> None:
    assert dram_start_bytes(sweep) == start


def test_a_budget_too_small_for_any_array_is_refused() -> None:
    with pytest.raises(GpuConceptsError, match="memory budget: must be at least 8 MiB"):
        largest_array_bytes(MiB)


def test_every_class_has_a_budget_within_the_issue_limits() -> None:
    # quick: a minute and 2 GB on a 2-core CPU; full: 3 minutes and 4 GB
    quick = RunBudget.from_presets(load_presets("cpu", True, free_bytes=64 * GiB))
    full = RunBudget.from_presets(load_presets("cpu", False, free_bytes=64 * GiB))
    assert (quick.seconds, quick.memory_bytes) == (60, 2 * GiB)
    assert (full.seconds, full.memory_bytes) == (180, 4 * GiB)
    with pytest.raises(GpuConceptsError, match="the budget table needs seconds and memory_mib"):
        RunBudget.from_presets({"budget": {"seconds": 60}})


@pytest.mark.parametrize("reported", REPORTED.values(), ids=REPORTED.keys())
def test_measured_peaks_size_from_the_sweep(
    monkeypatch: pytest.MonkeyPatch, reported: int | None
) -> None:
    # measure_peaks with a fake sysfs and this Xeon's sweep: the STREAM arrays, the flush and
    # the cold and random-access sweeps take their sizes from the sweep, within the budget
    pytest.importorskip("torch")
    from gpuconcepts import measure
    from gpuconcepts.kernels import peaks

    levels = (("L1", 48 * 1024), ("L2", 2 * MiB)) + ((("L3", reported),) if reported else ())
    monkeypatch.setattr(peaks, "cache_levels", lambda _device: levels)
    monkeypatch.setattr(measure.memory, "_FLUSH_BYTES", {})
    asked: dict[str, int] = {}

    def record(name: str, value: object) -> object:
        def call(_device: str, size: int | None = None, *_a: object, **k: object) -> object:
            asked[name] = int(k.get("array_bytes", size) or 0)  # type: ignore[call-overload]
            return value

        return call

    monkeypatch.setattr(peaks, "working_set_sweep", lambda *_a, **_k: XEON)
    monkeypatch.setattr(peaks, "copy_bandwidth", record("copy", 2e10))
    monkeypatch.setattr(peaks, "triad_bandwidth", record("triad", 2.3e10))
    monkeypatch.setattr(peaks, "read_bandwidth", record("read", 2.2e10))
    monkeypatch.setattr(peaks, "cold_reads", record("cold", ()))
    monkeypatch.setattr(peaks, "gemm_flops", lambda *_a, **_k: 1e11)
    monkeypatch.setattr(peaks, "gemm_sweep", lambda *_a, **_k: ())
    monkeypatch.setattr(peaks, "latency_floor", lambda *_a, **_k: 1e-6)
    monkeypatch.setattr(peaks, "op_floor", lambda *_a, **_k: 1e-6)
    monkeypatch.setattr(peaks, "activation_rate", lambda *_a, **_k: 1e9)
    seen: dict[str, object] = {}
    monkeypatch.setattr(
        peaks, "random_access", lambda _d, cache, **k: seen.update(cache=cache, **k) or ()
    )
    result = peaks.measure_peaks(
        "cpu", RunSizes.resolve("cpu", True, free_bytes=64 * GiB), repeats=1
    )
    # the preset's 256 MiB, the budget's cap and 4x the 64 MiB cache: far beyond every cache
    smaller = reported in (8 * MiB, None)
    assert asked["copy"] == asked["read"] == 256 * MiB
    assert asked["cold"] == 128 * MiB
    assert measure.flush_bytes("cpu") == 128 * MiB
    assert seen["beyond_bytes"] == 128 * MiB
    assert seen["cache"] == (reported or 2 * MiB if smaller else 64 * MiB)
    # the last cache ends where DRAM begins, however large or small sysfs says it is, and one
    # that sysfs does not name (no L3, or an L3 smaller than the sweep shows) is still a cache
    assert result.levels[-1].size_bytes == 64 * MiB
    assert [level.name for level in result.levels] == {
        None: ["L2", "LLC"],
        8 * MiB: ["L2", "L3", "LLC"],
    }.get(reported, ["L2", "L3"])  # (the sweep starts above half of the 48 KiB L1)
    assert result.levels[-1].bytes_per_s == (5.53e10 if reported == 8 * MiB else 6.07e10)
