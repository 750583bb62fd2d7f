"""What changed from a GPU's 16-bit run to its 32-bit one, and why: each kernel's time ratio
beside the ratio its bound predicts (bytes, measured peaks or latency floors), told in
sentences computed from the two runs (the GPU chapter's bf16 against TF32).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from gpuconcepts import units
from gpuconcepts.claims.judge import profile_of
from gpuconcepts.claims.quantities import time_each
from gpuconcepts.hardware import TORCH_DTYPES, dtype_bytes, dtype_name, lookup
from gpuconcepts.render.pages.gpu_recorded import gpu_runs
from gpuconcepts.render.plots.runs import machine_name
from gpuconcepts.render.text import ran_in, time_spread
from gpuconcepts.render.text.runs import floor_spread
from gpuconcepts.roofline import place
from gpuconcepts.units import NOTHING, si
from gpuconcepts.workloads import chapter_of

if TYPE_CHECKING:
    from gpuconcepts.measure import Measurement
    from gpuconcepts.render.pages import Glue
    from gpuconcepts.run import Run


DTYPE_TEXTS = (
    "dtype_base", "dtype_other", "dtype_bytes", "dtype_peaks", "dtype_values",
    "mlp_small", "mlp_big", "dtype_module", "dtype_loop",
)  # fmt: skip
"""The names :func:`dtype_story` glues besides its figure (``dtype_fig``)."""


def dtype_pair(runs: Sequence[Run]) -> tuple[Run, Run] | None:
    """Two runs of one GPU in two data types, the 16-bit one first (the GPU chapter's bf16
    and tf32 runs); None when the runs hold no such pair."""
    found = gpu_runs(runs)
    for base in found:
        for other in found:
            same = base.provenance.device_name == other.provenance.device_name
            if same and dtype_bytes(base.peaks.dtype) < dtype_bytes(other.peaks.dtype):
                return base, other
    return None


def _key(m: Measurement) -> tuple[str, tuple[tuple[str, str], ...]]:
    """A kernel and its sizes, whatever its data type (``dtype`` and ``s`` left out)."""
    sizes = tuple(sorted((k, str(v)) for k, v in m.params.items() if k not in {"dtype", "s"}))
    return m.workload, sizes


def dtype_pairs(base: Run, other: Run) -> list[tuple[Measurement, Measurement]]:
    """Each chapter kernel timed in both runs at the same sizes, in the book's order."""
    theirs = {_key(m): m for m in profile_of(other)}
    return [(m, theirs[_key(m)]) for m in profile_of(base) if _key(m) in theirs]


def predicted_ratio(one: Measurement, two: Measurement, base: Run, other: Run) -> float:
    """The time ratio ``two`` over ``one`` that the bound of ``one`` predicts: the ratio of
    their bytes for a memory-bound kernel, of the measured compute peaks for a compute-bound
    one, of the latency floors for one bound by overhead."""
    kind = place(one, base.peaks).kind
    if kind == "memory":
        return two.bytes / one.bytes
    if kind == "overhead" and base.peaks.latency_seconds and other.peaks.latency_seconds:
        return other.peaks.latency_seconds / base.peaks.latency_seconds
    return base.peaks.flops_per_s / other.peaks.flops_per_s


def _short(dtype: str) -> str:
    return TORCH_DTYPES.get(dtype, dtype)


def _mlp_sentence(pair: tuple[Measurement, Measurement], base: Run, other: Run) -> str:
    """How much longer one MLP layer took in the other type, and what its bound predicts."""
    one, two = pair
    ratio = two.seconds / one.seconds
    predicted = predicted_ratio(one, two, base, other)
    kind = place(one, base.peaks).kind
    why = {
        "memory": "the ratio its bytes predict",
        "compute": "the ratio of the measured peaks",
    }.get(kind, f"the ratio its bound ({kind}) predicts")
    because = {
        "memory": f"its time is the read of its weights, {si(two.bytes, 'B')} "
        f"against {si(one.bytes, 'B')}",
        "compute": "its time is its arithmetic, at the tensor cores' rate in each type",
    }.get(kind, "")
    close = "close to" if abs(ratio / predicted - 1) <= 0.25 else "far from"
    return (
        f"At a batch of {units.plain_number(one.size('B'))} the MLP layer took "
        f"{units.times(ratio)} as long in {_short(other.peaks.dtype)} as in "
        f"{_short(base.peaks.dtype)} ({time_spread(two)} against {time_spread(one)}), "
        f"{close} {why}, {units.times(predicted)}" + (f": {because}." if because else ".")
    )


def _module_sentence(pairs: Sequence[tuple[Measurement, Measurement]], base: Run) -> str:
    """Which type ``nn.RNN`` ran in, from the kernel's own record, and why."""
    modules = [one for one, _ in pairs if one.workload == "rnn-module"]
    if not modules:
        return "Neither run timed `nn.RNN` at the chapter's sizes."
    ran = ran_in(modules[0])
    if ran == dtype_name(base.peaks.dtype):
        return f"In the {_short(base.peaks.dtype)} run `nn.RNN` ran in {ran}, as every kernel did."
    text = (
        f"In the {_short(base.peaks.dtype)} run `nn.RNN` ran in {ran}, not "
        f"{base.peaks.dtype}, as the kernel's own record says: cuDNN packs an RNN's weights "
        f"into one buffer only in {ran}, and in {base.peaks.dtype} it would pack them again on "
        "every call."
    )
    gpu = lookup(base.provenance.device_name)
    if gpu is not None and gpu.peak(ran) == gpu.peak(base.peaks.dtype):
        text += " The datasheet gives both types one tensor-core peak, so the choice costs nothing."
    return text


def _loop_sentence(pairs: Sequence[tuple[Measurement, Measurement]], base: Run, other: Run) -> str:
    """The step loop in both runs: its time, its operations, and whether each run's latency
    floor explains the difference (within a quarter), else that the book cannot say why."""
    loops = [(one, two) for one, two in pairs if one.workload == "rnn-loop"]
    if not loops:
        return "Neither run timed the Python step loop at the chapter's sizes."
    one, two = loops[0]
    ops = "" if one.ops is None else f" for the same {units.plain_number(one.ops)} operations"
    text = (
        f"The Python step loop took {time_spread(one)} in {_short(base.peaks.dtype)} "
        f"against {time_spread(two)} in {_short(other.peaks.dtype)}{ops}."
    )
    floors = base.peaks.latency_seconds, other.peaks.latency_seconds
    if one.ops and two.ops and floors[0] and floors[1]:
        # each operation's share of the loop, with the loop's spread shared alike
        text += (
            f" That is {time_each(one, one.ops)} against "
            f"{time_each(two, two.ops)} per operation, while the runs' own latency "
            f"floors were {floor_spread(base.peaks, 'latency_seconds')} and "
            f"{floor_spread(other.peaks, 'latency_seconds')}."
        )
        measured, floor = two.seconds / one.seconds, floors[1] / floors[0]
        if abs(measured / floor - 1) <= 0.25:
            text += " The floors explain the difference: the loop waits on launches, not on data."
        else:
            text += (
                " Neither the bytes, nor the arithmetic, nor the floors explain the "
                f"difference ({units.times(measured)} against the floors' "
                f"{units.times(floor)}); the runs do not say why, and the book leaves it "
                "unexplained."
            )
    return text


def dtype_story(runs: Sequence[Run]) -> Glue:
    """What changed from the 16-bit run to the 32-bit one on the same GPU, and why: each
    kernel's time ratio against its intensity (``dtype_fig``) and the sentences of
    :data:`DTYPE_TEXTS`; "—" and a figure that says why when the runs hold no such pair."""
    from gpuconcepts.render.pages import unmeasured  # noqa: PLC0415
    from gpuconcepts.render.plots.runs import Ratio, dtype_ratios  # noqa: PLC0415

    pair = dtype_pair(runs)
    if pair is None:
        return unmeasured(
            DTYPE_TEXTS, ["dtype_fig"], "no two recorded runs of one GPU in two data types"
        )
    base, other = pair
    pairs = dtype_pairs(base, other)
    bytes_ratio = dtype_bytes(other.peaks.dtype) / dtype_bytes(base.peaks.dtype)
    peaks_ratio = base.peaks.flops_per_s / other.peaks.flops_per_s
    a, b = _short(base.peaks.dtype), _short(other.peaks.dtype)
    ratios = [
        Ratio(
            chapter_of(one.workload) or "other",
            one.intensity,
            two.seconds / one.seconds,
            predicted_ratio(one, two, base, other),
        )
        for one, two in pairs
    ]
    gpu = machine_name(base.provenance.device_name)
    figure = dtype_ratios(
        ratios,
        f"The {gpu}'s {b} run against its {a} run: each kernel's time ratio",
        [
            ((f"bytes: {dtype_bytes(other.peaks.dtype)} against "
              f"{dtype_bytes(base.peaks.dtype)} per value, {units.times(bytes_ratio)}"),
             bytes_ratio),
            ((f"measured peaks: {si(base.peaks.flops_per_s, 'FLOP/s')} ÷\n"
              f"{si(other.peaks.flops_per_s, 'FLOP/s')}, {units.times(peaks_ratio)}"),
             peaks_ratio),
            ("no change, 1×", 1.0),
        ],
        f"time in {b} ÷ time in {a}",
    )  # fmt: skip
    mlps = [(one, two) for one, two in pairs if one.workload == "mlp"]
    mlps.sort(key=lambda p: p[0].size("B"))
    return {
        "dtype_fig": figure,
        "dtype_base": a,
        "dtype_other": b,
        "dtype_bytes": units.times(bytes_ratio),
        "dtype_values": f"{dtype_bytes(other.peaks.dtype)} bytes against "
        f"{dtype_bytes(base.peaks.dtype)}",
        "dtype_peaks": f"{si(other.peaks.flops_per_s, 'FLOP/s')} against "
        f"{si(base.peaks.flops_per_s, 'FLOP/s')}, a ratio of {units.times(peaks_ratio)}",
        "mlp_small": _mlp_sentence(mlps[0], base, other) if mlps else NOTHING,
        "mlp_big": _mlp_sentence(mlps[-1], base, other) if mlps else NOTHING,
        "dtype_module": _module_sentence(pairs, base),
        "dtype_loop": _loop_sentence(pairs, base, other),
    }
