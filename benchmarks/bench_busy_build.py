"""The book built from a fresh clone on a busy machine (issue 44): wall time, and what the busy
machine could no longer show.

Each round clones the repository's committed HEAD into a temporary folder and runs what the
README tells a new reader to run, ``python -m pip install nox && nox -s docs``, while
``background_load.py`` streams memory on one core, then on two (one process a core, the last
cores first; a 1-core machine gets both on its one core). ``--loads 0`` adds a quiet round.
After each build it reads the build's run (``docs/_build/.run/``) and lists the claims that came
out "not visible" or "undecided", with why. ``--warm N`` then rebuilds the built clone N times,
as a writer does (``nox -R -s docs``: the session's environment reused, nothing installed),
with nothing changed and with one page's prose edited, and reports each median. It prints one line a round and, with ``--json``, the
rounds as data; it asserts nothing beyond "the build succeeded": its exit status is 1 when any
round's build failed, so a busy machine that breaks the book is seen.

    python benchmarks/bench_busy_build.py [--loads 1 2] [--warm N] [--json PATH] [--keep]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from background_load import streaming_load

ROOT = Path(__file__).resolve().parents[1]
BUILD_LIMIT_S = 1800.0
"""No load outlives a build that hangs: each stops after this long."""


@contextlib.contextmanager
def loads(count: int) -> Iterator[list[int]]:
    """``count`` streaming processes, one a core from the last core down; yields the cores."""
    cores = sorted(os.sched_getaffinity(0))
    chosen = [cores[-1 - i % len(cores)] for i in range(count)]
    with contextlib.ExitStack() as stack:
        for core in chosen:
            stack.enter_context(streaming_load(BUILD_LIMIT_S, core))
        yield chosen


def build_run_file(clone: Path) -> Path | None:
    """The run the build collected (``docs/_build/.run/*.json``), if it got that far."""
    found = sorted((clone / "docs" / "_build" / ".run").glob("*.json"))
    return found[-1] if found else None


def unsettled(run_file: Path | None) -> list[str]:
    """``key: verdict (why)`` for every claim of the build's run that did not settle."""
    if run_file is None:
        return []
    sys.path.insert(0, str(ROOT / "src"))
    from gpuconcepts.run import load

    run = load(run_file)
    return [
        f"{r.key}: {r.verdict} ({r.why})"
        for r in run.claims
        if r.verdict in ("not visible", "undecided")
    ]


WARM_PAGE = Path("docs") / "glossary.md"
"""The page whose prose the edited warm rebuild changes (a code-free page: nothing runs)."""


def warm_rebuilds(clone: Path, times: int) -> dict[str, float]:
    """Median seconds of ``times`` rebuilds of a built clone with nothing changed, and of as
    many after appending a sentence to :data:`WARM_PAGE` (so Sphinx reads that page again)."""
    command = [sys.executable, "-m", "nox", "-R", "-s", "docs"]
    page = clone / WARM_PAGE
    seconds: dict[str, list[float]] = {"unchanged": [], "one page edited": []}
    for i in range(times):  # the two kinds interleaved, so a load that comes and goes hits both
        for kind, found in seconds.items():
            if kind == "one page edited":
                with page.open("a", encoding="utf-8") as text:
                    text.write(f"\nA sentence added by the warm-rebuild benchmark, round {i}.\n")
            start = time.perf_counter()
            subprocess.run(command, cwd=clone, capture_output=True, check=True)
            found.append(time.perf_counter() - start)
    return {kind: round(statistics.median(values), 2) for kind, values in seconds.items()}


def one_round(count: int, keep: bool, warm: int = 0) -> dict[str, object]:
    """A fresh clone built under ``count`` loads: seconds, exit status, unsettled claims."""
    folder = Path(tempfile.mkdtemp(prefix="gpuconcepts-busy-"))
    clone = folder / "clone"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    command = f"{sys.executable} -m pip install -q nox && {sys.executable} -m nox -s docs"
    log = folder / "build.log"
    with loads(count) as cores, log.open("w") as out:
        start = time.perf_counter()
        status = subprocess.run(
            command, shell=True, cwd=clone, stdout=out, stderr=subprocess.STDOUT,
            timeout=BUILD_LIMIT_S, check=False,
        ).returncode  # fmt: skip
        seconds = time.perf_counter() - start
    result: dict[str, object] = {
        "loads": count,
        "load_cores": cores,
        "seconds": round(seconds, 1),
        "exit_status": status,
        "unsettled": unsettled(build_run_file(clone)),
        "log_tail": log.read_text(encoding="utf-8", errors="replace").splitlines()[-15:],
    }
    if warm and status == 0:
        with loads(count):
            result["warm_seconds"] = warm_rebuilds(clone, warm)
    if keep:
        result["folder"] = str(folder)
    else:
        shutil.rmtree(folder, ignore_errors=True)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--loads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--json", type=Path, help="write the rounds here as JSON")
    parser.add_argument("--keep", action="store_true", help="keep each clone and its log")
    parser.add_argument("--warm", type=int, default=0, help="warm rebuilds after each build")
    args = parser.parse_args()
    cpu = next(
        (line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
         if line.startswith("model name")), "unknown CPU",
    )  # fmt: skip
    print(f"{cpu}, {os.cpu_count()} cores; HEAD of {ROOT}")
    rounds = []
    for count in args.loads:
        result = one_round(count, args.keep, args.warm)
        rounds.append(result)
        shown = "; ".join(result["unsettled"]) or "none"  # type: ignore[arg-type]
        print(
            f"{count} load(s) on core(s) {result['load_cores']}: exit {result['exit_status']} "
            f"in {result['seconds']} s; not visible or undecided: {shown}"
        )
        if "warm_seconds" in result:
            print(f"  warm rebuilds (median of {args.warm}): {result['warm_seconds']}")
        if result["exit_status"] != 0:
            print("\n".join(result["log_tail"]))  # type: ignore[arg-type]
    if args.json:
        args.json.write_text(json.dumps({"cpu": cpu, "rounds": rounds}, indent=2) + "\n")
    return 1 if any(r["exit_status"] != 0 for r in rounds) else 0


if __name__ == "__main__":
    raise SystemExit(main())
