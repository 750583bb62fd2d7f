"""Saves that never lose data: every file is written whole or not at all, and a path that
cannot be written is one line naming it and the cause."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpuconcepts import cli
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.files import RULE, check_writable, save_figure, write_atomic
from gpuconcepts.run import Run, load

TESTS = Path(__file__).parent

# The child fills its "disk" at 16 KiB (RLIMIT_FSIZE, SIGXFSZ ignored so the write fails
# with EFBIG instead of killing it), then saves over the run at argv[1] with argv[2]'s way.
FULL_DISK = """
import resource, signal, sys
from pathlib import Path
sys.path.insert(0, {tests!r})
from synthetic import synthetic_run
from gpuconcepts.errors import GpuConceptsError
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
text = synthetic_run().to_json() * 2   # larger than the limit
resource.setrlimit(resource.RLIMIT_FSIZE, (16 * 1024, 16 * 1024))
path = Path(sys.argv[1])
try:
    if sys.argv[2] == "save":
        from gpuconcepts.run import Run
        Run.from_json(text[: len(text) // 2]).save(path)
    else:
        path.write_text(text)
except GpuConceptsError as error:
    print(error)
    sys.exit(2)
except OSError as error:
    print("OSError", error.errno)
    sys.exit(3)
"""


def _fill_the_disk(path: Path, how: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", FULL_DISK.format(tests=str(TESTS)), str(path), how],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_full_disk_during_a_save_leaves_the_old_run_byte_for_byte(
    run: Run, tmp_path: Path
) -> None:
    path = tmp_path / "r.json"
    run.save(path)
    before = path.read_bytes()
    assert len(before) > 16 * 1024  # the new run cannot fit under the limit either
    done = _fill_the_disk(path, "save")
    assert done.returncode == 2, done.stderr
    assert done.stdout == f"cannot write {path}: the file is larger than this process may write\n"
    assert path.read_bytes() == before
    assert load(path) == run
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]  # no temporary file left behind


def test_the_same_full_disk_destroys_a_plain_write(run: Run, tmp_path: Path) -> None:
    """The test above can fail: written in place, the old run is lost."""
    path = tmp_path / "r.json"
    run.save(path)
    done = _fill_the_disk(path, "plain")
    assert done.returncode == 3, done.stderr
    assert path.stat().st_size == 16 * 1024
    with pytest.raises(GpuConceptsError, match="not a valid JSON file"):
        load(path)


def test_an_interrupt_part_way_keeps_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "r.json"
    path.write_text("old\n")

    def interrupted(_descriptor: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(path, "new\n")
    assert path.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_a_save_keeps_the_permissions_of_the_file_it_replaces(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text("old\n")
    path.chmod(0o640)
    write_atomic(path, "new\n")
    assert (path.read_text(), path.stat().st_mode & 0o777) == ("new\n", 0o640)
    fresh = tmp_path / "a" / "b" / "fresh.json"  # parent folders are made
    write_atomic(fresh, b"\x00\x01")
    assert fresh.read_bytes() == b"\x00\x01"
    assert fresh.stat().st_mode & 0o777 == 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _read_only_folder(tmp_path: Path) -> Path:
    """A folder this process cannot write into: chmod 500, or for root (whom permissions do
    not stop) sysfs."""
    if os.geteuid() != 0:
        folder = tmp_path / "locked"
        folder.mkdir()
        folder.chmod(0o500)
        return folder
    if not os.access("/sys", os.F_OK):
        pytest.skip("root, and no /sys to be refused by")
    return Path("/sys")


@pytest.mark.parametrize("where", ["directory", "under a file", "read-only", "deep under a file"])
def test_save_to_a_place_that_cannot_hold_it_is_one_line_and_exit_2(
    where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "file").write_text("x")
    path, cause = {
        "directory": (tmp_path, f"it is a directory; {RULE}"),
        "under a file": (tmp_path / "file" / "r.json", "a folder on its path is a file"),
        "deep under a file": (tmp_path / "file" / "a" / "r.json", "a folder on its path is a file"),
        "read-only": (_read_only_folder(tmp_path) / "r.json", "permission denied"),
    }[where]

    def never(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("a run was collected before the path was checked")

    monkeypatch.setattr("gpuconcepts.collect.collect", never)
    assert cli.main(["profile", "--quick", "--device", "cpu", "--save", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"gpuconcepts profile: error: cannot write {path}: {cause}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_check_writable_leaves_the_destination_alone(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text("old\n")
    check_writable(path)
    check_writable(tmp_path / "new" / "r.json")
    assert path.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new", "r.json"]
    assert list((tmp_path / "new").iterdir()) == []


def test_a_figure_is_saved_whole(tmp_path: Path) -> None:
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    figure = Figure()
    figure.add_subplot().plot([1, 2], [3, 4])
    save_figure(figure, tmp_path / "f.svg")
    assert (tmp_path / "f.svg").read_text().startswith("<?xml")
    with pytest.raises(GpuConceptsError, match=r"f\.nope: Format 'nope' is not supported"):
        save_figure(figure, tmp_path / "f.nope")
    with pytest.raises(GpuConceptsError, match="give the figure a suffix"):
        save_figure(figure, tmp_path / "f")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.svg"]


# -- temporary folders: removed at the end, or by the next command after a SIGKILL -------------
HOLDS_A_FOLDER = """
import sys, time
from gpuconcepts.files import temporary_folder
with temporary_folder("held") as folder:
    (folder / "part.json").write_text("{}")
    print(folder, flush=True)
    time.sleep(60)
"""


def test_a_folder_left_by_a_killed_process_is_removed_by_the_next_one(tmp_path, monkeypatch):
    import signal
    import tempfile

    from gpuconcepts.files import remove_stale_folders, temporary_folder

    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONPATH": str(TESTS.parent / "src")}
    child = subprocess.Popen(
        [sys.executable, "-c", HOLDS_A_FOLDER], stdout=subprocess.PIPE, text=True, env=env
    )
    assert child.stdout is not None
    left = Path(child.stdout.readline().strip())
    assert left.parent == tmp_path
    assert left.name.startswith(f"gpuconcepts-held-{child.pid}-")
    live = tmp_path / f"gpuconcepts-held-{os.getpid()}-abc"  # a process still running
    other = tmp_path / "gpuconcepts-notes"  # not a folder of ours by its name
    live.mkdir()
    other.mkdir()
    assert remove_stale_folders(tmp_path) == []  # the child still runs: its folder stays
    child.send_signal(signal.SIGKILL)  # no cleanup runs
    child.wait(timeout=30)
    child.stdout.close()
    assert left.is_dir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with temporary_folder("next") as folder:
        assert not left.exists()
        assert folder.parent == tmp_path
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([live.name, other.name])
