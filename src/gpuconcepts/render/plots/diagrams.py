"""The post's diagrams, drawn with matplotlib: one function per figure, each returning a Figure.

Every number a figure shows (weights, scores, bytes) comes from :mod:`gpuconcepts.formulas`.
matplotlib is imported inside the functions, so ``import gpuconcepts.render.plots.diagrams`` stays light.
The figures are built on :class:`matplotlib.figure.Figure` directly (no pyplot state), so
they can be made in a loop without leaking windows.

>>> fig = cnn_weight_sharing()
>>> [ax.get_title() for ax in fig.axes]
['Fully connected: 48 weights', '3×3 filter: 9 shared weights']
"""

# MyST-NB, IPython and matplotlib are imported inside functions on purpose (README, Rules: 3).
# ruff: noqa: PLC0415

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import TYPE_CHECKING

from gpuconcepts import formulas
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.render.style import (
    ACCENT,
    CALM,
    INK,
    PALE,
    SLATE,
    WARM,
    figure,
    needs_matplotlib,
    plain_log_labels,
)
from gpuconcepts.units import binary_bytes, decimal_bytes, in_words, plain_number, si, significant

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from gpuconcepts.hardware import GPU


def _box(
    ax: Axes,
    x: float,
    y: float,
    text: str,
    *,
    width: float = 2.2,
    colour: str = PALE,
    fontsize: float = 10.5,
) -> None:
    """A rounded box centred on (x, y) with a label."""
    from matplotlib.patches import FancyBboxPatch

    height = 0.9
    ax.add_patch(
        FancyBboxPatch(
            (x - width / 2, y - height / 2),
            width,
            height,
            boxstyle="round,pad=0.05,rounding_size=0.15",
            facecolor=colour,
            edgecolor=INK,
            linewidth=1.2,
        )
    )
    ax.text(x, y, text, ha="center", va="center", fontsize=fontsize, color=INK, wrap=True)


def _arrow(
    ax: Axes, start: tuple[float, float], end: tuple[float, float], colour: str = INK
) -> None:
    ax.annotate(
        "",
        xy=end,
        xytext=start,
        arrowprops={
            "arrowstyle": "-|>",
            "color": colour,
            "linewidth": 1.3,
            "shrinkA": 0,
            "shrinkB": 0,
        },
    )


def _blank(ax: Axes, xlim: tuple[float, float], ylim: tuple[float, float]) -> None:
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    ax.set_aspect("equal")
    ax.axis("off")


@needs_matplotlib
def dlrm_pipeline() -> Figure:
    """DLRM: sparse IDs go through embedding lookups, dense features through an MLP, then both meet.

    >>> fig = dlrm_pipeline()
    >>> sorted(t.get_text() for t in fig.axes[0].texts if t.get_text())[:3]
    ['Bottom MLP', 'Dense features\\n(watch time, age)', 'Embedding tables\\n(lookups by ID)']
    """
    fig, (ax,) = figure(8.4, 3.4)
    _blank(ax, (-0.3, 12.6), (-0.4, 4.4))
    _box(ax, 1.2, 3.2, "Sparse features\n(user ID, video ID)")
    _box(ax, 4.2, 3.2, "Embedding tables\n(lookups by ID)", colour=WARM)
    _box(ax, 1.2, 0.8, "Dense features\n(watch time, age)")
    _box(ax, 4.2, 0.8, "Bottom MLP")
    _box(ax, 7.2, 2.0, "Feature\ninteraction")
    _box(ax, 9.6, 2.0, "Top MLP", width=1.6)
    _box(ax, 11.6, 2.0, "Score\nP(click)", width=1.6, colour=WARM)
    _arrow(ax, (2.35, 3.2), (3.05, 3.2))
    _arrow(ax, (2.35, 0.8), (3.05, 0.8))
    _arrow(ax, (5.35, 3.0), (6.05, 2.3))
    _arrow(ax, (5.35, 1.0), (6.05, 1.7))
    _arrow(ax, (8.35, 2.0), (8.75, 2.0))
    _arrow(ax, (10.45, 2.0), (10.75, 2.0))
    ax.text(
        4.2,
        4.05,
        "scattered rows of a huge table",
        ha="center",
        fontsize=10,
        color=ACCENT,
        style="italic",
    )
    ax.text(
        4.2, -0.05, "dense matrix multiply", ha="center", fontsize=10, color=CALM, style="italic"
    )
    ax.set_title("DLRM: embedding lookups beside dense layers", fontsize=12.5)
    return fig


@needs_matplotlib
def mlp_layers(sizes: Sequence[int] = (4, 5, 5, 2)) -> Figure:
    """An MLP: every neuron of a layer wired to every neuron of the next.

    The title gives each layer's weight count from :data:`~gpuconcepts.formulas.mlp_weights`.

    >>> fig = mlp_layers((3, 4, 2))
    >>> fig.axes[0].get_title()
    'Fully connected layers: 12 + 8 = 20 weights'
    >>> len(fig.axes[0].lines)  # one line per weight
    20
    """
    if len(sizes) < 2 or min(sizes) < 1:
        raise GpuConceptsError(
            f"mlp_layers: sizes must be two or more positive layer widths; got {tuple(sizes)}"
        )
    fig, (ax,) = figure(7, 4)
    tallest = max(sizes)
    positions = [
        [(2.0 * layer, (n - 1) / 2 - i) for i in range(n)] for layer, n in enumerate(sizes)
    ]
    for left, right in itertools.pairwise(positions):
        for x0, y0 in left:
            for x1, y1 in right:
                ax.plot([x0, x1], [y0, y1], color=CALM, alpha=0.35, linewidth=0.8)
    names = ["input", *["hidden"] * (len(sizes) - 2), "output"]
    bottom = -(tallest - 1) / 2 - 0.9
    for layer, (column, name) in enumerate(zip(positions, names, strict=True)):
        ax.scatter(
            [x for x, _ in column],
            [y for _, y in column],
            s=260,
            edgecolors=INK,
            color=PALE if name == "hidden" else WARM,
            zorder=3,
        )
        ax.text(2.0 * layer, bottom, name, ha="center", fontsize=9, color=INK)
    counts = [formulas.mlp_weights(d_in=a, d_out=b) for a, b in itertools.pairwise(sizes)]
    ax.set_title(
        f"Fully connected layers: {' + '.join(map(str, counts))} = {sum(counts)} weights",
        fontsize=11,
    )
    ax.set_xlim(-0.8, 2.0 * (len(sizes) - 1) + 0.8)
    ax.set_ylim(bottom - 0.3, (tallest - 1) / 2 + 0.6)
    ax.set_aspect("equal")
    ax.axis("off")
    return fig


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
    from matplotlib.patches import Rectangle

    fully = formulas.mlp_weights(d_in=image * image, d_out=outputs)
    shared = formulas.conv_weights(K=kernel, C_in=1, C_out=1)
    fig, (left, right) = figure(8, 3.6, ncols=2)

    def grid(ax: Axes, x0: float) -> list[tuple[float, float]]:
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

    pixels = grid(left, 0)
    neuron_x = image + 2.5
    neurons = [(neuron_x, image / 2 + (outputs - 1) / 2 * 1.3 - 1.3 * j) for j in range(outputs)]
    for px, py in pixels:
        for nx, ny in neurons:
            left.plot([px, nx], [py, ny], color=CALM, alpha=0.3, linewidth=0.7)
    left.scatter(
        [x for x, _ in neurons],
        [y for _, y in neurons],
        s=300,
        color=WARM,
        edgecolors=INK,
        zorder=3,
    )
    left.set_title(f"Fully connected: {fully} weights", fontsize=12.5)
    _blank(left, (-0.5, neuron_x + 1), (-1, image + 0.8))
    left.text(
        image / 2,
        -0.6,
        f"{image}×{image} image, {image * image} pixels",
        ha="center",
        fontsize=10.5,
    )

    grid(right, 0)
    steps = image - kernel + 1
    for k, (row, col) in enumerate([(0, 0), (steps - 1, steps - 1)]):
        right.add_patch(
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
    right.annotate(
        "",
        xy=(steps - 1 + kernel / 2, image - kernel - steps + 1 + kernel / 2),
        xytext=(kernel / 2, image - kernel / 2),
        arrowprops={"arrowstyle": "-|>", "color": ACCENT, "linewidth": 1.5},
    )
    right.set_title(f"{kernel}×{kernel} filter: {shared} shared weights", fontsize=12.5)
    right.text(
        image / 2, -0.6, "the same filter slides to every position", ha="center", fontsize=10.5
    )
    _blank(right, (-0.5, image + 0.5), (-1, image + 0.8))
    return fig


@needs_matplotlib
def rnn_unrolled(words: Sequence[str] = ("I", "love", "AI")) -> Figure:
    """An RNN unrolled in time: one cell per word, the hidden state h_t passed to the next step.

    >>> fig = rnn_unrolled(("I", "love", "AI"))
    >>> sorted(t.get_text() for t in fig.axes[0].texts if t.get_text().startswith("$h"))
    ['$h_{0}$', '$h_{1}$', '$h_{2}$', '$h_{3}$']
    """
    if not words:
        raise GpuConceptsError("rnn_unrolled: words must hold at least one word; got none")
    fig, (ax,) = figure(1.0 + 2.6 * len(words), 3.6)
    for t, word in enumerate(words, start=1):
        x = 2.6 * t
        _box(ax, x, 1.6, f"RNN cell\nstep {t}", width=1.6)
        ax.text(x, 0.0, f"“{word}”\n$x_{{{t}}}$", ha="center", va="center", fontsize=11.5)
        _arrow(ax, (x, 0.45), (x, 1.12))
        _arrow(ax, (x, 2.08), (x, 2.75), colour=ACCENT)
        ax.text(x, 3.0, f"$h_{{{t}}}$", ha="center", va="center", fontsize=12.5, color=ACCENT)
        _arrow(ax, (x - 1.8, 1.6), (x - 0.83, 1.6), colour=ACCENT)
        if t == 1:
            ax.text(x - 1.3, 1.8, "$h_{0}$", ha="center", fontsize=11, color=ACCENT)
    ax.set_title("An RNN unrolled in time: step $t$ waits for $h_{t-1}$", fontsize=12.5)
    _blank(ax, (0.4, 2.6 * len(words) + 1.2), (-0.6, 3.4))
    return fig


@needs_matplotlib
def attention_heatmap(scores: Sequence[Sequence[float]], tokens: Sequence[str]) -> Figure:
    """A heatmap of an attention score matrix: row i is how token i spreads its attention.

    >>> fig = attention_heatmap([[0.7, 0.3], [0.2, 0.8]], ["cat", "sat"])
    >>> [t.get_text() for t in fig.axes[0].get_xticklabels()]
    ['cat', 'sat']
    >>> attention_heatmap([[1.0]], ["a", "b"])
    Traceback (most recent call last):
    ...
    gpuconcepts.errors.GpuConceptsError: attention_heatmap: scores must be 2×2 for 2 tokens; got 1 rows
    """
    n = len(tokens)
    if len(scores) != n or any(len(row) != n for row in scores):
        raise GpuConceptsError(
            f"attention_heatmap: scores must be {n}×{n} for {n} tokens; got {len(scores)} rows"
        )
    fig, (ax,) = figure(5.4, 4.6)
    image = ax.imshow(scores, cmap="Oranges", vmin=0, vmax=max(max(row) for row in scores))
    ax.set_xticks(range(n), list(tokens))
    ax.set_yticks(range(n), list(tokens))
    ax.set_xlabel("attends to (key)")
    ax.set_ylabel("token (query)")
    top = max(max(row) for row in scores)
    for i, row in enumerate(scores):
        for j, value in enumerate(row):
            ax.text(
                j,
                i,
                f"{plain_number(value)}",
                ha="center",
                va="center",
                fontsize=9,
                color="white" if value > 0.6 * top else INK,
            )
    fig.colorbar(image, ax=ax, shrink=0.8, label="attention weight")
    ax.set_title(f"{n}×{n} = {formulas.attention_scores(S=n)} attention scores", fontsize=11)
    return fig


@needs_matplotlib
def kv_cache_growth(
    tokens: Sequence[str], *, B: int, d: int, s: float, measured: Sequence[float] | None = None
) -> Figure:
    """KV cache bytes after each generated token, from :data:`~gpuconcepts.formulas.kv_cache_memory`.

    ``measured`` (bytes per step, e.g. from ``kernels.transformer.decode``) is drawn on top
    when given, so the formula and the allocator can be compared.

    >>> fig = kv_cache_growth(["The", "cat"], B=1, d=512, s=2)
    >>> [round(p.get_height()) for p in fig.axes[0].patches]
    [2048, 4096]
    """
    if not tokens:
        raise GpuConceptsError("kv_cache_growth: tokens must hold at least one token; got none")
    steps = list(range(1, len(tokens) + 1))
    expected = formulas.kv_cache_memory.vectorized(B=B, S=steps, d=d, s=s)
    fig, (ax,) = figure(6.4, 3.8)
    bars = ax.bar(steps, expected, color=WARM, edgecolor=INK, label="formula: 2·B·S·d·s")
    if measured is not None:
        if len(measured) != len(steps):
            raise GpuConceptsError(
                f"kv_cache_growth: measured has {len(measured)} values for {len(steps)} tokens"
            )
        ax.plot(steps, measured, "o", color=CALM, label="measured cache tensors")
    for bar, value in zip(bars, expected, strict=True):
        ax.text(
            bar.get_x() + bar.get_width() / 2,
            value,
            binary_bytes(float(value)),
            ha="center",
            va="bottom",
            fontsize=8,
        )
    ax.set_xticks(steps, [f"{t}\n{word}" for t, word in zip(steps, tokens, strict=True)])
    ax.set_xlabel("tokens stored")
    ax.set_ylabel("KV cache (bytes)")
    ax.set_ylim(0, float(expected[-1]) * 1.18)
    ax.legend(loc="upper left", fontsize=8)
    ax.set_title(f"KV cache of one layer (B={B}, d={d}, s={plain_number(s)} bytes)", fontsize=11)
    return fig


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
    _blank(ax, (-0.2, 14.2), (-0.3, 8.3))
    per_sm = gpu.tensor_cores // gpu.sms
    # the GPU's outline
    ax.add_patch(Rectangle((3.4, 0.0), 10.6, 8.0, facecolor="none", edgecolor=SLATE, lw=1.2))
    ax.text(13.85, 7.75, f"the {gpu.name}", ha="right", va="top", fontsize=10, color=SLATE)
    # the host and the launch
    _box(ax, 1.45, 6.0, "Host CPU\nPython, PyTorch", width=2.5, colour=WARM)
    launch = "launches\na kernel"
    if launch_seconds is not None:
        launch += f"\n≥ {si(launch_seconds, 's')} each"
    _arrow(ax, (2.75, 6.0), (3.9, 6.0), colour=ACCENT)
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
        _arrow(ax, (x, 4.25), (x, 3.4))
    _arrow(ax, (8.8, 2.4), (8.8, 1.5))
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
