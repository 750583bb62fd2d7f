"""Words for people around the numbers: a list as a person says it, and the article before a
phrase read aloud (numbers and acronyms included). :mod:`gpuconcepts.units` formats the numbers
and reaches these names too (``units.listing``).

>>> with_article("8.39 MB table"), with_article("11 GB table"), with_article("1.1 GB table")
('an 8.39 MB table', 'an 11 GB table', 'a 1.1 GB table')
"""

from __future__ import annotations

import re
from collections.abc import Sequence


def listing(items: Sequence[str]) -> str:
    """Words joined as a person lists them: ``a``, ``a and b``, ``a, b and c``.

    >>> listing(["DLRM"]), listing(["DLRM", "the MLP", "the CNN"]), listing([])
    ('DLRM', 'DLRM, the MLP and the CNN', '')
    """
    if len(items) <= 1:
        return "".join(items)
    return f"{', '.join(items[:-1])} and {items[-1]}"


# Numbers whose spoken form starts with a vowel: 8, 80, 8,000; 11 and 18 (and 11,000, 18.5).
_AN_NUMBER = re.compile(r"^(8|1[18](?![\d]))")
# Letters whose names start with a vowel sound, for acronyms: an FP32 value, an H100, an MLP.
_VOWEL_LETTERS = frozenset("AEFHILMNORSX")


def article(text: str) -> str:
    """``a`` or ``an``, by how ``text`` is read aloud (numbers and acronyms included)."""
    first = text.lstrip("*_`$")
    if not first:
        return "a"
    if first[0].isdigit():
        return "an" if _AN_NUMBER.match(first) else "a"
    word = re.match(r"[A-Za-z0-9]+", first)
    token = word.group(0) if word else first
    if (len(token) > 1 and token[:2].isupper()) or (token[0].isupper() and token[1:2].isdigit()):
        return "an" if token[0] in _VOWEL_LETTERS else "a"
    return "an" if token[0].lower() in "aeiou" else "a"


def with_article(text: str) -> str:
    """``text`` with its article in front: ``an 8.39 MB table``, ``a 1 MiB batch``."""
    return f"{article(text)} {text}"
