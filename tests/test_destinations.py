"""Destinations and streams that fight back: a save never renames over a device, a pipe, a
socket or a directory; a link is written through; stdout on a full device, an empty path and a
cache folder that cannot be written are each one line, never a traceback."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from synthetic import PEAKS, synthetic_run

from gpuconcepts import cli
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.files import RULE, check_writable, write_atomic
from gpuconcepts.run import Run

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}


def _never(*_args: object, **_kwargs: object) -> None:
    raise AssertionError("a run was collected before the destination was checked")


@pytest.fixture
def profile_refuses(monkeypatch: pytest.MonkeyPatch) -> None:
    """`profile` measures nothing in these tests: a refusal must come before the run."""
    monkeypatch.setattr("gpuconcepts.collect.collect", _never)


@pytest.fixture
def special(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A destination of one kind that exists and is not a regular file, and the kind's words."""
    kind = request.param
    path = tmp_path / "d"
    server = None
    if kind == "a named pipe (FIFO)":
        os.mkfifo(path)
    elif kind == "a directory":
        path.mkdir()
    elif kind == "a character device":
        if os.geteuid() != 0:
            pytest.skip("making a device node (mknod) needs root")
        os.mknod(path, 0o600 | stat.S_IFCHR, os.makedev(1, 7))  # as /dev/full
    else:
        if len(str(path)) >= 100:  # a socket's path is at most 104 to 108 bytes
            pytest.skip("the temporary folder's path is too long for a socket")
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(path))
    before = path.lstat().st_mode
    yield path, kind
    if server is not None:
        server.close()
    assert path.lstat().st_mode == before  # still what it was, never renamed over
    assert [p.name for p in tmp_path.iterdir()] == ["d"]  # and no temporary file left


KINDS = ["a named pipe (FIFO)", "a directory", "a character device", "a socket"]


@pytest.mark.parametrize("special", KINDS, indirect=True)
@pytest.mark.usefixtures("profile_refuses")
def test_profile_refuses_a_destination_that_is_not_a_regular_file(
    special: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    path, kind = special
    assert cli.main(["profile", "--quick", "--device", "cpu", "--save", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert (
        captured.err == f"gpuconcepts profile: error: cannot write {path}: it is {kind}; {RULE}\n"
    )


@pytest.mark.parametrize("special", KINDS, indirect=True)
def test_the_writer_itself_refuses_it(special: tuple[Path, str], run: Run) -> None:
    """The rule's one home is the writer: a library caller (Run.save, the book) meets it too."""
    path, kind = special
    with pytest.raises(GpuConceptsError) as refused:
        run.save(path)
    assert str(refused.value) == f"cannot write {path}: it is {kind}; {RULE}"
    with pytest.raises(GpuConceptsError, match="it is"):
        check_writable(path)


@pytest.mark.usefixtures("profile_refuses")
def test_an_empty_save_path_says_a_file_path_is_needed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli.main(["profile", "--quick", "--save", ""]) == 2
    assert capsys.readouterr() == (
        "",
        "gpuconcepts profile: error: --save needs a file path; got ''\n",
    )
    with pytest.raises(GpuConceptsError, match=r"^a save needs a file path; got ''$"):
        write_atomic("", "{}")
    assert list(tmp_path.iterdir()) == []


def test_an_empty_figure_path_says_a_file_path_is_needed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("matplotlib")
    argv = ["analyze", "no_such_file.py:build", "--input", "2x3", "--figure", ""]
    assert cli.main(argv) == 2
    assert capsys.readouterr() == (
        "",
        "gpuconcepts analyze: error: --figure needs a file path; got ''\n",
    )


# -- the symbolic-link policy: written through, as `>` in a shell ------------------------------
def test_a_link_is_written_through_and_stays_a_link(tmp_path: Path) -> None:
    target = tmp_path / "runs" / "today.json"
    target.parent.mkdir()
    target.write_text("old\n")
    target.chmod(0o640)
    link = tmp_path / "latest.json"
    link.symlink_to(Path("runs") / "today.json")  # relative, as people make them
    check_writable(link)
    write_atomic(link, "new\n")
    assert link.readlink() == Path("runs") / "today.json"  # still the link it was
    assert (target.read_text(), target.stat().st_mode & 0o777) == ("new\n", 0o640)
    assert sorted(p.name for p in target.parent.iterdir()) == ["today.json"]


def test_a_dangling_link_makes_its_file(tmp_path: Path) -> None:
    link = tmp_path / "latest.json"
    link.symlink_to(tmp_path / "new" / "r.json")
    write_atomic(link, "{}")
    assert link.is_symlink()
    assert (tmp_path / "new" / "r.json").read_text() == "{}"


@pytest.mark.usefixtures("profile_refuses")
def test_a_link_to_a_special_file_is_refused_by_what_it_leads_to(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    link = tmp_path / "r.json"
    link.symlink_to(fifo)
    assert cli.main(["profile", "--quick", "--save", str(link)]) == 2
    assert capsys.readouterr().err == (
        f"gpuconcepts profile: error: cannot write {link} (a link to {fifo}): "
        f"it is a named pipe (FIFO); {RULE}\n"
    )
    assert link.readlink() == fifo
    assert stat.S_ISFIFO(fifo.stat().st_mode)


def test_a_loop_of_links_is_one_line(tmp_path: Path) -> None:
    link = tmp_path / "loop"
    link.symlink_to(link)
    with pytest.raises(GpuConceptsError, match=rf"^cannot write {link}: "):
        write_atomic(link, "{}")
    assert link.is_symlink()


# -- stdout that cannot take the output ---------------------------------------------------------
@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("buffered", [True, False])
@pytest.mark.parametrize("command", ["formulas", "hardware"])
def test_stdout_on_a_full_device_is_one_line_and_exit_2(command: str, buffered: bool) -> None:
    env = {key: value for key, value in ENV.items() if key != "PYTHONUNBUFFERED"}
    if not buffered:
        env["PYTHONUNBUFFERED"] = "1"
    with open("/dev/full", "w") as full:  # noqa: PTH123 - a stream to hand the child
        done = subprocess.run(
            [sys.executable, "-m", "gpuconcepts", command],
            stdout=full,
            stderr=subprocess.PIPE,
            env=env,
            timeout=120,
            check=False,
        )
    assert (done.returncode, done.stderr.decode()) == (
        2,
        f"gpuconcepts {command}: error: cannot write to stdout: the disk is full\n",
    )


def test_head_one_ends_quietly() -> None:
    done = subprocess.run(
        f"'{sys.executable}' -m gpuconcepts formulas | head -1; echo \"status ${{PIPESTATUS[0]}}\"",
        shell=True,
        executable="/bin/bash",
        capture_output=True,
        env=ENV,
        timeout=120,
        check=False,
    )
    first, status = done.stdout.decode().splitlines()
    assert first.startswith("embedding_memory")
    # all of it fit in the pipe before head left, or not
    assert status in ("status 0", f"status {cli.EXIT_BROKEN_PIPE}")
    assert done.stderr == b""


def test_an_error_of_a_named_file_is_not_said_to_be_stdout_s(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def fails(_args: object) -> int:
        raise OSError(28, "No space left on device", "elsewhere.json")

    from gpuconcepts.cli import formulas as formulas_command

    monkeypatch.setattr(formulas_command, "command", fails)
    with pytest.raises(OSError, match=r"elsewhere\.json"):
        cli.main(["formulas"])


# -- a cache folder that cannot be written ------------------------------------------------------
def _unwritable_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's cache folder where it cannot be made (under a regular file, which stops
    root too), found the way platformdirs places it on Linux: $XDG_CACHE_HOME/gpuconcepts."""
    if not sys.platform.startswith("linux"):
        pytest.skip("XDG_CACHE_HOME is where the cache goes on Linux")
    (tmp_path / "file").write_text("x")
    monkeypatch.delenv("GPUCONCEPTS_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "file" / "cache"))
    return tmp_path / "file" / "cache" / "gpuconcepts"


def _cannot_keep(folder: Path) -> str:
    return (
        f"cannot keep the measured peaks in {folder} (Not a directory); "
        "set GPUCONCEPTS_CACHE_DIR to a folder that can be written"
    )


MODEL = """
import torch

def build():
    return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
"""


def test_analyze_with_an_unwritable_cache_warns_and_prints_the_analysis(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("torch")
    folder = _unwritable_cache(tmp_path, monkeypatch)
    model = tmp_path / "model.py"
    model.write_text(MODEL)
    # the peaks would be measured (tens of seconds); the test is about keeping them
    monkeypatch.setattr("gpuconcepts.kernels.measure_peaks", lambda *_, **__: PEAKS)
    argv = ["analyze", f"{model}:build", "--input", "2x4", "--repeats", "1", "--device", "cpu"]
    assert cli.main(argv) == 0
    out, err = capsys.readouterr()
    assert "the same total" in out
    # progress lines may come too on a slow machine; the warning comes once
    assert [line for line in err.splitlines() if "warning" in line] == [
        f"gpuconcepts analyze: warning: {_cannot_keep(folder)}"
    ]


def test_profile_with_an_unwritable_cache_warns_and_keeps_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("torch")
    folder = _unwritable_cache(tmp_path, monkeypatch)
    run = synthetic_run()
    monkeypatch.setattr("gpuconcepts.collect.collect", lambda *_, **__: run)
    saved = tmp_path / "r.json"
    argv = ["profile", "--quick", "--device", "cpu", "--json", "--save", str(saved)]
    assert cli.main(argv) == 0
    out, err = capsys.readouterr()
    assert Run.from_json(out) == run
    assert saved.read_text() == run.to_json()
    assert err.splitlines() == [
        f"gpuconcepts profile: warning: {_cannot_keep(folder)}",
        f"saved the run to {saved}",
    ]


def test_analyze_help_says_it_imports_and_runs_the_file(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["analyze", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "Import FILE.py (your code runs, with your rights), call FACTORY for the model" in out


def test_verify_with_an_unwritable_cache_warns_through_its_progress(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("torch")
    from gpuconcepts.peaks_cache import this_machine_peaks
    from gpuconcepts.sizing import RunSizes

    folder = _unwritable_cache(tmp_path, monkeypatch)
    monkeypatch.setattr("gpuconcepts.kernels.measure_peaks", lambda *_, **__: PEAKS)
    said: list[str] = []
    quick = RunSizes.resolve("cpu", quick=True, free_bytes=2**36)
    assert this_machine_peaks(quick, progress=said.append) == (PEAKS, "measured now")
    assert said[1:] == [f"warning: {_cannot_keep(folder)}"]  # verify prefixes "[verify] "
