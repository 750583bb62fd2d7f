"""gpuconcepts.roofline: classification, prediction and the plot."""

from __future__ import annotations

import io
from dataclasses import replace

import pytest

from gpuconcepts import formulas, roofline
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.hardware import GPUS
from gpuconcepts.measure import Measurement
from gpuconcepts.records import from_record
from gpuconcepts.render import plots
from gpuconcepts.roofline import MemoryLevel, Peaks

PEAKS = Peaks(device="cpu", flops_per_s=2e11, bytes_per_s=4e10, dtype="float32")


def test_ridge_and_classification() -> None:
    assert roofline.ridge(2e11, 4e10) == 5.0
    assert roofline.classify(4.99, PEAKS) == "memory"
    assert roofline.classify(5.0, PEAKS) == "compute"
    assert roofline.classify(500, PEAKS) == "compute"


@pytest.mark.parametrize(("flops", "nbytes"), [(1e9, 1e9), (1e12, 1e6), (5.0, 1.0)])
def test_predicted_seconds_is_the_formula(flops: float, nbytes: float) -> None:
    expected = float(formulas.roofline_seconds(F=flops, Q=nbytes, P=2e11, beta=4e10))
    assert roofline.predicted_seconds(flops, nbytes, PEAKS) == expected
    assert expected == max(flops / 2e11, nbytes / 4e10)


def test_attainable_is_min_of_roof_and_slope() -> None:
    assert roofline.attainable(1.0, PEAKS) == 4e10
    assert roofline.attainable(100.0, PEAKS) == 2e11


def _measurements() -> list[Measurement]:
    return [
        Measurement("dlrm-random", "cpu", {}, (1e-3,), 1e6, 4e6),
        Measurement("mlp", "cpu", {}, (2e-2,), 2e9, 1e7),
        Measurement("transformer-decode", "cpu", {}, (1e-3,), 1e6, 2e6),
    ]


def test_plot_roofline_draws_ceilings_and_labelled_points() -> None:
    pytest.importorskip("matplotlib")
    fig = plots.plot_roofline(PEAKS, _measurements())
    (ax,) = fig.axes
    labels = [text.get_text() for text in ax.texts]
    assert labels == ["dlrm-random", "mlp", "transformer-decode"]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["measured roof (float32): ridge 5 FLOP/B"]
    assert ax.get_xscale() == "log"
    assert ax.get_yscale() == "log"
    # the roof is flat at the peak on the right of the ridge
    roof = ax.get_lines()[0]
    assert max(roof.get_ydata()) == pytest.approx(2e11)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    assert buffer.getvalue()[:4] == b"\x89PNG"


def test_plot_roofline_adds_the_datasheet_ceiling() -> None:
    pytest.importorskip("matplotlib")
    gpu_peaks = Peaks(device="cuda", flops_per_s=7e14, bytes_per_s=4e12, dtype="bfloat16")
    fig = plots.plot_roofline(gpu_peaks, [], datasheet=GPUS["H200"].datasheet_peaks("bf16"))
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert legend[1] == "H200 datasheet (bfloat16): ridge 206 FLOP/B"
    sheet = fig.axes[0].get_lines()[1]
    assert max(sheet.get_ydata()) == pytest.approx(989e12)


def test_roofline_chart_skips_a_datasheet_without_the_dtype(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("matplotlib")

    monkeypatch.setattr("gpuconcepts.hardware.current_gpu", lambda: GPUS["T4"])  # no bf16
    gpu_peaks = Peaks(device="cuda", flops_per_s=5e13, bytes_per_s=3e11, dtype="bfloat16")
    legend = plots.roofline_chart(gpu_peaks).axes[0].get_legend().get_texts()
    assert [t.get_text() for t in legend] == ["measured roof (bfloat16): ridge 167 FLOP/B"]
    monkeypatch.setattr("gpuconcepts.hardware.current_gpu", lambda: GPUS["H200"])
    legend = plots.roofline_chart(gpu_peaks).axes[0].get_legend().get_texts()
    assert [t.get_text() for t in legend][1] == "H200 datasheet (bfloat16): ridge 206 FLOP/B"


def test_plot_roofline_into_given_axes() -> None:
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    fig = Figure()
    ax = fig.add_subplot()
    assert plots.plot_roofline(PEAKS, _measurements(), ax=ax) is fig


# -- the verdict: time >= max(F/P, Q/beta of the level the working set fits in, overhead) ----
CACHED = Peaks(
    device="cpu",
    flops_per_s=1e11,
    bytes_per_s=1e10,
    dtype="float32",
    levels=(MemoryLevel("L2", 2**20, 1e11), MemoryLevel("L3", 32 * 2**20, 4e10)),
    latency_seconds=5e-6,
)


@pytest.mark.parametrize(
    ("seconds", "flops", "nbytes", "flush", "kind", "name", "attained"),
    [
        (1.0, 1e9, 5e9, False, "memory", "DRAM", 0.5),  # 5 GB beyond every cache: DRAM's roof
        (0.25, 1e9, 5e9, False, "memory", "DRAM", 2.0),  # four times DRAM's roof: beaten
        (4.2e-4, 1e6, 2**24, False, "memory", "L3", 2**24 / 4e10 / 4.2e-4),  # 16 MiB fit in L3
        (1e-5, 1e3, 2**19, False, "memory", "L2", 2**19 / 1e11 / 1e-5),  # 512 KiB fit in L2
        (1e-4, 1e3, 2**19, True, "memory", "DRAM", 2**19 / 1e10 / 1e-4),  # flushed: from DRAM
        (1.0, 5e10, 1e6, False, "compute", "compute", 0.5),  # arithmetic, not the bytes
        (1e-5, 10.0, 8.0, False, "overhead", "overhead", 0.5),  # only a call's latency binds it
    ],
)
def test_the_verdict_is_the_longest_of_the_three_roofs(
    seconds: float, flops: float, nbytes: float, flush: bool, kind: str, name: str,
    attained: float,
) -> None:  # fmt: skip
    m = Measurement("x", "cpu", {}, (seconds,), flops, nbytes, flush=flush)
    where = roofline.place(m, CACHED)
    assert (where.kind, where.observed) == (kind, name)
    assert where.attained == pytest.approx(attained)
    assert where.beaten == (attained > 1)
    bounds = dict(roofline.roof_times(m, CACHED))
    level = CACHED.memory_roofs[-1 if flush else CACHED.level_of(int(nbytes))].name
    assert list(bounds) == ["compute", level, "overhead"]
    assert bounds["compute"] == flops / 1e11
    assert max(bounds.values()) == pytest.approx(attained * seconds)


@pytest.mark.parametrize(
    ("kernel", "kind"),
    [
        (Measurement("mlp", "cpu", {}, (1.0,), 5e10, 1e6), "compute"),  # roof 0.5 s
        (Measurement("dlrm-sequential", "cpu", {}, (1.0,), 1e3, 5e9), "memory"),  # DRAM: 0.5 s
        (Measurement("x", "cpu", {}, (1.0,), 1.0, 8.0, ops=100_000, calls=1), "overhead"),
    ],
)
def test_a_kernel_three_times_slower_than_its_roof_is_shown_at_about_a_third(
    kernel: Measurement, kind: str
) -> None:
    from gpuconcepts.render import explained, observed, why_unexplained
    from gpuconcepts.render.pages import roofline as page

    floors = replace(CACHED, op_seconds=5e-6)  # 100,000 operations: 0.5 s of overhead
    roof = max(t for _, t in roofline.roof_times(kernel, floors))
    slow = replace(kernel, raw_seconds=(2.9 * roof, 3.0 * roof, 3.1 * roof))
    where = roofline.place(slow, floors)
    assert where.kind == kind
    assert where.attained == pytest.approx(1 / 3)
    low, high = where.attained_interval
    assert low < 1 / 3 < high
    assert (low, high) == (pytest.approx(1 / 3.05), pytest.approx(1 / 2.95))  # the quartiles
    assert not where.beaten
    assert "33%" in observed(where)
    assert not explained(where)  # a finding, shown as it is: never "explained" away
    assert f"it reached 33% of its {kind}" in (why_unexplained(slow, floors) or "")
    assert "it reached 33%" in page.explained([slow], floors)["unexplained"]


def test_a_measured_mechanism_that_accounts_for_the_gap_never_changes_the_verdict() -> None:
    # an MLP layer at 3x its compute roof, where the GEMM sweep's product of its shape ran at a
    # third of the peak: the shape accounts for all of its time, and it is still at 33 %
    params = {"B": 16, "d_in": 2048, "d_out": 2048, "s": 4}
    flops = float(formulas.mlp_flops(B=16, d_in=2048, d_out=2048))
    shaped = replace(PEAKS, gemm_sweep=((16, 2048, False, 2e11 / 3),))
    m = Measurement("mlp", "cpu", params, (3 * flops / 2e11,), flops, 1e6)
    assert roofline.observe(m, shaped) == ("compute", pytest.approx(1 / 3))
    found = roofline.diagnosis(m, shaped)
    assert found is not None
    assert (found.mechanism, found.share(m)) == ("shape efficiency", pytest.approx(1.0))
    assert roofline.observe(m, PEAKS) == roofline.observe(m, shaped)  # the sweep: no verdict


def test_the_overhead_floor_counts_calls_and_operations_at_their_latencies() -> None:
    floors = Peaks("cpu", 1e11, 1e10, "float32", latency_seconds=3e-6, op_seconds=1.5e-6,
                   cold_latency_seconds=45e-6)  # fmt: skip
    # one call from Python, 4,095 operations dispatched inside C++
    loop = Measurement("rnn-loop", "cpu", {}, (8e-3,), 2e6, 1e5, ops=4096, calls=1, steps=1024)
    assert dict(roofline.roof_times(loop, floors))["overhead"] == pytest.approx(
        4095 * 1.5e-6 + 3e-6
    )
    # one call in four from Python: each pays the latency floor
    python = replace(loop, calls=1024)
    assert dict(roofline.roof_times(python, floors))["overhead"] == pytest.approx(
        1024 * 3e-6 + 3072 * 1.5e-6
    )
    # right after a flush the first call pays the cold floor instead
    cold = Measurement("x", "cpu", {}, (50e-6,), 100.0, 100.0, flush=True, ops=2, calls=2)
    assert dict(roofline.roof_times(cold, floors))["overhead"] == pytest.approx(48e-6)
    # two operations at 1.5 µs do not beat one call's latency: at least one call
    two = Measurement("x", "cpu", {}, (1.0,), 1, 1, ops=2)
    assert dict(roofline.roof_times(two, floors))["overhead"] == 3e-6
    # a large chain whose arithmetic outweighs its dispatch is compute-bound
    heavy = replace(loop, raw_seconds=(2.0,), flops=1e11)
    assert roofline.observe(heavy, floors) == ("compute", 0.5)


def test_the_operation_chain_diagnosis_is_the_chain_formula() -> None:
    floors = Peaks("cpu", 1e11, 1e10, "float32", latency_seconds=3e-6, op_seconds=1.5e-6)
    loop = Measurement("rnn-loop", "cpu", {}, (8e-3,), 2e6, 1e5, ops=4096, calls=1, steps=1024)
    # on a CPU the thread that dispatches an operation then runs it: the arithmetic adds
    serial = formulas.serial_chain_seconds(S=1024, F=2e6 / 1024, P=1e11, n_ops=4095 / 1024,
                                           t_op=1.5e-6, n_calls=1 / 1024, t_call=3e-6)  # fmt: skip
    found = roofline.diagnosis(loop, floors)
    assert found is not None
    assert (found.mechanism, found.seconds) == ("operation chain", pytest.approx(float(serial)))
    # the verdict is the overhead floor, at the share of it the loop attained
    assert roofline.observe(loop, floors) == ("overhead", pytest.approx(6.1455e-3 / 8e-3))
    # on a GPU the next launch overlaps the running kernel: the longer of the two
    gpu = replace(loop, device="cuda")
    parallel = formulas.chain_seconds(S=1024, F=2e6 / 1024, Q=1e5 / 1024, P=1e11, beta=1e10,
                                      n_ops=4095 / 1024, t_op=1.5e-6, n_calls=1 / 1024,
                                      t_call=3e-6)  # fmt: skip
    (chain,) = roofline.diagnoses(gpu, floors)
    assert chain.seconds == pytest.approx(float(parallel))
    # there the chain is its dispatch, no longer than the overhead roof: no gap to account for
    assert roofline.diagnosis(gpu, floors) is None


def test_a_kernel_that_beats_its_roof_beyond_its_spread_is_shown_beaten() -> None:
    from gpuconcepts.render import why_unexplained

    # 3 % over DRAM's roof at its median, but its slow quartile is under the roof: not beaten
    triad = Measurement("peak-triad", "cpu", {}, (0.096, 0.097, 0.104), 0.0, 1e9)
    found = roofline.verdict(triad, CACHED)
    assert (found.name, found.beaten) == ("DRAM", False)
    assert found.attained == pytest.approx(0.1 / 0.097)
    copy = replace(triad, flops=1.0)  # a page places kernels that do some arithmetic
    assert why_unexplained(copy, CACHED) is None
    # beyond its spread: still DRAM's bound, shown beaten, an anomaly the run measures again
    beyond = replace(copy, raw_seconds=(0.080, 0.081, 0.082))
    where = roofline.place(beyond, CACHED)
    assert (where.observed, where.beaten) == ("DRAM", True)
    assert roofline.beats_every_roof(beyond, CACHED)
    assert "less time than its memory (DRAM) roof allows" in (why_unexplained(beyond, CACHED) or "")


def test_random_access_is_part_of_the_memory_roof() -> None:
    # 2**20 random 16-byte rows: their 16 MiB at DRAM's 10 GB/s take 1.7 ms, but each costs a
    # 64-byte line at 3·10⁷ lines/s, 35 ms; the lookup took 50 ms. Since 2026-12-07 the line
    # rate is the memory roof's bound for random rows (docs/changes.toml), no longer a
    # diagnosis beside a roof that priced them as a stream
    rows = 2**20
    lookup = Measurement("dlrm-random", "cpu", {}, (0.05,), rows * 4.0, rows * 16.0,
                         random_rows=rows, row_bytes=16)  # fmt: skip
    assert roofline.observe(lookup, FLOORS) == ("DRAM", pytest.approx(rows / 3e7 / 0.05))
    assert roofline.diagnosis(lookup, FLOORS) is None  # at 70 % of its roof: nothing to explain
    # rows fetched faster than the line rate allows: above every roof, an anomaly
    cached = replace(lookup, raw_seconds=(0.005,))
    assert roofline.observe(cached, FLOORS)[0] == "above every roof"


def test_the_cold_start_is_a_diagnosis_of_a_flushed_kernel() -> None:
    # 16 MiB streamed at 50 GB/s take 0.34 ms; read once right after a flush they took 1 ms
    cold = Measurement("mlp", "cpu", {}, (1.5e-3,), 1e6, 2**24, flush=True)
    assert roofline.observe(cold, COLD) == ("DRAM", pytest.approx(2**24 / 5e10 / 1.5e-3))
    found = roofline.diagnosis(cold, COLD)
    assert found is not None
    assert (found.mechanism, found.seconds) == ("cold start", pytest.approx(1e-3))
    # between the sweep's points the bound is read off the line joining them
    between = replace(cold, bytes=10 * 2**20)
    assert roofline.diagnoses(between, COLD)[0].seconds == pytest.approx(6.5e-4)
    # a kernel that was not flushed is not diagnosed with a cold start
    assert roofline.diagnoses(replace(cold, flush=False), COLD) == ()


def test_a_small_product_is_diagnosed_by_the_sweeps_product_of_its_shape() -> None:
    # B = 8 multiplies 8 rows: its 67 MFLOP take 0.34 ms at the peak, its 16.9 MB 0.42 ms at
    # DRAM's 40 GB/s: memory-bound at 21 % in 2 ms; the sweep's 16-row product (50 GFLOP/s)
    # accounts for 1.34 ms of it
    eight = _linear(8, 2e-3)
    assert roofline.observe(eight, SHAPES) == ("DRAM", pytest.approx(16_908_288 / 4e10 / 2e-3))
    found = roofline.diagnosis(eight, SHAPES)
    assert found is not None
    assert (found.mechanism, found.share(eight)) == (
        "shape efficiency",
        pytest.approx(1.342e-3 / 2e-3, 1e-3),
    )
    # flushed, a matrix-vector product is read against the product that started cold
    cold = _linear(1, 5e-3, flush=True)
    assert roofline.shape_seconds(cold, SHAPES) == pytest.approx(8.39e6 / 2e9, 1e-3)
    # a kernel faster than its shape's product is not diagnosed by it
    assert roofline.diagnosis(_linear(8, 1e-3), SHAPES) is None


def test_peaks_with_levels_round_trip() -> None:
    assert from_record(Peaks, CACHED.to_dict()) == CACHED
    assert [lvl.name for lvl in CACHED.memory_roofs] == ["L2", "L3", "DRAM"]
    gpu = Peaks("cuda", 1e15, 4e12, "bfloat16")
    assert [lvl.name for lvl in gpu.memory_roofs] == ["HBM"]


def test_each_point_carries_its_spread_as_an_error_bar() -> None:
    m = Measurement("mlp", "cpu", {}, (1.0, 2.0, 4.0), 8e9, 1e8)  # quartiles 1.5 s and 3 s
    fig = plots.plot_roofline(PEAKS, [m])
    (bar,) = [c for c in fig.axes[0].collections if len(c.get_segments()) == 1]
    (segment,) = bar.get_segments()
    low, high = sorted(segment[:, 1])
    assert (low, high) == (pytest.approx(8e9 / 3.0), pytest.approx(8e9 / 1.5))


# -- a verdict on another machine, and a gap split into reuse and efficiency -----------------------
def _kernel(name: str, intensity: float, flops_per_s: float = 1e9) -> Measurement:
    return Measurement(name, "cpu", {}, (1e9 * intensity / flops_per_s,), 1e9 * intensity, 1e9)


def test_changes_side_against_the_datasheet_gpus_in_fp32() -> None:
    from gpuconcepts import hardware

    cpu = Peaks("cpu", 1.27e11, 2.365e10, "float32")  # a ridge of about 5.4 FLOP/byte
    gpus = hardware.datasheet_peaks("float32")  # ridges from 9.56 (A100) to 101 (L4)
    kernels = [
        _kernel(name, i)
        for name, i in (("lookup", 0.24), ("small-mlp", 7.9), ("mlp", 56.9), ("dense", 114.0))
    ]
    changed = {m.workload: where for m, where in roofline.changes_side(kernels, cpu, gpus)}
    assert changed == {
        "small-mlp": ("A100 80GB SXM", "H100 SXM", "H200", "L4", "T4", "RTX 4090"),
        "mlp": ("L4", "RTX 4090"),  # fp32 ridges 101 and 81.9; the others are below 56.9
    }
    factors = [p.ridge_point / cpu.ridge_point for p in gpus]
    assert min(factors) == pytest.approx(9.5635 / 5.3700, rel=1e-3)
    assert max(factors) == pytest.approx(101 / 5.3700, rel=1e-3)


def test_gap_split_multiplies_back_to_the_measured_gap_and_agrees_with_place() -> None:
    peaks = Peaks("cpu", 1.27e11, 2.365e10, "float32")
    dense = _kernel("cnn-conv", 143.2, flops_per_s=1.437e11)  # above its compute roof
    depthwise = _kernel("cnn-depthwise", 2.25, flops_per_s=2.546e10)  # under its DRAM roof
    split = roofline.gap_split(dense, depthwise, peaks)
    assert split.measured == pytest.approx(1.437e11 / 2.546e10)
    assert split.roofline == pytest.approx(1.27e11 / (2.25 * 2.365e10))  # compute roof / slope
    assert split.roofline * split.rest == pytest.approx(split.measured)
    # each kernel's share of its own roof is the inverse of "time ÷ roofline" in the tables
    assert split.fast_attained == pytest.approx(1 / roofline.place(dense, peaks).ratio)
    assert split.slow_attained == pytest.approx(1 / roofline.place(depthwise, peaks).ratio)
    assert split.fast_attained > 1 > split.slow_attained


def test_plot_roofline_draws_the_physical_limit_above_the_roof() -> None:
    pytest.importorskip("matplotlib")
    peaks = Peaks("cpu", 2e11, 4e10, "float32", physical_flops_per_s=3.3e11)
    fig = plots.plot_roofline(peaks)
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "physical limit (float32): 330 GFLOP/s" in legend
    limit = next(line for line in fig.axes[0].get_lines() if line.get_label().startswith("phys"))
    assert set(limit.get_ydata()) == {3.3e11}


# -- the sweeps the diagnoses read (random access, cold start, GEMM shape) ------------------------
FLOORS = Peaks(
    "cpu", 1e11, 1e10, "float32", latency_seconds=3e-6, op_seconds=1.5e-6, line_bytes=64,
    random_sweep=((2**24, 16, 1e8), (2**28, 16, 3e7), (2**28, 64, 3.2e7), (2**28, 1024, 2e8)),
)  # fmt: skip


def test_the_random_roof_reads_the_narrowest_swept_row_at_least_as_wide() -> None:
    assert FLOORS.random_lines_per_s(4) == 3e7  # from the largest table, not the cached one
    assert FLOORS.random_lines_per_s(48) == 3.2e7
    assert FLOORS.random_lines_per_s(2048) == 2e8
    assert Peaks("cpu", 1e11, 1e10, "float32").random_lines_per_s(16) is None


CALLS = replace(FLOORS, random_sweep=(
    (2**28, 16, 2**16, 2e7), (2**28, 16, 2**18, 3e7), (2**28, 16, 2**20, 5e7),
    (2**28, 128, 2**16, 4e7),
))  # fmt: skip


def test_a_random_sweep_saved_before_call_sizes_reads_as_calls_of_two_to_the_eighteen() -> None:
    mixed = replace(FLOORS, random_sweep=((2**28, 16, 3e7), (2**28, 16, 2**20, 5e7)))
    assert from_record(Peaks, mixed.to_dict()) == mixed
    assert mixed.random_point(16, 2**28, 2**18) == (2**28, 16, 3e7)
    assert mixed.random_point(16, 2**28, 2**19) == (2**28, 16, 2**20, 5e7)


def test_peaks_name_is_separate_from_the_device_kind_and_old_runs_load() -> None:
    from gpuconcepts.records import to_record

    measured = Peaks("cpu", 1e11, 1e10, "float32")
    assert measured.name == "cpu"  # the device kind when no name is given
    named = Peaks("cuda", 1e12, 1e11, "bf16", name="H100 SXM")
    assert (named.device, named.name, named.memory_roofs[-1].name) == ("cuda", "H100 SXM", "HBM")
    assert from_record(Peaks, named.to_dict()) == named
    saved_before = {k: v for k, v in to_record(named).items() if k != "name"}
    assert from_record(Peaks, saved_before).name == "cuda"  # a run saved without the field


COLD = Peaks("cpu", 1e11, 5e10, "float32", cold_sweep=((2**22, 3e-4), (2**24, 1e-3)))


# rows × width products of the GEMM sweep: a matrix-vector product streams its 16 MiB of weights
# at 8 GB/s warm (4 GB/s after a flush); 16 rows reach 50 GFLOP/s, far below the 200 GFLOP/s peak
SHAPES = replace(
    PEAKS,
    gemm_sweep=((1, 2048, False, 4e9), (1, 2048, True, 2e9), (16, 2048, False, 5e10),
                (16, 64, False, 2e9)),
)  # fmt: skip


def _linear(B: int, seconds: float, *, flush: bool = False) -> Measurement:
    params = {"B": B, "d_in": 2048, "d_out": 2048, "s": 4}
    flops, nbytes = formulas.mlp_flops(B=B, d_in=2048, d_out=2048), formulas.mlp_bytes(**params)
    return Measurement("mlp", "cpu", params, (seconds,), flops, nbytes, flush=flush)


def test_an_rnn_is_read_as_the_products_its_code_runs() -> None:
    # the Python loop at B = 4, d = 16: each of 64 steps runs two addmm, x_t (4 × 16) by W_x
    # and h (4 × 16) by W_h, each held by 16 × 64 (a stacked 4 × 32 by 32 × 16 product, which
    # the loop does not run, had bound it: 2026-12-04, the loop at B = 32, d = 512 ran its
    # two products 14 % faster than one such product)
    params = {"B": 4, "S": 64, "d_in": 16, "d_h": 16, "s": 4}
    loop = Measurement("rnn-loop", "cpu", params, (1e-3,), 2 * 4 * 64 * 32 * 16, 1e4, steps=64)
    assert roofline.gemm_products(loop) == ((64, (4, 16, 16)), (64, (4, 16, 16)))
    assert SHAPES.gemm_point((4, 16, 16)) == (16, 64, False, 2e9)
    # the batched GEMM stacks [x_t, h_{t-1}] for all steps into one product
    gemm = replace(loop, workload="rnn-gemm")
    assert roofline.gemm_products(gemm) == ((1, (256, 16, 32)),)
    # nn.RNN hoists its inputs' product out of the steps (aten's CPU RNN runs one linear over
    # all 256 inputs first), as the hoisted loop does
    module = replace(loop, workload="rnn-module")
    assert roofline.gemm_products(module) == ((1, (256, 16, 16)), (64, (4, 16, 16)))
    assert roofline.gemm_products(module) == roofline.gemm_products(
        replace(loop, workload="rnn-hoisted")
    )


def test_a_gemm_sweep_round_trips_through_its_record() -> None:
    assert from_record(Peaks, SHAPES.to_dict()).gemm_sweep == SHAPES.gemm_sweep


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("bandwidth", "reference 'bandwidth' names no roof"),
        ("product 4 8", "a product names its rows, columns and depth"),
        ("latency_seconds 3", "a floor or rate none"),
        ("random 1 2 x", "a random point its table, row and call"),
    ],
)
def test_a_reference_that_names_no_roof_is_refused(key: str, message: str) -> None:
    with pytest.raises(GpuConceptsError, match=message):
        roofline.Reference.from_key(key)


def test_a_reference_must_have_a_value_for_every_repetition() -> None:
    with pytest.raises(GpuConceptsError, match="reference 'latency_seconds' must hold one "
                       r"positive value per repetition \(2\); got \[1e-06\]"):  # fmt: skip
        Measurement("mlp", "cpu", {}, (1.0, 1.0), 1, 1, references={"latency_seconds": (1e-6,)})


def test_products_inside_a_fused_kernel_are_charged_no_launch_each() -> None:
    # cuDNN runs nn.RNN's 64 steps in 5 dispatched operations: each of its products costs the
    # sweep's launched product (13.1 µs at 40 GFLOP/s) less the 10 µs latency floor
    peaks = Peaks(
        "cuda", 1e15, 4e12, "bfloat16", latency_seconds=1e-5, gemm_sweep=((4, 256, False, 4e10),)
    )
    params = {"B": 4, "S": 64, "d_in": 256, "d_h": 256, "s": 2}
    fused = Measurement("rnn-module", "cuda", params, (1e-3,), 1, 1, ops=5, steps=64)
    products = sum(count for count, _ in roofline.gemm_products(fused))
    launched = replace(fused, ops=products)  # a product a dispatch: each pays its launch
    charged = roofline.shape_seconds(launched, peaks)
    inside = roofline.shape_seconds(fused, peaks)
    assert charged is not None
    assert inside is not None
    assert charged - inside == pytest.approx(products * 1e-5)
    # a floor longer than the sweep's product leaves each product its FLOPs at the peak
    slow_launch = replace(peaks, latency_seconds=1.0)
    flops = sum(
        count * 2 * rows * columns * depth
        for count, (rows, columns, depth) in roofline.gemm_products(fused)
    )
    assert roofline.shape_seconds(fused, slow_launch) == pytest.approx(flops / 1e15)


def test_a_chain_charges_its_dispatch_once_not_again_in_its_products() -> None:
    # nn.RNN at B = 1, width 16 on a CPU: three dispatched operations a step at 1 µs each. The
    # sweep's 1 × 16 product took 4 µs, all of it the call, and its 64 × 16 one 3.3 µs; in the
    # chain, whose dispatch is counted apart, each product is charged only its FLOPs at the peak
    peaks = Peaks(
        "cpu", 1e11, 1e10, "float32", latency_seconds=2e-6, op_seconds=1e-6,
        gemm_sweep=((1, 16, False, 512 / 4e-6), (64, 16, False, 1e10)),
    )  # fmt: skip
    params = {"B": 1, "S": 64, "d_in": 16, "d_h": 16, "s": 4}
    rnn = Measurement(
        "rnn-module", "cpu", params, (1e-3,), 64 * 1024, 1, ops=192, calls=2, steps=64
    )
    found = {d.mechanism: d.seconds for d in roofline.diagnoses(rnn, peaks)}
    dispatch = 2 * 2e-6 + 190 * 1e-6  # two calls at the latency floor, the rest at the op floor
    # the input's projection for all 64 steps at once, then a 1 × 16 product a step
    assert roofline.gemm_products(rnn) == ((1, (64, 16, 16)), (64, (1, 16, 16)))
    assert found["shape efficiency"] == pytest.approx(32768 / 1e10 + 64 * 4e-6)  # as swept
    assert found["operation chain"] == pytest.approx(dispatch + (32768 + 64 * 512) / 1e11)
