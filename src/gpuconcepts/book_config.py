"""What the book's configuration (``docs/conf.py``) reads before any page is read: the hash
that keys the execution cache, and the status marks as words.

Kept apart from :mod:`gpuconcepts.book` and light (no sympy, no torch), so that a rebuild in
which no page is read starts without loading the library.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.files import presets_path


def package_hash(root: Path | None = None) -> str:
    """A short hash of what the book's pages execute: the package's ``*.py`` and its presets.

    ``root`` is a checkout (its ``src/gpuconcepts`` is hashed); without it, the installed
    package is hashed, which is what a notebook on Colab runs. The two agree for the same
    sources (the presets are read where :func:`~gpuconcepts.files.presets_path` finds them: a
    build copies ``conf/presets.toml`` into the package).
    ``docs/conf.py`` names MyST-NB's execution cache after it, so any change to the package or
    to the kernel presets re-runs every page; the execution report prints it.

    >>> import gpuconcepts
    >>> root = Path(gpuconcepts.__file__).resolve().parents[2]
    >>> len(package_hash(root)), package_hash(root) == package_hash()
    (16, True)
    """
    if root is None:
        package, presets = Path(__file__).parent, presets_path()
    else:
        package, presets = root / "src" / "gpuconcepts", root / "conf" / "presets.toml"
    if not package.is_dir():
        raise GpuConceptsError(f"package_hash: {package} holds no gpuconcepts package")
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode())
        digest.update(path.read_bytes())
    if presets.is_file():
        digest.update(b"presets.toml")
        digest.update(presets.read_bytes())
    return digest.hexdigest()[:16]


_STATUS_MARKS = {"\u2705": "succeeded", "\u274c": "failed", "\u2796": "not run"}


def plain_status(text: str) -> str:
    """Status emoji as words: a mark alone becomes a word, a mark before a word is dropped.

    MyST-NB's execution table uses emoji that many fonts (headless
    Chromium's among them) draw as an empty box; ``docs/conf.py`` passes every text of the
    book through this function.

    >>> plain_status("\u2705"), plain_status("\u274c does not hold"), plain_status("no mark")
    ('succeeded', 'does not hold', 'no mark')
    """
    stripped = text.strip()
    if stripped in _STATUS_MARKS:
        return text.replace(stripped, _STATUS_MARKS[stripped])
    for mark in _STATUS_MARKS:
        text = text.replace(f"{mark} ", "")
    return text
