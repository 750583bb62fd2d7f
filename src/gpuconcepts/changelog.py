"""The dated log of changes made to the model after a run had been seen, as data.

Each change is a :class:`Change` (date, topic, what changed, why, and its effect on the
runs), kept in ``docs/changes.toml`` and shown in the book's appendix (``docs/changes.md``).
A docstring keeps the rule and a one-line reason; the history lives here.

>>> entries = parse_changes('''
... [[change]]
... date = 2026-12-06
... topic = "roofs"
... what = "The verdict is the post's model."
... why = "The roofs were circular."
... effect = "Each kernel shows one bound."
... ''')
>>> entries[0].date.isoformat(), entries[0].topic
('2026-12-06', 'roofs')
>>> print(changes_markdown(entries))
### 2026-12-06 (roofs)
<BLANKLINE>
- **What:** The verdict is the post's model.
- **Why:** The roofs were circular.
- **Effect:** Each kernel shows one bound.
"""

from __future__ import annotations

import datetime as dt
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, fields
from pathlib import Path

from gpuconcepts.errors import GpuConceptsError


@dataclass(frozen=True)
class Change:
    """One dated change: what changed, why, and its effect on the runs."""

    date: dt.date
    topic: str
    what: str
    why: str
    effect: str


def parse_changes(text: str, source: str = "the change log") -> tuple[Change, ...]:
    """The changes of a TOML text (a ``[[change]]`` table per entry), oldest first; a clear
    error naming the entry for one that lacks a field or is out of date order.

    >>> parse_changes('[[change]]\\ndate = 2026-12-06\\ntopic = "roofs"\\nwhat = "x"')
    Traceback (most recent call last):
    ...
    gpuconcepts.errors.GpuConceptsError: the change log: entry 1 (2026-12-06) lacks why, effect
    """
    try:
        tables = tomllib.loads(text).get("change", [])
    except tomllib.TOMLDecodeError as error:
        raise GpuConceptsError(f"{source}: not valid TOML ({error})") from error
    names = [f.name for f in fields(Change)]
    out: list[Change] = []
    for i, table in enumerate(tables, start=1):
        label = f"entry {i} ({table.get('date', 'no date')})"
        missing = [name for name in names if not table.get(name)]
        if missing:
            raise GpuConceptsError(f"{source}: {label} lacks {', '.join(missing)}")
        extra = sorted(set(table) - set(names))
        if extra:
            raise GpuConceptsError(f"{source}: {label} has unknown fields {', '.join(extra)}")
        if not isinstance(table["date"], dt.date):
            raise GpuConceptsError(f"{source}: {label}: date must be a TOML date (YYYY-MM-DD)")
        change = Change(**{name: table[name] for name in names})
        if out and change.date < out[-1].date:
            raise GpuConceptsError(f"{source}: {label} is older than the entry before it")
        out.append(change)
    return tuple(out)


def load_changes(path: Path) -> tuple[Change, ...]:
    """The changes kept in the TOML file ``path``."""
    if not path.is_file():
        raise GpuConceptsError(f"change log {str(path)!r} not found")
    return parse_changes(path.read_text(encoding="utf-8"), source=str(path))


def changes_markdown(changes: Sequence[Change]) -> str:
    """The changes as Markdown for the appendix: a heading per entry, its what, why, effect."""
    return "\n\n".join(
        f"### {c.date.isoformat()} ({c.topic})\n\n"
        f"- **What:** {c.what}\n- **Why:** {c.why}\n- **Effect:** {c.effect}"
        for c in changes
    )


def first_dated(changes: Sequence[Change], topic: str) -> dt.date:
    """The day of the first change logged under ``topic``: what a page says when it dates a
    rule ("runs recorded before ..."), read from the log rather than typed; a clear error
    naming the topic when the log holds none.

    >>> first_dated(parse_changes(_EXAMPLE), "roofs").isoformat()
    '2026-12-06'
    >>> first_dated(parse_changes(_EXAMPLE), "knees")
    Traceback (most recent call last):
    ...
    gpuconcepts.errors.GpuConceptsError: the change log has no entry under the topic 'knees'
    """
    for change in changes:
        if change.topic == topic:
            return change.date
    raise GpuConceptsError(f"the change log has no entry under the topic {topic!r}")


def about(changes: Sequence[Change], keys: Sequence[str]) -> tuple[Change, ...]:
    """The changes that concern the claims ``keys``: an entry whose topic is a key in words
    (``decode-floor`` → "decode floor") or whose text names a key as code, between backticks.

    >>> [c.topic for c in about(parse_changes(_EXAMPLE), ["decode-knee", "roofs-x"])]
    ['decode knee', 'ratio claims']
    """
    words = {key.replace("-", " ") for key in keys}
    named = tuple(f"`{key}`" for key in keys)
    return tuple(
        c
        for c in changes
        if c.topic in words or any(key in f"{c.what} {c.why} {c.effect}" for key in named)
    )


_EXAMPLE = """
[[change]]
date = 2026-12-06
topic = "roofs"
what = "The verdict is the post's model."
why = "The roofs were circular."
effect = "Each kernel shows one bound."
[[change]]
date = 2026-12-06
topic = "decode knee"
what = "The knee reads the measured peak."
why = "w"
effect = "e"
[[change]]
date = 2026-12-07
topic = "ratio claims"
what = "`decode-knee` leaves the tally."
why = "w"
effect = "e"
"""
