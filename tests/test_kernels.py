"""gpuconcepts.kernels on the CPU at tiny sizes: every kernel runs and counts from the formulas.

Nothing here asserts a time: the kernels are checked for their counts, sizes, dtypes and
flush policy, and the profile for which measurements a :class:`~gpuconcepts.lab.Lab` hands out.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from synthetic import TINY_PRESETS as TINY

torch = pytest.importorskip("torch")
from kernel_probe import closure, timed_function, touched_bytes

from gpuconcepts import formulas
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.kernels import (
    KERNELS,
    cnn,
    default_dtype,
    device_class,
    dlrm,
    load_presets,
    load_sweeps,
    measure_peaks,
    mlp,
    peaks,
    presets,
    rnn,
    transformer,
)
from gpuconcepts.kernels._common import Kernel
from gpuconcepts.kernels.dispatch import KINETO_LINE, count_dispatch, cpu_profiler
from gpuconcepts.lab import Lab, profile_all
from gpuconcepts.measure import Measurement, devices
from gpuconcepts.records import from_record
from gpuconcepts.roofline import Peaks, place
from gpuconcepts.workloads import INDEX_BYTES, WORKLOADS, check_counts

PEAKS = Peaks(device="cpu", flops_per_s=1e11, bytes_per_s=1e10, dtype="float32")
R = 2  # repetitions: enough to exercise the statistics, nothing is asserted about time


def lab(
    device: str = "cpu", peaks: Peaks = PEAKS, progress: Callable[[str], None] | None = None
) -> Lab:
    """A live lab at R repetitions (a 32 MiB cache and 16 GiB free: the sizes here are tiny)."""
    return Lab(
        device, peaks, R, cache_bytes=32 * 1024**2, free_bytes=16 * 1024**3, progress=progress
    )


Counts = Callable[[int], tuple[float, float]]

CASES: list[tuple[str, Callable[..., Measurement], dict[str, Any], Counts]] = [
    (
        "dlrm-random",
        dlrm.embedding_lookup,
        {"N": 100, "B": 4, "L": 3, "d": 8},
        lambda s: (
            formulas.embedding_bag_flops(B=4, L=3, d=8),
            formulas.embedding_bag_bytes(B=4, L=3, d=8, s=s),
        ),
    ),
    (
        "dlrm-dense",
        dlrm.dense_mlp,
        {"B": 4, "d_in": 8, "d_out": 16},
        lambda s: (
            formulas.mlp_flops(B=4, d_in=8, d_out=16),
            formulas.mlp_bytes(B=4, d_in=8, d_out=16, s=s),
        ),
    ),
    (
        "mlp",
        mlp.linear,
        {"B": 3, "d_in": 5, "d_out": 7},
        lambda s: (
            formulas.mlp_flops(B=3, d_in=5, d_out=7),
            formulas.mlp_bytes(B=3, d_in=5, d_out=7, s=s),
        ),
    ),
    (
        "cnn-conv",
        cnn.conv2d,
        {"B": 2, "H": 6, "W": 5, "C_in": 3, "C_out": 4},
        lambda s: (
            formulas.conv_flops(B=2, H_out=6, W_out=5, K=3, C_in=3, C_out=4),
            formulas.conv_bytes(B=2, H_out=6, W_out=5, K=3, C_in=3, C_out=4, s=s),
        ),
    ),
    (
        "cnn-conv",
        cnn.conv2d,
        {"B": 1, "H": 7, "W": 7, "C_in": 2, "C_out": 3, "K": 5},
        lambda s: (
            formulas.conv_flops(B=1, H_out=7, W_out=7, K=5, C_in=2, C_out=3),
            formulas.conv_bytes(B=1, H_out=7, W_out=7, K=5, C_in=2, C_out=3, s=s),
        ),
    ),
    (
        "cnn-depthwise",
        cnn.depthwise_conv2d,
        {"B": 2, "H": 6, "W": 5, "C": 4},
        lambda s: (
            formulas.depthwise_conv_flops(B=2, H_out=6, W_out=5, K=3, C=4),
            formulas.depthwise_conv_bytes(B=2, H_out=6, W_out=5, K=3, C=4, s=s),
        ),
    ),
    (
        "rnn-module",
        rnn.rnn_module,
        {"B": 2, "S": 3, "d_in": 4, "d_h": 5},
        lambda s: (
            formulas.rnn_flops(B=2, S=3, d_in=4, d_h=5),
            formulas.rnn_bytes(B=2, S=3, d_in=4, d_h=5, s=s),
        ),
    ),
    (
        "rnn-loop",
        rnn.step_loop,
        {"B": 2, "S": 3, "d_in": 4, "d_h": 5},
        lambda s: (
            formulas.rnn_flops(B=2, S=3, d_in=4, d_h=5),
            formulas.rnn_bytes(B=2, S=3, d_in=4, d_h=5, s=s),
        ),
    ),
    (
        "rnn-hoisted",
        rnn.hoisted_loop,
        {"B": 2, "S": 3, "d_in": 4, "d_h": 5},
        lambda s: (
            formulas.rnn_flops(B=2, S=3, d_in=4, d_h=5),
            formulas.rnn_bytes(B=2, S=3, d_in=4, d_h=5, s=s),
        ),
    ),
    (
        "rnn-gemm",
        rnn.batched_gemm,
        {"B": 2, "S": 3, "d_in": 4, "d_h": 5},
        lambda s: (
            formulas.rnn_flops(B=2, S=3, d_in=4, d_h=5),
            formulas.rnn_bytes(B=2, S=3, d_in=4, d_h=5, s=s),
        ),
    ),
    (
        "transformer-prefill",
        transformer.prefill,
        {"B": 2, "S": 8, "d": 12, "heads": 3},
        lambda s: (
            formulas.attention_flops(B=2, S=8, d=12),
            formulas.attention_bytes(B=2, S=8, d=12, s=s),
        ),
    ),
    (
        "transformer-prefill-causal",
        partial(transformer.prefill, causal=True),
        {"B": 2, "S": 8, "d": 12, "heads": 3},
        lambda s: (
            formulas.attention_flops_causal(B=2, S=8, d=12),
            formulas.attention_bytes(B=2, S=8, d=12, s=s),
        ),
    ),
]
IDS = [case[0] + (f"-K{case[2]['K']}" if "K" in case[2] else "") for case in CASES]
"""One test id per case; the 5×5 convolution differs from the 3×3 one only in its K."""


@pytest.mark.parametrize(("workload", "kernel", "sizes", "counts"), CASES, ids=IDS)
def test_kernel_counts_equal_the_formulas(
    workload: str, kernel: Callable[..., Measurement], sizes: dict[str, Any], counts: Counts
) -> None:
    m = kernel("cpu", PEAKS, repeats=R, **sizes)
    assert m.workload == workload
    assert m.device == "cpu"
    assert (m.flops, m.bytes) == counts(4)
    assert len(m.raw_seconds) == R
    assert m.params["s"] == 4
    assert m.params["dtype"] == "float32"
    assert {k: m.params[k] for k in sizes} == sizes
    if "cnn" in workload:
        assert m.params["K"] == sizes.get("K", 3)  # the name no longer says K; the params do
    # memory-bound kernels are timed from DRAM (caches flushed), compute-bound ones warm;
    # the embedding lookups always flush
    memory_bound = place(m, PEAKS).bound == "memory"
    assert memory_bound == (m.flops / m.bytes < PEAKS.ridge_point)
    assert m.flush == (memory_bound or workload.startswith("dlrm-random"))


SUITE_SIZES: dict[str, dict[str, int]] = {
    "dlrm-random": {"N": 300, "B": 4, "L": 3, "d": 8},
    "dlrm-sequential": {"N": 300, "B": 4, "L": 3, "d": 8},
    "dlrm-hot": {"N": 300, "B": 4, "L": 3, "d": 8},
    "dlrm-dense": {"B": 3, "d_in": 8, "d_out": 5},
    "mlp": {"B": 2, "d_in": 6, "d_out": 4},
    "cnn-conv": {"B": 1, "H": 5, "W": 4, "C_in": 2, "C_out": 3, "K": 3},
    "cnn-depthwise": {"B": 1, "H": 5, "W": 4, "C": 3, "K": 5},
    "rnn-module": {"B": 2, "S": 3, "d_in": 4, "d_h": 6},
    "rnn-loop": {"B": 2, "S": 3, "d_in": 4, "d_h": 6},
    "rnn-hoisted": {"B": 2, "S": 3, "d_in": 4, "d_h": 6},
    "rnn-gemm": {"B": 2, "S": 3, "d_in": 4, "d_h": 6},
    "transformer-prefill": {"B": 1, "S": 6, "d": 8, "heads": 2},
    "transformer-prefill-causal": {"B": 1, "S": 6, "d": 8, "heads": 2},
    "transformer-decode": {"B": 2, "S_prompt": 3, "steps": 2, "d": 8, "heads": 2},
    "peak-gemm": {"n": 16, "backend": "mm"},
    "peak-triad": {"N": 8, "d": 32},
}
"""Tiny sizes for every kernel of the suite, by workload name."""


def test_the_suite_has_one_kernel_per_workload() -> None:
    assert list(KERNELS) == list(WORKLOADS)
    assert set(SUITE_SIZES) == set(KERNELS)


@pytest.mark.parametrize("workload", list(SUITE_SIZES))
def test_every_kernel_counts_what_its_descriptor_counts(workload: str) -> None:
    m = KERNELS[workload]("cpu", PEAKS, **SUITE_SIZES[workload]).time(R)
    assert m.workload == workload
    descriptor = WORKLOADS[workload]
    assert (m.flops, m.bytes) == descriptor.counts(m.params)
    check_counts(m)  # what loading a saved run checks: no stale count
    # and a count off by one is caught, so the check above can fail
    with pytest.raises(GpuConceptsError, match="a stale count"):
        check_counts(
            Measurement(m.workload, m.device, m.params, m.raw_seconds, m.flops + 1, m.bytes)
        )


needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


@needs_cuda
@pytest.mark.parametrize(("workload", "kernel", "sizes", "counts"), CASES, ids=IDS)
def test_cuda_kernel_counts_equal_the_formulas(
    workload: str, kernel: Callable[..., Measurement], sizes: dict[str, Any], counts: Counts
) -> None:
    peaks = Peaks(device="cuda", flops_per_s=1e14, bytes_per_s=1e12, dtype="bfloat16")
    m = kernel("cuda", peaks, repeats=R, **sizes)
    s = 4 if workload.startswith("dlrm-random") else 2  # bf16 except embedding tables
    assert m.workload == workload
    assert m.params["s"] == s
    assert (m.flops, m.bytes) == counts(s)
    assert all(t > 0 for t in m.raw_seconds)


@needs_cuda
def test_cuda_decode_cache_and_profile_all() -> None:
    peaks = Peaks(device="cuda", flops_per_s=1e14, bytes_per_s=1e12, dtype="bfloat16")
    result = transformer.decode("cuda", peaks, B=2, S_prompt=5, steps=3, d=16, heads=2, repeats=R)
    assert result.series["cache_bytes"] == tuple(
        formulas.kv_cache_memory(B=2, S=n, d=16, s=2) for n in (6, 7, 8)
    )
    ms = profile_all(lab("cuda", peaks), TINY, {"mlp_B": (1,), "transformer_S": (4,)})
    assert len(ms) == 16
    assert [(m.workload, m.params.get("S")) for m in ms[-4:]] == [
        ("transformer-prefill", 8),
        ("transformer-prefill", 4),  # the sweep follows the preset
        ("transformer-prefill-causal", 8),
        ("transformer-decode", 6),
    ]
    assert all(m.device == "cuda" for m in ms)


def test_a_lab_in_another_dtype_still_times_the_float32_triad() -> None:
    # `profile --dtype tf32` on the H200 crashed here: the DRAM roof's reference was handed
    # the run's dtype, which the STREAM triad (float32 by definition) does not take.
    here = Lab("cpu", PEAKS, R, cache_bytes=32 * 1024**2, free_bytes=16 * 1024**3, dtype="bf16")
    triad, layer = here.compare([("peak-triad", {"N": 64, "d": 1024}), ("mlp", TINY["mlp"])])
    assert triad.bytes == formulas.stream_triad_bytes(N=64, d=1024, s=4)
    assert (layer.params["dtype"], layer.params["s"]) == ("bfloat16", 2)


class _Stop(Exception):
    """Ends measure_peaks at its first measurement."""


@pytest.mark.parametrize(("dtype", "tf32"), [("tf32", True), ("float32", False), ("bf16", False)])
def test_every_ceiling_runs_in_the_precision_of_the_run(
    monkeypatch: pytest.MonkeyPatch, dtype: str, tf32: bool
) -> None:
    # The H200's tf32 run (2026-12-04) took its compute peak, 410 TFLOP/s, from a convolution
    # that cuDNN ran in TF32 by PyTorch's default, and its GEMM sweep, 49 TFLOP/s at best, from
    # products that PyTorch's default kept in FP32; its kernels ran in TF32 throughout.
    seen = []

    def first_measurement(*_: object, **__: object) -> None:
        seen.append((torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32))
        raise _Stop

    monkeypatch.setattr(peaks, "working_set_sweep", first_measurement)
    before = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    with pytest.raises(_Stop):
        measure_peaks("cpu", presets=TINY, dtype=dtype)
    assert seen == [(tf32, tf32)]
    assert (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32) == before


@pytest.mark.parametrize(("dtype", "s"), [("bfloat16", 2), ("float16", 2), ("float32", 4)])
def test_bytes_per_element_come_from_the_tensor(dtype: str, s: int) -> None:
    m = mlp.linear("cpu", PEAKS, B=2, d_in=4, d_out=8, dtype=dtype, repeats=R)
    assert m.params["s"] == s
    assert m.params["dtype"] == dtype
    assert m.bytes == formulas.mlp_bytes(B=2, d_in=4, d_out=8, s=s)


def test_rnn_module_runs_float16_where_the_default_is_bfloat16(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # As on a GPU (default bfloat16), whose cuDNN packs no bfloat16 RNN weights: an RNN asked
    # for no dtype runs in float16, and says so; one asked for bfloat16 gets bfloat16.
    real = torch.nn.RNN.forward

    def forward(self: torch.nn.RNN, x: torch.Tensor, *args: Any) -> Any:
        if x.dtype == torch.bfloat16:
            raise RuntimeError("cuDNN RNN: BFloat16 not supported")
        return real(self, x, *args)

    monkeypatch.setattr(torch.nn.RNN, "forward", forward)
    monkeypatch.setattr(rnn, "default_dtype", lambda _device: "bfloat16")
    m = rnn.rnn_module("cpu", PEAKS, B=2, S=3, d_in=4, d_h=4, repeats=R)
    assert m.params["dtype"] == "float16"
    assert m.params["s"] == 2
    assert m.bytes == formulas.rnn_bytes(B=2, S=3, d_in=4, d_h=4, s=2)
    with pytest.raises(RuntimeError, match="BFloat16 not supported"):
        rnn.rnn_module("cpu", PEAKS, B=2, S=3, d_in=4, d_h=4, dtype="bfloat16", repeats=R)


@pytest.mark.parametrize("workload", ["rnn-loop", "rnn-hoisted"])
def test_the_loops_compute_what_nn_rnn_computes(
    workload: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The function each loop kernel times, on its own x, W_x, W_h and b, against an nn.RNN
    # given the same weights (b as its input bias, a zero hidden bias).
    S, B, d_in, d_h = 4, 3, 5, 6
    fn, _ = timed_function(monkeypatch, workload, {"B": B, "S": S, "d_in": d_in, "d_h": d_h})
    tensors = closure(fn)
    module = torch.nn.RNN(d_in, d_h)  # sequence first, like the loops' x and out
    with torch.no_grad():
        module.weight_ih_l0.copy_(tensors["w_x"].T)
        module.weight_hh_l0.copy_(tensors["w_h"].T)
        module.bias_ih_l0.copy_(tensors["bias"])
        module.bias_hh_l0.zero_()
        expected, last = module(tensors["x"].view(S, B, d_in))
        got = fn()
    assert got.shape == (S, B, d_h)
    torch.testing.assert_close(got, expected)
    torch.testing.assert_close(got[-1], last[0])


UNCOUNTED_ELEMENTS: dict[str, Callable[[dict[str, int]], int]] = {
    "rnn-module": lambda z: 2 * z["d_h"] + z["B"] * z["d_h"],  # two biases; h_n, also returned
    "rnn-loop": lambda z: z["d_h"],  # the bias
    "rnn-hoisted": lambda z: z["d_h"],  # the bias
    "rnn-gemm": lambda z: z["B"] * z["S"] * z["d_h"] + z["d_h"],  # every h_{t-1}, given; bias
}
"""Elements a kernel touches that its ``*_bytes`` formula leaves out, as the formulas say
(no biases; minimal traffic of the layer itself): the formula is the rest exactly."""


@pytest.mark.parametrize("workload", [w for w in SUITE_SIZES if not w.startswith("dlrm-")])
def test_bytes_formula_is_the_bytes_of_the_tensors_the_kernel_touches(
    workload: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    sizes = SUITE_SIZES[workload]
    fn, m = timed_function(monkeypatch, workload, sizes)
    touched = touched_bytes(fn)
    _, formula_bytes = WORKLOADS[workload].counts(m.params)
    assert set(touched) == {torch.float32}
    uncounted = 4 * UNCOUNTED_ELEMENTS.get(workload, lambda _z: 0)(sizes)
    assert touched[torch.float32] == formula_bytes + uncounted


@pytest.mark.parametrize("workload", ["dlrm-random", "dlrm-sequential", "dlrm-hot", "dlrm-dense"])
def test_embedding_bytes_count_the_rows_looked_up_not_the_table(
    workload: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # embedding_bag is handed the whole N × d table, the int64 indices and bag offsets, and
    # returns B pooled rows. embedding_bag_bytes counts the B·L rows the indices select and
    # the output, and leaves the indices out (its summary says so).
    sizes = SUITE_SIZES[workload]
    fn, m = timed_function(monkeypatch, workload, sizes)
    touched = touched_bytes(fn)
    _, formula_bytes = WORKLOADS[workload].counts(m.params)
    if workload == "dlrm-dense":
        assert touched == {torch.float32: formula_bytes}
        return
    N, B, L, d = (sizes[k] for k in ("N", "B", "L", "d"))
    index = closure(fn)["index"]
    assert index.numel() == B * L
    assert touched == {torch.float32: (N * d + B * d) * 4, torch.int64: (B * L + B) * 8}
    assert formula_bytes == touched[torch.float32] - N * d * 4 + index.numel() * d * 4
    # the traffic the memory roofs read adds exactly the indices and offsets it was handed
    assert index.element_size() == INDEX_BYTES
    assert WORKLOADS[workload].extra_bytes(m.params) == touched[torch.int64]


@pytest.mark.parametrize("pattern", dlrm.PATTERNS)
def test_embedding_patterns(pattern: str) -> None:
    m = dlrm.embedding_lookup("cpu", PEAKS, N=5000, B=8, L=4, d=8, pattern=pattern, repeats=R)
    assert m.workload == f"dlrm-{pattern}"
    assert set(m.params) == {"N", "B", "L", "d", "s", "dtype"}  # the pattern is in the name
    assert place(m, PEAKS).bound == "memory"
    assert m.flush is True  # every pattern starts from a flushed cache; hot rows refill it
    index = dlrm.lookup_indices(pattern, N=5000, B=64, L=32, device="cpu")
    assert isinstance(index, torch.Tensor)
    assert index.numel() == 64 * 32
    if pattern == "hot":
        assert int(index.max()) < dlrm.HOT_ROWS
    elif pattern == "sequential":
        assert index[:5].tolist() == [0, 1, 2, 3, 4]
    else:
        assert int(index.max()) >= dlrm.HOT_ROWS  # spread over the whole table


def test_embedding_pattern_unknown() -> None:
    with pytest.raises(GpuConceptsError, match="pattern 'zipf' is not one of random, sequential"):
        dlrm.embedding_lookup("cpu", PEAKS, N=10, B=1, L=1, d=1, pattern="zipf", repeats=R)


def test_decode_cache_grows_exactly_as_kv_cache_memory() -> None:
    m = transformer.decode("cpu", PEAKS, B=2, S_prompt=5, steps=4, d=12, heads=3, repeats=R)
    assert m.series["lengths"] == (6, 7, 8, 9)
    assert m.series["cache_bytes"] == tuple(
        formulas.kv_cache_memory(B=2, S=n, d=12, s=4) for n in (6, 7, 8, 9)
    )
    assert len(m.series["step_seconds"]) == 4
    assert all(t > 0 for t in m.series["step_seconds"])
    assert m.workload == "transformer-decode"
    assert {k: m.params[k] for k in ("B", "S", "S_prompt", "steps", "d", "heads", "s")} == {
        "B": 2,
        "S": 9,
        "S_prompt": 5,
        "steps": 4,
        "d": 12,
        "heads": 3,
        "s": 4,
    }
    assert m.flops == formulas.attention_decode_flops(B=2, S=9, d=12)
    assert m.bytes == formulas.attention_decode_bytes(B=2, S=9, d=12, s=4)
    assert place(m, PEAKS).bound == "memory"
    assert m.flush is True
    # the series travel with the measurement into a saved run, and back
    assert m.to_dict()["series"]["cache_bytes"] == list(m.series["cache_bytes"])
    assert from_record(Measurement, m.to_dict()) == m


def test_decode_cache_is_what_the_allocator_handed_out_not_the_shapes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # An append that over-allocates: each new cache's storage holds one spare token row that
    # the returned view hides. The shapes (and so the lengths) are unchanged; the CPU
    # measurement, read from the allocator's memory events, sees one extra K and V row.
    real = transformer._append

    def padded(cache: torch.Tensor, row: torch.Tensor) -> torch.Tensor:
        return torch.cat((cache, row, torch.zeros_like(row)), dim=2)[:, :, :-1]

    monkeypatch.setattr(transformer, "_append", padded)
    m = transformer.decode("cpu", PEAKS, B=2, S_prompt=5, steps=3, d=12, heads=3, repeats=R)
    assert m.series["lengths"] == (6, 7, 8)
    spare_row = 2 * 2 * 12 * 4  # K and V, B=2, d=12, 4-byte floats
    assert m.series["cache_bytes"] == tuple(
        formulas.kv_cache_memory(B=2, S=n, d=12, s=4) + spare_row for n in (6, 7, 8)
    )

    # An append that never lets an old cache go: every older copy stays live, so the cache
    # costs the sum of all its sizes so far, though each K and V storage is as the formula says.
    kept: list[torch.Tensor] = []

    def hoarding(cache: torch.Tensor, row: torch.Tensor) -> torch.Tensor:
        kept.append(cache)
        return real(cache, row)

    monkeypatch.setattr(transformer, "_append", hoarding)
    m = transformer.decode("cpu", PEAKS, B=2, S_prompt=5, steps=3, d=12, heads=3, repeats=R)
    held = [formulas.kv_cache_memory(B=2, S=n, d=12, s=4) for n in (5, 6, 7, 8)]
    assert m.series["cache_bytes"] == (sum(held[:2]), sum(held[:3]), sum(held))


def test_live_cache_bytes_counts_only_blocks_allocated_in_the_cache_scope() -> None:
    with torch.profiler.profile(
        activities=[torch.profiler.ProfilerActivity.CPU], profile_memory=True
    ) as prof:
        outside = torch.empty(1000)  # 4000 bytes, never in a scope
        with torch.profiler.record_function(transformer.CACHE_SCOPE):
            cache = torch.empty(10)  # 40 bytes
            scratch = torch.empty(100)  # 400 bytes, freed inside the scope
            del scratch
        with torch.profiler.record_function(transformer.CACHE_SCOPE):
            cache = torch.cat((cache, torch.empty(5)))  # 60 bytes; the 40 are freed
        del cache, outside
        with torch.profiler.record_function(transformer.CACHE_SCOPE):
            pass
    assert prof.profiler is not None
    assert prof.profiler.kineto_results is not None
    events = prof.profiler.kineto_results.experimental_event_tree()
    assert transformer.live_cache_bytes(events) == [40, 60, 0]
    assert transformer.live_cache_bytes(events, device="cuda") == [0, 0, 0]


def test_decode_cache_in_half_precision() -> None:
    m = transformer.decode(
        "cpu", PEAKS, B=1, S_prompt=3, steps=2, d=8, heads=2, dtype="bfloat16", repeats=R
    )
    assert m.series["cache_bytes"] == (
        formulas.kv_cache_memory(B=1, S=4, d=8, s=2),
        formulas.kv_cache_memory(B=1, S=5, d=8, s=2),
    )


def test_sizes_are_params_not_names() -> None:
    # a sweep is a loop over one kernel: one workload name, the size in the params
    ms = [mlp.linear("cpu", PEAKS, B=B, d_in=16, d_out=16, repeats=R) for B in (1, 32)]
    assert [(m.workload, m.size("B")) for m in ms] == [("mlp", 1), ("mlp", 32)]
    assert ms[0].intensity < ms[1].intensity  # weights shared by more rows
    ps = [transformer.prefill("cpu", PEAKS, B=1, S=S, d=8, heads=2, repeats=R) for S in (4, 8)]
    assert [(m.workload, m.size("S")) for m in ps] == [
        ("transformer-prefill", 4),
        ("transformer-prefill", 8),
    ]
    assert ps[1].flops == 4 * ps[0].flops  # doubling S quadruples attention
    # a decoder's prefill is its own workload: the same traffic, only the scores up to the diagonal
    causal = transformer.prefill("cpu", PEAKS, B=1, S=8, d=8, heads=2, repeats=R, causal=True)
    assert (causal.workload, causal.size("S")) == ("transformer-prefill-causal", 8)
    assert causal.bytes == ps[1].bytes
    assert causal.flops / ps[1].flops == pytest.approx((8 + 1) / (2 * 8))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: mlp.linear("cpu", PEAKS, B=0, d_in=1, d_out=1),
            "mlp.linear: B must be a positive",
        ),
        (
            lambda: mlp.linear("cpu", PEAKS, B=1, d_in=1, d_out=1, dtype="int8"),
            "unknown dtype 'int8'; one of float32 \\(fp32\\)",
        ),
        (lambda: cnn.conv2d("cpu", PEAKS, B=1, H=4, W=4, C_in=1, C_out=1, K=2), "K must be odd"),
        (
            lambda: transformer.prefill("cpu", PEAKS, B=1, S=4, d=10, heads=3),
            "d=10 must be a multiple of heads=3",
        ),
        (
            lambda: rnn.step_loop("cpu", PEAKS, B=1, S=1, d_in=1, d_h=1, repeats=0),
            "repeats must be a positive integer",
        ),
    ],
)
def test_kernel_input_errors(call: Callable[[], object], message: str) -> None:
    with pytest.raises(GpuConceptsError, match=message):
        call()


def test_default_dtypes() -> None:
    assert default_dtype("cpu") == "float32"
    assert default_dtype("cuda") == "bfloat16"
    assert default_dtype("cuda", "embedding") == "float32"


# -- peaks -----------------------------------------------------------------------------------
def test_stream_arrays_are_at_least_four_caches() -> None:
    mib = 1024**2
    assert peaks.stream_array_bytes(16 * mib, 32 * mib, 64 * 1024**3) == 128 * mib
    assert peaks.stream_array_bytes(256 * mib, 32 * mib, 64 * 1024**3) == 256 * mib
    # three arrays must fit in half the free memory
    assert peaks.stream_array_bytes(256 * mib, 32 * mib, 600 * mib) == 100 * mib


@pytest.mark.parametrize("backend", peaks.gemm_backends("cpu"))
def test_gemm_backends(backend: str) -> None:
    assert peaks.gemm_flops("cpu", n=32, backend=backend, repeats=2) > 0


def test_gemm_backend_unknown() -> None:
    with pytest.raises(GpuConceptsError, match="GEMM backend 'cublas' is not one of"):
        peaks.gemm_flops("cpu", n=8, backend="cublas", repeats=1)


def test_measure_peaks_small(measured_peaks: Peaks) -> None:
    p = measured_peaks  # measure_peaks at small sizes, once for the session (conftest)
    assert p.device == "cpu"
    assert p.dtype == "float32"
    assert p.copy_bytes_per_s
    assert p.triad_bytes_per_s
    assert p.read_bytes_per_s
    # DRAM's roof is the triad's (STREAM's), the copy and the read recorded beside it
    assert p.bytes_per_s == p.triad_bytes_per_s
    assert p.flops_per_s > 0


def test_gemm_shape_flops_counts_2mkn(monkeypatch: pytest.MonkeyPatch) -> None:
    from gpuconcepts.kernels.ceilings import compute  # where the sweep's product is timed

    monkeypatch.setattr(compute, "time_function", lambda *_a, **_k: [0.5, 0.25, 0.3])
    # the median repetition, the statistic the kernels are read by, not the best
    assert peaks.gemm_shape_flops("cpu", (4, 8, 2), repeats=3) == 2 * 4 * 8 * 2 / 0.3


def test_the_gemm_sweep_times_memory_side_products_warm_and_flushed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    timed = []

    def fake_rounds(points: list[peaks.SweepPoint], _device: str, **_: object) -> list[float]:
        timed.extend((p.fn().shape, p.flush) for p in points)  # the product F.linear makes
        return [2e-3 if p.flush else 1e-3 for p in points]

    from gpuconcepts.kernels.ceilings import compute  # where the GEMM sweep lives

    monkeypatch.setattr(compute, "median_in_rounds", fake_rounds)
    monkeypatch.setattr(compute, "gemm_sweep_points", lambda _device: ((1, 32), (64, 32)))
    # at a ridge of 5 FLOP/byte a matrix-vector product (0.48 FLOP/byte) is memory-side, 64
    # rows (6.4) compute-side
    sweep = peaks.gemm_sweep("cpu", 5.0, repeats=2)
    assert timed == [((1, 32), False), ((1, 32), True), ((64, 32), False)]
    assert sweep == (
        (1, 32, False, 2 * 32 * 32 / 1e-3),
        (1, 32, True, 2 * 32 * 32 / 2e-3),
        (64, 32, False, 2 * 64 * 32 * 32 / 1e-3),
    )


def test_a_sweep_times_its_points_in_rounds_so_a_busy_moment_spoils_one_of_each() -> None:
    # flushed points: one call a repetition, no warm-up call. Timed in rounds, a busy second
    # falls on one repetition of each point instead of on every repetition of one point
    log: list[str] = []

    def point(name: str) -> peaks.SweepPoint:
        return peaks.SweepPoint(lambda: log.append(name), flush=True)

    best = peaks.median_in_rounds([point("a"), point("b"), point("c")], "cpu", repeats=4)
    assert len(best) == 3
    assert all(t > 0 for t in best)
    assert len(log) == 12
    assert [sorted(log[i : i + 3]) for i in range(0, 12, 3)] == [["a", "b", "c"]] * 4


def test_physical_limit_from_the_fma_table_at_the_measured_clock(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from gpuconcepts.measure.physical import CpuId

    zen5 = CpuId("AuthenticAMD", 26, 2, "AMD EPYC")
    monkeypatch.setattr(peaks, "cpu_id", lambda: zen5)
    monkeypatch.setattr(peaks, "measured_hz", lambda: 2.5e9)
    monkeypatch.setattr(peaks.torch, "get_num_threads", lambda: 4)
    # 4 cores × 16 float32 lanes × 2 FMA pipes × 2 FLOPs × 2.5 GHz
    assert peaks.physical_flops("cpu", "float32") == 4 * 16 * 2 * 2 * 2.5e9
    assert peaks.physical_flops("cpu", "bfloat16") == 4 * 32 * 2 * 2 * 2.5e9
    # Zen 4 decodes AVX-512 but runs it on 256-bit pipes: half Zen 5's limit at one clock
    monkeypatch.setattr(peaks, "cpu_id", lambda: CpuId("AuthenticAMD", 25, 0x11, "AMD EPYC"))
    assert peaks.physical_flops("cpu", "float32") == 4 * 8 * 2 * 2 * 2.5e9
    # a CPU the table does not know, or one whose clock cannot be measured: unknown, whatever
    # clock /proc/cpuinfo shows (issue 45, item 6)
    monkeypatch.setattr(peaks, "cpu_id", lambda: CpuId("GenuineIntel", 6, 0x55, "Intel Xeon"))
    assert peaks.physical_flops("cpu") is None
    monkeypatch.setattr(peaks, "cpu_id", lambda: zen5)
    monkeypatch.setattr(peaks, "measured_hz", lambda: None)
    monkeypatch.setattr(devices, "cpu_mhz", lambda *_a, **_k: 2600.0)
    assert peaks.physical_flops("cpu") is None
    monkeypatch.setattr(peaks, "cpu_id", lambda: None)
    assert peaks.physical_flops("cpu") is None


def test_the_compute_roof_is_the_square_gemm_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    # the book's convolution is a kernel the roof judges: a faster one is a finding, and the
    # roof is the square GEMM's whatever the convolution does
    from gpuconcepts.kernels import peaks as module

    asked: list[int] = []
    monkeypatch.setattr(module, "gemm_flops", lambda *_a, n, **_k: asked.append(n) or 1e11)
    for sweep, empty in (
        ("working_set_sweep", ()),
        ("random_access", ()),
        ("cold_reads", ()),
        ("gemm_sweep", ()),
    ):
        monkeypatch.setattr(module, sweep, lambda *_a, _empty=empty, **_k: _empty)
    conv = {"B": 1, "H": 8, "W": 8, "C_in": 8, "C_out": 8, "K": 3}
    sizes = {
        "peaks": {"gemm_n": 64, "stream_mib": 1},
        "timing": {"repeats": 2},
        "budget": {"seconds": 60, "memory_mib": 64},
        "cnn": conv,
    }
    assert measure_peaks("cpu", presets=sizes, repeats=2).flops_per_s == 1e11
    assert asked == [64]  # one square GEMM of the presets' gemm_n
    assert not hasattr(module, "conv_flops")


# -- presets ---------------------------------------------------------------------------------
@pytest.mark.parametrize("cls", ["cpu", "cuda-small", "cuda-large"])
@pytest.mark.parametrize("quick", [False, True])
def test_every_device_class_has_every_table(cls: presets.DeviceClass, quick: bool) -> None:
    sizes = load_presets("cpu", quick, free_bytes=1024**4, device_cls=cls)
    assert set(presets.KERNELS) <= set(sizes)
    assert sizes["timing"]["repeats"] >= 1
    sweeps = load_sweeps("cpu", quick, free_bytes=1024**4, device_cls=cls)
    assert sweeps["mlp_B"]
    assert sweeps["transformer_S"]


def test_quick_cpu_sizes_are_smaller() -> None:
    full = load_presets("cpu", False, free_bytes=1024**4)
    quick = load_presets("cpu", True, free_bytes=1024**4)
    assert quick["dlrm"]["N"] < full["dlrm"]["N"]
    assert quick["timing"]["repeats"] <= full["timing"]["repeats"]


def test_memory_bound_presets_exceed_the_cache() -> None:
    # the DLRM table and the decode KV cache are at least 4x a 32 MiB L3 on the CPU
    for quick in (False, True):
        sizes = load_presets("cpu", quick, free_bytes=1024**4)
        table = formulas.embedding_memory(N=sizes["dlrm"]["N"], d=sizes["dlrm"]["d"], s=4)
        dec = sizes["transformer_decode"]
        cache = formulas.kv_cache_memory(B=dec["B"], S=dec["S_prompt"], d=dec["d"], s=4)
        assert min(table, cache) >= 4 * 32 * 1024**2


def test_presets_capped_for_a_16_gib_gpu() -> None:
    # A GPU with 16 GiB total and 15 GiB free gets the small presets, capped to fit.
    free = 15 * 1024**3
    cls = device_class("cuda", total_bytes=16 * 1024**3)
    assert cls == "cuda-small"
    sizes = load_presets("cuda", False, free_bytes=free, device_cls=cls)
    for (table, _key), footprint in presets.FOOTPRINTS.items():
        assert footprint(sizes[table], 4) <= presets.MEMORY_FRACTION * free


def test_large_presets_shrink_on_small_free_memory() -> None:
    full = load_presets("cuda", False, free_bytes=1024**4, device_cls="cuda-large")
    capped = load_presets("cuda", False, free_bytes=4 * 1024**3, device_cls="cuda-large")
    assert capped["dlrm"]["N"] < full["dlrm"]["N"]
    assert capped["dlrm"]["d"] == full["dlrm"]["d"]  # only the named size shrinks
    assert (
        formulas.embedding_memory(N=capped["dlrm"]["N"], d=capped["dlrm"]["d"], s=4) <= 2 * 1024**3
    )


def test_cap_presets_error_when_nothing_fits() -> None:
    with pytest.raises(GpuConceptsError, match=r"presets: mlp needs .* bytes even with B=1"):
        presets.cap_presets({"mlp": {"B": 8, "d_in": 1024, "d_out": 1024}}, free_bytes=1024)


def test_cuda_presets_use_free_gpu_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    class Props:
        total_memory = 16 * 1024**3

    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda _i: Props())
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda: (2 * 1024**3, 16 * 1024**3))
    sizes = load_presets("cuda", quick=False)
    for (table, _key), footprint in presets.FOOTPRINTS.items():
        assert footprint(sizes[table], 4) <= 1024**3


def test_presets_file_errors(tmp_path: Path) -> None:
    bad = tmp_path / "presets.toml"
    bad.write_text("[cpu.timing]\nrepeats = 3\n")
    with pytest.raises(
        GpuConceptsError, match=r"device class 'cpu' lacks tables \['budget', 'peaks', 'dlrm'"
    ):
        load_presets("cpu", False, path=bad, free_bytes=1024**3)
    with pytest.raises(GpuConceptsError, match="no table for device class 'cuda-large'"):
        load_presets("cuda", False, path=bad, free_bytes=1024**3, device_cls="cuda-large")


def test_presets_reject_non_positive_sizes(tmp_path: Path) -> None:
    text = presets.presets_path().read_text().replace("[cpu.mlp]\nB = 1024", "[cpu.mlp]\nB = 0")
    assert "B = 0" in text
    path = tmp_path / "presets.toml"
    path.write_text(text)
    with pytest.raises(GpuConceptsError, match=r"presets: cpu.mlp.B must be a positive integer"):
        load_presets("cpu", False, path=path, free_bytes=1024**3)


def test_packaged_presets_are_the_conf_file() -> None:
    conf = Path(__file__).resolve().parents[1] / "conf" / "presets.toml"
    assert presets.presets_path().read_text() == conf.read_text()


# -- the whole suite -------------------------------------------------------------------------


def test_a_live_lab_runs_the_real_kernel_once_in_its_dtype(monkeypatch: pytest.MonkeyPatch) -> None:
    runs: list[dict[str, object]] = []
    real = KERNELS["mlp"]

    def counted(device: str, peaks: Peaks, dtype: str | None = None, **sizes: Any) -> Kernel:
        # the Lab hands its dtype to every kernel but one of a fixed dtype (the STREAM triad)
        runs.append({"dtype": dtype, **sizes} if dtype else sizes)
        return real(device, peaks, dtype=dtype, **sizes)

    monkeypatch.setitem(KERNELS, "mlp", counted)
    half = Lab("cpu", PEAKS, R, cache_bytes=2**25, free_bytes=2**34, dtype="bfloat16")
    m = half.measure("mlp", B=2, d_in=8, d_out=4)
    assert half.measure("mlp", d_out=4, B=2, d_in=8) is m
    assert runs == [{"dtype": "bfloat16", "B": 2, "d_in": 8, "d_out": 4}]
    assert (m.params["dtype"], m.params["s"], len(m.raw_seconds)) == ("bfloat16", 2, R)
    assert m.bytes == formulas.mlp_bytes(B=2, d_in=8, d_out=4, s=2)
    # without a dtype the kernel keeps its own default
    default = lab().measure("mlp", B=2, d_in=8, d_out=4)
    assert runs[-1] == {"B": 2, "d_in": 8, "d_out": 4}
    assert (default.params["dtype"], default.params["s"]) == ("float32", 4)


def test_a_live_lab_times_each_kernel_beside_the_floors_of_its_overhead_roof() -> None:
    from gpuconcepts.roofline import references_of

    here = lab()
    rnn = here.measure("rnn-module", B=2, S=4, d_in=4, d_h=4)
    wanted = [ref.key for ref in references_of(rnn)]
    # the same floors it asks for, one value each round, in seconds; none of its own products
    assert list(rnn.references) == wanted
    assert "op_seconds" in wanted
    assert not any(key.startswith(("product", "random", "activation")) for key in wanted)
    assert all(len(values) == R for values in rnn.references.values())
    assert 1e-9 < min(rnn.references["op_seconds"]) < 1e-3  # seconds of one operation
    # a comparison times its floors once a round for every kernel it holds
    a, b = here.compare([("mlp", {"B": 2, "d_in": 8, "d_out": 4}),
                         ("mlp", {"B": 4, "d_in": 8, "d_out": 4})])  # fmt: skip
    assert a.references["latency_seconds"] == b.references["latency_seconds"]
    assert set(a.references) == set(b.references)


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two cores to leave one")
def test_a_live_lab_leaves_a_core_that_became_busy_before_it_times_a_kernel(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import gpuconcepts.lab
    import gpuconcepts.measure
    from gpuconcepts.lab import TIMED_ON_FEWER_CORES

    # no core busy at first, whatever else this machine runs (the test must not read its load)
    monkeypatch.setattr(gpuconcepts.measure, "busy_cores", lambda *_a: frozenset())
    here = lab()
    quiet = here.measure("mlp", B=2, d_in=8, d_out=4)
    assert quiet.threads == torch.get_num_threads()
    assert TIMED_ON_FEWER_CORES not in here.facts
    # another program now keeps the first of this process's cores busy
    taken = min(os.sched_getaffinity(0))
    monkeypatch.setattr(gpuconcepts.measure, "busy_cores", lambda *_a: frozenset({taken}))
    monkeypatch.setattr(gpuconcepts.lab, "LOAD_SAMPLE_EVERY", 0.0)  # it samples again now
    threads, cores = torch.get_num_threads(), os.sched_getaffinity(0)
    busy = here.measure("mlp", B=4, d_in=8, d_out=4)
    assert busy.threads == min(threads, len(cores) - 1)
    assert here.facts[TIMED_ON_FEWER_CORES] == {"groups": 1}
    # the cores and threads are given back once the kernel is timed
    assert (torch.get_num_threads(), os.sched_getaffinity(0)) == (threads, cores)


def test_profile_all_runs_every_workload_once() -> None:
    # the sweeps meet the preset sizes (B=4, S=8): measured once, listed once
    lines: list[str] = []
    here = lab(progress=lines.append)
    ms = profile_all(here, TINY, {"mlp_B": (1, 4), "transformer_S": (8, 4)})
    assert [(m.workload, m.params.get("B"), m.params.get("S")) for m in ms] == [
        ("dlrm-random", 4, None),
        ("dlrm-sequential", 4, None),
        ("dlrm-hot", 4, None),
        ("dlrm-dense", 4, None),
        ("mlp", 4, None),
        ("mlp", 1, None),
        ("cnn-conv", 1, None),
        ("cnn-depthwise", 1, None),
        ("rnn-module", 2, 3),
        ("rnn-loop", 2, 3),
        ("rnn-hoisted", 2, 3),
        ("rnn-gemm", 2, 3),
        ("transformer-prefill", 1, 8),
        ("transformer-prefill", 1, 4),  # each workload's sweep follows its preset
        ("transformer-prefill-causal", 1, 8),
        ("transformer-decode", 1, 6),
    ]
    assert all(len(m.raw_seconds) == R for m in ms)
    assert len(lines) == len(ms)  # one progress line per kernel run
    assert lines[0] == "dlrm-random: N=256, d=8, B=4, L=2"
    assert here.measurements == tuple(ms)
    # the lab hands the profile's own measurement to anyone asking again, without running it
    assert here.measure("mlp", **TINY["mlp"]) is ms[4]
    assert len(lines) == len(ms)


def test_flush_policy_follows_the_ridge_point() -> None:
    # below the ridge a kernel is timed from DRAM (caches flushed); above it, warm
    low_ridge = Peaks(device="cpu", flops_per_s=1e9, bytes_per_s=1e10, dtype="float32")
    sizes = {"B": 4, "d_in": 8, "d_out": 8}  # intensity 1 FLOP/byte
    warm = mlp.linear("cpu", low_ridge, repeats=R, **sizes)
    cold = mlp.linear("cpu", PEAKS, repeats=R, **sizes)
    assert (place(warm, low_ridge).bound, warm.flush) == ("compute", False)
    assert (place(cold, PEAKS).bound, cold.flush) == ("memory", True)
    # the lookups flush whatever the ridge: the table's rows must come from DRAM
    lookup = dlrm.embedding_lookup("cpu", low_ridge, N=300, B=4, L=3, d=8, repeats=R)
    assert (place(lookup, low_ridge).bound, lookup.flush) == ("compute", True)


def test_a_dtype_alias_is_recorded_by_its_name() -> None:
    lab = Lab("cpu", PEAKS, 1, cache_bytes=2**25, free_bytes=2**34, dtype="fp32")
    assert lab.dtype == "float32"
    m = mlp.linear("cpu", PEAKS, B=2, d_in=4, d_out=4, dtype="fp32", repeats=1)
    assert (m.params["dtype"], m.params["s"]) == ("float32", 4)


def test_the_random_sweep_knows_every_table_the_run_reads() -> None:
    from gpuconcepts.sweeps import judged_table_bytes

    presets = {"dlrm": {"N": 2**20, "B": 8, "L": 4, "d": 64}}
    claims = {"dlrm_table_mib": 1024, "dlrm_widths": [4]}
    # the kernel's 256 MiB, the claims' 1 GiB and the hot sets (1,024 rows of each width)
    assert judged_table_bytes(presets, claims, 2**40) == (2**14, 2**18, 2**28, 2**30)
    assert max(judged_table_bytes(presets, claims, 2**31)) == 2**29  # as the claims cap it
    assert judged_table_bytes({}, None, 2**40) == ()


def test_the_random_sweep_times_every_table_flushed_in_calls_of_each_size(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A hot set a cache holds is looked up right after a flush too, so its roof must be a
    # flushed call of as many rows, not a warm one (which ran 2.8 times as fast).
    flushed: list[bool] = []

    def record(
        points: list[peaks.SweepPoint], _device: str, *, repeats: int, keep: list[object]
    ) -> list[float]:
        assert keep == []  # each point's rounds go there, by the points' order
        assert repeats == 1
        flushed.extend(point.flush for point in points)
        return [1e-3] * len(points)

    from gpuconcepts.kernels.ceilings import gather  # where the random-access sweep lives

    monkeypatch.setattr(gather, "median_in_rounds", record)
    sweep = peaks.random_access("cpu", 2**20, first_cache_bytes=2**16, repeats=1)
    tables = sorted({point[0] for point in sweep})
    assert tables == [
        2**14,
        2**19,
        4 * 2**20,
    ]  # a quarter of the first cache, half the LLC, 4x beyond it
    assert all(flushed)
    assert len(flushed) == len(sweep)
    line = peaks.transfer_unit_bytes("cpu")
    # every width in calls of the fewest rows; larger calls only while a call fetches at most
    # RANDOM_CALL_MAX_BYTES (2**20 rows of 1 KiB, a GiB a call, was most of the sweep's time)
    wanted = {
        (row, calls)
        for row in peaks.RANDOM_ROW_BYTES
        for calls in peaks.RANDOM_CALL_ROWS
        if calls == 2**16 or calls * max(row, line) <= 64 * 2**20
    }
    assert (4, 2**20) in wanted
    assert (256, 2**18) in wanted
    assert (1024, 2**18) not in wanted
    for table in tables:
        assert {(point[1], point[2]) for point in sweep if point[0] == table} == wanted
    assert (2**14, 4, 2**16, 2**16 / 1e-3) in sweep  # one line a row, rows per second
    assert (2**14, 1024, 2**16, 2**16 * (1024 // line) / 1e-3) in sweep


def test_counting_operations_writes_nothing_of_the_profilers_own(
    capfd: pytest.CaptureFixture[str],
) -> None:
    # kineto writes "USDT:... profiler_start" and "... profiler_stop" to file descriptor 2 for
    # every profiler; they would fill the CLI's output, two for each kernel counted
    assert count_dispatch(lambda: torch.ones(3) + 1).ops == 2  # the fill and the add
    with cpu_profiler():
        os.write(2, b"USDT:2026-12-04 18:38:35 1:1 SyncActivityProfilerHandler.cpp:52] x\n")
        os.write(2, b"a warning of the kernel's own\n")
    err = capfd.readouterr().err
    assert err == "a warning of the kernel's own\n"
    assert KINETO_LINE.match("STAGE:2026-12-04 19:21:00 26414:26414 Handler.cpp:51] Warm Up")
    assert not KINETO_LINE.match("UserWarning: USDT:2026 is not a date")


def test_the_latency_floor_is_the_least_of_its_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    # torch.neg into an existing tensor and a one-element copy: a call that wraps a Python
    # number (the old floor, torch.add(x, 1, out=y)) took several times as long
    from gpuconcepts.kernels import dispatch

    seen: list[tuple[object, bool]] = []

    def fake(call: Callable[[], object], _device: str, **kw: Any) -> tuple[float, ...]:
        out = call()
        seen.append((type(out), kw["flush"]))
        return (3e-6, 4e-6) if len(seen) == 1 else (2e-6, 1e-6)

    monkeypatch.setattr(dispatch, "time_function", fake)
    # the cheaper call at its median, the statistic the kernels are read by
    assert dispatch.latency_floor("cpu", cold=True) == 1.5e-6
    assert seen == [(torch.Tensor, True), (torch.Tensor, True)]
