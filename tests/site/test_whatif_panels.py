"""The what-if panels in headless Chromium: the numbers are the CLI's, bad input is named, the
GPU moves the verdict where the ridge point says, and the panel works from the keyboard.
"""

from __future__ import annotations

import dataclasses
import io
import json
import random
from contextlib import redirect_stderr, redirect_stdout
from typing import TYPE_CHECKING, Any

import pytest

from gpuconcepts import whatif
from gpuconcepts.claims.judge import profile_of
from gpuconcepts.cli import main
from gpuconcepts.symbols import SYMBOLS

if TYPE_CHECKING:
    from conftest import Browse, Site
    from playwright.sync_api import Browser, Page

    from gpuconcepts.run import Run

pytestmark = pytest.mark.site

PANEL_PAGES = {name: f"{name}.html" for name in whatif.PANELS}

OUTPUTS_JS = """() => [...document.querySelectorAll(".gc-whatif [data-formula]")].map(o => ({
  formula: o.getAttribute("data-formula"), args: o.getAttribute("data-args"),
  value: o.getAttribute("data-value")}))"""


def calc(name: str, args: dict[str, Any]) -> int | float:
    """The value ``gpuconcepts calc NAME SYM=VALUE ... --json`` prints."""
    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(io.StringIO()):
        assert main(["calc", name, *(f"{k}={v!r}" for k, v in args.items()), "--json"]) == 0
    value: int | float = json.loads(out.getvalue())["value"]
    return value


def check_outputs_match_the_cli(page: Page) -> int:
    """Every output's data-value against the CLI for its data-args; returns how many."""
    outputs = page.evaluate(OUTPUTS_JS)
    checked = 0
    for out in outputs:
        if not out["value"]:
            continue
        expected = calc(out["formula"], json.loads(out["args"]))
        where = f"{out['formula']} {out['args']}"
        if isinstance(expected, int):
            assert out["value"] == str(expected), where
        else:
            assert float(out["value"]) == pytest.approx(expected, rel=1e-12, abs=0), where
        checked += 1
    return checked


def panel_text(page: Page) -> str:
    return str(page.inner_text(".gc-whatif"))


def open_panel(browse: Browse, site: Site, name: str) -> tuple[Page, Any]:
    path = PANEL_PAGES[name]
    if path not in site.pages:
        pytest.skip(f"{path} is not in this build")
    page, visit = browse.open(path)
    page.wait_for_selector(".gc-whatif [data-symbol]")
    return page, visit


def test_built_script_is_the_generators_and_small(site: Site):
    built = site.root / "_static" / whatif.FILENAME
    assert built.read_text(encoding="utf-8") == whatif.javascript(), (
        f"{built} differs from gpuconcepts.whatif.javascript(): it must never be edited by hand"
    )
    assert built.stat().st_size < 100_000
    for name, path in PANEL_PAGES.items():
        if path in site.pages:
            html = (site.root / path).read_text(encoding="utf-8")
            assert f'data-panel="{name}"' in html
            assert f"_static/{whatif.FILENAME}" in html


@pytest.mark.parametrize("name", list(whatif.PANELS))
def test_panel_values_are_the_clis_for_defaults_and_random_inputs(browse, site, name):
    page, visit = open_panel(browse, site, name)
    panel = whatif.PANELS[name]
    for symbol, value in panel.defaults().items():
        assert page.input_value(f'[data-symbol="{symbol}"]') == str(value)
    # the ridge point and each workload's roofline time are outputs too
    roofline = 1 + len(panel.workloads) if panel.workloads else 0
    assert check_outputs_match_the_cli(page) >= len(panel.outputs) + roofline
    rng = random.Random(name)
    for _ in range(3):
        for symbol in panel.symbols:
            text = str(rng.choice([1, 3, 64, 1000, 10**9, 7 * 10**19]))
            if not SYMBOLS[symbol].is_count:
                text = rng.choice(["0.5", "1", "2", "4", "1.25"])
            low, _, high, _ = SYMBOLS[symbol].bounds
            if high is not None:  # a ZeRO stage, a probability: a value inside the range
                text = str(rng.randint(int(low), int(high))) if SYMBOLS[symbol].is_count else "0.5"
            page.fill(f'[data-symbol="{symbol}"]', text)
        assert check_outputs_match_the_cli(page) >= len(panel.outputs)
        assert "NaN" not in panel_text(page)
        assert "Infinity" not in panel_text(page)
    assert page.locator(".gc-whatif .gc-error").count() == 0
    assert visit.problems == []


def test_invalid_input_is_named_and_never_nan(browse, site):
    page, visit = open_panel(browse, site, "mlp")  # one load for every case: pages are slow here
    defaults = whatif.PANELS["mlp"].defaults()
    weights = calc("mlp_weights", {k: defaults[k] for k in ("d_in", "d_out")})
    error = page.locator(".gc-whatif .gc-error")
    for text in ["", "-3", "0", "6.5", "abc", "1e10000", "inf"]:
        page.fill('[data-symbol="B"]', text)
        assert error.count() == 1, text
        message = error.inner_text()
        assert message.startswith((
            "missing value for B (batch size)",
            "B (batch size) must be",
            "B (batch size) must have fewer than 10,000 digits",
        ))  # fmt: skip
        assert page.get_attribute('[data-symbol="B"]', "aria-invalid") == "true"
        assert page.get_attribute('[data-formula="mlp_macs"]', "data-value") == ""
        # what does not depend on B still answers
        assert page.get_attribute('[data-formula="mlp_weights"]', "data-value") == str(weights)
        assert "NaN" not in panel_text(page)
        assert "Infinity" not in panel_text(page)
        page.fill('[data-symbol="B"]', str(defaults["B"]))
        assert error.count() == 0
    assert visit.problems == []


def test_huge_and_tiny_entries_are_exact_or_refused_as_the_library_does(browse, site):
    page, visit = open_panel(browse, site, "mlp")
    page.fill('[data-symbol="B"]', "1e400")  # an exact count, as `gpuconcepts calc` reads it
    assert page.get_attribute('[data-formula="mlp_macs"]', "data-value") == str(
        calc("mlp_macs", {"B": 10**400, "d_in": 512, "d_out": 256})
    )
    page.fill('[data-symbol="B"]', "64")
    page.fill('[data-symbol="s"]', "1e-400")  # an intensity no float can hold
    intensity = page.locator('td [data-formula="mlp_intensity"]')
    assert intensity.get_attribute("data-value") == ""
    assert "is beyond what a float can hold" in intensity.inner_text()
    verdict = page.locator('.gc-whatif [data-workload="fully connected layer"]').inner_text()
    assert "no verdict while one of its results is beyond what a float can hold" in verdict
    assert page.locator(".gc-whatif .gc-error").count() == 0
    assert "NaN" not in panel_text(page)
    assert "Infinity" not in panel_text(page)
    assert visit.problems == []


def test_the_gpu_sets_its_memory_peak_and_bandwidth_and_the_fit(browse, site):
    """On the model page the GPU sets M_dev, P and beta; the fit follows the memory."""
    page, visit = open_panel(browse, site, "model")
    for gpu in ("T4", "H200", "H100 SXM"):
        page.select_option('[data-control="gpu"]', gpu)
        spec = whatif.GPUS[gpu]
        dtype = page.input_value('[data-control="dtype"]')
        assert page.input_value('[data-symbol="M_dev"]') == str(spec.memory_bytes)
        assert float(page.input_value('[data-symbol="beta"]')) == spec.bytes_per_s
        assert float(page.input_value('[data-symbol="P"]')) == spec.flops_per_s[dtype]
        need = float(
            page.get_attribute('td [data-formula="decode_step_bytes"]', "data-value") or ""
        )
        fits = page.get_attribute("[data-limit] .gc-verdict", "data-fits")
        assert fits == ("yes" if need <= spec.memory_bytes else "no"), gpu
        assert check_outputs_match_the_cli(page) > 0
    assert visit.problems == []


def test_switching_the_gpu_moves_the_verdict_with_the_ridge_point(browse, site):
    page, visit = open_panel(browse, site, "roofline")
    verdicts = set()
    gpus = page.eval_on_selector_all('[data-control="gpu"] option', "os => os.map(o => o.value)")
    for gpu in gpus:
        page.select_option('[data-control="gpu"]', gpu)
        dtypes = page.eval_on_selector_all(
            '[data-control="dtype"] option', "os => os.map(o => o.value)"
        )
        for dtype in dtypes:
            page.select_option('[data-control="dtype"]', dtype)
            # choosing a data type sets s to its width (the reader may still type another)
            assert page.input_value('[data-symbol="s"]') == str(whatif.DTYPE_BYTES[dtype])
            ridge = float(page.get_attribute('[data-formula="ridge_point"]', "data-value") or "")
            intensity = float(
                page.get_attribute('td [data-formula="mlp_intensity"]', "data-value") or ""
            )
            verdict = page.get_attribute(".gc-verdict", "data-bound")
            assert verdict == ("memory" if intensity < ridge else "compute"), (gpu, dtype)
            verdicts.add(verdict)
            # the chart's ridge line sits where the ridge point is, left of a compute-bound point
            dot = page.get_attribute(".gc-point", "data-intensity")
            assert float(dot or "") == pytest.approx(intensity)
    assert verdicts == {"memory", "compute"}, "the datasheet should hold GPUs on both sides"
    before = page.get_attribute(".gc-point", "cx")
    page.fill('[data-symbol="B"]', "1")
    assert page.get_attribute(".gc-point", "cx") != before
    assert page.get_attribute(".gc-verdict", "data-bound") == "memory"
    assert visit.problems == []


def test_keyboard_alone_and_labels(browse, site):
    page, visit = open_panel(browse, site, "transformer")
    controls = page.eval_on_selector_all(
        ".gc-whatif input, .gc-whatif select",
        """els => els.map(e => ({
            key: e.getAttribute("data-symbol") || e.getAttribute("data-control"),
            labels: e.labels.length, label: e.labels.length ? e.labels[0].textContent : ""}))""",
    )
    assert [c["key"] for c in controls] == [*whatif.PANELS["transformer"].symbols, "gpu", "dtype"]
    assert all(c["labels"] == 1 and c["label"].strip() for c in controls)
    page.focus('[data-symbol="S"]')
    order = []
    for _ in controls:
        order.append(
            page.evaluate(
                "() => document.activeElement.getAttribute('data-symbol')"
                " || document.activeElement.getAttribute('data-control')"
            )
        )
        page.keyboard.press("Tab")
    assert order == [c["key"] for c in controls]
    page.focus('[data-symbol="S"]')
    page.keyboard.press("Control+A")
    page.keyboard.type("2000")
    assert page.get_attribute('[data-formula="attention_scores"]', "data-value") == str(
        calc("attention_scores", {"S": 2000})
    )
    page.focus('[data-control="gpu"]')
    before = page.get_attribute('[data-formula="ridge_point"]', "data-value")
    page.keyboard.press("ArrowDown")
    assert page.get_attribute('[data-formula="ridge_point"]', "data-value") != before
    assert visit.problems == []


def test_derivations_are_typeset_again_after_a_change(browse, site):
    page, visit = open_panel(browse, site, "mlp")
    assert browse.wait_for_math(page)
    page.fill('[data-symbol="B"]', "128")
    page.wait_for_function(
        """() => [...document.querySelectorAll(".gc-worked")].every(
            w => w.querySelector("mjx-container") && !w.textContent.includes("\\\\["))"""
    )
    tex = page.evaluate(
        """() => MathJax.startup.document.getMathItemsWithin(
            document.querySelector('[data-worked="mlp_macs"]')).map(m => m.math).join("")"""
    )
    assert "= 128 \\times 512 \\times 256 =" in tex
    assert page.locator(".gc-whatif mjx-merror").count() == 0
    assert visit.problems == []


MEASURED = "this build's measured peaks"


def hand_made_page(browser: Browser, run: Run | None) -> tuple[Page, list[str]]:
    """The roofline panel alone on a page, with ``run``'s island before it (or none)."""
    page = browser.new_page()
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    island = whatif.run_html(run) if run is not None else ""
    page.set_content(
        f"<!doctype html><html><body>{island}{whatif.panel_html('roofline')}"
        f"<script>{whatif.javascript()}</script></body></html>"
    )
    page.wait_for_selector(".gc-whatif [data-symbol]")
    return page, problems


def measured_peaks_and_points(page: Page) -> tuple[float, float, list[dict[str, str]]]:
    """The ridge point and mlp_intensity the panel shows, and its measured marks."""
    ridge = float(page.get_attribute('[data-formula="ridge_point"]', "data-value") or "")
    intensity = float(page.get_attribute('td [data-formula="mlp_intensity"]', "data-value") or "")
    marks = page.eval_on_selector_all(
        ".gc-chart .gc-measured",
        """ms => ms.map(m => ({workload: m.getAttribute("data-workload"),
                              intensity: m.getAttribute("data-intensity")}))""",
    )
    return ridge, intensity, marks


def test_measured_peaks_are_a_choice_and_move_the_verdict_with_their_ridge(browser):
    from synthetic import synthetic_run

    from gpuconcepts.roofline import Peaks

    base = synthetic_run()  # peaks 1e11 FLOP/s and 1e10 B/s: a ridge of 10 FLOP/byte
    slow_memory = dataclasses.replace(base, peaks=Peaks("cpu", 1e11, 1e8, "float32"))
    profile = profile_of(base)
    verdicts = {}
    for run in (base, slow_memory):
        page, problems = hand_made_page(browser, run)
        options = page.eval_on_selector_all(
            '[data-control="gpu"] option', "os => os.map(o => [o.value, o.textContent])"
        )
        assert [MEASURED, f"{MEASURED} ({run.provenance.device_name})"] in options
        # the Run's kernels are on the chart whatever roofs are chosen
        assert len(measured_peaks_and_points(page)[2]) == len(profile)
        page.select_option('[data-control="gpu"]', MEASURED)
        dtypes = page.eval_on_selector_all(
            '[data-control="dtype"] option', "os => os.map(o => o.value)"
        )
        assert dtypes == ["fp32"]
        ridge, intensity, marks = measured_peaks_and_points(page)
        assert ridge == pytest.approx(run.peaks.ridge_point, rel=1e-12)
        assert [m["workload"] for m in marks] == [m.workload for m in profile]
        assert [float(m["intensity"]) for m in marks] == [m.intensity for m in profile]
        verdict = page.get_attribute(".gc-verdict", "data-bound")
        assert verdict == ("memory" if intensity < ridge else "compute")
        verdicts[run.peaks.ridge_point] = verdict
        assert "measured on cpu (Example CPU, 2 threads)" in page.inner_text(".gc-bound")
        assert problems == []
        page.close()
    # the default layer (about 327 FLOP/byte) is right of a ridge of 10, left of one of 1000
    assert verdicts == {10.0: "compute", 1000.0: "memory"}


def test_without_a_run_the_panel_offers_only_the_datasheet(browser):
    page, problems = hand_made_page(browser, None)
    gpus = page.eval_on_selector_all('[data-control="gpu"] option', "os => os.map(o => o.value)")
    assert MEASURED not in gpus
    assert gpus == [g["name"] for g in whatif.data()["gpus"]]
    assert page.locator(".gc-chart .gc-measured").count() == 0
    assert page.locator(".gc-chart .gc-point").count() == 1
    assert problems == []
    page.close()


def test_the_roofline_page_carries_its_builds_run(browse, site):
    page, visit = open_panel(browse, site, "roofline")
    island = json.loads(
        page.evaluate("() => document.querySelector('script.gc-run-data')?.textContent ?? 'null'")
    )
    assert island is not None, "the roofline page must carry this build's Run"
    assert page.locator(".gc-chart .gc-measured").count() == len(island["points"]) > 0
    page.select_option('[data-control="gpu"]', MEASURED)
    ridge, intensity, _ = measured_peaks_and_points(page)
    assert ridge == pytest.approx(island["ridge_point"], rel=1e-12)
    assert page.get_attribute(".gc-verdict", "data-bound") == (
        "memory" if intensity < ridge else "compute"
    )
    assert visit.problems == []
