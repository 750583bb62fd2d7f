r"""Attention prefill's one traffic model: the minimal traffic as the bound, a tiled kernel's
traffic as what it moves, and L2 as what closes the gap.

Every page, exercise and panel that places attention prefill on a roofline reads it here.

* **The bound** (:data:`~gpuconcepts.formulas.attention_intensity`): Q, K and V read once and
  the output written once. No kernel has a higher intensity, so no kernel is compute-bound
  at a shorter prompt.
* **What a kernel moves** (:data:`~gpuconcepts.formulas.attention_tiled_intensity`): a flash
  kernel keeps :data:`TILE_ROWS` query rows on chip and streams every key and value past
  them, once per tile. Counted against HBM, its intensity levels off at 2·S_tile/s.
* **Why kernels still reach the bound:** the tiles of one head run at the same time on
  different SMs and read the same keys and values. While one head's K and V
  (:data:`~gpuconcepts.formulas.kv_cache_memory` at ``d = d_head``) fit in L2, the re-reads
  are L2 hits: HBM sees close to the minimal traffic, and the tiled traffic crosses between
  L2 and the SMs.

>>> p = Prefill(B=1, S=8192, d=4096, d_head=128, s=2)
>>> p.minimal_intensity, round(p.tiled_intensity, 1), p.tiled_limit
(4096, 126.0, 128.0)
>>> p.head_kv_bytes  # 4 MiB: one head's keys and values at 8,192 tokens in FP16
4194304
>>> from gpuconcepts.hardware import GPUS
>>> p.compute_bound_from(GPUS["H100 SXM"], "bf16")  # (bound, tiled from HBM)
(591, None)
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuconcepts import formulas
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.hardware import GPU

TILE_ROWS = 128
"""Query rows a flash-attention kernel keeps on chip per tile: FlashAttention-2's forward
block for heads of 64 to 128 (Dao, 2023); its on-chip memory bounds it."""


@dataclass(frozen=True)
class Prefill:
    """Attention over a prompt of ``S`` tokens, ``B`` sequences, width ``d`` in heads of
    ``d_head``, ``s`` bytes per value, tiles of ``tile_rows`` query rows."""

    B: int
    S: int
    d: int
    d_head: int
    s: int
    tile_rows: int = TILE_ROWS

    def __post_init__(self) -> None:
        if self.d % self.d_head:
            raise GpuConceptsError(
                f"attention prefill: d_head (head width) must divide d ({self.d}); "
                f"got {self.d_head}"
            )

    @property
    def _sizes(self) -> dict[str, int]:
        return {"B": self.B, "S": self.S, "d": self.d, "s": self.s}

    @property
    def minimal_intensity(self) -> float:
        """FLOP/byte with the minimal traffic: the bound."""
        return formulas.attention_intensity(**self._sizes)

    @property
    def tiled_intensity(self) -> float:
        """FLOP/byte of the tiled kernel, every K and V pass counted against HBM."""
        return formulas.attention_tiled_intensity(**self._sizes, S_tile=self.tile_rows)

    @property
    def tiled_limit(self) -> float:
        """The tiled intensity as the prompt grows without bound (2·S_tile/s)."""
        sizes = {k: v for k, v in self._sizes.items() if k != "S"}
        return formulas.attention_tiled_intensity.supremum("S", **sizes, S_tile=self.tile_rows)

    @property
    def head_kv_bytes(self) -> int:
        """Bytes of one head's keys and values for one sequence: what its tiles share in L2."""
        return int(formulas.kv_cache_memory(B=1, S=self.S, d=self.d_head, s=self.s))

    def head_fits_l2(self, gpu: GPU) -> bool:
        """Whether one head's keys and values fit in ``gpu``'s L2."""
        return self.head_kv_bytes <= gpu.l2_bytes

    def compute_bound_from(self, gpu: GPU, dtype: str) -> tuple[int | None, int | None]:
        """The prompt lengths from which attention is compute-bound on ``gpu`` in ``dtype``:
        with the minimal traffic (the bound), and with every tile's K and V read from HBM
        (None: at no length)."""
        ridge = gpu.ridge_point(dtype)
        sizes = {k: v for k, v in self._sizes.items() if k != "S"}
        bound = formulas.attention_intensity.reaches(ridge, "S", **sizes)
        tiled = formulas.attention_tiled_intensity.reaches(
            ridge, "S", **sizes, S_tile=self.tile_rows
        )
        return bound, tiled
