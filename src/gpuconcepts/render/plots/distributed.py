"""Figures of the distributed chapter: the three sharding schemes, traffic and the α-β fit.

Built on :class:`matplotlib.figure.Figure` directly (no pyplot state); matplotlib is imported
inside the functions.

>>> fig = sharding_schemes(world_size=2, n_tables=4)
>>> [ax.get_title().splitlines()[0] for ax in fig.axes]
['Table-wise', 'Row-wise', 'Column-wise']
"""

# matplotlib is imported inside functions on purpose (README, Rules: 3).
# ruff: noqa: PLC0415

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuconcepts import formulas
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.render.style import CALM, DEVICE_COLOURS, INK, PALE, SLATE

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from gpuconcepts.results.distributed import DistributedReport


def _colour(device: int) -> str:
    return DEVICE_COLOURS[device % len(DEVICE_COLOURS)]


def sharding_schemes(world_size: int = 2, n_tables: int = 4) -> Figure:
    """Four embedding tables shared by ``world_size`` devices in each scheme, coloured by the
    device that holds each part, with what each device sends in the all-to-all."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch, Rectangle

    if world_size < 2 or n_tables % world_size:
        raise GpuConceptsError(
            f"sharding_schemes: n_tables ({n_tables}) must be a multiple of W ({world_size}), "
            "and W at least 2"
        )
    fig = Figure(figsize=(10, 3.6), layout="constrained")
    axes = fig.subplots(1, 3)
    sends = {
        "Table-wise": ("whole tables per device", formulas.tablewise_alltoall_bytes),
        "Row-wise": ("rows of every table per device", formulas.rowwise_alltoall_bytes),
        "Column-wise": ("columns of every table per device", formulas.columnwise_alltoall_bytes),
    }
    width, height, gap = 1.0, 2.0, 0.35
    for ax, (scheme, (caption, formula)) in zip(axes, sends.items(), strict=True):
        for t in range(n_tables):
            x = t * (width + gap)
            for part in range(world_size):
                if scheme == "Table-wise":
                    owner, box = t % world_size, (x, 0.0, width, height) if part == 0 else None
                elif scheme == "Row-wise":  # rows run down the table: horizontal bands
                    share = height / world_size
                    owner, box = part, (x, height - (part + 1) * share, width, share)
                else:  # column-wise: vertical stripes
                    share = width / world_size
                    owner, box = part, (x + part * share, 0.0, share, height)
                if box is not None:
                    ax.add_patch(
                        Rectangle(
                            box[:2],
                            box[2],
                            box[3],
                            facecolor=_colour(owner),
                            alpha=0.75,
                            edgecolor="white",
                            linewidth=1.5,
                        )
                    )
            ax.text(x + width / 2, -0.25, f"table {t + 1}", ha="center", va="top", fontsize=9)
        ax.set_xlim(-0.2, n_tables * (width + gap))
        ax.set_ylim(-0.7, height + 0.1)
        ax.set_axis_off()
        ax.set_title(f"{scheme}\n{caption}\nsends ${formula.latex()}$", fontsize=10, color=INK)
    fig.legend(
        handles=[
            Patch(facecolor=_colour(r), alpha=0.75, label=f"device {r}") for r in range(world_size)
        ],
        loc="outside lower center",
        ncols=world_size,
        frameon=False,
    )
    return fig


def traffic_chart(report: DistributedReport) -> Figure:
    """Bytes per device: the formula's beside the loopback interface's, for each collective."""
    from matplotlib.figure import Figure

    rows = [c for c in report.main if c.measured_bytes is not None]
    fig = Figure(figsize=(8, 3.4), layout="constrained")
    ax = fig.subplots()
    positions = range(len(rows))
    ax.barh(
        [p + 0.2 for p in positions],
        [c.formula_bytes for c in rows],
        height=0.4,
        color=PALE,
        edgecolor=INK,
        label="formula",
    )
    ax.barh(
        [p - 0.2 for p in positions],
        [c.measured_bytes or 0 for c in rows],
        height=0.4,
        color=CALM,
        label="loopback interface (smallest repetition)",
    )
    ax.set_yticks(list(positions), [c.name for c in rows])
    ax.invert_yaxis()
    ax.set_xlabel("bytes sent per device")
    ax.legend(loc="lower right", frameon=False)
    ax.set_title(f"Traffic of {report.world_size} processes ({report.backend})", fontsize=10)
    return fig


def alpha_beta_chart(report: DistributedReport) -> Figure:
    """The all-reduce sweep with its fitted line, and the other collectives against it."""
    import numpy as np
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 4), layout="constrained")
    ax = fig.subplots()
    sweep = report.of_kind("size sweep")
    x = np.array([c.formula_bytes for c in sweep])
    ax.errorbar(
        x,
        [c.median_seconds for c in sweep],
        yerr=np.array(
            [
                [c.median_seconds - c.iqr_seconds[0], c.iqr_seconds[1] - c.median_seconds]
                for c in sweep
            ]
        ).T,
        fmt="o",
        color=INK,
        label="all-reduce sweep (median, IQR)",
    )
    if report.fit is not None:
        fit = report.fit
        grid = np.geomspace(x.min(), x.max() * 4, 50)
        ax.plot(grid, [fit.seconds(b) for b in grid], color=SLATE, label="α-β fit")
    for i, c in enumerate(c for c in report.main if report.predicted_seconds(c) is not None):
        ax.plot(
            [c.formula_bytes / c.collectives],
            [c.median_seconds / c.collectives],
            "s",
            color=_colour(i + 1),
            label=c.name,
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("bytes sent per device per collective")
    ax.set_ylabel("seconds per collective")
    ax.legend(fontsize=8, frameon=False)
    return fig
