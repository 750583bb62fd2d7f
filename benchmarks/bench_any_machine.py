"""Issue 38's check on one machine: ``gpuconcepts profile --quick`` while sysfs reports this
machine's caches, and again while it reports those of other machines (an L3 of 1,152 MiB as on a
3D V-Cache EPYC, 8 MiB as on a laptop, none as on Arm, Apple and some VMs; see
``gpuconcepts.measure.SYSFS_CACHE_ENV``). For each it prints the wall time, the peak memory of
the process, the sizes the run took from its measured hierarchy, and every claim whose verdict
went from holds to fails or back against the run with the real sysfs (undecided and not
visible are no flip: they say a run could not decide). It asserts nothing; the issue's limits
(60 s and 2 GB on a 2-core machine) are read off it.

    python benchmarks/bench_any_machine.py [--only real|1152M|8M|none] [--load]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from background_load import streaming_load

from gpuconcepts.measure import cpu_cache_levels
from gpuconcepts.measure.memory import SYSFS_CACHE_ENV, write_cache_dir

MiB = 2**20
MACHINES = {"real": None, "1152M": 1152 * MiB, "8M": 8 * MiB, "none": 0}
"""The last cache each run's sysfs reports (None: this machine's own; 0: no L3)."""


def profile(env: dict[str, str]) -> tuple[float, int, dict[str, object]]:
    """Wall seconds, peak resident bytes and the JSON of one ``profile --quick`` run."""
    start = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "gpuconcepts", "profile", "--quick", "--device", "cpu", "--json"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    out = process.stdout.read() if process.stdout else ""
    _, status, usage = os.wait4(process.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit("profile --quick failed")
    return time.perf_counter() - start, usage.ru_maxrss * 1024, json.loads(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=sorted(MACHINES), help="one of the machines")
    parser.add_argument("--load", action="store_true", help="stream memory on one core")
    args = parser.parse_args()
    names = [args.only] if args.only else list(MACHINES)
    own = dict(cpu_cache_levels())
    verdicts: dict[str, dict[str, str]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        load = streaming_load(seconds=3600) if args.load else None
        if load is not None:
            load.__enter__()
        try:
            for name in names:
                env = {**os.environ, "GPUCONCEPTS_CACHE_DIR": tempfile.mkdtemp(dir=scratch)}
                l3 = MACHINES[name]
                if l3 is not None:
                    levels = {1: own.get("L1", 48 * 1024), 2: own.get("L2", 2 * MiB)}
                    if l3:
                        levels[3] = l3
                    env[SYSFS_CACHE_ENV] = str(write_cache_dir(Path(scratch) / name, levels))
                seconds, peak, run = profile(env)
                budget = run["provenance"]["sizes"]["budget"]  # type: ignore[index]
                verdicts[name] = {c["key"]: c["verdict"] for c in run["claims"]}  # type: ignore[attr-defined]
                print(f"{name:6s} {seconds:6.1f} s {peak / MiB:7.0f} MiB; cache "
                      f"{run['provenance']['cache_bytes'] / MiB:.0f} MiB, DRAM working sets "  # type: ignore[index]
                      f"{budget['beyond_bytes'] / MiB:.0f} MiB; "
                      f"DRAM reached: {budget['dram_reached']}", flush=True)  # fmt: skip
                for line in budget["shrunk"]:
                    print(f"       made smaller: {line}")
        finally:
            if load is not None:
                load.__exit__(None, None, None)
    if "real" not in verdicts:
        return
    decided = ("holds", "fails")
    for name, found in verdicts.items():
        if name == "real":
            continue
        flips = [
            f"{key}: {verdicts['real'][key]} -> {verdict}"
            for key, verdict in found.items()
            if verdict in decided and verdicts["real"].get(key, verdict) in decided
            and verdict != verdicts["real"][key]
        ]  # fmt: skip
        print(f"{name}: {len(flips)} claims flipped against the real sysfs" +
              "".join(f"\n  {flip}" for flip in flips))  # fmt: skip


if __name__ == "__main__":
    main()
