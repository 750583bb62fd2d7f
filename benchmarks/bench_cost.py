"""What a quick run costs: wall time and peak memory of ``gpuconcepts profile --quick`` and of
its peaks step, against an earlier version measured in the same session (issue 38).

The earlier version is a git reference (``--baseline``: a release tag, a commit) unpacked with
``git archive`` into a temporary folder; both run from source (``PYTHONPATH``) in the same
Python, each in a process of its own, in interleaved rounds whose order is shuffled, so that a
busy moment of the machine falls on both alike. Each process keeps its peaks in a folder of its
own (``GPUCONCEPTS_CACHE_DIR``), so neither reuses the other's. Peak memory is the process's
``ru_maxrss`` (the distributed part's worker processes are not counted: each is a small torch
process of its own). It prints each round and the ratios (this version over the baseline); it
asserts nothing: the issue's limits (60 s and 2 GB on a 2-core machine) are read off it.

    python benchmarks/bench_cost.py [--baseline REF] [--rounds 2] [--only peaks|profile]
                                    [--load] [--json PATH]

``--load`` runs the rounds while another process streams memory on one core.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from background_load import streaming_load

ROOT = Path(__file__).resolve().parents[1]

STEPS = {
    "peaks": [
        "-c",
        # a run's sizes resolved once (gpuconcepts.sizing); a reference before it took quick
        (
            "from gpuconcepts.kernels import measure_peaks\n"
            "try:\n    from gpuconcepts.sizing import RunSizes\n"
            "    sizes = RunSizes.resolve('cpu', True)\n"
            "except ImportError:\n    sizes = True\n"
            "measure_peaks('cpu', sizes)"
        ),
    ],
    "profile": ["-m", "gpuconcepts", "profile", "--quick", "--device", "cpu"],
}
"""What each step runs, in a Python of its own."""


def unpack(reference: str, into: Path) -> Path:
    """The source tree of ``reference`` (a tag, a commit) in ``into``."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", reference],
        check=True,
        capture_output=True,
    ).stdout
    into.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def run_step(tree: Path, step: str, cache: Path) -> tuple[float, int]:
    """Wall seconds and peak resident bytes of one step run from ``tree``'s sources."""
    env = {**os.environ, "PYTHONPATH": str(tree / "src"), "GPUCONCEPTS_CACHE_DIR": str(cache)}
    start = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, *STEPS[step]],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    errors = process.stderr.read() if process.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{step} from {tree} failed:\n{errors[-2000:]}")
    return seconds, usage.ru_maxrss * 1024  # Linux reports KiB


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--baseline", metavar="REF", help="a tag or commit (default: the newest release tag)"
    )
    parser.add_argument("--rounds", type=int, default=2, help="interleaved rounds (2)")
    parser.add_argument("--only", choices=sorted(STEPS), help="one step instead of both")
    parser.add_argument("--load", action="store_true", help="stream memory on one core")
    parser.add_argument("--json", metavar="PATH", help="also write every round as JSON")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error(f"--rounds must be at least 1; got {args.rounds}")
    if args.baseline is None:
        newest = subprocess.run(
            ["git", "-C", str(ROOT), "describe", "--tags", "--abbrev=0"],
            check=False,
            capture_output=True,
            text=True,
        )
        if newest.returncode != 0:
            print("bench_cost: no release tag to compare with; give --baseline REF")
            return
        args.baseline = newest.stdout.strip()
    steps = [args.only] if args.only else sorted(STEPS)
    with tempfile.TemporaryDirectory() as scratch:
        base = unpack(args.baseline, Path(scratch) / "baseline")
        trees = {"this": ROOT, "baseline": base}
        rows: list[dict[str, object]] = []
        load = streaming_load(seconds=7200) if args.load else None
        if load is not None:
            load.__enter__()
        try:
            for number in range(1, args.rounds + 1):
                order = [(name, step) for name in trees for step in steps]
                random.shuffle(order)
                for name, step in order:
                    cache = Path(tempfile.mkdtemp(dir=scratch))
                    seconds, peak = run_step(trees[name], step, cache)
                    rows.append(
                        {"round": number, "version": name, "step": step, "seconds": seconds,
                         "peak_bytes": peak}
                    )  # fmt: skip
                    print(f"round {number}: {name:8s} {step:7s} {seconds:7.1f} s "
                          f"{peak / 2**20:7.0f} MiB", flush=True)  # fmt: skip
        finally:
            if load is not None:
                load.__exit__(None, None, None)
    print(f"== this version over {args.baseline} (median of {args.rounds} rounds, each ratio "
          f"from one round){' under a streaming load on one core' if args.load else ''}")  # fmt: skip
    for step in steps:
        for what, unit, scale in (("seconds", "s", 1), ("peak_bytes", "MiB", 2**20)):
            pairs = []
            for number in range(1, args.rounds + 1):
                this, base_row = (
                    next(
                        r for r in rows
                        if r["round"] == number and r["version"] == name and r["step"] == step
                    )
                    for name in ("this", "baseline")
                )  # fmt: skip
                pairs.append((float(this[what]), float(base_row[what])))  # type: ignore[arg-type]
            ratio = statistics.median(a / b for a, b in pairs)
            this_median = statistics.median(a for a, _ in pairs) / scale
            base_median = statistics.median(b for _, b in pairs) / scale
            print(f"  {step:7s} {what:10s} {this_median:8.1f} {unit} against "
                  f"{base_median:8.1f} {unit}: {ratio:.2f}x")  # fmt: skip
    if args.json:
        Path(args.json).write_text(json.dumps({"baseline": args.baseline, "rounds": rows}))


if __name__ == "__main__":
    main()
