"""The dated log of the model's changes: data in docs/changes.toml, shown in the appendix."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from gpuconcepts.changelog import changes_markdown, load_changes, parse_changes
from gpuconcepts.errors import GpuConceptsError

LOG = Path(__file__).parent.parent / "docs" / "changes.toml"


def test_the_log_is_dated_in_order_and_every_entry_says_what_why_and_effect() -> None:
    changes = load_changes(LOG)
    assert len(changes) >= 8
    assert changes[0].date == dt.date(2026, 12, 1)
    assert [c.date for c in changes] == sorted(c.date for c in changes)
    assert all(c.what and c.why and c.effect and c.topic for c in changes)
    # the change that made the verdict the post's model is logged with the issue that asked
    assert any(c.date == dt.date(2026, 12, 6) and "issue 36" in c.why for c in changes)
    text = changes_markdown(changes)
    assert text.count("### 2026-") == len(changes)
    assert "\\\n" not in text  # the TOML line continuations joined the lines


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[[change]]\ndate = 2026-12-01\ntopic = "t"\nwhat = "w"\nwhy = "y"',
         r"entry 1 \(2026-12-01\) lacks effect"),
        ('[[change]]\ndate = "yesterday"\ntopic = "t"\nwhat = "w"\nwhy = "y"\neffect = "e"',
         "date must be a TOML date"),
        (('[[change]]\ndate = 2026-12-01\ntopic = "t"\nwhat = "w"\nwhy = "y"\neffect = "e"\n'
         "size = 3"), "has unknown fields size"),
        (('[[change]]\ndate = 2026-12-02\ntopic = "t"\nwhat = "w"\nwhy = "y"\neffect = "e"\n'
         '[[change]]\ndate = 2026-12-01\ntopic = "t"\nwhat = "w"\nwhy = "y"\neffect = "e"'),
         "entry 2 .* is older than the entry before it"),
        ("date = = 3", "not valid TOML"),
    ],
)  # fmt: skip
def test_a_bad_entry_is_refused_by_name(text: str, message: str) -> None:
    with pytest.raises(GpuConceptsError, match=message):
        parse_changes(text)


def test_a_missing_log_is_named(tmp_path: Path) -> None:
    with pytest.raises(GpuConceptsError, match=r"change log .*nowhere\.toml' not found"):
        load_changes(tmp_path / "nowhere.toml")
