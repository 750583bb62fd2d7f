"""Benchmark of the kernels against peers measured in the same run, and against the roofline.

Run with ``nox -s bench`` or ``python benchmarks/bench_kernels.py [--device cpu] [--quick]``.
Figures are reported, never asserted. Goals:

* our GEMM (the compute peak: the faster of ``torch.mm`` and oneDNN) ≥ 0.9× numpy ``matmul``
  on the same shape and dtype;
* our measured bandwidth (``copy_`` and the STREAM peak) ≥ 0.9× numpy ``copyto`` on the same arrays;
* each kernel's measured time within [1, 2.5] × its roofline-predicted time.

The peer and our kernel are timed in alternating rounds (best of each), so that a noisy
neighbour slows both alike.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable

import numpy as np

from gpuconcepts import formulas
from gpuconcepts.measure import cpu_last_level_cache_bytes, device_name, resolve_device

ROUNDS = 5
GOAL_PEER = 0.9
GOAL_ROOF = (1.0, 2.5)


def best_seconds(fn: Callable[[], object], repeats: int) -> float:
    """Best wall time of ``repeats`` calls after one warm-up call."""
    fn()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def alternate(ours: Callable[[], float], peer: Callable[[], float]) -> tuple[float, float]:
    """Best rate of each over ROUNDS alternating rounds."""
    a = b = 0.0
    for _ in range(ROUNDS):
        a = max(a, ours())
        b = max(b, peer())
    return a, b


def gemm_vs_numpy(n: int) -> dict[str, float]:
    """FLOP/s of each of our float32 GEMM paths (``kernels.peaks.gemm_flops``) and numpy's."""
    from gpuconcepts.kernels.peaks import gemm_backends, gemm_flops

    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    b = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    c = np.empty((n, n), dtype=np.float32)
    flops = formulas.mlp_flops(B=n, d_in=n, d_out=n)
    rates = dict.fromkeys((*gemm_backends("cpu"), "numpy"), 0.0)
    for _ in range(ROUNDS):
        for backend in gemm_backends("cpu"):
            rate = gemm_flops("cpu", n=n, dtype="float32", repeats=3, backend=backend)
            rates[backend] = max(rates[backend], rate)
        rates["numpy"] = max(
            rates["numpy"], flops / best_seconds(lambda: np.matmul(a, b, out=c), 3)
        )
    return rates


def copy_vs_numpy(array_bytes: int) -> tuple[float, float, float]:
    """Bytes/s of our copy, our triad and numpy ``copyto`` on float32 arrays of that size."""
    from gpuconcepts.kernels.peaks import COLUMNS, copy_bandwidth, triad_bandwidth

    rows = array_bytes // (COLUMNS * 4)
    src = np.ones((rows, COLUMNS), dtype=np.float32)
    dst = np.zeros_like(src)
    moved = formulas.stream_copy_bytes(N=rows, d=COLUMNS, s=4)
    ours, peer = alternate(
        lambda: copy_bandwidth("cpu", array_bytes=array_bytes, repeats=3),
        lambda: moved / best_seconds(lambda: np.copyto(dst, src), 3),
    )
    triad = max(triad_bandwidth("cpu", array_bytes=array_bytes, repeats=3) for _ in range(ROUNDS))
    return ours, triad, peer


def verdict(ok: bool) -> str:
    return "meets goal" if ok else "BELOW GOAL"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu", help="auto, cpu or cuda (default cpu)")
    parser.add_argument("--quick", action="store_true", help="the --quick preset sizes")
    args = parser.parse_args(argv)

    from gpuconcepts.collect import collect
    from gpuconcepts.hardware import format_table
    from gpuconcepts.kernels import load_presets
    from gpuconcepts.roofline import place

    device = resolve_device(args.device)
    started = time.perf_counter()
    presets = load_presets(device, args.quick)
    print(f"bench_kernels on {device_name(device)}{' (quick sizes)' if args.quick else ''}")

    if device == "cpu":
        n = presets["peaks"]["gemm_n"]
        rates = gemm_vs_numpy(n)
        peer = rates.pop("numpy")
        ours = max(rates.values())
        print(f"\nGEMM {n}x{n}x{n} float32, best of {ROUNDS} alternating rounds:")
        for backend, rate in rates.items():
            print(f"  ours ({backend}): {rate / 1e9:.1f} GFLOP/s = {rate / peer:.2f} x numpy")
        print(
            f"  numpy matmul: {peer / 1e9:.1f} GFLOP/s\n  our GEMM peak (fastest path) / numpy = "
            f"{ours / peer:.2f} (goal >= {GOAL_PEER}: {verdict(ours / peer >= GOAL_PEER)})"
        )
        array = max(presets["peaks"]["stream_mib"] * 1024**2, 4 * cpu_last_level_cache_bytes())
        copy, triad, peer_copy = copy_vs_numpy(array)
        best = max(copy, triad)
        print(
            f"bandwidth, {array // 1024**2} MiB float32 arrays: our copy {copy / 1e9:.1f} GB/s, "
            f"triad {triad / 1e9:.1f} GB/s, numpy copy {peer_copy / 1e9:.1f} GB/s\n"
            f"  copy/numpy copy {copy / peer_copy:.2f} ({verdict(copy / peer_copy >= GOAL_PEER)}), "
            f"peak (max of copy, triad)/numpy copy {best / peer_copy:.2f} "
            f"({verdict(best / peer_copy >= GOAL_PEER)})"
        )
    else:
        print("\n(numpy peers run on the CPU only; `gpuconcepts hardware` lists the datasheets)")

    print("\nmeasuring peaks and running every kernel ...", file=sys.stderr)
    run = collect(device, args.quick, claims=False, wholemodel=False, distributed=False)
    peaks, measurements = run.peaks, run.measurements
    print(
        f"\npeaks: {peaks.flops_per_s / 1e9:.1f} GFLOP/s ({peaks.dtype}), "
        f"{peaks.bytes_per_s / 1e9:.1f} GB/s, ridge {peaks.ridge_point:.1f} FLOP/B"
    )
    rows = [["kernel", "bound", "measured ms", "roofline ms", "measured/roofline", "goal [1, 2.5]"]]
    inside = 0
    for m in measurements:
        where = place(m, peaks)
        ok = GOAL_ROOF[0] <= where.ratio <= GOAL_ROOF[1]
        inside += ok
        note = "yes" if ok else ("faster than roof" if where.ratio < 1 else "slower")
        rows.append(
            [
                m.workload,
                where.bound,
                f"{m.seconds * 1e3:.3f}",
                f"{where.predicted_seconds * 1e3:.3f}",
                f"{where.ratio:.2f}",
                note,
            ]
        )
    print(format_table(rows))
    print(f"{inside}/{len(measurements)} kernels within [1, 2.5] of the roofline")
    print(f"wall time {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
