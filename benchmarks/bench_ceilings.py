"""The project's ceilings beside the canonical tools, on one machine in one run (issue 45).

DRAM: the roof :func:`gpuconcepts.kernels.peaks.dram_ceiling` measures (the STREAM triad's
median on arrays far beyond every cache, sized from the working-set sweep) beside McCalpin's
STREAM triad, compiled and run by ``../shared/tools/stream.sh THREADS`` (arrays of 610 MiB) at
the run's thread count. Where gcc or the script is absent, beside a numpy triad on arrays of
512 MiB, split over the same threads (numpy's ufuncs release the GIL).

Compute: the peak :func:`gpuconcepts.kernels.peaks.gemm_flops` measures (a square GEMM of the
presets' ``gemm_n`` through ``torch.mm``, the path ``F.linear`` and ``nn.Linear`` run, at its
median) beside a 4,096² SGEMM through numpy's BLAS, median of its repetitions, and beside
the same product through ``torch.mm`` timed here apart from the ceiling's code (a gap to numpy
that this ratio does not show lies between the two libraries, not in the ceiling).

Prints each pair and their ratio, in alternating rounds so that a load that comes and goes
falls on both; the goal is within 15 %. STREAM reports its best of 20 repetitions, as it always
has: the project's best repetition is printed beside it, while the project's ceiling, like every
other number here, is a median. oneDNN's GEMM (the path torch's CPU convolutions take) and the
CPU's physical limit (table and measured clock) are printed too, as information: neither is the
peak, and a convolution faster than the peak is a finding.

    python benchmarks/bench_ceilings.py [--quick] [--threads N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import torch

from gpuconcepts import units
from gpuconcepts.kernels import load_presets
from gpuconcepts.kernels.peaks import (
    GEMM_REPEATS,
    dram_ceiling,
    gemm_backends,
    gemm_flops,
    peak_repeats,
    physical_flops,
    triad_kernel,
)
from gpuconcepts.measure import stream_rows
from gpuconcepts.measure.devices import cpu_model

GOAL = 0.15
"""How far a ceiling may sit from the canonical tool's number (issue 45's goal)."""

STREAM_SCRIPT = Path(__file__).resolve().parents[1].parent / "shared" / "tools" / "stream.sh"
"""McCalpin's STREAM, kept beside the project (never copied into it): ../shared/tools."""

FALLBACK_ARRAY_BYTES = 512 * 2**20
SGEMM_N = 4096
REPEATS = 5


def stream_triad(threads: int) -> tuple[float, str] | None:
    """STREAM's triad in bytes/s at ``threads``, and what ran it; None without gcc or the
    script."""
    if not STREAM_SCRIPT.is_file() or shutil.which("gcc") is None:
        return None
    out = subprocess.run(
        ["bash", str(STREAM_SCRIPT), str(threads)],
        capture_output=True, text=True, check=True, timeout=600,
    ).stdout  # fmt: skip
    rates = dict(line.split() for line in out.splitlines() if line.strip())
    return float(rates["triad"]), f"McCalpin STREAM (stream.sh, {threads} threads, best of 20)"


def numpy_triad(threads: int) -> tuple[float, str]:
    """A numpy triad ``a = b + 3c`` on three arrays of 512 MiB, each thread a slice, in tiles a
    cache holds (so the product never streams to DRAM); bytes/s at the median of
    :data:`REPEATS` (STREAM's count: three arrays' bytes)."""
    n = FALLBACK_ARRAY_BYTES // 8
    a, b, c = np.zeros(n), np.ones(n), np.full(n, 2.0)
    tile = 2**15

    def part(i: int) -> None:
        scratch = np.empty(tile)
        lo, hi = n * i // threads, n * (i + 1) // threads
        for start in range(lo, hi, tile):
            stop = min(start + tile, hi)
            np.multiply(c[start:stop], 3.0, out=scratch[: stop - start])
            np.add(b[start:stop], scratch[: stop - start], out=a[start:stop])

    times = []
    with ThreadPoolExecutor(threads) as pool:
        for _ in range(REPEATS + 1):
            start = time.perf_counter()
            list(pool.map(part, range(threads)))
            times.append(time.perf_counter() - start)
    return 3 * 8 * n / statistics.median(
        times[1:]
    ), f"numpy triad, 512 MiB arrays, {threads} threads"


def numpy_blas() -> str:
    """The BLAS numpy was built with, by name and version, as numpy reports it."""
    blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    return f"{blas.get('name', 'unknown')} {blas.get('version', '')}".strip()


def load() -> str:
    """The load average over the last minute, beside the cores: other work shares them."""
    return f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"


def numpy_sgemm() -> float:
    """FLOP/s of a 4,096² float32 product through numpy's BLAS, at the median of its
    repetitions (one warm-up)."""
    rng = np.random.default_rng(0)
    a = rng.random((SGEMM_N, SGEMM_N), dtype=np.float32)
    b = rng.random((SGEMM_N, SGEMM_N), dtype=np.float32)
    out = np.empty_like(a)
    return _sgemm_rate(lambda: np.matmul(a, b, out=out))


def torch_sgemm() -> float:
    """FLOP/s of the same 4,096² product through ``torch.mm`` (torch's own BLAS, the library
    the peak reads), timed here apart from the project's ceiling code: it tells whether a gap
    to numpy is the ceiling's measurement or the two libraries."""
    a, b = torch.rand(SGEMM_N, SGEMM_N), torch.rand(SGEMM_N, SGEMM_N)
    out = torch.empty_like(a)
    return _sgemm_rate(lambda: torch.mm(a, b, out=out))


def _sgemm_rate(product: Callable[[], object]) -> float:
    """FLOP/s of a 4,096² product at the median of :data:`REPEATS` (one warm-up first)."""
    times = []
    for _ in range(REPEATS + 1):
        start = time.perf_counter()
        product()
        times.append(time.perf_counter() - start)
    return 2 * SGEMM_N**3 / statistics.median(times[1:])


def ratios(
    name: str,
    pairs: list[tuple[float, float]],
    unit: str,
    peer: str,
    note: str,
    extra: list[str] | None = None,
) -> None:
    """Print each round's pair and ratio (and ``extra``, a note per round), then the median
    ratio against :data:`GOAL`."""
    for i, (ours, theirs) in enumerate(pairs, start=1):
        more = f"; {extra[i - 1]}" if extra else ""
        print(f"  {name} round {i}: project {units.si(ours, unit)}, {peer} "
              f"{units.si(theirs, unit)}, ratio {ours / theirs:.2f}{more}")  # fmt: skip
    middle = statistics.median(ours / theirs for ours, theirs in pairs)
    verdict = "within" if abs(middle - 1) <= GOAL else "outside"
    print(f"{name}: median ratio {middle:.2f} ({verdict} {units.percent(GOAL)}) [{note}]")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the quick presets' sizes")
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    parser.add_argument("--rounds", type=int, default=3, help="alternations of each pair")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    presets = load_presets("cpu", args.quick)
    kind = "quick" if args.quick else "full"
    print(f"CPU: {cpu_model()}; {args.threads} threads; presets: {kind}; {load()}")
    # the project's and the peer's measurements alternate, so a load that comes and goes
    # falls on both
    dram = dram_ceiling("cpu", presets)
    triad = triad_kernel("cpu", N=stream_rows(dram.array_bytes))
    pairs, best, peer = [], [], ""
    for _ in range(args.rounds):
        raw = triad.time(peak_repeats(presets)).raw_seconds  # triad_bandwidth's own timing
        theirs, peer = stream_triad(args.threads) or numpy_triad(args.threads)
        pairs.append((triad.bytes / statistics.median(raw), theirs))
        # STREAM reports its best of 20: the project's best beside it, for the same statistic
        best.append(f"project's best {units.si(triad.bytes / min(raw), 'B/s')}, "
                    f"ratio {triad.bytes / min(raw) / theirs:.2f}")  # fmt: skip
    note = (
        f"project: triad median on {units.binary_bytes(dram.array_bytes)} arrays; "
        f"dram_ceiling read {units.si(dram.bytes_per_s, 'B/s')}"
    )
    ratios("DRAM", pairs, "B/s", peer, note, best)
    n = presets["peaks"]["gemm_n"]
    pairs, each = [], []
    others = [b for b in gemm_backends("cpu") if b != "mm"]
    for _ in range(args.rounds):
        peak = gemm_flops("cpu", n=n, repeats=GEMM_REPEATS)  # the compute roof: torch.mm
        pairs.append((peak, numpy_sgemm()))
        own = torch_sgemm()
        rates = {b: gemm_flops("cpu", n=n, repeats=GEMM_REPEATS, backend=b) for b in others}
        each.append(f"torch.mm {SGEMM_N}² timed here {units.si(own, 'FLOP/s')}, ratio "
                    f"{peak / own:.2f}; "
                    + (", ".join(f"{b} (not the peak) {units.si(r, 'FLOP/s')}"
                                 for b, r in rates.items()) or "no other path"))  # fmt: skip
    limit = physical_flops("cpu")
    said = "unknown" if limit is None else units.si(limit, "FLOP/s")
    note = f"project: {n}² through torch.mm, median; physical limit {said}"
    ratios("compute", pairs, "FLOP/s", f"numpy {SGEMM_N}² SGEMM (median)", note, each)
    print(f"numpy's BLAS: {numpy_blas()}; {load()}")


if __name__ == "__main__":
    main()
