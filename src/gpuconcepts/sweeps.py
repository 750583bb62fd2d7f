"""The peaks' fixed sweeps: the GEMM shapes of the compute peak, the GEMM sweep's rows and
widths, the cold sweep's smallest read and the rounds of every sweep, without torch.

:mod:`gpuconcepts.kernels.peaks` runs the sweeps and names these too (``from
gpuconcepts.kernels.peaks import GEMM_SHAPES`` keeps working); they sit here so that a page
which only says them in a sentence needs no torch (README, Rules: 3). The sizes that change with
the device class are in ``conf/presets.toml``, read by :mod:`gpuconcepts.sizes`.

>>> GEMM_SWEEP_ROWS[0], GEMM_SWEEP_WIDTHS[-1], SWEEP_ROUNDS
(1, 2048, 9)
"""

from __future__ import annotations

from gpuconcepts.units import MiB

__all__ = [
    "COLD_SMALLEST",
    "GEMM_SHAPES",
    "GEMM_SWEEP_ROWS",
    "GEMM_SWEEP_WIDTHS",
    "SWEEP_ROUNDS",
]

SWEEP_ROUNDS = 9
"""Rounds of each sweep (GEMM shapes, cache sizes, random rows:
:func:`~gpuconcepts.kernels.peaks.best_in_rounds`). A sweep point is a ceiling, the best of its
rounds: on the 2-core CPU (2026-12-03) three rounds of the GEMM sweep left a 64 × 512 product
at 125-141 GFLOP/s, nine at 151-156, and nn.RNN's steps of that product beat the three-round
bound; nine rounds of the whole GEMM sweep take about 7 s there."""

GEMM_SHAPES = ((1.0, 1.0, 1.0), (4.0, 0.5, 0.5), (0.5, 4.0, 0.5), (0.5, 0.5, 4.0))
"""The GEMM shapes of the compute peak, (m, k, n) as multiples of the presets' ``gemm_n``: the
square, a tall one (many rows: an MLP at a large batch), a deep one (a long reduction) and a
wide one. All do the square's FLOPs. A library tiles each shape differently, and the peak is the
best of them: a roof must sit above every kernel the machine runs."""

COLD_SMALLEST = MiB
"""The smallest read of the cold sweep (:func:`~gpuconcepts.kernels.peaks.cold_reads`)."""

GEMM_SWEEP_ROWS = (1, 2, 4, 8, 16, 32, 64, 256, 1024, 4096)
"""Rows of the GEMM sweep's products: a batch of one (a matrix-vector product) up to the rows
at which a library's tiles are full."""

GEMM_SWEEP_WIDTHS = (16, 32, 64, 128, 256, 512, 1024, 2048)
"""Widths (columns and depth) of the GEMM sweep's products: each power of two that the book's
kernels use (an RNN step's d_in + d_h, an MLP's d)."""
