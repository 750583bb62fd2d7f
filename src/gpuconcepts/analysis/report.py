"""What :func:`~gpuconcepts.analysis.analyze` returns: the :class:`Report` of the whole pass,
made of one :class:`Layer` per call (its home is :mod:`gpuconcepts.analysis.values`, with the
rest of the report's parts), and the report's text, table and CSV. Its Markdown table and
its figure are drawn above it (:mod:`gpuconcepts.render.text.analysis`,
:mod:`gpuconcepts.render.plots.analysis`): the analysis imports no renderer.

The report keeps this machine's :class:`~gpuconcepts.roofline.Peaks` whole (every cache level,
the floors, the sweeps), so a call's label here is :func:`gpuconcepts.roofline.observe`'s, the
one placement rule of the book, and its figure draws the same roofs. Nothing here prints: the
CLI writes what these methods return.
"""

# csv and textwrap are imported inside the functions that write them.
# ruff: noqa: PLC0415

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gpuconcepts.analysis.values import (
    COUNTER,
    NEAR_ROOF,
    TENSORS,
    GpuPrediction,
    Layer,
    ObservedBound,
    observed_bound,
)
from gpuconcepts.roofline import FASTER_PATH, Peaks
from gpuconcepts.tables import aligned
from gpuconcepts.units import binary_bytes, percent, plain_number, si, significant

__all__ = [  # the report's parts (gpuconcepts.analysis.values) keep their import paths here
    "COUNTER",
    "NEAR_ROOF",
    "TENSORS",
    "TEXT_WIDTH",
    "GpuPrediction",
    "Layer",
    "ObservedBound",
    "Report",
    "count_types",
    "fit_table",
    "observed_bound",
    "shapes_text",
]

TEXT_WIDTH = 100
"""Columns the text report fits in."""


# -- the report ----------------------------------------------------------------------------
def above_roof(layer: Layer) -> str:
    """The report's line for a call above its roof beyond its spread: a finding when it beat
    the compute peak P within the hardware's limit (:attr:`Layer.faster_path`), else an
    anomaly."""
    if layer.faster_path:
        return (
            f"Finding: {layer.index} {layer.name} ran above the compute peak P, within the "
            f"hardware's limit: {FASTER_PATH}."
        )
    return (
        f"Anomaly: {layer.index} {layer.name} ran above its {layer.bound} roof, beyond its "
        "spread (a faulty timing, or a ceiling measured in a busy moment)."
    )


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
    peaks: Peaks
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
        """This machine's ridge point, FLOP/byte (:attr:`Peaks.ridge_point`)."""
        return self.peaks.ridge_point

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
            "peaks": {**self.peaks.to_dict(), "source": self.peaks_source},
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
            f"({self.peaks.dtype}, {self.peaks_source}): {si(self.peaks.flops_per_s, 'FLOP/s')}, "
            f"{si(self.peaks.bytes_per_s, 'B/s')}, ridge {significant(self.ridge_point)} FLOP/B."
        )
        if self.dtype != self.peaks.dtype:
            lines.append(
                f"The compute roof here was measured in {self.peaks.dtype}; the model ran in "
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
        return lines + [above_roof(layer) for layer in self.layers if layer.above_roof]

    def memory_bound_everywhere(self) -> tuple[Layer, ...]:
        """Calls left of the ridge on every datasheet GPU: more FLOP/s would not speed them up."""
        return tuple(
            layer
            for layer in self.layers
            if all(bound in ("memory", "overhead", None) for bound in layer.predicted.values())
        )

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

    return aligned(
        [[cut(cell, i) for i, cell in enumerate(row)] for row in rows], left=3, widths=widths
    )


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
