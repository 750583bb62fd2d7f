"""Benchmark of the formula core: import time, scalar exact evaluation, vectorised evaluation.

Run with ``nox -s bench`` or ``python benchmarks/bench_formulas.py``. Numbers are reported,
never asserted: the vectorised figure is a ratio against hand-written numpy in the same run.
Goals: import ≤ 0.6 s, vectorised ≤ 3× numpy.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import timeit

import numpy as np

from gpuconcepts import formulas as f


def import_seconds(repeats: int = 7) -> tuple[float, float]:
    """Median wall time of a fresh ``import gpuconcepts`` and of a bare interpreter start."""

    def run(code: str) -> float:
        start = timeit.default_timer()
        subprocess.run([sys.executable, "-c", code], check=True)
        return timeit.default_timer() - start

    with_import = statistics.median(run("import gpuconcepts") for _ in range(repeats))
    bare = statistics.median(run("pass") for _ in range(repeats))
    return with_import, bare


def per_call(fn: object, number: int) -> float:
    """Best-of-5 seconds per call."""
    return min(timeit.repeat(fn, number=number, repeat=5)) / number  # type: ignore[arg-type]


def main() -> None:
    total, bare = import_seconds()
    print(
        f"import gpuconcepts        {total:.3f} s wall ({total - bare:.3f} s over a bare interpreter; goal ≤ 0.6 s)"
    )

    scalar = per_call(lambda: f.embedding_memory(N=100_000_000, d=128, s=4), 2000)
    worked = per_call(lambda: f.embedding_memory.worked(N=100_000_000, d=128, s=4), 200)
    print(f"scalar exact evaluation   {scalar * 1e6:.1f} µs per call (embedding_memory)")
    print(f"worked derivation         {worked * 1e6:.1f} µs per call")

    rng = np.random.default_rng(0)
    n = 1_000_000
    B = rng.integers(1, 4096, n)
    d_in = rng.integers(1, 8192, n)
    d_out = rng.integers(1, 8192, n)
    f.mlp_intensity.vectorized(B=B[:10], d_in=d_in[:10], d_out=d_out[:10], s=2)  # build the cache

    def ours() -> object:
        return f.mlp_intensity.vectorized(B=B, d_in=d_in, d_out=d_out, s=2)

    def by_hand() -> object:
        b, i, o = B.astype(np.float64), d_in.astype(np.float64), d_out.astype(np.float64)
        return 2 * b * i * o / (2 * (b * i + i * o + b * o))

    np.testing.assert_allclose(ours(), by_hand(), rtol=1e-12)
    t_ours, t_hand = per_call(ours, 3), per_call(by_hand, 3)
    print(
        f"vectorised, 1e6 points    {t_ours * 1e3:.1f} ms vs numpy by hand {t_hand * 1e3:.1f} ms:"
        f" ratio {t_ours / t_hand:.2f}× (goal ≤ 3×; mlp_intensity)"
    )


if __name__ == "__main__":
    main()
