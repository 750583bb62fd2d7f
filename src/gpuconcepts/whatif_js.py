r"""The formulas as JavaScript for the what-if panels: each printed from its sympy expression as
calls into the runtime's exact rational arithmetic ``R``, and its worked derivation as a
template with a slot for each value.

>>> from gpuconcepts.formulas import mlp_macs
>>> formula_js(mlp_macs)
'(v) => R.mul(v["B"], v["d_in"], v["d_out"])'
>>> worked_template(mlp_macs)
'B d_{in} d_{out} = @B@ \\times @d_in@ \\times @d_out@'
"""

from __future__ import annotations

import json

import sympy as sp
from sympy.printing.printer import Printer

from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.expressions import NumberPrinter, expr_latex  # Formula.worked's printers
from gpuconcepts.formula import Formula
from gpuconcepts.symbols import SYMBOLS


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

    >>> from gpuconcepts.formulas import get, pipeline_bubble_fraction_interleaved
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


def params_in_order(formula: Formula) -> list[str]:
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

    >>> from gpuconcepts.formulas import get
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

    slots = {name: slot_of(name) for name in params_in_order(formula)}
    with sp.evaluate(False):
        filled = expr.xreplace({SYMBOLS[k].sym: slot for k, slot in slots.items()})
    text = str(NumberPrinter().doprint(filled))
    for name, slot in slots.items():
        text = text.replace(slot.name, f"@{name}@")
    return f"{latex} = {text}"
