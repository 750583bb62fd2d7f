"""The GPU diagrams: a GPU from the host down to HBM (:func:`gpu_anatomy`), the roofline's
three regimes (:func:`three_regimes`), and every datasheet GPU's roofline with the post's
examples placed (:func:`datasheet_overlay`). Every size and rate is the datasheet's or a
measured one, never typed here.
"""

# matplotlib and numpy are imported inside functions on purpose (README, Rules: 3).
# ruff: noqa: PLC0415

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuconcepts import formulas, units
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.render.plots.drawing import arrow, blank, box
from gpuconcepts.render.plots.labels import legend_beside, place_labels
from gpuconcepts.render.style import (
    ACCENT,
    CALM,
    DEVICE_COLOURS,
    INK,
    PALE,
    SLATE,
    WARM,
    figure,
    needs_matplotlib,
    plain_log_labels,
)
from gpuconcepts.roofline import attainable
from gpuconcepts.units import binary_bytes, decimal_bytes, in_words, plain_number, si, significant

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from gpuconcepts.hardware import GPU
    from gpuconcepts.roofline import Peaks


@needs_matplotlib
def gpu_anatomy(gpu: GPU, launch_seconds: float | None = None) -> Figure:
    """A GPU from the host down: the host launches kernels onto the SMs (each with its Tensor
    Cores, registers and shared memory), which share the L2 cache in front of HBM. Every size
    and rate is the datasheet row's (:data:`gpuconcepts.hardware.GPUS`); ``launch_seconds`` a
    measured kernel launch, when there is one.

    >>> from gpuconcepts.hardware import GPUS
    >>> fig = gpu_anatomy(GPUS["H200"], 1.35e-5)
    >>> texts = [t.get_text() for t in fig.axes[0].texts]
    >>> [t for t in texts if t.startswith(("132", "L2", "HBM"))]
    ['132 SMs in all', 'L2 cache: 60 MiB, shared by every SM', 'HBM: 141 GB at 4.8 TB/s']
    """
    from matplotlib.patches import Rectangle

    if gpu.sms is None or gpu.tensor_cores is None:
        raise GpuConceptsError(f"the datasheet table gives no SMs for the {gpu.name}")
    fig, (ax,) = figure(8.6, 4.9)
    blank(ax, (-0.2, 14.2), (-0.3, 8.3))
    per_sm = gpu.tensor_cores // gpu.sms
    # the GPU's outline
    ax.add_patch(Rectangle((3.4, 0.0), 10.6, 8.0, facecolor="none", edgecolor=SLATE, lw=1.2))
    ax.text(13.85, 7.75, f"the {gpu.name}", ha="right", va="top", fontsize=10, color=SLATE)
    # the host and the launch
    box(ax, 1.45, 6.0, "Host CPU\nPython, PyTorch", width=2.5, colour=WARM)
    launch = "launches\na kernel"
    if launch_seconds is not None:
        launch += f"\n≥ {si(launch_seconds, 's')} each"
    arrow(ax, (2.75, 6.0), (3.9, 6.0), colour=ACCENT)
    ax.text(1.45, 4.55, launch, ha="center", va="top", fontsize=9.5, color=ACCENT)
    # three SMs drawn, the rest implied
    for i, x in enumerate((4.0, 6.3, 8.6)):
        ax.add_patch(Rectangle((x, 4.3), 2.05, 3.1, facecolor=PALE, edgecolor=INK, lw=1.1))
        ax.text(x + 1.025, 7.15, f"SM {i + 1}", ha="center", va="center", fontsize=9.5)
        ax.add_patch(Rectangle((x + 0.15, 6.0), 1.75, 0.8, facecolor=WARM, edgecolor=INK))
        ax.text(x + 1.025, 6.4, f"{per_sm} Tensor\nCores", ha="center", va="center", fontsize=8)
        ax.add_patch(Rectangle((x + 0.15, 5.1), 1.75, 0.75, facecolor="white", edgecolor=INK))
        ax.text(x + 1.025, 5.475, "registers", ha="center", va="center", fontsize=8)
        ax.add_patch(Rectangle((x + 0.15, 4.4), 1.75, 0.6, facecolor="white", edgecolor=INK))
        ax.text(x + 1.025, 4.7, "shared mem.", ha="center", va="center", fontsize=8)
    ax.text(11.1, 6.55, "…", ha="center", va="center", fontsize=18, color=INK)
    ax.text(12.65, 5.75, f"{plain_number(gpu.sms)} SMs in all", ha="center", fontsize=9.5)
    per = []
    if gpu.registers_per_sm_bytes is not None:
        per.append(f"registers {binary_bytes(gpu.registers_per_sm_bytes)}")
    if gpu.shared_memory_per_sm_bytes is not None:
        per.append(f"shared ≤ {binary_bytes(gpu.shared_memory_per_sm_bytes)}")
    ax.text(12.65, 4.45, "each SM:\n" + "\n".join(per), ha="center", fontsize=8.5, color=SLATE)
    # L2 and HBM
    ax.add_patch(Rectangle((4.0, 2.45), 9.6, 0.9, facecolor=PALE, edgecolor=INK, lw=1.1))
    ax.text(8.8, 2.9, f"L2 cache: {binary_bytes(gpu.l2_bytes)}, shared by every SM", ha="center",
            va="center", fontsize=10)  # fmt: skip
    ax.add_patch(Rectangle((4.0, 0.35), 9.6, 1.1, facecolor=WARM, edgecolor=INK, lw=1.1))
    hbm = f"HBM: {decimal_bytes(gpu.memory_bytes)} at {si(gpu.bytes_per_s, 'B/s')}"
    ax.text(8.8, 0.9, hbm, ha="center", va="center", fontsize=10)
    for x in (5.0, 7.3, 9.6):
        arrow(ax, (x, 4.25), (x, 3.4))
    arrow(ax, (8.8, 2.4), (8.8, 1.5))
    ax.set_title(f"What a GPU is: the {gpu.name} from the host to HBM", fontsize=12)
    return fig


REGIME_FLOORS = (10, 1000)
"""The overhead floors :func:`three_regimes` draws: of a kernel whose FLOPs at the peak would
take a tenth, and a thousandth, of one launch (so its floor sits that far below the peak)."""


@needs_matplotlib
def three_regimes(
    flops_per_s: float, bytes_per_s: float, launch_seconds: float, title: str
) -> Figure:
    """The roofline with its three regimes: memory-bound on the slope, compute-bound on the
    flat roof, and overhead-bound under the floor a launch sets for a small kernel (its FLOPs
    over the launch time, whatever its intensity); the ridge point marked.

    >>> fig = three_regimes(989e12, 4.8e12, 1e-5, "An H200")
    >>> sorted(t.get_text() for t in fig.axes[0].texts)[:2]
    ['compute-bound', 'memory-bound']
    >>> fig.axes[0].get_title()
    'An H200'
    """
    import numpy as np

    ridge = float(formulas.ridge_point(P=flops_per_s, beta=bytes_per_s))
    fig, (ax,) = figure(7.4, 4.6)
    xs = np.logspace(np.log10(ridge / 300), np.log10(ridge * 300), 200)
    roof = formulas.attainable_flops.vectorized(
        I=xs, P=np.full_like(xs, flops_per_s), beta=np.full_like(xs, bytes_per_s)
    )
    ax.loglog(xs, roof, color=INK, lw=2.2, label="roofline: min(P, I·β)")
    ax.axvline(ridge, color=INK, lw=0.8, ls=":")
    low = flops_per_s / REGIME_FLOORS[-1] / 10
    ax.text(ridge * 1.15, flops_per_s / 3.5, f"ridge point:\n{significant(ridge)} FLOP/byte",
            fontsize=9, color=INK, va="center")  # fmt: skip
    for share, style in zip(REGIME_FLOORS, ("--", "-."), strict=True):
        cap = flops_per_s / share
        work = cap * launch_seconds
        ax.axhline(cap, color=ACCENT, lw=1.2, ls=style,
                   label=f"overhead floor of a {in_words(work)}-FLOP kernel")  # fmt: skip
    ax.fill_between(xs, low, flops_per_s / REGIME_FLOORS[-1], color=WARM, alpha=0.6, lw=0)
    ax.text(ridge / 60, flops_per_s / 25, "memory-bound", fontsize=10.5, color=CALM,
            ha="center")  # fmt: skip
    ax.text(ridge * 30, flops_per_s * 1.35, "compute-bound", fontsize=10.5, color=CALM,
            ha="center")  # fmt: skip
    ax.text(ridge * 20, flops_per_s / REGIME_FLOORS[-1] / 3.5, "overhead-bound", fontsize=10.5,
            color=ACCENT, ha="center", va="center")  # fmt: skip
    ax.set_ylim(low, flops_per_s * 3)
    ax.set_xlabel("arithmetic intensity (FLOP/byte)")
    ax.set_ylabel("attainable FLOP/s")
    ax.legend(loc="upper left", fontsize=8.5, frameon=False)
    ax.set_title(title, fontsize=12)
    plain_log_labels(fig)
    return fig


@needs_matplotlib
def datasheet_overlay(
    peaks: list[Peaks], examples: list[tuple[str, float]], on: Peaks | None = None
) -> Figure:
    """Every datasheet GPU's roofline in one data type, and the post's examples as numbered
    points at their intensity on the roof of ``on`` (default: the first GPU), numbered in the
    order given.

    >>> from gpuconcepts.hardware import datasheet_peaks
    >>> fig = datasheet_overlay(datasheet_peaks("fp16"), [("a lookup", 0.125), ("a GEMM", 500)])
    >>> len(fig.axes[0].collections)
    1
    """
    import numpy as np

    if not peaks or not examples:
        raise GpuConceptsError("datasheet_overlay: give at least one GPU and one example")
    base = on or peaks[0]
    fig, (ax,) = figure(8.4, 4.8)
    intensities = [i for _, i in examples] + [p.ridge_point for p in peaks]
    xs = np.logspace(np.log10(min(intensities) / 4), np.log10(max(intensities) * 4), 200)
    for index, p in enumerate(peaks):
        ys = [attainable(float(x), p) for x in xs]
        ax.plot(
            xs,
            ys,
            color=DEVICE_COLOURS[index % len(DEVICE_COLOURS)],
            linewidth=2.2 if p.name == base.name else 1.2,
            linestyle="-" if p.name == base.name else "--",
            label=f"{p.name}: ridge {units.significant(p.ridge_point)} FLOP/byte",
        )
    points = [(i, attainable(i, base)) for _, i in examples]
    ax.scatter(
        [x for x, _ in points], [y for _, y in points], s=60, color=ACCENT, edgecolors=INK,
        zorder=3,
    )  # fmt: skip
    labels = [
        ax.annotate(str(number), (x, y), textcoords="offset points", xytext=(4, -12), fontsize=8.5)
        for number, (x, y) in enumerate(points, start=1)
    ]
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP/byte)")
    ax.set_ylabel("attainable FLOP/s")
    ax.set_title(
        f"Datasheet rooflines ({base.dtype}); the post's examples on the {base.name}'s",
        fontsize=11,
    )
    legend_beside(ax)
    plain_log_labels(fig)
    place_labels(fig, ax, labels)  # close examples: their numbers kept apart
    return fig
