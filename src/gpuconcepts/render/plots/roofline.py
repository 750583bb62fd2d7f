"""The roofline and the memory hierarchy, drawn: :func:`plot_roofline` puts measurements under
every measured roof (:mod:`gpuconcepts.roofline` decides where they sit), :func:`roofline_chart`
sizes it for a book page, :func:`memory_hierarchy` draws the working-set sweep.

>>> from gpuconcepts.roofline import Peaks
>>> plot_roofline(Peaks("cpu", 1e11, 1e10, "float32")).axes[0].get_title()
'The measured fp32 roofline'
"""

# MyST-NB, IPython and matplotlib are imported inside functions on purpose (README, Rules: 3).
# ruff: noqa: PLC0415

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from gpuconcepts import formulas
from gpuconcepts.hardware import TORCH_DTYPES
from gpuconcepts.render.plots.labels import legend_beside, place_labels
from gpuconcepts.render.style import (
    ACCENT,
    CALM,
    FAMILY_COLOURS,
    INK,
    LEVEL_SHADES,
    figure,
    needs_matplotlib,
    plain_log_labels,
)
from gpuconcepts.roofline import Peaks, overhead_flops_per_s
from gpuconcepts.units import si, significant
from gpuconcepts.workloads import chapter_of

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from gpuconcepts.hardware import GPU
    from gpuconcepts.measure import Measurement


def _roof_line(ax: Any, flops_per_s: float, bytes_per_s: float, xs: Any, **style: Any) -> None:
    import numpy as np

    ys = formulas.attainable_flops.vectorized(
        I=xs, P=np.full_like(xs, flops_per_s), beta=np.full_like(xs, bytes_per_s)
    )
    ax.loglog(xs, ys, **style)


def _draw_roofs(ax: Any, peaks: Peaks, datasheet: Peaks | None, xs: Any) -> None:
    """The measured roof, the datasheet's dashed beside it, one roof per cache level, the
    physical limit and the ridge point."""
    _roof_line(
        ax,
        peaks.flops_per_s,
        peaks.bytes_per_s,
        xs,
        color="black",
        lw=2,
        label=f"measured roof ({peaks.dtype}): ridge {significant(peaks.ridge_point)} FLOP/B",
    )
    if datasheet is not None:
        _roof_line(
            ax,
            datasheet.flops_per_s,
            datasheet.bytes_per_s,
            xs,
            color="grey",
            ls="--",
            label=f"{datasheet.name} datasheet ({peaks.dtype}): ridge "
            f"{significant(datasheet.ridge_point)} FLOP/B",
        )
    for shade, level in zip(LEVEL_SHADES, peaks.levels, strict=False):
        _roof_line(  # one roof per cache level, as the cache-aware roofline draws them
            ax,
            peaks.flops_per_s,
            level.bytes_per_s,
            xs,
            color=shade,
            lw=1,
            ls="-.",
            label=f"{level.name} roof: {significant(level.bytes_per_s / 1e9)} GB/s",
        )
    if peaks.physical_flops_per_s is not None:
        ax.axhline(  # the hardware's limit: what the measured roof falls short of
            peaks.physical_flops_per_s,
            color="black",
            lw=1,
            ls=(0, (1, 2)),
            label=f"physical limit ({peaks.dtype}): {si(peaks.physical_flops_per_s, 'FLOP/s')}",
        )
    ax.axvline(peaks.ridge_point, color="black", lw=0.5, ls=":")


def _draw_overhead_floors(ax: Any, peaks: Peaks, measurements: Sequence[Measurement]) -> None:
    """The overhead floor of each kernel it binds. It is no line in intensity: it is drawn
    per kernel, a bar at the FLOP/s its calls and operations at their latencies allow."""
    own = [(m, overhead_flops_per_s(m, peaks)) for m in measurements]
    own = [(m, ceiling) for m, ceiling in own if ceiling is not None]
    if own:
        ax.scatter(  # a collection, not a line: the points stay the axes' last lines
            [m.intensity for m, _ in own],
            [ceiling for _, ceiling in own],
            marker="_",
            s=120,
            linewidths=2,
            color=[FAMILY_COLOURS.get(chapter_of(m.workload), "C7") for m, _ in own],
            label="overhead floor\n(its calls and operations\nat their latencies)",
        )


def _draw_points(ax: Any, measurements: Sequence[Measurement]) -> None:
    """Each kernel as a point in its family's colour, its spread as an error bar, its name
    beside it."""
    for m in measurements:
        family = chapter_of(m.workload)
        # the spread: FLOP/s at the first and third quartiles of the time (no caps, so the
        # points stay the last lines of the axes, in order)
        slow, fast = m.interval_flops_per_s
        ax.errorbar(
            [m.intensity],
            [m.flops_per_s],
            yerr=[[m.flops_per_s - slow], [fast - m.flops_per_s]],
            fmt="none",
            ecolor="black",
            elinewidth=0.8,
            capsize=0,
        )
        ax.loglog(
            [m.intensity],
            [m.flops_per_s],
            "o",
            color=FAMILY_COLOURS.get(family, "C7"),
            markeredgecolor="black",
        )
        ax.annotate(
            m.workload,
            (m.intensity, m.flops_per_s),
            textcoords="offset points",
            xytext=(4, 4),
            fontsize=7,
        )


def plot_roofline(
    peaks: Peaks,
    measurements: Sequence[Measurement] = (),
    datasheet: Peaks | None = None,
    ax: Any = None,
    title: str | None = None,
) -> Any:
    """Draw the roofline: measured ceilings, datasheet ceilings if known, workloads as points
    with their spread (FLOP/s at the interquartile range of the time) as error bars.

    Args:
        peaks: measured peaks of the device the measurements ran on.
        measurements: kernels to place; each is labelled with its workload name.
        datasheet: a datasheet's peaks (:meth:`gpuconcepts.hardware.GPU.datasheet_peaks`),
            drawn dashed beside the measured roof.
        ax: a matplotlib Axes to draw into; a new Figure is made when None.
        title: the title, in words (``"The H200 bf16 run's roofline"``,
            :func:`~gpuconcepts.render.plots.runs.run_title`); by default the data type's.

    Returns:
        The matplotlib Figure.

    >>> fig = plot_roofline(Peaks("cpu", 1e11, 1e10, "float32"))
    >>> fig.axes[0].get_xlabel()
    'arithmetic intensity (FLOP/byte)'
    """
    if ax is None:
        # A bare Figure needs no pyplot and no GUI backend: safe under Agg, in threads, in CI.
        from matplotlib.figure import Figure

        fig = Figure(figsize=(9.0, 5), layout="constrained")
        ax = fig.add_subplot()
    else:
        fig = ax.figure
    import numpy as np

    intensities = [m.intensity for m in measurements] + [peaks.ridge_point]
    low = min(intensities) / 10
    high = max(intensities) * 10
    if datasheet is not None:
        high = max(high, datasheet.ridge_point * 10)
    xs = np.logspace(np.log10(low), np.log10(high), 200)
    _draw_roofs(ax, peaks, datasheet, xs)
    _draw_overhead_floors(ax, peaks, measurements)
    _draw_points(ax, measurements)
    ax.set_xlabel("arithmetic intensity (FLOP/byte)")
    ax.set_ylabel("attained FLOP/s")
    ax.set_title(title or f"The measured {TORCH_DTYPES.get(peaks.dtype, peaks.dtype)} roofline")
    ax.grid(True, which="both", lw=0.3, alpha=0.5)
    legend_beside(ax, fontsize=7)
    return fig


def _point_labels(ax: Any, measurements: Sequence[Measurement], numbered: bool) -> list[Any]:
    """The points' name labels, lettered for a page; with ``numbered`` each one's text is its
    position in ``measurements`` (1, 2, ...), in bold."""
    from matplotlib.text import Annotation

    names = [m.workload for m in measurements]
    labels = [t for t in ax.texts if isinstance(t, Annotation) and t.get_text() in names]
    for number, label in enumerate(labels, start=1):
        label.set_fontsize(9)
        if numbered:
            label.set_text(str(number))
            label.set_fontweight("bold")
    return labels


def _add_family_legend(
    ax: Any, measurements: Sequence[Measurement], handles: list[Any], texts: list[str]
) -> None:
    """A legend entry for each workload family's colour, read off the drawn points (the
    axes' last lines), for numbered points that no longer carry their names."""
    from matplotlib.lines import Line2D

    points = ax.lines[-len(measurements) :] if measurements else []
    families: dict[str, str] = {}
    for m, point in zip(measurements, points, strict=True):
        families.setdefault(chapter_of(m.workload) or "other", str(point.get_color()))
    for family, colour in families.items():
        handles.append(Line2D([], [], marker="o", ls="", color=colour, markeredgecolor="black"))
        texts.append(family)


@needs_matplotlib
def roofline_chart(
    peaks: Peaks,
    measurements: Sequence[Measurement] = (),
    *,
    numbered: bool = False,
    title: str | None = None,
    gpu: GPU | None = None,
) -> Figure:
    """A roofline sized and lettered for a book page: :func:`plot_roofline`
    on a narrower figure with larger text and labels that keep clear of each other.

    With ``numbered`` each point is labelled with its position in ``measurements`` (1, 2, ...)
    instead of its name, to be read against a table with a ``#`` column
    (:func:`gpuconcepts.book.measurement_table` with ``numbered=True``), and the legend names the
    colour of each workload family. Use it when many points crowd one plot. The legend stands
    beside the axes, where it covers no point. ``title`` is said in words (by default the data
    type's); ``gpu`` is the datasheet GPU whose roofs are drawn dashed beside the measured ones
    (by default the current GPU, for peaks measured on one).

    >>> from gpuconcepts.roofline import Peaks
    >>> fig = roofline_chart(Peaks("cpu", 1e11, 1e10, "float32"))
    >>> fig.axes[0].get_title(), fig.get_size_inches().tolist()
    ('The measured fp32 roofline', [8.2, 4.4])
    """
    from matplotlib.figure import Figure

    from gpuconcepts.hardware import current_gpu

    fig = Figure(figsize=(8.2, 4.4), layout="constrained")
    ax = fig.add_subplot()
    # On a known GPU the datasheet roof is drawn too, dashed, beside the measured one.
    if gpu is None and peaks.device == "cuda":
        gpu = current_gpu()
    datasheet = (
        None if gpu is None or gpu.peak(peaks.dtype) is None else gpu.datasheet_peaks(peaks.dtype)
    )
    plot_roofline(peaks, measurements, datasheet=datasheet, ax=ax, title=title)
    ax.title.set_fontsize(12)
    ax.xaxis.label.set_fontsize(10)
    ax.yaxis.label.set_fontsize(10)
    labels = _point_labels(ax, measurements, numbered)
    handles, texts = ax.get_legend_handles_labels()
    if numbered:
        _add_family_legend(ax, measurements, handles, texts)
    legend_beside(ax, handles, texts, fontsize=8)
    plain_log_labels(fig)  # the tick labels drawn, before the layout that makes room for them
    place_labels(fig, ax, labels)
    return fig


def memory_hierarchy(peaks: Peaks, title: str | None = None) -> Figure:
    """Read bandwidth against working-set size: the sweep behind the cache roofs.

    Each cache's size is a dotted vertical line, each measured roof (cache levels and DRAM) a
    horizontal one; the bandwidth steps down as the working set spills out of each cache.

    >>> from gpuconcepts.roofline import MemoryLevel, Peaks
    >>> p = Peaks("cpu", 1e11, 1e10, "float32", levels=(MemoryLevel("L2", 2**20, 5e10),),
    ...           sweep=((2**16, 6e10), (2**20, 4e10), (2**26, 1e10)))
    >>> memory_hierarchy(p).axes[0].get_xlabel()
    'working set (bytes)'
    """
    from matplotlib.text import Annotation

    fig, (ax,) = figure(7.6, 3.8)
    if peaks.sweep:
        sizes, rates = zip(*peaks.sweep, strict=True)
        ax.loglog(sizes, rates, "o-", color=CALM, label="read bandwidth (sweep)")
    for level in peaks.memory_roofs:
        ax.axhline(level.bytes_per_s, color=ACCENT, lw=0.8, ls="--")
        ax.annotate(
            f"{level.name} roof", (1.0, level.bytes_per_s), xycoords=("axes fraction", "data"),
            xytext=(-4, 3), textcoords="offset points", ha="right", fontsize=8, color=ACCENT,
        )  # fmt: skip
        if level.size_bytes is not None:
            ax.axvline(level.size_bytes, color=INK, lw=0.6, ls=":")
            ax.annotate(
                f"{level.name} size", (level.size_bytes, 0.02), xycoords=("data", "axes fraction"),
                xytext=(3, 0), textcoords="offset points", fontsize=8, color=INK, rotation=90,
            )  # fmt: skip
    ax.set_xlabel("working set (bytes)")
    ax.set_ylabel("bytes/s")
    ax.set_title(title or "Read bandwidth against the working set: the memory hierarchy")
    ax.grid(True, which="both", lw=0.3, alpha=0.5)
    if peaks.sweep:
        legend_beside(ax)
    plain_log_labels(fig)
    roofs = [t for t in ax.texts if isinstance(t, Annotation) and t.get_text().endswith(" roof")]
    place_labels(fig, ax, roofs)  # roofs close together: their labels kept apart
    return fig
