"""Benchmark of the analyzer's overhead: one ``analyze`` against the plain forward pass.

Run with ``nox -s bench`` or ``python benchmarks/bench_analyze.py [--device cpu]``.
Figures are reported, never asserted, and only as ratios against the plain forward pass
measured in the same run. ``analyze`` times every call alone, ``repeats`` times, flushing the
caches before each repetition of a memory-bound call, so its cost is many forward passes by
design. With ``repeats=1`` each call runs about three times (counted under hooks,
``TorchFunctionMode`` and ``FlopCounterMode``; warmed up; timed), so the goal is
``analyze(repeats=1)`` ≤ 3 × (number of calls) plain forward passes: anything above that is
the analyzer's own bookkeeping. The peaks are given, not measured, so that their few seconds
do not count.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from torch import nn

from gpuconcepts.analyze import analyze
from gpuconcepts.measure import device_name, resolve_device, time_function
from gpuconcepts.roofline import Peaks

GOAL_RUNS_PER_CALL = 3.0


def model() -> nn.Module:
    """A small CNN with an MLP head: the shape of model the command is first tried on."""
    return nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1, bias=False),
        nn.BatchNorm2d(32),
        nn.ReLU(),
        nn.Conv2d(32, 32, 3, padding=1, groups=32, bias=False),
        nn.Conv2d(32, 64, 1, bias=False),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(64, 256),
        nn.ReLU(),
        nn.Linear(256, 10),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="auto")
    parser.add_argument("--repeats", type=int, default=7)
    args, _ = parser.parse_known_args()  # nox passes every benchmark the same arguments
    device = resolve_device(args.device)
    net = model().to(device).eval()
    x = torch.randn(16, 3, 32, 32, device=device)
    peaks = Peaks(device, 1e11, 1e10, "float32")
    with torch.inference_mode():
        forward = statistics.median(time_function(lambda: net(x), device, repeats=args.repeats))

    def counting_only() -> None:
        # one call per layer and one repetition: the counting pass plus the least timing
        analyze(net, x, device=device, peaks=peaks, repeats=1)

    rounds = []
    for _ in range(3):
        start = time.perf_counter()
        counting_only()
        rounds.append(time.perf_counter() - start)
    start = time.perf_counter()
    report = analyze(net, x, device=device, peaks=peaks, repeats=args.repeats)
    full = time.perf_counter() - start
    calls = len(report.layers)
    print(f"device                     {device_name(device)}; {calls} calls per forward pass")
    print(f"analyze, repeats=1         {min(rounds) / forward:,.0f}× one plain forward pass")
    print(f"analyze, repeats={args.repeats:<10}{full / forward:,.0f}× one plain forward pass")
    print(
        f"calls timed one at a time  {report.seconds / report.forward_seconds:.2f}× the plain "
        "forward pass (flushed memory-bound calls start cold)"
    )
    goal = GOAL_RUNS_PER_CALL * calls
    print(f"goal: analyze with repeats=1 ≤ {goal:,.0f}× ({GOAL_RUNS_PER_CALL:g}× per call)")


if __name__ == "__main__":
    main()
