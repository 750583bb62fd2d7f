"""Figures drawn from a run's measurements, titled in words (:func:`run_title`), never by a
device string: the RNN's time against its sequence length (:func:`rnn_over_s`) and one
run's kernels against another's in a second data type (:func:`dtype_ratios`).

>>> from gpuconcepts.roofline import Peaks
>>> machine_name("cuda (NVIDIA H200)"), machine_name("cpu (AMD EPYC, 2 threads)")
('H200', 'AMD EPYC CPU')
"""

# matplotlib is imported inside functions on purpose (README, Rules: 3).
# ruff: noqa: PLC0415

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuconcepts.hardware import TORCH_DTYPES, lookup
from gpuconcepts.render.style import (
    ACCENT,
    CALM,
    INK,
    SLATE,
    figure,
    needs_matplotlib,
    plain_log_labels,
)

if TYPE_CHECKING:
    from matplotlib.artist import Artist
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from gpuconcepts.measure import Measurement
    from gpuconcepts.run import Run

GREEN = "#15803d"


def machine_name(device_name: str) -> str:
    """A run's machine in words: the datasheet GPU's short name, or the CPU's model name."""
    gpu = lookup(device_name)
    if gpu is not None:
        return gpu.name
    found = re.fullmatch(r"(cpu|cuda) \(([^,)]+)(,[^)]*)?\)", device_name)
    if found is None:
        return device_name
    return f"{found.group(2)} CPU" if found.group(1) == "cpu" else found.group(2)


def run_title(run: Run) -> str:
    """A run named in words for a figure's title: its machine and its data type.

    >>> from gpuconcepts.run import Run
    >>> from gpuconcepts.run.provenance import Provenance
    >>> from gpuconcepts.roofline import Peaks
    >>> run = Run(Provenance.example(), Peaks("cuda", 1e15, 4e12, "bfloat16"), (), {}, ())
    >>> run_title(run).startswith("The "), run_title(run).endswith(" bf16 run")
    (True, True)
    """
    dtype = TORCH_DTYPES.get(run.peaks.dtype, run.peaks.dtype)
    return f"The {machine_name(run.provenance.device_name)} {dtype} run"


# -- the RNN's central measurement ---------------------------------------------------------
RNN_KERNELS = {
    "rnn-loop": ("the Python step loop", ACCENT),
    "rnn-module": ("nn.RNN", CALM),
    "rnn-gemm": ("one GEMM of the same FLOPs", GREEN),
}
"""The kernels the RNN figure draws, in its legend's order, with their words and colours."""

LAYER_MARKERS = ("o", "s", "^", "D", "v", "P")


@dataclass(frozen=True)
class Series:
    """One kernel at one layer (batch B, hidden width d) over the sequence lengths timed."""

    workload: str
    layer: tuple[int, int]
    points: tuple[tuple[int, float], ...]  # (S, median seconds), by S
    dtype: str


def rnn_series(measurements: Sequence[Measurement]) -> list[Series]:
    """The RNN kernels of a run grouped by kernel and layer, each over its sequence lengths
    (a layer timed at one S is a single point); the same kernel, layer and S timed twice
    keeps its first timing.

    >>> from gpuconcepts.measure import Measurement
    >>> ms = [Measurement("rnn-gemm", "cpu", {"B": 4, "S": s, "d_h": 8, "dtype": "float32"},
    ...                   (t,), 1, 1) for s, t in ((64, 2e-5), (32, 1e-5), (32, 9.0))]
    >>> [(s.workload, s.layer, s.points) for s in rnn_series(ms)]
    [('rnn-gemm', (4, 8), ((32, 1e-05), (64, 2e-05)))]
    """
    from gpuconcepts.render.text import ran_in

    found: dict[tuple[str, tuple[int, int]], dict[int, float]] = {}
    dtypes: dict[tuple[str, tuple[int, int]], str] = {}
    for m in measurements:
        if m.workload not in RNN_KERNELS:
            continue
        key = (m.workload, (int(m.size("B")), int(m.size("d_h"))))
        found.setdefault(key, {}).setdefault(int(m.size("S")), m.seconds)
        dtypes.setdefault(key, ran_in(m))
    order = list(RNN_KERNELS)
    return [
        Series(workload, layer, tuple(sorted(points.items())), dtypes[(workload, layer)])
        for (workload, layer), points in sorted(
            found.items(), key=lambda item: (order.index(item[0][0]), item[0][1])
        )
    ]


def shown_series(series: Sequence[Series]) -> list[Series]:
    """The series of the layers worth drawing against S: a layer timed at several S, or one
    with a step loop (a layer timed at one S only for a sweep over the batch is left out)."""
    kept = {s.layer for s in series if len(s.points) > 1 or s.workload == "rnn-loop"}
    return [s for s in series if s.layer in kept]


def layer_words(layer: tuple[int, int]) -> str:
    """A layer for a legend: ``B = 64, d = 1,024``."""
    from gpuconcepts.units import plain_number

    return f"B = {plain_number(layer[0])}, d = {plain_number(layer[1])}"


def _legend_outside(ax: Axes, handles: list[Artist], texts: list[str]) -> None:
    """A legend beside the axes, on the right, where it can cover no data point."""
    ax.legend(
        handles, texts, loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8, frameon=False
    )


@needs_matplotlib
def rnn_over_s(run: Run) -> Figure:
    """The RNN's central measurement: each kernel's median time against the sequence length
    S, for the Python step loop, ``nn.RNN`` and one GEMM of the same FLOPs, every layer the
    run timed (a marker each); a kernel timed at several S is a line. Through each step
    loop's point a thin dashed line grows as S does: a chain of S dependent steps takes a
    time in proportion to S (the model's, not a measurement).
    """
    from matplotlib.lines import Line2D
    from matplotlib.ticker import NullLocator

    from gpuconcepts.units import plain_number

    fig, (ax,) = figure(7.2, 4.2)
    series = shown_series(rnn_series(run.measurements))
    layers = sorted({s.layer for s in series}, key=lambda layer: -layer[0] * layer[1])
    markers = {layer: LAYER_MARKERS[i % len(LAYER_MARKERS)] for i, layer in enumerate(layers)}
    lengths = [s_ for s in series for s_, _ in s.points]
    low, high = (min(lengths), max(lengths)) if lengths else (1, 2)
    span = (low / 1.5, high * 1.5)
    for s in series:
        _, colour = RNN_KERNELS[s.workload]
        xs = [x for x, _ in s.points]
        ys = [y for _, y in s.points]
        ax.plot(
            xs, ys, ls="-" if len(xs) > 1 else "", marker=markers[s.layer], color=colour,
            markeredgecolor=INK, markersize=6, lw=1.5,
        )  # fmt: skip
        if s.workload == "rnn-loop":
            for x, y in s.points:  # time in proportion to S through the measured point
                ax.plot(span, [y * span[0] / x, y * span[1] / x], ls="--", lw=0.8, color=colour)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlim(*span)
    ax.set_xticks(sorted(set(lengths)), [plain_number(x) for x in sorted(set(lengths))])
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xlabel("sequence length S (steps)")
    ax.set_ylabel("median time (s)")
    ax.set_title(f"{run_title(run)}'s RNN: time against sequence length", fontsize=11)
    ax.grid(True, which="both", lw=0.3, alpha=0.5)
    handles: list[Artist] = []
    texts: list[str] = []
    for workload, (words, colour) in RNN_KERNELS.items():
        ran = sorted({s.dtype for s in series if s.workload == workload})
        if not ran:
            continue
        handles.append(Line2D([], [], color=colour, lw=1.5))
        texts.append(words if ran == [run.peaks.dtype] else f"{words} (ran in {', '.join(ran)})")
    if any(s.workload == "rnn-loop" for s in series):
        handles.append(Line2D([], [], color=ACCENT, lw=0.8, ls="--"))
        texts.append("a chain of S steps:\ntime in proportion to S")
    for layer in layers:
        handles.append(
            Line2D([], [], marker=markers[layer], ls="", color=SLATE, markeredgecolor=INK)
        )
        texts.append(layer_words(layer))
    _legend_outside(ax, handles, texts)
    plain_log_labels(fig)
    return fig


# -- one run against another in a second data type ----------------------------------------
@dataclass(frozen=True)
class Ratio:
    """One kernel in two runs: its intensity in the first, the second's time over the first's,
    and the ratio the model predicts from the bound it had in the first (bytes, peaks or
    latency floors)."""

    family: str
    intensity: float
    measured: float
    predicted: float


@needs_matplotlib
def dtype_ratios(
    ratios: Sequence[Ratio], title: str, lines: Sequence[tuple[str, float]], y_label: str
) -> Figure:
    """Each kernel's time in one run over its time in the other, against its intensity: a
    filled point measured, a hollow one what its bound predicts; ``lines`` (label, ratio) are
    drawn across, dashed (the ratio of the bytes, of the peaks, and 1: no change).
    """
    from matplotlib.lines import Line2D

    from gpuconcepts.render.style import FAMILY_COLOURS

    fig, (ax,) = figure(8.2, 4.4)
    for r in ratios:
        colour = FAMILY_COLOURS.get(r.family, "C7")
        ax.plot([r.intensity], [r.predicted], marker="o", ls="", mfc="none", mec=colour, ms=9)
        ax.plot([r.intensity], [r.measured], marker="o", ls="", color=colour, mec=INK, ms=6)
    styles = ("--", "-.", ":", (0, (5, 1)))
    handles: list[Artist] = []
    texts: list[str] = []
    for index, (label, value) in enumerate(lines):
        ax.axhline(value, color=SLATE, lw=0.9, ls=styles[index % len(styles)])
        handles.append(Line2D([], [], color=SLATE, lw=0.9, ls=styles[index % len(styles)]))
        texts.append(label)
    handles.append(Line2D([], [], marker="o", ls="", color=SLATE, mec=INK))
    texts.append("measured: time ratio")
    handles.append(Line2D([], [], marker="o", ls="", mfc="none", mec=SLATE, ms=9))
    texts.append("predicted from the bound\nin the first run")
    for family in dict.fromkeys(r.family for r in ratios):
        handles.append(Line2D([], [], marker="o", ls="", color=FAMILY_COLOURS.get(family, "C7")))
        texts.append(family)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP/byte)")
    ax.set_ylabel(y_label)
    ax.set_title(title, fontsize=11)
    ax.grid(True, which="both", lw=0.3, alpha=0.5)
    _legend_outside(ax, handles, texts)
    plain_log_labels(fig)
    return fig


@needs_matplotlib
def families_map(points: Sequence[tuple[str, float, float]], title: str) -> Figure:
    """The five families on two axes: each kernel's arithmetic intensity (what the GPU waits
    for) against the work it offers at once, its FLOPs over its dependent steps (how much it
    can do at once); ``points`` are (family, intensity, FLOPs per step)."""
    from gpuconcepts.render.style import FAMILY_COLOURS

    fig, (ax,) = figure(8.2, 4.4)
    for family in dict.fromkeys(f for f, _, _ in points):
        mine = [(x, y) for f, x, y in points if f == family]
        ax.plot(
            [x for x, _ in mine], [y for _, y in mine], marker="o", ls="", ms=7,
            color=FAMILY_COLOURS.get(family, "C7"), mec=INK, label=family,
        )  # fmt: skip
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP/byte): what it waits for")
    ax.set_ylabel("FLOPs per dependent step:\nwork it offers at once")
    ax.set_title(title, fontsize=11)
    ax.grid(True, which="both", lw=0.3, alpha=0.5)
    handles, texts = ax.get_legend_handles_labels()
    _legend_outside(ax, list(handles), texts)
    plain_log_labels(fig)
    return fig
