"""An analysis report (:class:`~gpuconcepts.analysis.Report`) as the book's per-layer table.

The report itself (:mod:`gpuconcepts.analysis.report`) is a value with its text for the
terminal; the Markdown of a page is written here, above it, so the analysis imports no
renderer.
"""

from __future__ import annotations

from collections.abc import Mapping

from gpuconcepts.analysis.report import Report, shapes_text
from gpuconcepts.measurement import seconds_spread
from gpuconcepts.render.markdown import markdown_table
from gpuconcepts.units import si, significant

_NBSP = "\u00a0"
"""A space no line breaks at."""


def _nbsp(text: str) -> str:
    return text.replace(" ", _NBSP)  # a time never breaks before its unit


def _time_cell(seconds: tuple[float, ...]) -> str:
    """A call's time in the book's one format, median ± IQR
    (:func:`~gpuconcepts.measurement.seconds_spread`), its spread on a second, smaller line
    to keep the table narrow; neither breaks before its unit.

    >>> _time_cell((1e-4, 1.1e-4, 1.2e-4)).replace(_NBSP, " ")
    '110 µs<br><small>± 10 µs</small>'
    """
    median, spread = seconds_spread(seconds).split(" ± ")
    return f"{_nbsp(median)}<br><small>{_nbsp('± ' + spread)}</small>"


def across_gpus(predicted: Mapping[str, str | None]) -> str:
    """A call's bound on the datasheet GPUs in a few words.

    >>> across_gpus({"A": "memory", "B": "memory", "C": None})
    'memory on all'
    >>> across_gpus({"A": "compute", "B": "memory"})
    'compute on A; memory on B'
    """
    by_bound: dict[str, list[str]] = {}
    for gpu, bound in predicted.items():
        if bound is not None:
            by_bound.setdefault(bound, []).append(gpu)
    if len(by_bound) == 1:
        return f"{next(iter(by_bound))} on all"
    return "; ".join(f"{bound} on {', '.join(gpus)}" for bound, gpus in sorted(by_bound.items()))


def markdown(report: Report) -> str:
    """The per-layer table for a book page, numbered as the figure's points
    (:func:`gpuconcepts.render.plots.analysis.layers_figure`), each time its median ± IQR."""
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
            _time_cell(layer.raw_seconds),
            si(layer.flops_per_s, "FLOP/s") if layer.flops else "–",
            si(layer.bytes_per_s, "B/s"),
            f"**{layer.bound}**",
            across_gpus(layer.predicted),
        ]
        for layer in report.layers
    ]
    return markdown_table(header, rows)
