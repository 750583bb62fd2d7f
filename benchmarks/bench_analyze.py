"""Benchmark of the analyzer's cost: one ``analyze`` against one plain forward pass.

Run with ``nox -s bench`` or ``python benchmarks/bench_analyze.py [--device cpu]``.
Figures are reported, never asserted, and only as ratios against the plain forward pass
measured in the same run, on a resnet18-like and a ViT-B/16-like model built here by hand
(random weights, the torchvision shapes; torchvision is not needed). ``analyze`` counts in one
forward pass, times each distinct call alone (identical layers share one timing) and the plain
forward pass once more; the goal is ``analyze`` ≤ 10 forward passes. The peaks are given, not
measured, so that their few seconds do not count. The default batch is 8: at batch 1 a
resnet18 forward pass takes a few tens of milliseconds on a CPU, and the fixed cost of
flushing the caches before each repetition of a memory-bound call (about 10 ms each on a
2-core CPU) outweighs it. Measured on a loaded 2-core AMD EPYC, 2026-12-01: resnet18 at
batch 8, 7.2 forward passes (7.9 s against 1.09 s).
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from torch import nn

from gpuconcepts.analyze import analyze
from gpuconcepts.measure import device_name, resolve_device
from gpuconcepts.roofline import Peaks

GOAL_FORWARD_PASSES = 10.0


class BasicBlock(nn.Module):
    def __init__(self, c_in: int, c_out: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(c_in, c_out, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(c_out)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(c_out, c_out, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(c_out)
        self.downsample = (
            nn.Sequential(nn.Conv2d(c_in, c_out, 1, stride, bias=False), nn.BatchNorm2d(c_out))
            if stride != 1 or c_in != c_out
            else None
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.bn2(self.conv2(self.relu(self.bn1(self.conv1(x)))))
        return self.relu(y + (x if self.downsample is None else self.downsample(x)))


def resnet18() -> nn.Module:
    """torchvision's resnet18: a 7×7 stem, four stages of two basic blocks, a classifier."""
    stages, c_in = [], 64
    for c_out, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        stages += [BasicBlock(c_in, c_out, stride), BasicBlock(c_out, c_out, 1)]
        c_in = c_out
    return nn.Sequential(
        nn.Conv2d(3, 64, 7, 2, 3, bias=False),
        nn.BatchNorm2d(64),
        nn.ReLU(inplace=True),
        nn.MaxPool2d(3, 2, 1),
        *stages,
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(512, 1000),
    )


class EncoderBlock(nn.Module):
    def __init__(self, d: int = 768, heads: int = 12, hidden: int = 3072) -> None:
        super().__init__()
        self.ln_1, self.ln_2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.self_attention = nn.MultiheadAttention(d, heads, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(d, hidden), nn.GELU(), nn.Linear(hidden, d))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.ln_1(x)
        x = x + self.self_attention(y, y, y, need_weights=False)[0]
        return x + self.mlp(self.ln_2(x))


class ViT(nn.Module):
    """torchvision's vit_b_16: 16×16 patches of a 224×224 image, 12 encoder blocks of 768."""

    def __init__(self, d: int = 768, layers: int = 12) -> None:
        super().__init__()
        self.conv_proj = nn.Conv2d(3, d, 16, 16)
        self.class_token = nn.Parameter(torch.zeros(1, 1, d))
        self.pos_embedding = nn.Parameter(torch.zeros(1, 197, d))
        self.layers = nn.Sequential(*[EncoderBlock(d) for _ in range(layers)])
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, 1000)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv_proj(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.class_token.expand(x.shape[0], -1, -1), x], dim=1)
        return self.head(self.ln(self.layers(x + self.pos_embedding))[:, 0])


def forward_seconds(net: nn.Module, x: torch.Tensor, device: str) -> list[tuple[float, float]]:
    """Wall and CPU seconds (this process's, every thread) of five plain forward passes."""
    times = []
    with torch.inference_mode():
        for _ in range(5):
            start, cpu = time.perf_counter(), time.process_time()
            net(x)
            if device == "cuda":
                torch.cuda.synchronize()
            times.append((time.perf_counter() - start, time.process_time() - cpu))
    return times


def one_time_seconds(device: str, peaks: Peaks) -> float:
    """Seconds of a first ``analyze`` on a one-layer model: what a process pays once (torch
    imports ``torch._dynamo`` on FlopCounterMode's first call), kept out of the ratios."""
    start = time.perf_counter()
    analyze(nn.Linear(4, 4), torch.randn(2, 4, device=device), device=device, peaks=peaks)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="auto")
    parser.add_argument("--batch", type=int, action="append", help="batch sizes (default: 1, 8)")
    parser.add_argument("--threads", type=int, help="torch's CPU threads (default: torch's)")
    args, _ = parser.parse_known_args()  # nox passes every benchmark the same arguments
    if args.threads:  # on a shared machine, one thread is not held up by a busy core
        torch.set_num_threads(args.threads)
    device = resolve_device(args.device)
    peaks = Peaks(device, 1e11, 1e10, "float32")
    print(f"device  {device_name(device)}; images of 3×224×224")
    print(f"once per process: {one_time_seconds(device, peaks):.2f} s (not in the ratios)")
    for batch in args.batch or [1, 8]:
        for name, build in (("resnet18", resnet18), ("vit_b_16", ViT)):
            torch.manual_seed(0)
            net = build().to(device).eval()
            x = torch.randn(batch, 3, 224, 224, device=device)
            with torch.inference_mode():
                net(x)  # the first pass allocates; the forward pass is timed warm
            before = forward_seconds(net, x, device)
            start, cpu = time.perf_counter(), time.process_time()
            report = analyze(net, x, device=device, peaks=peaks)
            seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
            after = forward_seconds(net, x, device)
            # the forward pass timed before and after: a burst of load falls on both sides
            forward = statistics.median([w for w, _ in before + after])
            forward_cpu = statistics.median([c for _, c in before + after])
            timed = sum(layer.shares_timing_of is None for layer in report.layers)
            print(
                f"{name:9} batch {batch}: {seconds / forward:5.1f} forward passes ({seconds:.2f} s "
                f"against {forward * 1e3:.0f} ms), {cpu / forward_cpu:5.1f} in CPU time; "
                f"{len(report.layers)} calls, {timed} timed"
            )
    print(f"goal: analyze ≤ {GOAL_FORWARD_PASSES:g} forward passes")


if __name__ == "__main__":
    main()
