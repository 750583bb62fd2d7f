r"""What the whole-model experiments measured, as plain values a Run saves and reads back.

:mod:`gpuconcepts.kernels.decoder` runs the experiments and returns these values;
:mod:`gpuconcepts.claims.wholemodel` judges them. Neither is needed to read or write them:
importing this module loads no torch, so a saved run can be judged again on a machine
without it.

>>> from gpuconcepts.sizing import RunSizes
>>> sizes = RunSizes.resolve("cpu", quick=True, free_bytes=2**36).wholemodel
>>> gpu = RunSizes.resolve("cuda", False, free_bytes=2**36, device_cls="cuda-large").wholemodel
>>> sizes.decode.dtype, gpu.decode.dtype, sizes.repeats, sizes.timed_blocks
('float32', 'bfloat16', 6, 3)
>>> from gpuconcepts.records import from_record
>>> from_record(WholeModelSizes, sizes.to_dict()) == sizes
True
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any, ClassVar

from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.model import ModelShape
from gpuconcepts.records import to_record


@dataclass(frozen=True)
class BackwardForward:
    """FLOPs counted by ``FlopCounterMode`` and seconds timed, forward and backward.

    ``backward_*`` is the forward-and-backward run less the forward one. ``forward_seconds[i]``
    and ``step_seconds[i]`` were timed side by side, in round ``i`` of ``blocks`` independent
    blocks (see :func:`gpuconcepts.kernels.decoder.backward_forward`; runs recorded before
    2026-12-07 timed one block). The ``predicted_*`` FLOPs are ``forward_flops_per_token`` and
    ``training_flops_per_token`` at the stack's weight count, times the tokens.
    """

    OPTIONAL_KEYS: ClassVar[frozenset[str]] = frozenset({"blocks"})

    tokens: int
    n_params: int
    forward_flops: int
    backward_flops: int
    predicted_forward_flops: int
    predicted_backward_flops: int
    forward_seconds: tuple[float, ...]
    step_seconds: tuple[float, ...]
    blocks: int = 1


STREAM_TRIAD = "the STREAM triad"
"""The decode floor's reference since run schema 7: a canonical streaming kernel."""

BATCH_1_PRODUCT = "a batch-1 product through as many weight bytes"
"""The decode floor's reference of runs recorded from 2026-12-01 until run schema 7."""


@dataclass(frozen=True)
class DecodeSweep:
    """One decode step (one new token per sequence, a cache of ``cached`` tokens) per batch.

    ``weight_bytes`` are the bytes of every weight a step multiplies by (``weight_memory`` at
    :func:`gpuconcepts.model.matmul_params`) and ``cache_bytes[i]`` the KV cache of batch
    ``batches[i]`` (``gqa_kv_cache_memory`` × layers).

    When ``reference_seconds`` is given, the steps and the roof of reading weights ran in
    paired rounds: ``seconds[i][r]`` and ``reference_seconds[r]`` were timed in round ``r``,
    side by side, in ``blocks`` independent blocks (runs recorded before 2026-12-07 timed one:
    :func:`~gpuconcepts.measure.timing.time_in_blocks`). ``reference_kernel`` names that roof's
    kernel, moving ``reference_bytes`` per call: the STREAM triad on arrays that together move
    as many bytes as the weights (:data:`STREAM_TRIAD`, a canonical streaming kernel that never
    saw the step), or, in runs recorded from 2026-12-01 until the run schema 7, a batch-1
    product through as many weight bytes as the model's matrices (:data:`BATCH_1_PRODUCT`, the
    step's own kind of operation; the run's migration names it). See the change log,
    ``docs/changes.toml``, 2026-12-01 and 2026-12-07, decode floor.

    ``graphed``: each step was captured once as a CUDA graph and replayed, as servers run
    decode, so that the time is the GPU's and not Python's launching of its hundred-odd
    kernels (eager, the H200 took 10× the weights' floor at batch 1; see the change log,
    ``docs/changes.toml``, 2026-12-04, decode floor). Always False on a CPU.
    """

    OPTIONAL_KEYS: ClassVar[frozenset[str]] = frozenset({"graphed", "blocks"})

    shape: ModelShape
    cached: int
    batches: tuple[int, ...]
    seconds: tuple[tuple[float, ...], ...]
    weight_bytes: int
    cache_bytes: tuple[int, ...]
    reference_seconds: tuple[float, ...] = ()
    reference_bytes: int = 0
    graphed: bool = False
    blocks: int = 1
    reference_kernel: str = ""

    def __post_init__(self) -> None:
        if self.reference_seconds and not self.reference_kernel:
            raise GpuConceptsError(
                "DecodeSweep: reference_kernel must name the kernel timed beside the steps "
                "when reference_seconds is given (the floor's prediction says what it read)"
            )

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
    """Sizes of the whole-model experiments on one resolved device, from ``conf/presets.toml``
    (``[wholemodel.cpu]`` or ``[wholemodel.cuda]``, its ``quick`` table over it; the reasons
    for each size are written there), as a run's sizes resolve them
    (:class:`gpuconcepts.sizing.RunSizes`): small on a CPU, so the book's page runs in seconds,
    larger on a GPU. The CPU sizes are already the small ones, so ``quick`` takes fewer
    repetitions only."""

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
    timed_blocks: int = 1
    """Independent blocks the timings run in, ``repeats`` rounds in all (runs recorded before
    2026-12-07 timed one): at least :data:`~gpuconcepts.claims.thresholds.MIN_BLOCKS` in the
    presets, as the architectures' comparisons (``compare_blocks``), so that an interval
    includes run-to-run variation."""

    OPTIONAL_KEYS: ClassVar[frozenset[str]] = frozenset({"timed_blocks"})

    def __post_init__(self) -> None:
        if not 1 <= self.timed_blocks <= self.repeats:
            raise GpuConceptsError(
                f"WholeModelSizes: timed_blocks must be from 1 to the repeats ({self.repeats}); "
                f"got {self.timed_blocks}"
            )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict of every field."""
        return to_record(self)


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
