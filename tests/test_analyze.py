"""`gpuconcepts.analyze`: per-layer counts equal the formulas, totals equal FlopCounterMode,
the model is left as it was, and every bad input of `gpuconcepts analyze` is one line."""

from __future__ import annotations

import csv
import io
import json
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from gpuconcepts import formulas as f
from gpuconcepts.analysis.trace import leaf_paths
from gpuconcepts.analyze import Report, analyze, observed_bound
from gpuconcepts.cli import main
from gpuconcepts.render.plots.analysis import layers_figure
from gpuconcepts.render.text.analysis import markdown
from gpuconcepts.render.text.runs import time_spread
from gpuconcepts.roofline import Peaks
from gpuconcepts.units import si

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional
from torch.utils.flop_counter import FlopCounterMode

# Fixed peaks: the tests check counts and bookkeeping, not this machine's speed.
PEAKS = Peaks("cpu", 1e11, 1e10, "float32")


def run(model, *inputs, **options) -> Report:
    return analyze(model, *inputs, device="cpu", peaks=PEAKS, repeats=1, **options)


def counted(model, *inputs) -> int:
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        model(*inputs)
    return int(counter.get_total_flops())


class Attention(nn.Module):
    """Self-attention written with the functional SDPA, as many models do."""

    def __init__(self, d: int = 32, heads: int = 4, causal: bool = False) -> None:
        super().__init__()
        self.heads, self.causal = heads, causal
        self.qkv = nn.Linear(d, 3 * d, bias=False)

    def forward(self, x):
        B, S, d = x.shape
        q, k, v = (
            t.view(B, S, self.heads, d // self.heads).transpose(1, 2)
            for t in self.qkv(x).chunk(3, dim=-1)
        )
        out = F.scaled_dot_product_attention(q, k, v, is_causal=self.causal)
        return out.transpose(1, 2).reshape(B, S, d)


# -- per-layer counts equal the catalogue's formulas ------------------------------------------
def test_linear_and_convolutions_count_flops_and_bytes_by_their_formulas():
    model = nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1, bias=False),
        nn.Conv2d(16, 16, 3, padding=1, groups=16, bias=False),
        nn.Conv2d(16, 32, 3, padding=1, groups=4, bias=False),
        nn.Flatten(),
        nn.Linear(32 * 6 * 6, 10, bias=False),
    )
    report = run(model, torch.randn(2, 3, 6, 6))
    dense, depthwise, grouped, linear = report.layers
    assert report.views == ("3 (Flatten)",)  # a view of its input: no row, no bytes
    size = {"B": 2, "H_out": 6, "W_out": 6, "K": 3}
    assert (dense.flops, dense.flops_source) == (
        f.conv_flops(**size, C_in=3, C_out=16),
        "conv_flops",
    )
    assert dense.bytes == f.conv_bytes(**size, C_in=3, C_out=16, s=4)
    assert depthwise.flops == f.depthwise_conv_flops(**size, C=16)
    assert depthwise.flops_source == "depthwise_conv_flops"
    assert depthwise.bytes == f.depthwise_conv_bytes(**size, C=16, s=4)
    # four groups: each output channel reads 16 / 4 input channels
    assert grouped.flops == f.conv_flops(**size, C_in=4, C_out=32)
    assert linear.flops == f.mlp_flops(B=2, d_in=32 * 36, d_out=10)
    assert linear.bytes == f.mlp_bytes(B=2, d_in=32 * 36, d_out=10, s=4)
    assert linear.intensity == pytest.approx(f.mlp_intensity(B=2, d_in=32 * 36, d_out=10, s=4))
    assert report.total_flops == report.counter_total == counted(model, torch.randn(2, 3, 6, 6))


def test_linear_on_a_sequence_counts_every_token_as_a_row():
    report = run(nn.Linear(16, 8, bias=False), torch.randn(4, 5, 16))
    assert report.layers[0].flops == f.mlp_flops(B=20, d_in=16, d_out=8)
    assert report.layers[0].input_shapes == ((4, 5, 16),)
    assert report.layers[0].output_shapes == ((4, 5, 8),)


def test_embedding_bag_reads_only_the_rows_it_looks_up():
    bag = nn.EmbeddingBag(100_000, 16, mode="sum")
    indices = torch.randint(0, 100_000, (8, 5))
    (row,) = run(bag, indices).layers
    assert row.flops == f.embedding_bag_flops(B=8, L=5, d=16)
    assert row.bytes == f.embedding_bag_bytes(B=8, L=5, d=16, s=4)
    assert row.bytes < 100_000 * 16 * 4  # not the whole table
    # FlopCounterMode has no rule for embedding_bag: the row says so
    assert row.counter_flops == 0
    assert "FlopCounterMode counts 0" in row.note
    assert "embedding_bag_flops" in row.note


def test_embedding_bag_with_equal_offsets_is_the_same_lookup():
    bag = nn.EmbeddingBag(50, 8, mode="mean")
    (row,) = run(bag, torch.randint(0, 50, (12,)), torch.tensor([0, 3, 6, 9])).layers
    assert row.flops == f.embedding_bag_flops(B=4, L=3, d=8)
    assert row.bytes == f.embedding_bag_bytes(B=4, L=3, d=8, s=4)


def test_embedding_is_a_gather_without_arithmetic():
    (row,) = run(nn.Embedding(1000, 16), torch.randint(0, 1000, (4, 7))).layers
    assert row.flops == 0
    assert row.bytes == f.embedding_bag_bytes(B=28, L=1, d=16, s=4)  # a row read, a row written
    assert row.bound in ("memory", "overhead")


def test_rnn_counts_every_layer_and_direction():
    rnn = nn.RNN(16, 24, num_layers=2, bidirectional=True, batch_first=True)
    (row,) = run(rnn, torch.randn(3, 7, 16)).layers
    first = f.rnn_flops(B=3, S=7, d_in=16, d_h=24)
    second = f.rnn_flops(B=3, S=7, d_in=48, d_h=24)
    assert row.flops == 2 * (first + second)
    assert row.flops_source == "rnn_flops"


def test_multihead_attention_is_counted_whole():
    mha = nn.MultiheadAttention(32, 4, batch_first=True)
    x = torch.randn(2, 10, 32)
    rows = run(mha, x, x, x).layers
    assert len(rows) == 1  # its out_proj is inside it, not a row of its own
    expected = 4 * f.mlp_flops(B=20, d_in=32, d_out=32) + f.attention_flops(B=2, S=10, d=32)
    assert rows[0].flops == expected
    assert rows[0].input_shapes == ((2, 10, 32),) * 3
    assert leaf_paths(mha) == {""}  # the model itself is the one leaf


def test_leaves_are_modules_without_children_or_known_whole_types():
    model = nn.Sequential(nn.Linear(4, 4), nn.Sequential(nn.MultiheadAttention(4, 2), nn.ReLU()))
    assert leaf_paths(model) == {"0", "1.0", "1.1"}


@pytest.mark.parametrize("causal", [False, True])
def test_functional_attention_uses_the_attention_formulas(causal):
    model = Attention(causal=causal)
    x = torch.randn(2, 16, 32)
    report = run(model, x)
    assert [layer.type for layer in report.layers] == ["Linear", "F.scaled_dot_product_attention"]
    attention = report.layers[1]
    assert attention.path == "Attention"  # the module whose forward made the call
    formula = f.attention_flops_causal if causal else f.attention_flops
    assert attention.flops == formula(B=2, S=16, d=32)
    assert attention.bytes == f.attention_bytes(B=2, S=16, d=32, s=4)
    # the views and transposes around it move nothing and are not rows


# -- totals against FlopCounterMode -------------------------------------------------------------
def test_totals_equal_flop_counter_mode_and_each_difference_is_a_row():
    class Mixed(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bag = nn.EmbeddingBag(64, 32)
            self.attention = Attention()
            self.head = nn.Linear(32, 4)

        def forward(self, indices, x):
            return self.head(self.attention(x + self.bag(indices)[:, None, :]))

    model = Mixed()
    inputs = (torch.randint(0, 64, (2, 3)), torch.randn(2, 8, 32))
    report = run(model, *inputs)
    assert report.counter_total == counted(model, *inputs)
    assert sum(layer.counter_flops for layer in report.layers) == report.counter_total
    explained = {layer.type for layer in report.explained}
    assert explained == {"EmbeddingBag", "F.scaled_dot_product_attention"}
    difference = sum(layer.flops - layer.counter_flops for layer in report.explained)
    assert report.total_flops - report.counter_total == difference > 0
    assert "the difference of" in "\n".join(report.summary())


# -- the model is left as it was --------------------------------------------------------------
def _hooks(model) -> int:
    return sum(
        len(m._forward_hooks) + len(m._forward_pre_hooks) + len(m._forward_hooks_with_kwargs)
        for m in model.modules()
    )


def test_hooks_are_removed_and_the_model_is_unchanged():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU(inplace=True))
    model.train()
    x = torch.randn(2, 3, 8, 8)
    state = {k: v.clone() for k, v in model.state_dict().items()}
    model.eval()
    before = model(x).detach()
    model.train()
    run(model, x)
    assert _hooks(model) == 0
    assert model.training
    assert all(m.training for m in model.modules())
    assert state.keys() == model.state_dict().keys()
    for key, value in model.state_dict().items():
        assert torch.equal(value, state[key]), key  # BatchNorm's running stats untouched
    model.eval()
    assert torch.equal(model(x), before)


def test_another_dtype_works_on_a_copy():
    model = nn.Linear(8, 4)
    report = run(model, torch.randn(2, 8), dtype="bf16")  # an alias names the same dtype
    assert report.layers[0].dtype == report.dtype == "bfloat16"
    assert model.weight.dtype == torch.float32
    assert report.layers[0].bytes < f.mlp_bytes(B=2, d_in=8, d_out=4, s=4)


# -- shared modules, containers, functional calls ---------------------------------------------
def test_a_reused_module_is_one_row_per_call():
    class Tied(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layer = nn.Linear(8, 8, bias=False)
            self.blocks = nn.Sequential(nn.Sequential(nn.Linear(8, 8, bias=False), nn.Tanh()))

        def forward(self, x):
            return self.layer(self.blocks(self.layer(x)))

    report = run(Tied(), torch.randn(3, 8))
    names = [layer.name for layer in report.layers]
    assert names == ["layer", "blocks.0.0", "blocks.0.1", "layer (call 2)"]
    assert report.layers[0].flops == report.layers[3].flops == f.mlp_flops(B=3, d_in=8, d_out=8)


def test_functional_calls_in_forward_are_rows_of_their_module():
    class Residual(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(16, 16, bias=False)

        def forward(self, x):
            y = F.relu(self.fc(x))
            y = y.view(4, 16).transpose(0, 1)  # views: nothing moves, no row
            return torch.matmul(y, x) + 1

    report = run(Residual(), torch.randn(4, 16))
    assert [(layer.path, layer.type) for layer in report.layers] == [
        ("fc", "Linear"),
        ("Residual", "F.relu"),
        ("Residual", "torch.matmul"),
        ("Residual", "Tensor.add"),
    ]
    matmul = report.layers[2]
    assert matmul.flops == matmul.counter_flops == 2 * 16 * 4 * 16
    assert matmul.flops_source == "FlopCounterMode"
    assert matmul.bytes == 4 * (16 * 4 + 4 * 16 + 16 * 16)


def test_an_in_place_update_is_traffic_without_a_new_tensor():
    class Accumulate(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.scale = nn.Linear(16, 16, bias=False)  # a child: forward is not a leaf

        def forward(self, x, y):
            x += y  # reads x and y, writes x
            return self.scale(x)

    linear, update = run(Accumulate(), torch.randn(8, 16), torch.randn(8, 16)).layers[::-1]
    assert (update.path, update.type) == ("Accumulate", "Tensor.add_")
    assert update.bytes == 3 * 8 * 16 * 4
    assert linear.type == "Linear"


# -- the report --------------------------------------------------------------------------------
def test_report_json_and_shares():
    model = nn.Sequential(nn.Linear(64, 64, bias=False), nn.ReLU())
    report = run(model, torch.randn(8, 64))
    data = json.loads(report.to_json())
    assert data["total_flops"] == data["counter_total"] == f.mlp_flops(B=8, d_in=64, d_out=64)
    assert [row["type"] for row in data["layers"]] == ["Linear", "ReLU"]
    # 33 kFLOP and 18 KiB: far under a launch on any GPU, so the launch floor is its bound
    assert data["layers"][0]["predicted"]["H100 SXM"] == "overhead"
    h100 = next(g for g in data["gpus"] if g["gpu"] == "H100 SXM")
    assert h100["seconds"] == 2 * h100["launch_seconds"]  # two calls, each at the floor
    assert h100["overhead_share"] == 1.0
    assert sum(report.time_share().values()) == pytest.approx(1.0)
    assert {g["gpu"] for g in data["gpus"]} >= {"H100 SXM", "A100 80GB SXM"}
    assert report.share_sentence().startswith("Of the measured time, ")


def test_book_table_shows_the_spread_beside_every_time():
    report = run(nn.Sequential(nn.Linear(8, 8, bias=False), nn.ReLU()), torch.randn(2, 8))
    lines = markdown(report).splitlines()
    assert lines[0].startswith("| # | Call | Shapes | FLOPs |")
    assert len(lines) == 2 + len(report.layers)
    # each call's time as every kernel's is given (time_spread), its spread on a smaller line
    for layer, line in zip(report.layers, lines[2:], strict=True):
        median, spread = time_spread(layer.timing).split(" ± ")
        cell = f"{median}<br><small>± {spread}</small>".replace(" ", "\u00a0")
        assert f"| {cell} |" in line
    assert "mlp_flops" in lines[2]


def test_memory_bound_calls_are_timed_after_a_flush():
    report = run(nn.Sequential(nn.Linear(4, 4, bias=False), nn.ReLU()), torch.randn(1, 4))
    # intensities far below the ridge point of 10 FLOP/byte: both flushed, as the kernels are
    assert [layer.flushed for layer in report.layers] == [True, True]


def test_cuda_calls_use_the_cuda_timer_with_the_same_flush_rule(monkeypatch):
    """No GPU here: the CUDA path is checked with the timer replaced by a recorder."""
    from gpuconcepts.analysis.timing import Replay, time_calls

    seen = []

    def fake_time_cuda(fn, *, repeats, flush):
        fn()
        seen.append((repeats, flush))
        return (1e-3,) * repeats

    monkeypatch.setattr("gpuconcepts.measure.time_cuda", fake_time_cuda)
    monkeypatch.setattr("gpuconcepts.measure.make_flusher", lambda device: "flusher-" + device)
    replays = [Replay("a", lambda: None, True), Replay("b", lambda: None, False)]
    times, stop = time_calls(replays, "cuda", 3)
    assert (times, stop) == ([(1e-3,) * 2, (1e-3,) * 2], None)  # two agree: enough
    assert seen == [(2, "flusher-cuda"), (2, None)]  # on a GPU each cold call has its flush


class FakeClock:
    """perf_counter for the timing module: a call advances it by its scripted seconds, so the
    repetitions are known exactly and no test reads this machine's speed."""

    def __init__(self) -> None:
        self.now = 0.0
        self.log: list[str] = []

    def perf_counter(self) -> float:
        return self.now

    def call(self, name: str, seconds: list[float]):
        def fn():
            self.log.append(name)
            self.now += seconds[(len([n for n in self.log if n == name]) - 1) % len(seconds)]

        return fn


def test_cold_calls_on_a_cpu_share_one_flush_per_group_and_stop_when_settled(monkeypatch):
    from gpuconcepts.analysis import timing

    clock = FakeClock()
    monkeypatch.setattr(timing, "time", clock)
    monkeypatch.setattr(
        "gpuconcepts.measure.make_flusher", lambda _device: lambda: clock.log.append("flush")
    )
    steady = clock.call("steady", [1e-3])
    noisy = clock.call("noisy", [1e-3, 3e-3, 1e-3, 5e-3, 2e-3, 9e-3])
    shares = clock.call("shares", [1e-3])  # reads the steady call's storage: after a flush
    replays = [
        timing.Replay("steady", steady, True, frozenset({1})),
        timing.Replay("noisy", noisy, True, frozenset({2})),
        timing.Replay("shares", shares, True, frozenset({1, 3})),
    ]
    times, stop = timing.time_calls(replays, "cpu", 5)
    assert stop is None
    # an untimed warm-up round, then timed rounds: the settled calls stop after two
    assert [len(t) for t in times] == [2, 5, 2]
    assert times[0] == pytest.approx((1e-3,) * 2)
    warm_up, *rounds = " ".join(clock.log).split("flush ")
    assert warm_up == "steady noisy shares "  # no flush: nothing in it is timed
    assert rounds[:2] == ["steady noisy ", "shares "]  # two groups: storage 1 is in both
    assert clock.log.count("flush") == 2 * 2 + 3  # 2 rounds of both groups, 3 of noisy alone
    # the noisy call went on until `repeats`, its times as they came (warm-up dropped)
    assert times[1] == pytest.approx((3e-3, 1e-3, 5e-3, 2e-3, 9e-3))


def test_the_flush_buffer_is_made_once_per_process():
    from gpuconcepts.analysis import timing

    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU())  # both memory-bound: both run cold
    for _ in range(2):
        assert [layer.flushed for layer in run(model, torch.randn(2, 4)).layers] == [True, True]
    assert timing.flusher_for("cpu") is timing.flusher_for("cpu")


def test_a_wide_spread_gets_more_repetitions_and_a_tight_one_does_not(monkeypatch):
    from gpuconcepts.analysis import timing

    calls = []

    def fake_time_cpu(fn, *, repeats, flush):
        calls.append((fn, repeats, flush))
        return {"tight": (1.0, 1.01), "wide": (1.0, 2.0)}[fn()][:repeats] + (
            (1.0,) * max(0, repeats - 2)
        )

    monkeypatch.setattr("gpuconcepts.measure.time_cpu", fake_time_cpu)
    replays = [
        timing.Replay("t", lambda: "tight", False),
        timing.Replay("w", lambda: "wide", False),
    ]
    times, _ = timing.time_calls(replays, "cpu", 7)
    assert [len(t) for t in times] == [2, 7]
    assert [(repeats, flush) for _, repeats, flush in calls] == [(2, None), (2, None), (5, None)]


def test_observed_bound_is_the_roof_that_explains_the_time():
    from gpuconcepts.measure import Measurement
    from gpuconcepts.roofline import MemoryLevel, Peaks

    peaks = Peaks("cpu", 1e11, 1e10, "float32", levels=(MemoryLevel("L2", 2**20, 1e11),),
                  latency_seconds=1e-5)  # fmt: skip

    def call(seconds: float, flops: float, nbytes: float) -> str:
        return observed_bound(Measurement("x", "cpu", {}, (seconds,), flops, nbytes), peaks)

    assert call(1.0, 80e9, 1e9) == "compute"
    assert call(1.0, 1e9, 9e9) == "memory"  # DRAM
    assert call(2e-5, 10.0, 8.0) == "overhead"  # only the latency floor explains it
    # faster than every roof: 1 TB in a second beat DRAM's 10 GB/s, and it is that roof's kind
    # (an anomaly), never "overhead"
    assert call(1.0, 1e9, 1e12) == "memory"


def test_a_compute_kernel_at_5x_its_roof_is_labelled_compute():
    from gpuconcepts.measure import Measurement
    from gpuconcepts.roofline import verdict

    peaks = Peaks("cpu", 1e11, 1e10, "float32", latency_seconds=1e-5)
    # 1e11 FLOPs and 1e8 bytes in 0.2 s: 5x the 100 GFLOP/s roof that binds it
    fast = Measurement("x", "cpu", {}, (0.2, 0.2, 0.2), 1e11, 1e8)
    found = verdict(fast, peaks)
    assert (found.kind, found.beaten, found.attained) == ("compute", True, 5.0)
    assert observed_bound(fast, peaks) == "compute"
    # at its roof, and at 5 % of it above the ridge: compute too (a low share is a finding)
    for seconds in (1.0, 20.0):
        assert observed_bound(replace(fast, raw_seconds=(seconds,) * 3), peaks) == "compute"
    # a call above every roof shows as an anomaly in the report's words, labelled compute
    model = nn.Sequential(nn.Linear(64, 64, bias=False))
    tiny = replace(PEAKS, flops_per_s=1.0)  # 1 FLOP/s: any product beats it
    report = analyze(model, torch.randn(64, 64), device="cpu", peaks=tiny, repeats=3)
    (layer,) = report.layers
    assert (layer.bound, layer.above_roof) == ("compute", True)
    assert layer.to_dict()["above_roof"] is True
    assert any(
        line.startswith("Anomaly: 1 0 ran above its compute roof") for line in report.summary()
    ), report.summary()
    assert layer.to_dict()["faster_path"] is False  # a billion times P: no path is that fast


def test_a_call_above_the_peak_within_the_hardware_s_limit_is_a_finding():
    # P is the library's square GEMM; a call on a faster path may beat it without beating
    # the hardware: the report says so as a finding, never an anomaly
    model = nn.Sequential(nn.Linear(64, 64, bias=False))
    slow_peak = replace(PEAKS, flops_per_s=1.0, physical_flops_per_s=1e15)
    report = analyze(model, torch.randn(64, 64), device="cpu", peaks=slow_peak, repeats=3)
    (layer,) = report.layers
    assert (layer.bound, layer.above_roof, layer.faster_path) == ("compute", True, True)
    summary = report.summary()
    assert any(line.startswith("Finding: 1 0 ran above the compute peak P") for line in summary)
    assert not any(line.startswith("Anomaly:") for line in summary), summary


def test_figure_has_one_point_per_layer_with_flops():
    model = nn.Sequential(nn.Linear(32, 32, bias=False), nn.ReLU(), nn.Linear(32, 8, bias=False))
    fig = layers_figure(run(model, torch.randn(4, 32)))
    labels = sorted(t.get_text() for t in fig.axes[0].texts)
    assert labels == ["1", "3"]  # the ReLU has no FLOPs and no place on a log axis


def test_a_rejected_shape_names_the_layer_and_shapes():
    model = nn.Sequential(nn.Linear(8, 4), nn.Linear(5, 2))
    with pytest.raises(ValueError, match=r"layer '1' \(Linear\), given inputs of shape 3×4"):
        run(model, torch.randn(3, 8))


def test_bad_arguments():
    with pytest.raises(ValueError, match="at least one example input"):
        run(nn.Linear(2, 2))
    with pytest.raises(ValueError, match=r"must be a torch\.nn\.Module"):
        run(lambda x: x, torch.randn(2))

    class PassThrough(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.unused = nn.Linear(2, 2)

        def forward(self, x):
            return x

    with pytest.raises(ValueError, match="ran no layer and no tensor operation"):
        run(PassThrough(), torch.randn(2))


# -- the command line --------------------------------------------------------------------------
MODEL_FILE = textwrap.dedent(
    """
    import torch
    import torch.nn as nn

    def build():
        return nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1, bias=False),
            nn.ReLU(),
            nn.Flatten(),
            nn.Linear(8 * 4 * 4, 10, bias=False),
        )

    def broken():
        raise KeyError("no weights")

    def number():
        return 3

    class Greedy(nn.Module):
        def forward(self, x):
            return torch.empty(2**50, dtype=torch.uint8) if x.numel() else x

    def greedy():
        return Greedy()

    class Once(nn.Module):  # runs in the counting pass, and fails when replayed alone
        calls = 0

        def forward(self, x):
            self.calls += 1
            if self.calls > 1:
                raise RuntimeError("ran once already\\nmore detail")
            return x * 2

    def once():
        return nn.Sequential(nn.Linear(3, 3), Once())

    class NotInInference(nn.Module):  # its layers replay; the plain pass (inference mode) fails
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)

        def forward(self, x):
            if torch.is_inference_mode_enabled():
                raise RuntimeError("needs autograd")
            return self.fc(x)

    def not_in_inference():
        return NotInInference()

    def meta():
        return nn.Linear(3, 3, device="meta")

    def scripted():
        return torch.jit.trace(nn.Linear(3, 3), torch.randn(1, 3))

    TABLE = 7
    """
)


@pytest.fixture
def model_file(tmp_path, monkeypatch):
    path = tmp_path / "model.py"
    path.write_text(MODEL_FILE)
    # the command measures this machine's peaks; the tests check counts, so skip the wait
    monkeypatch.setattr("gpuconcepts.kernels.measure_peaks", lambda *_, **__: PEAKS)
    return path


def test_cli_prints_a_table_whose_flops_are_the_formulas(model_file, capsys):
    argv = ["analyze", f"{model_file}:build", "--input", "2x3x4x4", "--repeats", "1"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    lines = {line.split()[1]: line for line in out.splitlines() if line[:1].isdigit()}
    conv = f.conv_flops(B=2, H_out=4, W_out=4, K=3, C_in=3, C_out=8)
    linear = f.mlp_flops(B=2, d_in=128, d_out=10)
    # FLOPs in short form, * where a catalogue formula counted them (exact ones: --json, --csv)
    assert f"Conv2d  {si(conv, '')}*" in lines["0"]
    assert f"Linear  {si(linear, '')}*" in lines["3"]
    assert "*" not in lines["1"]  # the ReLU: FlopCounterMode's 0
    assert "the same total" in out
    assert max(len(line) for line in out.splitlines()) <= 100


def test_cli_csv_has_every_detail(model_file, capsys):
    argv = ["analyze", f"{model_file}:build", "--input", "2x3x4x4", "--repeats", "1", "--csv"]
    assert main(argv) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [row["path"] for row in rows] == ["0", "1", "3"]
    assert int(rows[0]["flops"]) == f.conv_flops(B=2, H_out=4, W_out=4, K=3, C_in=3, C_out=8)
    assert rows[0]["flops_source"] == "conv_flops"
    assert rows[0]["input_shapes"] == "2x3x4x4"
    assert rows[2]["H100 SXM"] in ("memory", "compute", "overhead")


def test_cli_json_is_the_report(model_file, capsys):
    argv = ["analyze", f"{model_file}:build", "--input", "2x3x4x4", "--json", "--repeats", "1"]
    assert main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["total_flops"] == data["counter_total"]
    assert [row["path"] for row in data["layers"]] == ["0", "1", "3"]
    assert data["views"] == ["2 (Flatten)"]


@pytest.mark.parametrize(
    ("target", "shape", "message"),
    [
        ("missing.py:build", "2x3x4x4", "no such file"),
        (
            "{file}:nothing",
            "2x3x4x4",
            (
                "defines no 'nothing'; its callables are Greedy, NotInInference, Once, broken, "
                "build, greedy, meta, not_in_inference, number, once, scripted"
            ),
        ),
        ("{file}:TABLE", "2x3x4x4", "TABLE is a int, not a function"),
        ("{file}:broken", "2x3x4x4", "factory broken() raised KeyError: 'no weights'"),
        ("{file}:number", "2x3x4x4", "factory number() returned int 3, not a torch.nn.Module"),
        ("{file}", "2x3x4x4", "expected FILE.py:FACTORY"),
        ("{file}:build", "2x3xfour", "a shape is positive integers joined by x"),
        ("{file}:build", "2x0x4", "a shape is positive integers joined by x"),
        ("{file}:build", "2x3:float8", "element type 'float8' is not one of"),
        ("{file}:build", "2x5x4x4", "layer '0' (Conv2d), given inputs of shape 2×5×4×4"),
        ("{file}:build", "100000x100000x100000", "out of memory for the inputs: they need"),
        ("{file}:greedy", "2x3", "out of memory in layer 'Greedy' (Greedy)"),
        (
            "{file}:once",
            "2x3",
            (
                "Sequential: Once '1', replayed alone on inputs of shape 2×3, failed with "
                "RuntimeError: ran once already"
            ),
        ),
        (
            "{file}:not_in_inference",
            "2x3",
            (
                "NotInInference: the plain forward pass (in inference mode) failed with "
                "RuntimeError: needs autograd"
            ),
        ),
        ("{file}:meta", "2x3", "Linear has its weights on the meta device, with no data to run"),
        pytest.param(
            "{file}:scripted",
            "2x3",
            "TopLevelTracedModule is a TorchScript module, whose layers hooks cannot see",
            marks=pytest.mark.filterwarnings("ignore::DeprecationWarning"),
        ),
    ],
)
def test_cli_errors_are_one_line_with_status_2(model_file, capsys, target, shape, message):
    argv = ["analyze", target.format(file=model_file), "--input", shape, "--repeats", "1"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith("gpuconcepts analyze: error: ")
    assert message in err
    if "out of memory in" in message:
        assert "it needed 1 PiB but" in err
        assert "was free on cpu" in err


def test_the_package_exports_analyze_lazily():
    import subprocess
    import sys

    code = (
        "import sys, gpuconcepts;"
        "before = 'torch' in sys.modules;"
        "from gpuconcepts import analyze;"
        "print(before, callable(analyze), callable(gpuconcepts.analyze), 'torch' in sys.modules)"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    # torch loads on the first call, not even when analyze is imported
    assert run.stdout.split() == ["False", "True", "True", "False"]


# -- the API refuses what it cannot run ---------------------------------------------------------
@pytest.mark.parametrize(
    ("build", "options", "message"),
    [
        (
            lambda: nn.Linear(4, 4, device="meta"),
            {},
            "analyze: Linear has its weights on the meta device, with no data to run",
        ),
        pytest.param(
            lambda: torch.jit.script(nn.Linear(4, 4)),
            {},
            "analyze: RecursiveScriptModule is a TorchScript module, whose layers hooks cannot see",
            marks=pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated"),
        ),
        (lambda: nn.Linear(4, 4), {"device": None}, "device must be 'auto', 'cpu' or 'cuda'"),
        (
            lambda: nn.Linear(4, 4),
            {"peaks": {"flops_per_s": 1e11}},
            "peaks must be a gpuconcepts.roofline.Peaks (a saved run's run.peaks); got dict",
        ),
        (lambda: nn.Linear(4, 4), {"dtype": 32}, "dtype must be a name such as 'float32'"),
        (lambda: nn.Linear(4, 4), {"dtype": "half"}, "unknown dtype 'half'; one of float32"),
        (lambda: nn.Linear(4, 4), {"dtype": "tf32"}, "dtype 'tf32' is float32 storage"),
    ],
)
def test_inputs_analyze_cannot_use_are_one_project_error(build, options, message):
    from gpuconcepts.errors import GpuConceptsError

    settings = {"device": "cpu", "peaks": PEAKS, "repeats": 1, **options}
    with pytest.raises(GpuConceptsError) as caught:
        analyze(build(), torch.randn(2, 4), **settings)
    assert message in str(caught.value)
    with pytest.raises(GpuConceptsError, match="input 1 is a meta tensor"):
        run(nn.Linear(4, 4), torch.randn(2, 4, device="meta"))


# -- timing: shared, interrupted, labelled -------------------------------------------------------
def test_the_plain_forward_pass_is_timed_without_a_warm_up_until_it_settles(monkeypatch):
    from gpuconcepts.analysis.timing import time_forward

    script = iter([(1.0, 1.5), (1.1,), (1.05,), (1.08,), (1.0,)])
    asked = []

    def fake_time_function(fn, device, *, repeats, warmup):
        fn()
        asked.append((device, repeats, warmup))
        return next(script)

    monkeypatch.setattr("gpuconcepts.measure.time_function", fake_time_function)
    # 1.0 and 1.5 disagree; with 1.1, 1.05 and 1.08 the IQR is within 10 % of the median
    assert time_forward(lambda: None, "cpu", 7) == (1.0, 1.5, 1.1, 1.05, 1.08)
    assert asked == [("cpu", 2, 0)] + [("cpu", 1, 0)] * 3


def test_identical_calls_are_timed_once_and_share_the_timing(monkeypatch):
    from gpuconcepts.analysis import core

    timed = []
    real = core.time_calls

    def counting(replays, *args, **options):
        timed.extend(replay.name for replay in replays)
        return real(replays, *args, **options)

    monkeypatch.setattr(core, "time_calls", counting)
    model = nn.Sequential(*[nn.Sequential(nn.Linear(16, 16), nn.ReLU()) for _ in range(3)])
    report = run(model, torch.randn(4, 16))
    assert len(report.layers) == 6
    assert timed == ["0.0", "0.1"]  # one Linear and one ReLU: the other four share them
    shared = [layer.shares_timing_of for layer in report.layers]
    assert shared == [None, None, 1, 2, 1, 2]
    assert report.layers[2].raw_seconds == report.layers[0].raw_seconds


def test_ctrl_c_while_timing_gives_the_report_of_what_was_measured():
    said = []

    def progress(text: str) -> None:
        said.append(text)
        if text.startswith("timing 2 memory-bound calls"):
            raise KeyboardInterrupt

    # the products (18 and 21 FLOP/byte, right of the ridge at 10) are timed warm, one by one;
    # the activations then run cold, in rounds after a flush, when Ctrl-C comes
    model = nn.Sequential(nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 128), nn.Tanh())
    with pytest.raises(KeyboardInterrupt) as caught:
        run(model, torch.randn(64, 256), progress=progress)
    assert said[-3:-1] == ["timing call 1 of 2: 0", "timing call 2 of 2: 2"]
    partial = caught.value.report
    assert [layer.type for layer in partial.layers] == ["Linear", "Linear"]
    assert [layer.flushed for layer in partial.layers] == [False, False]
    assert (partial.interrupted, partial.calls_counted) == ("Ctrl-C", 4)
    assert partial.forward_raw_seconds == ()
    assert "\nInterrupted (Ctrl-C) after timing 2 of 4 calls: the table" in partial.text()


def test_a_call_far_below_its_roof_keeps_that_roof_and_a_floor_bound_call_is_overhead():
    from gpuconcepts.measure import Measurement

    peaks = Peaks("cpu", 1e11, 1e10, "float32", latency_seconds=1e-3)
    slow = Measurement("x", "cpu", {}, (1.0,), 1e6, 2e8)  # 2 % of 10 GB/s: still memory
    near = Measurement("x", "cpu", {}, (1.0,), 1e6, 6e8)  # 6 %
    floor = Measurement("x", "cpu", {}, (2e-3,), 1e6, 2e6)  # 1 ms floor, 0.2 ms of bytes
    assert [observed_bound(m, peaks) for m in (slow, near, floor)] == [
        "memory",
        "memory",
        "overhead",
    ]


def test_text_fits_100_columns_with_long_names():
    class Deep(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoder_with_a_very_long_name = nn.ModuleDict(
                {"attention_block_number_eleven": nn.MultiheadAttention(16, 2, batch_first=True)}
            )

        def forward(self, x):
            return self.encoder_with_a_very_long_name["attention_block_number_eleven"](x, x, x)[0]

    text = run(Deep(), torch.randn(2, 5, 16)).text()
    assert max(len(line) for line in text.splitlines()) <= 100
    assert text.splitlines()[1].split()[1].startswith("..")  # the name, shortened from the left
    assert text.splitlines()[1].split()[1].endswith("_number_eleven")


# -- predictions on datasheet GPUs --------------------------------------------------------------
def test_gpu_predictions_use_tf32_for_convolutions_and_say_so():
    from gpuconcepts.hardware import GPUS

    # ~48 FLOP/B, 25 MB: above the H100's fp32 ridge (20), below its tf32 ridge (148), and
    # long enough (7.5 µs at its bandwidth) to be above the launch floor
    conv = run(nn.Conv2d(192, 192, 1, bias=False), torch.randn(4, 192, 64, 64))
    linear = nn.Linear(192, 192, bias=False)
    dense = run(linear, torch.randn(16384, 192))
    h100 = GPUS["H100 SXM"]
    for report in (conv, dense):
        assert h100.ridge_point("fp32") < report.layers[0].intensity < h100.ridge_point("tf32")
    assert conv.layers[0].predicted["H100 SXM"] == "memory"  # TF32 tensor cores: cuDNN's default
    assert dense.layers[0].predicted["H100 SXM"] == "compute"  # CUDA cores: matmul's default
    assert conv.assumptions[0] == (
        "on a GPU, float32 convolutions run on TF32 tensor cores (the tf32 peak): "
        "cudnn.allow_tf32 = True, PyTorch's default."
    )
    assert dense.assumptions[0].startswith(
        "on a GPU, float32 matmuls (linear layers, attention, recurrences) run on CUDA cores"
    )
    assert dense.assumptions[-1].startswith("a launch floor of 5 µs per call on each GPU")
    assert "Assumed: a launch floor of 5 µs" in dense.text()
    torch.backends.cuda.matmul.allow_tf32 = True
    try:
        allowed = run(linear, torch.randn(16384, 192))
    finally:
        torch.backends.cuda.matmul.allow_tf32 = False
    assert allowed.layers[0].predicted["H100 SXM"] == "memory"
    assert "= True, as set in this process." in allowed.assumptions[0]


# -- the command line's newer options ------------------------------------------------------------
KEYWORD_MODEL = textwrap.dedent(
    """
    import torch
    from torch import nn

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.words = nn.Embedding(1000, 16)
            self.head = nn.Linear(16, 2, bias=False)

        def forward(self, input_ids, attention_mask=None):
            assert attention_mask is not None and bool((attention_mask == 1).all())
            assert int(input_ids.max()) >= 2, "ids drawn over the word table"
            return self.head(self.words(input_ids) * attention_mask[..., None])

    def build():
        return Encoder()
    """
)


@pytest.fixture
def package(tmp_path, monkeypatch):
    """A module importable as `keyword_models` from the working directory."""
    (tmp_path / "keyword_models.py").write_text(KEYWORD_MODEL)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("gpuconcepts.kernels.measure_peaks", lambda *_, **__: PEAKS)
    monkeypatch.setattr("gpuconcepts.analysis.peaks._recorded_runs", list)
    yield tmp_path
    sys.modules.pop("keyword_models", None)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--threads", "100000"], "--threads 100000: a thread count is 1 or more, and at most"),
        (["--repeats", "1000000000"], "--repeats must be a whole number from 1 to 1,000"),
        (["--repeats", "0"], "--repeats must be a whole number from 1 to 1,000"),
    ],
)
@pytest.mark.usefixtures("package")
def test_cli_counts_beyond_the_machine_are_refused_before_the_model_is_built(
    capsys, monkeypatch, argv, message
):
    """--threads 100000 was a MemoryError traceback (a hundred thousand OpenMP threads);
    --repeats 1000000000 timed each call a billion times."""
    monkeypatch.setattr(
        "gpuconcepts.analysis.build_model", lambda *_, **__: pytest.fail("the model was built")
    )
    command = ["analyze", "--factory", "keyword_models:build", "--input", "input_ids=2x8:int64"]
    assert main([*command, *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert message in err


@pytest.mark.usefixtures("package")
def test_cli_factory_from_a_module_with_keyword_inputs(capsys):
    argv = ["analyze", "--factory", "keyword_models:build", "--input", "input_ids=2x8:int64"]
    argv += ["--input", "attention_mask=ones:2x8", "--repeats", "1", "--json"]
    assert main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["model"] == "Encoder"
    head = next(row for row in data["layers"] if row["type"] == "Linear")
    assert head["flops"] == f.mlp_flops(B=16, d_in=16, d_out=2)
    assert data["peaks"]["source"] == "measured now"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--factory", "no_such_pkg.models:build"],
            "no module named 'no_such_pkg' (is it installed?)",
        ),
        (["--factory", "keyword_models:nothing"], "keyword_models defines no 'nothing'"),
        (["--factory", "keyword_models"], "expected pkg.module:function"),
        (["m.py:build", "--factory", "keyword_models:build"], "give FILE.py:FACTORY or --factory"),
        (
            ["--factory", "keyword_models:build", "--threads", "0"],
            "--threads 0: a thread count is 1",
        ),
        (
            ["--factory", "keyword_models:build", "--peaks", "missing.json"],
            "missing.json: no such file",
        ),
        (["--factory", "keyword_models:build", "--figure", "out"], "give the figure a suffix"),
    ],
)
@pytest.mark.usefixtures("package")
def test_cli_option_errors_are_one_line(capsys, argv, message):
    assert main(["analyze", *argv, "--input", "input_ids=2x8:int64", "--repeats", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert message in err


def test_cli_peaks_from_a_saved_run_threads_and_figure(package, capsys):
    recorded = Path(__file__).resolve().parents[1] / "docs" / "runs" / "cpu-amd-epyc-float32.json"
    threads = torch.get_num_threads()
    figure = package / "roofline.svg"
    argv = ["analyze", "--factory", "keyword_models:build", "--input", "input_ids=2x8:int64"]
    argv += ["--input", "attention_mask=ones:2x8", "--repeats", "1", "--device", "cpu"]
    argv += ["--peaks", str(recorded), "--threads", "1", "--figure", str(figure)]
    assert main(argv) == 0
    out = " ".join(capsys.readouterr().out.split())
    created = json.loads(recorded.read_text())["provenance"]["created_utc"][:10]  # its day
    assert f"from {recorded}, {created}" in out
    assert "on cpu (" in out
    assert ", 1 thread)" in out
    assert torch.get_num_threads() == threads  # set for the command, then given back
    assert figure.read_text().startswith("<?xml")


@pytest.mark.usefixtures("package")
def test_cli_warns_when_peaks_measured_now_are_far_from_a_recorded_run(capsys, monkeypatch):
    from gpuconcepts.measure import cpu_model, cpu_threads
    from gpuconcepts.run import Provenance, Run

    here = replace(Provenance.example(), cpu_model=cpu_model(), cpu_threads=cpu_threads())
    then = Run(here, Peaks("cpu", 3e11, 1e10, "float32"), (), {}, ())  # 3x the compute now
    monkeypatch.setattr("gpuconcepts.analysis.peaks._recorded_runs", lambda: [then])
    argv = ["analyze", "--factory", "keyword_models:build", "--input", "input_ids=2x8:int64"]
    assert main([*argv, "--input", "attention_mask=ones:2x8", "--repeats", "1"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "Warning: the compute roof measured now, 100 GFLOP/s, is 0.33x the 300 GFLOP/s" in out
    assert "--peaks RUN.json reuses a saved run's peaks" in out


def test_analyze_places_every_call_by_the_book_s_one_rule():
    # a small CNN + MLP: every row's label is the kind of roofline.verdict's binding roof for
    # its own measurement (beaten or not)
    from gpuconcepts.roofline import verdict

    model = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 8 * 8, 16)
    )
    report = run(model, torch.randn(2, 3, 8, 8))
    assert [layer.type for layer in report.layers] == ["Conv2d", "ReLU", "Linear"]
    for layer in report.layers:
        found = verdict(layer.timing, PEAKS)
        assert layer.bound == found.kind  # however far below the roof: its share says so
        assert layer.above_roof == found.beaten


def test_an_embedding_is_placed_against_the_memory_roof():
    from gpuconcepts.measure import Measurement
    from gpuconcepts.roofline import Peaks

    # 2**20 lookups of 64-byte rows at 3·10⁷ lines/s take 35 ms, although their 64 MiB would
    # stream in 6.7 ms: at 70 ms the lookup reaches 10% of DRAM's roof, its bound, and random
    # access (a diagnosis, measured apart) accounts for half its time; at 0.5 s it reaches 1.3%
    # of DRAM's, and DRAM is still its bound: a low share is shown, not relabelled
    peaks = Peaks("cpu", 1e11, 1e10, "float32", line_bytes=64,
                  random_sweep=((2**28, 64, 3e7),))  # fmt: skip
    lookup = Measurement("emb", "cpu", {}, (0.07,), 0, 2**26, random_rows=2**20, row_bytes=64)
    assert observed_bound(lookup, peaks) == "memory"
    streamed = Measurement("emb", "cpu", {}, (0.5,), 0, 2**26)
    assert observed_bound(streamed, peaks) == "memory"


def test_analyze_reads_an_embedding_s_lookups_as_random_rows():
    from gpuconcepts.analysis.layers import gathers

    # 8 bags of 4 indices read 32 rows of 16 float32 values (64 bytes) each
    assert gathers(nn.EmbeddingBag(1000, 16, mode="sum"), [(8, 4)]) == (32, 64)
    assert gathers(nn.Linear(4, 4), [(8, 4)]) == (None, None)


def test_cli_keeps_the_peaks_it_measured_for_the_next_call(model_file, capsys, monkeypatch):
    # issue 38: the second analyze of a model measures no peaks; --fresh measures them again
    measured = []
    monkeypatch.setattr(
        "gpuconcepts.kernels.measure_peaks", lambda *_a, **_k: measured.append(1) or PEAKS
    )
    argv = ["analyze", f"{model_file}:build", "--input", "2x3x4x4", "--repeats", "1", "--json"]
    sources = []
    for flags in ([], [], ["--fresh"]):
        assert main([*argv, *flags]) == 0
        sources.append(json.loads(capsys.readouterr().out)["peaks"]["source"])
    assert len(measured) == 2
    assert sources[0] == sources[2] == "measured now"
    assert sources[1].startswith("kept from ")
    assert sources[1].endswith("--fresh measures them again)")
