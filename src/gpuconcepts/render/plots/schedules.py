"""Figures of work spread over devices, each drawn from computed values.

* :func:`pipeline_schedules`: GPipe, 1F1B and interleaved 1F1B, simulated slot by slot
  (:func:`simulate`); each panel's idle share is measured on the simulated timeline and shown
  beside :data:`~gpuconcepts.formulas.pipeline_bubble_fraction`'s.
* :func:`ring_allreduce`: a ring of W devices, each buffer cut into W chunks, with the bytes
  each device sends from :data:`~gpuconcepts.formulas.ring_allreduce_bytes`.

The memory budgets under ZeRO are in :mod:`~gpuconcepts.render.plots.budgets`, the CNN's
picture in :mod:`~gpuconcepts.render.plots.cnn_diagrams` and the datasheet rooflines in
:mod:`~gpuconcepts.render.plots.gpu_diagrams`.

The schedule simulation is pure (no matplotlib), and tested on its own.

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
from gpuconcepts.render.style import (
    ACCENT,
    DEVICE_COLOURS,
    INK,
    PALE,
    figure,
    needs_matplotlib,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

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


def _ring_of_chunks(ax: Axes, places: list[tuple[float, float]], chunk: float) -> None:
    """Each device's name and its buffer in ``len(places)`` chunks, the chunk it holds reduced
    after the reduce-scatter coloured."""
    from matplotlib.patches import Rectangle

    W = len(places)
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


def _ring_arrows(ax: Axes, places: list[tuple[float, float]]) -> None:
    """An arrow from each device to the next around the ring."""
    from matplotlib.patches import FancyArrowPatch

    W = len(places)
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


@needs_matplotlib
def ring_allreduce(W: int = 4, n_params: int = 100_000_000, s: int = 4) -> Figure:
    """A ring of ``W`` devices: each buffer in ``W`` chunks, each device sending to the next.
    The title gives the bytes each device sends for ``n_params`` values of ``s`` bytes.

    >>> fig = ring_allreduce(W=4)
    >>> fig.axes[0].get_title()
    'Ring all-reduce over 4 devices: each sends 600 MB for a 400 MB buffer'
    """
    import math

    if W < 2:
        raise GpuConceptsError(f"ring_allreduce: a ring needs W ≥ 2 devices; got W={W}")
    fig, (ax,) = figure(6.4, 6.0)
    radius = 3.0
    places = [
        (radius * math.cos(math.pi / 2 - 2 * math.pi * d / W),
         radius * math.sin(math.pi / 2 - 2 * math.pi * d / W))
        for d in range(W)
    ]  # fmt: skip
    _ring_of_chunks(ax, places, chunk=0.42)
    _ring_arrows(ax, places)
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
