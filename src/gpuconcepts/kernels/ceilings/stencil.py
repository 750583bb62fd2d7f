"""The depthwise stencil rate: FLOP/s of a canonical depthwise 3×3 convolution (``F.conv2d``
with ``groups = C``, channels-last, stride 1, 'same' padding), a diagnosis of the book's
depthwise kernel measured apart from it.

Its maps are ``stencil_HW`` pixels square at batch 1, with ``stencil_C`` channels multiplied
by 8 at each of ``stencil_points`` points (the presets' ``peaks`` table), so that its working
sets reach from a cache to DRAM. Every point stays at least 2x from every judged convolution in
batch and in map size (``tests/test_ceilings.py``); each is timed right after a cache flush,
as the memory-bound kernel it diagnoses is, at the median of its rounds. A kernel of workload
``cnn-depthwise`` is then read at the rate of the point nearest its working set
(:class:`~gpuconcepts.roofline.mechanisms.SweptRate`): its FLOPs at that rate are the least
time a depthwise stencil of its level takes here, whatever the DRAM roof says.

>>> [shape[2] for shape in stencil_shapes({"peaks": {"stencil_HW": 14, "stencil_C": 64,
...                                                  "stencil_points": 3}})]
[64, 512, 4096]
>>> stencil_shapes({"peaks": {"gemm_n": 64}})
()
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import torch
import torch.nn.functional as F

from gpuconcepts import formulas
from gpuconcepts.kernels._common import tensor, torch_dtype
from gpuconcepts.kernels.ceilings import DiagnosisSweep
from gpuconcepts.kernels.ceilings.rounds import SweepPoint, median_in_rounds
from gpuconcepts.roofline import RateSweep

NAME = "depthwise stencil"
K = 3
GROWTH = 8
"""Channels multiply by this from one point to the next."""


def stencil_shapes(presets: Mapping[str, Mapping[str, int]]) -> tuple[tuple[int, int, int], ...]:
    """The (batch, map size, channels) of each point, from the presets' ``peaks`` table; none
    when it gives no ``stencil_HW``."""
    sizes = presets.get("peaks", {})
    if "stencil_HW" not in sizes:
        return ()
    hw, channels = sizes["stencil_HW"], sizes["stencil_C"]
    return tuple((1, hw, channels * GROWTH**i) for i in range(sizes.get("stencil_points", 1)))


def stencil_call(device: str, shape: tuple[int, int, int], dtype: str) -> Callable[[], object]:
    """The depthwise 3×3 convolution of one point."""
    batch, hw, channels = shape
    x = tensor((batch, channels, hw, hw), dtype, device, seed=3)
    weight = tensor((channels, 1, K, K), dtype, device, seed=4)
    x = x.contiguous(memory_format=torch.channels_last)
    weight = weight.contiguous(memory_format=torch.channels_last)
    return lambda: F.conv2d(x, weight, padding=K // 2, groups=channels)


def stencil_sweep(
    device: str, presets: Mapping[str, Mapping[str, int]], dtype: str, repeats: int
) -> RateSweep | None:
    """The stencil's FLOP/s in ``dtype`` at each point's working set (its maps and filters, as
    ``formulas.depthwise_conv_bytes`` counts them), each point's median over ``repeats``
    interleaved rounds; None without sizes."""
    shapes = stencil_shapes(presets)
    if not shapes:
        return None
    element = torch.empty((), dtype=torch_dtype(dtype)).element_size()
    points = [SweepPoint(stencil_call(device, shape, dtype), flush=True) for shape in shapes]
    seconds = median_in_rounds(points, device, repeats=repeats)
    rates = []
    for (batch, hw, channels), t in zip(shapes, seconds, strict=True):
        sizes = {"B": batch, "H_out": hw, "W_out": hw, "K": K, "C": channels}
        nbytes = int(formulas.depthwise_conv_bytes(**sizes, s=element))
        rates.append((nbytes, float(formulas.depthwise_conv_flops(**sizes)) / t))
    source = "a canonical depthwise 3×3 convolution, 2x from every judged one"
    return RateSweep("cnn-depthwise", "flops", tuple(rates), source)


RATE_SWEEP = DiagnosisSweep(NAME, stencil_sweep)
