"""A formula's inputs checked against their symbols' rules: one value made exact, or one
numpy column in float64, each refused with an error that names the formula and the symbol.

>>> exact_input("area", "H_out", 32)
32
>>> exact_input("area", "H_out", 0.5)
Traceback (most recent call last):
...
gpuconcepts.errors.GpuConceptsTypeError: area: H_out (output height of a convolution) must be a whole number (it is a count); got 0.5 (float)
"""

from __future__ import annotations

import math
import numbers
from fractions import Fraction

import numpy as np
import numpy.typing as npt
import sympy as sp

from gpuconcepts.errors import GpuConceptsError, GpuConceptsTypeError
from gpuconcepts.symbols import SYMBOLS
from gpuconcepts.units import number, plain_number, significant


def described(name: str) -> str:
    """A symbol as an error names it: ``B (batch size)``."""
    return f"{name} ({SYMBOLS[name].meaning})"


def exact_input(formula: str, name: str, value: object) -> sp.Rational:
    symbol = SYMBOLS[name]
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise GpuConceptsTypeError(
            f"{formula}: {described(name)} must be a number; got {value!r} ({type(value).__name__})"
        )
    if isinstance(value, numbers.Integral):
        exact = Fraction(int(value))
    elif isinstance(value, Fraction):  # exact, as the CLI parses what it is given
        if symbol.is_count and value.denominator != 1:
            raise GpuConceptsTypeError(
                f"{formula}: {described(name)} must be a whole number (it is a count); "
                f"got {significant(value)}"
            )
        exact = value
    else:
        if not math.isfinite(float(value)):
            raise GpuConceptsError(f"{formula}: {described(name)} must be finite; got {value!r}")
        if symbol.is_count:
            raise GpuConceptsTypeError(
                f"{formula}: {described(name)} must be a whole number (it is a count); "
                f"got {value!r} ({type(value).__name__})"
            )
        # str() keeps the decimal the user wrote: 0.1 becomes 1/10, not 3602879701896397/2**55.
        exact = Fraction(str(float(value)))
    if not symbol.allows(exact):
        shown = significant(value) if isinstance(value, Fraction) else shown_value(value)
        raise GpuConceptsError(f"{formula}: {described(name)} {symbol.rule}; got {shown}")
    return sp.Rational(exact.numerator, exact.denominator)


def checked_column(formula: str, name: str, given: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """One array, checked by the rules of the scalar path, in float64.

    One difference on purpose: a float array of whole values is accepted for a count
    (``np.linspace`` makes floats), where a single float for a count is refused.
    """
    try:
        raw = np.asarray(given)
    except ValueError:  # ragged nested lists
        raise GpuConceptsError(
            f"{formula}: {described(name)} must be a rectangular array of numbers"
        ) from None
    if raw.dtype.kind not in "iuf":
        raise GpuConceptsTypeError(
            f"{formula}: {described(name)} must be numeric; got an array of dtype {raw.dtype}"
        )
    column = raw.astype(np.float64, copy=False)
    bad = column[~np.isfinite(column)]
    if bad.size:
        raise GpuConceptsError(f"{formula}: {described(name)} must be finite; got {bad[0]}")
    if raw.dtype.kind in "iu" and raw.size and np.abs(raw).max() > 2**53:
        raise GpuConceptsError(
            f"{formula}: {described(name)} holds integers above 2**53, which float64 "
            "would round; call the formula itself for an exact value"
        )
    if SYMBOLS[name].is_count and not np.array_equal(column, np.rint(column)):
        wrong = column[column != np.rint(column)][0]
        raise GpuConceptsTypeError(
            f"{formula}: {described(name)} must hold whole numbers (it is a count); "
            f"got {number(wrong)}"
        )
    symbol = SYMBOLS[name]
    # a domain is an interval: its two extremes decide (each element's exact comparison
    # is milliseconds per thousand), and the first element outside is named
    ends = (float(column.min()), float(column.max())) if column.size else ()
    if not all(symbol.allows(x) for x in ends):
        outside = next(x for x in column.ravel().tolist() if not symbol.allows(x))
        raise GpuConceptsError(f"{formula}: {described(name)} {symbol.rule}; got {number(outside)}")
    return column


def shown_value(value: object) -> str:
    """A given value in an error: as Python writes it, a whole number past 64 bits to 3
    digits (Python will not write an int of more than 4,300 digits)."""
    if isinstance(value, numbers.Integral) and abs(int(value)).bit_length() > 64:
        return significant(Fraction(int(value)))
    if isinstance(value, sp.Rational):  # exact: 9999999999/10000000000, not 1
        return plain_number(int(value)) if value.is_Integer else str(value)
    return repr(value)
