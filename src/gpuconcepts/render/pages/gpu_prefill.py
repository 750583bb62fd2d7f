"""The GPU chapter's account of the prefill in the two H200 runs: why attention took many times
longer in TF32 than in bf16, when the bytes and the tensor cores' peaks each predict 2×.

Every number is read from the two recorded runs (:func:`~gpuconcepts.render.pages.gpu_dtype.dtype_pair`)
and the datasheet table: the time ratios of the prefill kernels, the ratio of the bytes per
value and of the tensor-core peaks, the roof that binds (the ridge point against the kernels'
intensity), the share of it each run reached, and the rate the TF32 run's own products reached
in FP32 (its GEMM sweep). Without such a pair of runs the text is "—".

>>> prefill_story([])["prefill_text"]
'—'
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuconcepts import units
from gpuconcepts.claims.accuracy import gemm_sweep_dtype
from gpuconcepts.hardware import TORCH_DTYPES, dtype_bytes, lookup
from gpuconcepts.render.pages.gpu_dtype import dtype_pair, dtype_pairs
from gpuconcepts.roofline import place

if TYPE_CHECKING:
    from gpuconcepts.measure import Measurement
    from gpuconcepts.render.pages import Glue
    from gpuconcepts.run import Run

PREFILLS = frozenset({"transformer-prefill", "transformer-prefill-causal"})
"""The attention kernels whose two runs the passage compares."""


@dataclass(frozen=True)
class PrefillPair:
    """The prefill kernels timed in both runs of one GPU (the 16-bit run first), with what
    each ratio is set against."""

    base: Run
    other: Run
    pairs: tuple[tuple[Measurement, Measurement], ...]

    @property
    def time_ratios(self) -> list[float]:
        """Each prefill's time in the second run over its time in the first."""
        return [two.seconds / one.seconds for one, two in self.pairs]

    @property
    def bytes_ratio(self) -> float:
        """Bytes per value in the second run over the first (4 against 2 for tf32 and bf16)."""
        return dtype_bytes(self.other.peaks.dtype) / dtype_bytes(self.base.peaks.dtype)

    def shares(self, second: bool) -> list[float]:
        """The share of its binding roof each prefill reached, in the second run or the first."""
        run = self.other if second else self.base
        return [place(pair[second], run.peaks).attained for pair in self.pairs]

    def bounds(self, second: bool) -> set[str]:
        """The bound the formulas give each prefill (its intensity against the ridge point)."""
        run = self.other if second else self.base
        return {place(pair[second], run.peaks).bound for pair in self.pairs}


def prefill_pair(runs: Sequence[Run]) -> PrefillPair | None:
    """The prefill kernels of the GPU chapter's two runs, None without two such runs."""
    pair = dtype_pair(runs)
    if pair is None:
        return None
    base, other = pair
    found = tuple(
        (one, two)
        for one, two in dtype_pairs(base, other)
        if one.workload in PREFILLS and _timed(one) and _timed(two)
    )
    return PrefillPair(base, other, found) if found else None


def _timed(m: Measurement) -> bool:
    """Whether ``m`` holds a usable time (a busy run may leave none, or an infinite one)."""
    return math.isfinite(m.seconds) and m.seconds > 0 and math.isfinite(m.flops_per_s)


def _span(values: Sequence[float], show: Callable[[float], str] = units.times) -> str:
    """The smallest and the largest of ``values`` shown, "A to B" (one value when they agree)."""
    finite = [v for v in values if math.isfinite(v)]
    if not finite:  # nothing usable measured: the reader sees the book's placeholder
        return units.NOTHING
    low, high = (show(v) for v in (min(finite), max(finite)))
    return low if low == high else f"{low} to {high}"


def _roofs(found: PrefillPair) -> str:
    """The sentence on which roof binds in both runs and the share of it each reached."""
    a, b = (TORCH_DTYPES.get(r.peaks.dtype, r.peaks.dtype) for r in (found.base, found.other))
    twos = [two for _, two in found.pairs]
    binds = found.bounds(True) | found.bounds(False)
    where = (
        "so the compute roof binds in both runs"
        if binds == {"compute"}
        else f"so the formulas place them {', '.join(sorted(binds))}-bound"
    )
    rates = [two.flops_per_s for two in twos]
    return (
        f"In {b} the prefill's intensity, {_span([m.intensity for m in twos], units.significant)} "
        f"FLOP/byte, still lies right of that run's ridge point of "
        f"{units.significant(found.other.peaks.ridge_point)}, {where}. Against that roof the "
        f"{a} prefill reached {_span(found.shares(False), units.percent)}, and the {b} one only "
        f"{_span(found.shares(True), units.percent)}: "
        f"{_span(rates, lambda r: units.si(r, 'FLOP/s'))}."
    )


def _fp32(found: PrefillPair) -> str:
    """The sentence that sets the tf32 prefill's rate beside FP32 arithmetic: the run's own
    GEMM sweep when it ran in float32, and the datasheet's FP32 rate ("" without either)."""
    other = found.other
    best = max((point[3] for point in other.peaks.gemm_sweep), default=None)
    gpu = lookup(other.provenance.device_name)
    sheet = None if gpu is None else gpu.peak("fp32")
    if best is None or sheet is None or gemm_sweep_dtype(other) != "float32":
        return ""
    fastest = max(two.flops_per_s for _, two in found.pairs)
    relation = "no faster than" if fastest <= best * 1.1 else "faster than"
    return (
        f" That is {relation} the same run's products in plain FP32 (its GEMM sweep's best, "
        f"{units.si(best, 'FLOP/s')}), and below the datasheet's FP32 rate without tensor "
        f"cores, {units.si(sheet, 'FLOP/s')}."
    )


def prefill_text(found: PrefillPair) -> str:
    """The passage: how much longer the prefill took, what bytes and peaks predict, which
    roof binds, how much of it each run reached, and what that rate matches."""
    base, other = found.base, found.other
    a, b = (TORCH_DTYPES.get(r.peaks.dtype, r.peaks.dtype) for r in (base, other))
    gpu = lookup(base.provenance.device_name)
    sheet = None if gpu is None else (gpu.peak(base.peaks.dtype), gpu.peak(other.peaks.dtype))
    peaks = (
        f"the datasheet's tensor-core peaks, {units.si(sheet[0], 'FLOP/s')} in {a} against "
        f"{units.si(sheet[1], 'FLOP/s')} in {b}, predict {units.times(sheet[0] / sheet[1])}"
        if sheet is not None and sheet[0] and sheet[1]
        else "the measured peaks predict "
        f"{units.times(base.peaks.flops_per_s / other.peaks.flops_per_s)}"
    )
    sizes = sorted({one.size("S") for one, _ in found.pairs})
    said = (
        f"At S = {_span(sizes, units.plain_number)} the prefill took "
        f"{_span(found.time_ratios)} as long in {b} as in {a}. Its values take "
        f"{dtype_bytes(other.peaks.dtype)} bytes against {dtype_bytes(base.peaks.dtype)}, "
        f"{units.times(found.bytes_ratio)} the bytes, and {peaks}. {_roofs(found)}"
        f"{_fp32(found)}"
    )
    explained = max(found.bytes_ratio, base.peaks.flops_per_s / other.peaks.flops_per_s)
    rest = min(found.time_ratios) / explained
    if rest > 2:
        fp32 = None if gpu is None else gpu.peak("fp32")
        slow = fp32 is not None and max(two.flops_per_s for _, two in found.pairs) <= fp32
        said += (
            f" The bytes and the peaks explain {units.times(explained)}; the other "
            f"{units.times(rest)} or more is the attention kernel PyTorch ran on "
            f"{dtype_bytes(other.peaks.dtype)}-byte values"
            + (
                f", which ran at the rate of FP32 arithmetic, not at the tensor cores' {b} rate."
                if slow
                else "."
            )
            + " The runs do not name that kernel."
        )
    return said


def prefill_story(runs: Sequence[Run]) -> Glue:
    """The GPU chapter's ``prefill_text``: "—" without two runs of one GPU timing the prefill."""
    found = prefill_pair(runs)
    return {"prefill_text": units.NOTHING if found is None else prefill_text(found)}
