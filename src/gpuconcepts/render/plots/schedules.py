"""Figures of work spread over devices and of memory budgets, each drawn from computed values.

* :func:`pipeline_schedules`: GPipe, 1F1B and interleaved 1F1B, simulated slot by slot
  (:func:`simulate`); each panel's idle share is measured on the simulated timeline and shown
  beside :data:`~gpuconcepts.formulas.pipeline_bubble_fraction`'s.
* :func:`ring_allreduce`: a ring of W devices, each buffer cut into W chunks, with the bytes
  each device sends from :data:`~gpuconcepts.formulas.ring_allreduce_bytes`.
* :func:`memory_budget`: stacked bars of the model state per device under each ZeRO stage
  (:func:`zero_parts`, whose sum is :data:`~gpuconcepts.formulas.zero_memory_per_device`).
* :func:`datasheet_overlay`: every datasheet GPU's roofline with the post's examples placed.
* :func:`cnn_architecture`: an image, a sliding filter and the feature maps it makes, sized by
  :data:`~gpuconcepts.formulas.conv_weights` and the output size of a valid convolution.

The schedule simulation and the budget parts are pure (no matplotlib), and tested on their own.

>>> gpipe = simulate("GPipe", p=4, m=4)
>>> round(idle_share(gpipe, p=4), 4) == round(float(formulas.pipeline_bubble_fraction(p=4, m=4)), 4)
True
"""

# matplotlib is imported inside functions on purpose (README, Rules: 3).
# ruff: noqa: PLC0415

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from gpuconcepts import formulas, units
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.render.plots.labels import legend_beside, place_labels
from gpuconcepts.render.style import (
    ACCENT,
    CALM,
    DEVICE_COLOURS,
    INK,
    PALE,
    WARM,
    figure,
    needs_matplotlib,
    plain_log_labels,
)
from gpuconcepts.roofline import attainable

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from gpuconcepts.roofline import Peaks

Schedule = Literal["GPipe", "1F1B", "interleaved"]
SCHEDULES: tuple[Schedule, ...] = ("GPipe", "1F1B", "interleaved")

FORWARD_SLOTS = 1.0
"""Time of one stage's forward pass over one micro-batch (the unit of the timeline)."""
BACKWARD_SLOTS = 2.0
"""Time of its backward pass: two products the size of the forward one (dX and dW)."""


@dataclass(frozen=True)
class Op:
    """One forward or backward pass of one micro-batch through one model chunk on a device."""

    device: int
    micro: int
    chunk: int
    backward: bool
    start: float
    seconds: float

    @property
    def end(self) -> float:
        return self.start + self.seconds


def _orders(kind: Schedule, p: int, m: int, v: int) -> list[list[tuple[bool, int, int]]]:
    """Each device's passes in the order it runs them: (backward, micro-batch, chunk)."""
    orders: list[list[tuple[bool, int, int]]] = []
    for device in range(p):
        if kind == "GPipe":
            order = [(False, j, 0) for j in range(m)] + [(True, j, 0) for j in range(m)]
        elif kind == "1F1B":
            warm = min(p - device - 1, m)
            fwd = [(False, j, 0) for j in range(m)]
            bwd = [(True, j, 0) for j in range(m)]
            order = fwd[:warm]
            for j in range(m - warm):
                order += [fwd[warm + j], bwd[j]]
            order += bwd[m - warm :]
        else:  # Megatron's interleaved 1F1B: v chunks per device, groups of p micro-batches
            total = m * v

            def forward(k: int) -> tuple[bool, int, int]:
                return (False, (k // (p * v)) * p + k % p, (k // p) % v)

            def backward(k: int) -> tuple[bool, int, int]:
                return (True, (k // (p * v)) * p + k % p, v - 1 - (k // p) % v)

            warm = min((p - device - 1) * 2 + (v - 1) * p, total)
            order = [forward(k) for k in range(warm)]
            for k in range(total - warm):
                order += [forward(warm + k), backward(k)]
            order += [backward(k) for k in range(total - warm, total)]
        orders.append(order)
    return orders


def simulate(kind: Schedule, p: int, m: int, v: int = 2) -> list[Op]:
    """Every pass of a pipeline of ``p`` devices over ``m`` micro-batches, timed.

    Each device runs its passes in its schedule's order; a pass starts when its device is free
    and its input is ready (the same micro-batch's forward on the chunk before, or its
    backward on the chunk after). ``v`` model chunks per device for ``interleaved`` (which
    needs ``m`` to be a multiple of ``p``), each ``1/v`` of a stage's work.

    >>> ops = simulate("1F1B", p=2, m=2)
    >>> [(o.device, o.micro, o.backward, o.start) for o in ops if o.device == 1]
    [(1, 0, False, 1.0), (1, 0, True, 2.0), (1, 1, False, 4.0), (1, 1, True, 5.0)]
    """
    if p < 1 or m < 1:
        raise GpuConceptsError(f"simulate: p={p} and m={m} must both be at least 1")
    chunks = v if kind == "interleaved" else 1
    if kind == "interleaved" and (v < 1 or m % p):
        raise GpuConceptsError(
            f"simulate: the interleaved schedule needs v ≥ 1 and m a multiple of p; "
            f"got p={p}, m={m}, v={v}"
        )
    stages = p * chunks  # virtual stage s = chunk·p + device
    orders = _orders(kind, p, m, chunks)
    done: dict[tuple[bool, int, int], float] = {}  # (backward, micro, stage) -> end
    free = [0.0] * p
    position = [0] * p
    ops: list[Op] = []
    while any(position[d] < len(orders[d]) for d in range(p)):
        moved = False
        for device in range(p):
            if position[device] >= len(orders[device]):
                continue
            backward, micro, chunk = orders[device][position[device]]
            stage = chunk * p + device
            need: tuple[bool, int, int] | None
            if backward:
                need = (True, micro, stage + 1) if stage + 1 < stages else (False, micro, stage)
            else:
                need = (False, micro, stage - 1) if stage > 0 else None
            if need is not None and need not in done:
                continue
            ready = 0.0 if need is None else done[need]
            seconds = (BACKWARD_SLOTS if backward else FORWARD_SLOTS) / chunks
            start = max(free[device], ready)
            ops.append(Op(device, micro, chunk, backward, start, seconds))
            done[(backward, micro, stage)] = start + seconds
            free[device] = start + seconds
            position[device] += 1
            moved = True
        if not moved:
            raise GpuConceptsError(f"simulate: the {kind} order deadlocks at p={p}, m={m}")
    return ops


def idle_share(ops: list[Op], p: int) -> float:
    """The share of the timeline's device-time spent idle: 1 - busy ÷ (p × makespan)."""
    makespan = max(op.end for op in ops)
    return 1 - sum(op.seconds for op in ops) / (p * makespan)


def bubble_over_ideal(ops: list[Op], p: int) -> float:
    """Idle time over the ideal (bubble-free) time, the convention of
    :data:`~gpuconcepts.formulas.pipeline_bubble_fraction_interleaved`."""
    share = idle_share(ops, p)
    return share / (1 - share)


@needs_matplotlib
def pipeline_schedules(p: int = 4, m: int = 8, v: int = 2) -> Figure:
    """Three timelines, one row per device: GPipe, 1F1B and interleaved 1F1B at ``p``
    stages and ``m`` micro-batches. Forward passes are pale, backward ones dark; each
    panel's title gives the idle share measured on the timeline and the formula's.

    >>> fig = pipeline_schedules(p=2, m=2)
    >>> [ax.get_title(loc="left").split(":")[0] for ax in fig.axes]
    ['GPipe', '1F1B', 'interleaved 1F1B, v = 2']
    """
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, 6.6), layout="constrained")
    axes = fig.subplots(3, 1, sharex=True)
    for ax, kind in zip(axes, SCHEDULES, strict=True):
        ops = simulate(kind, p, m, v)
        for op in ops:
            colour = DEVICE_COLOURS[op.micro % len(DEVICE_COLOURS)]
            ax.barh(
                op.device,
                op.seconds,
                left=op.start,
                color=colour,
                alpha=1.0 if op.backward else 0.45,
                edgecolor=INK,
                linewidth=0.5,
                height=0.8,
            )
            if op.seconds >= 0.5:
                ax.text(
                    op.start + op.seconds / 2,
                    op.device,
                    str(op.micro + 1),
                    ha="center",
                    va="center",
                    fontsize=7,
                    color=INK,
                )
        measured = idle_share(ops, p)
        if kind == "interleaved":
            formula = float(formulas.pipeline_bubble_fraction_interleaved(p=p, m=m, v=v))
            title = (
                f"interleaved 1F1B, v = {v}: idle {units.percent(bubble_over_ideal(ops, p))} "
                f"of the ideal time (formula {units.percent(formula)})"
            )
        else:
            formula = float(formulas.pipeline_bubble_fraction(p=p, m=m))
            title = (
                f"{kind}: idle {units.percent(measured)} of the time "
                f"(formula {units.percent(formula)})"
            )
        ax.set_title(title, fontsize=10.5, loc="left")
        ax.set_yticks(range(p), [f"device {d + 1}" for d in range(p)])
        ax.invert_yaxis()
        ax.set_ylim(p - 0.4, -0.6)
    axes[-1].set_xlabel(
        "time, in forward passes of one stage over one micro-batch "
        "(pale: forward; dark: backward; number: micro-batch)"
    )
    return fig


@needs_matplotlib
def ring_allreduce(W: int = 4, n_params: int = 100_000_000, s: int = 4) -> Figure:
    """A ring of ``W`` devices: each buffer in ``W`` chunks, each device sending to the next.
    The title gives the bytes each device sends for ``n_params`` values of ``s`` bytes.

    >>> fig = ring_allreduce(W=4)
    >>> fig.axes[0].get_title()
    'Ring all-reduce over 4 devices: each sends 600 MB for a 400 MB buffer'
    """
    import math

    from matplotlib.patches import FancyArrowPatch, Rectangle

    if W < 2:
        raise GpuConceptsError(f"ring_allreduce: a ring needs W ≥ 2 devices; got W={W}")
    fig, (ax,) = figure(6.4, 6.0)
    radius = 3.0
    places = [
        (radius * math.cos(math.pi / 2 - 2 * math.pi * d / W),
         radius * math.sin(math.pi / 2 - 2 * math.pi * d / W))
        for d in range(W)
    ]  # fmt: skip
    chunk = 0.42
    for d, (x, y) in enumerate(places):
        ax.text(x, y + 0.55, f"device {d + 1}", ha="center", fontsize=10, color=INK)
        for c in range(W):
            owned = c == (d + 1) % W  # the chunk this device holds reduced after reduce-scatter
            ax.add_patch(
                Rectangle(
                    (x - W * chunk / 2 + c * chunk, y - chunk / 2),
                    chunk,
                    chunk,
                    facecolor=DEVICE_COLOURS[c % len(DEVICE_COLOURS)] if owned else PALE,
                    edgecolor=INK,
                    linewidth=0.8,
                )
            )
    for d in range(W):
        (x0, y0), (x1, y1) = places[d], places[(d + 1) % W]
        ax.add_patch(
            FancyArrowPatch(
                (x0 * 0.8, y0 * 0.8 - 0.1),
                (x1 * 0.8, y1 * 0.8 - 0.1),
                connectionstyle="arc3,rad=-0.25",
                arrowstyle="-|>",
                mutation_scale=14,
                color=ACCENT,
                linewidth=1.5,
            )
        )
    sent = formulas.ring_allreduce_bytes(n_params=n_params, W=W, s=s)
    buffer = n_params * s
    ax.set_title(
        f"Ring all-reduce over {W} devices: each sends {units.decimal_bytes(sent)} "
        f"for a {units.decimal_bytes(buffer)} buffer",
        fontsize=11,
    )
    ax.text(
        0,
        0,
        f"{W - 1} steps of reduce-scatter,\nthen {W - 1} of all-gather;\n"
        f"each step sends one chunk\n(1/{W} of the buffer)",
        ha="center",
        va="center",
        fontsize=9.5,
        color=INK,
    )
    ax.text(
        0,
        -radius - 1.0,
        "coloured: the chunk each device holds fully reduced after the reduce-scatter",
        ha="center",
        fontsize=9,
        color=INK,
    )
    ax.set_xlim(-radius - 1.6, radius + 1.6)
    ax.set_ylim(-radius - 1.4, radius + 1.2)
    ax.set_aspect("equal")
    ax.axis("off")
    return fig


ZERO_PARTS = ("weights", "gradients", "optimizer state")


def zero_parts(n_params: int, N_d: int, stage: int, k_opt: int = 12) -> dict[str, float]:
    """Bytes per device of each part of the model state under a ZeRO stage (0 to 3): 16-bit
    weights and gradients, ``k_opt`` optimizer bytes per parameter, each divided over the
    ``N_d`` devices from the stage that partitions it.

    >>> parts = zero_parts(7_500_000_000, 64, 1)
    >>> sum(parts.values()) == formulas.zero_memory_per_device(
    ...     n_params=7_500_000_000, N_d=64, stage=1, k_opt=12)
    True
    """
    if stage not in (0, 1, 2, 3):
        raise GpuConceptsError(f"zero_parts: stage must be 0, 1, 2 or 3; got {stage}")
    share = dict.fromkeys(ZERO_PARTS, 1.0)
    for part, from_stage in zip(ZERO_PARTS, (3, 2, 1), strict=True):
        if stage >= from_stage:
            share[part] = 1 / N_d
    per_param = {"weights": 2, "gradients": 2, "optimizer state": k_opt}
    return {part: per_param[part] * n_params * share[part] for part in ZERO_PARTS}


@needs_matplotlib
def memory_budget(
    n_params: int = 7_500_000_000,
    N_d: int = 64,
    k_opt: int = 12,
    device_bytes: float | None = None,
    device_name: str = "one GPU",
) -> Figure:
    """Stacked bars: the model state one device holds under plain data parallelism and ZeRO's
    three stages, split into weights, gradients and optimizer state; a dashed line at
    ``device_bytes`` (a GPU's memory) when given.

    >>> fig = memory_budget()
    >>> [t.get_text() for t in fig.axes[0].get_xticklabels()]
    ['data parallel', 'ZeRO stage 1', 'ZeRO stage 2', 'ZeRO stage 3']
    """
    fig, (ax,) = figure(6.8, 4.2)
    names = ["data parallel", "ZeRO stage 1", "ZeRO stage 2", "ZeRO stage 3"]
    colours = {"weights": CALM, "gradients": ACCENT, "optimizer state": WARM}
    bottoms = [0.0] * 4
    budgets = [zero_parts(n_params, N_d, stage, k_opt) for stage in range(4)]
    for part in ZERO_PARTS:
        heights = [b[part] / 1e9 for b in budgets]
        ax.bar(names, heights, bottom=bottoms, color=colours[part], edgecolor=INK, label=part)
        bottoms = [b + h for b, h in zip(bottoms, heights, strict=True)]
    for x, total in enumerate(bottoms):
        ax.text(x, total, units.decimal_bytes(total * 1e9), ha="center", va="bottom", fontsize=9)
    if device_bytes is not None:
        ax.axhline(
            device_bytes / 1e9,
            color=INK,
            linestyle="--",
            linewidth=1,
            label=f"memory of {device_name}: {units.decimal_bytes(device_bytes)}",
        )
    ax.set_ylabel("model state per device (GB)")
    ax.set_title(
        f"{units.in_words(n_params)} parameters over {N_d} devices, "
        f"{k_opt} optimizer bytes per parameter",
        fontsize=11,
    )
    ax.legend(fontsize=9)
    ax.set_ylim(0, max(bottoms) * 1.15)
    return fig


@needs_matplotlib
def cnn_architecture(
    H: int = 8, K: int = 3, C_in: int = 3, C_out: int = 4, pool: int = 2
) -> Figure:
    """The post's CNN picture, drawn to scale: an ``H``×``H`` image of ``C_in`` channels, a
    ``K``×``K`` filter window on it, the ``C_out`` feature maps a valid convolution makes,
    and the maps after ``pool``×``pool`` pooling. Sizes and weight counts are computed.

    >>> fig = cnn_architecture()
    >>> fig.axes[0].get_title()
    'Image 8×8×3 → 4 filters of 3×3×3 (108 weights) → feature maps 6×6×4 → pooled 3×3×4'
    """
    from matplotlib.patches import Rectangle

    out = H - K + 1
    pooled = out // pool
    if out < 1 or pooled < 1:
        raise GpuConceptsError(
            f"cnn_architecture: a {K}×{K} filter and {pool}×{pool} pooling leave nothing of "
            f"an {H}×{H} image"
        )
    weights = formulas.conv_weights(K=K, C_in=C_in, C_out=C_out)
    fig, (ax,) = figure(9.5, 3.8)

    def stack(x0: float, size: int, depth: int, colour: str, cell: float) -> None:
        for layer in reversed(range(depth)):
            dx, dy = layer * 0.35, layer * 0.35
            for r in range(size):
                for c in range(size):
                    ax.add_patch(
                        Rectangle(
                            (x0 + dx + c * cell, dy + r * cell),
                            cell,
                            cell,
                            facecolor=colour,
                            edgecolor=INK,
                            linewidth=0.3,
                        )
                    )

    cell = 0.42
    stack(0, H, C_in, PALE, cell)
    top = H * cell
    ax.add_patch(
        Rectangle(
            (0, top - K * cell), K * cell, K * cell, fill=False, edgecolor=ACCENT, linewidth=2.5
        )
    )
    x_maps = H * cell + C_in * 0.35 + 1.6
    stack(x_maps, out, C_out, WARM, cell)
    ax.add_patch(Rectangle((x_maps, top - K * cell - (H - out) * cell + (H - out) * cell),
                           cell, cell, facecolor=ACCENT, edgecolor=INK))  # fmt: skip
    x_pool = x_maps + out * cell + C_out * 0.35 + 1.6
    stack(x_pool, pooled, C_out, CALM, cell)
    for x0, x1 in ((H * cell + C_in * 0.35 + 0.2, x_maps - 0.2),
                   (x_maps + out * cell + C_out * 0.35 + 0.2, x_pool - 0.2)):  # fmt: skip
        ax.annotate(
            "",
            xy=(x1, top / 2),
            xytext=(x0, top / 2),
            arrowprops={"arrowstyle": "-|>", "color": INK, "linewidth": 1.4},
        )
    ax.text(H * cell / 2, -0.6, f"image {H}×{H}, {C_in} channels", ha="center", fontsize=9.5)
    ax.text(x_maps + out * cell / 2, -0.6, f"{C_out} feature maps {out}×{out}", ha="center",
            fontsize=9.5)  # fmt: skip
    ax.text(x_pool + pooled * cell / 2, -0.6, f"after {pool}×{pool} pooling", ha="center",
            fontsize=9.5)  # fmt: skip
    ax.set_title(
        f"Image {H}×{H}×{C_in} → {C_out} filters of {K}×{K}×{C_in} ({weights} weights) → "
        f"feature maps {out}×{out}×{C_out} → pooled {pooled}×{pooled}×{C_out}",
        fontsize=10.5,
    )
    ax.set_xlim(-0.3, x_pool + pooled * cell + C_out * 0.35 + 0.3)
    ax.set_ylim(-1.0, top + C_in * 0.35 + 0.3)
    ax.set_aspect("equal")
    ax.axis("off")
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
