"""The "Your model on the roofline" chapter: the example models' code, each model's report in
tables, figures and sentences, what a faster GPU would not change, and the exercises' answers.

>>> print(source("import math\\n\\n\\ndef f():\\n    return math.pi\\n").splitlines()[1])
import math
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import TYPE_CHECKING

from gpuconcepts import exercises as answers
from gpuconcepts import units
from gpuconcepts.analysis import count_types
from gpuconcepts.claims.quantities import with_interval
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.hardware import GPUS, LAUNCH_FLOOR_SECONDS
from gpuconcepts.measurement import seconds_spread
from gpuconcepts.render.pages import Glue
from gpuconcepts.render.plots.analysis import layers_figure
from gpuconcepts.render.text.analysis import markdown
from gpuconcepts.render.text.runs import with_interval_text

if TYPE_CHECKING:
    from gpuconcepts.analysis import Report

REFERENCE = "H100 SXM"
"""The datasheet GPU whose predicted time the chapter quotes for each model."""

EXERCISE_LAYER = {"d_in": 4096, "d_out": 4096}
"""The exercises' dense layer: a square matrix of side 4096."""

EXERCISE_GPUS = (
    ("fp32", "H100 SXM", "fp32"),
    ("tf32", "H100 SXM", "tf32"),
    ("bf16", "H100 SXM", "bf16"),
    ("a100", "A100 80GB SXM", "tf32"),
    ("t4", "T4", "fp16"),
)
"""Each exercise's glue key, GPU and data type."""


def source(text: str) -> str:
    """Python source as a Markdown code block, without its module docstring and its
    ``from __future__`` import (what a reader needs is the imports and the code)."""
    body = [
        node
        for node in ast.parse(text).body
        if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))
        and not (isinstance(node, ast.ImportFrom) and node.module == "__future__")
    ]
    code = "\n".join(text.splitlines()[body[0].lineno - 1 :]).strip()
    return f"```python\n{code}\n```"


def models(module: ModuleType) -> str:
    """The example models' code as Markdown, as the library defines them
    (``analysis.examples``): the page shows it where it once defined them."""
    return source(inspect.getsource(module))


def measured_floors(
    floors: Sequence[tuple[str, float]], used: Mapping[str, float] | None = None
) -> str:
    """Which launch floor the datasheet GPUs' predictions used (``used``: GPU name and floor,
    from a report's ``gpus``), against the floors the GPU runs measured (``floors``) and the
    assumption without them (:data:`gpuconcepts.hardware.LAUNCH_FLOOR_SECONDS`), in a sentence
    or two.

    >>> floors = [("cuda (NVIDIA H200) in its bfloat16 run", 13.5e-6)]
    >>> print(measured_floors(floors, {"H100 SXM": 13.5e-6, "H200": 13.5e-6}))
    Every datasheet GPU's prediction uses a launch floor of 13.5 µs a call, the least that the GPU runs recorded beside the book measured (cuda (NVIDIA H200) in its bfloat16 run), 2.7 times the 5 µs assumed where none is measured. On such a GPU a call marked overhead in the table takes at least that long.
    >>> print(measured_floors([], {"H200": 5e-6}))
    No GPU run recorded beside the book measured a launch floor, so the predictions assume 5 µs a call (hardware.LAUNCH_FLOOR_SECONDS).
    """
    assumed = units.si(LAUNCH_FLOOR_SECONDS, "s")
    if not floors:
        return (
            "No GPU run recorded beside the book measured a launch floor, so the predictions "
            f"assume {assumed} a call (hardware.LAUNCH_FLOOR_SECONDS)."
        )
    label, least = min(floors, key=lambda floor: floor[1])
    used = dict(used or {})
    end = " On such a GPU a call marked overhead in the table takes at least that long."
    if all(seconds == least for seconds in used.values()):
        return (
            "Every datasheet GPU's prediction uses a launch floor of "
            f"{units.si(least, 's')} a call, the least that the GPU runs recorded beside the "
            f"book measured ({label}), {units.how_many(least / LAUNCH_FLOOR_SECONDS)} times "
            f"the {assumed} assumed where none is measured.{end}"
        )
    said = "; ".join(
        f"{units.si(seconds, 's')} on the {name}"
        + (" (assumed)" if seconds == LAUNCH_FLOOR_SECONDS else "")
        for name, seconds in used.items()
    )
    return (
        f"The datasheet GPUs' predictions use these launch floors a call: {said}. The GPU runs "
        f"recorded beside the book measured {units.si(least, 's')} at least ({label}).{end}"
    )


def machine(reports: Mapping[str, Report], gpu_floors: Sequence[tuple[str, float]] = ()) -> Glue:
    """This machine's roofs and the datasheet GPUs' ridge points (the same for every report),
    and the kinds of call that reach at least one GPU's ridge."""
    report = next(iter(reports.values()))
    ridges = [g.ridge_point for g in report.gpus]
    reach = sorted(
        {
            layer.type
            for r in reports.values()
            for layer in r.layers
            if layer not in r.memory_bound_everywhere()
        }
    )
    return {
        "device": report.device_name,
        "ridge": units.significant(report.ridge_point),
        "peak_flops": units.si(report.peaks.flops_per_s, "FLOP/s"),
        "peak_bw": units.si(report.peaks.bytes_per_s, "B/s"),
        "peaks_dtype": report.peaks.dtype,
        "reference": REFERENCE,
        "ridge_low": units.significant(min(ridges)),
        "ridge_high": units.significant(max(ridges)),
        "gpu_dtype": report.gpus[0].dtype,
        "assumed": "\n".join(f"* {a[0].upper()}{a[1:]}" for a in report.assumptions),
        "measured_floors": measured_floors(
            gpu_floors, {g.gpu: g.launch_seconds for g in report.gpus}
        ),
        "reach_types": ", ".join(f"`{kind}`" for kind in reach) or "none",
    }


def flop_check(report: Report) -> str:
    """The report's FLOPs against ``FlopCounterMode``'s count for the whole pass, and the
    rows where they differ."""
    counted = units.plain_number(report.counter_total)
    if not report.explained:
        return (
            f"`FlopCounterMode` counts the same {counted} FLOPs for the whole pass as the "
            "table's rows add up to."
        )
    rows = ", ".join(f"row {layer.index} ({layer.type})" for layer in report.explained)
    return (
        f"`FlopCounterMode` counts {counted} FLOPs for the whole pass and the table "
        f"{units.plain_number(report.total_flops)}: the difference is {rows}, where "
        "`FlopCounterMode` has no rule for the kernel that ran and the formula counts it."
    )


def calls_seconds(report: Report) -> str:
    """The calls' times added up, each call timed alone: a sum of medians, so a derived time
    with its bootstrap interval (each call's repetitions resampled on their own,
    :func:`~gpuconcepts.claims.quantities.with_interval`); "—" when no call was timed."""
    if not report.layers:
        return units.NOTHING
    total, interval = with_interval(sum, [layer.raw_seconds for layer in report.layers])
    return with_interval_text(total, interval)


def model(name: str, report: Report) -> Glue:
    """One model's report under ``name_``: its table and figure, its totals, and the calls
    that wait on memory on every datasheet GPU, with :data:`REFERENCE`'s predicted time."""
    everywhere = report.memory_bound_everywhere()
    gpu = next(g for g in report.gpus if g.gpu == REFERENCE)
    glue: Glue = {
        "table": markdown(report),
        "figure": layers_figure(report),
        "calls": units.plain_number(len(report.layers)),
        "flops": units.si(report.total_flops, "FLOPs"),
        "counter": units.si(report.counter_total, "FLOPs"),
        "check": flop_check(report),
        "share": report.share_sentence(),
        "seconds": calls_seconds(report),
        "forward": (
            seconds_spread(report.forward_raw_seconds)
            if report.forward_raw_seconds
            else units.NOTHING
        ),
        "memory_everywhere": count_types(everywhere),
        "memory_everywhere_n": units.plain_number(len(everywhere)),
        "compute_somewhere": count_types([c for c in report.layers if c not in everywhere]),
        "reference_share": units.percent(gpu.memory_share),
        "reference_seconds": units.si(gpu.seconds, "s"),
    }
    return {f"{name}_{key}": value for key, value in glue.items()}


def exercises() -> Glue:
    """The exercises' answers: the first compute-bound batch of :data:`EXERCISE_LAYER` on each
    GPU and data type of :data:`EXERCISE_GPUS`, from the formulas and the datasheet table.

    >>> glue = exercises()
    >>> glue["ex_an_d"], glue["ex_an_tf32_gap"]
    ('4,096', '8.4×')
    """
    glue: Glue = {"ex_an_d": units.plain_number(EXERCISE_LAYER["d_in"])}
    batches = {}
    for key, gpu, dtype in EXERCISE_GPUS:
        batch = answers.linear_compute_bound_batch(**EXERCISE_LAYER, gpu=gpu, dtype=dtype)
        if batch is None:  # the exercises' answers say "From ..." batches
            raise GpuConceptsError(f"the exercises' layer is never compute-bound on {gpu}")
        batches[key] = batch
        glue[f"ex_an_{key}_batch"] = units.plural(batch, "sample")
        glue[f"ex_an_{key}_ridge"] = units.significant(GPUS[gpu].ridge_point(dtype))
    glue["ex_an_tf32_gap"] = units.times(batches["tf32"] / batches["fp32"])
    return glue
