r"""The ``Formula`` type: one sympy expression and everything derived from it.

A formula is written once; its LaTeX, its worked derivation, its exact value, its
vectorised numpy version and its input validation all come from the same expression.

>>> from gpuconcepts.symbols import sym
>>> area = Formula("area", product(sym("H_out"), sym("W_out")), kind="count",
...                summary="Pixels in an output map.")
>>> area(H_out=32, W_out=32)
1024
>>> area.worked(H_out=32, W_out=32)
'H_{out} W_{out} = 32 \\times 32 = 1{,}024'
>>> area(H_out=32, W_out=0)
Traceback (most recent call last):
...
gpuconcepts.errors.GpuConceptsError: area: W_out (output width of a convolution) must be positive; got 0
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping
from fractions import Fraction
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt
import sympy as sp

from gpuconcepts.errors import GpuConceptsError, GpuConceptsTypeError
from gpuconcepts.expressions import (
    LEVEL,
    NumberPrinter,
    exact_number,
    expr_latex,
    expr_text,
    first_reaching,
    limit_at_infinity,
    plain_power,
    plain_text,
    rounded_latex,
    short_decimal,
    solved_for_level,
)
from gpuconcepts.formula_inputs import checked_column, described, exact_input, shown_value
from gpuconcepts.symbols import SYMBOLS, Symbol
from gpuconcepts.units import Kind, number, plain_number, significant

Number = int | float | Fraction


def _terms(what: str, terms: tuple[sp.Expr | int, ...]) -> tuple[sp.Expr | int, ...]:
    """Sympy expressions and whole numbers only: never a string, which sympy would parse
    (and evaluate) as code."""
    for term in terms:
        if isinstance(term, bool) or not isinstance(term, sp.Expr | int):
            raise GpuConceptsTypeError(
                f"{what}: takes sympy expressions of gpuconcepts.symbols and whole numbers; "
                f"got {term!r:.60} ({type(term).__name__})"
            )
    return terms


def product(*factors: sp.Expr | int) -> sp.Expr:
    """A product kept in the order written, so the LaTeX reads like the post (B H W K² ...)."""
    return sp.Mul(*_terms("product", factors), evaluate=False)


def total(*terms: sp.Expr) -> sp.Expr:
    """A flat sum kept in the order written."""
    return sp.Add(*_terms("total", terms), evaluate=False)


def ratio(numerator: sp.Expr, denominator: sp.Expr) -> sp.Expr:
    """A fraction kept as written, so an intensity prints as FLOPs over bytes."""
    numerator, denominator = _terms("ratio", (numerator, denominator))
    return sp.Mul(numerator, sp.Pow(denominator, -1, evaluate=False), evaluate=False)


class Formula:
    """A named sympy expression with its meaning, the kind of its result, and validation.

    Call it with keyword values for every symbol to get the exact value: an ``int`` when
    the result is whole, otherwise a ``float``.
    """

    def __init__(
        self,
        name: str,
        expr: sp.Expr,
        *,
        kind: Kind,
        summary: str,
        lhs: str | None = None,
        doc: str = "",
    ) -> None:
        if not isinstance(expr, sp.Expr):  # a string would be parsed, and run, by sympy
            raise GpuConceptsTypeError(
                f"{name}: the expression must be a sympy expression of gpuconcepts.symbols; "
                f"got {expr!r:.60} ({type(expr).__name__})"
            )
        self.name = name
        self.expr = expr
        self.kind: Kind = kind
        self.summary = summary
        self.lhs = lhs or rf"\mathrm{{{name}}}"
        self.__doc__ = f"{summary}\n{doc}"
        written = [str(s) for s in sp.preorder_traversal(expr) if isinstance(s, sp.Symbol)]
        self.params: tuple[str, ...] = tuple(dict.fromkeys(written))
        unknown = [p for p in self.params if p not in SYMBOLS]
        if unknown:
            raise GpuConceptsError(
                f"{name}: symbols {unknown} are not declared in gpuconcepts.symbols"
            )

    def __repr__(self) -> str:
        return f"Formula({self.name}: {self.equation()})"

    @property
    def symbols(self) -> tuple[Symbol, ...]:
        """The symbols the formula takes, in the order they are written."""
        return tuple(SYMBOLS[p] for p in self.params)

    # -- rendering -------------------------------------------------------------------------
    def latex(self) -> str:
        """The right-hand side in LaTeX, e.g. ``N d s``."""
        return expr_latex(self.expr)

    def equation(self) -> str:
        """The whole equation in LaTeX, e.g. ``\\text{Memory} = N d s``."""
        return f"{self.lhs} = {self.latex()}"

    def text(self) -> str:
        """The equation as one line of plain text, for output outside LaTeX.

        >>> from gpuconcepts.formulas import attention_flops, mlp_intensity
        >>> attention_flops.text()
        'attention_flops = 4·B·S²·d'
        >>> mlp_intensity.text()
        'mlp_intensity = 2·B·d_in·d_out / (s·(B·d_in + d_in·d_out + B·d_out))'
        >>> from gpuconcepts.formulas import decode_seconds_lower_bound, pipeline_bubble_fraction
        >>> decode_seconds_lower_bound.text()
        'decode_seconds_lower_bound = (M_w + M_kv) / beta'
        >>> pipeline_bubble_fraction.text()
        'pipeline_bubble_fraction = (p - 1) / (m + p - 1)'
        >>> from gpuconcepts.formulas import zero_memory_per_device
        >>> from gpuconcepts.formulas import speculative_expected_tokens
        >>> speculative_expected_tokens.text()
        'speculative_expected_tokens = (1 - alpha^(gamma + 1)) / (1 - alpha)'
        >>> zero_memory_per_device.text().split("; ")[1]
        '4·n_params + (k_opt·n_params)/N_d if stage = 1'
        """
        if isinstance(self.expr, sp.Piecewise):  # one case per value of a symbol (a stage)
            cases = [
                f"{expr_text(e)} if {plain_text(c.lhs)} = {plain_text(c.rhs)}"
                for e, c in self.expr.args
            ]
            return f"{self.name} = {'; '.join(cases)}"
        return f"{self.name} = {expr_text(self.expr)}"

    def substituted(self, **values: Number) -> str:
        """The expression with the numbers put in, unevaluated: ``100{,}000{,}000 \\times 128 \\times 4``."""
        exact = self._exact_inputs(values)
        expr = self._case(exact)
        with sp.evaluate(False):
            filled = expr.xreplace({SYMBOLS[k].sym: v for k, v in exact.items()})
        return str(NumberPrinter().doprint(filled))

    def _case(self, exact: Mapping[str, sp.Rational]) -> sp.Expr:
        """The expression, or the one case of a piecewise formula that these values select."""
        if not isinstance(self.expr, sp.Piecewise):
            return self.expr
        given = {SYMBOLS[k].sym: v for k, v in exact.items()}
        for expr, condition in self.expr.args:
            if condition.xreplace(given) == sp.true:
                return sp.sympify(expr)
        raise GpuConceptsError(f"{self.name}: no case holds for {dict(exact)}")  # pragma: no cover

    def worked(self, **values: Number) -> str:
        """The derivation as LaTeX: formula = substituted values = result.

        A result with a short exact decimal (a whole number, 0.125) is printed exactly after
        ``=``; any other result is rounded and marked ``\\approx``.
        """
        value = self.exact(**values)
        decimal = short_decimal(value)
        result = f"= {decimal}" if decimal is not None else rf"\approx {rounded_latex(value)}"
        case = expr_latex(self._case(self._exact_inputs(values)))
        return f"{case} = {self.substituted(**values)} {result}"

    # -- evaluation ------------------------------------------------------------------------
    def exact(self, **values: Number) -> sp.Rational:
        """The exact value as a sympy number (rational arithmetic, no rounding).

        A power whose exponent is given (``alpha ** (gamma + 1)``) is computed only when its
        exact value has at most :data:`MAX_POWER_BITS` bits: ``gamma=10**9`` would take
        gigabytes and hours, so it is refused first, naming the symbol.

        >>> from gpuconcepts.formulas import speculative_expected_tokens
        >>> speculative_expected_tokens(alpha=0.5, gamma=10**9)
        Traceback (most recent call last):
        ...
        gpuconcepts.errors.GpuConceptsError: speculative_expected_tokens: gamma (tokens the draft model proposes per step) must keep alpha^(gamma + 1) within 1,048,576 bits exact (1/2 to the power 1,000,000,001 needs about 2,000,000,000); got gamma=1,000,000,000
        """
        exact = self._exact_inputs(values)
        self._check_powers(exact)
        result = self.expr.xreplace({SYMBOLS[k].sym: v for k, v in exact.items()})
        return sp.nsimplify(result) if not result.is_Rational else result

    def __call__(self, **values: Number) -> int | float:
        """The value: an exact ``int`` when whole (any size), else a ``float``.

        A fraction a float cannot hold (beyond about 1e308, or below the smallest normal
        float, about 2.2e-308) is refused rather than returned as ``inf`` or ``0.0``.
        """
        value = self.exact(**values)
        if value.is_integer:
            return int(value)
        number = float(value)
        if not math.isfinite(number) or abs(number) < sys.float_info.min:
            shown = significant(Fraction(int(value.p), int(value.q)))
            given = ", ".join(f"{k}={significant(Fraction(v))}" for k, v in values.items())
            raise GpuConceptsError(
                f"{self.name}: the result, about {shown}, is beyond what a float can hold "
                f"(about 2.2e-308 to 1.8e308); got {given}"
            )
        return number

    def _check_powers(self, exact: Mapping[str, sp.Rational]) -> None:
        """Refuse a power whose exact value would exceed :data:`MAX_POWER_BITS` bits."""
        given = {SYMBOLS[k].sym: v for k, v in exact.items()}
        for power in self.expr.atoms(sp.Pow):
            names = sorted(str(s) for s in power.exp.free_symbols)
            if not names:
                continue  # a constant exponent (a square, a ratio's -1) stays small
            base, exponent = power.base.xreplace(given), power.exp.xreplace(given)
            if not (base.is_Rational and exponent.is_Integer):
                continue
            bits = max(int(base.p).bit_length(), int(base.q).bit_length())
            if bits * abs(int(exponent)) <= MAX_POWER_BITS:
                continue
            raise GpuConceptsError(
                f"{self.name}: {self._what(names[0])} must keep {plain_power(power)} within "
                f"{plain_number(MAX_POWER_BITS)} bits exact ({shown_value(base)} to the power "
                f"{plain_number(int(exponent))} needs about {significant(bits * abs(int(exponent)))}); "
                "got " + ", ".join(f"{n}={shown_value(exact[n])}" for n in names)
            )

    def _in_one_symbol(self, over: str, values: Mapping[str, object]) -> tuple[sp.Expr, sp.Symbol]:
        if over not in self.params:
            raise GpuConceptsError(
                f"{self.name}: unknown symbol {over!r}; it takes {', '.join(self.params)}"
            )
        others = {k: v for k, v in values.items() if k != over}
        self._check_names({**others, over: 1})
        exact = {k: exact_input(self.name, k, v) for k, v in others.items()}
        return self.expr.xreplace({SYMBOLS[k].sym: v for k, v in exact.items()}), SYMBOLS[over].sym

    def supremum(self, over: str, **values: Number) -> float:
        """The limit of the formula as ``over`` grows without bound, the other values fixed.

        >>> from gpuconcepts.formulas import mlp_intensity
        >>> round(mlp_intensity.supremum("B", d_in=512, d_out=256, s=2), 1)
        170.7
        """
        expr, x = self._in_one_symbol(over, values)
        return float(sp.limit(expr, x, sp.oo))

    def reaches(self, level: float, over: str, **values: Number) -> int | None:
        """The smallest whole ``over`` at which the formula is at least ``level``, or None when
        it never is (its limit as ``over`` grows is at most ``level``).

        For a formula that grows with ``over``, such as an intensity with the batch size:
        the batch from which a layer is compute-bound on a GPU with that ridge point.

        >>> from gpuconcepts.formulas import mlp_intensity
        >>> mlp_intensity.reaches(20, "B", d_in=512, d_out=256, s=4)
        53
        >>> mlp_intensity.reaches(295, "B", d_in=512, d_out=256, s=2) is None
        True

        A formula with a ceiling or a floor of ``over`` has no closed-form root; the first
        whole value is then found by evaluating it (tiled attention, 128-row tiles):

        >>> from gpuconcepts.formulas import attention_tiled_intensity
        >>> attention_tiled_intensity.reaches(100, "S", B=1, d=512, s=2, S_tile=128)
        500
        """
        target = exact_number(level, f"{self.name}: level")
        expr, x = self._in_one_symbol(over, values)
        if limit_at_infinity(expr, x) <= target:
            return None
        solved = solved_for_level(expr, x)
        if solved is None:  # a ceiling or floor of x: sympy cannot solve for it
            candidate = first_reaching(expr, x, target)
        else:
            found = (r.xreplace({LEVEL: target}) for r in solved)
            roots = [r for r in found if r.is_real and r > 0]
            candidate = max(1, int(sp.ceiling(min(roots)))) if roots else 1
        while expr.xreplace({x: candidate}) < target:  # guards the rounding of the root
            candidate += 1
        while candidate > 1 and expr.xreplace({x: candidate - 1}) >= target:
            candidate -= 1
        return candidate

    @cached_property
    def _numpy(self) -> Any:
        return sp.lambdify([SYMBOLS[p].sym for p in self.params], self.expr, modules="numpy")

    def vectorized(self, **arrays: npt.ArrayLike) -> npt.NDArray[np.float64]:
        """Evaluate over numpy arrays (broadcast together) in float64.

        Floats hold integers exactly up to 2**53, well past any size in the book; int64
        could overflow silently on products such as 4·B·S²·d.

        >>> from gpuconcepts.formulas import attention_scores
        >>> attention_scores.vectorized(S=[1000, 2000]).tolist()
        [1000000.0, 4000000.0]
        """
        self._check_names(arrays)
        columns = [checked_column(self.name, name, arrays[name]) for name in self.params]
        try:
            np.broadcast_shapes(*(c.shape for c in columns))
        except ValueError:
            shapes = ", ".join(f"{n} {c.shape}" for n, c in zip(self.params, columns, strict=True))
            raise GpuConceptsError(
                f"{self.name}: the arrays must broadcast together; got shapes {shapes}"
            ) from None
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            result = np.asarray(self._numpy(*columns), dtype=np.float64)
        self._check_finite(result, columns)
        return result

    def _check_finite(
        self, result: npt.NDArray[np.float64], columns: list[npt.NDArray[np.float64]]
    ) -> None:
        """Refuse an overflow: the exact value is finite, so inf or NaN would be a wrong
        answer (a result, or a step on the way, beyond float64's 1.8e308)."""
        bad = ~np.isfinite(result)
        if not bad.any():
            return
        where = np.argwhere(bad)[0] if result.ndim else ()
        point = [np.broadcast_to(c, result.shape)[tuple(where)] for c in columns]
        given = ", ".join(f"{n}={number(v)}" for n, v in zip(self.params, point, strict=True))
        raise GpuConceptsError(
            f"{self.name}: float64 overflows at {given} (the result, or a step on the way, is "
            f"beyond about 1.8e308); call {self.name}(...) for the exact value"
        )

    # -- validation ------------------------------------------------------------------------
    def _what(self, name: str) -> str:
        return described(name)

    def _check_names(self, values: Mapping[str, object]) -> None:
        unknown = [k for k in values if k not in self.params]
        if unknown:
            raise GpuConceptsError(
                f"{self.name}: unknown symbol {unknown[0]!r}; it takes {', '.join(self.params)}"
            )
        missing = [p for p in self.params if p not in values]
        if missing:
            raise GpuConceptsError(
                f"{self.name}: missing value for {self._what(missing[0])}; "
                f"it takes {', '.join(self.params)}"
            )

    def _exact_inputs(self, values: Mapping[str, object]) -> dict[str, sp.Rational]:
        self._check_names(values)
        return {name: exact_input(self.name, name, value) for name, value in values.items()}


MAX_POWER_BITS = 2**20
"""The most bits an exact power of a given value may have (a megabit, milliseconds to
compute): beyond it, ``alpha ** gamma`` grows without end in memory and time."""
