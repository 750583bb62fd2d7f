"""gpuconcepts.measure: device choice, Measurement statistics, cache/memory sizing, timers.

The CUDA timer runs here with a fake backend, so its logic is tested without a GPU.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
from pathlib import Path

import pytest

from gpuconcepts import formulas, measure
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.measure import Measurement
from gpuconcepts.records import from_record
from gpuconcepts.roofline import Peaks, place

PEAKS = Peaks(device="cpu", flops_per_s=1e11, bytes_per_s=1e10, dtype="float32")


# -- devices ---------------------------------------------------------------------------------
def test_resolve_device_cpu_and_case() -> None:
    assert measure.resolve_device("cpu") == "cpu"
    assert measure.resolve_device(" CPU ") == "cpu"


def test_resolve_device_auto_follows_cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(measure.devices, "_cuda_available", lambda: False)
    assert measure.resolve_device("auto") == "cpu"
    monkeypatch.setattr(measure.devices, "_cuda_available", lambda: True)
    assert measure.resolve_device("auto") == "cuda"
    assert measure.resolve_device("cuda") == "cuda"


def test_resolve_device_cuda_absent_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(measure.devices, "_cuda_available", lambda: False)
    with pytest.raises(GpuConceptsError, match=r"device 'cuda' was asked for, but torch sees no"):
        measure.resolve_device("cuda")


def test_resolve_device_unknown_spec() -> None:
    with pytest.raises(GpuConceptsError, match=r"device 'gpu0' is not one of auto, cpu, cuda"):
        measure.resolve_device("gpu0")


def test_device_name_cpu_counts_threads() -> None:
    pytest.importorskip("torch")
    import torch

    name = measure.device_name("cpu")
    assert name.startswith("cpu (")
    assert name.endswith(f"{torch.get_num_threads()} threads)")
    with pytest.raises(GpuConceptsError, match="'tpu' is not a resolved device"):
        measure.device_name("tpu")


# -- values ----------------------------------------------------------------------------------
def test_peaks_ridge_point_is_the_formula() -> None:
    peaks = Peaks(device="cuda", flops_per_s=989e12, bytes_per_s=3.35e12, dtype="bfloat16")
    assert peaks.ridge_point == pytest.approx(295.2238805970149)
    assert peaks.ridge_point == float(formulas.ridge_point(P=989e12, beta=3.35e12))
    assert peaks.to_dict()["ridge_point"] == peaks.ridge_point


@pytest.mark.parametrize("bad", [0, -1.0, math.inf, math.nan])
def test_peaks_reject_non_positive(bad: float) -> None:
    with pytest.raises(GpuConceptsError, match="Peaks: bytes_per_s must be a positive finite"):
        Peaks(device="cpu", flops_per_s=1.0, bytes_per_s=bad, dtype="float32")


def test_measurement_statistics_on_synthetic_times() -> None:
    m = Measurement("mlp", "cpu", {"B": 1}, (5.0, 1.0, 4.0, 2.0, 3.0), flops=4e11, bytes=1e9)
    assert m.seconds == 3.0
    assert m.interval_seconds == (2.0, 4.0)  # inclusive quartiles of 1..5
    assert m.iqr_seconds == 2.0
    assert m.noisy
    assert m.flops_per_s == pytest.approx(4e11 / 3)
    assert m.bytes_per_s == pytest.approx(1e9 / 3)
    assert m.intensity == 400.0


def test_placing_a_measurement_under_peaks() -> None:
    m = Measurement("mlp", "cpu", {"B": 1}, (5.0, 1.0, 4.0, 2.0, 3.0), flops=4e11, bytes=1e9)
    where = place(m, PEAKS)
    assert where.bound == "compute"
    assert where.predicted_seconds == 4.0  # max(4e11 / 1e11, 1e9 / 1e10)
    assert where.ratio == 0.75
    # the same measurement under another machine's peaks lands elsewhere
    slow = Peaks(device="cpu", flops_per_s=1e13, bytes_per_s=1e9, dtype="float32")
    assert place(m, slow).bound == "memory"


def test_measurement_memory_bound_prediction_uses_bandwidth() -> None:
    m = Measurement("dlrm-random", "cpu", {}, (0.5, 0.5), flops=1e9, bytes=4e9)
    where = place(m, PEAKS)
    assert where.bound == "memory"
    assert where.predicted_seconds == pytest.approx(
        float(formulas.roofline_seconds(F=1e9, Q=4e9, P=1e11, beta=1e10))
    )
    assert where.predicted_seconds == pytest.approx(0.4)
    assert m.iqr_seconds == 0.0
    assert not m.noisy


def test_measurement_at_the_ridge_is_compute_bound() -> None:
    m = Measurement("x", "cpu", {}, (1.0,), flops=10.0, bytes=1.0)
    assert m.intensity == PEAKS.ridge_point == 10.0
    assert place(m, PEAKS).bound == "compute"


def test_measurement_round_trips_through_json() -> None:
    m = Measurement(
        "transformer-decode",
        "cpu",
        {"B": 2, "dtype": "float32"},
        (1e-3, 2e-3, 3e-3),
        1e6,
        1e6,
        flush=True,
        series={"lengths": (5, 6), "cache_bytes": (80, 96)},
    )
    data = json.loads(json.dumps(m.to_dict()))
    assert data["params"] == {"B": 2, "dtype": "float32"}
    assert data["flush"] is True
    assert from_record(Measurement, data) == m


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"workload": "mlp"}, "missing field 'device'"),
        (
            {"workload": "mlp", "device": "cpu", "params": [], "raw_seconds": [1.0],
             "flops": 1, "bytes": 1},
            r"params must be an object; got \[\]",
        ),
        (
            {"workload": "mlp", "device": "cpu", "params": {}, "raw_seconds": "fast",
             "flops": 1, "bytes": 1},
            "raw_seconds must be a list; got 'fast'",
        ),
        (
            {"workload": "mlp", "device": "cpu", "params": {}, "raw_seconds": [1.0, "x"],
             "flops": 1, "bytes": 1},
            r"raw_seconds\[1\] must be a number; got 'x'",
        ),
    ],
)  # fmt: skip
def test_measurement_from_dict_names_the_problem(record: dict[str, object], message: str) -> None:
    with pytest.raises(GpuConceptsError, match=message):
        from_record(Measurement, record)


@pytest.mark.parametrize(
    ("raw", "flops", "message"),
    [
        ((), 1.0, "raw_seconds is empty"),
        ((1.0, -1.0), 1.0, "every raw time must be positive; got -1.0"),
        ((1.0,), -1.0, "flops must be zero or more; got -1.0"),
    ],
)
def test_measurement_rejects_bad_values(raw: tuple[float, ...], flops: float, message: str) -> None:
    with pytest.raises(GpuConceptsError, match=message):
        Measurement("mlp", "cpu", {}, raw, flops, 1.0)


# -- cache and memory sizes ------------------------------------------------------------------
def _cache(root: Path, index: int, level: int, kind: str, size: str) -> None:
    folder = root / f"index{index}"
    folder.mkdir(parents=True)
    (folder / "level").write_text(f"{level}\n")
    (folder / "type").write_text(f"{kind}\n")
    (folder / "size").write_text(f"{size}\n")


def test_cpu_last_level_cache_from_sysfs(tmp_path: Path) -> None:
    _cache(tmp_path, 0, 1, "Data", "48K")
    _cache(tmp_path, 1, 1, "Instruction", "32K")
    _cache(tmp_path, 2, 2, "Unified", "1024K")
    _cache(tmp_path, 3, 3, "Unified", "32768K")
    assert measure.cpu_last_level_cache_bytes(tmp_path) == 32 * 1024**2


def test_cpu_last_level_cache_falls_back(tmp_path: Path) -> None:
    assert measure.cpu_last_level_cache_bytes(tmp_path / "missing") == measure.DEFAULT_LLC_BYTES


def test_parse_meminfo_prefers_available() -> None:
    assert measure.parse_meminfo("MemFree: 2 kB\nMemAvailable: 3 kB\n") == 3072
    assert measure.parse_meminfo("MemFree: 2 kB\n") == 2048
    with pytest.raises(GpuConceptsError, match="neither MemAvailable nor MemFree"):
        measure.parse_meminfo("MemTotal: 1 kB\n")


def test_cpu_free_memory_reads_meminfo(tmp_path: Path) -> None:
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal: 8000 kB\nMemAvailable: 1000 kB\n")
    assert measure.cpu_free_memory_bytes(meminfo) == 1_024_000
    assert measure.cpu_free_memory_bytes(tmp_path / "missing") > 0  # os.sysconf fallback


def test_flush_buffer_is_a_dram_working_set_in_whole_mib() -> None:
    assert measure.flush_buffer_bytes(128 * 1024**2) == 128 * 1024**2
    assert measure.flush_buffer_bytes(40 * 1024**2 + 1) == 41 * 1024**2
    assert measure.flush_buffer_bytes(0) == 8 * 1024**2


@pytest.mark.parametrize(
    ("reported_mib", "flush_mib"),
    [(1152, 128), (480, 128), (300, 128), (32, 128), (8, 32), (None, 128)],
)
def test_a_flush_before_the_sweep_never_grows_with_the_reported_cache(
    monkeypatch: pytest.MonkeyPatch, reported_mib: int | None, flush_mib: int
) -> None:
    # sysfs of a cloud VM reports the whole chip's shared L3 (1.1 GiB on a 3D V-Cache EPYC,
    # 480 MiB on a large Xeon); 4x that before every flushed repetition took most of a run
    monkeypatch.setattr(measure.memory, "_FLUSH_BYTES", {})
    reported = measure.DEFAULT_LLC_BYTES if reported_mib is None else reported_mib * 1024**2
    monkeypatch.setattr(measure.memory, "cpu_last_level_cache_bytes", lambda: reported)
    assert measure.flush_bytes("cpu") == flush_mib * 1024**2


def test_the_measured_hierarchy_sets_the_flush(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(measure.memory, "_FLUSH_BYTES", {})
    monkeypatch.setattr(measure.memory, "cpu_last_level_cache_bytes", lambda: 480 * 1024**2)
    measure.set_flush_bytes("cpu", 64 * 1024**2)
    assert measure.flush_bytes("cpu") == 64 * 1024**2
    flush = measure.make_flusher("cpu")
    assert measure.make_flusher("cpu") is flush  # one buffer, made once
    flush()


class _Props:
    L2_cache_size = 50 * 1024**2
    total_memory = 141 * 10**9


def test_cuda_sizes_from_device_properties(monkeypatch: pytest.MonkeyPatch) -> None:
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda _i: _Props())
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda: (12 * 1024**3, 16 * 1024**3))
    assert measure.last_level_cache_bytes("cuda") == 50 * 1024**2
    monkeypatch.setattr(measure.memory, "_FLUSH_BYTES", {})
    assert measure.flush_bytes("cuda") == 200 * 1024**2  # 4x the L2, before any sweep
    assert measure.free_memory_bytes("cuda") == 12 * 1024**3


def test_calls_per_repetition() -> None:
    assert measure.calls_per_repetition(1e-5, 1e-3) == 100
    assert measure.calls_per_repetition(1.0, 1e-3) == 1
    assert measure.calls_per_repetition(1e-9, 1e-3, cap=50) == 50


# -- timers ----------------------------------------------------------------------------------
class FakeClock:
    """A GPU clock that advances only when the timed function runs."""

    def __init__(self) -> None:
        self.now_ms = 0.0
        self.log: list[str] = []


class FakeEvent:
    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.at: float | None = None

    def record(self) -> None:
        self.at = self.clock.now_ms
        self.clock.log.append("record")

    def elapsed_time(self, end: FakeEvent) -> float:
        assert self.at is not None
        assert end.at is not None
        assert "synchronize" in self.clock.log, "elapsed time read before synchronising"
        return end.at - self.at


class FakeBackend:
    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock

    def event(self) -> FakeEvent:
        return FakeEvent(self.clock)

    def synchronize(self) -> None:
        self.clock.log.append("synchronize")


def _kernel(clock: FakeClock, durations_ms: list[float]) -> object:
    def fn() -> None:
        clock.now_ms += durations_ms.pop(0)
        clock.log.append("fn")

    return fn


def test_time_cuda_warms_up_then_times_each_call_with_events() -> None:
    clock = FakeClock()
    fn = _kernel(clock, [100.0, 100.0, 2.0, 4.0, 3.0])
    times = measure.time_cuda(fn, repeats=3, warmup=2, backend=FakeBackend(clock))  # type: ignore[arg-type]
    assert times == (0.002, 0.004, 0.003)  # milliseconds to seconds; warm-up not counted
    assert clock.log[:3] == ["fn", "fn", "synchronize"]
    assert clock.log[3:] == ["record", "fn", "record"] * 3 + ["synchronize"]


def test_time_cuda_flushes_before_every_repetition_outside_the_events() -> None:
    clock = FakeClock()
    fn = _kernel(clock, [1.0, 5.0, 5.0])

    def flush() -> None:
        clock.now_ms += 1000.0  # a slow flush must not show in the timings
        clock.log.append("flush")

    times = measure.time_cuda(fn, repeats=2, warmup=1, flush=flush, backend=FakeBackend(clock))  # type: ignore[arg-type]
    assert times == (0.005, 0.005)
    assert clock.log == [
        "fn",
        "synchronize",
        "flush",
        "record",
        "fn",
        "record",
        "flush",
        "record",
        "fn",
        "record",
        "synchronize",
    ]


def test_time_function_dispatches_cuda_with_flusher(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = FakeClock()
    flushes: list[str] = []
    monkeypatch.setattr(measure.timing, "TorchCudaBackend", lambda: FakeBackend(clock))
    monkeypatch.setattr(
        measure.timing, "make_flusher", lambda device: lambda: flushes.append(device)
    )
    fn = _kernel(clock, [1.0] * 3 + [2.0] * 4)
    assert measure.time_function(fn, "cuda", repeats=4, flush=True) == (0.002,) * 4
    assert flushes == ["cuda"] * 4


@pytest.mark.parametrize(
    ("repeats", "warmup", "message"),
    [(0, 1, "repeats must be at least 1"), (1, -1, "warmup must be 0 or more")],
)
def test_timers_reject_bad_counts(repeats: int, warmup: int, message: str) -> None:
    with pytest.raises(GpuConceptsError, match=message):
        measure.time_cuda(
            lambda: None, repeats=repeats, warmup=warmup, backend=FakeBackend(FakeClock())
        )  # type: ignore[arg-type]


def test_time_cpu_uses_all_threads_and_flushes(monkeypatch: pytest.MonkeyPatch) -> None:
    torch = pytest.importorskip("torch")
    seen: list[int] = []
    real = torch.set_num_threads
    monkeypatch.setattr(torch, "set_num_threads", lambda n: (seen.append(n), real(n)))
    calls: list[str] = []
    before = torch.get_num_threads()
    times = measure.time_cpu(
        lambda: calls.append("fn"),
        repeats=3,
        warmup=1,
        num_threads=1,
        flush=lambda: calls.append("flush"),
    )
    assert len(times) == 3
    assert all(t > 0 for t in times)
    assert seen == [1, before]  # set for the timing, restored after it
    # with a flush, every repetition (and the warm-up) is one call right after one flush
    assert calls == ["flush", "fn"] * 4


def test_time_cpu_groups_fast_calls() -> None:
    pytest.importorskip("torch")
    calls: list[int] = []
    times = measure.time_cpu(lambda: calls.append(1), repeats=2, warmup=1, min_rep_seconds=1e-3)
    assert len(times) == 2
    assert len(calls) > 3  # a repetition of a microsecond call holds many calls
    assert (len(calls) - 1) % 2 == 0


def test_time_cpu_without_a_warm_up_times_one_call_a_repetition() -> None:
    # the caller ran it already (analyze's forward pass): no untimed call, no grouping
    pytest.importorskip("torch")
    calls: list[int] = []
    times = measure.time_cpu(lambda: calls.append(1), repeats=3, warmup=0, min_rep_seconds=1e-3)
    assert (len(times), len(calls)) == (3, 3)


def test_time_function_rejects_unresolved_device() -> None:
    with pytest.raises(GpuConceptsError, match="'auto' is not a resolved device"):
        measure.time_function(lambda: None, "auto", repeats=1)


@pytest.mark.skipif(
    not measure.devices._cuda_available(),
    reason="needs a CUDA device (the logic is tested with fakes)",
)
def test_cuda_timer_with_real_events_and_flush() -> None:
    import torch

    a = torch.ones((1024, 1024), device="cuda")
    times = measure.time_function(lambda: a.add_(1), "cuda", repeats=5, flush=True)
    assert len(times) == 5
    assert all(0 < t < 1 for t in times)
    flush = measure.make_flusher("cuda")
    flush()
    assert measure.last_level_cache_bytes("cuda") > 0


# -- paired rounds and the noise probe -----------------------------------------------------------
class _Call:
    """A kernel stand-in for Rounds: records its name in a shared log each time it runs."""

    flush = False

    def __init__(self, name: str, log: list[str]) -> None:
        self.fn = lambda: log.append(name)

    def settings(self) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()


def test_rounds_run_every_kernel_once_per_round_in_a_shuffled_order() -> None:
    from gpuconcepts.measure import Rounds

    log: list[str] = []
    rounds = Rounds([_Call(n, log) for n in "abc"], "cpu", min_rep_seconds=0)
    log.clear()  # the warm-up ran each once
    rounds.more(12)
    assert [len(t) for t in rounds.times] == [12, 12, 12]
    orders = ["".join(log[3 * i : 3 * i + 3]) for i in range(12)]
    assert all(sorted(order) == ["a", "b", "c"] for order in orders)  # each once per round
    assert len(set(orders)) > 1  # and not always in the same order
    again = Rounds([_Call(n, []) for n in "abc"], "cpu", min_rep_seconds=0)
    with pytest.raises(GpuConceptsError, match="give at least one kernel"):
        Rounds([], "cpu")
    assert again.count == 0


def test_the_noise_probe_says_whether_the_machine_was_busy() -> None:
    from gpuconcepts.measure import NoiseProbe, probe_noise
    from gpuconcepts.run import Provenance

    probe = probe_noise("cpu")
    assert probe.cores >= 1
    assert probe.reference_seconds > 0
    assert probe.reference_spread >= 0
    quiet = NoiseProbe(0.1, 2, 2600.0, 1e-4, 0.03)
    busy = dataclasses.replace(quiet, load_average=1.9, reference_spread=0.35)
    provenance = dataclasses.replace(Provenance.example(), noise_before=quiet, noise_after=busy)
    assert provenance.noise == (
        "This run's machine was busy. Before the run: load average 0.1 on 2 cores, 2,600 MHz, "
        "a reference kernel's spread 3%; after it: load average 1.9 on 2 cores, 2,600 MHz, a "
        "reference kernel's spread 35%."
    )
    calm = dataclasses.replace(provenance, noise_after=quiet)
    assert calm.noise.startswith("This run's machine was quiet")
    assert from_record(Provenance, provenance.to_dict()) == provenance


def test_a_core_another_program_keeps_busy_is_left_to_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gpuconcepts.measure import devices as m

    stat = tmp_path / "stat"
    samples = iter(
        [
            "cpu  0 0 0 0 0\ncpu0 100 0 0 900 0\ncpu1 100 0 0 900 0\n",
            "cpu  0 0 0 0 0\ncpu0 190 0 0 910 0\ncpu1 110 0 0 990 0\n",  # cpu0 90% busy
        ]
    )
    monkeypatch.setattr(m.Path, "read_text", lambda _self: next(samples))
    monkeypatch.setattr(m.os, "sched_getaffinity", lambda _pid: {0, 1})
    assert m.busy_cores(0.0, stat) == frozenset({0})
    # the cores given to the run: the free one only, then everything as it was
    import torch

    monkeypatch.setattr(m, "busy_cores", lambda _seconds=0.5: frozenset({0}))
    pinned: list[set[int]] = []
    monkeypatch.setattr(m.os, "sched_setaffinity", lambda _pid, cores: pinned.append(set(cores)))
    threads = torch.get_num_threads()
    with m.free_cores("cpu") as busy:
        assert busy == frozenset({0})
        assert torch.get_num_threads() == 1
    assert pinned == [{1}, {0, 1}]
    assert torch.get_num_threads() == threads
    with m.free_cores("cuda") as busy:  # a GPU's kernels share no CPU core
        assert busy == frozenset()


def test_the_distributed_part_runs_on_busy_cores_and_counts_bytes_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Bytes need no core per process: the part runs on one free core, and its report says the
    times cannot be read (the timed claims are not visible, the byte claims are judged)."""
    import dataclasses

    from synthetic import synthetic_distributed

    from gpuconcepts.claims.distributed import judge_distributed
    from gpuconcepts.collect import _measure_distributed
    from gpuconcepts.distributed import report as d
    from gpuconcepts.sizing import RunSizes

    calls: list[tuple[int, object, dict[str, object]]] = []

    def measure(world: int, sizes: object, **options: object) -> object:
        calls.append((world, sizes, options))
        return dataclasses.replace(synthetic_distributed(), cores=1)  # one core was free

    monkeypatch.setattr(d, "measure", measure)
    lines: list[str] = []
    sizes = RunSizes.resolve("cpu", quick=True, free_bytes=2**36)
    report, reason = _measure_distributed(sizes, lines.append)
    assert calls == [(2, sizes, {"backend": "gloo", "growth_world": 4})]
    assert reason == ""
    assert report is not None
    assert report.crowded == (
        "the 2 processes shared 1 free core, so their times measure the scheduler, not the "
        "exchange (the bytes are still counted)"
    )
    verdicts = {c.key: c.verdict for c in judge_distributed(report)}
    for key in ("alpha-beta-predicts", "pipeline-bubble", "pipeline-bubble-shrinks"):
        assert verdicts[key] == "not visible", key
    assert verdicts["allreduce-grows-with-w"] == "holds"
    assert verdicts["traffic-all-reduce"] == "holds"
