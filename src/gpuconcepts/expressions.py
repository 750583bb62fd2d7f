"""Sympy expressions as the formulas write them: printed as text and LaTeX, read as exact
numbers, and solved for the size at which one reaches a level.

:class:`~gpuconcepts.formula.Formula` holds one expression, written with its ``product``,
``total`` and ``ratio``, and derives everything from it; this module holds what works on any
expression.

>>> from gpuconcepts.symbols import sym
>>> expr_text(2 * sym("B") * sym("d_in") ** 2)
'2·B·d_in²'
"""

from __future__ import annotations

import math
import numbers
import re
from fractions import Fraction
from functools import lru_cache

import numpy as np
import sympy as sp
from sympy.printing.latex import LatexPrinter

from gpuconcepts.errors import GpuConceptsError, GpuConceptsTypeError
from gpuconcepts.symbols import LATEX_NAMES
from gpuconcepts.units import latex_number, number

_SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def exact_number(value: object, what: str) -> sp.Rational:
    """A finite real number as an exact sympy rational; anything else (a string, which sympy
    would evaluate as code, None, a float that is not a number, an infinity) is a
    :class:`~gpuconcepts.errors.GpuConceptsError` naming ``what``.

    >>> exact_number(0.1, "x"), exact_number(512 / 3, "x"), exact_number(2**0.5, "x")
    (1/10, 512/3, 14142135623730951/10000000000000000)
    >>> exact_number("__import__('os')", "level")
    Traceback (most recent call last):
    ...
    gpuconcepts.errors.GpuConceptsTypeError: level must be a number; got "__import__('os')" (str)
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise GpuConceptsTypeError(
            f"{what} must be a number; got {value!r:.60} ({type(value).__name__})"
        )
    if isinstance(value, numbers.Integral):
        return sp.Integer(int(value))
    if isinstance(value, Fraction):
        return sp.Rational(value.numerator, value.denominator)
    number = float(value)
    if not math.isfinite(number):
        raise GpuConceptsError(f"{what} must be finite; got {value!r}")
    return _simplest_rational(number)


@lru_cache(maxsize=4096)
def _simplest_rational(number: float) -> sp.Rational:
    """The simplest rational a finite float stands for (0.1 is 1/10, 512 / 3 is 512/3).

    sympy is handed a float, never a string. Where it guesses an irrational (sqrt(2), E), the
    decimal written is taken instead. Kept per float: sympy's guess takes tens of
    milliseconds, and a page asks for the same few numbers (a GPU's ridge point) again and
    again.
    """
    guess = sp.nsimplify(number)
    if guess.is_Rational:
        return guess
    exact = Fraction(str(number))
    return sp.Rational(exact.numerator, exact.denominator)


def plain_text(expr: sp.Expr) -> str:
    """sympy's plain text for an expression, nested products flattened (no ``2*(B*d)``)."""
    while any(f.is_Mul for f in expr.args) and expr.is_Mul:
        expr = sp.Mul(
            *(g for f in expr.args for g in (f.args if f.is_Mul else (f,))), evaluate=False
        )
    return str(sp.sstr(expr, order="none"))


def expr_text(expr: sp.Expr) -> str:
    """One expression as plain text: ``·`` for products, superscript powers, a ratio as ``a / b``."""
    over = [f for f in expr.args if f.is_Pow and f.exp == -1] if expr.is_Mul else []
    if over:  # a ratio written with ratio(): numerator / (denominator)
        top = sp.Mul(*(f for f in expr.args if f not in over), evaluate=False)
        above = f"({plain_text(top)})" if top.is_Add else plain_text(top)
        below = plain_text(over[0].base)
        below = below if over[0].base.is_Atom else f"({below})"
        body = f"{above} / {below}"
    else:
        body = plain_text(expr)
    body = re.sub(r"\*\*(\d+)", lambda power: power.group(1).translate(_SUPERSCRIPT), body)
    return body.replace("**", "^").replace("*", "·")


class NumberPrinter(LatexPrinter):  # type: ignore[misc]
    """LaTeX printer for substituted expressions: digits grouped with ``{,}``, ``\\times`` between."""

    def __init__(self) -> None:
        super().__init__({"mul_symbol": "times", "order": "none"})

    def _print_Integer(self, expr: sp.Integer) -> str:
        return latex_number(int(expr))

    def _print_Rational(self, expr: sp.Rational) -> str:
        return short_decimal(expr) or latex_number(Fraction(int(expr.p), int(expr.q)))

    def _print_Float(self, expr: sp.Float) -> str:
        return latex_number(float(expr))


def expr_latex(expr: sp.Expr) -> str:
    """LaTeX for an expression as written, with the symbols' declared LaTeX names."""
    return str(sp.latex(expr, order="none", symbol_names=LATEX_NAMES))


def short_decimal(value: sp.Rational, max_digits: int = 6) -> str | None:
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


def rounded_latex(value: sp.Rational) -> str:
    """Three significant digits, as units.py prints every non-whole value (0.999, not 1)."""
    return latex_number(Fraction(int(value.p), int(value.q)))


def plain_power(power: sp.Pow) -> str:
    """A power as plain text: ``alpha^(gamma + 1)``."""
    return f"{plain_text(power.base)}^({plain_text(power.exp)})"


LEVEL = sp.Dummy("level", positive=True)
"""The level :meth:`Formula.reaches` solves for, kept symbolic so that one solution serves
every level asked of the same expression (a page asks it once per GPU's ridge point)."""


@lru_cache(maxsize=256)
def limit_at_infinity(expr: sp.Expr, x: sp.Symbol) -> sp.Expr:
    """``expr``'s limit as ``x`` grows without bound (sympy's ``limit``, kept per expression)."""
    return sp.limit(expr, x, sp.oo)


@lru_cache(maxsize=256)
def solved_for_level(expr: sp.Expr, x: sp.Symbol) -> tuple[sp.Expr, ...] | None:
    """The roots of ``expr = level`` in ``x`` for a positive symbolic level, or None when
    sympy cannot solve for ``x`` (a ceiling or floor of it)."""
    try:
        return tuple(sp.solve(sp.Eq(expr, LEVEL), x))
    except NotImplementedError:
        return None


def first_reaching(expr: sp.Expr, x: sp.Symbol, target: sp.Expr, most: int = 10**9) -> int:
    """The first whole ``x`` from 1 at which ``expr`` (in float64) is at least ``target``,
    searched in blocks that double; :meth:`Formula.reaches` then checks it exactly."""
    values = sp.lambdify(x, expr, modules="numpy")
    start, size = 1, 1024
    while start <= most:
        xs = np.arange(start, start + size, dtype=np.float64)
        hits = np.flatnonzero(np.asarray(values(xs)) >= float(target))
        if hits.size:
            return start + int(hits[0])
        start, size = start + size, 2 * size
    raise GpuConceptsError(f"{expr} does not reach {target} for any whole {x} up to {number(most)}")
