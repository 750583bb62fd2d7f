"""Ctrl-C and SIGTERM end every long command within 2 s, with one line and exit 130 or 143;
no worker process survives, no temporary folder stays, a destination is never half replaced.

Each test starts the real command line, waits until it is at work, sends the signal and
times the exit. Ctrl-C is sent to the whole process group, as a terminal does.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

pytest.importorskip("torch")

SRC = Path(__file__).resolve().parents[1] / "src"
STOP_WITHIN_S = 2.0


def _children(pid: int) -> list[int]:
    """The live child processes of ``pid`` (Linux /proc)."""
    found: list[int] = []
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:  # it has ended
        return found
    for task in tasks:
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


def _workers(pid: int) -> list[int]:
    """gloo's workers under ``pid``: on Linux a fork server (a child, beside multiprocessing's
    resource tracker) forks them, so they are its children's children."""
    return [worker for child in _children(pid) for worker in _children(child)]


def _alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie, dead but not yet reaped, is not alive)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "State:\tZ" not in status


class Command:
    """A ``gpuconcepts`` command started in its own process group, its stderr collected."""

    def __init__(self, args: list[str], tmp: Path) -> None:
        env = {**os.environ, "PYTHONPATH": str(SRC), "TMPDIR": str(tmp)}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "gpuconcepts", *args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            start_new_session=True,
        )
        self.lines: list[str] = []
        assert self.process.stderr is not None
        stream = self.process.stderr
        self.reader = threading.Thread(target=lambda: self.lines.extend(stream), daemon=True)
        self.reader.start()

    def wait_until(self, ready: Callable[[], bool], timeout_s: float = 120) -> None:
        deadline = time.monotonic() + timeout_s
        while not ready():
            assert self.process.poll() is None, f"ended early: {''.join(self.lines)}"
            assert time.monotonic() < deadline, "never got to work"
            time.sleep(0.05)

    def said(self, text: str) -> Callable[[], bool]:
        return lambda: any(text in line for line in self.lines)

    def stop(self, number: int, *, group: bool) -> float:
        """Send the signal (to the group, as a terminal's Ctrl-C does) and time the exit."""
        start = time.monotonic()
        if group:
            os.killpg(self.process.pid, number)
        else:
            self.process.send_signal(number)
        self.process.wait(timeout=60)
        seconds = time.monotonic() - start
        self.close()
        return seconds

    def close(self) -> None:
        """Kill the command if it still runs; read the rest of its stderr; close the pipe."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=60)
        self.reader.join(timeout=10)
        assert self.process.stderr is not None
        self.process.stderr.close()


Start = Callable[[list[str]], Command]


@pytest.fixture
def start(tmp_path: Path) -> Iterator[Start]:
    """Start commands (in ``tmp_path`` as their TMPDIR); any left running is killed after."""
    started: list[Command] = []

    def run(args: list[str]) -> Command:
        started.append(Command(args, tmp_path))
        return started[-1]

    yield run
    for command in started:
        command.close()


def _check_ended(command: Command, seconds: float, status: int, line: str) -> None:
    err = "".join(command.lines)
    assert command.process.returncode == status, err
    assert seconds < STOP_WITHIN_S, f"took {seconds:.2f} s"
    assert "Traceback" not in err
    assert command.lines[-1] == line + "\n"
    assert sum("gpuconcepts" in x and "error" in x for x in command.lines) == 0


@pytest.mark.timeout(180)
def test_ctrl_c_ends_profile_and_keeps_the_old_save(tmp_path: Path, start: Start) -> None:
    saved = tmp_path / "r.json"
    saved.write_text("the earlier run\n")
    command = start(["profile", "--quick", "--device", "cpu", "--save", str(saved)])
    command.wait_until(command.said("peaks on"))
    time.sleep(1.0)
    seconds = command.stop(signal.SIGINT, group=True)
    _check_ended(command, seconds, 130, "gpuconcepts profile: interrupted (Ctrl-C)")
    assert saved.read_text() == "the earlier run\n"
    # no temporary file; torch's compiler keeps its per-user cache folder in TMPDIR (made on
    # the first FlopCounterMode), which is torch's lasting cache, not a file this run left
    left = [p.name for p in tmp_path.iterdir() if not p.name.startswith("torchinductor_")]
    assert left == ["r.json"]


@pytest.mark.timeout(180)
def test_sigterm_ends_verify(start: Start) -> None:
    command = start(["verify", "--quick", "--device", "cpu"])
    command.wait_until(command.said("peaks on"))
    time.sleep(1.0)
    seconds = command.stop(signal.SIGTERM, group=False)
    _check_ended(command, seconds, 143, "gpuconcepts verify: terminated (SIGTERM)")


SLOW_MODEL = """
import sys
import torch

def build():
    print("building the model", file=sys.stderr, flush=True)
    return torch.nn.Sequential(*[torch.nn.Linear(1024, 1024) for _ in range(200)])
"""


@pytest.mark.timeout(180)
@pytest.mark.parametrize(
    ("number", "status", "line"),
    [
        (signal.SIGINT, 130, "gpuconcepts analyze: interrupted (Ctrl-C)"),
        (signal.SIGTERM, 143, "gpuconcepts analyze: terminated (SIGTERM)"),
    ],
)
def test_a_signal_ends_analyze_on_a_slow_model(
    number: int, status: int, line: str, tmp_path: Path, start: Start
) -> None:
    model = tmp_path / "slow.py"
    model.write_text(SLOW_MODEL)
    args = ["analyze", f"{model}:build", "--input", "256x1024", "--device", "cpu"]
    command = start(args)
    command.wait_until(command.said("building the model"))
    time.sleep(2.0)
    seconds = command.stop(number, group=number == signal.SIGINT)
    _check_ended(command, seconds, status, line)


@pytest.mark.timeout(180)
@pytest.mark.parametrize(
    ("number", "status", "line"),
    [
        (signal.SIGINT, 130, "gpuconcepts distributed: interrupted (Ctrl-C)"),
        (signal.SIGTERM, 143, "gpuconcepts distributed: terminated (SIGTERM)"),
    ],
)
def test_a_signal_ends_distributed_and_its_workers(
    number: int, status: int, line: str, tmp_path: Path, start: Start
) -> None:
    command = start(["distributed", "--world-size", "2", "--quick"])
    pid = command.process.pid
    command.wait_until(lambda: len(_workers(pid)) >= 2)
    # past their start, and at once: a quick run on a quiet machine ends within 2 s of it
    command.wait_until(lambda: all(_torch_loaded(w) for w in _workers(pid)))
    workers = _workers(pid) + _children(pid)
    seconds = command.stop(number, group=number == signal.SIGINT)
    _check_ended(command, seconds, status, line)
    time.sleep(0.5)
    assert [w for w in workers if _alive(w)] == []
    assert list(tmp_path.glob("gpuconcepts-distributed-*")) == []  # its folder is removed


@pytest.mark.timeout(180)
def test_a_worker_dies_with_a_killed_parent(start: Start) -> None:
    """SIGKILL cannot be handled: the kernel ends the workers instead (PR_SET_PDEATHSIG)."""
    command = start(["distributed", "--world-size", "2", "--quick"])
    pid = command.process.pid
    command.wait_until(lambda: len(_workers(pid)) >= 2)
    workers = _workers(pid) + _children(pid)
    command.wait_until(lambda: all(_torch_loaded(w) for w in _workers(pid)))
    command.stop(signal.SIGKILL, group=False)
    deadline = time.monotonic() + 20
    while [w for w in workers if _alive(w)] and time.monotonic() < deadline:
        time.sleep(0.1)
    assert [w for w in workers if _alive(w)] == []


def _torch_loaded(pid: int) -> bool:
    """Whether a worker has got past its start (its torch library is mapped)."""
    try:
        return "libtorch" in Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False


@pytest.mark.timeout(180)
def test_a_killed_analyze_leaves_no_temporary_file(tmp_path: Path, start: Start) -> None:
    """SIGKILL cannot be handled: analyze keeps nothing temporary on disk while it measures
    (its figure is written at the end, through a temporary file that lives for one write)."""
    model = tmp_path / "slow.py"
    model.write_text(SLOW_MODEL)
    figure = tmp_path / "out" / "roofline.svg"
    args = ["analyze", f"{model}:build", "--input", "256x1024", "--device", "cpu"]
    command = start([*args, "--figure", str(figure)])
    command.wait_until(command.said("building the model"))
    time.sleep(2.0)
    command.stop(signal.SIGKILL, group=False)
    left = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.glob("*"))
    # TMPDIR is tmp_path: nothing else was made, except torch's own compile cache (kept and
    # reused across runs by torch, not a temporary folder of this run)
    assert [name for name in left if not name.startswith("torchinductor_")] == ["out", "slow.py"]
    assert list((tmp_path / "out").iterdir()) == []  # the folder --figure checked, still empty


def test_a_ctrl_c_pending_as_the_handlers_are_restored_is_seen_once(monkeypatch, capsys) -> None:
    # the signal lands after the command's own handling, as _StopOnSignals gives the previous
    # handlers back: still exit 130, with no second line and no traceback
    from gpuconcepts import cli
    from gpuconcepts.cli import core

    def restored_then_interrupted(*_args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(core._StopOnSignals, "__exit__", restored_then_interrupted)
    assert cli.main(["calc", "embedding_memory", "N=10", "d=2", "s=4"]) == 130
    assert capsys.readouterr().err == ""


def _python(args: list[str], *path: Path) -> subprocess.CompletedProcess[str]:
    """This Python run with ``args`` and ``path`` as its PYTHONPATH, its stderr kept."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(map(str, path))}
    return subprocess.run(
        [sys.executable, *args], env=env, capture_output=True, text=True, timeout=120, check=False
    )


def test_a_signal_after_the_command_has_ended_leaves_its_exit_status() -> None:
    # the interrupted command has printed its line and returned 130; a Ctrl-C landing as the
    # interpreter shuts down (CI saw one, under load) must not make it die by SIGINT (-2)
    script = (
        "import os, signal, sys, time\n"
        "from gpuconcepts import cli\n"
        "cli.main = lambda: 130\n"
        "status = cli.entry()\n"
        "os.kill(os.getpid(), signal.SIGINT)\n"
        "os.kill(os.getpid(), signal.SIGTERM)\n"
        "time.sleep(0.2)\n"
        "sys.exit(status)\n"
    )
    done = _python(["-c", script], SRC)
    assert (done.returncode, done.stderr) == (130, "")


def test_python_m_exits_130_when_the_ctrl_c_passed_through_a_c_librarys_pyrun(
    tmp_path: Path,
) -> None:
    # CPython marks a KeyboardInterrupt seen by any PyRun_* call (pybind11's exec, used by
    # torch) and, under -m, ends by SIGINT (-2) at exit even though the command caught it
    (tmp_path / "through_pyrun.py").write_text(
        "import ctypes, runpy\n"
        "from gpuconcepts import cli\n"
        "def interrupted():\n"
        "    ctypes.pythonapi.PyRun_SimpleString(b'raise KeyboardInterrupt')\n"
        "    return cli.EXIT_INTERRUPTED\n"
        "cli.main = interrupted\n"
        "runpy.run_module('gpuconcepts', run_name='__main__')\n"
    )
    done = _python(["-m", "through_pyrun"], SRC, tmp_path)
    assert done.returncode == 130, done.stderr
