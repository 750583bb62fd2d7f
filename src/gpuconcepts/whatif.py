r"""The book's live "what if?" panels: the formulas, symbols and datasheet as JavaScript.

Each chapter carries a panel where the reader changes the sizes or the GPU and watches the
formulas, the worked derivation and the roofline verdict move. Nothing in that JavaScript is
typed by hand for a formula: :func:`javascript` prints every formula of the catalogue from its
sympy expression (exact rational arithmetic on ``BigInt``, so whole results stay exact at any
size), together with the symbols' meaning, unit and domain, the datasheet table and the
panels' defaults, in front of a small hand-written runtime (``whatif_runtime.js``: parsing,
validation, number formatting and the page's DOM). The docs build writes the result into
``_static``; it is never committed, so it cannot drift from the formulas.

>>> from gpuconcepts.formulas import mlp_macs, mlp_intensity
>>> formula_js(mlp_macs)
'(v) => R.mul(v["B"], v["d_in"], v["d_out"])'
>>> worked_template(mlp_macs)
'B d_{in} d_{out} = @B@ \\times @d_in@ \\times @d_out@'
>>> PANELS["mlp"].defaults()
{'B': 64, 'd_in': 512, 'd_out': 256, 's': 4}
>>> PANELS["roofline"].defaults()
{'B': 512, 'd_in': 4096, 'd_out': 1024, 's': 2}
>>> default_dtype(4), default_dtype(2)
('fp32', 'fp16')
"""

from __future__ import annotations

import ast
import doctest
import json
import math
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

import sympy as sp
from sympy.printing.printer import Printer

from gpuconcepts.claims.judge import profile_of
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.expressions import NumberPrinter, expr_latex  # Formula.worked's printers
from gpuconcepts.formula import Formula, Number
from gpuconcepts.formulas import CATALOGUE, get
from gpuconcepts.hardware import DEFAULT_GPU, DTYPE_BYTES, DTYPES, GPUS, TORCH_DTYPES
from gpuconcepts.questions import question
from gpuconcepts.symbols import SYMBOLS, Symbol

if TYPE_CHECKING:
    from gpuconcepts.run import Run

FILENAME = "gpuconcepts-whatif.js"
RUN_DATA_CLASS = "gc-run-data"
"""The class of the ``<script type="application/json">`` that carries a page's Run."""
"""The generated script's name under the build's ``_static``."""

ROOFLINE_FORMULAS = ("ridge_point", "roofline_seconds", "attainable_flops")
"""The catalogue's roofline formulas, which every panel evaluates for the chosen GPU."""

GPU_SYMBOLS: dict[str, str] = {
    "P": "its dense peak in the chosen dtype",
    "beta": "its memory bandwidth",
    "M_dev": "its memory",
}
"""Symbols a panel's GPU and dtype choice sets (still editable), with what they take from it."""


# -- formulas as JavaScript -------------------------------------------------------------------
class _RationalJS(Printer):  # type: ignore[misc]
    """Print a sympy expression as calls into the runtime's exact rational arithmetic ``R``."""

    printmethod = "_gpuconcepts_js"

    def _print_Symbol(self, expr: sp.Symbol) -> str:
        return f"v[{json.dumps(expr.name)}]"

    def _print_Integer(self, expr: sp.Integer) -> str:
        return f'R.int("{int(expr)}")'

    def _print_Rational(self, expr: sp.Rational) -> str:
        return f'R.frac("{expr.p}", "{expr.q}")'

    def _args(self, expr: sp.Expr) -> str:
        return ", ".join(self._print(arg) for arg in expr.args)

    def _print_Mul(self, expr: sp.Mul) -> str:
        return f"R.mul({self._args(expr)})"

    def _print_Add(self, expr: sp.Add) -> str:
        return f"R.add({self._args(expr)})"

    def _print_Max(self, expr: sp.Max) -> str:
        return f"R.max({self._args(expr)})"

    def _print_Min(self, expr: sp.Min) -> str:
        return f"R.min({self._args(expr)})"

    def _print_floor(self, expr: sp.floor) -> str:
        return f"R.floor({self._print(expr.args[0])})"

    def _print_ceiling(self, expr: sp.ceiling) -> str:
        return f"R.ceil({self._print(expr.args[0])})"

    def _print_Equality(self, expr: sp.Eq) -> str:
        return f"(R.cmp({self._print(expr.lhs)}, {self._print(expr.rhs)}) === 0)"

    def _print_BooleanTrue(self, _expr: object) -> str:
        return "true"

    def _print_Piecewise(self, expr: sp.Piecewise) -> str:
        # R.cases(cond, value-thunk, cond, value-thunk, ...): the first case that holds, as
        # Formula._case picks it; every value is a thunk, so only the chosen case is computed.
        cases = ", ".join(f"{self._print(c)}, () => {self._print(e)}" for e, c in expr.args)
        return f"R.cases({cases})"

    def _print_Pow(self, expr: sp.Pow) -> str:
        if not expr.exp.is_Integer:
            raise GpuConceptsError(
                f"no exact JavaScript for the power {expr}: only whole exponents"
            )
        base, exponent = self._print(expr.base), int(expr.exp)
        power = f"R.pow({base}, {abs(exponent)})" if abs(exponent) != 1 else base
        return f"R.inv({power})" if exponent < 0 else power

    def emptyPrinter(self, expr: object) -> str:  # sympy's name for the fallback
        raise GpuConceptsError(f"no exact JavaScript for {type(expr).__name__}: {expr}")


def formula_js(formula: Formula) -> str:
    """A JavaScript arrow function of the symbol values (runtime rationals) for ``formula``.

    Floors, maxima and piecewise formulas (one case per ZeRO stage) stay exact:

    >>> from gpuconcepts.formulas import pipeline_bubble_fraction_interleaved
    >>> formula_js(pipeline_bubble_fraction_interleaved)
    '(v) => R.mul(R.add(v["p"], R.int("-1")), R.inv(R.mul(v["v"], v["m"])))'
    >>> formula_js(get("zero_memory_per_device"))[:53]
    '(v) => R.cases((R.cmp(v["stage"], R.int("0")) === 0),'
    """
    return f"(v) => {_RationalJS().doprint(formula.expr)}"


def case_js(formula: Formula) -> str | None:
    """For a piecewise formula, a function giving the index of the case the values select."""
    if not isinstance(formula.expr, sp.Piecewise):
        return None
    printer = _RationalJS()
    conditions = ", ".join(printer.doprint(c) for _, c in formula.expr.args)
    return f"(v) => [{conditions}].indexOf(true)"


def _params(formula: Formula) -> list[str]:
    """The formula's symbols in the table's order (the same in every run)."""
    return [name for name in SYMBOLS if name in formula.params]


def worked_template(formula: Formula) -> str:
    """``formula.worked()`` up to its result, with ``@NAME@`` where each value goes.

    The same printer as the Python derivation is used, with each symbol replaced by a
    placeholder symbol, so the JavaScript only has to write the numbers into the slots.
    Max and Min sort their arguments by value, so their slots may come in another order
    than Python's: the runtime shows the same numbers, possibly swapped.
    """
    return _template(formula, formula.expr, formula.latex())


def worked_templates(formula: Formula) -> list[str]:
    r"""The worked templates of every case of a piecewise formula, in order; else the one.

    ``Formula.worked`` shows only the case the values select, so the panel does too.

    >>> print(worked_templates(get("zero_memory_per_device"))[1].split(" = ")[0])
    4 n_{params} + \frac{k_{opt} n_{params}}{N_{d}}
    """
    if not isinstance(formula.expr, sp.Piecewise):
        return [worked_template(formula)]
    return [_template(formula, e, expr_latex(e)) for e, _ in formula.expr.args]


def _template(formula: Formula, expr: sp.Expr, latex: str) -> str:
    # Slots named after the symbols' fixed order: sympy sorts Max and Min arguments by name,
    # and Formula.params follows the set order of those arguments, which varies between runs.
    # Two capital letters each (AA, AB, ...): one letter past Z would be "[", "_" or "^",
    # which the LaTeX printer reads as a subscript or a power. A closing Z keeps the pair from
    # ending the name in one of the printer's modifiers ("BM" would print as \boldsymbol).
    order = list(SYMBOLS)

    def slot_of(name: str) -> sp.Symbol:
        high, low = divmod(order.index(name), 26)
        return sp.Symbol(f"GCSLOT{chr(ord('A') + high)}{chr(ord('A') + low)}Z")

    slots = {name: slot_of(name) for name in _params(formula)}
    with sp.evaluate(False):
        filled = expr.xreplace({SYMBOLS[k].sym: slot for k, slot in slots.items()})
    text = str(NumberPrinter().doprint(filled))
    for name, slot in slots.items():
        text = text.replace(slot.name, f"@{name}@")
    return f"{latex} = {text}"


# -- panels -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Point:
    """A kernel a panel places on the roofline: its FLOPs, bytes and intensity formulas (a
    point of the panel's chart, not a measured workload of :mod:`gpuconcepts.workloads`)."""

    label: str
    flops: str
    bytes: str
    intensity: str


@dataclass(frozen=True)
class Limit:
    """A result a panel compares with a limit the chosen GPU sets: weights and caches against
    its memory (``M_dev``)."""

    label: str
    formula: str
    symbol: str


@dataclass(frozen=True)
class Panel:
    """One chapter's what-if panel.

    Attributes:
        title: the panel's heading.
        outputs: the formulas shown, in order; their symbols are the panel's inputs.
        workloads: what the panel places on the chosen GPU's roofline.
        questions: the post's worked questions whose inputs are the defaults (first wins).
        examples: formulas whose doctest example fills the symbols still without a default.
        chart: whether to draw the roofline chart.
        limits: results compared with what the GPU holds (its memory).

    A symbol of :data:`GPU_SYMBOLS` starts at the default GPU's datasheet value, in the dtype
    of the default element width ``s``, and follows the GPU and dtype the reader picks.
    """

    title: str
    outputs: tuple[str, ...]
    workloads: tuple[Point, ...]
    questions: tuple[int, ...] = ()
    examples: tuple[str, ...] = ()
    chart: bool = False
    limits: tuple[Limit, ...] = ()

    @property
    def symbols(self) -> tuple[str, ...]:
        """The inputs: every symbol of the outputs, in the order they first appear."""
        names = (p for name in self.outputs for p in get(name).params)
        return tuple(dict.fromkeys(names))

    def defaults(self) -> dict[str, Number]:
        """The post's values: its worked questions first, then the formulas' doctest examples."""
        values: dict[str, Number] = {}
        for number in self.questions:
            for step in question(number).steps:
                for name, value in step.inputs:
                    values.setdefault(name, value)
        for name in self.examples:
            for symbol, example in doctest_example(get(name)).items():
                values.setdefault(symbol, example)
        gpu = GPUS[DEFAULT_GPU]
        dtype = default_dtype(values.get("s", DTYPE_BYTES[DTYPES[0]]))
        from_gpu: dict[str, Number] = {
            "P": gpu.flops_per_s[dtype],
            "beta": gpu.bytes_per_s,
            "M_dev": gpu.memory_bytes,
        }
        values.update({k: v for k, v in from_gpu.items() if k in self.symbols})
        missing = [s for s in self.symbols if s not in values]
        if missing:
            raise GpuConceptsError(f"{self.title}: no default for {', '.join(missing)}")
        return {s: values[s] for s in self.symbols}


def doctest_example(formula: Formula) -> dict[str, Number]:
    """The keyword values of the first call of ``formula`` in its docstring's examples.

    >>> doctest_example(get("conv_bytes"))
    {'B': 1, 'H_out': 32, 'W_out': 32, 'K': 3, 'C_in': 16, 'C_out': 32, 's': 4}
    """
    for example in doctest.DocTestParser().get_examples(formula.__doc__ or ""):
        for node in ast.walk(ast.parse(example.source)):
            if isinstance(node, ast.Call) and _calls(node.func, formula.name):
                try:  # a call inside a loop (stage=z) is not an example of values
                    return {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg}
                except ValueError:
                    continue
    raise GpuConceptsError(f"{formula.name}: its docstring has no example call")


def _calls(func: ast.expr, name: str) -> bool:
    """Whether ``func`` is the formula ``name`` or its worked derivation (``name.worked``)."""
    if isinstance(func, ast.Attribute) and func.attr == "worked":
        func = func.value
    return isinstance(func, ast.Name) and func.id == name


def default_dtype(element_bytes: Number) -> str:
    """The first datasheet dtype whose elements take ``element_bytes`` bytes (fp32 for 4, fp16
    for 2)."""
    return next((d for d in DTYPES if DTYPE_BYTES[d] == element_bytes), DTYPES[0])


PANELS: dict[str, Panel] = {
    "dlrm": Panel(
        "What if the table or the batch were different?",
        (
            "embedding_memory",
            "embedding_payload",
            "embedding_bag_flops",
            "embedding_bag_bytes",
            "embedding_intensity",
        ),
        (
            Point(
                "embedding-bag lookup",
                "embedding_bag_flops",
                "embedding_bag_bytes",
                "embedding_intensity",
            ),
        ),
        questions=(10, 11),
    ),
    "mlp": Panel(
        "What if the layer or the batch were different?",
        ("mlp_macs", "mlp_flops", "mlp_weights", "mlp_weight_memory", "mlp_bytes", "mlp_intensity"),
        (Point("fully connected layer", "mlp_flops", "mlp_bytes", "mlp_intensity"),),
        questions=(12, 13),
    ),
    "cnn": Panel(
        "What if the convolution were different?",
        ("conv_macs", "conv_flops", "conv_weights", "conv_bytes", "conv_intensity"),
        (Point("convolution", "conv_flops", "conv_bytes", "conv_intensity"),),
        questions=(14,),
        examples=("conv_bytes",),
    ),
    "rnn": Panel(
        "What if the sequence or the hidden state were different?",
        ("rnn_macs", "rnn_flops", "rnn_bytes", "rnn_intensity"),
        (Point("RNN layer (all S steps)", "rnn_flops", "rnn_bytes", "rnn_intensity"),),
        questions=(15,),
        examples=("rnn_bytes",),
    ),
    "transformer": Panel(
        "What if the sequence, the batch or the width were different?",
        (
            "attention_scores",
            "attention_flops",
            "attention_bytes",
            "attention_intensity",
            "attention_tiled_bytes",
            "attention_tiled_intensity",
            "kv_cache_memory",
            "attention_decode_flops",
            "attention_decode_bytes",
            "attention_decode_intensity",
        ),
        (
            Point(
                "attention prefill, minimal traffic (the bound)",
                "attention_flops",
                "attention_bytes",
                "attention_intensity",
            ),
            Point(
                "attention prefill, tiled kernel (K and V from memory for every tile)",
                "attention_flops",
                "attention_tiled_bytes",
                "attention_tiled_intensity",
            ),
            Point(
                "one decode step",
                "attention_decode_flops",
                "attention_decode_bytes",
                "attention_decode_intensity",
            ),
        ),
        questions=(17, 16),
        examples=("attention_tiled_bytes",),
    ),
    "model": Panel(
        "What if the model, the context, the batch or the GPU were different?",
        (
            "decode_step_bytes",
            "max_decode_batch",
            "decode_step_flops",
            "decode_intensity",
            "decode_intensity_limit",
            "decode_compute_bound_batch",
            "tpot_seconds_lower_bound",
        ),
        (
            Point(
                "one decode step (weights and every KV cache)",
                "decode_step_flops",
                "decode_step_bytes",
                "decode_intensity",
            ),
        ),
        examples=("decode_step_bytes",),
        limits=(Limit("weights and KV cache of the batch", "decode_step_bytes", "M_dev"),),
    ),
    "distributed": Panel(
        "What if the devices, the table, the pipeline or the ZeRO stage were different?",
        (
            "sharded_table_memory",
            "tablewise_alltoall_bytes",
            "rowwise_alltoall_bytes",
            "ring_allreduce_bytes",
            "zero_memory_per_device",
            "pipeline_bubble_fraction",
            "pipeline_bubble_fraction_interleaved",
        ),
        (),
        questions=(10, 11),
        examples=(
            "tablewise_alltoall_bytes",
            "ring_allreduce_bytes",
            "zero_memory_per_device",
            "pipeline_bubble_fraction_interleaved",
        ),
    ),
    "roofline": Panel(
        "What if the layer or the GPU were different?",
        ("mlp_flops", "mlp_bytes", "mlp_intensity"),
        (Point("fully connected layer", "mlp_flops", "mlp_bytes", "mlp_intensity"),),
        examples=("mlp_intensity",),
        chart=True,
    ),
}
"""Every panel of the book, by the name its page gives the directive."""


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
                "params": _params(f),
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
