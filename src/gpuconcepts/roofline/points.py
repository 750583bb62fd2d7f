"""A random-access sweep point's parts, read one way wherever a point is: the rows one call
fetched (:func:`random_rows_per_call`; a point saved before calls of several sizes were swept
has none) and its key among :attr:`Peaks.ceiling_seconds
<gpuconcepts.roofline.peaks.Peaks.ceiling_seconds>` (:func:`random_key`); the key of a cold
sweep's point (:func:`cold_key`), and whether a key names a time or a rate
(:func:`is_seconds`).
"""

from __future__ import annotations

RANDOM_ROWS_BEFORE = 2**18
"""The rows per call of every point of a random-access sweep saved before calls of several
sizes were swept (2026-12-04): one call size, 2**18 rows in bags of 16."""


def random_rows_per_call(point: tuple[int, int, float] | tuple[int, int, int, float]) -> int:
    """How many rows one call of a random-access sweep point fetched: its third entry, or
    :data:`RANDOM_ROWS_BEFORE` for a point saved before the sweep had several call sizes.

    >>> random_rows_per_call((2**28, 16, 2**16, 3e7)), random_rows_per_call((2**28, 16, 3e7))
    (65536, 262144)
    """
    return point[2] if len(point) == 4 else RANDOM_ROWS_BEFORE


def random_key(point: tuple[int, int, float] | tuple[int, int, int, float]) -> str:
    """A random-access point's key among :attr:`Peaks.ceiling_seconds
    <gpuconcepts.roofline.peaks.Peaks.ceiling_seconds>`: its table, row and rows per call
    (:func:`random_rows_per_call`), as a measurement's references name a point.

    >>> random_key((2**28, 16, 3e7))
    'random 268435456 16 262144'
    """
    return f"random {point[0]} {point[1]} {random_rows_per_call(point)}"


def cold_key(size: int) -> str:
    """A cold sweep point's key among :attr:`Peaks.ceiling_seconds
    <gpuconcepts.roofline.peaks.Peaks.ceiling_seconds>`: the bytes it read.

    >>> cold_key(2**20)
    'cold 1048576'
    """
    return f"cold {size}"


def is_seconds(key: str) -> bool:
    """Whether the ceiling a key of :attr:`Peaks.ceiling_seconds
    <gpuconcepts.roofline.peaks.Peaks.ceiling_seconds>` names is a time (a floor, a ``_seconds``
    field, or a cold sweep's point), which its repetitions' median gives as it is, rather than
    a rate, its work over that median.

    >>> is_seconds("op_seconds"), is_seconds("cold 1048576"), is_seconds("bytes_per_s")
    (True, True, False)
    """
    return key.endswith("_seconds") or key.startswith("cold ")
