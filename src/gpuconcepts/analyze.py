r"""Your own model on the roofline: every leaf module call, counted, timed and placed.

:func:`analyze` runs one forward pass of any ``torch.nn.Module`` with hooks on its leaf
modules and a ``TorchFunctionMode`` that sees the functional calls made between them
(``x + y``, ``F.scaled_dot_product_attention``, ...), all inside ``FlopCounterMode``. Each
call becomes one :class:`Layer`, in execution order:

* FLOPs come from the catalogue's formula when the module type is known (``nn.Linear``,
  ``nn.Conv2d`` with any ``groups``, ``nn.EmbeddingBag``, ``nn.RNN``,
  ``nn.MultiheadAttention``, ``F.scaled_dot_product_attention``), otherwise from
  ``FlopCounterMode``; ``flops_source`` says which, and ``counter_flops`` keeps what
  ``FlopCounterMode`` counted for the same call, so the report's total can be set against
  ``FlopCounterMode``'s total for the whole pass, row by row (:attr:`Layer.note`).
* Bytes are the minimal traffic: the call's input tensors, its module's weights and buffers
  and its outputs, each counted once as seen; an embedding reads only the rows it looks up
  (``embedding_bag_bytes``), not its whole table.
* Each call is then replayed alone and timed with :mod:`gpuconcepts.measure`'s timers under
  the kernels' flush policy: caches are flushed before each repetition of a call whose
  intensity is below the ridge point.

The model is left as it was: the hooks are removed, the training flags restored, and a
model is only copied (never moved) when another device or dtype is asked for.

One difference from a plain run: modules with a fused inference fast path
(``nn.TransformerEncoderLayer`` in eval mode) skip it while any ``TorchFunctionMode`` is
active, so the analysis counts and times their ordinary path, submodule by submodule.

>>> import torch
>>> from gpuconcepts.roofline import Peaks
>>> model = torch.nn.Sequential(torch.nn.Linear(64, 32, bias=False), torch.nn.ReLU())
>>> report = analyze(model, torch.randn(8, 64), device="cpu",
...                  peaks=Peaks("cpu", 1e11, 1e10, "float32"), repeats=2)
>>> [(layer.path, layer.type, layer.flops, layer.flops_source) for layer in report.layers]
[('0', 'Linear', 32768, 'mlp_flops'), ('1', 'ReLU', 0, 'FlopCounterMode')]
>>> report.layers[0].bytes == 4 * (8 * 64 + 64 * 32 + 8 * 32)
True
>>> report.total_flops == report.counter_total
True
"""

# torch and matplotlib are imported inside functions on purpose (DESIGN rule 3).
# ruff: noqa: PLC0415

from __future__ import annotations

import contextlib
import copy
import json
import math
import re
import statistics
import sys
import types
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from gpuconcepts import formulas
from gpuconcepts.errors import GpuConceptsError, Terminated
from gpuconcepts.measure import Measurement
from gpuconcepts.roofline import Peaks, observe
from gpuconcepts.units import binary_bytes, plain_number, si

if TYPE_CHECKING:
    import torch
    from matplotlib.figure import Figure

ObservedBound = Literal["compute", "memory", "overhead"]

"""A call's observed bound in three words (see :func:`observed_bound`): *compute*, *memory* (any
level of the hierarchy) or *overhead* (only the latency floor explains its time, or it ran
faster than every roof: launch and framework cost, not the roofline, set its time)."""

COUNTER = "FlopCounterMode"
"""``flops_source`` of a call whose FLOPs are what ``torch.utils.flop_counter`` counts."""

TENSORS = "tensors"
"""``bytes_source`` of a call whose bytes are its inputs, weights and outputs as seen."""


PeaksLike = Peaks
"""The peaks an analysis reads: :class:`gpuconcepts.roofline.Peaks`."""


# -- values ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Layer:
    """One leaf module call (or one functional call between them), counted and timed.

    ``path`` is the module's name in ``model.named_modules()`` (the model's class name for
    the model itself); a functional call carries the path of the module whose ``forward``
    made it and a ``type`` such as ``F.scaled_dot_product_attention`` or ``Tensor.add``.
    ``call`` numbers the calls of a module used more than once (1, 2, ...).
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
        }


@dataclass(frozen=True)
class GpuPrediction:
    """The model's calls on one datasheet GPU, by the roofline: time and memory-bound share."""

    gpu: str
    dtype: str
    ridge_point: float
    seconds: float
    memory_share: float


@dataclass(frozen=True)
class Report:
    """What :func:`analyze` found: one :class:`Layer` per call, and the whole pass's totals.

    ``counter_total`` is ``FlopCounterMode``'s total for the whole forward pass; the layers
    partition it (``sum(l.counter_flops) == counter_total``), and :attr:`total_flops`
    differs from it exactly by the rows whose :attr:`Layer.note` is not empty.
    """

    model: str
    device: str
    device_name: str
    dtype: str
    peaks_dtype: str
    peak_flops_per_s: float
    peak_bytes_per_s: float
    layers: tuple[Layer, ...]
    counter_total: int
    forward_raw_seconds: tuple[float, ...]
    gpus: tuple[GpuPrediction, ...] = ()

    @property
    def ridge_point(self) -> float:
        """This machine's ridge point, FLOP/byte (``formulas.ridge_point``)."""
        return float(formulas.ridge_point(P=self.peak_flops_per_s, beta=self.peak_bytes_per_s))

    @property
    def total_flops(self) -> int:
        """Sum of every call's FLOPs (formulas where known)."""
        return sum(layer.flops for layer in self.layers)

    @property
    def total_bytes(self) -> int:
        """Sum of every call's minimal traffic."""
        return sum(layer.bytes for layer in self.layers)

    @property
    def seconds(self) -> float:
        """Sum of the calls' median times, each measured alone."""
        return sum(layer.seconds for layer in self.layers)

    @property
    def forward_seconds(self) -> float:
        """Median time of the plain forward pass, without any hook."""
        return float(statistics.median(self.forward_raw_seconds))

    @property
    def explained(self) -> tuple[Layer, ...]:
        """The calls whose FLOPs differ from ``FlopCounterMode``'s, each with its note."""
        return tuple(layer for layer in self.layers if layer.note)

    def time_share(self) -> dict[str, float]:
        """Fraction of the summed time spent in calls of each observed bound."""
        shares = {"compute": 0.0, "memory": 0.0, "overhead": 0.0}
        for layer in self.layers:
            shares[layer.bound] += layer.seconds / self.seconds
        return shares

    def share_sentence(self) -> str:
        """The time share per bound in words, largest first."""
        parts = sorted(self.time_share().items(), key=lambda kv: -kv[1])
        said = [f"{share:.0%} in {bound}-bound calls" for bound, share in parts if share >= 0.005]
        return "Of the measured time, " + ", ".join(said) + "."

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict: the machine, every layer, the totals and each GPU's prediction."""
        return {
            "model": self.model,
            "device": self.device,
            "device_name": self.device_name,
            "dtype": self.dtype,
            "peaks": {
                "dtype": self.peaks_dtype,
                "flops_per_s": self.peak_flops_per_s,
                "bytes_per_s": self.peak_bytes_per_s,
                "ridge_point": self.ridge_point,
            },
            "layers": [layer.to_dict() for layer in self.layers],
            "total_flops": self.total_flops,
            "counter_total": self.counter_total,
            "total_bytes": self.total_bytes,
            "seconds": self.seconds,
            "forward_raw_seconds": list(self.forward_raw_seconds),
            "forward_seconds": self.forward_seconds,
            "time_share": self.time_share(),
            "gpus": [vars(g) for g in self.gpus],
        }

    def to_json(self, indent: int | None = 2) -> str:
        """:meth:`to_dict` as JSON text."""
        return json.dumps(self.to_dict(), indent=indent)

    def rows(self) -> list[list[str]]:
        """The per-layer table as text cells, header first (the CLI's table)."""
        header = ["#", "layer", "type", "in → out", "FLOPs", "counted by", "bytes", "FLOP/B"]
        header += ["time", "IQR", "FLOP/s", "B/s", "bound here"]
        header += [g.gpu for g in self.gpus]
        return [header] + [
            [
                str(layer.index),
                layer.name,
                layer.type,
                shapes_text(layer.input_shapes, layer.output_shapes),
                plain_number(layer.flops),
                layer.flops_source,
                binary_bytes(layer.bytes),
                f"{layer.intensity:.3g}",
                si(layer.seconds, "s"),
                si(layer.iqr_seconds, "s"),
                si(layer.flops_per_s, "FLOP/s"),
                si(layer.bytes_per_s, "B/s"),
                layer.bound,
                *(layer.predicted.get(g.gpu) or "-" for g in self.gpus),
            ]
            for layer in self.layers
        ]

    def summary(self) -> list[str]:
        """The totals in words: FLOPs against FlopCounterMode, time, shares, each GPU."""
        lines = [
            (
                f"{self.model} on {self.device_name}, {self.dtype}: {len(self.layers)} calls, "
                f"{plain_number(self.total_flops)} FLOPs, {binary_bytes(self.total_bytes)} of "
                f"minimal traffic."
            ),
            f"FlopCounterMode counts {plain_number(self.counter_total)} FLOPs for the whole pass"
            + (
                "; the same total."
                if self.total_flops == self.counter_total
                else f"; the difference of {plain_number(self.total_flops - self.counter_total)}"
                " is the rows below:"
            ),
        ]
        lines += [f"  {layer.index} {layer.name}: {layer.note}" for layer in self.explained]
        lines.append(
            f"Calls one at a time: {si(self.seconds, 's')}; the plain forward pass: "
            f"{si(self.forward_seconds, 's')}. Peaks here ({self.peaks_dtype}): "
            f"{si(self.peak_flops_per_s, 'FLOP/s')}, {si(self.peak_bytes_per_s, 'B/s')}, "
            f"ridge {self.ridge_point:.3g} FLOP/B."
        )
        if self.dtype != self.peaks_dtype:
            lines.append(
                f"The compute roof here was measured in {self.peaks_dtype}; the model ran in "
                f"{self.dtype}, so its calls are judged against another dtype's peak."
            )
        lines.append(self.share_sentence())
        for g in self.gpus:
            lines.append(
                f"On {g.gpu} ({g.dtype}, ridge {g.ridge_point:.0f} FLOP/B) the roofline "
                f"predicts {si(g.seconds, 's')}, {g.memory_share:.0%} of it memory-bound."
            )
        return lines

    def memory_bound_everywhere(self) -> tuple[Layer, ...]:
        """Calls left of the ridge on every datasheet GPU: more FLOP/s would not speed them up."""
        return tuple(
            layer
            for layer in self.layers
            if all(bound in ("memory", None) for bound in layer.predicted.values())
        )

    def markdown(self) -> str:
        """The per-layer table for a book page, numbered as the figure's points, time with IQR."""
        from gpuconcepts.book import markdown_table

        header = ["#", "Call", "Shapes", "FLOPs", "Bytes", "FLOP/byte", "Time", "FLOP/s", "Bytes/s"]
        header += ["Here", "Datasheet GPUs"]
        rows = [
            [
                str(layer.index),
                f"`{layer.name}`<br><small>{layer.type}</small>",
                shapes_text(layer.input_shapes, layer.output_shapes),
                f"{si(layer.flops, '')}<br><small>{layer.flops_source}</small>",
                si(layer.bytes, "B"),
                f"{layer.intensity:.3g}",
                f"{_nbsp(si(layer.seconds, 's'))}<br><small>IQR&nbsp;{_nbsp(si(layer.iqr_seconds, 's'))}</small>",
                si(layer.flops_per_s, "FLOP/s") if layer.flops else "–",
                si(layer.bytes_per_s, "B/s"),
                f"**{layer.bound}**",
                _across_gpus(layer.predicted),
            ]
            for layer in self.layers
        ]
        return markdown_table(header, rows)

    def text(self) -> str:
        """The table and the summary, as ``gpuconcepts analyze`` prints them."""
        from gpuconcepts.hardware import format_table

        return format_table(self.rows()) + "\n\n" + "\n".join(self.summary())

    def figure(self) -> Figure:
        """This machine's roofline with one numbered point per call that does arithmetic.

        The points are coloured by observed bound; a call without FLOPs has no place on a
        log axis and is left out (it is in the table).
        """
        from matplotlib.lines import Line2D

        from gpuconcepts import figures

        shown = [layer for layer in self.layers if layer.flops > 0]
        # one point per layer, named by its row number (the measurement of its call)
        points = [
            Measurement(str(layer.index), "", {}, layer.raw_seconds, layer.flops, layer.bytes)
            for layer in shown
        ]
        peaks = Peaks(self.device, self.peak_flops_per_s, self.peak_bytes_per_s, self.peaks_dtype)
        fig = figures.roofline_chart(peaks, points)
        ax = fig.axes[0]
        colours = {"compute": "C1", "memory": "C0", "overhead": "C7"}
        for layer, point in zip(shown, ax.lines[-len(shown) :] if shown else [], strict=True):
            point.set_color(colours[layer.bound])
            point.set_markeredgecolor("black")
        handles, texts = ax.get_legend_handles_labels()
        for bound, colour in colours.items():
            if any(layer.bound == bound for layer in shown):
                handles.append(
                    Line2D([], [], marker="o", ls="", color=colour, markeredgecolor="black")
                )
                texts.append(f"{bound}-bound here")
        ax.legend(handles, texts, loc="lower right", fontsize=8)
        ax.set_title(f"{self.model} on {self.device}")
        return fig


def _nbsp(text: str) -> str:
    return text.replace(" ", "\u00a0")  # a time never breaks before its unit


def _across_gpus(predicted: Mapping[str, str | None]) -> str:
    """A call's bound on the datasheet GPUs in a few words.

    >>> _across_gpus({"A": "memory", "B": "memory", "C": None})
    'memory on all'
    >>> _across_gpus({"A": "compute", "B": "memory"})
    'compute on A; memory on B'
    """
    by_bound: dict[str, list[str]] = {}
    for gpu, bound in predicted.items():
        if bound is not None:
            by_bound.setdefault(bound, []).append(gpu)
    if len(by_bound) == 1:
        return f"{next(iter(by_bound))} on all"
    return "; ".join(f"{bound} on {', '.join(gpus)}" for bound, gpus in sorted(by_bound.items()))


def count_types(layers: Sequence[Layer]) -> str:
    """How many calls of each type, most first: ``3 EmbeddingBag, 2 Linear``.

    >>> count_types([])
    'none'
    """
    counts: dict[str, int] = {}
    for layer in layers:
        counts[layer.type] = counts.get(layer.type, 0) + 1
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return ", ".join(f"{n} {kind}" for kind, n in ranked) or "none"


def shapes_text(inputs: Sequence[tuple[int, ...]], outputs: Sequence[tuple[int, ...]]) -> str:
    """Shapes as ``8×64 → 8×32``; several tensors are joined by commas.

    >>> shapes_text([(8, 64)], [(8, 32)]), shapes_text([(2, 3), ()], [(2, 3)])
    ('8×64 → 8×32', '2×3, scalar → 2×3')
    """

    def one(shape: tuple[int, ...]) -> str:
        return "×".join(str(n) for n in shape) if shape else "scalar"

    return f"{', '.join(one(s) for s in inputs)} → {', '.join(one(s) for s in outputs)}"


def bound_at(intensity: float, ridge_point: float) -> Literal["memory", "compute"]:
    """``"memory"`` below the ridge point, else ``"compute"`` (as ``roofline.classify``)."""
    return "memory" if intensity < ridge_point else "compute"


def observed_bound(m: Measurement, peaks: Peaks) -> ObservedBound:
    """The roof that explains a call's measured time (:func:`gpuconcepts.roofline.observe`, the
    rule every measurement of the book follows), in three words.

    >>> p = Peaks("cpu", 100e9, 10e9, "float32", latency_seconds=1e-5)
    >>> calls = [Measurement("a", "cpu", {}, (1.0,), 50e9, 1e9),  # half the compute roof
    ...          Measurement("b", "cpu", {}, (1.0,), 1e9, 8e9),  # 80 % of the DRAM roof
    ...          Measurement("c", "cpu", {}, (2e-5,), 10.0, 8.0)]  # only the latency explains it
    >>> [observed_bound(m, p) for m in calls]
    ['compute', 'memory', 'overhead']
    """
    roof, _ = observe(m, peaks)
    if roof == "compute":
        return "compute"
    if roof in {level.name for level in peaks.memory_roofs}:
        return "memory"
    return "overhead"


# -- counting: which calls ran, with what tensors ------------------------------------------
def _tensors(value: object) -> Iterator[torch.Tensor]:
    import torch

    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _tensors(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _tensors(item)


def _unique_bytes(tensors: Iterator[torch.Tensor]) -> int:
    """Bytes of the tensors, each counted once (self-attention passes x as q, k and v)."""
    seen: dict[tuple[object, ...], int] = {}
    for t in tensors:
        key = (t.data_ptr(), tuple(t.shape), tuple(t.stride()), t.dtype)
        seen[key] = t.numel() * t.element_size()
    return sum(seen.values())


def _clone(value: Any) -> Any:
    """A copy of a call's arguments to replay it later (in-place layers change their input)."""
    import torch

    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, list | tuple):
        items = [_clone(v) for v in value]
        return type(value)(items) if isinstance(value, list) else tuple(items)
    if isinstance(value, dict):
        return {k: _clone(v) for k, v in value.items()}
    return value


def _shapes(value: object) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(int(n) for n in t.shape) for t in _tensors(value))


def _dtype(*groups: object) -> str:
    """The dtype a call computes in: its first floating-point tensor's, else its first tensor's."""
    tensors = [t for group in groups for t in _tensors(group)]
    chosen = next((t for t in tensors if t.is_floating_point()), tensors[0] if tensors else None)
    return str(chosen.dtype).removeprefix("torch.") if chosen is not None else "none"


@dataclass
class _Call:
    """A call seen during the counting pass, before it is timed."""

    path: str
    type: str
    call: int
    target: Callable[..., Any]
    module: Any
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    input_shapes: tuple[tuple[int, ...], ...]
    output_shapes: tuple[tuple[int, ...], ...]
    dtype: str
    counter_flops: int
    tensor_bytes: int


def _function_name(func: Callable[..., Any]) -> str:
    import torch
    import torch.nn.functional as F

    name = getattr(func, "__name__", repr(func))
    if getattr(F, name, None) is func:
        return f"F.{name}"
    if getattr(torch, name, None) is func:
        return f"torch.{name}"
    if getattr(func, "__qualname__", "").startswith(("TensorBase.", "Tensor.")):
        return f"Tensor.{name}"
    return str(name)


def _writes(name: str) -> bool:
    """An in-place tensor method (``add_``, ``__iadd__``) writes its input: traffic, no new tensor.

    >>> [_writes(n) for n in ("Tensor.add_", "Tensor.__iadd__", "Tensor.__iter__", "F.relu")]
    [True, True, False, False]
    """
    short = name.rsplit(".", 1)[-1]
    in_place_operators = {"add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul"}
    in_place_operators |= {"and", "or", "xor", "lshift", "rshift"}
    if short.startswith("__i") and short.endswith("__"):
        return short[3:-2] in in_place_operators
    return short.endswith("_") and not short.startswith("_")


class _Recorder:
    """Hooks on the model's modules plus a TorchFunctionMode: records every counted call."""

    def __init__(self, model: Any, counter: Any, root_name: str) -> None:
        import torch

        self.counter = counter
        self.calls: list[_Call] = []
        self.stack: list[tuple[str, str, tuple[tuple[int, ...], ...]]] = []
        self.leaf_depth = 0
        self.paused = False
        self.current: str | None = None
        self.handles: list[Any] = []
        self.times_called: dict[int, int] = {}
        self.open: dict[int, list[tuple[int, tuple[Any, ...], dict[str, Any], int]]] = {}
        leaves = _leaf_paths(model)
        for path, module in model.named_modules(remove_duplicate=True):
            if any(_inside(path, leaf) for leaf in leaves):
                continue
            name = path or root_name
            is_leaf = path in leaves
            self.handles.append(
                module.register_forward_pre_hook(self._pre(name, is_leaf), with_kwargs=True)
            )
            self.handles.append(
                module.register_forward_hook(self._post(name, is_leaf), with_kwargs=True)
            )
        recorder = self

        class Mode(torch.overrides.TorchFunctionMode):
            def __torch_function__(
                self,
                func: Callable[..., Any],
                types: Any,
                args: tuple[Any, ...] = (),
                kwargs: dict[str, Any] | None = None,
            ) -> Any:
                return recorder.function(func, args, kwargs or {})

        self.mode = Mode()

    def _pre(self, name: str, is_leaf: bool) -> Callable[..., None]:
        def hook(module: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
            self.paused = True
            try:
                self.stack.append((name, type(module).__name__, _shapes((args, kwargs))))
                if is_leaf:
                    self.leaf_depth += 1
                    before = int(self.counter.get_total_flops())
                    inputs = _unique_bytes(_tensors((args, kwargs)))
                    cloned = (_clone(args), _clone(kwargs))
                    self.open.setdefault(id(module), []).append((before, *cloned, inputs))
            finally:
                self.paused = False

        return hook

    def _post(self, name: str, is_leaf: bool) -> Callable[..., None]:
        def hook(module: Any, args: tuple[Any, ...], kwargs: dict[str, Any], output: Any) -> None:
            self.paused = True
            try:
                self.stack.pop()
                if not is_leaf:
                    return
                self.leaf_depth -= 1
                before, cloned_args, cloned_kwargs, inputs = self.open[id(module)].pop()
                number = self.times_called.get(id(module), 0) + 1
                self.times_called[id(module)] = number
                weights = _unique_bytes(
                    iter([*module.parameters(), *module.buffers()])  # recurse: MHA's out_proj
                )
                self.calls.append(
                    _Call(
                        path=name,
                        type=type(module).__name__,
                        call=number,
                        target=module,
                        module=module,
                        args=cloned_args,
                        kwargs=cloned_kwargs,
                        input_shapes=_shapes(args) + _shapes(kwargs),
                        output_shapes=_shapes(output),
                        dtype=_dtype(list(module.parameters()), output, args),
                        counter_flops=int(self.counter.get_total_flops()) - before,
                        tensor_bytes=inputs + weights + _unique_bytes(_tensors(output)),
                    )
                )
            finally:
                self.paused = False

        return hook

    def function(
        self, func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        """Run a functional call; record it when it ran outside any leaf and did some work."""
        if self.paused or self.leaf_depth > 0:
            return func(*args, **kwargs)
        name = _function_name(func)
        self.current = name
        before = int(self.counter.get_total_flops())
        # only an in-place call changes its arguments; any other is copied once it is recorded
        cloned = (_clone(args), _clone(kwargs)) if _writes(name) else None
        output = func(*args, **kwargs)
        self.current = None
        flops = int(self.counter.get_total_flops()) - before
        ins = list(_tensors((args, kwargs)))
        storages = {t.untyped_storage().data_ptr() for t in ins}
        outs = list(_tensors(output))
        new = [t for t in outs if t.untyped_storage().data_ptr() not in storages]
        if flops == 0 and not new and not (outs and _writes(name)):
            return output  # a view, a shape query: no arithmetic, no traffic
        cloned = cloned or (_clone(args), _clone(kwargs))
        parent = self.stack[-1][0] if self.stack else "(top level)"
        self.calls.append(
            _Call(
                path=parent,
                type=name,
                call=1,
                target=func,
                module=None,
                args=cloned[0],
                kwargs=cloned[1],
                input_shapes=_shapes((args, kwargs)),
                output_shapes=_shapes(output),
                dtype=_dtype(output, (args, kwargs)),
                counter_flops=flops,
                tensor_bytes=_unique_bytes(iter(ins)) + _unique_bytes(iter(outs)),
            )
        )
        return output

    def where(self) -> str:
        """The innermost module (and functional call) running now, for an error message."""
        if not self.stack:
            return "the model"
        name, kind, shapes = self.stack[-1]
        shown = ", ".join("×".join(map(str, s)) or "scalar" for s in shapes) or "no tensors"
        call = f" (in {self.current})" if self.current else ""
        return f"layer {name!r} ({kind}){call}, given inputs of shape {shown},"

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()
        self.handles.clear()


def _leaf_paths(model: Any) -> set[str]:
    """Modules without children, and known types that are counted whole (attention)."""
    import torch

    leaves = set()
    for path, module in model.named_modules():
        if isinstance(module, torch.nn.MultiheadAttention) or not any(module.children()):
            leaves.add(path)
    # a known type's own submodules (MultiheadAttention.out_proj) are inside it, not beside it
    return {p for p in leaves if not any(_inside(p, q) for q in leaves)}


def _inside(path: str, outer: str) -> bool:
    """True when module ``path`` lies within module ``outer`` ("" is the model itself).

    >>> _inside("attn.out_proj", "attn"), _inside("attn", "attn"), _inside("fc", "")
    (True, False, True)
    """
    return path != outer and (outer == "" or path.startswith(f"{outer}."))


# -- formulas of known types ---------------------------------------------------------------
def _element_size(module: Any) -> int:
    return int(next(module.parameters()).element_size())


def _known(call: _Call) -> tuple[int, str, int | None, str] | None:
    """(FLOPs, formula, bytes or None, bytes source) of a call of a known type, else None."""
    import torch
    import torch.nn.functional as F

    nn = torch.nn
    module, shapes, out = call.module, call.input_shapes, call.output_shapes
    if not shapes or not out or any(0 in s for s in (*shapes, *out)):
        return None
    x = shapes[0]
    if isinstance(module, nn.Linear):
        B = math.prod(x) // module.in_features
        flops = formulas.mlp_flops(B=B, d_in=module.in_features, d_out=module.out_features)
        return int(flops), "mlp_flops", None, TENSORS
    if isinstance(module, nn.Conv2d):
        C_out, per_group, K, K_w = module.weight.shape
        if K_w != K or len(out[0]) not in (3, 4):
            return None
        B = out[0][0] if len(out[0]) == 4 else 1
        H_out, W_out = out[0][-2:]
        if module.groups == module.in_channels == module.out_channels:
            flops = formulas.depthwise_conv_flops(B=B, H_out=H_out, W_out=W_out, K=K, C=C_out)
            return int(flops), "depthwise_conv_flops", None, TENSORS
        # a grouped convolution: each output channel reads C_in / groups input channels
        flops = formulas.conv_flops(B=B, H_out=H_out, W_out=W_out, K=K, C_in=per_group, C_out=C_out)
        return int(flops), "conv_flops", None, TENSORS
    if isinstance(module, nn.Embedding | nn.EmbeddingBag):
        d, s, n = module.embedding_dim, _element_size(module), math.prod(x)
        if isinstance(module, nn.Embedding):
            # a gather: no arithmetic; each index reads one row and writes one
            return (
                0,
                COUNTER,
                int(formulas.embedding_bag_bytes(B=n, L=1, d=d, s=s)),
                "embedding_bag_bytes",
            )
        bags = out[0][0]
        if n % bags == 0:  # B bags of L rows (a 2-D input, or equal offsets)
            L = n // bags
            flops = formulas.embedding_bag_flops(B=bags, L=L, d=d)
            traffic = formulas.embedding_bag_bytes(B=bags, L=L, d=d, s=s)
            return int(flops), "embedding_bag_flops", int(traffic), "embedding_bag_bytes"
        flops = formulas.embedding_bag_flops(B=1, L=n, d=d)  # bags of unequal sizes: n rows in all
        traffic = formulas.embedding_payload(B=1, L=n, d=d, s=s) + bags * d * s
        return int(flops), "embedding_bag_flops", int(traffic), "embedding_payload + output"
    if isinstance(module, nn.RNN) and len(x) in (2, 3):
        S, B = (x[0], 1) if len(x) == 2 else ((x[1], x[0]) if module.batch_first else x[:2])
        directions = 2 if module.bidirectional else 1
        d_h, d_in, flops = module.hidden_size, module.input_size, 0
        for _ in range(module.num_layers):
            flops += directions * int(formulas.rnn_flops(B=B, S=S, d_in=d_in, d_h=d_h))
            d_in = d_h * directions
        return flops, "rnn_flops", None, TENSORS
    if isinstance(module, nn.MultiheadAttention) and module._qkv_same_embed_dim:
        q_shape = x
        k_shape = shapes[1] if len(shapes) > 1 else x
        if q_shape != k_shape or len(q_shape) not in (2, 3):
            return None  # cross-attention over another length: no catalogue formula
        S, B = (x[0], 1) if len(x) == 2 else ((x[1], x[0]) if module.batch_first else x[:2])
        E = module.embed_dim
        projections = 4 * int(formulas.mlp_flops(B=B * S, d_in=E, d_out=E))
        flops = projections + int(formulas.attention_flops(B=B, S=S, d=E))
        return flops, "mlp_flops × 4 + attention_flops", None, TENSORS
    if call.target is F.scaled_dot_product_attention and len(shapes) >= 3:
        q, k, v = shapes[:3]
        if q != k or q != v or len(q) < 2:
            return None
        B, S = (q[0], q[-2]) if len(q) >= 3 else (1, q[0])
        d = math.prod(q[1:-2]) * q[-1] if len(q) >= 3 else q[-1]
        if call.kwargs.get("is_causal") or (len(call.args) > 5 and call.args[5]):
            return (
                int(formulas.attention_flops_causal(B=B, S=S, d=d)),
                "attention_flops_causal",
                None,
                TENSORS,
            )
        return int(formulas.attention_flops(B=B, S=S, d=d)), "attention_flops", None, TENSORS
    return None


# -- errors --------------------------------------------------------------------------------
_NEEDED = re.compile(
    r"allocate (?:memory: you tried to allocate )?(\d+) bytes|Tried to allocate ([\d.]+) ([KMGT]i?B)"
)
_UNITS = {"KiB": 1024, "MiB": 1024**2, "GiB": 1024**3, "TiB": 1024**4}


def is_out_of_memory(error: BaseException) -> bool:
    """True for torch's out-of-memory errors (CUDA's, and the CPU allocator's)."""
    text = str(error)
    return type(error).__name__ == "OutOfMemoryError" or (
        "can't allocate memory" in text or "out of memory" in text.lower()
    )


def out_of_memory_message(error: BaseException, where: str, device: str) -> str:
    """One line: where memory ran out, how much was asked for, how much was free.

    >>> err = RuntimeError("DefaultCPUAllocator: can't allocate memory: you tried to "
    ...                    "allocate 2199023255552 bytes. Error code 12")
    >>> out_of_memory_message(err, "layer 'big' (Linear)", "cpu").split(" but ")[0]
    "out of memory in layer 'big' (Linear): it needed 2 TiB"
    """
    from gpuconcepts.measure import free_memory_bytes

    match = _NEEDED.search(str(error))
    if match and match.group(1):
        needed = binary_bytes(int(match.group(1)))
    elif match:
        needed = binary_bytes(float(match.group(2)) * _UNITS.get(match.group(3), 1))
    else:
        needed = "more than was free"
    free = binary_bytes(free_memory_bytes(device))
    return f"out of memory in {where}: it needed {needed} but {free} was free on {device}"


def _first_line(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return f"{type(error).__name__}: {lines[0] if lines else ''}".rstrip(": ")


# -- the analysis --------------------------------------------------------------------------
def _prepare(
    model: Any, inputs: Sequence[Any], device: str, dtype: str | None
) -> tuple[Any, tuple[Any, ...]]:
    """The model and inputs on ``device`` in ``dtype``: the model is copied, never moved."""
    import torch

    from gpuconcepts.kernels import torch_dtype

    target = torch_dtype(dtype) if dtype is not None else None
    params = [*model.parameters(), *model.buffers()]
    moves = any(p.device.type != device for p in params)
    casts = target is not None and any(p.is_floating_point() and p.dtype != target for p in params)
    if moves or casts:
        model = copy.deepcopy(model).to(device=device, dtype=target)

    def convert(value: Any) -> Any:
        if not isinstance(value, torch.Tensor):
            return value
        cast = target if target is not None and value.is_floating_point() else None
        return value.to(device=device, dtype=cast)

    return model, tuple(convert(v) for v in inputs)


def _time(
    calls: Sequence[tuple[Callable[[], object], bool]], device: str, repeats: int
) -> list[tuple[float, ...]]:
    """Raw seconds of each call with the kernels' timers; one flush buffer serves every call."""
    import torch

    from gpuconcepts.measure import make_flusher, time_cpu, time_cuda

    flusher = make_flusher(device) if any(flush for _, flush in calls) else None
    timer = time_cuda if device == "cuda" else time_cpu
    times = []
    with torch.inference_mode():
        for fn, flush in calls:
            times.append(timer(fn, repeats=repeats, flush=flusher if flush else None))
    return times


def _predictions(
    layers: Sequence[Layer], dtype: str
) -> tuple[tuple[GpuPrediction, ...], list[dict[str, str | None]]]:
    """Each datasheet GPU's ridge, the roofline's time for the calls, and each call's bound."""
    import numpy as np

    from gpuconcepts.hardware import GPUS, TORCH_DTYPES

    flops = np.array([float(layer.flops) for layer in layers])
    traffic = np.array([float(layer.bytes) for layer in layers])
    per_layer: list[dict[str, str | None]] = [{} for _ in layers]
    predictions = []
    for gpu in GPUS.values():
        ridges = {
            kind: gpu.ridge_point(kind)
            for kind in {layer.dtype for layer in layers}
            if gpu.peak(kind) is not None
        }
        for i, layer in enumerate(layers):
            ridge = ridges.get(layer.dtype)
            per_layer[i][gpu.name] = None if ridge is None else bound_at(layer.intensity, ridge)
        if gpu.peak(dtype) is None:
            continue
        peak = float(gpu.peak(dtype) or 0)
        # The formula wants F > 0; one FLOP in place of none leaves max(F/P, Q/beta) at Q/beta
        # (1/P is under a picosecond, a single byte at beta is more).
        seconds = formulas.roofline_seconds.vectorized(
            F=np.maximum(flops, 1.0),
            Q=traffic,
            P=np.full_like(flops, peak),
            beta=np.full_like(flops, gpu.bytes_per_s),
        )
        memory = sum(
            t for t, bounds in zip(seconds, per_layer, strict=True) if bounds[gpu.name] == "memory"
        )
        total = float(np.sum(seconds))
        predictions.append(
            GpuPrediction(
                gpu=gpu.name,
                dtype=TORCH_DTYPES.get(dtype, dtype),
                ridge_point=gpu.ridge_point(dtype),
                seconds=total,
                memory_share=float(memory) / total if total > 0 else 0.0,
            )
        )
    return tuple(predictions), per_layer


def analyze(
    model: Any,
    *example_inputs: Any,
    device: str = "auto",
    dtype: str | None = None,
    peaks: PeaksLike | None = None,
    repeats: int = 7,
) -> Report:
    """Count, time and place every leaf module call of one forward pass of ``model``.

    Args:
        model: a ``torch.nn.Module``; it is not changed (a copy is made when it has to move
            to ``device`` or change ``dtype``) and runs in eval mode, as for inference.
        example_inputs: the forward pass's positional arguments.
        device: ``"auto"``, ``"cpu"`` or ``"cuda"`` (:func:`gpuconcepts.measure.resolve_device`).
        dtype: a kernels dtype name (``float32``, ``float16``, ``bfloat16``) for the
            weights and floating-point inputs; None keeps the model's.
        peaks: this device's measured peaks (:class:`gpuconcepts.roofline.Peaks`); measured
            with :func:`gpuconcepts.kernels.measure_peaks` when None.
        repeats: timed repetitions of each call.

    Raises:
        GpuConceptsError: no input, a model that is not a module, a shape a layer rejects
            (naming the layer and the shapes), or running out of memory (needed and free).
    """
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    from gpuconcepts.measure import resolve_device

    if not isinstance(model, torch.nn.Module):
        raise GpuConceptsError(
            f"analyze: model must be a torch.nn.Module; got {type(model).__name__}"
        )
    if not example_inputs:
        raise GpuConceptsError("analyze: give at least one example input (the forward's arguments)")
    if type(repeats) is not int or repeats < 1:
        raise GpuConceptsError(f"analyze: repeats must be a positive integer; got {repeats!r}")
    resolved = resolve_device(device)
    root = type(model).__name__
    try:
        model, inputs = _prepare(model, example_inputs, resolved, dtype)
    except RuntimeError as error:
        if is_out_of_memory(error):
            raise GpuConceptsError(
                out_of_memory_message(error, f"moving {root} to {resolved}", resolved)
            ) from None
        raise
    training = {m: m.training for m in model.modules()}
    model.eval()
    counter = FlopCounterMode(display=False)
    recorder = _Recorder(model, counter, root)
    try:
        with torch.inference_mode(), counter, recorder.mode:
            model(*inputs)
    except GpuConceptsError:
        raise
    except Exception as error:  # noqa: BLE001 - whatever the user's model raises, named in one line
        where = recorder.where()
        if is_out_of_memory(error):
            raise GpuConceptsError(
                out_of_memory_message(error, where.rstrip(","), resolved)
            ) from None
        raise GpuConceptsError(f"{root}: {where} failed with {_first_line(error)}") from None
    finally:
        recorder.remove()
        for module, mode in training.items():
            module.train(mode)
    counter_total = int(counter.get_total_flops())
    try:
        return _report(model, inputs, recorder.calls, counter_total, resolved, peaks, repeats, root)
    finally:
        for module, mode in training.items():
            module.train(mode)


def _report(
    model: Any,
    inputs: tuple[Any, ...],
    calls: Sequence[_Call],
    counter_total: int,
    device: str,
    peaks: PeaksLike | None,
    repeats: int,
    root: str,
) -> Report:
    import torch

    from gpuconcepts.measure import device_name, time_function

    if peaks is None:
        from gpuconcepts.kernels import measure_peaks

        peaks = measure_peaks(device, quick=device == "cpu")
    ridge = float(formulas.ridge_point(P=peaks.flops_per_s, beta=peaks.bytes_per_s))
    # a call on empty tensors moves nothing and computes nothing: it has no place on a roofline
    calls = [call for call in calls if call.tensor_bytes > 0 or call.counter_flops > 0]
    if not calls:
        raise GpuConceptsError(
            f"{root}: the forward pass ran no layer and no tensor operation to analyze"
        )
    counted = []
    for call in calls:
        known = _known(call)
        flops, source, traffic, traffic_source = (
            known if known is not None else (call.counter_flops, COUNTER, None, TENSORS)
        )
        counted.append(
            (flops, source, call.tensor_bytes if traffic is None else traffic, traffic_source)
        )
    model.eval()
    replays = []
    for call, (flops, _, traffic, _) in zip(calls, counted, strict=True):
        target, args, kwargs = call.target, call.args, call.kwargs
        # the kernels' flush policy: flush before each repetition exactly when memory-bound
        flush = bound_at(flops / traffic, ridge) == "memory"
        replays.append(((lambda t=target, a=args, k=kwargs: t(*a, **k)), flush))
    raw = _time(replays, device, repeats)
    with torch.inference_mode():
        forward = time_function(lambda: model(*inputs), device, repeats=repeats)
    dtype = next(
        (str(p.dtype).removeprefix("torch.") for p in model.parameters() if p.is_floating_point()),
        "float32",
    )
    layers = []
    for index, (call, (flops, source, traffic, traffic_source), seconds) in enumerate(
        zip(calls, counted, raw, strict=True), start=1
    ):
        layers.append(
            Layer(
                index=index,
                path=call.path,
                type=call.type,
                call=call.call,
                input_shapes=call.input_shapes,
                output_shapes=call.output_shapes,
                dtype=call.dtype,
                flops=flops,
                flops_source=source,
                counter_flops=call.counter_flops,
                bytes=traffic,
                bytes_source=traffic_source,
                raw_seconds=seconds,
                flushed=bound_at(flops / traffic, ridge) == "memory",
                bound=observed_bound(
                    Measurement(call.path, device, {}, tuple(seconds), flops, traffic), peaks
                ),
            )
        )
    gpus, per_layer = _predictions(layers, dtype)
    layers = [
        Layer(**{**vars(layer), "predicted": predicted})
        for layer, predicted in zip(layers, per_layer, strict=True)
    ]
    return Report(
        model=root,
        device=device,
        device_name=device_name(device),
        dtype=dtype,
        peaks_dtype=peaks.dtype,
        peak_flops_per_s=peaks.flops_per_s,
        peak_bytes_per_s=peaks.bytes_per_s,
        layers=tuple(layers),
        counter_total=counter_total,
        forward_raw_seconds=forward,
        gpus=gpus,
    )


# -- the command line ----------------------------------------------------------------------
INPUT_DTYPES = ("float32", "float64", "float16", "bfloat16", "int64", "int32")
"""Element types an ``--input`` shape may name after a colon."""

_SHAPE = re.compile(r"^\d+(?:x\d+)*$")


def parse_shape(text: str) -> tuple[tuple[int, ...], str | None]:
    """An ``--input`` value: a shape such as ``8x3x224x224``, optionally ``:int64``.

    >>> parse_shape("8x3x224x224"), parse_shape("64x26:int64")
    (((8, 3, 224, 224), None), ((64, 26), 'int64'))
    >>> parse_shape("8x-3")
    Traceback (most recent call last):
    ...
    gpuconcepts.errors.GpuConceptsError: --input '8x-3': a shape is positive integers joined by x, such as 8x3x224x224 or 64x26:int64
    """
    shape_text, _, dtype = text.strip().partition(":")
    rule = "a shape is positive integers joined by x, such as 8x3x224x224 or 64x26:int64"
    if not _SHAPE.match(shape_text):
        raise GpuConceptsError(f"--input {text!r}: {rule}")
    shape = tuple(int(n) for n in shape_text.split("x"))
    if 0 in shape:
        raise GpuConceptsError(f"--input {text!r}: {rule}")
    if dtype and dtype not in INPUT_DTYPES:
        raise GpuConceptsError(
            f"--input {text!r}: element type {dtype!r} is not one of {', '.join(INPUT_DTYPES)}"
        )
    return shape, dtype or None


def load_factory(spec: str) -> Callable[[], Any]:
    """The function ``FACTORY`` of ``FILE.py`` in a ``FILE.py:FACTORY`` spec."""
    import importlib.util
    from pathlib import Path

    file, sep, name = spec.rpartition(":")
    if not sep or not file or not name:
        raise GpuConceptsError(f"{spec!r}: expected FILE.py:FACTORY, e.g. model.py:build")
    path = Path(file)
    if not path.is_file():
        raise GpuConceptsError(f"{spec!r}: no such file {file!r}")
    loader = importlib.util.spec_from_file_location(f"_gpuconcepts_model_{path.stem}", path)
    if loader is None or loader.loader is None:
        raise GpuConceptsError(f"{spec!r}: {file!r} is not a Python file")
    namespace = importlib.util.module_from_spec(loader)
    try:
        loader.loader.exec_module(namespace)
    except Exception as error:  # noqa: BLE001 - whatever the user's file raises, in one line
        raise GpuConceptsError(f"{file} raised {_first_line(error)} while loading") from None
    factory = getattr(namespace, name, None)
    if factory is None:
        defined = sorted(
            n for n, v in vars(namespace).items() if callable(v) and not n.startswith("_")
        )
        raise GpuConceptsError(
            f"{file} defines no {name!r}; its callables are {', '.join(defined) or 'none'}"
        )
    if not callable(factory):
        raise GpuConceptsError(f"{file}: {name} is a {type(factory).__name__}, not a function")
    return factory  # type: ignore[no-any-return]


def build_model(spec: str) -> Any:
    """Call the factory of a ``FILE.py:FACTORY`` spec; it must return a ``torch.nn.Module``."""
    import torch

    factory = load_factory(spec)
    name = spec.rpartition(":")[2]
    try:
        model = factory()
    except Exception as error:  # noqa: BLE001 - whatever the factory raises, in one line
        if is_out_of_memory(error):
            raise GpuConceptsError(out_of_memory_message(error, f"{name}()", "cpu")) from None
        raise GpuConceptsError(f"factory {name}() raised {_first_line(error)}") from None
    if not isinstance(model, torch.nn.Module):
        raise GpuConceptsError(
            f"factory {name}() returned {type(model).__name__} {model!r:.40}, not a torch.nn.Module"
        )
    return model


def make_inputs(
    model: Any, shapes: Sequence[tuple[tuple[int, ...], str | None]], device: str, dtype: str | None
) -> tuple[Any, ...]:
    """Random example inputs; integer ones index every embedding table of the model.

    Floating-point inputs are standard normal in ``dtype`` (else the model's); integer inputs
    are uniform below the smallest ``num_embeddings`` of the model's embeddings (2 without one).
    Raises before allocating when the inputs would not fit in the device's free memory.
    """
    import torch

    from gpuconcepts.kernels import torch_dtype
    from gpuconcepts.measure import free_memory_bytes

    floating = next((p.dtype for p in model.parameters() if p.is_floating_point()), torch.float32)
    if dtype is not None:
        floating = torch_dtype(dtype)
    kinds = [getattr(torch, d) if d else floating for _, d in shapes]
    needed = sum(
        math.prod(shape) * torch.empty((), dtype=k).element_size()
        for (shape, _), k in zip(shapes, kinds, strict=True)
    )
    free = free_memory_bytes(device)
    if needed > free:
        raise GpuConceptsError(
            f"out of memory for the inputs: they need {binary_bytes(needed)} but "
            f"{binary_bytes(free)} is free on {device}"
        )
    tables = [
        m.num_embeddings
        for m in model.modules()
        if isinstance(m, torch.nn.Embedding | torch.nn.EmbeddingBag)
    ]
    high = min(tables, default=2)
    generator = torch.Generator(device=device).manual_seed(0)
    inputs = []
    for (shape, _), kind in zip(shapes, kinds, strict=True):
        if kind.is_floating_point:
            inputs.append(torch.randn(shape, dtype=kind, device=device, generator=generator))
        else:
            inputs.append(
                torch.randint(0, high, shape, dtype=kind, device=device, generator=generator)
            )
    return tuple(inputs)


def run_analyze(
    spec: str,
    inputs: Sequence[str],
    *,
    dtype: str | None,
    device: str,
    as_json: bool,
    repeats: int,
) -> int:
    """``gpuconcepts analyze``: build the model, make its inputs, print the table or JSON."""
    from gpuconcepts.measure import resolve_device

    shapes = [parse_shape(text) for text in inputs]
    resolved = resolve_device(device)
    with user_code(spec, quiet=as_json):
        model = build_model(spec)
        example = make_inputs(model, shapes, resolved, dtype)
        report = analyze(model, *example, device=resolved, dtype=dtype, repeats=repeats)
    sys.stdout.write((report.to_json() if as_json else report.text()) + "\n")
    return 0


@contextlib.contextmanager
def user_code(spec: str, *, quiet: bool) -> Iterator[None]:
    """Run the user's file, factory and model: what they print goes to stderr when ``quiet``
    (stdout then holds the JSON alone), and a ``sys.exit()`` or another exception that is
    not an :class:`Exception` becomes one :class:`GpuConceptsError`. Ctrl-C and SIGTERM pass.

    >>> with user_code("model.py:build", quiet=True):
    ...     sys.exit(7)
    Traceback (most recent call last):
    ...
    gpuconcepts.errors.GpuConceptsError: model.py:build called sys.exit(7); analyze needs the model back
    """
    try:
        with contextlib.redirect_stdout(sys.stderr) if quiet else contextlib.nullcontext():
            yield
    except (KeyboardInterrupt, Terminated, GeneratorExit):
        raise
    except SystemExit as done:
        raise GpuConceptsError(
            f"{spec} called sys.exit({done.code!r}); analyze needs the model back"
        ) from None
    except Exception:
        raise
    except BaseException as error:  # noqa: BLE001 - whatever the user's code raises, in one line
        raise GpuConceptsError(f"{spec} raised {_first_line(error)}") from None


class _CallableModule(types.ModuleType):
    """``gpuconcepts.analyze`` names both this module and its function: importing the module
    makes the package attribute the module, so the module itself analyzes when called."""

    def __call__(self, *args: Any, **kwargs: Any) -> Report:
        return analyze(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
