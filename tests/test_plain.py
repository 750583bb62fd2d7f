"""Said plainly: a closed pipe ends quietly, an ASCII terminal gets ASCII, analyze says that it
runs your file and keeps your model's exits and prints out of its own output, and no command
shows a traceback without torch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from synthetic import PEAKS

from gpuconcepts import cli

ROOT = Path(__file__).resolve().parents[1]
RUN = ROOT / "docs" / "runs" / "cpu-amd-epyc-float32.json"
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}


def _gpuconcepts(*args: str, **env: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "gpuconcepts", *args],
        capture_output=True,
        env={**ENV, **env},
        timeout=120,
        check=False,
    )


# -- a closed pipe ------------------------------------------------------------------------------
def test_a_closed_pipe_ends_quietly() -> None:
    """The reader is gone before the first byte: `gpuconcepts model --json | head -c 0`."""
    process = subprocess.Popen(
        [sys.executable, "-m", "gpuconcepts", "model", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
    )
    assert process.stdout is not None
    process.stdout.close()
    _, err = process.communicate(timeout=120)
    assert (process.returncode, err) == (cli.EXIT_BROKEN_PIPE, b"")


def test_head_reads_what_it_needs_and_nothing_else_is_said() -> None:
    done = subprocess.run(
        f"'{sys.executable}' -m gpuconcepts formulas --json | head -c 10",
        shell=True,
        capture_output=True,
        env=ENV,
        timeout=120,
        check=False,
    )
    assert (done.stdout, done.stderr) == (b"[\n  {\n    ", b"")


# -- an ASCII terminal --------------------------------------------------------------------------
def test_model_on_an_ascii_terminal() -> None:
    done = _gpuconcepts("model", PYTHONIOENCODING="ascii")
    assert (done.returncode, done.stderr) == (0, b"")
    text = done.stdout.decode("ascii")  # nothing but ASCII
    assert "8,192 tokens x batch 1, bfloat16" in text
    assert "KV cache, 1 x 8,192 tokens" in text
    assert "attention / linear FLOPs" in text


def test_compare_on_an_ascii_terminal() -> None:
    done = _gpuconcepts("compare", str(RUN), PYTHONIOENCODING="ascii")
    assert (done.returncode, done.stderr) == (0, b"")
    text = done.stdout.decode("ascii")
    from gpuconcepts.run import load
    from gpuconcepts.units import si

    run = load(RUN)
    first = run.measurements[0]
    # the same numbers a UTF-8 terminal gets, with "u" for the micro sign and "+/-" for the ±
    shown = f"{si(first.seconds, 's')} +/-{si(first.iqr_seconds, 's', digits=2)}"
    assert shown.replace("\u00b5", "u").replace("\u00a0", " ") in text
    assert run.peaks.latency_seconds is not None
    floor = si(run.peaks.latency_seconds, "s").replace("\u00b5", "u").replace("\u00a0", " ")
    assert f"latency floor {floor}" in text


def test_a_handler_the_user_chose_is_kept() -> None:
    done = _gpuconcepts("model", PYTHONIOENCODING="ascii:replace")
    assert done.returncode == 0
    assert "8,192 tokens ? batch 1" in done.stdout.decode("ascii")


# -- analyze and the user's code ----------------------------------------------------------------
def test_analyze_help_says_the_file_runs_with_your_rights(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["analyze", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "FILE.py is imported: it runs with your rights" in out
    assert "FILE.py is imported and runs as Python with your rights" in out
    assert "Only analyze files you trust." in out


MODELS = """
import sys
import torch


class Exits(torch.nn.Module):
    def forward(self, x):
        raise SystemExit(3)


class Stop(BaseException):
    pass


class Raises(torch.nn.Module):
    def forward(self, x):
        raise Stop("the model's own BaseException")


class Chatty(torch.nn.Linear):
    def forward(self, x):
        print("forward of a chatty model")
        return super().forward(x)


def exits():
    sys.exit(7)


def exits_in_forward():
    return Exits()


def raises_in_forward():
    return Raises()


def chatty():
    print("building a chatty model")
    return Chatty(8, 4)
"""


@pytest.fixture
def models(tmp_path: Path) -> Path:
    pytest.importorskip("torch")
    path = tmp_path / "models.py"
    path.write_text(MODELS)
    return path


@pytest.mark.parametrize(
    ("factory", "message"),
    [
        ("exits", "models.py:exits called sys.exit(7); analyze needs the model back"),
        (
            "exits_in_forward",
            "models.py:exits_in_forward called sys.exit(3); analyze needs the model back",
        ),
        (
            "raises_in_forward",
            "models.py:raises_in_forward raised Stop: the model's own BaseException",
        ),
    ],
)
def test_exits_and_base_exceptions_of_the_model_are_one_line(
    factory: str, message: str, models: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = f"{models}:{factory}"
    assert cli.main(["analyze", spec, "--input", "2x8", "--device", "cpu"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"gpuconcepts analyze: error: {models.parent}/{message}\n"


def test_the_model_prints_to_stderr_under_json(
    models: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # measuring this machine's peaks took most of a minute; what is checked is where the
    # model's prints go (test_analyze's model_file fixture skips the wait the same way)
    monkeypatch.setattr("gpuconcepts.kernels.measure_peaks", lambda *_, **__: PEAKS)
    argv = ["analyze", f"{models}:chatty", "--input", "2x8", "--device", "cpu", "--json"]
    assert cli.main([*argv, "--repeats", "1"]) == 0
    captured = capsys.readouterr()
    json.loads(captured.out)  # stdout is the JSON alone
    assert "building a chatty model\n" in captured.err
    assert "forward of a chatty model\n" in captured.err


# -- no torch -----------------------------------------------------------------------------------
NO_TORCH = """
import json, sys
sys.modules["torch"] = None  # `import torch` fails, as where it is not installed
from gpuconcepts.cli import main
results = {}
for argv in json.loads(sys.argv[1]):
    results[" ".join(argv)] = main(argv)
print(json.dumps(results), file=sys.stderr)
"""


def test_no_command_shows_a_traceback_without_torch(tmp_path: Path) -> None:
    model = tmp_path / "m.py"
    model.write_text("def build():\n    return None\n")
    measuring = [
        ["analyze", f"{model}:build", "--input", "2x8"],
        ["distributed", "--world-size", "2", "--quick"],
        ["profile", "--quick"],
        ["verify", "--quick"],
    ]
    reading = [
        ["formulas", "--json"],
        ["calc", "embedding_memory", "N=10", "d=4", "s=2"],
        ["model", "--json"],
        ["hardware"],
        ["compare", str(RUN)],
        ["verify", "--run", str(RUN), "--json"],
    ]
    done = subprocess.run(
        [sys.executable, "-c", NO_TORCH, json.dumps(measuring + reading)],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    *lines, statuses = done.stderr.splitlines()
    assert json.loads(statuses) == {
        " ".join(a): 2 if a in measuring else 0 for a in measuring + reading
    }
    assert lines == [
        f"gpuconcepts {a[0]}: error: `{a[0]}` needs torch: pip install gpuconcepts[kernels]"
        for a in measuring
    ]
