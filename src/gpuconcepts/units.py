"""Numbers for people: the book's one formatting policy, in one place.

Every number the book, the CLI and the claims print goes through this module, so the same
quantity reads the same everywhere. The policy, by kind of quantity:

* **exact counts** (bytes, MACs, FLOPs, rows, parameters) in full, with thousands separators:
  ``51,200,000,000``; an integer is never rounded, however large (Python ints are exact);
* **sizes in bytes** also in decimal and binary units with up to two decimals, as the post
  writes them: ``51.2 GB``, ``47.68 GiB``;
* **large counts in words**, up to two decimals, without repeating the unit:
  ``4,718,592 MACs (4.72 million)``;
* **times and rates** with three significant digits and an SI prefix: ``32 µs``, ``13.8 GB/s``;
* **other non-whole values** (intensities, fitted exponents) with three significant digits:
  ``0.125``, ``315 FLOP/byte``;
* **ratios** ("how many times") whole from 10 up, two significant digits below: ``44×``, ``1.5×``;
* **percentages** with two significant digits and no trailing zeros: ``3.1%``, ``0.0031%``;
* numbers beyond 10¹⁵ that are not exact counts, and below 10⁻⁴, in scientific form: ``6.67×10³¹⁹``.

MACs and FLOPs are never mixed up: one multiply-accumulate is two floating-point
operations (a multiply and an add), and every quantity says which of the two it counts.

>>> decimal_bytes(51_200_000_000)
'51.2 GB'
>>> binary_bytes(51_200_000_000)
'47.68 GiB'
>>> binary_bytes(1_048_576)
'1 MiB'
>>> describe_bytes(4_096_000)
'4,096,000 bytes (4.1 MB, 3.91 MiB)'
>>> in_words(8_388_608)
'8.39 million'
>>> latex_number(51_200_000_000)
'51{,}200{,}000{,}000'
>>> percent(1 / 32), times(44.4), times(1.53), plural(1, "row"), plural(3, "row")
('3.1%', '44×', '1.5×', '1 row', '3 rows')
"""

from __future__ import annotations

import decimal
import math
import numbers
from collections.abc import Callable, Mapping
from decimal import Decimal
from fractions import Fraction
from typing import Literal

from gpuconcepts import words
from gpuconcepts.errors import GpuConceptsError, GpuConceptsTypeError

Kind = Literal["bytes", "MACs", "FLOPs", "count", "FLOP/byte", "FLOP/s", "seconds"]
Real = int | float | Fraction

# The words around the numbers live in gpuconcepts.words; reached here too (units.listing).
article, listing, with_article = words.article, words.listing, words.with_article

FLOPS_PER_MAC = 2
"""A multiply-accumulate is one multiply plus one add: two FLOPs."""

MiB = 1024**2
"""Bytes in a mebibyte (binary); a megabyte (decimal) is 10**6."""
GiB = 1024**3
"""Bytes in a gibibyte (binary); a gigabyte (decimal) is 10**9."""
US = 1e-6
"""Seconds in a microsecond."""

_DECIMAL = ("bytes", "kB", "MB", "GB", "TB", "PB")
_BINARY = ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB")
_WORDS = ((10**12, "trillion"), (10**9, "billion"), (10**6, "million"), (10**3, "thousand"))
_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
_FIXED_RANGE = (Decimal("1e-4"), Decimal("1e15"))
_FLOAT_EXACT = 2**53  # a float holds every integer below this exactly
# Enough digits for any quotient the book divides; ints are converted without this limit.
_CONTEXT = decimal.Context(prec=60, rounding=decimal.ROUND_HALF_EVEN, Emax=10**9, Emin=-(10**9))


def _usable(value: object) -> None:
    """Refuse what no sentence can state: not a real number, NaN or an infinity.

    >>> significant(float("nan"))
    Traceback (most recent call last):
    ...
    gpuconcepts.errors.GpuConceptsError: nan is not a number a reader can use
    >>> describe_bytes("12")
    Traceback (most recent call last):
    ...
    gpuconcepts.errors.GpuConceptsTypeError: '12' (str) is not a number
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise GpuConceptsTypeError(f"{value!r:.60} ({type(value).__name__}) is not a number")
    if not isinstance(value, numbers.Rational) and not math.isfinite(float(value)):
        raise GpuConceptsError(f"{value!r} is not a number a reader can use")


def _decimal(value: Real) -> Decimal:
    """``value`` as a Decimal: ints and floats exactly, a Fraction to 60 digits.

    (Decimal converts even a 10,000-digit int, which ``str()`` refuses.)
    """
    _usable(value)
    if isinstance(value, Fraction):
        return _CONTEXT.divide(Decimal(value.numerator), Decimal(value.denominator))
    return Decimal(value)


def is_whole(value: Real) -> bool:
    """True for an int, a whole Fraction, or a whole float small enough to be an exact count."""
    if isinstance(value, int):
        return True
    if isinstance(value, Fraction):
        return value.denominator == 1
    return math.isfinite(value) and value.is_integer() and abs(value) < _FLOAT_EXACT


def _grouped(value: int) -> str:
    return format(Decimal(value), ",")


def _plain_decimal(value: Decimal) -> str:
    """A Decimal in fixed notation with thousands separators and no trailing zeros."""
    text = format(value, ",f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _round(value: Decimal, digits: int) -> Decimal:
    """``value`` rounded to ``digits`` significant digits (half to even, as Python rounds)."""
    if value == 0:
        return value
    quantum = Decimal(1).scaleb(value.adjusted() - digits + 1)
    return value.quantize(quantum, context=_CONTEXT)


def _parts(value: Real, digits: int) -> tuple[str, int | None]:
    """``(mantissa, exponent)``: exponent None when the number reads best in fixed notation."""
    rounded = _round(_decimal(value), digits)
    if rounded == 0 or _FIXED_RANGE[0] <= abs(rounded) < _FIXED_RANGE[1]:
        return _plain_decimal(rounded), None
    exponent = rounded.adjusted()
    return _plain_decimal(rounded.scaleb(-exponent)), exponent


def significant(value: Real, digits: int = 3) -> str:
    """``value`` with ``digits`` significant digits, separators and no trailing zeros.

    >>> significant(0.125), significant(315.08), significant(1_462_608.4), significant(2 / 3)
    ('0.125', '315', '1,460,000', '0.667')
    >>> significant(Fraction(2 * 10**320, 3))
    '6.67×10³¹⁹'
    """
    mantissa, exponent = _parts(value, digits)
    if exponent is None:
        return mantissa
    return f"{mantissa}×10{str(exponent).translate(_SUPERSCRIPT)}"


def plain_number(n: Real) -> str:
    """An exact count in full with separators (``51,200,000,000``); anything else to 3 digits."""
    if is_whole(n):
        return _grouped(int(n))
    return significant(n)


def number(value: object, digits: int = 3) -> str:
    """A value in a message or a claim's text that may be unmeasured or unbounded: as
    :func:`plain_number` (an exact count in full, anything else to ``digits`` significant
    digits), a NumPy scalar as its Python number, and a value that is not a number or is infinite as Python writes it
    (``nan``, ``inf``) instead of refused.

    >>> number(0.12345), number(1_462_608), number(0.98765, 2), number(float("-inf")), number(2.0)
    ('0.123', '1,462,608', '0.99', '-inf', '2')
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        _usable(value)  # raises: not a number
    shown: Real = (
        int(value)
        if isinstance(value, numbers.Integral)
        else value
        if isinstance(value, Fraction)
        else float(value)  # type: ignore[arg-type]
    )
    if isinstance(shown, float) and not math.isfinite(shown):
        return str(shown)
    if is_whole(shown):
        return _grouped(int(shown))
    return significant(shown, digits)


NOTHING = "—"
"""What a reader sees where a run measured no usable value (none, not a number, unbounded)."""


def measured_or_dash(value: object, show: Callable[[float], str] | None = None) -> str:
    """A measured value for a reader: ``show(value)`` (default :func:`significant`), or
    :data:`NOTHING` where the run measured nothing usable (None, nan, an infinity). A busy
    machine leaves such values; a page says "—" for them, never "nan", "inf" or "None".

    >>> measured_or_dash(0.5), measured_or_dash(float("nan")), measured_or_dash(None)
    ('0.5', '—', '—')
    >>> measured_or_dash(float("inf"), times), measured_or_dash(2e-6, seconds)
    ('—', '2 µs')
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        if value is None:
            return NOTHING
        _usable(value)  # raises: not a number at all is a bug, not a measurement
    if not math.isfinite(float(value)):  # type: ignore[arg-type]
        return NOTHING
    return (show or significant)(value)  # type: ignore[arg-type]


def latex_number(n: Real) -> str:
    """A number for LaTeX: ``{,}`` as the thousands separator so no space is added.

    >>> latex_number(0.1), latex_number(Fraction(1, 10**320))
    ('0.1', '1 \\\\times 10^{-320}')
    """
    if is_whole(n):
        return _grouped(int(n)).replace(",", "{,}")
    mantissa, exponent = _parts(n, 3)
    mantissa = mantissa.replace(",", "{,}")
    return mantissa if exponent is None else rf"{mantissa} \times 10^{{{exponent}}}"


def _two_decimals(value: Decimal) -> str:
    """Up to two decimals, no trailing zeros: 47.68, 1, 3.9 (the post's style for sizes)."""
    if abs(value) >= _FIXED_RANGE[1]:
        return significant(Fraction(value), 4)
    rounded = value.quantize(Decimal("0.01"), context=_CONTEXT)
    return _plain_decimal(rounded)


def _scaled(n: Real, base: int, names: tuple[str, ...]) -> str:
    value = _decimal(n)
    index = 0
    while abs(value) >= base and index < len(names) - 1:
        value /= base
        index += 1
    return f"{_two_decimals(value)} {names[index]}"


def decimal_bytes(n: Real) -> str:
    """Bytes in powers of 1000 (kB, MB, GB), as storage datasheets count."""
    return _scaled(n, 1000, _DECIMAL)


def binary_bytes(n: Real) -> str:
    """Bytes in powers of 1024 (KiB, MiB, GiB), as memory allocators count."""
    return _scaled(n, 1024, _BINARY)


def exact_number(n: Real, max_places: int = 6) -> str:
    """``n`` in full with separators when it has a short exact decimal (``11,942,443.5``, the
    bytes of 4-bit values), else to 3 significant digits (see :func:`plain_number`).

    >>> exact_number(11_942_443.5), exact_number(51_200_000_000), exact_number(2 / 3)
    ('11,942,443.5', '51,200,000,000', '0.667')
    """
    _usable(n)
    if is_whole(n):
        return _grouped(int(n))
    value = Fraction(n)
    for places in range(1, max_places + 1):
        if (value * 10**places).denominator == 1:
            return f"{Decimal(value.numerator) / Decimal(value.denominator):,.{places}f}"
    return significant(n)


def describe_bytes(n: Real) -> str:
    """Exact bytes, then the decimal and the binary form: the way the book states memory.

    >>> describe_bytes(11_942_443.5)
    '11,942,443.5 bytes (11.94 MB, 11.39 MiB)'
    """
    return f"{exact_number(n)} bytes ({decimal_bytes(n)}, {binary_bytes(n)})"


def in_words(n: Real) -> str:
    """A large count in words, as the post writes it: ``78.64 million``."""
    value = _decimal(n)
    if abs(value) >= 1000 * _WORDS[0][0]:
        return significant(n, 3)
    for size, word in _WORDS:
        if abs(value) >= size:
            return f"{_two_decimals(value / size)} {word}"
    return plain_number(n)


def describe(value: Real, kind: Kind) -> str:
    """One line for a value of a given kind: bytes in both unit systems, counts in words.

    Counts from a million up are also given in words; the unit is written once:
    ``4,718,592 MACs (4.72 million)``.

    >>> describe(16_777_216, "FLOPs")
    '16,777,216 FLOPs (16.78 million)'
    >>> describe(315.08, "FLOP/byte")
    '315 FLOP/byte'
    >>> describe(4_000_000, "count")
    '4,000,000 (4 million)'
    >>> describe(0.00507, "seconds"), describe(2, "seconds")
    ('5.07 ms', '2 s')
    """
    if kind == "bytes":
        return describe_bytes(value)
    if kind == "seconds":  # a decode step is milliseconds: "0.01 seconds" would hide it
        return si(float(value), "s")
    unit = "" if kind == "count" else f" {kind}"  # a count is a bare number, not a unit
    if kind in ("MACs", "FLOPs", "count") and is_whole(value) and abs(_decimal(value)) >= 10**6:
        return f"{plain_number(value)}{unit} ({in_words(value)})"
    return f"{plain_number(value)}{unit}"


_SI = ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))


def si(value: float, unit: str, digits: int = 3) -> str:
    """A value with an SI prefix and ``digits`` significant digits: ``12.3 GFLOP/s``.

    Times and rates are always printed this way, so one quantity reads the same on every page.

    >>> si(1.234e10, "FLOP/s"), si(0.5, "FLOP/byte"), si(3.2e-5, "s"), si(9.996e-4, "s")
    ('12.3 GFLOP/s', '0.5 FLOP/byte', '32 µs', '1 ms')
    """
    shown = abs(float(_round(_decimal(value), digits)))  # the prefix of 999.6 µs is m: 1 ms
    if unit == "s" and 0 < shown < 1:
        for scale, prefix in ((1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns"), (1e-12, "ps")):
            if shown >= scale:
                return f"{significant(value / scale, digits)} {prefix}"
        return f"{significant(value, digits)} s"
    for scale, prefix in _SI:
        if shown >= scale:
            return f"{significant(value / scale, digits)} {prefix}{unit}"
    return f"{significant(value, digits)} {unit}".rstrip()


def seconds(value: float) -> str:
    """A time: ``32 µs``, ``1.5 s`` (three significant digits)."""
    return si(value, "s")


def how_many(ratio: float) -> str:
    """A ratio for "N times as long": whole from 10 up, two significant digits below.

    >>> how_many(44.4), how_many(48_828.125), how_many(1.53), how_many(0.517)
    ('44', '48,828', '1.5', '0.52')
    """
    if abs(ratio) >= 10:
        return _grouped(round(ratio))
    return significant(ratio, 2)


def as_long(ratio: float, than: str) -> str:
    """How long one time took against another, in words that fit the ratio: a ratio that
    rounds to one reads "as long as", with no count of times.

    >>> as_long(0.97, "the naive loop"), as_long(1.004, "the hoisted one"), as_long(2.5, "it")
    ('0.97 times as long as the naive loop', 'as long as the hoisted one', '2.5 times as long as it')
    """
    shown = how_many(ratio)
    return f"as long as {than}" if shown == "1" else f"{shown} times as long as {than}"


def times(ratio: float) -> str:
    """How many times larger, with the sign: ``44×``, ``1.5×`` (see :func:`how_many`)."""
    return f"{how_many(ratio)}×"


def percent(fraction: float, digits: int = 2) -> str:
    """A fraction as a percentage with ``digits`` significant digits: ``0.03125`` → ``3.1%``.

    >>> percent(0.5), percent(1.0), percent(0.00003125), percent(0.956)
    ('50%', '100%', '0.0031%', '96%')
    """
    if fraction == 0:
        return "0%"
    return f"{significant(Fraction(fraction) * 100, digits)}%"


def plural(n: Real, word: str, many: str | None = None) -> str:
    """A count and its noun, singular for exactly one: ``1 row``, ``2,048 rows``."""
    return f"{plain_number(n)} {word if n == 1 else many or word + 's'}"


def sizes(params: Mapping[str, object]) -> str:
    """Kernel sizes as ``B=4,096, d_in=512, float32``: the element size ``s`` is left out and
    the data type is shown bare, last.

    >>> sizes({"B": 4096, "d_in": 512, "s": 4, "dtype": "float32"})
    'B=4,096, d_in=512, float32'
    """
    shown = [
        f"{k}={plain_number(v) if isinstance(v, int | float) else v}"
        for k, v in params.items()
        if k not in ("s", "dtype")
    ]
    if "dtype" in params:
        shown.append(str(params["dtype"]))
    return ", ".join(shown)
