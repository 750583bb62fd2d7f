"""Do verdicts survive noise? ``gpuconcepts verify --quick`` on a quiet machine, then again while
another process streams memory on one core, beside the recorded full run of this machine.

Prints each claim's three verdicts, the flips (a claim that holds in one and fails in another),
and the share of claims decided (holds, fails or not visible; the rest are undecided). It
measures for about two minutes on a 2-core CPU, so it is a benchmark, not a test:

    python benchmarks/bench_stability.py [--device cpu] [--recorded docs/runs/FILE.json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from background_load import streaming_load

ROOT = Path(__file__).parents[1]
OPPOSED = {frozenset({"holds", "fails"})}


KEPT = ROOT / ".bench"
"""Where each run's ``verify --json`` is kept, to read the numbers behind a verdict."""


def verify(device: str, name: str) -> tuple[dict[str, str], float]:
    """Every claim's verdict from a fresh quick run, and the run's wall time."""
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "gpuconcepts", "verify", "--quick", "--device", device, "--json"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    KEPT.mkdir(exist_ok=True)
    (KEPT / f"stability-{name}.json").write_text(out.stdout)
    record = json.loads(out.stdout)
    return {c["key"]: c["verdict"] for c in record["claims"]}, time.perf_counter() - start


def recorded(path: Path) -> dict[str, str]:
    """The verdicts this version's judges give a recorded run."""
    out = subprocess.run(
        [sys.executable, "-m", "gpuconcepts", "verify", "--run", str(path), "--json"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return {c["key"]: c["verdict"] for c in json.loads(out.stdout)["claims"]}


def decided(verdicts: dict[str, str]) -> float:
    return sum(v != "undecided" for v in verdicts.values()) / len(verdicts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument(
        "--recorded", type=Path, default=ROOT / "docs" / "runs" / "cpu-amd-epyc-float32.json"
    )
    args = parser.parse_args(argv)
    quiet, quiet_s = verify(args.device, "quiet")
    with streaming_load(seconds=600) as core:
        loaded, loaded_s = verify(args.device, "loaded")
    full = recorded(args.recorded) if args.recorded.is_file() else {}
    names = ("quiet", f"loaded (core {core} streams)", "recorded full")
    print(f"{'claim':38s} " + " ".join(f"{n:>24s}" for n in names))
    flips = []
    for key in quiet:
        row = (quiet[key], loaded.get(key, "—"), full.get(key, "—"))
        mark = ""
        if frozenset(row[:2]) in OPPOSED:
            flips.append(f"{key}: quiet {row[0]}, loaded {row[1]}")
            mark = "  <- flips under load"
        if frozenset((row[0], row[2])) in OPPOSED:
            flips.append(f"{key}: quiet quick {row[0]}, recorded full {row[2]}")
            mark += "  <- quick and full disagree"
        print(f"{key:38s} " + " ".join(f"{v:>24s}" for v in row) + mark)
    print()
    print(
        f"quiet run {quiet_s:.0f} s, {decided(quiet):.0%} decided; "
        f"loaded run {loaded_s:.0f} s, {decided(loaded):.0%} decided"
    )
    print(f"holds against fails: {len(flips)}" + "".join(f"\n  {f}" for f in flips))
    print(f"(each run's verify --json is in {KEPT})")
    return 1 if flips else 0


if __name__ == "__main__":
    raise SystemExit(main())
