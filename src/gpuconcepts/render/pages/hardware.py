r"""The hardware page: datasheets, where the post's examples land on each GPU, small layers
against the latency floor, the ceiling of Q12's shape, and the exercises' answers.

>>> glue = datasheets()
>>> print(glue["ridge_eq"])
$I_{\text{ridge}} = \frac{P}{\beta}$
>>> limited_by(10**6, 10**6, GPUS["H100 SXM"].datasheet_peaks("fp16"))
'bytes'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import sympy as sp

from gpuconcepts import formulas, roofline, units
from gpuconcepts.hardware import GPUS, datasheet_peaks, lookup, table_rows
from gpuconcepts.questions import question
from gpuconcepts.render.markdown import markdown_table
from gpuconcepts.render.pages import Glue, Math, from_batch
from gpuconcepts.render.pages.hardware_examples import LONG_PREFILL, examples
from gpuconcepts.render.text.runs import NO_FLOOR_SPREAD, floor_spread
from gpuconcepts.symbols import sym
from gpuconcepts.units import si

if TYPE_CHECKING:
    from gpuconcepts.roofline import Peaks
    from gpuconcepts.run import Run

_Q12_LAYER = question(12).steps[1].values  # B, d_in, d_out of the post's layer
Q12_SHAPE = {"d_in": _Q12_LAYER["d_in"], "d_out": _Q12_LAYER["d_out"]}


def datasheets() -> Glue:
    """The datasheet table, its sources and the ridge point's equation."""
    rows = table_rows()
    return {
        "datasheets": markdown_table(rows[0], rows[1:]),
        "sources": "\n".join(f"* **{gpu.name}**: {gpu.source}" for gpu in GPUS.values()),
        "ridge_eq": f"${formulas.ridge_point.equation()}$",
    }


def _where(table: Sequence[Sequence[str]], test: Callable[[set[str]], bool]) -> str:
    chosen = [row[0] for row in table if test(set(row[2:]))]
    return "\n".join(f"* {row}" for row in chosen or ["none of them"])


def verdicts() -> Glue:
    """Each example's side of each GPU's ridge point, the examples grouped by verdict, and
    long attention prefill: the bound, the tiled kernel against HBM, and L2.

    >>> glue = verdicts()
    >>> glue["always_compute"].splitlines()[0], glue["attn_tile"]
    ('* Attention prefill, Q17 sizes (FP16), minimal traffic: the bound', '128')
    """
    gpus = list(GPUS.values())
    table = [
        [
            label,
            units.significant(intensity),
            *(roofline.classify(intensity, gpu.datasheet_peaks(dtype)) for gpu in gpus),
        ]
        for label, intensity, dtype in examples()
    ]
    long = LONG_PREFILL
    tiled_memory = [
        g.name
        for g in gpus
        if roofline.classify(long.tiled_intensity, g.datasheet_peaks("fp16")) == "memory"
    ]
    if len(tiled_memory) == len(gpus):
        tiled = "on every GPU in the table"
    elif tiled_memory:
        tiled = "on " + units.listing(tiled_memory)
    else:
        tiled = "on none of them (their FP16 ridge points all lie below it)"
    fits = [g for g in gpus if long.head_fits_l2(g)]
    smallest = min(gpus, key=lambda g: g.l2_bytes)
    if len(fits) == len(gpus):
        l2 = (
            f"fit in the L2 of every GPU in the table, down to the {smallest.name}'s "
            f"{units.binary_bytes(smallest.l2_bytes)}"
        )
    else:
        l2 = (
            f"fit in the L2 of {units.listing([g.name for g in fits]) or 'none of them'}, "
            f"not in that of {units.listing([g.name for g in gpus if g not in fits])}"
        )
    return {
        "verdicts": markdown_table(["Example", "FLOP/byte", *(g.name for g in gpus)], table),
        "always_memory": _where(table, lambda v: v == {"memory"}),
        "always_compute": _where(table, lambda v: v == {"compute"}),
        "depends": _where(table, lambda v: len(v) > 1),
        "attn_S": units.plain_number(long.S),
        "attn_minimal": units.significant(long.minimal_intensity),
        "attn_tile": units.plain_number(long.tile_rows),
        "attn_limit": units.significant(long.tiled_limit),
        "attn_tiled_memory": tiled,
        "attn_head": units.plain_number(long.d_head),
        "attn_head_kv": units.binary_bytes(long.head_kv_bytes),
        "attn_l2": l2,
    }


def limited_by(flops: float, traffic: float, peaks: Peaks) -> str:
    """Which term sets a kernel's roofline time: ``"bytes"`` below the ridge point, else
    ``"FLOPs"`` (:func:`gpuconcepts.roofline.classify`'s rule, ties to compute).

    >>> p = GPUS["H100 SXM"].datasheet_peaks("fp16")
    >>> limited_by(10**9, 10**6, p), limited_by(295 * 10**6, 10**6, p)
    ('FLOPs', 'bytes')
    """
    return "bytes" if roofline.classify(flops / traffic, peaks) == "memory" else "FLOPs"


def _small() -> dict[str, tuple[float, float]]:
    """The post's two layers in FP16: (FLOPs, minimal bytes)."""
    q14_layer = question(14).steps[0].values
    return {
        "Q12's MLP layer": (
            formulas.mlp_flops(**_Q12_LAYER),
            formulas.mlp_bytes(**_Q12_LAYER, s=2),
        ),
        "Q14's convolution": (
            formulas.conv_flops(**q14_layer),
            formulas.conv_bytes(**q14_layer, s=2),
        ),
    }


Times = Mapping[tuple[str, str], float]
"""Each small layer's roofline time on each datasheet GPU: (layer, GPU) to seconds."""


def _own_longest(label: str, times: Times, longest: float) -> tuple[str | None, float]:
    """The datasheet GPU a floor's run was measured on (:func:`gpuconcepts.hardware.lookup`
    of its label) and the longest roofline time of the post's small layers on it; (None, the
    table's longest) for a GPU the datasheet lacks."""
    gpu = lookup(label)
    if gpu is None:
        return None, longest
    return gpu.name, max(t for (_, name), t in times.items() if name == gpu.name)


def _against_own(label: str, seconds: float, times: Times, longest: float) -> str:
    """A measured floor against the roofline times of its own GPU, in words.

    >>> times = {("a", "H200"): 2e-7, ("a", "T4"): 1e-6, ("b", "H200"): 1e-7}
    >>> _against_own("cuda (NVIDIA H200)", 2e-5, times, 1e-6)
    '100 times the longest roofline time on the H200, 200 ns'
    >>> _against_own("cuda (Some GPU)", 2e-5, times, 1e-6)
    '20 times the longest roofline time in the table, 1 µs: its GPU is not in the datasheet'
    """
    name, own = _own_longest(label, times, longest)
    where = f"on the {name}" if name else "in the table"
    said = (
        f"{units.how_many(seconds / own)} times the longest roofline time {where}, {si(own, 's')}"
    )
    return said if name else f"{said}: its GPU is not in the datasheet"


def _build_floor(run: Run, times: Times, longest: float) -> str:
    """This build's latency floor against its GPU's roofline times, in words; a CPU's floor
    is named but not set beside them (a CPU launches nothing)."""
    floor = run.peaks.latency_seconds
    if floor is None:
        return f"The run of this build, on {run.label}, measured no latency floor."
    if run.peaks.device != "cuda":
        # a CPU's floor has no launch in it: it is no measure of these GPU times
        return (
            f"The machine that built this book, {run.provenance.device_name}, has no GPU. Its "
            f"smallest kernel takes {floor_spread(run.peaks, 'latency_seconds')}. A CPU "
            "launches nothing, so that floor "
            "says nothing about a GPU and is not set beside these times."
        )
    return (
        f"On this build's GPU, {run.provenance.device_name}, the smallest kernel takes "
        f"{floor_spread(run.peaks, 'latency_seconds')}: "
        f"{_against_own(run.provenance.device_name, floor, times, longest)}."
    )


def _gpu_floors(
    gpu_floors: Sequence[tuple[str, float]], times: Times, longest: float, texts: Mapping[str, str]
) -> str:
    """The recorded GPU runs' floors, each against its own GPU's roofline times, in words:
    each with its spread where ``texts`` gives one, and once, for those without, why not."""
    if gpu_floors:
        shown = [(label, texts.get(label, si(s, "s")), s) for label, s in gpu_floors]
        bare = any(text == si(s, "s") for _, text, s in shown)  # a floor given without spread
        return (
            "On a GPU the floor includes launching the kernel from the host. Measured"
            + (f" ({NO_FLOOR_SPREAD})" if bare else "")
            + ": "
            + "; ".join(
                f"{label}, {text} ({_against_own(label, s, times, longest)})"
                for label, text, s in shown
            )
            + "."
        )
    return (
        "On a GPU the floor also includes launching the kernel from the host. "
        "No run on a GPU is recorded in `docs/runs/` yet, so the book has no measured GPU "
        "floor to set beside these times; recording one is still to be done."
    )


def _small_verdict(gpu_floors: Sequence[tuple[str, float]], times: Times, longest: float) -> str:
    """Whether the measured GPU floors, not the bandwidth, set the small layers' time."""
    # each floor against the roofline times of its own GPU (the table's longest where the
    # datasheet lacks that GPU): a floor is a fact of one machine, not of the others
    above = [seconds > _own_longest(label, times, longest)[1] for label, seconds in gpu_floors]
    if above and all(above):
        return (
            "Every GPU floor measured is longer than the most time the roofline gives these layers "
            "on that GPU, so at these sizes the launch and the latency, not the bandwidth, set "
            "the time: faster memory would not make them faster."
        )
    if above:
        return (
            "A measured GPU floor is shorter than some of its GPU's roofline times, so on that "
            "machine bandwidth still sets the time of the larger of these layers."
        )
    return "With no GPU floor measured, the comparison waits for a GPU run that measures one."


def small_layers(
    run: Run, gpu_floors: Sequence[tuple[str, float]], texts: Mapping[str, str] | None = None
) -> Glue:
    """The post's small layers' roofline times on each GPU against the latency floors of
    ``run`` (this build's) and of the GPU runs recorded (``gpu_floors``: device, seconds;
    ``texts``: each with its spread by its label,
    :func:`~gpuconcepts.book_runs.gpu_floor_texts`, bare where not given)."""
    small = _small()
    fp16 = datasheet_peaks("fp16")
    times = {
        (name, p.name): roofline.predicted_seconds(flops, traffic, p)
        for name, (flops, traffic) in small.items()
        for p in fp16
    }
    longest = max(times.values())
    glue: Glue = {
        "small_table": markdown_table(
            ["GPU (FP16)", *small],
            [
                [
                    p.name,
                    *(
                        f"{si(times[name, p.name], 's')} ({limited_by(*small[name], p)})"
                        for name in small
                    ),
                ]
                for p in fp16
            ],
        ),
        "small_sizes": "; ".join(
            f"{name} does {units.describe(flops, 'FLOPs')} and moves at least "
            f"{units.describe_bytes(traffic)}"
            for name, (flops, traffic) in small.items()
        ),
        "small_longest": si(longest, "s"),
    }
    glue["build_floor"] = _build_floor(run, times, longest)
    glue["gpu_floors"] = _gpu_floors(gpu_floors, times, longest, texts or {})
    glue["small_verdict"] = _small_verdict(gpu_floors, times, longest)
    return glue


def ceiling() -> Glue:
    r"""Q12's shape caps its intensity: the limit of the MLP intensity as the batch grows without
    bound, against the H100's FP16 ridge point.

    >>> glue = ceiling()
    >>> glue["q12_shape"]
    '512 → 256'
    >>> print(glue["q12_limit_eq"].latex)
    \lim_{B \to \infty} I_{\text{MLP}} = \frac{2 d_{in} d_{out}}{s \left(d_{in} + d_{out}\right)}
    """
    limit = sp.limit(formulas.mlp_intensity.expr, sym("B"), sp.oo)
    h100_ridge = GPUS["H100 SXM"].ridge_point("fp16")
    first = formulas.mlp_intensity.reaches(h100_ridge, "B", **Q12_SHAPE, s=2)
    return {
        "q12_limit_eq": Math(
            rf"\lim_{{B \to \infty}} {formulas.mlp_intensity.lhs} = " + sp.latex(limit)
        ),
        "q12_shape": f"{units.plain_number(Q12_SHAPE['d_in'])} → "
        f"{units.plain_number(Q12_SHAPE['d_out'])}",
        "q12_cap": units.significant(formulas.mlp_intensity.supremum("B", **Q12_SHAPE, s=2)),
        "h100_ridge": units.significant(h100_ridge),
        "q12_h100": from_batch(
            first,
            "so no batch, however large, makes it compute-bound on an H100: it stays "
            "memory-bound at every batch",
            "so it becomes compute-bound on an H100 from a batch of ",
        ),
    }


def exercises() -> Glue:
    """The exercise's answers: Q12's layer on an H200, and on every GPU in the table."""
    h100, h200 = GPUS["H100 SXM"], GPUS["H200"]
    if h200.peak("fp16") == h100.peak("fp16"):
        h200_text = (
            f"the same FP16 peak as the H100 ({si(h200.peak('fp16') or 0, 'FLOP/s')}) "
            f"and more bandwidth ({si(h200.bytes_per_s, 'B/s')} against "
            f"{si(h100.bytes_per_s, 'B/s')})"
        )
    else:
        h200_text = (
            f"a peak of {si(h200.peak('fp16') or 0, 'FLOP/s')} and {si(h200.bytes_per_s, 'B/s')}"
        )
    h200_ridge = h200.ridge_point("fp16")
    h200_first = formulas.mlp_intensity.reaches(h200_ridge, "B", **Q12_SHAPE, s=2)
    found = [
        (p.name, formulas.mlp_intensity.reaches(p.ridge_point, "B", **Q12_SHAPE, s=2))
        for p in datasheet_peaks("fp16")
    ]
    eventually = [(name, batch) for name, batch in found if batch is not None]
    if eventually:
        others = (
            "Of the GPUs in the table, those whose FP16 ridge point lies below the ceiling "
            "would see the layer compute-bound eventually: "
            + units.listing(
                [
                    f"the {name} from a batch of {units.plain_number(batch)}"
                    for name, batch in eventually
                ]
            )
            + f", against Q12's batch of {units.plain_number(_Q12_LAYER['B'])}."
        )
    else:
        others = "No GPU in the table has an FP16 ridge point below the ceiling."
    return {
        "ex_h200": h200_text,
        "ex_h200_ridge": units.significant(h200_ridge),
        "ex_h200_answer": from_batch(h200_first),
        "ex_others": others,
    }
