"""The post's diagrams: each function returns a Figure whose labels and counts come from the formulas."""

from __future__ import annotations

import itertools
import re
import sys

import pytest

pytest.importorskip("matplotlib")

from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from gpuconcepts import formulas
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.measure import Measurement
from gpuconcepts.render import plots
from gpuconcepts.roofline import MemoryLevel, Peaks


def texts(fig: Figure) -> list[str]:
    return [t.get_text() for ax in fig.axes for t in ax.texts]


def test_dlrm_pipeline_has_every_stage() -> None:
    fig = plots.dlrm_pipeline()
    labels = " ".join(texts(fig))
    for stage in (
        "Sparse features",
        "Embedding tables",
        "Dense features",
        "Bottom MLP",
        "Feature\ninteraction",
        "Top MLP",
        "P(click)",
    ):
        assert stage in labels
    assert len(fig.axes[0].patches) == 7  # seven boxes


def test_mlp_layers_draws_one_line_per_weight() -> None:
    sizes = (4, 5, 5, 2)
    fig = plots.mlp_layers(sizes)
    expected = [formulas.mlp_weights(d_in=a, d_out=b) for a, b in itertools.pairwise(sizes)]
    assert len(fig.axes[0].lines) == sum(expected) == 55
    assert fig.axes[0].get_title() == "Fully connected layers: 20 + 25 + 10 = 55 weights"
    assert sorted(texts(fig)) == ["hidden", "hidden", "input", "output"]


def test_mlp_layers_rejects_a_single_layer() -> None:
    with pytest.raises(GpuConceptsError, match=r"two or more positive layer widths; got \(3,\)"):
        plots.mlp_layers((3,))


def test_cnn_weight_sharing_counts_come_from_the_formulas() -> None:
    fig = plots.cnn_weight_sharing(image=4, outputs=3, kernel=3)
    left, right = fig.axes
    assert left.get_title() == "Fully connected: 48 weights"
    assert right.get_title() == "3×3 filter: 9 shared weights"
    assert len(left.lines) == formulas.mlp_weights(d_in=16, d_out=3)
    # 16 pixel squares on each side; the right adds the filter outlined at two positions.
    assert len(left.patches) == 16
    assert len(right.patches) == 18


def test_cnn_weight_sharing_other_sizes() -> None:
    fig = plots.cnn_weight_sharing(image=6, outputs=2, kernel=5)
    assert fig.axes[0].get_title() == "Fully connected: 72 weights"
    assert fig.axes[1].get_title() == "5×5 filter: 25 shared weights"
    with pytest.raises(GpuConceptsError, match="kernel 5 is larger than the image 4"):
        plots.cnn_weight_sharing(image=4, kernel=5)


def test_rnn_unrolled_one_cell_per_word() -> None:
    fig = plots.rnn_unrolled(("I", "love", "AI"))
    labels = texts(fig)
    assert sum(label.startswith("RNN cell") for label in labels) == 3
    assert "“love”\n$x_{2}$" in labels
    assert "$h_{3}$" in labels
    with pytest.raises(GpuConceptsError, match="at least one word"):
        plots.rnn_unrolled(())


def test_attention_heatmap_shows_every_score() -> None:
    tokens = ["The", "cat", "sat"]
    scores = [[0.5, 0.25, 0.25], [0.1, 0.3, 0.6], [0.2, 0.7, 0.1]]
    fig = plots.attention_heatmap(scores, tokens)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == tokens
    assert texts(fig) == ["0.5", "0.25", "0.25", "0.1", "0.3", "0.6", "0.2", "0.7", "0.1"]
    assert ax.get_title() == "3×3 = 9 attention scores"
    drawn = ax.images[0].get_array()
    assert drawn is not None
    assert drawn.shape == (3, 3)


def test_kv_cache_growth_bars_follow_the_formula() -> None:
    tokens = ["The", "cat", "sat", "on"]
    fig = plots.kv_cache_growth(tokens, B=2, d=512, s=2, measured=[4096, 8192, 12288, 16384])
    ax = fig.axes[0]
    heights = [p.get_height() for p in ax.patches if isinstance(p, Rectangle)]
    assert heights == [formulas.kv_cache_memory(B=2, S=n, d=512, s=2) for n in range(1, 5)]
    assert [t.get_text() for t in ax.texts] == ["4 KiB", "8 KiB", "12 KiB", "16 KiB"]
    assert len(ax.lines) == 1  # the measured points
    with pytest.raises(GpuConceptsError, match="measured has 1 values for 4 tokens"):
        plots.kv_cache_growth(tokens, B=2, d=512, s=2, measured=[1.0])


def test_figures_render_to_svg() -> None:
    from io import StringIO

    buffer = StringIO()
    plots.dlrm_pipeline().savefig(buffer, format="svg")
    assert buffer.getvalue().lstrip().startswith("<?xml")


def test_the_books_svg_labels_log_axes_in_plain_text() -> None:
    """svg_text swaps mathtext tick labels for the same text in Unicode (mathtext parsing was
    most of a many-plot page's drawing time); the ticks and their labels stay the same."""
    from gpuconcepts.book import svg_text
    from gpuconcepts.render.style import figure

    fig, (ax,) = figure(4, 3)
    ax.loglog([1e-3, 1e2], [2.0, 3.0])
    fig.canvas.draw()
    before = [t.get_text() for t in ax.get_xticklabels()]
    assert r"$\mathdefault{10^{-3}}$" in before
    svg_text(fig)
    after = [t.get_text() for t in ax.get_xticklabels()]
    assert "10⁻³" in after
    assert "10²" in after
    assert len(after) == len(before)
    assert not any("$" in label for label in after)
    minor = [t.get_text() for t in ax.get_yticklabels(minor=True) if t.get_text()]
    assert minor  # one decade only: the minor ticks are labelled too
    assert not any("$" in label for label in minor)


def _measurements(points: list[tuple[str, float, float]]) -> tuple[Peaks, list[Measurement]]:
    """Measurements at given (workload, intensity, FLOP/s), each from one timed repetition."""
    peaks = Peaks("cpu", 2e11, 4e10, "float32")
    made = [
        Measurement(name, "cpu", {"B": 1}, (1e9 / rate,), 1e9, 1e9 / intensity)
        for name, intensity, rate in points
    ]
    return peaks, made


CROWD = [
    ("mlp", 171.0, 8.0e10),
    ("mlp", 171.0, 8.6e10),
    ("rnn-gemm", 205.0, 7.6e10),
    ("transformer-prefill", 128.0, 6.7e10),
    ("cnn-conv", 142.0, 1.16e11),
    ("dlrm-random", 0.235, 5.2e8),
    ("dlrm-hot", 0.235, 6.9e8),
]


def test_roofline_chart_labels_points_by_name_without_overlap() -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    peaks, made = _measurements(CROWD)
    fig = plots.roofline_chart(peaks, made)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.texts] == [name for name, _, _ in CROWD]
    renderer = FigureCanvasAgg(fig).get_renderer()  # type: ignore[no-untyped-call,unused-ignore]
    fig.draw_without_rendering()
    boxes = [t.get_window_extent(renderer) for t in ax.texts]
    frame = ax.get_window_extent(renderer)
    for one, other in itertools.combinations(boxes, 2):
        assert not one.overlaps(other)
    for box in boxes:
        assert frame.x0 <= box.x0
        assert box.x1 <= frame.x1


def test_roofline_chart_numbered_matches_table_rows_and_names_families() -> None:
    from gpuconcepts.render import measurement_table

    peaks, made = _measurements(CROWD)
    fig = plots.roofline_chart(peaks, made, numbered=True)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.texts] == [str(i) for i in range(1, len(CROWD) + 1)]
    legend_box = ax.get_legend()
    assert legend_box is not None
    legend = [t.get_text() for t in legend_box.get_texts()]
    assert legend[1:] == ["mlp", "rnn", "transformer", "cnn", "dlrm"]  # first seen order
    rows = measurement_table(made, peaks, numbered=True).splitlines()[2:]
    assert [row.split(" | ")[0] for row in rows] == [f"| {i}" for i in range(1, len(CROWD) + 1)]


def test_without_matplotlib_the_error_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(GpuConceptsError) as info:
        plots.mlp_layers()
    assert str(info.value) == (
        "gpuconcepts.render.plots.diagrams.mlp_layers needs matplotlib: pip install gpuconcepts[plots]"
    )


def test_the_roofline_draws_the_overhead_floor_at_a_kernels_intensity() -> None:
    from gpuconcepts.measure import Measurement
    from gpuconcepts.render.plots import plot_roofline
    from gpuconcepts.roofline import Peaks

    peaks = Peaks("cpu", 1e11, 1e10, "float32", latency_seconds=2e-6, op_seconds=1e-6)
    loop = Measurement("rnn-loop", "cpu", {}, (8e-3,), 2e6, 1e5, ops=4096, steps=1024)
    gemm = Measurement("mlp", "cpu", {}, (0.02,), 1e9, 1e6)  # on the compute line: no bar
    fig = plot_roofline(peaks, [loop, gemm])
    (bars,) = [c for c in fig.axes[0].collections if c.get_label().startswith("overhead floor")]
    # one bar, at the loop's intensity and the FLOP/s its overhead floor allows: 2 MFLOP in
    # 4,096 operations at 1 µs each
    assert bars.get_offsets().tolist() == [[20.0, pytest.approx(2e6 / 4096e-6)]]


# -- the book's SVG (book.svg_text lays a figure out once: render/style.laid_out) ---------------
_SVG_ID = re.compile(r'(id="|#)[a-z]?[0-9a-f]{8,}')  # ids hash the clip boxes' last decimals
_SVG_NUMBER = re.compile(r"-?\d+\.?\d*(?:e-?\d+)?")


def _as_savefig_writes_it(fig: Figure) -> str:
    from io import StringIO

    from gpuconcepts.render.style import plain_log_labels

    plain_log_labels(fig)
    buffer = StringIO()
    fig.savefig(
        buffer, format="svg", metadata={"Date": None}, bbox_inches="tight", transparent=True
    )
    return buffer.getvalue()


def _claim_with_an_offset_text() -> Figure:
    """A claim's plot on linear axes in the billions: its y axis has an offset text ("1e9")
    that its long title must clear, so the title is left to move (style._pin_title)."""
    from gpuconcepts.render.plots import draw
    from gpuconcepts.results.plot import PlotSpec, Series

    ys = (2.0e9, 3.5e9, 4.0e9)
    measured = Series("measured", (1.0, 2.0, 3.0), ys, low=ys, high=ys)
    title = (
        "A title long enough to reach over the offset text of the y axis, at its top-left corner"
    )
    spec = PlotSpec(title, "x", "FLOP/s", (measured,), log_x=False, log_y=False)
    fig = draw(spec)
    fig.suptitle("holds · cpu", x=0.99, ha="right", fontsize=8)
    return fig


SWEPT = Peaks(
    "cpu",
    1e11,
    1e10,
    "float32",
    levels=(MemoryLevel("L2", 2**20, 5e10),),
    sweep=((2**16, 6e10), (2**20, 4e10), (2**26, 1e10)),
)
"""Peaks with a cache sweep, which the memory hierarchy draws on log axes."""


def _roofline_with_labels() -> Figure:
    peaks, made = _measurements(CROWD)
    return plots.roofline_chart(peaks, made, numbered=True)


@pytest.mark.parametrize(
    "make",
    [
        _claim_with_an_offset_text,
        _roofline_with_labels,
        plots.cnn_weight_sharing,
        lambda: plots.memory_hierarchy(SWEPT),
    ],
    ids=["claim-offset-text", "roofline", "two-panels", "hierarchy"],
)
def test_the_books_svg_is_the_one_savefig_writes(make) -> None:
    """Laid out once, measured once and drawn once, a figure's SVG is the one
    savefig(bbox_inches="tight") writes after laying it out on every draw: every number
    within 1e-5 (the clip boxes' last decimal), the text and the titles' places the same."""
    from gpuconcepts.book import svg_text

    ours, theirs = (
        _SVG_ID.sub("ID", svg) for svg in (svg_text(make()), _as_savefig_writes_it(make()))
    )
    assert _SVG_NUMBER.sub("N", ours) == _SVG_NUMBER.sub("N", theirs)
    pairs = zip(_SVG_NUMBER.findall(ours), _SVG_NUMBER.findall(theirs), strict=True)
    assert max(abs(float(a) - float(b)) for a, b in pairs) < 1e-5


def test_a_title_is_pinned_only_where_nothing_can_move_it() -> None:
    """Laid out, a title with an offset text beside it still moves to clear it on a later
    draw; one with nothing that could move it is pinned at the top, its font unchanged."""
    from io import StringIO

    from gpuconcepts.render.style import laid_out

    fig = _claim_with_an_offset_text()
    with laid_out(fig):
        pass
    ax = fig.axes[0]
    assert ax.yaxis.offsetText.get_text() == "1e9"
    ax.yaxis.offsetText.set_fontsize(40)  # now it reaches the title
    fig.savefig(StringIO(), format="svg")
    assert ax.title.get_position()[1] > 1.0
    fig = plots.memory_hierarchy(SWEPT)  # log axes: no offset text
    size = fig.axes[0].title.get_fontsize()
    with laid_out(fig):
        pass
    ax = fig.axes[0]
    ax.xaxis.tick_top()  # would move a free title; this one is pinned
    fig.savefig(StringIO(), format="svg")
    assert ax.title.get_position()[1] == 1.0
    assert ax.title.get_fontsize() == size
