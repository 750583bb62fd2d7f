"""Numbers for people: bytes in decimal and binary units, counts in words, LaTeX digits.

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
"""

from __future__ import annotations

from typing import Literal

Kind = Literal["bytes", "MACs", "FLOPs", "count", "FLOP/byte", "FLOP/s", "seconds"]

FLOPS_PER_MAC = 2
"""A multiply-accumulate is one multiply plus one add: two FLOPs."""

MiB = 1024**2
"""Bytes in a mebibyte (binary); a megabyte (decimal) is 10**6."""
GiB = 1024**3
"""Bytes in a gibibyte (binary); a gigabyte (decimal) is 10**9."""

_DECIMAL = ("bytes", "kB", "MB", "GB", "TB", "PB")
_BINARY = ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB")
_WORDS = ((10**12, "trillion"), (10**9, "billion"), (10**6, "million"), (10**3, "thousand"))


def _trim(value: float, digits: int = 2) -> str:
    """``value`` with ``digits`` decimals and no trailing zeros: 47.68, 1, 3.9."""
    text = f"{value:,.{digits}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _scaled(n: float, base: int, names: tuple[str, ...]) -> str:
    index = 0
    while abs(n) >= base and index < len(names) - 1:
        n /= base
        index += 1
    return f"{_trim(n)} {names[index]}"


def decimal_bytes(n: float) -> str:
    """Bytes in powers of 1000 (kB, MB, GB), as storage datasheets count."""
    return _scaled(n, 1000, _DECIMAL)


def binary_bytes(n: float) -> str:
    """Bytes in powers of 1024 (KiB, MiB, GiB), as memory allocators count."""
    return _scaled(n, 1024, _BINARY)


def plain_number(n: float) -> str:
    """A number with thousands separators: ``51,200,000,000``; non-integers keep 2 decimals."""
    if float(n).is_integer():
        return f"{int(n):,}"
    return _trim(float(n))


def describe_bytes(n: float) -> str:
    """Exact bytes, then the decimal and the binary form: the way the book states memory."""
    return f"{plain_number(n)} bytes ({decimal_bytes(n)}, {binary_bytes(n)})"


def in_words(n: float) -> str:
    """A large count in words, as the post writes it: ``78.64 million``."""
    for size, word in _WORDS:
        if abs(n) >= size:
            return f"{_trim(n / size)} {word}"
    return plain_number(n)


def describe(value: float, kind: Kind) -> str:
    """One line for a value of a given kind: bytes in both unit systems, counts in words.

    >>> describe(16_777_216, "FLOPs")
    '16,777,216 FLOPs (16.78 million FLOPs)'
    >>> describe(315.08, "FLOP/byte")
    '315.08 FLOP/byte'
    >>> describe(4_000_000, "count")
    '4,000,000 (4 million)'
    >>> describe(0.00507, "seconds"), describe(2, "seconds")
    ('5.07 ms', '2 s')
    """
    if kind == "bytes":
        return describe_bytes(value)
    if kind == "seconds":  # a decode step is milliseconds: "0.01 seconds" would hide it
        return si(value, "s")
    unit = "" if kind == "count" else f" {kind}"  # a count is a bare number, not a unit
    if kind in ("MACs", "FLOPs", "count") and abs(value) >= 1000:
        return f"{plain_number(value)}{unit} ({in_words(value)}{unit})"
    return f"{plain_number(value)}{unit}"


def latex_number(n: float) -> str:
    """A number for LaTeX: ``{,}`` as the thousands separator so no space is added."""
    return plain_number(n).replace(",", "{,}")


_SI = ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))


def si(value: float, unit: str, digits: int = 3) -> str:
    """A value with an SI prefix and ``digits`` significant digits: ``12.3 GFLOP/s``.

    >>> si(1.234e10, "FLOP/s"), si(0.5, "FLOP/byte"), si(3.2e-5, "s"), si(0.125, "")
    ('12.3 GFLOP/s', '0.5 FLOP/byte', '32 µs', '0.125')
    """
    if unit == "s" and 0 < abs(value) < 1:
        for scale, prefix in ((1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")):
            if abs(value) >= scale:
                return f"{float(f'{value / scale:.{digits}g}'):g} {prefix}"
        return f"{value:.{digits}g} s"
    for scale, prefix in _SI:
        if abs(value) >= scale:
            return f"{float(f'{value / scale:.{digits}g}'):g} {prefix}{unit}"
    return f"{float(f'{value:.{digits}g}'):g} {unit}".rstrip()
