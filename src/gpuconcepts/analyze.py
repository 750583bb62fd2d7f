r"""Your own model on the roofline: every leaf module call, counted, timed and placed.

:func:`analyze` runs one forward pass of any ``torch.nn.Module`` with hooks on its leaf
modules and a ``TorchFunctionMode`` that sees the functional calls made between them
(``x + y``, ``F.scaled_dot_product_attention``, ...), all inside ``FlopCounterMode``. Each
call becomes one :class:`Layer`, in execution order:

* FLOPs come from the catalogue's formula when the module type is known (``nn.Linear``,
  ``nn.Conv2d`` with any ``groups``, ``nn.EmbeddingBag``, ``nn.RNN``, ``nn.LSTM``,
  ``nn.GRU``, ``nn.MultiheadAttention``, ``F.scaled_dot_product_attention`` with any query
  and key lengths and key/value heads, ``torch._grouped_mm`` even inside a module of its
  own), otherwise from ``FlopCounterMode``; ``flops_source`` says which, and
  ``counter_flops`` keeps what ``FlopCounterMode`` counted for the same call, so the
  report's total can be set against ``FlopCounterMode``'s total for the whole pass, row by
  row (:attr:`Layer.note`). A call that computes (it has a weight matrix, or it is a known
  compute op) but ends up with 0 FLOPs carries a :attr:`Layer.warning`: never silent.
* Bytes are the minimal traffic: the call's input tensors, its module's weights and buffers
  and its outputs, each counted once as seen; an embedding reads only the rows it looks up
  (``embedding_bag_bytes``), not its whole table. A call that only views or passes on its
  input (a reshape, ``nn.Identity``, eval-mode dropout) moves nothing and is no row.
* Each call is then replayed alone and timed with :mod:`gpuconcepts.measure`'s timers under
  the kernels' flush policy: caches are flushed before each repetition of a call whose
  intensity is below the ridge point. Identical calls (same module configuration, weights'
  shapes and inputs' shapes) are timed once and share the timing.

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

# torch and matplotlib are imported inside functions on purpose (README, Rules: 3).
# ruff: noqa: PLC0415

from __future__ import annotations

import contextlib
import copy
import dataclasses
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
from gpuconcepts.errors import GpuConceptsError, Terminated, require
from gpuconcepts.hardware import dtype_name
from gpuconcepts.measure import Measurement
from gpuconcepts.roofline import RANDOM_ACCESS, Peaks, classify, observe
from gpuconcepts.units import binary_bytes, percent, plain_number, si, significant

if TYPE_CHECKING:
    import torch
    from matplotlib.figure import Figure

ObservedBound = Literal["compute", "memory", "overhead"]

"""A call's observed bound in three words (see :func:`observed_bound`): *compute*, *memory* (any
level of the hierarchy) or *overhead* (only the latency floor explains its time, it reached
less than :data:`OVERHEAD_BELOW` of every roof, or it ran faster than every roof: launch and
framework cost, not the roofline, set its time)."""

OVERHEAD_BELOW = 0.05
"""A call that reaches less than this fraction of every roof is *overhead*-bound, whatever roof
is nearest: at 1-2 % of the memory roof, bandwidth is not what its time is spent on."""

TEXT_WIDTH = 100
"""Columns the text report fits in."""


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


@dataclass(frozen=True)
class Report:
    """What :func:`analyze` found: one :class:`Layer` per call, and the whole pass's totals.

    ``counter_total`` is ``FlopCounterMode``'s total for the whole forward pass; the layers
    partition it (``sum(l.counter_flops) == counter_total``), and :attr:`total_flops`
    differs from it exactly by the rows whose :attr:`Layer.note` is not empty. ``views`` names
    the calls that moved nothing (reshapes, identities, eval-mode dropout), which are no rows;
    ``warnings`` holds what the reader must know about the peaks; ``assumptions`` what the GPU
    predictions assumed. ``interrupted`` is set when timing was stopped (Ctrl-C): the layers
    are then the ``len(layers)`` of ``calls_counted`` calls timed so far.
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
    views: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    assumptions: tuple[str, ...] = ()
    peaks_source: str = "measured now"
    interrupted: str = ""
    calls_counted: int = 0

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
        """Median time of the plain forward pass, without any hook (0 when not timed)."""
        if not self.forward_raw_seconds:
            return 0.0
        return float(statistics.median(self.forward_raw_seconds))

    @property
    def explained(self) -> tuple[Layer, ...]:
        """The calls whose FLOPs differ from ``FlopCounterMode``'s, each with its note."""
        return tuple(layer for layer in self.layers if layer.note)

    @property
    def all_warnings(self) -> tuple[str, ...]:
        """Every warning: each call that computes but was counted 0, then the peaks'."""
        rows = tuple(
            f"row {layer.index}: {layer.warning}" for layer in self.layers if layer.warning
        )
        return rows + self.warnings

    def time_share(self) -> dict[str, float]:
        """Fraction of the summed time spent in calls of each observed bound."""
        shares = {"compute": 0.0, "memory": 0.0, "overhead": 0.0}
        for layer in self.layers:
            shares[layer.bound] += layer.seconds / self.seconds
        return shares

    def share_sentence(self) -> str:
        """The time share per bound in words, largest first."""
        parts = sorted(self.time_share().items(), key=lambda kv: -kv[1])
        said = [
            f"{percent(share)} in {bound}-bound calls" for bound, share in parts if share >= 0.005
        ]
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
                "source": self.peaks_source,
            },
            "layers": [layer.to_dict() for layer in self.layers],
            "views": list(self.views),
            "total_flops": self.total_flops,
            "counter_total": self.counter_total,
            "total_bytes": self.total_bytes,
            "seconds": self.seconds,
            "forward_raw_seconds": list(self.forward_raw_seconds),
            "forward_seconds": self.forward_seconds,
            "time_share": self.time_share(),
            "gpus": [vars(g) for g in self.gpus],
            "assumptions": list(self.assumptions),
            "warnings": list(self.all_warnings),
            "interrupted": self.interrupted,
            "calls_counted": self.calls_counted,
        }

    def to_json(self, indent: int | None = 2) -> str:
        """:meth:`to_dict` as JSON text."""
        return json.dumps(self.to_dict(), indent=indent)

    def rows(self) -> list[list[str]]:
        """The per-layer table as short text cells, header first (the CLI's table; every
        detail is in :meth:`to_json` and :meth:`csv`). FLOPs marked ``*`` come from a catalogue
        formula, ``!`` from a call that computes but was counted 0; the IQR is a percentage of
        the median; ``GPUs`` says on how many datasheet GPUs the call is compute-bound."""
        header = ["#", "layer", "type", "FLOPs", "bytes", "FLOP/B", "time", "IQR", "here", "GPUs"]
        return [header] + [
            [
                str(layer.index),
                layer.name,
                layer.type,
                si(layer.flops, "") + ("!" if layer.warning else "*" if _by_formula(layer) else ""),
                binary_bytes(layer.bytes).replace(" bytes", " B"),
                f"{significant(layer.intensity)}",
                si(layer.seconds, "s"),
                f"{percent(layer.iqr_seconds / layer.seconds)}" if layer.seconds > 0 else "-",
                layer.bound,
                _gpus_cell(layer.predicted),
            ]
            for layer in self.layers
        ]

    def csv(self) -> str:
        """Every layer with every detail, one line each, as CSV (``--csv``)."""
        import csv
        import io

        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        fields = [k for k in Layer.__dataclass_fields__ if k not in ("raw_seconds", "predicted")]
        derived = ["seconds", "iqr_seconds", "intensity", "flops_per_s", "bytes_per_s", "note"]
        gpus = [g.gpu for g in self.gpus]
        writer.writerow(fields + derived + gpus)
        for layer in self.layers:
            data = layer.to_dict()
            cells = [_csv_cell(data[k]) for k in fields + derived]
            writer.writerow(cells + [layer.predicted.get(g) or "" for g in gpus])
        return out.getvalue()

    def summary(self) -> list[str]:
        """The totals in words: FLOPs against FlopCounterMode, time, shares, each GPU."""
        lines = []
        if self.interrupted:
            lines.append(
                f"Interrupted ({self.interrupted}) after timing {len(self.layers)} of "
                f"{self.calls_counted} calls: the table and the totals hold those calls only."
            )
        lines += [
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
        if self.views:
            kinds = count_types([v.rpartition(" ")[2].strip("()") for v in self.views])
            lines.append(
                f"Calls that only view or pass on their input move nothing and are not rows: {kinds}."
            )
        forward = (
            f"; the plain forward pass: {si(self.forward_seconds, 's')}"
            if self.forward_raw_seconds
            else ""
        )
        lines.append(
            f"Calls one at a time: {si(self.seconds, 's')}{forward}. Peaks here "
            f"({self.peaks_dtype}, {self.peaks_source}): {si(self.peak_flops_per_s, 'FLOP/s')}, "
            f"{si(self.peak_bytes_per_s, 'B/s')}, ridge {significant(self.ridge_point)} FLOP/B."
        )
        if self.dtype != self.peaks_dtype:
            lines.append(
                f"The compute roof here was measured in {self.peaks_dtype}; the model ran in "
                f"{self.dtype}, so its calls are judged against another dtype's peak."
            )
        if self.layers:
            lines.append(self.share_sentence())
        for g in self.gpus:
            lines.append(
                f"On {g.gpu} ({g.dtype}, ridge {significant(g.ridge_point)} FLOP/B) the roofline "
                f"predicts {si(g.seconds, 's')}: {percent(g.memory_share)} of it in memory-bound "
                f"calls, {percent(g.overhead_share)} at the launch floor."
            )
        lines += [f"Assumed: {text}" for text in self.assumptions]
        lines += [f"Warning: {text}" for text in self.all_warnings]
        return lines

    def memory_bound_everywhere(self) -> tuple[Layer, ...]:
        """Calls left of the ridge on every datasheet GPU: more FLOP/s would not speed them up."""
        return tuple(
            layer
            for layer in self.layers
            if all(bound in ("memory", "overhead", None) for bound in layer.predicted.values())
        )

    def markdown(self) -> str:
        """The per-layer table for a book page, numbered as the figure's points, time with IQR."""
        from gpuconcepts.render import markdown_table

        header = ["#", "Call", "Shapes", "FLOPs", "Bytes", "FLOP/byte", "Time", "FLOP/s", "Bytes/s"]
        header += ["Here", "Datasheet GPUs"]
        rows = [
            [
                str(layer.index),
                f"`{layer.name}`<br><small>{layer.type}</small>",
                shapes_text(layer.input_shapes, layer.output_shapes),
                f"{si(layer.flops, '')}<br><small>{layer.flops_source}</small>",
                si(layer.bytes, "B"),
                f"{significant(layer.intensity)}",
                f"{_nbsp(si(layer.seconds, 's'))}<br><small>IQR&nbsp;{_nbsp(si(layer.iqr_seconds, 's'))}</small>",
                si(layer.flops_per_s, "FLOP/s") if layer.flops else "–",
                si(layer.bytes_per_s, "B/s"),
                f"**{layer.bound}**",
                _across_gpus(layer.predicted),
            ]
            for layer in self.layers
        ]
        return markdown_table(header, rows)

    def text(self, width: int = TEXT_WIDTH) -> str:
        """The table, its legend and the summary, as ``gpuconcepts analyze`` prints them: no
        line is wider than ``width`` (long layer names and types are shortened in the table;
        ``--json`` and ``--csv`` keep them whole)."""
        import textwrap

        legend = (
            "FLOPs: * by a catalogue formula, else FlopCounterMode; ! a call that computes but "
            "was counted 0. IQR: the spread, as a share of the median time. here: the roof "
            "that explains the time measured here. GPUs: on how many datasheet GPUs the call is "
            "compute-bound (each one in --json)."
        )
        said = [
            textwrap.fill(line, width, subsequent_indent="  ", break_on_hyphens=False)
            for line in [legend, "", *self.summary()]
        ]
        return fit_table(self.rows(), width) + "\n" + "\n".join(said)

    def figure(self) -> Figure:
        """This machine's roofline with one numbered point per call that does arithmetic.

        The points are coloured by observed bound; a call without FLOPs has no place on a
        log axis and is left out (it is in the table).
        """
        from matplotlib.lines import Line2D

        from gpuconcepts.render import plots

        shown = [layer for layer in self.layers if layer.flops > 0]
        # one point per layer, named by its row number (the measurement of its call)
        points = [
            Measurement(str(layer.index), "", {}, layer.raw_seconds, layer.flops, layer.bytes)
            for layer in shown
        ]
        peaks = Peaks(self.device, self.peak_flops_per_s, self.peak_bytes_per_s, self.peaks_dtype)
        fig = plots.roofline_chart(peaks, points)
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


def fit_table(rows: list[list[str]], width: int = TEXT_WIDTH) -> str:
    """Align the cells (first column left, the others right, two spaces apart) and shorten
    columns 1 and 2 (a layer's name from the left, its type from the right) until the table
    fits ``width`` columns; ``..`` marks a shortened cell.

    >>> print(fit_table([["#", "layer", "type"], ["1", "encoder.layers.11.mlp.0", "Linear"]], 20))
    #  layer      type
    1  ..1.mlp.0  Linear
    """
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    floors = {1: 7, 2: 6}
    for column in (1, 2):
        excess = sum(widths) + 2 * (len(widths) - 1) - width
        if excess > 0 and len(widths) > column:
            widths[column] = max(floors[column], widths[column] - excess)

    def cut(cell: str, column: int) -> str:
        room = widths[column] if column in floors else len(cell)
        if len(cell) <= room:
            return cell
        return ".." + cell[len(cell) - room + 2 :] if column == 1 else cell[: room - 2] + ".."

    lines = []
    for row in rows:
        cells = [cut(cell, i) for i, cell in enumerate(row)]
        aligned = [
            c.ljust(w) if i in (0, 1, 2) else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ]
        lines.append("  ".join(aligned).rstrip())
    return "\n".join(lines)


def _by_formula(layer: Layer) -> bool:
    """True when a catalogue formula counted the call's FLOPs (not FlopCounterMode alone)."""
    return layer.flops_source != COUNTER and layer.flops > 0


def _gpus_cell(predicted: Mapping[str, str | None]) -> str:
    """On how many datasheet GPUs a call is compute-bound: ``2/6``.

    >>> _gpus_cell({"A": "compute", "B": "memory", "C": None})
    '1/2'
    """
    judged = [bound for bound in predicted.values() if bound is not None]
    return f"{judged.count('compute')}/{len(judged)}" if judged else "-"


def _csv_cell(value: object) -> object:
    """A CSV cell: shapes as ``8x64 8x32``, None as empty, the rest as it is."""
    if isinstance(value, list):
        return " ".join("x".join(map(str, s)) if isinstance(s, list) else str(s) for s in value)
    return "" if value is None else value


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


def count_types(layers: Sequence[Layer] | Sequence[str]) -> str:
    """How many calls of each type (layers, or their types), most first: ``3 EmbeddingBag, 2 Linear``.

    >>> count_types([]), count_types(["Dropout", "Identity", "Dropout"])
    ('none', '2 Dropout, 1 Identity')
    """
    counts: dict[str, int] = {}
    for layer in layers:
        kind = layer if isinstance(layer, str) else layer.type
        counts[kind] = counts.get(kind, 0) + 1
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


def observed_bound(m: Measurement, peaks: Peaks) -> ObservedBound:
    """The roof that explains a call's measured time (:func:`gpuconcepts.roofline.observe`, the
    rule every measurement of the book follows), in three words; the one place that decides
    a call's label. A call that reaches less than :data:`OVERHEAD_BELOW` of that roof (and so
    of every roof) is *overhead*: neither arithmetic nor traffic is what its time is spent on.

    >>> p = Peaks("cpu", 100e9, 10e9, "float32", latency_seconds=1e-5)
    >>> calls = [Measurement("a", "cpu", {}, (1.0,), 50e9, 1e9),  # half the compute roof
    ...          Measurement("b", "cpu", {}, (1.0,), 1e9, 8e9),  # 80 % of the DRAM roof
    ...          Measurement("c", "cpu", {}, (2e-5,), 10.0, 8.0),  # only the latency explains it
    ...          Measurement("d", "cpu", {}, (1.0,), 1e6, 2e8)]  # 2 % of the DRAM roof
    >>> [observed_bound(m, p) for m in calls]
    ['compute', 'memory', 'overhead', 'overhead']
    """
    roof, attained = observe(m, peaks)
    if attained < OVERHEAD_BELOW:
        return "overhead"
    if roof == "compute":
        return "compute"
    if roof == RANDOM_ACCESS or roof in {level.name for level in peaks.memory_roofs}:
        return "memory"
    return "overhead"  # the chain or per-call floor: dispatch, not arithmetic or traffic


def _gathers(call: _Call) -> tuple[int | None, int | None]:
    """An embedding's lookups for the random-access roof: the rows it reads and their bytes
    (``random_rows``, ``row_bytes`` of a :class:`~gpuconcepts.measure.Measurement`). A model's
    indices come from its data, so its rows are read as if at random addresses. (None, None)
    for every other call."""
    import torch

    module = call.module
    if not isinstance(module, torch.nn.Embedding | torch.nn.EmbeddingBag) or not call.input_shapes:
        return None, None
    return math.prod(call.input_shapes[0]), module.embedding_dim * _element_size(module)


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


def _signature(value: object) -> object:
    """What makes two calls the same work: tensors by shape, dtype, strides and device, plain
    values by value, anything else by type (the timing of identical calls is shared).

    >>> _signature((3, "mean", [None, 2.5]))
    (3, 'mean', (None, 2.5))
    """
    import torch

    if isinstance(value, torch.Tensor):
        return ("tensor", tuple(value.shape), str(value.dtype), value.stride(), str(value.device))
    if isinstance(value, list | tuple):
        return tuple(_signature(v) for v in value)
    if isinstance(value, dict):
        return tuple((str(k), _signature(v)) for k, v in value.items())
    if value is None or isinstance(value, bool | int | float | str | torch.dtype):
        return value
    return type(value).__qualname__


def _module_signature(module: Any) -> object:
    """A module's configuration: its type, ``extra_repr``, plain attributes and weights' shapes."""
    plain = tuple(
        (k, v)
        for k, v in sorted(vars(module).items())
        if not k.startswith("_") and (v is None or isinstance(v, bool | int | float | str | tuple))
    )
    weights = tuple(
        (name, _signature(t))
        for name, t in [*module.named_parameters(), *module.named_buffers()]  # recurse
    )
    return (type(module).__module__, type(module).__qualname__, module.extra_repr(), plain, weights)


@dataclass
class _Call:
    """A call seen during the counting pass, before it is timed.

    ``inner`` holds the known compute ops run inside a leaf module (``torch._grouped_mm``,
    attention) as (formula, its FLOPs, FlopCounterMode's); ``computes`` says why the call
    should have FLOPs (a weight matrix, a compute op), empty when nothing says so; ``key`` is
    what identical calls share (their timing).
    """

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
    key: object = None
    inner: list[tuple[str, int, int]] = field(default_factory=list)
    computes: str = ""


@dataclass
class _Open:
    """A leaf module call under way: what its pre-hook saw, and the compute ops run inside."""

    before: int
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    input_bytes: int
    storages: set[int]
    versions: list[int] | None
    inner: list[tuple[str, int, int]] = field(default_factory=list)
    ops: list[str] = field(default_factory=list)


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


COMPUTE_OPS = frozenset(
    {f"F.{n}" for n in ("linear", "bilinear", "scaled_dot_product_attention")}
    | {f"F.conv{k}d" for k in (1, 2, 3)}
    | {f"F.conv_transpose{k}d" for k in (1, 2, 3)}
    | {f"torch.{n}" for n in ("matmul", "mm", "bmm", "addmm", "baddbmm", "addbmm", "einsum")}
    | {"torch._grouped_mm", "torch.lstm", "torch.gru", "torch.rnn_tanh", "torch.rnn_relu"}
    | {f"Tensor.{n}" for n in ("matmul", "__matmul__", "__rmatmul__", "mm", "bmm")}
)
"""Functional calls that do arithmetic: one counted 0 FLOPs is a warning, not a silent 0."""


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


def _versions(tensors: Sequence[torch.Tensor]) -> list[int] | None:
    """The tensors' version counters (an in-place write bumps them); None where not kept."""
    try:
        return [t._version for t in tensors]
    except RuntimeError:  # inference tensors keep no version counter
        return None


def _weight_matrix(module: Any) -> str:
    """Why a module computes by its weights: a weight of two or more dimensions (a matrix, a
    filter bank), except the tables that embeddings gather from; empty otherwise."""
    import torch

    if isinstance(module, torch.nn.Embedding | torch.nn.EmbeddingBag):
        return ""
    for name, weight in module.named_parameters():
        if weight.dim() >= 2:
            return f"its {name} is {'×'.join(map(str, weight.shape))}"
    return ""


class _Recorder:
    """Hooks on the model's modules plus a TorchFunctionMode: records every counted call."""

    def __init__(self, model: Any, counter: Any, root_name: str) -> None:
        import torch

        self.counter = counter
        self.calls: list[_Call] = []
        self.views: list[str] = []
        self.stack: list[tuple[str, str, tuple[tuple[int, ...], ...]]] = []
        self.leaves: list[_Open] = []
        self.paused = False
        self.current: str | None = None
        self.handles: list[Any] = []
        self.times_called: dict[int, int] = {}
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
                    ins = list(_tensors((args, kwargs)))
                    self.leaves.append(
                        _Open(
                            before=int(self.counter.get_total_flops()),
                            args=_clone(args),
                            kwargs=_clone(kwargs),
                            input_bytes=_unique_bytes(iter(ins)),
                            storages={t.untyped_storage().data_ptr() for t in ins},
                            versions=_versions(ins),
                        )
                    )
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
                opened = self.leaves.pop()
                number = self.times_called.get(id(module), 0) + 1
                self.times_called[id(module)] = number
                counted = int(self.counter.get_total_flops()) - opened.before
                outs = list(_tensors(output))
                ins = list(_tensors((args, kwargs)))
                if (
                    counted == 0
                    and outs
                    and not any(True for _ in module.parameters())
                    and all(t.untyped_storage().data_ptr() in opened.storages for t in outs)
                    and opened.versions is not None
                    and _versions(ins) == opened.versions
                ):
                    # a reshape, an identity, eval-mode dropout: it hands on what it was given
                    self.views.append(f"{name} ({type(module).__name__})")
                    return
                weights = _unique_bytes(
                    iter([*module.parameters(), *module.buffers()])  # recurse: MHA's out_proj
                )
                computes = _weight_matrix(module) or next(
                    (f"it calls {op}" for op in opened.ops if op in COMPUTE_OPS), ""
                )
                self.calls.append(
                    _Call(
                        path=name,
                        type=type(module).__name__,
                        call=number,
                        target=module,
                        module=module,
                        args=opened.args,
                        kwargs=opened.kwargs,
                        input_shapes=_shapes(args) + _shapes(kwargs),
                        output_shapes=_shapes(output),
                        dtype=_dtype(list(module.parameters()), output, args),
                        counter_flops=counted,
                        tensor_bytes=opened.input_bytes + weights + _unique_bytes(iter(outs)),
                        key=("module", _module_signature(module), _signature((args, kwargs))),
                        inner=opened.inner,
                        computes=computes,
                    )
                )
            finally:
                self.paused = False

        return hook

    def function(
        self, func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        """Run a functional call; record it when it ran outside any leaf and did some work.
        Inside a leaf, a known compute op is counted by its formula for the leaf's row."""
        if self.paused:
            return func(*args, **kwargs)
        if self.leaves:
            return self._inside_leaf(func, args, kwargs)
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
                key=("function", name, _signature((args, kwargs))),
                computes=f"it is {name}" if name in COMPUTE_OPS else "",
            )
        )
        return output

    def _inside_leaf(
        self, func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        name = _function_name(func)
        opened = self.leaves[-1]
        opened.ops.append(name)
        if name not in _KNOWN_OPS:
            return func(*args, **kwargs)
        before = int(self.counter.get_total_flops())
        output = func(*args, **kwargs)
        known = _known_function(name, args, kwargs)
        if known is not None:
            flops, source = known
            opened.inner.append((source, flops, int(self.counter.get_total_flops()) - before))
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


def _sequence(x: tuple[int, ...], batch_first: bool) -> tuple[int, int]:
    """(S, B) of a recurrent or attention input: (S, d) unbatched, else (S, B, d) or (B, S, d)."""
    if len(x) == 2:
        return x[0], 1
    return (x[1], x[0]) if batch_first else (x[0], x[1])


_RECURRENT = {"RNN": "rnn_flops", "LSTM": "lstm_flops", "GRU": "gru_flops"}
"""The recurrent module types and the formula of one layer of each."""


def _known(call: _Call) -> tuple[int, str, int | None, str] | None:
    """(FLOPs, formula, bytes or None, bytes source) of a call of a known type, else None."""
    import torch

    nn = torch.nn
    module, shapes, out = call.module, call.input_shapes, call.output_shapes
    if not shapes or not out or any(0 in s for s in (*shapes, *out)):
        return None
    x = shapes[0]
    if module is None:
        known = _known_function(call.type, call.args, call.kwargs)
        return None if known is None else (*known, None, TENSORS)
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
    recurrent = _RECURRENT.get(type(module).__name__)
    if recurrent is not None and isinstance(module, nn.RNNBase) and len(x) in (2, 3):
        if getattr(module, "proj_size", 0):
            return None  # an LSTM with projections: its recurrent width is not d_h
        S, B = _sequence(x, module.batch_first)
        formula = formulas.get(recurrent)
        directions = 2 if module.bidirectional else 1
        d_h, d_in, flops = module.hidden_size, module.input_size, 0
        for _ in range(module.num_layers):
            flops += directions * int(formula(B=B, S=S, d_in=d_in, d_h=d_h))
            d_in = d_h * directions
        return flops, recurrent, None, TENSORS
    if isinstance(module, nn.MultiheadAttention) and module._qkv_same_embed_dim:
        k_shape = shapes[1] if len(shapes) > 1 else x
        if len(x) not in (2, 3) or len(k_shape) != len(x):
            return None
        (S_q, B), (S_kv, _) = (
            _sequence(x, module.batch_first),
            _sequence(k_shape, module.batch_first),
        )
        E = module.embed_dim
        # Q and the output projection over the queries, K and V over the keys
        projections = 2 * int(formulas.mlp_flops(B=B * S_q, d_in=E, d_out=E))
        projections += 2 * int(formulas.mlp_flops(B=B * S_kv, d_in=E, d_out=E))
        if S_q == S_kv:
            flops = projections + int(formulas.attention_flops(B=B, S=S_q, d=E))
            return flops, "mlp_flops × 4 + attention_flops", None, TENSORS
        flops = projections + int(formulas.attention_flops_general(B=B, S_q=S_q, S_kv=S_kv, d=E))
        return flops, "mlp_flops × 4 + attention_flops_general", None, TENSORS
    if call.inner:
        # a module of its own around known ops (a mixture of experts' grouped matmul)
        correction = sum(flops - counted for _, flops, counted in call.inner)
        names = sorted({source for source, _, _ in call.inner})
        by_counter = call.counter_flops - sum(counted for _, _, counted in call.inner)
        source = " + ".join(([COUNTER] if by_counter else []) + names)
        return call.counter_flops + correction, source, None, TENSORS
    return None


_ARGUMENTS = {
    "F.scaled_dot_product_attention": (
        "query",
        "key",
        "value",
        "attn_mask",
        "dropout_p",
        "is_causal",
        "scale",
        "enable_gqa",
    ),
    "torch._grouped_mm": ("mat_a", "mat_b", "offs", "bias", "out_dtype"),
}
"""The positional parameters of the functional calls counted by a formula."""

_KNOWN_OPS = frozenset(_ARGUMENTS)


def _known_function(
    name: str, args: Sequence[Any], kwargs: Mapping[str, Any]
) -> tuple[int, str] | None:
    """(FLOPs, formula) of a known functional call from its operands' shapes, else None.

    Attention: q of shape (B, heads, S_q, d_head) against k and v of (B, n_kv, S_kv, d_head);
    causal attention only where S_q = S_kv (PyTorch aligns a causal mask of another shape to
    the top left). A grouped matmul: the rows of all groups times d_in × d_out.
    """
    bound = dict(zip(_ARGUMENTS[name], args, strict=False)) if name in _ARGUMENTS else {}
    bound.update(kwargs)
    shapes = {k: tuple(int(n) for n in v.shape) for k, v in bound.items() if hasattr(v, "shape")}
    if name == "F.scaled_dot_product_attention" and {"query", "key", "value"} <= set(shapes):
        q, k, v = shapes["query"], shapes["key"], shapes["value"]
        if len(q) < 2 or k[-1] != q[-1] or v[-1] != q[-1] or k[-2] != v[-2] or 0 in q + k:
            return None  # a value width other than the queries': no catalogue formula
        B, d = (q[0], math.prod(q[1:-2]) * q[-1]) if len(q) >= 3 else (1, q[-1])
        S_q, S_kv = q[-2], k[-2]
        if bound.get("is_causal"):
            if S_q != S_kv:
                return None
            return int(formulas.attention_flops_causal(B=B, S=S_q, d=d)), "attention_flops_causal"
        if S_q == S_kv:
            return int(formulas.attention_flops(B=B, S=S_q, d=d)), "attention_flops"
        flops = formulas.attention_flops_general(B=B, S_q=S_q, S_kv=S_kv, d=d)
        return int(flops), "attention_flops_general"
    if name == "torch._grouped_mm" and {"mat_a", "mat_b"} <= set(shapes):
        a, b = shapes["mat_a"], shapes["mat_b"]
        ranks = (len(a), len(b))
        rows_in_out = (
            (a[0], a[1], b[-1])  # (rows, d_in) by (groups, d_in, d_out): the rows split
            if ranks in ((2, 3), (2, 2))  # or (rows, d_in) by (d_in, d_out): d_in split
            else (a[0] * a[1], a[2], b[-1])  # (groups, rows, d_in) by (groups, d_in, d_out)
            if ranks == (3, 3)
            else (a[1], a[2], b[-1])  # (groups, rows, d_in) by (d_in, d_out): d_out split
            if ranks == (3, 2)
            else None
        )
        if rows_in_out is None or 0 in rows_in_out:
            return None
        rows, d_in, d_out = rows_in_out
        flops = formulas.grouped_mm_flops(n_tokens=rows, top_k=1, d_in=d_in, d_out=d_out)
        return int(flops), "grouped_mm_flops"
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
Progress = Callable[[str], None]
"""Told what :func:`analyze` does now (``timing call 3 of 40: layer1.0.conv1``)."""


def _prepare(
    model: Any, args: Sequence[Any], kwargs: Mapping[str, Any], device: str, dtype: str | None
) -> tuple[Any, tuple[Any, ...], dict[str, Any]]:
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

    return model, tuple(convert(v) for v in args), {k: convert(v) for k, v in kwargs.items()}


def _time(
    calls: Sequence[tuple[str, Callable[[], object], bool]],
    device: str,
    repeats: int,
    progress: Progress | None = None,
) -> tuple[list[tuple[float, ...]], BaseException | None]:
    """Raw seconds of each (name, call, flush) with the kernels' timers, one flush buffer for
    every call; on Ctrl-C or SIGTERM, the calls timed so far and the signal's exception."""
    import torch

    from gpuconcepts.measure import make_flusher, time_cpu, time_cuda

    flusher = make_flusher(device) if any(flush for _, _, flush in calls) else None
    timer = time_cuda if device == "cuda" else time_cpu
    times: list[tuple[float, ...]] = []
    try:
        with torch.inference_mode():
            for number, (name, fn, flush) in enumerate(calls, start=1):
                if progress is not None:
                    progress(f"timing call {number} of {len(calls)}: {name}")
                times.append(timer(fn, repeats=repeats, flush=flusher if flush else None))
    except (KeyboardInterrupt, Terminated) as stop:
        return times, stop
    return times, None


TF32_DEFAULTS = {"matmul": False, "conv": True}
"""PyTorch's defaults for float32 on TF32 tensor cores: ``torch.backends.cuda.matmul.allow_tf32``
is off (matmuls keep FP32 precision), ``torch.backends.cudnn.allow_tf32`` is on
(convolutions use TF32)."""

_TF32_FLAGS = {"matmul": "torch.backends.cuda.matmul.allow_tf32", "conv": "cudnn.allow_tf32"}


def tf32_settings() -> dict[str, bool]:
    """Whether this process lets PyTorch run float32 matmuls and convolutions on TF32 tensor
    cores (see :data:`TF32_DEFAULTS`)."""
    import torch

    return {
        "matmul": bool(torch.backends.cuda.matmul.allow_tf32),
        "conv": bool(torch.backends.cudnn.allow_tf32),
    }


def _kind(layer: Layer) -> str:
    """``conv`` for a convolution (cuDNN's TF32 setting), else ``matmul``."""
    conv = "conv" in layer.flops_source or layer.type.startswith(("Conv", "F.conv"))
    return "conv" if conv else "matmul"


def _predictions(
    layers: Sequence[Layer], dtype: str, launch_here: float | None
) -> tuple[tuple[GpuPrediction, ...], list[dict[str, str | None]], tuple[str, ...]]:
    """Each datasheet GPU's time for the calls by :data:`formulas.kernel_seconds` (the
    roofline with a launch floor per call), each call's bound there, and what was assumed.

    A float32 call that does arithmetic is read against the TF32 peak when this process's
    settings (:func:`tf32_settings`) send its kind there; ``launch_here`` is the latency floor
    measured on this machine's GPU, which replaces :data:`hardware.LAUNCH_FLOOR_SECONDS` for
    the datasheet row of that GPU.
    """
    import numpy as np

    from gpuconcepts.hardware import GPUS, LAUNCH_FLOOR_SECONDS, TORCH_DTYPES, current_gpu

    settings = tf32_settings()
    here = current_gpu() if launch_here is not None else None
    flops = np.array([float(layer.flops) for layer in layers])
    traffic = np.array([float(layer.bytes) for layer in layers])
    per_layer: list[dict[str, str | None]] = [{} for _ in layers]
    predictions = []
    for gpu in GPUS.values():
        if gpu.peak(dtype) is None:  # the T4 has no bf16: no prediction in the model's dtype
            for bounds in per_layer:
                bounds[gpu.name] = None
            continue
        keys = []
        for layer in layers:
            key = TORCH_DTYPES.get(layer.dtype, TORCH_DTYPES.get(dtype, dtype))
            if key not in gpu.flops_per_s:
                key = TORCH_DTYPES.get(dtype, dtype)
            if key == "fp32" and layer.flops > 0 and settings[_kind(layer)] and gpu.peak("tf32"):
                key = "tf32"
            keys.append(key)
        launch = launch_here if here is gpu and launch_here else LAUNCH_FLOOR_SECONDS
        values = {
            # The formulas want F > 0; one FLOP in place of none leaves the bound at Q/beta.
            "F": np.maximum(flops, 1.0),
            "Q": traffic,
            "P": np.array([gpu.flops_per_s[key] for key in keys]),
            "beta": np.full_like(flops, gpu.bytes_per_s),
        }
        roof = formulas.roofline_seconds.vectorized(**values)
        seconds = formulas.kernel_seconds.vectorized(**values, t_launch=np.full_like(flops, launch))
        for i, (layer, key) in enumerate(zip(layers, keys, strict=True)):
            per_layer[i][gpu.name] = (
                "overhead"
                if roof[i] <= launch
                else classify(layer.intensity, gpu.datasheet_peaks(key))
            )
        total = float(np.sum(seconds))
        spent = {"memory": 0.0, "overhead": 0.0, "compute": 0.0}
        for t, bounds in zip(seconds, per_layer, strict=True):
            spent[str(bounds[gpu.name])] += float(t)
        predictions.append(
            GpuPrediction(
                gpu=gpu.name,
                dtype=TORCH_DTYPES.get(dtype, dtype),
                ridge_point=gpu.ridge_point(dtype),
                seconds=total,
                memory_share=spent["memory"] / total if total > 0 else 0.0,
                overhead_share=spent["overhead"] / total if total > 0 else 0.0,
                launch_seconds=launch,
            )
        )
    return tuple(predictions), per_layer, _assumed(layers, settings, launch_here, here)


def _assumed(
    layers: Sequence[Layer], settings: Mapping[str, bool], launch_here: float | None, here: Any
) -> tuple[str, ...]:
    """What the GPU predictions assumed, in words: TF32 where float32 computes, the floor."""
    from gpuconcepts.hardware import LAUNCH_FLOOR_SECONDS

    said = []
    kinds = {_kind(layer) for layer in layers if layer.dtype == "float32" and layer.flops > 0}
    what = {"conv": "convolutions", "matmul": "matmuls (linear layers, attention, recurrences)"}
    for kind in sorted(kinds):
        on = settings[kind]
        where = "TF32 tensor cores (the tf32 peak)" if on else "CUDA cores (the fp32 peak)"
        default = "PyTorch's default" if on == TF32_DEFAULTS[kind] else "as set in this process"
        said.append(
            f"on a GPU, float32 {what[kind]} run on {where}: {_TF32_FLAGS[kind]} = {on}, {default}."
        )
    floor = (
        f"a launch floor of {si(LAUNCH_FLOOR_SECONDS, 's')} per call on each GPU "
        "(hardware.LAUNCH_FLOOR_SECONDS: one eager op's dispatch and kernel launch)"
    )
    if launch_here and here is not None:
        floor += f", {si(launch_here, 's')} on {here.name} (measured here)"
    return (*said, floor + ".")


FAR_FROM_RECORDED = 1.5
"""Peaks measured now that differ from a run recorded on the same machine by more than this
factor (either way) are worth a warning: a busy machine, another clock, another setting."""

FAR_BELOW_DATASHEET = 3.0
"""A GPU's measured peak below its datasheet's by more than this factor is worth a warning."""


def peaks_warnings(peaks: Peaks, device: str, runs: Sequence[Any] | None = None) -> tuple[str, ...]:
    """Warnings when peaks measured now are far from a run recorded on the same machine
    (``docs/runs/`` of a source checkout, or ``runs``) or from the GPU's datasheet.

    >>> from gpuconcepts.run import Provenance, Run
    >>> from gpuconcepts.measure import cpu_model, cpu_threads
    >>> from dataclasses import replace
    >>> here = replace(Provenance.example(), cpu_model=cpu_model(), cpu_threads=cpu_threads())
    >>> then = Run(here, Peaks("cpu", 150e9, 30e9, "float32"), (), {}, ())
    >>> peaks_warnings(Peaks("cpu", 55e9, 29e9, "float32"), "cpu", [then])[0][:60]
    'the compute roof measured now, 55 GFLOP/s, is 0.37x the 150 '
    """
    from gpuconcepts.hardware import current_gpu
    from gpuconcepts.measure import cpu_model, cpu_threads

    runs = _recorded_runs() if runs is None else runs
    said = []
    roofs = (("compute", "flops_per_s", "FLOP/s"), ("bandwidth", "bytes_per_s", "B/s"))
    for run in runs:
        origin = run.provenance
        if origin.device != device or run.peaks.dtype != peaks.dtype:
            continue
        if device == "cpu" and (origin.cpu_model, origin.cpu_threads) != (
            cpu_model(),
            cpu_threads(),
        ):
            continue
        gpu = current_gpu() if device == "cuda" else None
        if device == "cuda" and (
            gpu is None
            or origin.gpu_name is None
            or not any(re.search(pattern, origin.gpu_name) for pattern in gpu.device_names)
        ):
            continue
        for what, field_name, unit in roofs:
            now, then = getattr(peaks, field_name), getattr(run.peaks, field_name)
            if not 1 / FAR_FROM_RECORDED <= now / then <= FAR_FROM_RECORDED:
                said.append(
                    f"the {what} roof measured now, {si(now, unit)}, is {significant(now / then, 2)}x the "
                    f"{si(then, unit)} recorded on this machine ({origin.created_utc}): it may "
                    "be busy, and calls near the ridge may change label; --peaks RUN.json "
                    "reuses a saved run's peaks"
                )
    datasheet = current_gpu() if device == "cuda" else None
    if datasheet is not None and datasheet.peak(peaks.dtype) is not None:
        for what, now, limit, unit in (
            ("compute", peaks.flops_per_s, float(datasheet.peak(peaks.dtype) or 0), "FLOP/s"),
            ("bandwidth", peaks.bytes_per_s, datasheet.bytes_per_s, "B/s"),
        ):
            if now > limit * 1.05 or now < limit / FAR_BELOW_DATASHEET:
                said.append(
                    f"the {what} roof measured now, {si(now, unit)}, is {significant(now / limit, 2)}x "
                    f"{datasheet.name}'s datasheet ({si(limit, unit)}): a measurement to doubt"
                )
    return tuple(said)


def _recorded_runs() -> list[Any]:
    """The runs in ``docs/runs/`` of this source checkout (none in an installed package)."""
    from pathlib import Path

    from gpuconcepts.run import load_all

    folder = Path(__file__).resolve().parents[2] / "docs" / "runs"
    try:
        return load_all(folder)
    except GpuConceptsError:
        return []


def analyze(
    model: Any,
    *args: Any,
    device: str = "auto",
    dtype: str | None = None,
    peaks: PeaksLike | None = None,
    repeats: int = 5,
    progress: Progress | None = None,
    **kwargs: Any,
) -> Report:
    """Count, time and place every leaf module call of one forward pass of ``model``.

    ``model(*args, **kwargs)`` is the forward pass: positional and keyword inputs as the
    model takes them (``analyze(model, input_ids=ids, attention_mask=mask)``); the keywords
    named below are analyze's own.

    Args:
        model: a ``torch.nn.Module``; it is not changed (a copy is made when it has to move
            to ``device`` or change ``dtype``) and runs in eval mode, as for inference.
        args, kwargs: the forward pass's inputs.
        device: ``"auto"``, ``"cpu"`` or ``"cuda"`` (:func:`gpuconcepts.measure.resolve_device`).
        dtype: a dtype name or alias (``float32``/``fp32``, ``float16``/``fp16``,
            ``bfloat16``/``bf16``) for the weights and floating-point inputs; None keeps the
            model's.
        peaks: this device's measured peaks (:class:`gpuconcepts.roofline.Peaks`, e.g. a
            saved Run's ``run.peaks``); measured with :func:`gpuconcepts.kernels.measure_peaks`
            when None, with a warning when they are far from a recorded run of this machine.
        repeats: timed repetitions of each call (identical calls are timed once).
        progress: told what is done now, for a progress line.

    Raises:
        GpuConceptsError: no input, a model that is not a module (or a TorchScript one), a
            meta-device model or input, a shape a layer rejects (naming the layer and the
            shapes), or running out of memory (needed and free).
        KeyboardInterrupt: Ctrl-C while the calls are timed; its ``report`` attribute holds
            the report of the calls timed so far (:attr:`Report.interrupted`).
    """
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    from gpuconcepts.measure import resolve_device

    root = _check(model, args, kwargs, device, dtype, peaks, repeats)
    dtype = None if dtype is None else dtype_name(dtype)
    resolved = resolve_device(device)
    try:
        model, args, kwargs = _prepare(model, args, kwargs, resolved, dtype)
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
    if progress is not None:
        progress("counting: one forward pass")
    try:
        # no_grad, not inference_mode: tensors keep their version counters, so an in-place
        # write is told from a view
        with torch.no_grad(), counter, recorder.mode:
            model(*args, **kwargs)
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
    try:
        model.eval()
        return _report(
            model,
            (args, kwargs),
            recorder,
            int(counter.get_total_flops()),
            resolved,
            peaks,
            repeats,
            progress,
        )
    finally:
        for module, mode in training.items():
            module.train(mode)


def _check(
    model: Any,
    args: Sequence[Any],
    kwargs: Mapping[str, Any],
    device: object,
    dtype: object,
    peaks: object,
    repeats: object,
) -> str:
    """The model's name, once every argument of :func:`analyze` is one it can use."""
    import torch

    if not isinstance(model, torch.nn.Module):
        raise GpuConceptsError(
            f"analyze: model must be a torch.nn.Module; got {type(model).__name__}"
        )
    root = type(model).__name__
    if isinstance(model, torch.jit.ScriptModule):
        raise GpuConceptsError(
            f"analyze: {root} is a TorchScript module, whose layers hooks cannot see; "
            "pass the Python module it was scripted or traced from"
        )
    if not args and not kwargs:
        raise GpuConceptsError("analyze: give at least one example input (the forward's arguments)")
    if type(repeats) is not int or repeats < 1:
        raise GpuConceptsError(f"analyze: repeats must be a positive integer; got {repeats!r}")
    if device not in ("auto", "cpu", "cuda"):
        raise GpuConceptsError(f"analyze: device must be 'auto', 'cpu' or 'cuda'; got {device!r}")
    if dtype is not None and not isinstance(dtype, str):
        raise GpuConceptsError(f"analyze: dtype must be a name such as 'float32'; got {dtype!r}")
    if dtype is not None and dtype_name(dtype) == "tf32":
        raise GpuConceptsError(
            "analyze: dtype 'tf32' is float32 storage: run in float32, and PyTorch's TF32 "
            "settings decide which calls use TF32 (the GPU predictions follow them)"
        )
    if peaks is not None and not isinstance(peaks, Peaks):
        raise GpuConceptsError(
            "analyze: peaks must be a gpuconcepts.roofline.Peaks (a saved run's run.peaks); "
            f"got {type(peaks).__name__}"
        )
    if any(t.is_meta for t in [*model.parameters(), *model.buffers()]):
        raise GpuConceptsError(
            f"analyze: {root} has its weights on the meta device, with no data to run; "
            "build it on a real device (or model.to_empty(device='cpu') and load the weights)"
        )
    for where, value in [*enumerate(args, start=1), *kwargs.items()]:
        if any(t.is_meta for t in _tensors(value)):
            raise GpuConceptsError(
                f"analyze: input {where} is a meta tensor, with no data to run; give real values"
            )
    return root


def _report(
    model: Any,
    inputs: tuple[tuple[Any, ...], dict[str, Any]],
    recorder: _Recorder,
    counter_total: int,
    device: str,
    peaks: PeaksLike | None,
    repeats: int,
    progress: Progress | None,
) -> Report:
    import torch

    from gpuconcepts.measure import device_name, time_function

    root = type(model).__name__
    source, warnings = "given", ()
    if peaks is None:
        from gpuconcepts.kernels import measure_peaks

        if progress is not None:
            progress("measuring this machine's peaks (--peaks RUN.json reuses a saved run's)")
        peaks = measure_peaks(device, quick=device == "cpu")
        source, warnings = "measured now", peaks_warnings(peaks, device)  # type: ignore[assignment]
    # a call on empty tensors moves nothing and computes nothing: it has no place on a roofline
    calls = [call for call in recorder.calls if call.tensor_bytes > 0 or call.counter_flops > 0]
    if not calls:
        raise GpuConceptsError(
            f"{root}: the forward pass ran no layer and no tensor operation to analyze"
        )
    counted = []
    for call in calls:
        known = _known(call)
        flops, formula, traffic, traffic_source = (
            known if known is not None else (call.counter_flops, COUNTER, None, TENSORS)
        )
        counted.append(
            (flops, formula, call.tensor_bytes if traffic is None else traffic, traffic_source)
        )
    # identical calls (same configuration, weights' and inputs' shapes) are timed once
    first: dict[object, int] = {}
    for i, call in enumerate(calls):
        first.setdefault(call.key, i)
    timed_first = sorted(first.values())
    replays = []
    for i in timed_first:
        call, (flops, _, traffic, _) = calls[i], counted[i]
        target, args, kwargs = call.target, call.args, call.kwargs
        # the kernels' flush policy: flush before each repetition exactly when memory-bound
        flush = classify(flops / traffic, peaks) == "memory"
        replays.append((_name(call), (lambda t=target, a=args, k=kwargs: t(*a, **k)), flush))
    raw, stop = _time(replays, device, repeats, progress)
    times = {calls[i].key: seconds for i, seconds in zip(timed_first, raw, strict=False)}
    forward: tuple[float, ...] = ()
    if stop is None:
        if progress is not None:
            progress("timing the plain forward pass")
        try:
            with torch.inference_mode():
                forward = time_function(
                    lambda: model(*inputs[0], **inputs[1]), device, repeats=min(repeats, 3)
                )
        except (KeyboardInterrupt, Terminated) as interrupt:
            stop = interrupt
    dtype = next(
        (str(p.dtype).removeprefix("torch.") for p in model.parameters() if p.is_floating_point()),
        "float32",
    )
    layers = []
    for index, (call, (flops, formula, traffic, traffic_source)) in enumerate(
        zip(calls, counted, strict=True), start=1
    ):
        if call.key not in times:
            continue  # interrupted before its timing
        seconds = times[call.key]
        rows, row_bytes = _gathers(call)
        timing = Measurement(
            call.path, device, {}, tuple(seconds), flops, traffic,
            random_rows=rows, row_bytes=row_bytes,
        )  # fmt: skip
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
                flops_source=formula,
                counter_flops=call.counter_flops,
                bytes=traffic,
                bytes_source=traffic_source,
                raw_seconds=seconds,
                flushed=classify(flops / traffic, peaks) == "memory",
                bound=observed_bound(timing, peaks),
                warning=_uncounted(call) if flops == 0 else "",
                shares_timing_of=None if first[call.key] == index - 1 else first[call.key] + 1,
            )
        )
    launch_here = peaks.latency_seconds if device == "cuda" else None
    gpus, per_layer, assumed = _predictions(layers, dtype, launch_here)
    layers = [
        Layer(**{**vars(layer), "predicted": predicted})
        for layer, predicted in zip(layers, per_layer, strict=True)
    ]
    report = Report(
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
        views=tuple(recorder.views),
        warnings=warnings,
        assumptions=assumed,
        peaks_source=source,
        interrupted="" if stop is None else _signal_name(stop),
        calls_counted=len(calls),
    )
    if stop is not None:
        stop.report = report  # type: ignore[attr-defined]
        raise stop
    return report


def _name(call: _Call) -> str:
    return call.path if call.call == 1 else f"{call.path} (call {call.call})"


def _signal_name(stop: BaseException) -> str:
    return "Ctrl-C" if isinstance(stop, KeyboardInterrupt) else "SIGTERM"


def _uncounted(call: _Call) -> str:
    """The warning of a call that computes but was counted 0 FLOPs; empty when it does not."""
    if not call.computes:
        return ""
    return (
        f"{call.type} computes ({call.computes}) but was counted 0 FLOPs: no catalogue "
        "formula fits it and FlopCounterMode has no rule for the kernel it ran, so the total "
        "is short by its FLOPs"
    )


# -- the command line ----------------------------------------------------------------------
INPUT_DTYPES = ("float32", "float64", "float16", "bfloat16", "int64", "int32", "bool")
"""Element types an ``--input`` may name after its shape."""

_SHAPE = re.compile(r"^\d+(?:x\d+)*$")
_NAME = re.compile(r"^[A-Za-z_]\w*$")
_RANGE = re.compile(r"^(-?\d+(?:\.\d+)?)\.\.(-?\d+(?:\.\d+)?)$")
_OWN_KEYWORDS = ("device", "dtype", "peaks", "repeats", "progress")
INPUT_RULE = (
    "an input is [NAME=]SHAPE[:DTYPE[:LOW..HIGH]] or [NAME=]ones:SHAPE[:DTYPE], such as "
    "8x3x224x224, 64x26:int64:0..999 or attention_mask=ones:1x128"
)


@dataclass(frozen=True)
class InputSpec:
    """One ``--input``: the keyword it is passed as (None: positional), its shape and dtype
    (None: the model's floating-point type), the range its values are drawn from (both ends
    included for integers), or all ones."""

    name: str | None
    shape: tuple[int, ...]
    dtype: str | None = None
    low: float | None = None
    high: float | None = None
    ones: bool = False


def parse_input(text: str) -> InputSpec:
    """An ``--input`` value (:data:`INPUT_RULE`).

    >>> parse_input("8x3x224x224")
    InputSpec(name=None, shape=(8, 3, 224, 224), dtype=None, low=None, high=None, ones=False)
    >>> parse_input("input_ids=1x128:int64:0..30521")
    InputSpec(name='input_ids', shape=(1, 128), dtype='int64', low=0, high=30521, ones=False)
    >>> parse_input("attention_mask=ones:1x128")
    InputSpec(name='attention_mask', shape=(1, 128), dtype=None, low=None, high=None, ones=True)
    >>> parse_input("8x-3")
    Traceback (most recent call last):
    ...
    gpuconcepts.errors.GpuConceptsError: --input '8x-3': a shape is positive integers joined by x; an input is [NAME=]SHAPE[:DTYPE[:LOW..HIGH]] or [NAME=]ones:SHAPE[:DTYPE], such as 8x3x224x224, 64x26:int64:0..999 or attention_mask=ones:1x128
    """
    given = text.strip()
    name, eq, rest = given.partition("=")
    if not eq:
        name, rest = "", given
    elif not _NAME.match(name):
        raise GpuConceptsError(
            f"--input {text!r}: {name!r} is not a keyword name (letters, digits and _)"
        )
    elif name in _OWN_KEYWORDS:
        raise GpuConceptsError(
            f"--input {text!r}: {name} is one of analyze's own options, not the model's input"
        )
    parts = rest.split(":")
    ones = parts[0] == "ones"
    parts = parts[1:] if ones else parts
    if len(parts) > (2 if ones else 3):
        raise GpuConceptsError(f"--input {text!r}: too many ':' parts; {INPUT_RULE}")
    if not _SHAPE.match(parts[0]) or 0 in (shape := tuple(int(n) for n in parts[0].split("x"))):
        raise GpuConceptsError(
            f"--input {text!r}: a shape is positive integers joined by x; {INPUT_RULE}"
        )
    dtype = parts[1] if len(parts) > 1 else None
    if dtype is not None and dtype not in INPUT_DTYPES:
        raise GpuConceptsError(
            f"--input {text!r}: element type {dtype!r} is not one of {', '.join(INPUT_DTYPES)}"
        )
    low = high = None
    if len(parts) > 2:
        found = _RANGE.match(parts[2])
        if found is None:
            raise GpuConceptsError(
                f"--input {text!r}: a range is LOW..HIGH, two numbers such as 0..999"
            )
        low, high = (float(v) if "." in v else int(v) for v in found.groups())
        if low > high:
            raise GpuConceptsError(f"--input {text!r}: the range's LOW is above its HIGH")
        if dtype in ("int64", "int32", "bool") and not (type(low) is int and type(high) is int):
            raise GpuConceptsError(f"--input {text!r}: an {dtype} range is whole numbers")
    return InputSpec(name or None, shape, dtype, low, high, ones)


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
    return _factory_in(namespace, file, name)


def import_factory(spec: str) -> Callable[[], Any]:
    """The function of a ``pkg.module:fn`` spec (``--factory``): the module is imported as
    ``import pkg.module`` would, from the installed packages and the working directory."""
    import importlib

    module_name, sep, name = spec.rpartition(":")
    if (
        not sep
        or not module_name
        or not name
        or not all(_NAME.match(part) for part in (*module_name.split("."), name))
    ):
        raise GpuConceptsError(
            f"--factory {spec!r}: expected pkg.module:function, e.g. torchvision.models:resnet18"
        )
    if "" not in sys.path and "." not in sys.path:
        sys.path.insert(0, "")  # as `python -c "import pkg.module"` from here would find it
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        raise GpuConceptsError(
            f"--factory {spec!r}: no module named {error.name!r} (is it installed?)"
        ) from None
    except Exception as error:  # noqa: BLE001 - whatever the module raises, in one line
        raise GpuConceptsError(f"{module_name} raised {_first_line(error)} while loading") from None
    return _factory_in(module, module_name, name)


def _factory_in(namespace: Any, where: str, name: str) -> Callable[[], Any]:
    factory = getattr(namespace, name, None)
    if factory is None:
        defined = sorted(
            n for n, v in vars(namespace).items() if callable(v) and not n.startswith("_")
        )
        shown = ", ".join(defined[:12]) + (", ..." if len(defined) > 12 else "")
        raise GpuConceptsError(f"{where} defines no {name!r}; its callables are {shown or 'none'}")
    if not callable(factory):
        raise GpuConceptsError(f"{where}: {name} is a {type(factory).__name__}, not a function")
    return factory  # type: ignore[no-any-return]


def build_model(spec: str, *, module: bool = False) -> Any:
    """Call the factory of a ``FILE.py:FACTORY`` spec (or, with ``module``, of a
    ``pkg.module:fn`` one); it must return a ``torch.nn.Module``."""
    import torch

    factory = import_factory(spec) if module else load_factory(spec)
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
    model: Any, specs: Sequence[InputSpec], device: str, dtype: str | None
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Example inputs for ``model`` from ``--input`` specs: positional ones, then keywords.

    Floating-point inputs are standard normal in ``dtype`` (else the model's). Integer inputs
    index the embedding that reads them: one probe forward pass finds, for each, the table
    it is looked up in, and its values are uniform over that table's rows; an integer input
    that no embedding reads (a mask) is all ones. A ``LOW..HIGH`` range or ``ones`` overrides
    both. Raises before allocating when the inputs would not fit in the free memory.
    """
    import torch

    from gpuconcepts.kernels import torch_dtype
    from gpuconcepts.measure import free_memory_bytes

    floating = next((p.dtype for p in model.parameters() if p.is_floating_point()), torch.float32)
    if dtype is not None:
        floating = torch_dtype(dtype)
    kinds = [getattr(torch, s.dtype) if s.dtype else floating for s in specs]
    needed = sum(
        math.prod(s.shape) * torch.empty((), dtype=k).element_size()
        for s, k in zip(specs, kinds, strict=True)
    )
    free = free_memory_bytes(device)
    if needed > free:
        raise GpuConceptsError(
            f"out of memory for the inputs: they need {binary_bytes(needed)} but "
            f"{binary_bytes(free)} is free on {device}"
        )
    generator = torch.Generator(device=device).manual_seed(0)

    def draw(spec: InputSpec, kind: torch.dtype, rows: int | None) -> torch.Tensor:
        if spec.ones or (spec.low is None and not kind.is_floating_point and rows is None):
            return torch.ones(spec.shape, dtype=kind, device=device)
        if kind.is_floating_point:
            values = torch.randn(spec.shape, dtype=kind, device=device, generator=generator)
            if spec.low is None or spec.high is None:
                return values
            uniform = torch.rand(spec.shape, device=device, generator=generator)
            return (spec.low + (spec.high - spec.low) * uniform).to(kind)
        low, high = (0, rows or 2) if spec.low is None else (int(spec.low), int(spec.high or 0) + 1)
        return torch.randint(low, high, spec.shape, dtype=kind, device=device, generator=generator)

    tables = [
        m.num_embeddings
        for m in model.modules()
        if isinstance(m, torch.nn.Embedding | torch.nn.EmbeddingBag)
    ]
    # first guess: any table can take indices below the smallest one
    rows: dict[int, int | None] = {i: min(tables, default=None) for i in range(len(specs))}
    tensors = [draw(s, k, rows[i]) for i, (s, k) in enumerate(zip(specs, kinds, strict=True))]
    if tables and any(not k.is_floating_point and s.low is None and not s.ones
                      for s, k in zip(specs, kinds, strict=True)):  # fmt: skip
        rows = dict.fromkeys(range(len(specs))) | _embedding_rows(model, specs, tensors)
        tensors = [draw(s, k, rows[i]) for i, (s, k) in enumerate(zip(specs, kinds, strict=True))]
    args = tuple(t for s, t in zip(specs, tensors, strict=True) if s.name is None)
    return args, {s.name: t for s, t in zip(specs, tensors, strict=True) if s.name is not None}


def _embedding_rows(
    model: Any, specs: Sequence[InputSpec], tensors: Sequence[Any]
) -> dict[int, int]:
    """For each input an embedding reads directly (its values or a view of them) in one
    forward pass, the rows of the smallest such table, by the input's position."""
    import torch

    storages = {t.untyped_storage().data_ptr(): i for i, t in enumerate(tensors)}
    found: dict[int, int] = {}

    def seen(module: Any, args: tuple[Any, ...]) -> None:
        if args and isinstance(args[0], torch.Tensor):
            i = storages.get(args[0].untyped_storage().data_ptr())
            if i is not None:
                found[i] = min(found.get(i, module.num_embeddings), module.num_embeddings)

    embeddings = (torch.nn.Embedding, torch.nn.EmbeddingBag)
    handles = [
        m.register_forward_pre_hook(seen) for m in model.modules() if isinstance(m, embeddings)
    ]
    place = next((p.device for p in model.parameters()), torch.device("cpu"))
    moved = [t.to(place) for t in tensors]
    storages = {t.untyped_storage().data_ptr(): i for i, t in enumerate(moved)}
    args = [t for s, t in zip(specs, moved, strict=True) if s.name is None]
    kwargs = {s.name: t for s, t in zip(specs, moved, strict=True) if s.name is not None}
    try:
        with torch.no_grad():
            model(*args, **kwargs)
    except Exception:  # noqa: BLE001, S110 - the analysis runs it again and names what fails
        pass
    finally:
        for handle in handles:
            handle.remove()
    return found


class ProgressLine:
    """What ``analyze`` does now, on stderr, once it has run for ``after`` seconds: rewritten in
    place on a terminal, else one line every ``every`` seconds. :meth:`done` clears it."""

    def __init__(self, stream: Any = None, after: float = 2.0, every: float = 5.0) -> None:
        import time

        self.stream = sys.stderr if stream is None else stream
        self.after, self.every = after, every
        self.start = time.monotonic()
        self.last = -math.inf
        self.width = 0
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())

    def __call__(self, text: str) -> None:
        import time

        now = time.monotonic()
        if now - self.start < self.after or now - self.last < (0.2 if self.tty else self.every):
            return
        self.last = now
        line = f"gpuconcepts analyze: {text} ({significant(now - self.start)} s)"[: TEXT_WIDTH - 1]
        if self.tty:
            self.stream.write("\r" + line.ljust(self.width))
            self.width = len(line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def done(self) -> None:
        if self.tty and self.width:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()
            self.width = 0


def run_analyze(
    spec: str | None,
    inputs: Sequence[str],
    *,
    dtype: str | None,
    device: str,
    as_json: bool,
    repeats: int,
    factory: str | None = None,
    as_csv: bool = False,
    figure: str | None = None,
    peaks_path: str | None = None,
    threads: int | None = None,
) -> int:
    """``gpuconcepts analyze``: build the model, make its inputs, print the table, JSON or CSV
    (and write the figure); on Ctrl-C, what was measured so far, then the signal goes on."""
    import torch

    if (spec is None) == (factory is None):
        raise GpuConceptsError("give FILE.py:FACTORY or --factory pkg.module:fn (one of them)")
    specs = [parse_input(text) for text in inputs]
    if threads is not None and threads < 1:
        raise GpuConceptsError(f"--threads {threads}: a thread count is 1 or more")
    previous = torch.get_num_threads()
    try:
        torch.set_num_threads(threads or previous)
        return _run_analyze(
            spec, specs, factory, dtype, device, as_json, as_csv, figure, peaks_path, repeats
        )
    finally:
        torch.set_num_threads(previous)


def _run_analyze(
    spec: str | None,
    specs: Sequence[InputSpec],
    factory: str | None,
    dtype: str | None,
    device: str,
    as_json: bool,
    as_csv: bool,
    figure: str | None,
    peaks_path: str | None,
    repeats: int,
) -> int:
    from pathlib import PurePath

    from gpuconcepts.files import check_writable, save_figure
    from gpuconcepts.measure import resolve_device

    resolved = resolve_device(device)
    peaks, source = None, None
    if peaks_path is not None:
        from gpuconcepts.run import load

        saved = load(peaks_path)
        if saved.peaks.device != resolved:
            raise GpuConceptsError(
                f"--peaks {peaks_path}: its peaks were measured on {saved.peaks.device}; "
                f"analyze runs on {resolved}"
            )
        peaks, source = saved.peaks, f"from {peaks_path}, {saved.provenance.created_utc}"
    if figure is not None:
        require("matplotlib", "`analyze --figure`", "plots")
        if not PurePath(figure).suffix:
            raise GpuConceptsError(
                f"--figure {figure}: give the figure a suffix (.svg, .png, .pdf)"
            )
        check_writable(figure)
    origin = spec if spec is not None else str(factory)
    progress = ProgressLine()

    def write(report: Report) -> None:
        if source is not None:
            report = dataclasses.replace(report, peaks_source=source)
        if figure is not None:
            save_figure(report.figure(), figure)
        text = report.to_json() if as_json else report.csv() if as_csv else report.text()
        sys.stdout.write(text.rstrip("\n") + "\n")

    with user_code(origin, quiet=as_json or as_csv):
        model = build_model(origin, module=factory is not None)
        args, kwargs = make_inputs(model, specs, resolved, dtype)
        try:
            report = analyze(
                model,
                *args,
                device=resolved,
                dtype=dtype,
                peaks=peaks,
                repeats=repeats,
                progress=progress,
                **kwargs,
            )
        except (KeyboardInterrupt, Terminated) as stop:
            progress.done()
            partial = getattr(stop, "report", None)
            if partial is not None:
                write(partial)
            raise
        finally:
            progress.done()
    write(report)
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
