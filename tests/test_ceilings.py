"""Ceilings that never saw the kernel (issue 45): no sweep point of a ceiling lies within 2x of
a judged kernel's shape in every dimension, for every workload, claim and whole-model product of
every preset; the compute peak is a square GEMM; the overhead floor an empty operation; the
physical limit only where a table knows the core."""

from __future__ import annotations

import functools
import tomllib
from pathlib import Path
from typing import get_args

import pytest
from synthetic import PEAKS, synthetic_lab

from gpuconcepts import sweeps
from gpuconcepts.claims.experiments import measure_claims
from gpuconcepts.kernels.ceilings.stencil import stencil_shapes
from gpuconcepts.lab import profile_all
from gpuconcepts.measure import Measurement, physical
from gpuconcepts.model import ModelShape
from gpuconcepts.results.claim_sizes import ClaimSizes
from gpuconcepts.roofline import gemm_products
from gpuconcepts.sizes import DeviceClass, load_claim_sizes, load_presets, load_sweeps
from gpuconcepts.sizing import RunSizes
from gpuconcepts.sweeps import gemm_sweep_points, judged_table_bytes, random_tables, too_close
from gpuconcepts.units import MiB

PRESETS = [(cls, quick) for cls in get_args(DeviceClass) for quick in (True, False)]
"""Every preset a run can read: each device class of the sizes module, quick and full (the test
below checks that conf/presets.toml holds no other device class)."""
FREE = 64 * 2**30
Shape = tuple[int, int, int]


def _device(cls: str) -> str:
    return "cpu" if cls == "cpu" else "cuda"


def _model_products(shape: ModelShape, rows: int) -> set[Shape]:
    """A decoder's matrix products at ``rows`` tokens a step, as (rows, columns, depth)."""
    d, inner, kv = shape.d, shape.heads * shape.d_head, shape.n_kv * shape.d_head
    pairs = ((inner, d), (kv, d), (d, inner), (shape.d_ff, d), (d, shape.d_ff), (shape.vocab, d))
    return {(rows, columns, depth) for columns, depth in pairs}


@functools.cache
def judged_kernels(cls: DeviceClass, quick: bool) -> tuple[Measurement, ...]:
    """Every kernel a run of this preset judges: each workload at its preset and sweep sizes,
    and each claim's experiment (kernels faked, sizes real)."""
    device = _device(cls)
    lab = synthetic_lab(PEAKS, "judged")
    lab._facts.update({"peak-gemm-backend": {"backend": "mm"}, "dlrm-element": {"s": 4, "c": 64}})
    presets = load_presets(device, quick, free_bytes=FREE, device_cls=cls)
    profile_all(lab, presets, load_sweeps(device, quick, free_bytes=FREE, device_cls=cls))
    measure_claims(lab, ClaimSizes.from_table(load_claim_sizes(device, quick, device_cls=cls)))
    return tuple(lab.measurements)


@functools.cache
def judged(cls: DeviceClass, quick: bool) -> frozenset[Shape]:
    """Every matrix product a run of this preset judges: each judged kernel's
    (:func:`judged_kernels`), the whole model's products, and the dense convolution as the
    product it runs (B·H·W rows, C_out columns, C_in·K² depth)."""
    device = _device(cls)
    found: set[Shape] = set()
    for m in judged_kernels(cls, quick):
        if m.workload.startswith("peak-"):
            continue  # the roofs' reference kernels are ceilings, not judged kernels
        found.update(shape for _, shape in gemm_products(m))
        if m.workload == "cnn-conv":
            p = m.params
            rows = int(p["B"]) * int(p["H"]) * int(p["W"])  # type: ignore[call-overload]
            found.add((rows, int(p["C_out"]), int(p["C_in"]) * int(p["K"]) ** 2))  # type: ignore[call-overload]
    whole = RunSizes.resolve(device, quick, free_bytes=FREE, device_cls=cls).wholemodel
    for batch in (*whole.batches, *whole.long_batches):
        found |= _model_products(whole.decode, batch)
    found |= _model_products(whole.training, whole.training_batch * whole.training.seq)
    tokens, d, d_ff = (whole.backward[k] for k in ("tokens", "d", "d_ff"))
    found |= {(tokens, d_ff, d), (tokens, d, d_ff)}
    return frozenset(found)


def clashes(points: list[Shape], shapes: frozenset[Shape]) -> list[tuple[Shape, Shape]]:
    """Each (sweep point, judged shape) within 2x of each other in every dimension."""
    return [(p, s) for p in points for s in sorted(shapes) if too_close(p, s)]


def ceiling_products(cls: DeviceClass, quick: bool) -> list[Shape]:
    """The products the ceilings time on this preset: the GEMM sweep's, the compute peak's
    square and the roof's reference square timed beside the claims."""
    device = _device(cls)
    presets = load_presets(device, quick, free_bytes=FREE, device_cls=cls)
    claims = load_claim_sizes(device, quick, device_cls=cls)
    squares = [presets["peaks"]["gemm_n"], int(claims["roof_gemm_n"])]  # type: ignore[call-overload]
    return [(r, w, w) for r, w in gemm_sweep_points(device)] + [(n, n, n) for n in squares]


def test_the_judged_products_hold_the_kernels_the_audit_found() -> None:
    # the MLP at d = 2,048 (B = 1-2,048) and rnn-loop's (8, 64, 64): what the sweep used to hold
    full = judged("cpu", quick=False)
    assert {(b, 2048, 2048) for b in (1, 64, 256, 1024, 2048)} <= full
    assert (8, 64, 64) in full
    assert (1, 768, 768) in full  # the whole model's decode step


@pytest.mark.parametrize(("cls", "quick"), PRESETS)
def test_no_ceiling_product_lies_within_2x_of_a_judged_kernel(
    cls: DeviceClass, quick: bool
) -> None:
    assert clashes(ceiling_products(cls, quick), judged(cls, quick)) == []


@pytest.mark.parametrize(("cls", "quick"), PRESETS)
def test_the_check_reports_a_judged_kernel_put_into_the_sweep(
    cls: DeviceClass, quick: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # every judged product, swept as the old GEMM sweep swept the MLP's, is reported
    shapes = judged(cls, quick)
    square = next(s for s in sorted(shapes) if s[1] == s[2])
    rows, width, _ = square
    device = _device(cls)
    monkeypatch.setitem(sweeps.GEMM_SWEEP, device, ((width, (rows,)),))
    monkeypatch.setitem(sweeps.GEMM_SWEEP_MAX_FLOPS, device, 2**62)
    found = clashes(ceiling_products(cls, quick), shapes)
    assert ((rows, width, width), square) in found


def judged_convolutions(cls: DeviceClass, quick: bool) -> frozenset[Shape]:
    """Every convolution a run of this preset judges, dense or depthwise, as (batch, map
    size, channels in)."""
    return frozenset(
        (int(p["B"]), int(p["H"]) * int(p["W"]), int(p.get("C", p.get("C_in", 0))))  # type: ignore[call-overload]
        for m in judged_kernels(cls, quick)
        if m.workload in ("cnn-conv", "cnn-depthwise")
        for p in (m.params,)
    )


def stencil_points(cls: DeviceClass, quick: bool) -> list[Shape]:
    """The depthwise stencil sweep's points on this preset, as (batch, map size, channels)."""
    presets = load_presets(_device(cls), quick, free_bytes=FREE, device_cls=cls)
    return [(b, hw * hw, c) for b, hw, c in stencil_shapes(presets)]


@pytest.mark.parametrize(("cls", "quick"), PRESETS)
def test_no_stencil_point_lies_within_2x_of_a_judged_convolution(
    cls: DeviceClass, quick: bool
) -> None:
    convolutions = judged_convolutions(cls, quick)
    assert any(c[2] for c in convolutions)  # the depthwise kernel and the dense one, each sized
    assert len(stencil_points(cls, quick)) >= 3  # a cache to DRAM
    assert clashes(stencil_points(cls, quick), convolutions) == []


@pytest.mark.parametrize(("cls", "quick"), PRESETS)
def test_the_check_reports_a_judged_convolution_put_into_the_stencil_sweep(
    cls: DeviceClass, quick: bool
) -> None:
    depthwise = next(m.params for m in judged_kernels(cls, quick) if m.workload == "cnn-depthwise")
    b, h, c = (int(depthwise[k]) for k in ("B", "H", "C"))  # type: ignore[call-overload]
    presets = {"peaks": {"stencil_HW": h, "stencil_C": c, "stencil_points": 1}}
    swept = [(b, hw * hw, ch) for _, hw, ch in stencil_shapes(presets)]  # at the kernel's batch
    assert clashes(swept, judged_convolutions(cls, quick)) != []


def test_a_point_2x_away_in_one_dimension_is_clear() -> None:
    assert not too_close((4096, 2048, 2048), (2048, 2048, 2048))
    assert too_close((3000, 2048, 2048), (2048, 2048, 2048))
    assert too_close((2048, 1500, 3000), (2048, 2048, 2048))


# -- the random-access sweep's tables ----------------------------------------------------------
HIERARCHIES = {
    # (first cache, last cache as seen, DRAM's working set): a 2-core VM, a desktop, a cloud
    # host whose sysfs L3 is a gigabyte; a T4's, an H100's and a B200's L2
    "cpu": [(48 * 1024, 32 * MiB, 128 * MiB), (32 * 1024, 8 * MiB, 32 * MiB),
            (48 * 1024, 1126 * MiB, 2304 * MiB)],
    "cuda": [(None, 4 * MiB, 16 * MiB), (None, 50 * MiB, 256 * MiB),
             (None, 126 * MiB, 512 * MiB)],
}  # fmt: skip
CASES = [(c, q, h) for c, q in PRESETS for h in HIERARCHIES[_device(c)]]


def _tables(
    cls: DeviceClass, quick: bool, hierarchy: tuple[int | None, int, int]
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    device = _device(cls)
    presets = load_presets(device, quick, free_bytes=FREE, device_cls=cls)
    claims = load_claim_sizes(device, quick, device_cls=cls)
    taken = judged_table_bytes(presets, claims, FREE)
    first, cache, beyond = hierarchy
    tables = random_tables(
        cache,
        beyond_bytes=beyond,
        first_cache_bytes=first,
        largest_table_bytes=min(max(taken), FREE // 4),
        judged_tables=taken,
    )
    return tables, taken


@pytest.mark.parametrize(("cls", "quick", "hierarchy"), CASES)
def test_no_random_sweep_table_lies_within_2x_of_a_lookup_table(
    cls: DeviceClass, quick: bool, hierarchy: tuple[int | None, int, int]
) -> None:
    tables, taken = _tables(cls, quick, hierarchy)
    assert tables  # a table still stands beyond the caches
    assert max(tables) >= hierarchy[2] // 2
    assert [(t, j) for t in tables for j in taken if too_close((t,), (j,))] == []


def test_the_random_tables_hold_the_dlrm_kernels_table_and_move_off_it() -> None:
    presets = load_presets("cpu", False, free_bytes=FREE, device_cls="cpu")
    dlrm = presets["dlrm"]
    kernel_table = dlrm["N"] * dlrm["d"] * 4
    taken = judged_table_bytes(presets, load_claim_sizes("cpu", False), FREE)
    assert kernel_table in taken
    # without the judged tables, the sweep's largest table is the kernel's own: reported
    bare = random_tables(32 * MiB, beyond_bytes=128 * MiB, largest_table_bytes=kernel_table)
    assert any(too_close((t,), (kernel_table,)) for t in bare)


# -- the physical limit ------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("cpu", "expected"),
    [
        (physical.CpuId("AuthenticAMD", 26, 2, "AMD EPYC"), ("AMD Zen 5", 512, 2)),
        (physical.CpuId("AuthenticAMD", 25, 0x11, "AMD EPYC 9654"), ("AMD Zen 4", 256, 2)),
        (physical.CpuId("AuthenticAMD", 25, 0x01, "AMD EPYC 7763"), ("AMD Zen 3", 256, 2)),
        (physical.CpuId("AuthenticAMD", 23, 0x31, "AMD EPYC 7742"), ("AMD Zen 2", 256, 2)),
        (physical.CpuId("GenuineIntel", 6, 0x8F, "Intel Xeon Platinum 8480+"), (
            "Intel Ice Lake-SP to Granite Rapids", 512, 2)),
        (physical.CpuId("GenuineIntel", 6, 0x55, "Intel Xeon Platinum 8259CL"), (
            "Intel Skylake-SP/Cascade Lake (two-FMA part)", 512, 2)),
        (physical.CpuId("GenuineIntel", 6, 0x55, "Intel Xeon Silver 4214"), (
            "Intel Skylake-SP/Cascade Lake (one-FMA part)", 512, 1)),
        (physical.CpuId("GenuineIntel", 6, 0x55, "Intel Xeon Processor (Cascadelake)"), None),
        (physical.CpuId("AuthenticAMD", 26, 0x24, "AMD Ryzen AI 9 HX 370"), None),
        (physical.CpuId("ARM", 8, 0xD0C, "Neoverse-N1"), None),
    ],
)  # fmt: skip
def test_the_fma_table_names_only_the_cores_it_knows(
    cpu: physical.CpuId, expected: tuple[str, int, int] | None
) -> None:
    core = physical.fma_core(cpu)
    assert (None if core is None else (core.family, core.width_bits, core.units)) == expected


def test_a_measured_clock_is_a_plausible_one() -> None:
    hz = physical.measured_hz(tries=2)
    assert hz is None or 2e8 < hz < 1e10


# -- the overhead floor -------------------------------------------------------------------------
def test_the_operation_floor_is_an_empty_operation_not_a_judged_module() -> None:
    from gpuconcepts.kernels import dispatch

    chain, ops = dispatch.op_chain()
    assert ops == dispatch.OP_FLOOR_STEPS  # one empty operation dispatched per tensor
    assert dispatch.count_dispatch(chain).calls == 1  # from C++, one Python call for all
    assert dispatch.op_floor("cpu", repeats=3) > 0


def test_the_compute_peak_is_the_librarys_own_square_gemm(monkeypatch: pytest.MonkeyPatch) -> None:
    # P is torch.mm's square GEMM, the path F.linear and nn.Linear run (issue 45: the fastest
    # path, oneDNN's, read 1.74x a canonical SGEMM on a 2-core EPYC), never the best of paths
    from gpuconcepts.kernels import peaks
    from gpuconcepts.kernels.ceilings import compute

    asked: list[tuple[tuple[int, int, int], str]] = []

    def timed(_device: str, shape: tuple[int, int, int], backend: str, *_: object) -> object:
        asked.append((shape, backend))
        return 2 * 64**3, (2 * 64**3 / 1e11,) * 3

    monkeypatch.setattr(compute, "_gemm_seconds", timed)
    kept: dict[str, tuple[float, ...]] = {}
    assert peaks.gemm_flops("cpu", n=64, keep=kept) == 1e11
    assert asked == [((64, 64, 64), "mm")]
    assert kept == {"flops_per_s": (2 * 64**3 / 1e11,) * 3}  # the repetitions P was read from
    assert not hasattr(peaks, "fastest_gemm")


def test_the_presets_checked_are_every_device_class_of_the_presets_file() -> None:
    # a device class added to conf/presets.toml and not to DeviceClass would escape the checks
    # above: its tables are every top-level table but the parts a device class shares
    table = tomllib.loads((Path(__file__).parents[1] / "conf" / "presets.toml").read_text())
    shared = {"distributed", "wholemodel"}
    assert set(table) - shared == {cls for cls, _ in PRESETS}
