"""Writing files so that they are either wholly new or wholly old: never half written.

Every file gpuconcepts writes (``profile --save``, the book's cached Run, its notebooks and
scripts, figures through :func:`save_figure`) goes through :func:`write_atomic`: the bytes go to a temporary file in the same
folder, are flushed and synced to the disk, and only then renamed over the destination
(:func:`os.replace`, atomic on POSIX). A full disk, a signal or a crash part way leaves the
earlier file as it was, byte for byte, and no temporary file behind.

A save writes a new file or replaces a regular one, and nothing else: a destination that exists
and is a directory, a device (``/dev/null``, ``/dev/full``), a named pipe or a socket is refused,
never renamed over. A symbolic link is followed: the file it leads to is written (or refused by
the same rule), and the link stays. A path that cannot be written is one
:class:`~gpuconcepts.errors.GpuConceptsError` naming the path and the cause, and
:func:`check_writable` says so before anything long runs:

>>> import tempfile
>>> folder = Path(tempfile.mkdtemp())
>>> write_atomic(folder / "run.json", "{}\\n")
>>> (folder / "run.json").read_text(), os.listdir(folder)
('{}\\n', ['run.json'])
>>> write_atomic(folder / "run.json" / "under.json", "{}")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
gpuconcepts.errors.GpuConceptsError: cannot write .../run.json/under.json: a folder on its path is a file
>>> import shutil; shutil.rmtree(folder)
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

from gpuconcepts.errors import GpuConceptsError

_CAUSES = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is exceeded",
    errno.EFBIG: "the file is larger than this process may write",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.EROFS: "the file system is read-only",
    errno.EISDIR: "it is a directory",
    errno.ENOTDIR: "a folder on its path is a file",
    errno.ENOENT: "a folder on its path does not exist",
    errno.ENAMETOOLONG: "the name is too long",
}


def cause(error: OSError) -> str:
    """An OSError's cause in words (the system's own text when it is not a common one).

    >>> cause(OSError(errno.ENOSPC, "No space left on device"))
    'the disk is full'
    >>> cause(OSError(errno.EIO, "Input/output error"))
    'Input/output error'
    """
    if error.errno in _CAUSES:
        return _CAUSES[error.errno]
    return error.strerror or str(error)


def _refuse(path: Path, error: OSError) -> GpuConceptsError:
    return GpuConceptsError(f"cannot write {path}: {cause(error)}")


_SPECIAL = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISSOCK, "a socket"),
)
RULE = "a save writes a new file or replaces a regular one"
"""What :func:`destination` allows, said after every refusal."""


def destination(path: str | Path, what: str = "a save") -> Path:
    """The file a save to ``path`` writes: ``path``, or the file its symbolic link leads to.

    This is the one home of the rule in the module's docstring; :func:`write_atomic` and
    :func:`check_writable` both apply it, so a command can refuse a destination before it
    measures anything. ``what`` names the save in the message for an empty path (``--save``):

    >>> destination("")
    Traceback (most recent call last):
    ...
    gpuconcepts.errors.GpuConceptsError: a save needs a file path; got ''
    >>> destination("/dev/null")
    Traceback (most recent call last):
    ...
    gpuconcepts.errors.GpuConceptsError: cannot write /dev/null: it is a character device; a save writes a new file or replaces a regular one
    """
    if not os.fspath(path):  # Path("") is ".", the current folder, which is never meant
        raise GpuConceptsError(f"{what} needs a file path; got ''")
    path = Path(path)
    target = Path(os.path.realpath(path))  # every link followed, as `>` in a shell would
    try:
        mode = target.stat().st_mode
    except FileNotFoundError:  # a new file (a link to one not made yet too)
        return target
    except OSError as error:  # a file where a folder should be, a loop of links, no access
        raise _refuse(path, error) from None
    if stat.S_ISREG(mode):
        return target
    kind = next((kind for special, kind in _SPECIAL if special(mode)), "not a regular file")
    link = f" (a link to {target})" if path.is_symlink() else ""
    raise GpuConceptsError(f"cannot write {path}{link}: it is {kind}; {RULE}")


def _prepare(target: Path, shown: Path) -> None:
    """Make the parent folders of ``target`` (a :func:`destination`); errors name ``shown``."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except FileExistsError:  # a file where a folder of the path should be
        raise GpuConceptsError(f"cannot write {shown}: a folder on its path is a file") from None
    except OSError as error:
        raise _refuse(shown, error) from None


def write_atomic(path: str | Path, content: str | bytes) -> None:
    """Write ``content`` (text as UTF-8) to ``path`` at once or not at all.

    The content goes to a temporary file beside ``path`` (same folder, so the rename cannot
    cross file systems), is flushed and fsynced, then replaces ``path``. When anything fails
    on the way, including an interrupt, the temporary file is removed and ``path`` keeps its
    old content. Parent folders are made. The new file keeps the permissions of the one it
    replaces (or gets those a plain ``open(path, "w")`` would give). A destination that is
    not a regular file is refused, and a link is written through (:func:`destination`).
    """
    shown = Path(path)
    data = content.encode("utf-8") if isinstance(content, str) else content
    handle, temporary, path = _temporary(path)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        temporary.chmod(_mode(path))
        temporary.replace(path)
    except OSError as error:
        _remove(temporary)
        raise _refuse(shown, error) from None
    except BaseException:  # an interrupt part way: the destination keeps its old content
        _remove(temporary)
        raise
    _sync_folder(path.parent)


def save_figure(figure: Any, path: str | Path, **options: Any) -> None:
    """Save a matplotlib figure to ``path`` through :func:`write_atomic`; the format comes
    from the suffix (``.svg``, ``.png``, ``.pdf``), ``options`` go to ``savefig``."""
    path = Path(path)
    kind = path.suffix.lstrip(".").lower()
    if not kind:
        raise GpuConceptsError(f"cannot write {path}: give the figure a suffix (.svg, .png, .pdf)")
    buffer = io.BytesIO()
    try:
        figure.savefig(buffer, format=kind, **options)
    except ValueError as error:  # matplotlib: an unknown format
        raise GpuConceptsError(f"cannot write {path}: {error}") from None
    write_atomic(path, buffer.getvalue())


def check_writable(path: str | Path, what: str = "a save") -> None:
    """Raise a :class:`GpuConceptsError` now when :func:`write_atomic` could not write
    ``path`` (empty, a directory, a device, a pipe, a file on its path, a read-only folder),
    before anything long runs; ``what`` names the save as :func:`destination` does.

    It makes the missing parent folders and creates (then removes) a temporary file beside
    ``path``; ``path`` itself is left alone.
    """
    handle, temporary, _ = _temporary(path, what)
    os.close(handle)
    _remove(temporary)


def _temporary(path: str | Path, what: str = "a save") -> tuple[int, Path, Path]:
    """A new temporary file beside the file a save to ``path`` writes (parent folders made),
    open for writing; and that file (:func:`destination`)."""
    target = destination(path, what)
    _prepare(target, Path(path))
    try:
        handle, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as error:
        raise _refuse(Path(path), error) from None
    return handle, Path(name), target


def _remove(temporary: Path) -> None:
    with contextlib.suppress(OSError):
        temporary.unlink()


def _mode(path: Path) -> int:
    """The permissions of the file being replaced, or what ``open(path, "w")`` would give."""
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


def _sync_folder(folder: Path) -> None:
    """Sync the folder's entry of the rename too (best effort: not every system allows it)."""
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


# -- temporary folders -----------------------------------------------------------------------
_FOLDER = re.compile(r"gpuconcepts-([a-z]+)-(\d+)-[a-z0-9_]+")
"""A temporary folder's name: what made it, the process id that owns it, a random tail."""


@contextlib.contextmanager
def temporary_folder(kind: str) -> Iterator[Path]:
    """A temporary folder for one command (``kind``: lowercase letters), removed when the
    block ends, by an exception or a signal too. A process killed outright (SIGKILL, the
    out-of-memory killer) runs no cleanup: its folder's name holds its process id, and the
    next temporary folder made on this machine first removes every folder whose process is
    gone (:func:`remove_stale_folders`).

    >>> with temporary_folder("demo") as folder:
    ...     folder.is_dir(), folder.name.startswith(f"gpuconcepts-demo-{os.getpid()}-")
    (True, True)
    >>> folder.exists()
    False
    """
    remove_stale_folders()
    with tempfile.TemporaryDirectory(prefix=f"gpuconcepts-{kind}-{os.getpid()}-") as folder:
        yield Path(folder)


def remove_stale_folders(root: str | Path | None = None) -> list[Path]:
    """Remove the temporary folders under ``root`` (the system's temporary folder) that this
    user's gpuconcepts processes made and left when they were killed; return them. A folder
    whose process still runs, or another user's, is left alone."""
    found = Path(tempfile.gettempdir() if root is None else root).glob("gpuconcepts-*")
    removed = []
    for path in found:
        name = _FOLDER.fullmatch(path.name)
        try:
            mine = path.is_dir() and not path.is_symlink() and path.stat().st_uid == os.getuid()
        except OSError:  # gone meanwhile
            continue
        if name is None or not mine or _running(int(name.group(2))):
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed


def _running(pid: int) -> bool:
    """True while process ``pid`` exists (signal 0 asks without sending anything)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's: it exists
        return True
    return True


def presets_path() -> Path:
    """The presets file: the copy an installed package ships, else ``conf/presets.toml`` of
    the source checkout this module runs from (an editable install, or ``PYTHONPATH=src``).
    It lives here, below every layer, because the model's version hashes the ceilings' sizes
    it holds (:func:`~gpuconcepts.roofline.version.model_version`) and the sizes read them
    all (:mod:`gpuconcepts.sizes`)."""
    packaged = resources.files("gpuconcepts") / "presets.toml"
    if packaged.is_file():
        return Path(str(packaged))
    source = Path(__file__).resolve().parents[2] / "conf" / "presets.toml"
    if source.is_file():
        return source
    raise GpuConceptsError(f"no presets file: neither {packaged} nor {source} exists")
