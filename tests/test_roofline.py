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


# -- the observed bound: the roof that explains the measured time --------------------------
CACHED = Peaks(
    device="cpu",
    flops_per_s=1e11,
    bytes_per_s=1e10,
    dtype="float32",
    levels=(MemoryLevel("L2", 2**20, 1e11), MemoryLevel("L3", 32 * 2**20, 4e10)),
    latency_seconds=5e-6,
)


@pytest.mark.parametrize(
    ("seconds", "flops", "nbytes", "observed", "attained"),
    [
        (1.0, 1e9, 5e9, "DRAM", 0.5),  # 5 GB/s: half of DRAM's roof
        (0.25, 1e9, 5e9, "L3", 0.5),  # 20 GB/s beats DRAM: served from L3 at half its roof
        (0.1, 1e9, 5e9, "L2", 0.5),  # 50 GB/s beats L3 too
        (0.04, 1e9, 5e9, "above every roof", 1.25),  # faster than every roof: to be doubted
        (1.0, 5e10, 1e6, "compute", 0.5),  # arithmetic explains it, not the bytes
        (1e-5, 10.0, 8.0, "per-call", 0.5),  # a tiny kernel: only the per-call floor explains it
    ],
)
def test_observed_bound_is_the_tightest_roof_not_beaten(
    seconds: float, flops: float, nbytes: float, observed: str, attained: float
) -> None:
    m = Measurement("x", "cpu", {}, (seconds,), flops, nbytes)
    where = roofline.place(m, CACHED)
    assert (where.observed, where.attained) == (observed, pytest.approx(attained))
    if observed != "above every roof":  # never labelled with a roof its rate exceeds
        roof = {lvl.name: lvl.bytes_per_s for lvl in CACHED.memory_roofs}.get(observed)
        if roof is not None:
            assert m.bytes_per_s <= roof


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


def test_the_best_of_two_peak_measurements() -> None:
    first = Peaks("cpu", 1e11, 1e10, "float32", read_bytes_per_s=8e9, latency_seconds=3e-6,
                  levels=(MemoryLevel("L2", 2**20, 5e10),))  # fmt: skip
    again = Peaks("cpu", 0.9e11, 1.1e10, "float32", read_bytes_per_s=9e9, latency_seconds=4e-6,
                  levels=(MemoryLevel("L2", 2**20, 6e10),))  # fmt: skip
    best = first.best_of(again)
    assert (best.flops_per_s, best.bytes_per_s, best.read_bytes_per_s) == (1e11, 1.1e10, 9e9)
    assert best.latency_seconds == 3e-6
    assert best.levels == (MemoryLevel("L2", 2**20, 6e10),)


# -- the roofs beyond compute and bandwidth (chain, per-call, random access) ----------------------
FLOORS = Peaks(
    "cpu", 1e11, 1e10, "float32", latency_seconds=3e-6, op_seconds=1.5e-6, line_bytes=64,
    random_sweep=((2**24, 16, 1e8), (2**28, 16, 3e7), (2**28, 64, 3.2e7), (2**28, 1024, 2e8)),
)  # fmt: skip


def test_a_chain_of_small_steps_is_chain_bound() -> None:
    # 1,024 dependent steps of 4 operations: 6.1 ms at 1.5 µs an operation; its 2 MFLOP take
    # 20 µs at the peak, so the roofline alone would call it 300× too slow
    loop = Measurement("rnn-loop", "cpu", {}, (8e-3,), 2e6, 1e5, ops=4096, calls=1, steps=1024)
    # one call from Python, the rest dispatched inside C++; on a CPU the arithmetic adds
    bound = 4095 * 1.5e-6 + 3e-6 + 2e6 / 1e11
    assert roofline.observe(loop, FLOORS) == ("chain", pytest.approx(bound / 8e-3))
    chain = formulas.serial_chain_seconds(S=1024, F=2e6 / 1024, P=1e11, n_ops=4095 / 1024,
                                          t_op=1.5e-6, n_calls=1 / 1024, t_call=3e-6)  # fmt: skip
    assert dict(roofline.roof_times(loop, FLOORS))["chain"] == pytest.approx(float(chain))
    # on a GPU the next launch overlaps the running kernel: the longer of the two bounds it
    gpu = replace(loop, device="cuda")
    parallel = formulas.chain_seconds(S=1024, F=2e6 / 1024, Q=1e5 / 1024, P=1e11, beta=1e10,
                                      n_ops=4095 / 1024, t_op=1.5e-6, n_calls=1 / 1024,
                                      t_call=3e-6)  # fmt: skip
    assert dict(roofline.roof_times(gpu, FLOORS))["chain"] == pytest.approx(float(parallel))


def test_operations_python_calls_pay_the_latency_floor() -> None:
    # the same 4,096 operations, one in four called from Python (a Python loop of 1,024
    # steps): each call pays the 3 µs latency floor, the rest the 1.5 µs per-operation floor
    loop = Measurement("rnn-loop", "cpu", {}, (1e-2,), 2e6, 1e5, ops=4096, calls=1024, steps=1024)
    bound = 1024 * 3e-6 + 3072 * 1.5e-6 + 2e6 / 1e11
    assert roofline.observe(loop, FLOORS) == ("chain", pytest.approx(bound / 1e-2))
    chain = formulas.serial_chain_seconds(S=1024, F=2e6 / 1024, P=1e11, n_ops=3, t_op=1.5e-6,
                                          n_calls=1, t_call=3e-6)  # fmt: skip
    assert dict(roofline.roof_times(loop, FLOORS))["chain"] == pytest.approx(float(chain))
    # a loop as fast as its operations at the per-operation floor alone beat the Python
    # calls' floor: the chain does not explain it
    quick = Measurement(
        "rnn-loop", "cpu", {}, (6.2e-3,), 2e6, 1e5, ops=4096, calls=1024, steps=1024
    )
    assert roofline.observe(quick, FLOORS)[0] != "chain"


def test_steps_that_overlap_are_not_chain_bound() -> None:
    # the same counts in a tenth of the chain's floor: its steps cannot have run one after
    # another at the measured floor, so the chain does not explain it, and it is not so labelled
    overlapped = Measurement("rnn-loop", "cpu", {}, (6e-4,), 2e6, 1e5, ops=4096, steps=1024)
    assert roofline.observe(overlapped, FLOORS)[0] != "chain"
    # a large chain whose arithmetic outweighs its dispatch is compute-bound, not chain-bound
    heavy = Measurement("rnn-loop", "cpu", {}, (2.0,), 1e11, 1e6, ops=4096, steps=1024)
    assert roofline.observe(heavy, FLOORS) == ("compute", 0.5)


def test_a_one_op_kernel_rests_on_the_per_call_floor() -> None:
    tiny = Measurement("mlp", "cpu", {}, (6e-6,), 100.0, 100.0, ops=1)
    assert roofline.observe(tiny, FLOORS) == ("per-call", pytest.approx(0.5))
    # two operations at 1.5 µs each do not beat one call's 3 µs: the call's latency stands
    assert roofline.roof_times(Measurement("x", "cpu", {}, (1.0,), 1, 1, ops=2), FLOORS)[-1] == (
        "per-call",
        pytest.approx(3e-6, 1e-4),
    )


def test_random_rows_rest_on_the_line_fetch_rate() -> None:
    # 2**20 random 16-byte rows: one 64-byte line each at 3·10⁷ lines/s is 35 ms, although
    # their 16 MiB at DRAM's 10 GB/s would take 1.7 ms
    rows = 2**20
    lookup = Measurement("dlrm-random", "cpu", {}, (0.05,), rows * 4.0, rows * 16.0,
                         random_rows=rows, row_bytes=16)  # fmt: skip
    name, attained = roofline.observe(lookup, FLOORS)
    assert name == "random access"
    assert attained == pytest.approx(rows / 3e7 / 0.05)
    # consecutive rows of the same lookup carry no random rows: streaming explains them
    sequential = Measurement("dlrm-sequential", "cpu", {}, (0.003,), rows * 4.0, rows * 16.0)
    assert roofline.observe(sequential, FLOORS)[0] == "DRAM"
    # rows fetched faster than the line rate allows were not random misses: not so labelled
    cached = Measurement("dlrm-random", "cpu", {}, (0.005,), rows * 4.0, rows * 16.0,
                         random_rows=rows, row_bytes=16)  # fmt: skip
    assert roofline.observe(cached, FLOORS)[0] != "random access"


def test_the_random_roof_reads_the_narrowest_swept_row_at_least_as_wide() -> None:
    assert FLOORS.random_lines_per_s(4) == 3e7  # from the largest table, not the cached one
    assert FLOORS.random_lines_per_s(48) == 3.2e7
    assert FLOORS.random_lines_per_s(2048) == 2e8
    assert Peaks("cpu", 1e11, 1e10, "float32").random_lines_per_s(16) is None


CALLS = replace(FLOORS, random_sweep=(
    (2**28, 16, 2**16, 2e7), (2**28, 16, 2**18, 3e7), (2**28, 16, 2**20, 5e7),
    (2**28, 128, 2**16, 4e7),
))  # fmt: skip


def test_a_lookup_is_read_against_the_smallest_swept_call_at_least_as_large() -> None:
    # a call pays its cold start once: the more rows share it, the faster each line, so a
    # lookup of R rows is bounded by the swept call of the fewest rows no fewer than R
    assert CALLS.random_point(16, 2**28, 2**16) == (2**28, 16, 2**16, 2e7)
    assert CALLS.random_point(16, 2**28, 2**17) == (2**28, 16, 2**18, 3e7)
    assert CALLS.random_point(16, 2**28, 2**21) == (2**28, 16, 2**20, 5e7)  # beyond: the largest
    assert CALLS.random_point(16, 2**28) == (2**28, 16, 2**20, 5e7)  # unknown: the fastest
    # the row width is chosen among the points of that call only
    assert CALLS.random_point(128, 2**28, 2**16) == (2**28, 128, 2**16, 4e7)
    assert CALLS.random_point(128, 2**28, 2**18) == (2**28, 16, 2**18, 3e7)
    rows = 2**20
    big = Measurement("dlrm-random", "cpu", {"N": 2**24, "d": 4, "s": 4}, (0.025,), rows * 4.0,
                      rows * 16.0, random_rows=rows, row_bytes=16)  # fmt: skip
    assert roofline.observe(big, CALLS) == ("random access", pytest.approx(rows / 5e7 / 0.025))


def test_a_lookup_faster_than_its_own_calls_rate_is_not_labelled_random_access() -> None:
    # falsifiable: 2**20 rows in 10 ms is 1e8 lines/s, twice the fastest swept call's rate
    # (and far beyond the smaller calls'): no random-access roof may place it
    rows = 2**20
    fast = Measurement("dlrm-random", "cpu", {"N": 2**24, "d": 4, "s": 4}, (0.010,), rows * 4.0,
                       rows * 16.0, random_rows=rows, row_bytes=16)  # fmt: skip
    assert roofline.observe(fast, CALLS)[0] != "random access"
    assert roofline.beaten_roofs(fast, CALLS) == ("random access",)


def test_a_random_sweep_saved_before_call_sizes_reads_as_calls_of_two_to_the_eighteen() -> None:
    mixed = replace(FLOORS, random_sweep=((2**28, 16, 3e7), (2**28, 16, 2**20, 5e7)))
    assert from_record(Peaks, mixed.to_dict()) == mixed
    assert mixed.random_point(16, 2**28, 2**18) == (2**28, 16, 3e7)
    assert mixed.random_point(16, 2**28, 2**19) == (2**28, 16, 2**20, 5e7)
    again = replace(FLOORS, random_sweep=((2**28, 16, 2**20, 6e7),))
    assert mixed.best_of(again).random_sweep == ((2**28, 16, 3e7), (2**28, 16, 2**20, 6e7))


def test_a_hot_set_is_read_against_the_random_rows_its_own_cache_served() -> None:
    # a hot set of 1,024 rows of 64 bytes (64 KiB) sits in the 1 MiB L2: the sweep's point
    # inside it (2e8 lines/s) bounds it, not the DRAM one (3e7), which it would beat
    levels = (MemoryLevel("L2", 2**20, 5e10), MemoryLevel("L3", 2**25, 3e10))
    sweep = ((2**19, 64, 2e8), (2**24, 64, 1e8), (2**28, 64, 3e7))
    peaks = replace(FLOORS, levels=levels, random_sweep=sweep)
    params = {"N": 10**6, "B": 1024, "L": 64, "d": 16, "s": 4}
    rows = 1024 * 64
    hot = Measurement("dlrm-hot", "cpu", params, (4e-4,), rows * 16.0, rows * 64.0,
                      random_rows=rows, row_bytes=64)  # fmt: skip
    assert roofline.observe(hot, peaks) == ("random access", pytest.approx(rows / 2e8 / 4e-4))
    # the same rows from the whole 64 MB table are DRAM's misses
    spread = replace(hot, workload="dlrm-random")
    assert peaks.random_point(64, roofline.random_table_bytes(spread)) == (2**28, 64, 3e7)
    # beyond every cache, the largest swept table no larger than the lookup's: a table of
    # gigabytes misses in the address translations too, so it is read against the larger one
    deeper = replace(peaks, random_sweep=(*sweep, (2**30, 64, 1.5e7)))
    assert deeper.random_point(64, 2**31) == (2**30, 64, 1.5e7)
    assert deeper.random_point(64, 2**29) == (2**28, 64, 3e7)
    # with no swept table as close in as its own, a hot set has no random-access roof
    far = replace(peaks, random_sweep=sweep[1:])
    assert "random access" not in dict(roofline.roof_times(hot, far))


def test_a_flushed_call_starts_at_the_cold_floor() -> None:
    cold = Peaks("cpu", 1e11, 1e10, "float32", latency_seconds=3e-6, op_seconds=1e-6,
                 cold_latency_seconds=45e-6)  # fmt: skip
    # two operations Python calls: the first at the cold floor, the second at the warm one
    tiny = Measurement("rnn-gemm", "cpu", {}, (50e-6,), 100.0, 100.0, flush=True, ops=2, calls=2)
    assert roofline.roof_times(tiny, cold)[-1] == ("per-call", pytest.approx(48e-6, 1e-4))
    assert roofline.observe(tiny, cold) == ("per-call", pytest.approx(48 / 50, 1e-4))
    warm = Measurement("rnn-gemm", "cpu", {}, (50e-6,), 100.0, 100.0, ops=2, calls=2)
    assert roofline.roof_times(warm, cold)[-1] == ("per-call", pytest.approx(6e-6, 1e-3))


def test_a_roof_is_beaten_only_beyond_the_spread() -> None:
    # the triad at 3% over DRAM's roof at its median, but its spread reaches below the roof:
    # still DRAM's, a little over 100% of it, not "served by a cache" at a fraction of L2's
    triad = Measurement("peak-triad", "cpu", {}, (0.096, 0.097, 0.104), 0.0, 1e9)
    assert roofline.observe(triad, CACHED) == ("DRAM", pytest.approx(0.1 / 0.097))
    beyond = Measurement("peak-triad", "cpu", {}, (0.080, 0.081, 0.082), 0.0, 1e9)
    assert roofline.observe(beyond, CACHED)[0] == "L3"


def test_peaks_name_is_separate_from_the_device_kind_and_old_runs_load() -> None:
    from gpuconcepts.records import to_record

    measured = Peaks("cpu", 1e11, 1e10, "float32")
    assert measured.name == "cpu"  # the device kind when no name is given
    named = Peaks("cuda", 1e12, 1e11, "bf16", name="H100 SXM")
    assert (named.device, named.name, named.memory_roofs[-1].name) == ("cuda", "H100 SXM", "HBM")
    assert from_record(Peaks, named.to_dict()) == named
    saved_before = {k: v for k, v in to_record(named).items() if k != "name"}
    assert from_record(Peaks, saved_before).name == "cuda"  # a run saved without the field


def test_a_large_kernel_of_few_operations_is_never_labelled_by_its_dispatch() -> None:
    # a GEMM of 1.7·10¹⁰ FLOPs in one operation: compute-bound, whatever rounding the chain's
    # formula (which would equal the compute bound here) gives
    gemm = Measurement("mlp", "cpu", {}, (0.2,), 1.7e10 / 3, 1e7 / 3, ops=1, flush=True)
    assert roofline.observe(gemm, FLOORS)[0] == "compute"
    assert [name for name, _ in roofline.roof_times(gemm, FLOORS)][-1] == "per-call"
    assert dict(roofline.roof_times(gemm, FLOORS))["per-call"] == 3e-6  # the call's latency


COLD = Peaks("cpu", 1e11, 5e10, "float32", cold_sweep=((2**22, 3e-4), (2**24, 1e-3)))


def test_a_flushed_kernel_reads_dram_from_a_cold_start() -> None:
    # 16 MiB streamed at 50 GB/s take 0.34 ms, but read once right after a flush they took
    # 1 ms: a flushed kernel's DRAM bound is the cold read's, an unflushed one's the stream's
    cold = Measurement("mlp", "cpu", {}, (1.5e-3,), 1e6, 2**24, flush=True)
    assert roofline.observe(cold, COLD) == ("DRAM", pytest.approx(1e-3 / 1.5e-3))
    warm = Measurement("mlp", "cpu", {}, (1.5e-3,), 1e6, 2**24)
    assert roofline.observe(warm, COLD) == ("DRAM", pytest.approx(2**24 / 5e10 / 1.5e-3))
    # between the sweep's points the bound is read off the line joining them
    between = Measurement("mlp", "cpu", {}, (1e-3,), 1e6, 10 * 2**20, flush=True)
    assert dict(roofline.roof_times(between, COLD))["DRAM"] == pytest.approx(6.5e-4)


def test_a_flushed_kernel_quicker_than_a_cold_read_is_above_every_roof() -> None:
    # read after a flush, its 16 MiB cannot have come from DRAM in half the cold read's time
    quick = Measurement("mlp", "cpu", {}, (5e-4, 5e-4, 5.1e-4), 1e6, 2**24, flush=True)
    assert roofline.observe(quick, COLD)[0] == roofline.ABOVE_EVERY_ROOF


def test_only_a_cold_dram_bound_is_said_to_start_cold() -> None:
    from gpuconcepts.render import why_unexplained

    cached = replace(COLD, levels=(MemoryLevel("L3", 2**25, 2e11),))
    slow = Measurement("mlp", "cpu", {}, (4e-3,), 1e6, 2**24, flush=True)  # a quarter of DRAM's
    assert "read from a cold start" in (why_unexplained(slow, cached) or "")
    # quicker than a cold read of its bytes: a cache served it, and no cold start is claimed
    hot = Measurement("dlrm-hot", "cpu", {}, (5e-4,), 1e6, 2**24, flush=True)
    assert roofline.observe(hot, cached)[0] == "L3"
    assert "cold start" not in (why_unexplained(hot, cached) or "")


def test_a_kernel_over_its_roof_within_its_spread_is_explained() -> None:
    from gpuconcepts.render import why_unexplained

    # 3% over the compute roof at its median, but its slow quartile is under the roof's bound
    close = Measurement("cnn-conv", "cpu", {}, (0.0095, 0.0097, 0.0104), 1e9, 1e6)
    assert roofline.observe(close, FLOORS)[1] > 1
    assert why_unexplained(close, FLOORS) is None
    # beyond its spread it is above every roof: never explained
    beyond = Measurement("cnn-conv", "cpu", {}, (0.0080, 0.0081, 0.0082), 1e9, 1e6)
    assert "a roof is missing" in (why_unexplained(beyond, FLOORS) or "")


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


def test_a_small_product_rests_on_the_rate_of_a_product_of_its_shape() -> None:
    # B = 8 multiplies 8 rows: the sweep's 16-row product bounds it, at 50 GFLOP/s (67 MFLOP:
    # 1.34 ms), where the peak would allow 0.34 ms and DRAM's 40 GB/s 0.42 ms
    eight = _linear(8, 2e-3)
    assert roofline.observe(eight, SHAPES) == ("GEMM shape", pytest.approx(1.342e-3 / 2e-3, 1e-3))
    # flushed, a matrix-vector product is read against the product that started cold
    cold = _linear(1, 5e-3, flush=True)
    assert roofline.observe(cold, SHAPES) == (
        "GEMM shape",
        pytest.approx(8.39e6 / 2e9 / 5e-3, 1e-3),
    )
    warm = _linear(1, 2.5e-3)
    assert roofline.observe(warm, SHAPES) == (
        "GEMM shape",
        pytest.approx(8.39e6 / 4e9 / 2.5e-3, 1e-3),
    )


def test_a_kernel_faster_than_its_shapes_product_is_not_labelled_by_it() -> None:
    # 8 rows in a tenth of the 16-row product's time: that product does not bound it (the
    # sweep was slow, or the kernel ran another path), so the other roofs place it
    fast = _linear(8, 4.5e-4)
    assert roofline.observe(fast, SHAPES)[0] == "DRAM"
    assert dict(roofline.roof_times(fast, SHAPES))["GEMM shape"] > fast.seconds


def test_a_roof_of_its_own_kind_places_a_kernel_up_to_ten_percent_over_it() -> None:
    # 16 rows: the sweep's own 16-row product bounds it at 1.34 ms (50 GFLOP/s). Another
    # measurement of that product, 8 % quicker with no spread, is still placed by it, a
    # little over all of it; one 12 % quicker is not, and the compute roof places it instead
    bound = dict(roofline.roof_times(_linear(16, 1.0), SHAPES))["GEMM shape"]
    assert bound == pytest.approx(2 * 16 * 2048 * 2048 / 5e10)
    near = _linear(16, bound / 1.08)
    assert roofline.observe(near, SHAPES) == ("GEMM shape", pytest.approx(1.08))
    assert roofline.beaten_roofs(near, SHAPES) == ("GEMM shape",)  # measured again
    assert roofline.beaten_roofs(near, SHAPES, tolerance=roofline.OWN_ROOF_TOLERANCE) == ()
    far = _linear(16, bound / 1.12)
    assert roofline.observe(far, SHAPES)[0] == "compute"
    assert roofline.beaten_roofs(far, SHAPES, tolerance=roofline.OWN_ROOF_TOLERANCE) == (
        "GEMM shape",
    )


def test_a_product_larger_than_the_sweep_takes_its_fastest_rate() -> None:
    # 32 rows of 2,048: beyond the sweep, bounded by its fastest warm product (16 rows, 50
    # GFLOP/s: 268 MFLOP in 5.37 ms), not by the 200 GFLOP/s peak of another path
    assert SHAPES.gemm_point((32, 2048, 2048)) == (16, 2048, False, 5e10)
    big = _linear(32, 6e-3)
    assert roofline.observe(big, SHAPES) == ("GEMM shape", pytest.approx(5.369e-3 / 6e-3, 1e-3))
    # a kernel that runs no product, or a run without the sweep, has no such roof
    assert roofline.gemm_products(Measurement("cnn-depthwise", "cpu", {}, (1.0,), 1, 1)) == ()
    assert "GEMM shape" not in dict(roofline.roof_times(_linear(8, 2e-3), PEAKS))


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


def test_a_flushed_chain_starts_cold_once() -> None:
    # 64 steps of two 4 × 16 × 16 products after a flush: the first step's first product at
    # the flushed rate of the 16 × 64 product, the other 127 at its warm rate (a step finds
    # what the last one left)
    sweep = ((16, 64, False, 2e9), (16, 64, True, 1e8))
    peaks = replace(PEAKS, gemm_sweep=sweep)
    params = {"B": 4, "S": 64, "d_in": 16, "d_h": 16, "s": 4}
    flops = 2 * 4 * 16 * 16  # one product
    loop = Measurement("rnn-loop", "cpu", params, (1e-3,), 128 * flops, 1e4, steps=64,
                       flush=True)  # fmt: skip
    bound = dict(roofline.roof_times(loop, peaks))["GEMM shape"]
    assert bound == pytest.approx(flops / 1e8 + 127 * flops / 2e9)
    # were every step cold, the bound would be 20 times longer, and the loop would beat it
    assert bound < 128 * flops / 1e8 / 10


def test_an_activation_runs_after_the_products_on_a_cpu() -> None:
    # the batched RNN GEMM at S·B = 16 rows, d = 32: one 16 × 32 × 64 product (the 16 × 64
    # point, 2e9 FLOP/s), then tanh of 512 elements at 1e8 a second: 5.12 µs after 32.8 µs
    params = {"B": 1, "S": 16, "d_in": 32, "d_h": 32, "s": 4}
    flops = formulas.rnn_flops(B=1, S=16, d_in=32, d_h=32)
    gemm = Measurement("rnn-gemm", "cpu", params, (5e-5,), flops, 1e4)
    peaks = replace(SHAPES, activation_per_s=1e8)
    bound = dict(roofline.roof_times(gemm, peaks))["GEMM shape"]
    assert bound == pytest.approx(flops / 2e9 + 512 / 1e8)
    assert dict(roofline.roof_times(gemm, SHAPES))["GEMM shape"] == pytest.approx(flops / 2e9)
    # a GPU may fuse the activation into its product's kernel: the products alone bound it
    on_gpu = replace(gemm, device="cuda")
    assert dict(roofline.roof_times(on_gpu, peaks))["GEMM shape"] == pytest.approx(flops / 2e9)


def test_the_hoisted_loop_adds_its_up_front_product_and_its_steps() -> None:
    # B = 16, S = 4, d = 64: one 64 × 64 × 64 product up front, then 4 steps of 16 × 64 × 64;
    # only the 16 × 64 point holds the steps, and the one larger than the sweep takes its
    # fastest rate (50 GFLOP/s), so the bound is 4 × 131,072 FLOPs at 2 GFLOP/s + 524,288 at 50
    params = {"B": 16, "S": 4, "d_in": 64, "d_h": 64, "s": 4}
    flops = formulas.rnn_flops(B=16, S=4, d_in=64, d_h=64)
    hoisted = Measurement("rnn-hoisted", "cpu", params, (1e-3,), flops, 1e5, steps=4)
    assert roofline.gemm_products(hoisted) == ((1, (64, 64, 64)), (4, (16, 64, 64)))
    bound = dict(roofline.roof_times(hoisted, SHAPES))["GEMM shape"]
    assert bound == pytest.approx(4 * 131_072 / 2e9 + 524_288 / 5e10)
    assert flops == 4 * 131_072 + 524_288  # the products are all its FLOPs


def test_the_best_of_two_sweeps_keeps_each_products_faster_rate() -> None:
    again = replace(PEAKS, gemm_sweep=((16, 2048, False, 6e10), (1, 2048, True, 1e9)))
    best = {(p[0], p[1], p[2]): p[3] for p in SHAPES.best_of(again).gemm_sweep}
    assert best[(16, 2048, False)] == 6e10
    assert best[(1, 2048, True)] == 2e9
    assert from_record(Peaks, SHAPES.to_dict()).gemm_sweep == SHAPES.gemm_sweep


def test_on_a_cpu_a_products_dispatch_adds_to_its_time_net_of_the_sweeps_own_call() -> None:
    # the sweep's 16 × 64 product ran in 2·16·64·64 / 2 GFLOP/s = 65.5 µs, 3 µs of it its own
    # call, as long as the sweep's smallest product took (1 × 16 × 16, next to no work); the
    # loop's 64 steps of a 4 × 32 by 32 × 16 product run at that net rate at best, and on a CPU
    # the dispatch of its 192 operations (2 of them Python's calls) adds to them
    peaks = replace(FLOORS, gemm_sweep=((1, 16, False, 512 / 3e-6), (16, 64, False, 2e9)))
    params = {"B": 4, "S": 64, "d_in": 16, "d_h": 16, "s": 4}
    flops = 64 * 2 * 4 * 32 * 16
    rnn = Measurement("rnn-loop", "cpu", params, (1e-3,), flops, 1e4, ops=192, calls=2, steps=64)
    net = flops * (2 * 16 * 64 * 64 / 2e9 - 3e-6) / (2 * 16 * 64 * 64)
    dispatch = 190 * 1.5e-6 + 2 * 3e-6
    assert dict(roofline.roof_times(rnn, peaks))["GEMM shape"] == pytest.approx(net + dispatch)
    # on a GPU neither: the product's time as measured, its launches overlapped
    gpu = replace(rnn, device="cuda")
    assert dict(roofline.roof_times(gpu, peaks))["GEMM shape"] == pytest.approx(flops / 2e9)


def test_a_flushed_products_cold_call_is_added_back_as_it_ran() -> None:
    # the batched RNN GEMM after a flush: one 32 × 16 × 32 product read against the flushed
    # 32 × 32 sweep point (2·32·32·32 / 1e9 = 65.5 µs, 45 µs of it that product's own cold
    # call), then tanh; its two Python calls ran one cold, one warm. Net of the sweep's cold
    # call, the product's time gets the cold call back, not a warm one in its place.
    peaks = replace(
        FLOORS,
        gemm_sweep=((1, 16, True, 512 / 45e-6), (32, 32, True, 1e9), (32, 32, False, 2e10)),
        cold_latency_seconds=45e-6,
    )
    params = {"B": 1, "S": 32, "d_in": 16, "d_h": 16, "s": 4}
    gemm = Measurement("rnn-gemm", "cpu", params, (9e-5,), 1.0, 1.0, flush=True, ops=2, calls=2)
    swept = 2 * 32 * 32 * 32
    net = (2 * 32 * 16 * 32) * (swept / 1e9 - 45e-6) / swept
    bound = dict(roofline.roof_times(gemm, peaks))["GEMM shape"]
    assert bound == pytest.approx(net + 45e-6 + 3e-6)
    # unflushed, both calls are warm and the product is read warm
    warm = replace(gemm, flush=False)
    net_warm = (2 * 32 * 16 * 32) * (swept / 2e10 - 3e-6) / swept
    assert dict(roofline.roof_times(warm, peaks))["GEMM shape"] == pytest.approx(
        max(net_warm, 2 * 32 * 16 * 32 / 1e11) + 2 * 3e-6
    )


def test_the_memory_roofs_read_a_lookups_indices_beside_its_rows() -> None:
    # 16-byte rows and an 8-byte index each: the code moves 1.5 times the post's count.
    params = {"N": 2**24, "B": 2048, "L": 256, "d": 4, "s": 4}
    flops, minimal = roofline.WORKLOADS["dlrm-sequential"].counts(params)
    moved = formulas.embedding_bag_traffic(B=2048, L=256, d=4, s=4, s_idx=8)
    assert moved == 1.5 * minimal
    at_moved = Measurement("dlrm-sequential", "cpu", params, (moved / 4e10,), flops, minimal)
    assert roofline.observe(at_moved, PEAKS) == ("DRAM", pytest.approx(1.0))
    # a kernel that streamed only its rows at DRAM's bandwidth would beat the roof
    at_minimal = replace(at_moved, raw_seconds=(minimal / 4e10,))
    assert roofline.observe(at_minimal, PEAKS)[0] == roofline.ABOVE_EVERY_ROOF
    assert roofline.moved_bytes(replace(at_moved, workload="mlp")) == minimal


# -- roofs timed beside the kernel (Measurement.references) ----------------------------------
PAIRED_PEAKS = Peaks("cpu", 1e11, 1e10, "float32", latency_seconds=1e-6)


def _mlp_beside(kernel: tuple[float, ...], product: tuple[float, ...]) -> Measurement:
    """An MLP layer of one product (64 × 512 by 512 × 512), timed beside that product run bare
    and beside the call floors, in the same rounds."""
    params = {"B": 64, "d_in": 512, "d_out": 512, "s": 4}
    flops, nbytes = formulas.mlp_flops(B=64, d_in=512, d_out=512), 4 * (64 * 512 * 2 + 512**2)
    rounds = len(kernel)
    references = {
        "latency_seconds": (1e-6,) * rounds,
        "product 64 512 512": product,
        "product 1 16 16": (2e-6,) * rounds,
    }
    return Measurement("mlp", "cpu", params, kernel, flops, nbytes, ops=1, calls=1,
                       references=references)  # fmt: skip


def test_a_roof_timed_beside_the_kernel_holds_its_share_through_a_burst_of_load() -> None:
    # three quiet rounds, then four in which the machine ran at a third of its speed: the bare
    # product took 80 % of the kernel's time in every round
    quiet, busy = 1e-3, 3e-3
    kernel = (quiet,) * 3 + (busy,) * 4
    m = _mlp_beside(kernel, tuple(0.8 * t for t in kernel))
    roof, attained = roofline.observe(m, PAIRED_PEAKS)
    assert roof == roofline.GEMM_SHAPE
    # its product net of the product's own call (2 µs, timed beside it), then its one call
    assert attained == pytest.approx((0.8 * quiet - 2e-6 + 1e-6) / quiet, rel=1e-6)
    # the same kernel against the product measured with the peaks, in a quiet moment: the
    # burst, not the kernel, decides its share
    swept = replace(PAIRED_PEAKS, gemm_sweep=((64, 512, False, m.flops / (0.8 * quiet)),))
    alone = replace(m, references={})
    assert roofline.observe(alone, swept)[1] < 0.5 * attained


def test_a_kernel_faster_than_its_own_products_beside_it_is_not_placed_by_them() -> None:
    # falsifiable: the kernel took half the time of the very products it runs, round by round
    kernel = (1e-3, 1.02e-3, 0.98e-3, 1.01e-3, 0.99e-3)
    m = _mlp_beside(kernel, tuple(2 * t for t in kernel))
    assert roofline.GEMM_SHAPE in roofline.beaten_roofs(m, PAIRED_PEAKS)
    roof, attained = roofline.observe(m, PAIRED_PEAKS)
    assert roof != roofline.GEMM_SHAPE
    assert attained < 1.1


def test_a_kernel_reads_the_references_it_was_timed_beside() -> None:
    m = Measurement("rnn-module", "cpu", {"B": 2, "S": 8, "d_in": 4, "d_h": 4, "s": 4},
                    (1e-4,), 1, 1, flush=True, ops=30, calls=2, steps=8)  # fmt: skip
    keys = [ref.key for ref in roofline.references_of(m, PAIRED_PEAKS)]
    # the floors of its calls, its operations and its activation; its products, the first
    # right after the flush as the kernel's first starts; each product's call, both ways
    assert keys == ["latency_seconds", "cold_latency_seconds", "op_seconds", "activation_per_s",
                    "product 16 4 4 flushed", "product 2 4 4", "product 1 16 16"]  # fmt: skip
    lookup = Measurement("dlrm-random", "cpu", {"N": 2**20, "B": 8, "L": 4, "d": 4, "s": 4},
                         (1e-4,), 1, 1, random_rows=32, row_bytes=16)  # fmt: skip
    swept = replace(PAIRED_PEAKS, line_bytes=64,
                    random_sweep=((2**24, 16, 2**16, 3e7), (2**24, 16, 2**20, 4e7)))  # fmt: skip
    assert [ref.key for ref in roofline.references_of(lookup, swept)] == [
        "latency_seconds",
        "random 16777216 16 65536",
    ]
    # flash attention never makes its S × S products whole: the sweep's products that hold
    # them bound it, not those products run bare (2026-12-04: at S = 2,048 the fused kernel
    # ran its eight 2,048 × 2,048 × 64 products 10 % faster than the bare ones, which write
    # the scores out)
    prefill = Measurement("transformer-prefill", "cpu", {"B": 1, "S": 8, "d": 8, "heads": 2,
                          "s": 4}, (1e-4,), 1, 1, ops=1, calls=1)  # fmt: skip
    assert roofline.gemm_products(prefill)
    assert [ref.key for ref in roofline.references_of(prefill, PAIRED_PEAKS)] == ["latency_seconds"]


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


def test_a_product_run_bare_after_a_flush_holds_the_cold_start_once() -> None:
    # a matrix-vector product timed after a flush, beside the same product run bare after a
    # flush (80 µs), a warm one-row product (2 µs: its call) and the floors
    params = {"B": 1, "d_in": 512, "d_out": 512, "s": 4}
    flops, nbytes = formulas.mlp_flops(B=1, d_in=512, d_out=512), 4 * (512 * 2 + 512**2)
    references = {
        "latency_seconds": (1e-6,) * 3,
        "cold_latency_seconds": (30e-6,) * 3,
        "product 1 512 512 flushed": (80e-6,) * 3,
        "product 1 16 16": (2e-6,) * 3,
    }
    m = Measurement("mlp", "cpu", params, (100e-6,) * 3, flops, nbytes, flush=True, ops=1,
                    calls=1, references=references)  # fmt: skip
    peaks = replace(PAIRED_PEAKS, bytes_per_s=1e11)  # its megabyte streams in 10 µs
    bound = dict(roofline.roof_times(m, peaks))[roofline.GEMM_SHAPE]
    # the product net of its warm call, then its call: its cold start counted once, in it
    assert bound == pytest.approx(80e-6 - 2e-6 + 1e-6)
    assert roofline.observe(m, peaks) == (roofline.GEMM_SHAPE, pytest.approx(0.79))
