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

import numbers
import re
from collections.abc import Mapping
from fractions import Fraction
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt
import sympy as sp
from sympy.printing.latex import LatexPrinter

from gpuconcepts.errors import GpuConceptsError, GpuConceptsTypeError
from gpuconcepts.symbols import SYMBOLS, Symbol
from gpuconcepts.units import Kind, latex_number

Number = int | float | Fraction

_SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def product(*factors: sp.Expr | int) -> sp.Expr:
    """A product kept in the order written, so the LaTeX reads like the post (B H W K² ...)."""
    return sp.Mul(*factors, evaluate=False)


def total(*terms: sp.Expr) -> sp.Expr:
    """A flat sum kept in the order written."""
    return sp.Add(*terms, evaluate=False)


def ratio(numerator: sp.Expr, denominator: sp.Expr) -> sp.Expr:
    """A fraction kept as written, so an intensity prints as FLOPs over bytes."""
    return sp.Mul(numerator, sp.Pow(denominator, -1, evaluate=False), evaluate=False)


def _plain(expr: sp.Expr) -> str:
    """sympy's plain text for an expression, nested products flattened (no ``2*(B*d)``)."""
    while any(f.is_Mul for f in expr.args) and expr.is_Mul:
        expr = sp.Mul(
            *(g for f in expr.args for g in (f.args if f.is_Mul else (f,))), evaluate=False
        )
    return str(sp.sstr(expr, order="none"))


class _NumberPrinter(LatexPrinter):  # type: ignore[misc]
    """LaTeX printer for substituted expressions: digits grouped with ``{,}``, ``\\times`` between."""

    def __init__(self) -> None:
        super().__init__({"mul_symbol": "times", "order": "none"})

    def _print_Integer(self, expr: sp.Integer) -> str:
        return latex_number(int(expr))

    def _print_Rational(self, expr: sp.Rational) -> str:
        return latex_number(float(expr))

    def _print_Float(self, expr: sp.Float) -> str:
        return latex_number(float(expr))


def _short_decimal(value: sp.Rational, max_digits: int = 6) -> str | None:
    """LaTeX for ``value`` when it has an exact decimal of at most ``max_digits`` places."""
    for digits in range(max_digits + 1):
        scaled = value * 10**digits
        if scaled.is_integer:
            whole = latex_number(int(value))
            if digits == 0:
                return whole
            fraction = str(abs(int(scaled)) % 10**digits).rjust(digits, "0")
            return f"{whole}.{fraction}"
    return None


def _rounded(value: sp.Rational) -> str:
    """Two decimals from 1 upwards, three significant digits below 1 (0.999, not 1)."""
    number = float(value)
    return latex_number(number) if abs(number) >= 1 else f"{number:.3g}"


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
        return str(sp.latex(self.expr, order="none"))

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
        >>> from gpuconcepts.formulas import pipeline_bubble_fraction
        >>> pipeline_bubble_fraction.text()
        'pipeline_bubble_fraction = (p - 1) / (m + p - 1)'
        """
        over = [f for f in self.expr.args if f.is_Pow and f.exp == -1] if self.expr.is_Mul else []
        if over:  # a ratio written with ratio(): numerator / (denominator)
            top = sp.Mul(*(f for f in self.expr.args if f not in over), evaluate=False)
            above = f"({_plain(top)})" if top.is_Add else _plain(top)
            below = _plain(over[0].base)
            below = below if over[0].base.is_Atom else f"({below})"
            body = f"{above} / {below}"
        else:
            body = _plain(self.expr)
        body = re.sub(r"\*\*(\d+)", lambda power: power.group(1).translate(_SUPERSCRIPT), body)
        return f"{self.name} = {body.replace('*', '·')}"

    def substituted(self, **values: Number) -> str:
        """The expression with the numbers put in, unevaluated: ``100{,}000{,}000 \\times 128 \\times 4``."""
        exact = self._exact_inputs(values)
        with sp.evaluate(False):
            filled = self.expr.xreplace({SYMBOLS[k].sym: v for k, v in exact.items()})
        return str(_NumberPrinter().doprint(filled))

    def worked(self, **values: Number) -> str:
        """The derivation as LaTeX: formula = substituted values = result.

        A result with a short exact decimal (a whole number, 0.125) is printed exactly after
        ``=``; any other result is rounded and marked ``\\approx``.
        """
        value = self.exact(**values)
        decimal = _short_decimal(value)
        result = f"= {decimal}" if decimal is not None else rf"\approx {_rounded(value)}"
        return f"{self.latex()} = {self.substituted(**values)} {result}"

    # -- evaluation ------------------------------------------------------------------------
    def exact(self, **values: Number) -> sp.Rational:
        """The exact value as a sympy number (rational arithmetic, no rounding)."""
        exact = self._exact_inputs(values)
        result = self.expr.xreplace({SYMBOLS[k].sym: v for k, v in exact.items()})
        return sp.nsimplify(result) if not result.is_Rational else result

    def __call__(self, **values: Number) -> int | float:
        value = self.exact(**values)
        return int(value) if value.is_integer else float(value)

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
        columns = []
        for name in self.params:
            column = np.asarray(arrays[name])
            if column.dtype.kind not in "iuf":
                raise GpuConceptsTypeError(
                    f"{self.name}: {name} must be numeric; got an array of dtype {column.dtype}"
                )
            column = column.astype(np.float64, copy=False)
            if column.size and column.min() <= 0:
                raise GpuConceptsError(
                    f"{self.name}: {self._what(name)} must be positive; got {column.min():g}"
                )
            if (
                SYMBOLS[name].is_count
                and np.asarray(arrays[name]).dtype.kind == "f"
                and not np.array_equal(column, np.rint(column))
            ):
                raise GpuConceptsTypeError(
                    f"{self.name}: {self._what(name)} must hold whole numbers (it is a count)"
                )
            columns.append(column)
        return np.asarray(self._numpy(*columns), dtype=np.float64)

    # -- validation ------------------------------------------------------------------------
    def _what(self, name: str) -> str:
        return f"{name} ({SYMBOLS[name].meaning})"

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
        return {name: self._exact_input(name, value) for name, value in values.items()}

    def _exact_input(self, name: str, value: object) -> sp.Rational:
        symbol = SYMBOLS[name]
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise GpuConceptsTypeError(
                f"{self.name}: {self._what(name)} must be a number; "
                f"got {value!r} ({type(value).__name__})"
            )
        if isinstance(value, numbers.Integral):
            exact = Fraction(int(value))
        elif isinstance(value, Fraction) and not symbol.is_count:
            exact = value
        else:
            if not np.isfinite(float(value)):
                raise GpuConceptsError(
                    f"{self.name}: {self._what(name)} must be finite; got {value!r}"
                )
            if symbol.is_count:
                raise GpuConceptsTypeError(
                    f"{self.name}: {self._what(name)} must be a whole number (it is a count); "
                    f"got {value!r} ({type(value).__name__})"
                )
            # str() keeps the decimal the user wrote: 0.1 becomes 1/10, not 3602879701896397/2**55.
            exact = Fraction(str(float(value)))
        if exact <= 0:
            raise GpuConceptsError(
                f"{self.name}: {self._what(name)} must be positive; got {value!r}"
            )
        return sp.Rational(exact.numerator, exact.denominator)
