"""Placement: a measurement read against a set of peaks, in the words the rest of the book
uses (the formulas' predicted side of the ridge, the verdict's bound and attained fraction),
and the model's plain formulas (ridge, roofline time, attainable FLOP/s).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from gpuconcepts import formulas
from gpuconcepts.roofline.peaks import Peaks
from gpuconcepts.roofline.roofs import MemoryRoof, RoofKind, random_lines, table_level, verdict
from gpuconcepts.units import percent, times

if TYPE_CHECKING:
    from gpuconcepts.measurement import Measurement

Side = Literal["memory", "compute"]
"""The side of the ridge a kernel's intensity falls on: the formulas' prediction."""

ABOVE_EVERY_ROOF = "above every roof"
"""How a page names a kernel that beat its roof beyond its spread (:attr:`Verdict.beaten
<gpuconcepts.roofline.roofs.Verdict.beaten>`): a measurement to doubt, never a verdict."""


@dataclass(frozen=True)
class Placement:
    """A measurement read against a set of peaks.

    ``bound`` is the formulas' prediction (the side of the DRAM ridge the intensity falls on);
    ``observed`` names the roof of the verdict (:func:`~gpuconcepts.roofline.roofs.verdict`):
    ``compute``, the memory level its working set fits in, or ``overhead``; ``kind`` is that
    roof's regime, ``attained`` the fraction of it reached and ``attained_interval`` its
    spread (at the third and first quartiles of the time); ``at_random`` is True when the roof
    is the random-access rate of that memory level, not its streaming bandwidth.

    >>> from gpuconcepts.measure import Measurement
    >>> from gpuconcepts.roofline.peaks import MemoryLevel
    >>> p = Peaks(device="cpu", flops_per_s=1e11, bytes_per_s=1e10, dtype="float32",
    ...           levels=(MemoryLevel("L3", 32 * 2**20, 4e10),))
    >>> m = Measurement("mlp", "cpu", {"B": 64}, (0.011, 0.010, 0.012), 1e9, 2e7)
    >>> where = place(m, p)
    >>> where.bound, where.predicted_seconds, round(where.ratio, 2), where.observed, where.kind
    ('compute', 0.01, 1.1, 'compute', 'compute')
    >>> hot = Measurement("dlrm-hot", "cpu", {}, (1e-3,), 1e6, 2e7)  # 20 MB fit in L3
    >>> place(hot, p).bound, place(hot, p).observed, place(hot, p).attained
    ('memory', 'L3', 0.5)
    """

    predicted_seconds: float
    ratio: float
    bound: Side
    observed: str
    attained: float
    kind: RoofKind = "compute"
    attained_interval: tuple[float, float] = (0.0, 0.0)
    beaten: bool = False
    at_random: bool = False


def place(m: Measurement, peaks: Peaks) -> Placement:
    """Where ``m`` sits under ``peaks``: its roofline time, measured ÷ roofline, the predicted
    side of the ridge (by the formulas' intensity), and the verdict."""
    predicted = predicted_seconds(m.flops, m.bytes, peaks)
    found = verdict(m, peaks)
    return Placement(
        predicted_seconds=predicted,
        ratio=m.seconds / predicted,
        bound=classify(m.intensity, peaks),
        observed=found.name,
        attained=found.attained,
        kind=found.kind,
        attained_interval=found.attained_interval,
        beaten=found.beaten,
        at_random=found.binding.random,
    )


def observe(m: Measurement, peaks: Peaks) -> tuple[str, float]:
    """The name of the roof that binds ``m`` and the fraction of it attained (the verdict's);
    :data:`ABOVE_EVERY_ROOF` for a kernel that beat its roof beyond its spread.

    >>> from gpuconcepts.measure import Measurement
    >>> p = Peaks("cpu", 1e11, 1e10, "float32")
    >>> observe(Measurement("x", "cpu", {}, (3e-3,), 1e8, 2e7), p)
    ('DRAM', 0.6666666666666666)
    >>> observe(Measurement("x", "cpu", {}, (1e-3,), 1e8, 2e7), p)
    ('above every roof', 2.0)
    """
    found = verdict(m, peaks)
    return ABOVE_EVERY_ROOF if found.beaten else found.name, found.attained


def roof_times(m: Measurement, peaks: Peaks) -> list[tuple[str, float]]:
    """Each roof's lower bound on ``m``'s time, by name: compute, the memory level that serves
    it, and the overhead floor when one was measured.

    >>> from gpuconcepts.measure import Measurement
    >>> p = Peaks("cpu", 1e11, 1e10, "float32", latency_seconds=2e-6, op_seconds=1e-6)
    >>> loop = Measurement("rnn-loop", "cpu", {}, (5e-3,), 2e6, 1e5, ops=4096, steps=1024)
    >>> [(name, round(t * 1e6, 1)) for name, t in roof_times(loop, p)]
    [('compute', 20.0), ('DRAM', 10.0), ('overhead', 4096.0)]
    """
    return [(b.name, b.seconds) for b in verdict(m, peaks).bounds]


def beats_every_roof(m: Measurement, peaks: Peaks) -> bool:
    """True when ``m`` beat its roof by more than its spread: even its third-quartile time is
    faster than the roof allows. Never a verdict: a faster code path than the compute peak's
    (:func:`faster_path`), or else a faulty measurement or a ceiling measured in a busy moment.

    >>> from gpuconcepts.measure import Measurement
    >>> p = Peaks(device="cpu", flops_per_s=1e11, bytes_per_s=1e10, dtype="float32")
    >>> beats_every_roof(Measurement("mlp", "cpu", {}, (0.008, 0.009, 0.0095), 1e9, 1e6), p)
    True
    >>> beats_every_roof(Measurement("mlp", "cpu", {}, (0.008, 0.009, 0.014), 1e9, 1e6), p)
    False
    """
    return verdict(m, peaks).beaten


PATH_FACTOR = 4.0
"""Where a run records no hardware limit (no FMA table for its CPU, or a GPU), a kernel at
most this many times the compute peak P is taken to run a faster code path than P's: the
widest gap between two GEMM paths of one machine the project has measured is oneDNN's 2.1×
``torch.mm``'s on an AMD EPYC (Zen 5), and 4 is the most a roofline claim lets a kernel
attain of its roof."""


FASTER_PATH = "a faster code path than P's square GEMM, or P measured in a slower moment"
"""What a kernel above P within the hardware's limit tells (:func:`faster_path`), in words:
both readings fit, and only a wide gap (a oneDNN convolution at twice P) points to the first."""


def faster_path(m: Measurement, peaks: Peaks) -> bool:
    """Whether ``m``, above every roof beyond its spread, ran a faster code path than the
    compute peak's: P is the rate of the library's square GEMM, not physics, so a kernel above
    it but within the hardware's limit (``physical_flops_per_s``; :data:`PATH_FACTOR` × P
    where the run records none) is a finding (a oneDNN convolution beside ``torch.mm`` on a
    CPU). False when it beat no roof, beat a memory roof (:func:`faster_gather` says when that
    is a finding too) or beat that limit: an anomaly.

    >>> from dataclasses import replace
    >>> from gpuconcepts.measure import Measurement
    >>> conv = Measurement("cnn-conv", "cpu", {}, (0.005,) * 3, 1e9, 1e6)  # 200 GFLOP/s
    >>> p = Peaks(device="cpu", flops_per_s=1e11, bytes_per_s=1e10, dtype="float32")
    >>> faster_path(conv, p), faster_path(conv, replace(p, physical_flops_per_s=4e11))
    (True, True)
    >>> faster_path(conv, replace(p, physical_flops_per_s=1.5e11))
    False
    """
    found = verdict(m, peaks)
    if not found.beaten or found.binding.roof.kind != "compute":
        return False
    limit = peaks.physical_flops_per_s
    return m.flops_per_s <= (PATH_FACTOR * peaks.flops_per_s if limit is None else limit)


FASTER_GATHER = (
    "its rows came faster than the gather sweep's rate for their width and table: that rate "
    "is measured on other tables, not a physical limit, so the model's time missed"
)
"""What a random-row kernel above the gather sweep's rate but within the streaming bound of
its lines tells (:func:`faster_gather`), in words."""


def streaming_seconds(m: Measurement, peaks: Peaks) -> float:
    """The least time the memory allows ``m`` whatever its access order: the bytes its code
    moves at the bandwidth of the level that holds its working set (after a flush, every
    distinct byte at DRAM's too) and, for rows fetched at random, each row's whole lines at
    the streaming bandwidth of the level that holds its table. The memory roof reads random
    rows at the gather sweep's slower line rate instead; no order of rows beats this bound.

    >>> from gpuconcepts.measure import Measurement
    >>> p = Peaks("cpu", 1e11, 1e10, "float32", line_bytes=64)
    >>> rows = Measurement("dlrm-random", "cpu", {"N": 2**24, "d": 4, "s": 4}, (1.0,), 0, 2**20,
    ...                    random_rows=10**6, row_bytes=16)
    >>> streaming_seconds(rows, p)  # a million 64-byte lines at 10 GB/s
    0.0064
    """
    seconds = max(b.seconds for b in MemoryRoof().streaming(m, peaks))
    lines = random_lines(m, peaks)
    if lines is None or peaks.line_bytes is None:
        return seconds
    return max(seconds, lines * peaks.line_bytes / table_level(m, peaks).bytes_per_s)


def faster_gather(m: Measurement, peaks: Peaks) -> bool:
    """Whether ``m``, above its memory roof beyond its spread, beat only the gather sweep's
    rate for random rows and not the streaming bound of its lines (:func:`streaming_seconds`):
    a miss of the model's time, scored in ledger 2, never an anomaly that fails a claim.

    >>> from gpuconcepts.measure import Measurement
    >>> p = Peaks("cpu", 1e11, 1e10, "float32", line_bytes=64, random_sweep=((2**28, 16, 5e7),))
    >>> def rows(seconds):
    ...     return Measurement("dlrm-random", "cpu", {"N": 2**24, "d": 4, "s": 4}, (seconds,) * 3,
    ...                        0, 2**20, random_rows=10**6, row_bytes=16)
    >>> faster_gather(rows(0.015), p), faster_gather(rows(0.025), p), faster_gather(rows(0.005), p)
    (True, False, False)
    """
    found = verdict(m, peaks)
    if not found.beaten or found.binding.roof.kind != "memory":
        return False
    return m.interval_seconds[1] >= streaming_seconds(m, peaks)


def finding(m: Measurement, peaks: Peaks) -> str:
    """What a kernel above every roof beyond its spread tells when no physical limit was
    beaten: :data:`FASTER_PATH` above the compute peak (:func:`faster_path`),
    :data:`FASTER_GATHER` above the gather sweep's rate (:func:`faster_gather`); "" when it
    beat no roof, or beat a physical limit (an anomaly: a faulty measurement, or a ceiling
    measured in a busy moment). The claims, the pages and the analysis read this one rule."""
    if faster_path(m, peaks):
        return FASTER_PATH
    if faster_gather(m, peaks):
        return FASTER_GATHER
    return ""


def beaten_by(attained: float) -> str:
    """How far a kernel beat a roof, in words that fit the ratio: "ran 2× as fast as" from
    1.5 up; below, the share of the time it saved, since a ratio near one reads "1×" at the
    book's precision.

    >>> beaten_by(2.0), beaten_by(1.057)
    ('ran 2× as fast as', 'took 5.4% less time than')
    """
    if attained >= 1.5:
        return f"ran {times(attained)} as fast as"
    return f"took {percent(1 - 1 / attained)} less time than"


def overhead_flops_per_s(m: Measurement, peaks: Peaks) -> float | None:
    """The FLOP/s the overhead floor allows ``m`` when that floor binds it (no line in
    intensity, so a figure draws it at the kernel's own intensity); None otherwise, and for a
    kernel that does no arithmetic.

    >>> from gpuconcepts.measure import Measurement
    >>> p = Peaks("cpu", 1e11, 1e10, "float32", latency_seconds=2e-6, op_seconds=1e-6)
    >>> loop = Measurement("rnn-loop", "cpu", {}, (8e-3,), 2e6, 1e5, ops=4096, steps=1024)
    >>> round(overhead_flops_per_s(loop, p) / 1e6)
    488
    >>> overhead_flops_per_s(Measurement("mlp", "cpu", {}, (0.02,), 1e9, 1e6), p) is None
    True
    """
    found = verdict(m, peaks)
    if m.flops == 0 or found.kind != "overhead":
        return None
    return m.flops / found.roof_seconds


def changes_side(
    measurements: Sequence[Measurement], here: Peaks, elsewhere: Sequence[Peaks]
) -> list[tuple[Measurement, tuple[str, ...]]]:
    """The measurements whose predicted bound under ``here`` is not their bound under some of
    ``elsewhere`` (other machines' peaks), each with the names of the peaks where it changes
    side.

    A kernel's intensity is the same everywhere; only the ridge point it is read against moves.

    >>> cpu = Peaks("cpu", 1e11, 1e10, "float32")  # ridge 10 FLOP/byte
    >>> gpus = [Peaks("cuda", 2e13, 2e12, "float32", name="A"),
    ...         Peaks("cuda", 8e13, 1e12, "float32", name="B")]  # ridges 10 and 80
    >>> from gpuconcepts.measure import Measurement
    >>> kernels = [Measurement(name, "cpu", {}, (1.0,), flops, 1.0)
    ...            for name, flops in (("lookup", 0.25), ("mlp", 40.0), ("gemm", 200.0))]
    >>> [(m.workload, where) for m, where in changes_side(kernels, cpu, gpus)]
    [('mlp', ('B',))]
    """
    changed = []
    for m in measurements:
        verdict = classify(m.intensity, here)
        where = tuple(p.name for p in elsewhere if classify(m.intensity, p) != verdict)
        if where:
            changed.append((m, where))
    return changed


@dataclass(frozen=True)
class GapSplit:
    """The FLOP-rate gap between two kernels, split into what their roofs explain and the rest.

    ``measured`` is the faster kernel's FLOP/s over the slower one's. ``roofline`` is the ratio of
    their roofs at their intensities (``attainable_flops``): the part that data reuse alone
    explains. ``rest`` = ``measured`` / ``roofline``, the part the roofline does not: it equals
    ``fast_attained`` / ``slow_attained``, each kernel's measured FLOP/s over its own roof.
    """

    measured: float
    roofline: float
    rest: float
    fast_attained: float
    slow_attained: float


def gap_split(fast: Measurement, slow: Measurement, peaks: Peaks) -> GapSplit:
    """Split the FLOP-rate gap between ``fast`` and ``slow`` under ``peaks`` (see GapSplit).

    A dense kernel at its compute roof against one at half of a bandwidth roof a quarter as
    high: the gap of eight is four from reuse and two from the slow kernel's own inefficiency.

    >>> from gpuconcepts.measure import Measurement
    >>> peaks = Peaks("cpu", 1e11, 1e10, "float32")  # ridge 10 FLOP/byte
    >>> dense = Measurement("cnn-conv", "cpu", {}, (1.0,), 1e11, 1e9)  # I = 100, at 100 GFLOP/s
    >>> depthwise = Measurement("cnn-depthwise", "cpu", {}, (1.0,), 1.25e10, 5e9)  # I = 2.5
    >>> split = gap_split(dense, depthwise, peaks)
    >>> split.measured, split.roofline, split.rest, split.fast_attained, split.slow_attained
    (8.0, 4.0, 2.0, 1.0, 0.5)
    """
    fast_roof = attainable(fast.intensity, peaks)
    slow_roof = attainable(slow.intensity, peaks)
    fast_attained = fast.flops_per_s / fast_roof
    slow_attained = slow.flops_per_s / slow_roof
    return GapSplit(
        measured=fast.flops_per_s / slow.flops_per_s,
        roofline=fast_roof / slow_roof,
        rest=fast_attained / slow_attained,
        fast_attained=fast_attained,
        slow_attained=slow_attained,
    )


def classify(intensity: float, peaks: Peaks) -> Side:
    """``"memory"`` when the intensity is below the ridge point, else ``"compute"``."""
    return "memory" if intensity < peaks.ridge_point else "compute"


def predicted_seconds(flops: float, bytes: float, peaks: Peaks) -> float:
    """Roofline lower bound on run time: ``formulas.roofline_seconds(F, Q, P, beta)``."""
    return float(
        formulas.roofline_seconds(F=flops, Q=bytes, P=peaks.flops_per_s, beta=peaks.bytes_per_s)
    )


def attainable(intensity: float, peaks: Peaks) -> float:
    """The roof at an intensity: ``formulas.attainable_flops(I, P, beta)``."""
    return float(
        formulas.attainable_flops(I=intensity, P=peaks.flops_per_s, beta=peaks.bytes_per_s)
    )
