"""The parts of an analysis report, as values: one :class:`Layer` per call (its counts, its
time and the bound that labels it), one :class:`GpuPrediction` per datasheet GPU, and the rule
that names a call's bound (:func:`observed_bound`). :mod:`gpuconcepts.analysis.report` holds
the :class:`~gpuconcepts.analysis.report.Report` they make up, and re-exports them; this
module imports no other part of the analysis, so the passes that fill the values sit above it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from gpuconcepts.measure import Measurement
from gpuconcepts.roofline import Peaks, classify, verdict
from gpuconcepts.units import plain_number

ObservedBound = Literal["compute", "memory", "overhead"]

"""A call's bound in three words (see :func:`observed_bound`): *compute*, *memory* (any level
of the hierarchy) or *overhead* (the per-call or per-operation floor is its longest bound)."""

COUNTER = "FlopCounterMode"
"""``flops_source`` of a call whose FLOPs are what ``torch.utils.flop_counter`` counts."""

TENSORS = "tensors"
"""``bytes_source`` of a call whose bytes are its inputs, weights and outputs as seen."""


@dataclass(frozen=True)
class Layer:
    """One leaf module call (or one functional call between them), counted and timed.

    ``path`` is the module's name in ``model.named_modules()`` (the model's class name for
    the model itself); a functional call carries the path of the module whose ``forward``
    made it and a ``type`` such as ``F.scaled_dot_product_attention`` or ``Tensor.add``.
    ``call`` numbers the calls of a module used more than once (1, 2, ...). ``warning`` says
    why a call that computes was counted 0 FLOPs (empty otherwise); ``shares_timing_of`` is
    the index of the identical earlier call whose timing this one reuses (None: timed itself).
    """

    index: int
    path: str
    type: str
    call: int
    input_shapes: tuple[tuple[int, ...], ...]
    output_shapes: tuple[tuple[int, ...], ...]
    dtype: str
    flops: int
    flops_source: str
    counter_flops: int
    bytes: int
    bytes_source: str
    raw_seconds: tuple[float, ...]
    flushed: bool
    bound: ObservedBound
    predicted: Mapping[str, str | None] = field(default_factory=dict, compare=False)
    warning: str = ""
    shares_timing_of: int | None = None
    above_roof: bool = False
    """The call ran faster than its roof allows beyond its spread (the verdict's ``beaten``).
    ``bound`` stays the kind of the roof it beat."""
    faster_path: bool = False
    """Above the compute peak P but within the hardware's limit: a faster code path than P's
    square GEMM, a finding (:func:`~gpuconcepts.roofline.model.faster_path`). A call above its
    roof otherwise is an anomaly: a faulty timing, or a ceiling measured in a busy moment."""

    @property
    def name(self) -> str:
        """``path`` with the call number of a reused module: ``enc.0`` or ``enc.0 (call 2)``."""
        return self.path if self.call == 1 else f"{self.path} (call {self.call})"

    @property
    def timing(self) -> Measurement:
        """The call's repetitions and counts as a Measurement: its statistics (median, IQR,
        rates) are the ones of every measurement of the book."""
        return Measurement(self.name, "", {}, self.raw_seconds, self.flops, self.bytes)

    @property
    def seconds(self) -> float:
        """Median of the repetitions."""
        return self.timing.seconds

    @property
    def iqr_seconds(self) -> float:
        """Interquartile range of the repetitions."""
        return self.timing.iqr_seconds

    @property
    def intensity(self) -> float:
        """FLOPs per byte of minimal traffic (0 for a call without arithmetic)."""
        return self.timing.intensity

    @property
    def flops_per_s(self) -> float:
        """Attained FLOP/s at the median time."""
        return self.timing.flops_per_s

    @property
    def bytes_per_s(self) -> float:
        """Attained bytes/s at the median time."""
        return self.timing.bytes_per_s

    @property
    def note(self) -> str:
        """Why ``flops`` differs from what ``FlopCounterMode`` counted; empty when they agree."""
        if self.flops == self.counter_flops:
            return ""
        said = f"FlopCounterMode counts {plain_number(self.counter_flops)}"
        if self.counter_flops == 0:
            return f"{said}: it has no rule for the kernel this call ran; {self.flops_source} counts it"
        why = {"attention_flops_causal": " (FlopCounterMode ignores the causal mask)"}
        reason = why.get(self.flops_source, "")
        return f"{said}; {self.flops_source} counts {plain_number(self.flops)}{reason}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict: the fields and every derived value."""
        return {
            "index": self.index,
            "path": self.path,
            "type": self.type,
            "call": self.call,
            "input_shapes": [list(s) for s in self.input_shapes],
            "output_shapes": [list(s) for s in self.output_shapes],
            "dtype": self.dtype,
            "flops": self.flops,
            "flops_source": self.flops_source,
            "counter_flops": self.counter_flops,
            "note": self.note,
            "bytes": self.bytes,
            "bytes_source": self.bytes_source,
            "intensity": self.intensity,
            "raw_seconds": list(self.raw_seconds),
            "seconds": self.seconds,
            "iqr_seconds": self.iqr_seconds,
            "flushed": self.flushed,
            "flops_per_s": self.flops_per_s,
            "bytes_per_s": self.bytes_per_s,
            "bound": self.bound,
            "predicted": dict(self.predicted),
            "warning": self.warning,
            "shares_timing_of": self.shares_timing_of,
            "above_roof": self.above_roof,
            "faster_path": self.faster_path,
        }


@dataclass(frozen=True)
class GpuPrediction:
    """The model's calls on one datasheet GPU, by the roofline with a launch floor per call:
    time, and the shares of it in memory-bound and launch-bound calls.

    ``dtype`` and ``ridge_point`` are the model's dtype and its ridge on this GPU; a float32
    convolution or matmul that PyTorch's TF32 settings send to the tensor cores is judged
    against the TF32 peak instead (:func:`tf32_settings`).
    """

    gpu: str
    dtype: str
    ridge_point: float
    seconds: float
    memory_share: float
    overhead_share: float = 0.0
    launch_seconds: float = 0.0


NEAR_ROOF = 0.5
"""The share of a roof a call must reach to be called bound by it (the book's
``render.text.EXPLAINED``): a call further below its roof shows no bound of that roof."""


def observed_bound(m: Measurement, peaks: Peaks) -> ObservedBound:
    """The kind of the roof that bounds a call (the kind of
    :func:`gpuconcepts.roofline.verdict`'s binding roof, the rule every measurement of the book
    follows), in three words; the one place that decides a call's label. A call far below a
    memory or overhead roof keeps that roof's kind: the report shows how much of the roof it
    reached, and a low share is a finding, not another bound. A call above every roof keeps
    the kind of the roof it beat (:attr:`Layer.above_roof`), never "overhead".

    >>> p = Peaks("cpu", 100e9, 10e9, "float32", latency_seconds=1e-5)
    >>> calls = [Measurement("a", "cpu", {}, (1.0,), 50e9, 1e9),  # half the compute roof
    ...          Measurement("b", "cpu", {}, (1.0,), 1e9, 8e9),  # 80 % of the DRAM roof
    ...          Measurement("c", "cpu", {}, (2e-5,), 10.0, 8.0),  # only the latency bounds it
    ...          Measurement("d", "cpu", {}, (1.0,), 1e6, 2e8)]  # 2 % of the DRAM roof
    >>> [observed_bound(m, p) for m in calls]
    ['compute', 'memory', 'overhead', 'memory']
    >>> observed_bound(Measurement("f", "cpu", {}, (0.2,), 1e11, 1e8), p)  # 5x its roof
    'compute'

    A call under half of the compute roof at an intensity below the ridge (a depthwise
    convolution whose bytes a cache holds) is not called compute-bound:

    >>> from gpuconcepts.roofline.peaks import MemoryLevel
    >>> cached = Peaks("cpu", 100e9, 10e9, "float32", levels=(MemoryLevel("L2", 2**24, 1e12),))
    >>> found = verdict(Measurement("e", "cpu", {}, (2e-3,), 1e7, 5e6), cached)
    >>> found.kind, found.attained
    ('compute', 0.05)
    >>> observed_bound(Measurement("e", "cpu", {}, (2e-3,), 1e7, 5e6), cached)
    'memory'
    """
    found = verdict(m, peaks)
    below_ridge = classify(m.intensity, peaks) == "memory"
    if found.kind == "compute" and found.attained < NEAR_ROOF and below_ridge:
        # under half of the compute roof and below the ridge: the time does not show a
        # compute bound, so the label follows the roofline's side of the ridge
        return "memory"
    return found.kind  # beaten or not: the binding roof's kind, read from the roof object
