"""How much of every kernel's time do the roofs explain? Issue 21's measure of the roofline.

Places each measurement of a run under every roof (:func:`gpuconcepts.roofline.observe`) and
counts those within [1, 2]x of the roof that served them (``render.EXPLAINED``) and those that
beat their roof by more than 10 %. Prints the count and, for each one outside, the reason its
data give (:func:`gpuconcepts.render.why_unexplained`). Given no run, it collects a fresh quick
one first (about a minute on a 2-core CPU), so it is a benchmark, not a test:

    python benchmarks/bench_roofs.py [RUN.json ...] [--device cpu] [--load [--after S]]
                                     [--save PATH]

``--load`` collects the fresh run while another process streams memory on one core; with
``--after S`` that process starts S seconds into the run, once the run has chosen its cores
and measured some of its roofs (the load that rises part-way through a build).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from background_load import streaming_load

from gpuconcepts import units
from gpuconcepts.collect import collect
from gpuconcepts.render import EXPLAINED, why_unexplained
from gpuconcepts.roofline import observe
from gpuconcepts.run import Run, load
from gpuconcepts.units import sizes

BEATEN = 1.1
"""A kernel that reached more than 110 % of its roof beat it (issue 21's limit)."""


def report(run: Run, name: str) -> tuple[int, int]:
    """Print the explained count and the list outside; return (explained, measurements)."""
    peaks = run.peaks
    outside, beaten = [], []
    explained = 0
    for number, m in enumerate(run.measurements, start=1):
        roof, attained = observe(m, peaks)
        why = why_unexplained(m, peaks)
        if attained > BEATEN:  # not explained by its roof, whatever its spread
            beaten.append(
                f"{number}. {m.workload} ({sizes(m.params)}): {roof} at {units.percent(attained)}"
            )
        if why is not None:
            outside.append(f"{number}. {m.workload} ({sizes(m.params)}), {roof}: {why}")
        explained += why is None and attained <= BEATEN
    total = len(run.measurements)
    low, high = EXPLAINED
    strict = sum(low <= observe(m, peaks)[1] <= high for m in run.measurements)
    print(f"== {name}: {explained} of {total} ({units.percent(explained / total)}) explained "
          f"by their roof, {strict} of them within [{units.significant(1 / high)}, "
          f"{units.significant(1 / low)}]x of it (the others explained a little over it, "
          f"within their spread and 10 %); {len(beaten)} beat it by more than 10 %")  # fmt: skip
    for line in [*beaten, *outside]:
        print("  " + line)
    return explained, total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="*", help="saved runs (JSON); none: collect a quick one")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--load", action="store_true", help="collect under a background load")
    parser.add_argument(
        "--after",
        type=float,
        default=0.0,
        metavar="S",
        help="with --load: start the load S seconds into the run",
    )
    parser.add_argument("--save", metavar="PATH", help="keep the fresh run in PATH (JSON)")
    args = parser.parse_args()
    if args.after and not args.load:
        parser.error("--after needs --load")
    if args.runs:
        for path in args.runs:
            report(load(path), path)
        return 0
    if args.load:
        with streaming_load(after=args.after):
            command = f"bench_roofs.py --load --after {args.after:g}"
            run = collect(args.device, quick=True, command=command)
    else:
        run = collect(args.device, quick=True, command="bench_roofs.py")
    if args.save:
        run.save(args.save)
    loaded = f" under load from {args.after:g} s" if args.load else ""
    report(run, f"fresh quick run{loaded}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
