"""Serving a model on one datasheet GPU: what fits, how decode is bound, the latency floors, and
the speedup a speculative draft may bring.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from gpuconcepts import formulas as f
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.hardware import GPU, TORCH_DTYPES
from gpuconcepts.model.counts import active_matmul_params, kv_cache, params
from gpuconcepts.model.shape import ModelShape
from gpuconcepts.tables import aligned
from gpuconcepts.units import describe, describe_bytes, plain_number, significant


@dataclass(frozen=True)
class Draft:
    """A speculative-decoding draft: each drafted token is accepted with chance ``alpha``,
    ``gamma`` tokens are drafted per step, and a draft step costs ``cost`` target steps
    (None: not given, so the speedup is the upper bound of a free draft, ``c_draft = 0``)."""

    alpha: float
    gamma: int
    cost: float | None = None


@dataclass(frozen=True)
class Serving:
    """The serving answer for one shape on one GPU: what fits, how decode is bound, latency.

    Memory counts every weight (:func:`params`); the decode step's FLOPs and bytes count the
    matrix weights a token uses (:func:`active_matmul_params`). For a mixture of experts
    that is a step reading only the routed experts, so its intensity is an upper bound and
    its times stay lower bounds.
    """

    gpu: str
    dtype: str
    seq: int
    batch: int
    memory_bytes: int
    weights_bytes: int
    kv_cache_bytes: int
    max_batch: int
    intensity_at_max_batch: float | None
    intensity_limit: float
    ridge_point: float
    compute_bound_batch: int | None
    ttft_seconds: float
    tpot_seconds: float
    draft: Draft | None = None
    expected_tokens: float | None = None
    speculative_speedup: float | None = None
    mixture: bool = False

    @property
    def fits(self) -> bool:
        """Whether the weights and the KV cache of ``batch`` sequences fit in the GPU."""
        return self.weights_bytes + self.kv_cache_bytes <= self.memory_bytes

    @property
    def can_be_compute_bound(self) -> bool:
        """Whether some batch, memory aside, makes decode compute-bound at this context."""
        return self.compute_bound_batch is not None

    @property
    def compute_bound_within_memory(self) -> bool:
        """Whether a batch that fits makes decode compute-bound at this context."""
        return self.compute_bound_batch is not None and self.compute_bound_batch <= self.max_batch

    def verdict(self) -> str:
        """Whether decode can become compute-bound at this context, in one sentence."""
        limit = significant(self.intensity_limit)
        ridge = f"{significant(self.ridge_point)}"
        if self.compute_bound_batch is None:
            return (
                f"decode is never compute-bound at {plain_number(self.seq)} tokens: its intensity tends to "
                f"{limit} FLOP/byte as the batch grows, below the ridge point of {ridge}"
            )
        if self.compute_bound_batch > self.max_batch:
            return (
                f"decode turns compute-bound only from batch {plain_number(self.compute_bound_batch)}, but "
                f"at most {plain_number(max(self.max_batch, 0))} sequences of {plain_number(self.seq)} tokens fit"
            )
        return (
            f"decode turns compute-bound from batch {plain_number(self.compute_bound_batch)} (ridge point "
            f"{ridge}), and up to {plain_number(self.max_batch)} sequences of {plain_number(self.seq)} tokens fit"
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form, with the derived answers as fields."""
        record = asdict(self)
        record |= {
            "fits": self.fits,
            "decode_can_be_compute_bound": self.can_be_compute_bound,
            "compute_bound_within_memory": self.compute_bound_within_memory,
            "verdict": self.verdict(),
        }
        return record

    def lines(self) -> list[str]:
        """The answer as labelled lines (what ``gpuconcepts model`` prints under the table)."""
        total = self.weights_bytes + self.kv_cache_bytes
        fit = "fits" if self.fits else "does not fit"
        memory = describe_bytes(self.memory_bytes).split(" (", 1)[1].split(",", 1)[0]
        rows = [
            (
                f"weights + KV cache, batch {self.batch}",
                f"{describe(total, 'bytes')}: {fit} in {memory}",
            ),
            (
                f"largest batch of {plain_number(self.seq)} tokens that fits",
                f"{plain_number(max(self.max_batch, 0))}",
            ),
        ]
        if self.intensity_at_max_batch is not None:
            rows.append(
                (
                    f"decode intensity at batch {plain_number(self.max_batch)}",
                    describe(self.intensity_at_max_batch, "FLOP/byte"),
                )
            )
        rows += [
            (
                "decode intensity as the batch grows",
                f"→ {describe(self.intensity_limit, 'FLOP/byte')}",
            ),
            ("compute-bound?", self.verdict()),
            ("time to first token, at least", describe(self.ttft_seconds, "seconds")),
            ("time per output token, at least", describe(self.tpot_seconds, "seconds")),
        ]
        if self.draft is not None and self.expected_tokens is not None:
            rows.append(
                (
                    f"speculative, alpha {plain_number(self.draft.alpha)}, gamma {self.draft.gamma}",
                    f"{significant(self.expected_tokens)} tokens per target step",
                )
            )
            if self.speculative_speedup is not None:
                cost = self.draft.cost
                rows.append(
                    (
                        "speculative speedup, at most (free draft)"
                        if cost is None
                        else f"speculative speedup, draft cost {plain_number(cost)}",
                        f"{significant(self.speculative_speedup)}×",
                    )
                )
        head = f"serving on {self.gpu}, {plain_number(self.seq)} tokens per sequence, {self.dtype}"
        if self.mixture:
            head += " (experts: a step reads only the routed ones, an upper bound on intensity)"
        return [head, *aligned(rows, left=2, indent="  ").split("\n")]


def serving(shape: ModelShape, gpu: GPU, draft: Draft | None = None) -> Serving:
    """The serving answer of ``shape`` on ``gpu`` at its context (``seq``) and ``batch``.

    >>> from gpuconcepts.hardware import GPUS
    >>> from gpuconcepts.model import PRESETS
    >>> answer = serving(PRESETS["llama-2-7b-like"], GPUS["H100 SXM"])
    >>> answer.max_batch, answer.compute_bound_batch, round(answer.intensity_limit, 2)
    (30, None, 6.15)
    """
    s, seq, batch = shape.s, shape.seq, shape.batch
    peak = dtype_peak(shape, gpu)
    n_total, n_step = params(shape), active_matmul_params(shape)
    kv = {"S": seq, "n_layers": shape.layers, "n_kv": shape.n_kv, "d_head": shape.d_head, "s": s}
    max_batch = int(f.max_decode_batch(M_dev=gpu.memory_bytes, n_params=n_total, **kv))
    ridge = gpu.ridge_point(shape.dtype)
    at_max = f.decode_intensity(n_params=n_step, B=max_batch, **kv) if max_batch >= 1 else None
    expected = speedup = None
    if draft is not None:
        expected = f.speculative_expected_tokens(alpha=draft.alpha, gamma=draft.gamma)
        # No cost given: as c_draft → 0 the speedup tends to the tokens per step, the bound
        # of a free draft that no real draft beats.
        speedup = expected
        if draft.cost is not None:
            speedup = f.speculative_speedup(
                alpha=draft.alpha, gamma=draft.gamma, c_draft=draft.cost
            )
    return Serving(
        gpu=gpu.name,
        dtype=shape.dtype,
        seq=seq,
        batch=batch,
        memory_bytes=gpu.memory_bytes,
        weights_bytes=int(f.weight_memory(n_params=n_total, s=s)),
        kv_cache_bytes=kv_cache(shape, B=batch, S=seq),
        max_batch=max_batch,
        intensity_at_max_batch=None if at_max is None else float(at_max),
        intensity_limit=f.decode_intensity.supremum("B", n_params=n_step, **kv),
        ridge_point=ridge,
        compute_bound_batch=f.decode_intensity.reaches(ridge, "B", n_params=n_step, **kv),
        ttft_seconds=float(
            f.ttft_seconds_lower_bound(
                n_params=n_step, B=batch, S=seq, s=s, P=peak, beta=gpu.bytes_per_s
            )
        ),
        tpot_seconds=float(
            f.tpot_seconds_lower_bound(n_params=n_step, B=batch, P=peak, beta=gpu.bytes_per_s, **kv)
        ),
        draft=draft,
        expected_tokens=None if expected is None else float(expected),
        speculative_speedup=None if speedup is None else float(speedup),
        mixture=shape.experts > 1,
    )


def dtype_peak(shape: ModelShape, gpu: GPU) -> float:
    """The GPU's dense peak in the model's dtype; a GPU without that dtype is refused."""
    peak = gpu.peak(shape.dtype)
    if peak is None:
        listed = ", ".join(gpu.flops_per_s)
        raise GpuConceptsError(
            f"the {gpu.name} has no {shape.dtype} ({TORCH_DTYPES[shape.dtype]}) peak on its "
            f"datasheet, which lists {listed}: choose another --dtype or --gpu"
        )
    return peak
