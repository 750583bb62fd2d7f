"""Every size table keeps the rules presets.toml states (gpuconcepts.kernels.presets): full,
quick, the claims' sizes, each device class. The kernels are listed by running the profile and
the claims' experiments on a lab that times nothing, so the list is the one a run would time."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest
from synthetic import synthetic_lab

from gpuconcepts import formulas
from gpuconcepts.claims.experiments import measure_claims
from gpuconcepts.kernels import presets
from gpuconcepts.lab import profile_all
from gpuconcepts.measure import COLUMNS, Measurement, stream_array_bytes
from gpuconcepts.results.claim_sizes import ClaimSizes
from gpuconcepts.roofline import Peaks
from gpuconcepts.units import MiB

RECORDED_CPU = Path(__file__).parents[1] / "docs" / "runs" / "cpu-amd-epyc-float32.json"
CLASSES = [(cls, quick) for cls in ("cpu", "cuda-small", "cuda-large") for quick in (False, True)]
FREE = 2**40  # sizes as written, not capped by this machine's memory


def timed(cls: presets.DeviceClass, quick: bool) -> list[Measurement]:
    """Every kernel a run of this class times: the profile's, then the claims' (with s = 4)."""
    device = "cpu" if cls == "cpu" else "cuda"
    lab = synthetic_lab(Peaks(device, 1e11, 1e10, "float32"), f"{cls} sizes")
    lab.cache_bytes, lab.free_bytes = presets.LLC_BYTES[cls], FREE
    lab._facts["peak-gemm-backend"] = {"backend": "mm"}
    tables = presets.load_presets(device, quick, free_bytes=FREE, device_cls=cls)
    sweeps = presets.load_sweeps(device, quick, free_bytes=FREE, device_cls=cls)
    profile_all(lab, tables, sweeps)
    measure_claims(
        lab, ClaimSizes.from_table(presets.load_claim_sizes(device, quick, device_cls=cls))
    )
    return list(lab.measurements)


@pytest.mark.parametrize(("cls", "quick"), CLASSES)
def test_every_cpu_output_stays_under_the_limit(cls: presets.DeviceClass, quick: bool) -> None:
    if cls != "cpu":
        pytest.skip("the output rule is the CPU allocator's")
    too_big = [
        (m.workload, dict(m.params), presets.output_bytes(m.workload, m.params))  # type: ignore[arg-type]
        for m in timed(cls, quick)
        if presets.output_bytes(m.workload, m.params) >= presets.CPU_MAX_OUTPUT_BYTES  # type: ignore[arg-type]
    ]
    assert too_big == []


@pytest.mark.parametrize(("cls", "quick"), CLASSES)
def test_working_sets_read_from_dram_by_size_are_four_times_the_llc(
    cls: presets.DeviceClass, quick: bool
) -> None:
    device = "cpu" if cls == "cpu" else "cuda"
    floor = presets.MIN_LLC_MULTIPLE * presets.LLC_BYTES[cls]
    tables = presets.load_presets(device, quick, free_bytes=FREE, device_cls=cls)
    claims = presets.load_claim_sizes(device, quick, device_cls=cls)
    sized = {
        "dlrm table": formulas.embedding_memory(N=tables["dlrm"]["N"], d=tables["dlrm"]["d"], s=4),
        "STREAM array": stream_array_bytes(tables["peaks"]["stream_mib"] * MiB, 0, FREE),
        "claims' dlrm table": claims["dlrm_table_mib"] * MiB,  # type: ignore[operator]
        "reference triad array": stream_array_bytes(claims["roof_triad_mib"] * MiB, 0, FREE),  # type: ignore[operator]
    }
    assert {name: b for name, b in sized.items() if b < floor} == {}
    for m in timed(cls, quick):  # and what the run really timed
        if m.workload in ("dlrm-random", "dlrm-sequential"):
            assert formulas.embedding_memory(N=m.size("N"), d=m.size("d"), s=4) >= floor
        if m.workload == "peak-triad":
            assert m.size("N") * COLUMNS * 4 >= floor


def _fastest_cpu() -> tuple[float, float]:
    """Roofs faster than any CPU this book runs on: FLOP/s and bytes/s."""
    return 4e12, 5e11  # a two-socket AVX-512 server, with room to spare


@pytest.mark.parametrize("quick", [False, True])
def test_no_flushed_call_is_shorter_than_twenty_timer_resolutions(quick: bool) -> None:
    # A flushed kernel is one call per repetition: at least its roofline time at the fastest
    # roofs, and at least the per-call floor the recorded CPU run measured (a GPU class needs
    # its own launch floor from a recorded GPU run, and none is recorded yet).
    from gpuconcepts.run import load

    floor = load(RECORDED_CPU).peaks.latency_seconds
    assert floor is not None
    flops_per_s, bytes_per_s = _fastest_cpu()
    shortest = presets.MIN_TIMER_MULTIPLE * presets.TIMER_RESOLUTION_SECONDS["cpu"]
    fast: Mapping[str, float] = {}
    for m in timed("cpu", quick):
        roof = float(
            formulas.roofline_seconds(F=m.flops, Q=m.bytes, P=flops_per_s, beta=bytes_per_s)
        )
        if max(roof, floor) < shortest:
            fast = {**fast, f"{m.workload} {dict(m.params)}": max(roof, floor)}
    assert fast == {}


def test_the_rules_can_fail() -> None:
    # the old quick depthwise batch of 8 gave a 52 MB output
    big = {"B": 8, "H": 160, "W": 160, "C": 64, "K": 3, "s": 4}
    assert presets.output_bytes("cnn-depthwise", big) >= presets.CPU_MAX_OUTPUT_BYTES


def test_every_workload_has_an_output_shape() -> None:
    from gpuconcepts.workloads import WORKLOADS

    assert set(presets.OUTPUT_SHAPES) == set(WORKLOADS)
