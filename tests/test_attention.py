"""Attention prefill's one traffic model (gpuconcepts.attention): the minimal traffic as the
bound, the tiled kernel's as what it moves, L2 as what closes the gap; and every page, exercise
and panel that places prefill on a roofline reads it."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from gpuconcepts import whatif
from gpuconcepts.attention import TILE_ROWS, Prefill
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.hardware import GPU, GPUS
from gpuconcepts.units import MiB

DOCS = Path(__file__).resolve().parents[1] / "docs"


@pytest.mark.parametrize("S", [64, 128, 129, 1000, 8192, 100_000])
def test_intensities_are_the_closed_forms(S: int) -> None:
    p = Prefill(B=2, S=S, d=512, d_head=64, s=2)
    flops = 4 * 2 * S * S * 512
    assert p.minimal_intensity == pytest.approx(flops / (4 * 2 * S * 512 * 2))  # S / s
    tiles = math.ceil(S / TILE_ROWS)
    assert p.tiled_intensity == pytest.approx(flops / (2 * 2 * S * 512 * 2 * (1 + tiles)))
    assert p.tiled_intensity <= p.minimal_intensity  # the minimal traffic is the bound
    assert p.tiled_limit == 2 * TILE_ROWS / 2


def test_one_tile_is_the_minimal_traffic() -> None:
    p = Prefill(B=1, S=TILE_ROWS, d=256, d_head=64, s=4)
    assert p.tiled_intensity == p.minimal_intensity == TILE_ROWS / 4


def test_compute_bound_lengths_on_an_h100() -> None:
    h100 = GPUS["H100 SXM"]
    ridge = h100.flops_per_s["bf16"] / h100.bytes_per_s
    bound, tiled = Prefill(B=1, S=1, d=4096, d_head=128, s=2).compute_bound_from(h100, "bf16")
    assert bound == math.ceil(ridge * 2)  # S / s >= ridge
    assert tiled is None  # 2 * 128 / 2 = 128 FLOP/byte < 295: not from HBM at any length


def test_a_low_ridge_is_reached_by_the_tiled_kernel_too() -> None:
    slow = GPU("slow", {"fp16": 100e12}, 2e12, 40 * MiB, 80 * 10**9, "made up")  # ridge 50
    bound, tiled = Prefill(B=1, S=1, d=512, d_head=64, s=2).compute_bound_from(slow, "fp16")
    assert bound == 100
    # 2S / (2 (1 + ceil(S/128))) >= 50 first at S = 6400 (51 tiles: 6400 / 51 > 50 > 6399 / 51)
    assert tiled == next(S for S in range(1, 10**5) if S / (1 + math.ceil(S / 128)) >= 50)


def test_one_heads_keys_and_values_against_l2() -> None:
    p = Prefill(B=1, S=8192, d=4096, d_head=128, s=2)
    assert p.head_kv_bytes == 2 * 8192 * 128 * 2 == 4 * MiB
    assert p.head_fits_l2(GPUS["H100 SXM"])
    assert not Prefill(B=1, S=16384, d=4096, d_head=128, s=2).head_fits_l2(GPUS["T4"])


def test_a_head_width_that_does_not_divide_the_width_is_named() -> None:
    with pytest.raises(
        GpuConceptsError, match=r"d_head \(head width\) must divide d \(512\); got 96"
    ):
        Prefill(B=1, S=8, d=512, d_head=96, s=2)


def test_the_transformer_panel_shows_the_bound_and_the_tiled_kernel() -> None:
    panel = whatif.PANELS["transformer"]
    traffic = {w.bytes: w.label for w in panel.workloads}
    assert "the bound" in traffic["attention_bytes"]
    assert "tiled" in traffic["attention_tiled_bytes"]
    assert panel.defaults()["S_tile"] == TILE_ROWS


@pytest.mark.parametrize("page", ["hardware", "transformer"])
def test_pages_place_prefill_with_the_one_model(page: str) -> None:
    """No page classifies prefill by the minimal traffic alone: it reads gpuconcepts.attention
    (in the page's own modules of gpuconcepts.render.pages, which compute what it shows)."""
    pages = DOCS.parent / "src" / "gpuconcepts" / "render" / "pages"
    modules = sorted(pages.glob(f"{page}.py")) + sorted(pages.glob(f"{page}_*.py"))
    text = (DOCS / f"{page}.md").read_text(encoding="utf-8") + "".join(
        module.read_text(encoding="utf-8") for module in modules
    )
    assert "from gpuconcepts.attention import" in text
    assert not re.search(r"attention_intensity\.reaches\(", text)
    if page == "hardware":
        assert "minimal traffic: the bound" in text
        assert "-row tiles, K and V from HBM" in text
        assert "formulas.attention_intensity(" not in text
