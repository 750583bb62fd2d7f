"""The CNN diagrams: one filter's weights shared across an image against a fully connected
layer's (:func:`cnn_weight_sharing`), and the post's CNN drawn to scale, from an image through
its feature maps to pooling (:func:`cnn_architecture`). Every size and weight count is
computed (:data:`~gpuconcepts.formulas.conv_weights`, :data:`~gpuconcepts.formulas.mlp_weights`).

>>> fig = cnn_weight_sharing()
>>> [ax.get_title() for ax in fig.axes]
['Fully connected: 48 weights', '3×3 filter: 9 shared weights']
"""

# matplotlib is imported inside functions on purpose (README, Rules: 3).
# ruff: noqa: PLC0415

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuconcepts import formulas
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.render.plots.drawing import blank
from gpuconcepts.render.style import ACCENT, CALM, INK, PALE, WARM, figure, needs_matplotlib

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


def pixel_grid(ax: Axes, x0: float, image: int) -> list[tuple[float, float]]:
    """An ``image``×``image`` grid of pixels from ``x0``, one square each; their centres."""
    from matplotlib.patches import Rectangle

    centres = []
    for row in range(image):
        for col in range(image):
            ax.add_patch(
                Rectangle(
                    (x0 + col, image - 1 - row),
                    1,
                    1,
                    facecolor=PALE,
                    edgecolor=INK,
                    linewidth=0.8,
                )
            )
            centres.append((x0 + col + 0.5, image - row - 0.5))
    return centres


def _fully_connected_panel(ax: Axes, image: int, outputs: int, fully: float) -> None:
    """The left panel: every pixel wired to every output neuron, one line per weight."""
    pixels = pixel_grid(ax, 0, image)
    neuron_x = image + 2.5
    neurons = [(neuron_x, image / 2 + (outputs - 1) / 2 * 1.3 - 1.3 * j) for j in range(outputs)]
    for px, py in pixels:
        for nx, ny in neurons:
            ax.plot([px, nx], [py, ny], color=CALM, alpha=0.3, linewidth=0.7)
    ax.scatter(
        [x for x, _ in neurons],
        [y for _, y in neurons],
        s=300,
        color=WARM,
        edgecolors=INK,
        zorder=3,
    )
    ax.set_title(f"Fully connected: {fully} weights", fontsize=12.5)
    blank(ax, (-0.5, neuron_x + 1), (-1, image + 0.8))
    ax.text(
        image / 2,
        -0.6,
        f"{image}×{image} image, {image * image} pixels",
        ha="center",
        fontsize=10.5,
    )


def _shared_filter_panel(ax: Axes, image: int, kernel: int, shared: float) -> None:
    """The right panel: one filter at its first and last position, an arrow between."""
    from matplotlib.patches import Rectangle

    pixel_grid(ax, 0, image)
    steps = image - kernel + 1
    for k, (row, col) in enumerate([(0, 0), (steps - 1, steps - 1)]):
        ax.add_patch(
            Rectangle(
                (col, image - kernel - row),
                kernel,
                kernel,
                fill=False,
                edgecolor=ACCENT if k == 0 else CALM,
                linewidth=2.5,
                linestyle="-" if k == 0 else "--",
            )
        )
    ax.annotate(
        "",
        xy=(steps - 1 + kernel / 2, image - kernel - steps + 1 + kernel / 2),
        xytext=(kernel / 2, image - kernel / 2),
        arrowprops={"arrowstyle": "-|>", "color": ACCENT, "linewidth": 1.5},
    )
    ax.set_title(f"{kernel}×{kernel} filter: {shared} shared weights", fontsize=12.5)
    ax.text(image / 2, -0.6, "the same filter slides to every position", ha="center", fontsize=10.5)
    blank(ax, (-0.5, image + 0.5), (-1, image + 0.8))


@needs_matplotlib
def cnn_weight_sharing(image: int = 4, outputs: int = 3, kernel: int = 3) -> Figure:
    """MLP against CNN on an image x image picture: every pixel wired to every neuron vs one filter.

    Weight counts come from :data:`~gpuconcepts.formulas.mlp_weights` and
    :data:`~gpuconcepts.formulas.conv_weights`; the left panel draws one line per weight.

    >>> fig = cnn_weight_sharing()
    >>> len(fig.axes[0].lines)
    48
    """
    if kernel > image:
        raise GpuConceptsError(
            f"cnn_weight_sharing: kernel {kernel} is larger than the image {image}"
        )
    fully = formulas.mlp_weights(d_in=image * image, d_out=outputs)
    shared = formulas.conv_weights(K=kernel, C_in=1, C_out=1)
    fig, (left, right) = figure(8, 3.6, ncols=2)
    _fully_connected_panel(left, image, outputs, fully)
    _shared_filter_panel(right, image, kernel, shared)
    return fig


def feature_stack(ax: Axes, x0: float, size: int, depth: int, colour: str, cell: float) -> None:
    """``depth`` grids of ``size``×``size`` cells from ``x0``, each drawn behind and above the
    one before: an image's channels or a layer's feature maps."""
    from matplotlib.patches import Rectangle

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


def _arrows_at(ax: Axes, spans: list[tuple[float, float]], y: float) -> None:
    """An arrow along each (start, end) span at height ``y``: from one stage to the next."""
    for x0, x1 in spans:
        ax.annotate(
            "",
            xy=(x1, y),
            xytext=(x0, y),
            arrowprops={"arrowstyle": "-|>", "color": INK, "linewidth": 1.4},
        )


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
    cell = 0.42
    feature_stack(ax, 0, H, C_in, PALE, cell)
    top = H * cell
    ax.add_patch(
        Rectangle(
            (0, top - K * cell), K * cell, K * cell, fill=False, edgecolor=ACCENT, linewidth=2.5
        )
    )
    x_maps = H * cell + C_in * 0.35 + 1.6
    feature_stack(ax, x_maps, out, C_out, WARM, cell)
    ax.add_patch(Rectangle((x_maps, top - K * cell - (H - out) * cell + (H - out) * cell),
                           cell, cell, facecolor=ACCENT, edgecolor=INK))  # fmt: skip
    x_pool = x_maps + out * cell + C_out * 0.35 + 1.6
    feature_stack(ax, x_pool, pooled, C_out, CALM, cell)
    _arrows_at(ax, [(H * cell + C_in * 0.35 + 0.2, x_maps - 0.2),
                    (x_maps + out * cell + C_out * 0.35 + 0.2, x_pool - 0.2)], top / 2)  # fmt: skip
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
