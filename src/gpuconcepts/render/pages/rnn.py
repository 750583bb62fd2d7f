"""The RNN chapter: why the chain of steps costs little at one size and much at another.

>>> from gpuconcepts import formulas
>>> from gpuconcepts.measure import Measurement
>>> from gpuconcepts.roofline import Peaks
>>> sizes = {"B": 8, "S": 4, "d_in": 64, "d_h": 64, "s": 4}
>>> f = formulas.rnn_flops(B=8, S=4, d_in=64, d_h=64)
>>> pair = [Measurement(w, "cpu", sizes, (t,), f, 1.0)
...         for w, t in (("rnn-loop", 4e-5), ("rnn-gemm", 1e-5))]
>>> glue = step_costs(pair, Peaks("cpu", 1e11, 1e10, "float32", latency_seconds=5e-6))
>>> glue["small_layer"], glue["small_slowdown"], glue["latency"]
('B = 8, d = 64', '4', '5 µs')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from gpuconcepts import units
from gpuconcepts.claims.rnn import StepCost
from gpuconcepts.claims.rnn import step_costs as costs_of
from gpuconcepts.render import chain_sentence, markdown_table, time_spread
from gpuconcepts.render.pages import Glue

if TYPE_CHECKING:
    from gpuconcepts.measure import Measurement
    from gpuconcepts.roofline import Peaks


def layer(c: StepCost) -> str:
    """A step loop's layer: its batch and hidden width."""
    return (
        f"B = {units.plain_number(c.loop.size('B'))}, d = {units.plain_number(c.loop.size('d_h'))}"
    )


def step_costs(measurements: Sequence[Measurement], peaks: Peaks) -> Glue:
    """Every step loop beside the GEMM at its sizes as a table, and the least and most work
    per step in sentences (the chapter's loop and the claim's)."""
    costs = costs_of(measurements, peaks)  # least work first
    rows = [
        [
            layer(c),
            units.plain_number(c.steps),
            units.describe(c.step_flops, "FLOPs"),
            units.si(c.step_at_peak, "s"),
            units.significant(c.floors),
            time_spread(c.gemm),
            time_spread(c.loop),
            units.si(c.extra_per_step, "s"),
            units.times(c.slowdown),
        ]
        for c in costs
    ]
    glue: Glue = {
        "step_table": markdown_table(
            [
                "Layer",
                "Steps S",
                "Work per step",
                "At the peak",
                "In latency floors",
                "One GEMM",
                "Step loop",
                "Extra per step",
                "Loop ÷ GEMM",
            ],
            rows,
        ),
        "latency": units.si(costs[0].latency, "s"),  # the peaks' latency floor
    }
    for name, c in (("small", costs[0]), ("large", costs[-1])):
        glue[f"{name}_layer"] = layer(c)
        glue[f"{name}_flops"] = units.describe(c.step_flops, "FLOPs")
        glue[f"{name}_at_peak"] = units.si(c.step_at_peak, "s")
        glue[f"{name}_floors"] = units.significant(c.floors)
        glue[f"{name}_gemm_step"] = units.si(c.gemm_per_step, "s")
        glue[f"{name}_extra"] = units.si(c.extra_per_step, "s")
        glue[f"{name}_extra_floors"] = units.significant(c.extra_per_step / c.latency)
        glue[f"{name}_slowdown"] = units.how_many(c.slowdown)
    glue["chain_roof"] = chain_sentence(costs[0].loop, peaks)
    return glue
