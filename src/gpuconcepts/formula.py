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
import numbers
import re
import sys
from collections.abc import Mapping
from fractions import Fraction
from functools import cached_property, lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt
import sympy as sp
from sympy.printing.latex import LatexPrinter

from gpuconcepts.errors import GpuConceptsError, GpuConceptsTypeError
from gpuconcepts.symbols import LATEX_NAMES, SYMBOLS, Symbol
from gpuconcepts.units import Kind, latex_number, number, plain_number, significant

Number = int | float | Fraction

_SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


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


def _plain(expr: sp.Expr) -> str:
    """sympy's plain text for an expression, nested products flattened (no ``2*(B*d)``)."""
    while any(f.is_Mul for f in expr.args) and expr.is_Mul:
        expr = sp.Mul(
            *(g for f in expr.args for g in (f.args if f.is_Mul else (f,))), evaluate=False
        )
    return str(sp.sstr(expr, order="none"))


def _text(expr: sp.Expr) -> str:
    """One expression as plain text: ``·`` for products, superscript powers, a ratio as ``a / b``."""
    over = [f for f in expr.args if f.is_Pow and f.exp == -1] if expr.is_Mul else []
    if over:  # a ratio written with ratio(): numerator / (denominator)
        top = sp.Mul(*(f for f in expr.args if f not in over), evaluate=False)
        above = f"({_plain(top)})" if top.is_Add else _plain(top)
        below = _plain(over[0].base)
        below = below if over[0].base.is_Atom else f"({below})"
        body = f"{above} / {below}"
    else:
        body = _plain(expr)
    body = re.sub(r"\*\*(\d+)", lambda power: power.group(1).translate(_SUPERSCRIPT), body)
    return body.replace("**", "^").replace("*", "·")


class NumberPrinter(LatexPrinter):  # type: ignore[misc]
    """LaTeX printer for substituted expressions: digits grouped with ``{,}``, ``\\times`` between."""

    def __init__(self) -> None:
        super().__init__({"mul_symbol": "times", "order": "none"})

    def _print_Integer(self, expr: sp.Integer) -> str:
        return latex_number(int(expr))

    def _print_Rational(self, expr: sp.Rational) -> str:
        return _short_decimal(expr) or latex_number(Fraction(int(expr.p), int(expr.q)))

    def _print_Float(self, expr: sp.Float) -> str:
        return latex_number(float(expr))


def expr_latex(expr: sp.Expr) -> str:
    """LaTeX for an expression as written, with the symbols' declared LaTeX names."""
    return str(sp.latex(expr, order="none", symbol_names=LATEX_NAMES))


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
    """Three significant digits, as units.py prints every non-whole value (0.999, not 1)."""
    return latex_number(Fraction(int(value.p), int(value.q)))


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
            cases = [f"{_text(e)} if {_plain(c.lhs)} = {_plain(c.rhs)}" for e, c in self.expr.args]
            return f"{self.name} = {'; '.join(cases)}"
        return f"{self.name} = {_text(self.expr)}"

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
        decimal = _short_decimal(value)
        result = f"= {decimal}" if decimal is not None else rf"\approx {_rounded(value)}"
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
                f"{self.name}: {self._what(names[0])} must keep {_plain_power(power)} within "
                f"{plain_number(MAX_POWER_BITS)} bits exact ({_shown(base)} to the power "
                f"{plain_number(int(exponent))} needs about {significant(bits * abs(int(exponent)))}); "
                "got " + ", ".join(f"{n}={_shown(exact[n])}" for n in names)
            )

    def _in_one_symbol(self, over: str, values: Mapping[str, object]) -> tuple[sp.Expr, sp.Symbol]:
        if over not in self.params:
            raise GpuConceptsError(
                f"{self.name}: unknown symbol {over!r}; it takes {', '.join(self.params)}"
            )
        others = {k: v for k, v in values.items() if k != over}
        self._check_names({**others, over: 1})
        exact = {k: self._exact_input(k, v) for k, v in others.items()}
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
        if _limit(expr, x) <= target:
            return None
        solved = _solved(expr, x)
        if solved is None:  # a ceiling or floor of x: sympy cannot solve for it
            candidate = _first_reaching(expr, x, target)
        else:
            found = (r.xreplace({_LEVEL: target}) for r in solved)
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
        columns = [self._checked_column(name, arrays[name]) for name in self.params]
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

    def _checked_column(self, name: str, given: npt.ArrayLike) -> npt.NDArray[np.float64]:
        """One array, checked by the rules of the scalar path, in float64.

        One difference on purpose: a float array of whole values is accepted for a count
        (``np.linspace`` makes floats), where a single float for a count is refused.
        """
        try:
            raw = np.asarray(given)
        except ValueError:  # ragged nested lists
            raise GpuConceptsError(
                f"{self.name}: {self._what(name)} must be a rectangular array of numbers"
            ) from None
        if raw.dtype.kind not in "iuf":
            raise GpuConceptsTypeError(
                f"{self.name}: {self._what(name)} must be numeric; got an array of dtype {raw.dtype}"
            )
        column = raw.astype(np.float64, copy=False)
        bad = column[~np.isfinite(column)]
        if bad.size:
            raise GpuConceptsError(f"{self.name}: {self._what(name)} must be finite; got {bad[0]}")
        if raw.dtype.kind in "iu" and raw.size and np.abs(raw).max() > 2**53:
            raise GpuConceptsError(
                f"{self.name}: {self._what(name)} holds integers above 2**53, which float64 "
                "would round; call the formula itself for an exact value"
            )
        if SYMBOLS[name].is_count and not np.array_equal(column, np.rint(column)):
            wrong = column[column != np.rint(column)][0]
            raise GpuConceptsTypeError(
                f"{self.name}: {self._what(name)} must hold whole numbers (it is a count); "
                f"got {number(wrong)}"
            )
        symbol = SYMBOLS[name]
        # a domain is an interval: its two extremes decide (each element's exact comparison
        # is milliseconds per thousand), and the first element outside is named
        ends = (float(column.min()), float(column.max())) if column.size else ()
        if not all(symbol.allows(x) for x in ends):
            outside = next(x for x in column.ravel().tolist() if not symbol.allows(x))
            raise GpuConceptsError(
                f"{self.name}: {self._what(name)} {symbol.rule}; got {number(outside)}"
            )
        return column

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
        elif isinstance(value, Fraction):  # exact, as the CLI parses what it is given
            if symbol.is_count and value.denominator != 1:
                raise GpuConceptsTypeError(
                    f"{self.name}: {self._what(name)} must be a whole number (it is a count); "
                    f"got {significant(value)}"
                )
            exact = value
        else:
            if not math.isfinite(float(value)):
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
        if not symbol.allows(exact):
            shown = significant(value) if isinstance(value, Fraction) else _shown(value)
            raise GpuConceptsError(f"{self.name}: {self._what(name)} {symbol.rule}; got {shown}")
        return sp.Rational(exact.numerator, exact.denominator)


MAX_POWER_BITS = 2**20
"""The most bits an exact power of a given value may have (a megabit, milliseconds to
compute): beyond it, ``alpha ** gamma`` grows without end in memory and time."""


def _plain_power(power: sp.Pow) -> str:
    """A power as plain text: ``alpha^(gamma + 1)``."""
    return f"{_plain(power.base)}^({_plain(power.exp)})"


def _shown(value: object) -> str:
    """A given value in an error: as Python writes it, a whole number past 64 bits to 3
    digits (Python will not write an int of more than 4,300 digits)."""
    if isinstance(value, numbers.Integral) and abs(int(value)).bit_length() > 64:
        return significant(Fraction(int(value)))
    if isinstance(value, sp.Rational):  # exact: 9999999999/10000000000, not 1
        return plain_number(int(value)) if value.is_Integer else str(value)
    return repr(value)


_LEVEL = sp.Dummy("level", positive=True)
"""The level :meth:`Formula.reaches` solves for, kept symbolic so that one solution serves
every level asked of the same expression (a page asks it once per GPU's ridge point)."""


@lru_cache(maxsize=256)
def _limit(expr: sp.Expr, x: sp.Symbol) -> sp.Expr:
    """``expr``'s limit as ``x`` grows without bound (sympy's ``limit``, kept per expression)."""
    return sp.limit(expr, x, sp.oo)


@lru_cache(maxsize=256)
def _solved(expr: sp.Expr, x: sp.Symbol) -> tuple[sp.Expr, ...] | None:
    """The roots of ``expr = level`` in ``x`` for a positive symbolic level, or None when
    sympy cannot solve for ``x`` (a ceiling or floor of it)."""
    try:
        return tuple(sp.solve(sp.Eq(expr, _LEVEL), x))
    except NotImplementedError:
        return None


def _first_reaching(expr: sp.Expr, x: sp.Symbol, target: sp.Expr, most: int = 10**9) -> int:
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
