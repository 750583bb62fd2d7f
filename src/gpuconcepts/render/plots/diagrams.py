"""The post's diagrams of the architectures, drawn with matplotlib: DLRM's pipeline, an MLP's
layers, an RNN unrolled in time, attention's scores and the KV cache's growth, one function per
figure, each returning a Figure. The other families have their own modules: the CNN's
(:mod:`~gpuconcepts.render.plots.cnn_diagrams`) and the GPU's
(:mod:`~gpuconcepts.render.plots.gpu_diagrams`); the shapes they share are in
:mod:`~gpuconcepts.render.plots.drawing`.

Every number a figure shows (weights, scores, bytes) comes from :mod:`gpuconcepts.formulas`.
matplotlib is imported inside the functions, so ``import gpuconcepts.render.plots.diagrams`` stays light.
The figures are built on :class:`matplotlib.figure.Figure` directly (no pyplot state), so
they can be made in a loop without leaking windows.

>>> fig = mlp_layers((3, 4, 2))
>>> len(fig.axes[0].lines)
20
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import TYPE_CHECKING

from gpuconcepts import formulas
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.render.plots.drawing import arrow, blank, box
from gpuconcepts.render.style import (
    ACCENT,
    CALM,
    INK,
    PALE,
    WARM,
    figure,
    needs_matplotlib,
)
from gpuconcepts.units import binary_bytes, plain_number

if TYPE_CHECKING:
    from matplotlib.figure import Figure


@needs_matplotlib
def dlrm_pipeline() -> Figure:
    """DLRM: sparse IDs go through embedding lookups, dense features through an MLP, then both meet.

    >>> fig = dlrm_pipeline()
    >>> sorted(t.get_text() for t in fig.axes[0].texts if t.get_text())[:3]
    ['Bottom MLP', 'Dense features\\n(watch time, age)', 'Embedding tables\\n(lookups by ID)']
    """
    fig, (ax,) = figure(8.4, 3.4)
    blank(ax, (-0.3, 12.6), (-0.4, 4.4))
    box(ax, 1.2, 3.2, "Sparse features\n(user ID, video ID)")
    box(ax, 4.2, 3.2, "Embedding tables\n(lookups by ID)", colour=WARM)
    box(ax, 1.2, 0.8, "Dense features\n(watch time, age)")
    box(ax, 4.2, 0.8, "Bottom MLP")
    box(ax, 7.2, 2.0, "Feature\ninteraction")
    box(ax, 9.6, 2.0, "Top MLP", width=1.6)
    box(ax, 11.6, 2.0, "Score\nP(click)", width=1.6, colour=WARM)
    arrow(ax, (2.35, 3.2), (3.05, 3.2))
    arrow(ax, (2.35, 0.8), (3.05, 0.8))
    arrow(ax, (5.35, 3.0), (6.05, 2.3))
    arrow(ax, (5.35, 1.0), (6.05, 1.7))
    arrow(ax, (8.35, 2.0), (8.75, 2.0))
    arrow(ax, (10.45, 2.0), (10.75, 2.0))
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
        box(ax, x, 1.6, f"RNN cell\nstep {t}", width=1.6)
        ax.text(x, 0.0, f"“{word}”\n$x_{{{t}}}$", ha="center", va="center", fontsize=11.5)
        arrow(ax, (x, 0.45), (x, 1.12))
        arrow(ax, (x, 2.08), (x, 2.75), colour=ACCENT)
        ax.text(x, 3.0, f"$h_{{{t}}}$", ha="center", va="center", fontsize=12.5, color=ACCENT)
        arrow(ax, (x - 1.8, 1.6), (x - 0.83, 1.6), colour=ACCENT)
        if t == 1:
            ax.text(x - 1.3, 1.8, "$h_{0}$", ha="center", fontsize=11, color=ACCENT)
    ax.set_title("An RNN unrolled in time: step $t$ waits for $h_{t-1}$", fontsize=12.5)
    blank(ax, (0.4, 2.6 * len(words) + 1.2), (-0.6, 3.4))
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
