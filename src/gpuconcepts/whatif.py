r"""The book's live "what if?" panels: the formulas, symbols and datasheet as JavaScript.

Each chapter carries a panel where the reader changes the sizes or the GPU and watches the
formulas, the worked derivation and the roofline verdict move. Nothing in that JavaScript is
typed by hand for a formula: :func:`javascript` prints every formula of the catalogue from its
sympy expression (exact rational arithmetic on ``BigInt``, so whole results stay exact at any
size), together with the symbols' meaning, unit and domain, the datasheet table and the
panels' defaults, in front of a small hand-written runtime (``whatif_runtime.js``: parsing,
validation, number formatting and the page's DOM). The docs build writes the result into
``_static``; it is never committed, so it cannot drift from the formulas.

The formulas' printers live in :mod:`gpuconcepts.whatif_js` and the panels in
:mod:`gpuconcepts.whatif_panels`; this module writes the script and a page's placeholders.

>>> panel_html("mlp")[:42]
'<div class="gc-whatif" data-panel="mlp"><n'
"""

from __future__ import annotations

import json
import math
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from gpuconcepts.claims.judge import profile_of
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.formula import Formula
from gpuconcepts.formulas import CATALOGUE
from gpuconcepts.hardware import DEFAULT_GPU, DTYPE_BYTES, DTYPES, GPUS, TORCH_DTYPES
from gpuconcepts.symbols import SYMBOLS, Symbol
from gpuconcepts.whatif_js import case_js, formula_js, params_in_order, worked_templates
from gpuconcepts.whatif_panels import GPU_SYMBOLS, PANELS, default_dtype

if TYPE_CHECKING:
    from gpuconcepts.run import Run

FILENAME = "gpuconcepts-whatif.js"
RUN_DATA_CLASS = "gc-run-data"
"""The class of the ``<script type="application/json">`` that carries a page's Run."""
"""The generated script's name under the build's ``_static``."""

ROOFLINE_FORMULAS = ("ridge_point", "roofline_seconds", "attainable_flops")
"""The catalogue's roofline formulas, which every panel evaluates for the chosen GPU."""


# -- the generated script ---------------------------------------------------------------------
def _exported() -> list[Formula]:
    """The formulas the script carries: every one a panel shows, and the roofline's."""
    names = {n for p in PANELS.values() for n in p.outputs} | set(ROOFLINE_FORMULAS)
    names |= {n for p in PANELS.values() for w in p.workloads for n in (w.flops, w.bytes)}
    return [f for f in CATALOGUE.values() if f.name in names]


def _range(symbol: Symbol) -> dict[str, str | bool | None]:
    """A symbol's bounds as the runtime checks them (``Symbol.allows``)."""
    low, low_allowed, high, high_allowed = symbol.bounds
    return {
        "low": str(low),
        "lowAllowed": low_allowed,
        "high": None if high is None else str(high),
        "highAllowed": high_allowed,
    }


def data() -> dict[str, Any]:
    """Everything the runtime needs besides the formulas' code, as JSON-ready values."""
    return {
        "symbols": {
            s.name: {
                "meaning": s.meaning,
                "unit": s.unit,
                "domain": s.domain,
                "count": s.is_count,
                "latex": s.latex(),
                "rule": s.rule,
                "range": _range(s),
            }
            for s in SYMBOLS.values()
        },
        "formulas": {
            f.name: {
                "kind": f.kind,
                "summary": f.summary,
                "params": params_in_order(f),
                "lhs": f.lhs,
                "equation": f.equation(),
                "worked": worked_templates(f),
            }
            for f in _exported()
        },
        "gpus": [
            {
                "name": g.name,
                "flops_per_s": dict(g.flops_per_s),
                "bytes_per_s": g.bytes_per_s,
                "memory_bytes": g.memory_bytes,
            }
            for g in GPUS.values()
        ],
        "dtypes": DTYPE_BYTES,
        "default_gpu": DEFAULT_GPU,
        "gpu_symbols": GPU_SYMBOLS,
        "panels": {
            name: {
                "title": p.title,
                "symbols": list(p.symbols),
                "defaults": {k: str(v) for k, v in p.defaults().items()},
                "dtype": default_dtype(p.defaults().get("s", DTYPE_BYTES[DTYPES[0]])),
                "outputs": list(p.outputs),
                "workloads": [w.__dict__ for w in p.workloads],
                "limits": [limit.__dict__ for limit in p.limits],
                "chart": p.chart,
            }
            for name, p in PANELS.items()
        },
    }


@cache
def runtime() -> str:
    """The hand-written part: rational arithmetic, parsing, formatting and the panel's DOM."""
    return resources.files("gpuconcepts").joinpath("whatif_runtime.js").read_text("utf-8")


def javascript() -> str:
    """The whole script a page with a panel loads (generated data and code, then the runtime)."""
    code = ",\n".join(f"  {json.dumps(f.name)}: {formula_js(f)}" for f in _exported())
    cases = ",\n".join(
        f"  {json.dumps(f.name)}: {js}" for f in _exported() if (js := case_js(f)) is not None
    )
    payload = json.dumps(data(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return (
        "// Generated by gpuconcepts.whatif.javascript() at docs build time. Do not edit:\n"
        "// every formula below is printed from its sympy expression in gpuconcepts.formulas.\n"
        "(function () {\n"
        '"use strict";\n'
        f"const DATA = {payload};\n"
        f"const FORMULAS = (R) => ({{\n{code}\n}});\n"
        f"const CASES = (R) => ({{\n{cases}\n}});\n"
        f"{runtime()}"
        "})();\n"
    )


def panel_html(name: str) -> str:
    """The placeholder a page carries; the script fills it in (the panel needs JavaScript)."""
    if name not in PANELS:
        known = ", ".join(PANELS)
        raise GpuConceptsError(f"unknown what-if panel {name!r}; the panels are {known}")
    return (
        f'<div class="gc-whatif" data-panel="{name}">'
        f"<noscript><p>This what-if panel needs JavaScript.</p></noscript></div>"
    )


# -- this build's Run, for the roofline panel -------------------------------------------------
def run_data(run: Run) -> dict[str, Any]:
    """A Run's measured peaks and its profile's points, as the roofline panel reads them.

    The dtype is named as the datasheet names it (``float32`` is ``fp32``), so the panel can
    set the element width from it. Only kernels with a finite intensity and rate are kept.
    """
    peaks = run.peaks
    points = [
        {"workload": m.workload, "intensity": m.intensity, "flops_per_s": m.flops_per_s}
        for m in profile_of(run)
        if math.isfinite(m.intensity) and math.isfinite(m.flops_per_s)
    ]
    return {
        "label": run.provenance.device_name,
        "dtype": TORCH_DTYPES.get(peaks.dtype, peaks.dtype),
        "flops_per_s": peaks.flops_per_s,
        "bytes_per_s": peaks.bytes_per_s,
        "ridge_point": peaks.ridge_point,
        "points": points,
    }


def run_html(run: Run) -> str:
    """The JSON island a page with the roofline panel carries: :func:`run_data` of ``run``."""
    payload = json.dumps(run_data(run), sort_keys=True, allow_nan=False, ensure_ascii=False)
    payload = payload.replace("</", "<\\/")  # a workload name can never close the script
    return f'<script type="application/json" class="{RUN_DATA_CLASS}">{payload}</script>'
