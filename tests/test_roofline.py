"""gpuconcepts.roofline: classification, prediction and the plot."""

from __future__ import annotations

import io

import pytest

from gpuconcepts import formulas, roofline
from gpuconcepts.hardware import GPUS
from gpuconcepts.measure import Measurement
from gpuconcepts.roofline import Peaks

PEAKS = Peaks(device="cpu", flops_per_s=2e11, bytes_per_s=4e10, dtype="float32")


def test_ridge_and_classification() -> None:
    assert roofline.ridge(2e11, 4e10) == 5.0
    assert roofline.classify(4.99, PEAKS) == "memory"
    assert roofline.classify(5.0, PEAKS) == "compute"
    assert roofline.classify(500, PEAKS) == "compute"


@pytest.mark.parametrize(("flops", "nbytes"), [(1e9, 1e9), (1e12, 1e6), (5.0, 1.0)])
def test_predicted_seconds_is_the_formula(flops: float, nbytes: float) -> None:
    expected = float(formulas.roofline_seconds(F=flops, Q=nbytes, P=2e11, beta=4e10))
    assert roofline.predicted_seconds(flops, nbytes, PEAKS) == expected
    assert expected == max(flops / 2e11, nbytes / 4e10)


def test_attainable_is_min_of_roof_and_slope() -> None:
    assert roofline.attainable(1.0, PEAKS) == 4e10
    assert roofline.attainable(100.0, PEAKS) == 2e11


def _measurements() -> list[Measurement]:
    return [
        Measurement("dlrm-random", "cpu", {}, (1e-3,), 1e6, 4e6),
        Measurement("mlp", "cpu", {}, (2e-2,), 2e9, 1e7),
        Measurement("transformer-decode", "cpu", {}, (1e-3,), 1e6, 2e6),
    ]


def test_plot_roofline_draws_ceilings_and_labelled_points() -> None:
    pytest.importorskip("matplotlib")
    fig = roofline.plot_roofline(PEAKS, _measurements())
    (ax,) = fig.axes
    labels = [text.get_text() for text in ax.texts]
    assert labels == ["dlrm-random", "mlp", "transformer-decode"]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["measured roof (float32): ridge 5 FLOP/B"]
    assert ax.get_xscale() == "log"
    assert ax.get_yscale() == "log"
    # the roof is flat at the peak on the right of the ridge
    roof = ax.get_lines()[0]
    assert max(roof.get_ydata()) == pytest.approx(2e11)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    assert buffer.getvalue()[:4] == b"\x89PNG"


def test_plot_roofline_adds_the_datasheet_ceiling() -> None:
    pytest.importorskip("matplotlib")
    gpu_peaks = Peaks(device="cuda", flops_per_s=7e14, bytes_per_s=4e12, dtype="bfloat16")
    fig = roofline.plot_roofline(gpu_peaks, [], datasheet=GPUS["H200"])
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert legend[1] == "H200 datasheet (bfloat16): ridge 206 FLOP/B"
    sheet = fig.axes[0].get_lines()[1]
    assert max(sheet.get_ydata()) == pytest.approx(989e12)


def test_plot_roofline_skips_a_datasheet_without_the_dtype() -> None:
    pytest.importorskip("matplotlib")
    gpu_peaks = Peaks(device="cuda", flops_per_s=5e13, bytes_per_s=3e11, dtype="bfloat16")
    fig = roofline.plot_roofline(gpu_peaks, [], datasheet=GPUS["T4"])
    assert len(fig.axes[0].get_legend().get_texts()) == 1


def test_plot_roofline_into_given_axes() -> None:
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    fig = Figure()
    ax = fig.add_subplot()
    assert roofline.plot_roofline(PEAKS, _measurements(), ax=ax) is fig
