r"""What the whole-model experiments measured, as plain values a Run saves and reads back.

:mod:`gpuconcepts.kernels.decoder` runs the experiments and returns these values;
:mod:`gpuconcepts.claims.wholemodel` judges them. Neither is needed to read or write them:
importing this module loads no torch, so a saved run can be judged again on a machine
without it.

>>> sizes = wholemodel_sizes("cpu", quick=True)
>>> sizes.decode.dtype, wholemodel_sizes("cuda", quick=False).decode.dtype, sizes.repeats
('float32', 'bfloat16', 5)
>>> from gpuconcepts.records import from_record
>>> from_record(WholeModelSizes, sizes.to_dict()) == sizes
True
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

from gpuconcepts.model import ModelShape
from gpuconcepts.records import to_record


@dataclass(frozen=True)
class BackwardForward:
    """FLOPs counted by ``FlopCounterMode`` and seconds timed, forward and backward.

    ``backward_*`` is the forward-and-backward run less the forward one. ``forward_seconds[i]``
    and ``step_seconds[i]`` were timed back to back (see
    :func:`gpuconcepts.kernels.decoder.backward_forward`). The ``predicted_*`` FLOPs are
    ``forward_flops_per_token`` and ``training_flops_per_token`` at the stack's weight count,
    times the tokens.
    """

    tokens: int
    n_params: int
    forward_flops: int
    backward_flops: int
    predicted_forward_flops: int
    predicted_backward_flops: int
    forward_seconds: tuple[float, ...]
    step_seconds: tuple[float, ...]


@dataclass(frozen=True)
class DecodeSweep:
    """One decode step (one new token per sequence, a cache of ``cached`` tokens) per batch.

    ``weight_bytes`` are the bytes of every weight a step multiplies by (``weight_memory`` at
    :func:`gpuconcepts.model.matmul_params`) and ``cache_bytes[i]`` the KV cache of batch
    ``batches[i]`` (``gqa_kv_cache_memory`` × layers).

    When ``reference_seconds`` is given, the steps and the roof of reading weights ran in
    paired rounds: ``seconds[i][r]`` and ``reference_seconds[r]`` were timed in round ``r``,
    side by side. The reference is a batch-1 product through as many weight bytes as the
    model's matrices (``reference_bytes`` per call; runs recorded before 2026-12-01 timed the
    STREAM triad instead, see :data:`~gpuconcepts.claims.thresholds.DECODE_FLOOR_CHANGES`).
    """

    shape: ModelShape
    cached: int
    batches: tuple[int, ...]
    seconds: tuple[tuple[float, ...], ...]
    weight_bytes: int
    cache_bytes: tuple[int, ...]
    reference_seconds: tuple[float, ...] = ()
    reference_bytes: int = 0

    @property
    def paired(self) -> bool:
        """True when the steps and the reference were timed in the same rounds."""
        return bool(self.reference_seconds) and all(
            len(t) == len(self.reference_seconds) for t in self.seconds
        )

    def tokens_per_second(self) -> tuple[float, ...]:
        """Tokens per second at each batch, at the median repetition (the book's one statistic)."""
        return tuple(
            B / statistics.median(t) for B, t in zip(self.batches, self.seconds, strict=True)
        )


@dataclass(frozen=True)
class TrainingPeak:
    """Peak bytes of one Adam training step (fp32), beside the states it must hold.

    ``state_bytes``: weights, gradients and Adam's two moments, counted from the tensors;
    ``peak_bytes``: the most bytes live at once during the step (allocator peak on CUDA, the
    profiler's memory events on a CPU), including the weights and moments live before it.
    """

    n_params: int
    tokens: int
    peak_bytes: int
    state_bytes: int


@dataclass(frozen=True)
class WholeModelSizes:
    """Sizes of the whole-model experiments on one device class."""

    backward: dict[str, int]
    decode: ModelShape
    batches: tuple[int, ...]
    cached: int
    training: ModelShape
    training_batch: int
    repeats: int
    long_cached: int = 0
    """Tokens cached per sequence in the second decode sweep, at a long context."""
    long_batches: tuple[int, ...] = ()
    """Its batches (none: no long-context sweep, as in runs recorded before it)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict of every field."""
        return to_record(self)


def wholemodel_sizes(device: str, quick: bool) -> WholeModelSizes:
    """Small on a CPU (the book's page runs in seconds), larger on a GPU.

    The CPU sizes are already the small ones, so ``quick`` takes fewer repetitions only. The
    long-context decode sweep caches 16,384 tokens per sequence on a CPU: in its float32 model
    that is 64 MiB a sequence, twice a server-class last-level cache, so the caches stream from
    DRAM (448 MiB for its three batches together), and the knee with the cache (about batch
    1) lies far enough below the weights-only one (about batch 9 to 13 at a CPU's ridge point of
    4 to 7 FLOP/byte) for the pass region to tell them apart; on a GPU, 8,192 tokens, 64 MiB a
    sequence in bfloat16, 4 GiB at batch 64, against a weights-only knee in the hundreds.
    """
    repeats = 5 if quick else 7
    if device == "cuda":
        return WholeModelSizes(
            backward={"tokens": 8192, "d": 2048, "d_ff": 8192, "blocks": 4},
            decode=ModelShape("decode-gpu", d=2048, layers=4, d_ff=8192, heads=16, n_kv=4,
                              d_head=128, vocab=32000, seq=64, dtype="bfloat16"),
            batches=(1, 4, 16, 64, 128, 256, 512, 1024, 2048),
            cached=64,
            training=ModelShape("train-gpu", d=1024, layers=4, d_ff=4096, heads=8, n_kv=8,
                                d_head=128, vocab=8192, seq=256, dtype="float32"),
            training_batch=4,
            repeats=repeats,
            long_cached=8192,
            long_batches=(1, 4, 16, 64),
        )  # fmt: skip
    return WholeModelSizes(
        backward={"tokens": 512, "d": 512, "d_ff": 2048, "blocks": 1},
        decode=ModelShape("decode-cpu", d=768, layers=2, d_ff=3072, heads=12, n_kv=4,
                          d_head=64, vocab=8192, seq=16, dtype="float32"),
        batches=(1, 4, 16, 64),
        cached=16,
        training=ModelShape("train-cpu", d=256, layers=2, d_ff=1024, heads=4, n_kv=4,
                            d_head=64, vocab=1024, seq=64, dtype="float32"),
        training_batch=2,
        repeats=repeats,
        long_cached=16384,
        long_batches=(1, 2, 4),
    )  # fmt: skip


@dataclass(frozen=True)
class WholeModelResults:
    """Everything the whole-model experiments measured, with the sizes they ran at."""

    sizes: WholeModelSizes
    backward: BackwardForward
    decode: DecodeSweep
    training: TrainingPeak
    long_decode: DecodeSweep | None = None
    """The decode sweep at ``sizes.long_cached`` tokens (None: not run)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict: ``sizes``, ``backward``, ``decode``, ``training``."""
        return to_record(self)
