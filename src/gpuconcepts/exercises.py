r"""The answers of the exercises on the model, distributed and analyze pages, computed.

Each exercise's answer comes from the catalogue (and, for a whole model, from
:mod:`gpuconcepts.model`), never from a hand-typed number; each function's doctest is the
answer the page shows, so a change in a formula that moves an answer fails here first.

>>> zero_stage_that_fits(n_params=7_500_000_000, N_d=64, memory_bytes=32_000_000_000)
1
>>> gpipe_micro_batches(p=4, bubble=0.1)
27
"""

from __future__ import annotations

from fractions import Fraction

from gpuconcepts import formulas
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.hardware import GPUS
from gpuconcepts.units import plain_number

K_OPT_ADAM = 12
"""Mixed-precision Adam's optimizer bytes per parameter: fp32 master weights, two moments."""


# -- distributed ------------------------------------------------------------------------------
def zero_stage_that_fits(
    *, n_params: int, N_d: int, memory_bytes: int, k_opt: int = K_OPT_ADAM
) -> int | None:
    """The lowest ZeRO stage whose model states per device fit ``memory_bytes``, or None.

    >>> zero_stage_that_fits(n_params=7_500_000_000, N_d=64, memory_bytes=16_000_000_000)
    3
    """
    for stage in range(4):
        need = formulas.zero_memory_per_device(n_params=n_params, N_d=N_d, stage=stage, k_opt=k_opt)
        if need <= memory_bytes:
            return stage
    return None


def gpipe_micro_batches(*, p: int, bubble: float) -> int:
    """The fewest micro-batches that bring GPipe's bubble (of the whole time) to ``bubble``.

    >>> gpipe_micro_batches(p=8, bubble=0.05)
    133
    """
    return _fewest(lambda m: formulas.pipeline_bubble_fraction(p=p, m=m) <= bubble)


def interleaved_micro_batches(*, p: int, v: int, bubble: float) -> int:
    """The fewest micro-batches that bring the interleaved bubble (of the ideal time) to
    ``bubble``, with ``v`` chunks per device.

    >>> interleaved_micro_batches(p=4, v=2, bubble=0.1)
    15
    """
    return _fewest(lambda m: formulas.pipeline_bubble_fraction_interleaved(p=p, m=m, v=v) <= bubble)


def rowwise_over_tablewise(*, W: int, B: int = 2048, n_tables: int = 8, d: int = 128) -> Fraction:
    """How many times the bytes of a table-wise all-to-all a row-wise one sends (it is W).

    >>> rowwise_over_tablewise(W=8)
    Fraction(8, 1)
    """
    sizes = {"W": W, "B": B, "n_tables": n_tables, "d": d, "s": 4}
    return Fraction(formulas.rowwise_alltoall_bytes(**sizes)) / Fraction(
        formulas.tablewise_alltoall_bytes(**sizes)
    )


def moe_growth(*, n_tokens: int, top_k: int, d: int, s: int, W_from: int, W_to: int) -> Fraction:
    """The MoE all-to-all bytes per device on ``W_to`` devices over those on ``W_from``.

    >>> moe_growth(n_tokens=4096, top_k=2, d=4096, s=2, W_from=8, W_to=64)
    Fraction(9, 8)
    """
    sizes = {"n_tokens": n_tokens, "top_k": top_k, "d": d, "s": s}
    return Fraction(formulas.moe_alltoall_bytes(**sizes, W=W_to)) / Fraction(
        formulas.moe_alltoall_bytes(**sizes, W=W_from)
    )


# -- model -----------------------------------------------------------------------------------
def best_draft_length(*, alpha: float, c_draft: float, longest: int = 16) -> tuple[int, float]:
    """The draft length gamma (1 to ``longest``) with the largest speculative speedup, and it.

    >>> gamma, speedup = best_draft_length(alpha=0.8, c_draft=0.05)
    >>> gamma, round(speedup, 2)
    (8, 3.09)
    """
    gamma = max(
        range(1, longest + 1),
        key=lambda g: formulas.speculative_speedup(alpha=alpha, gamma=g, c_draft=c_draft),
    )
    return gamma, float(formulas.speculative_speedup(alpha=alpha, gamma=gamma, c_draft=c_draft))


# -- analyze ---------------------------------------------------------------------------------
def linear_compute_bound_batch(*, d_in: int, d_out: int, gpu: str, dtype: str) -> int | None:
    """The batch from which a ``d_in`` × ``d_out`` linear layer (4-byte values for fp32 and tf32,
    2 for fp16 and bf16) is compute-bound on ``gpu`` in ``dtype``.

    >>> linear_compute_bound_batch(d_in=4096, d_out=4096, gpu="H100 SXM", dtype="fp32")
    41
    >>> linear_compute_bound_batch(d_in=4096, d_out=4096, gpu="H100 SXM", dtype="tf32")
    345
    """
    spec = GPUS[gpu]
    peak = spec.peak(dtype)
    if peak is None:
        raise GpuConceptsError(f"{gpu} has no {dtype} peak in its datasheet")
    s = 4 if dtype in ("fp32", "tf32") else 2
    ridge = formulas.ridge_point(P=peak, beta=spec.bytes_per_s)
    return formulas.mlp_intensity.reaches(ridge, "B", d_in=d_in, d_out=d_out, s=s)


def _fewest(holds: object, *, limit: int = 1_000_000) -> int:
    """The smallest whole m from 1 at which ``holds(m)`` is true."""
    assert callable(holds)
    for m in range(1, limit + 1):
        if holds(m):
            return m
    raise GpuConceptsError(
        f"no value up to {plain_number(limit)} meets the condition"
    )  # pragma: no cover
