"""Memory budgets: the model state one device holds under plain data parallelism and ZeRO's
three stages, split into weights, gradients and optimizer state. :func:`zero_parts` is pure
(no matplotlib); its sum is :data:`~gpuconcepts.formulas.zero_memory_per_device`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuconcepts import units
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.render.style import ACCENT, CALM, INK, WARM, figure, needs_matplotlib

if TYPE_CHECKING:
    from matplotlib.figure import Figure


ZERO_PARTS = ("weights", "gradients", "optimizer state")


def zero_parts(n_params: int, N_d: int, stage: int, k_opt: int = 12) -> dict[str, float]:
    """Bytes per device of each part of the model state under a ZeRO stage (0 to 3): 16-bit
    weights and gradients, ``k_opt`` optimizer bytes per parameter, each divided over the
    ``N_d`` devices from the stage that partitions it.

    >>> from gpuconcepts import formulas
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
