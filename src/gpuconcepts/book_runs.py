"""A run's parts as the book's pages show them: a chapter's measurements, the measurement
behind a roofline claim, the latency floors of the GPU runs, and one part's claims judged
again beside each run's. :mod:`gpuconcepts.book` reaches every name here too.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from gpuconcepts.claims.judge import part_claims, profile_of
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.render import markdown_table
from gpuconcepts.render.text.runs import floor_spread
from gpuconcepts.units import sizes as sizes_text
from gpuconcepts.workloads import chapters

if TYPE_CHECKING:
    from gpuconcepts.measure import Measurement
    from gpuconcepts.results.claim import ClaimResult
    from gpuconcepts.run import Run


def claims_beside(runs: Sequence[Run], names: Sequence[str], architecture: str) -> str:
    """Markdown: the claims of one part (``"Whole model"``, ``"Beyond one device"``) judged
    again from each run's stored results (:meth:`~gpuconcepts.run.Run.part_claims`, nothing
    runs), one verdict column per run that holds that part, the first run's claims as rows.

    A run without the part is left out; when no run but the first has it, a sentence below
    the table says so, and when none has it, a sentence stands for the table.
    """
    judged = []
    for run, name in zip(runs, names, strict=True):
        found = {r.key: r for r in part_claims(run) if r.architecture == architecture}
        if found:
            judged.append((name, found))
    if not judged:  # every run left the part out (a busy or small machine): said, not raised
        return "No run here, this machine's or a recorded one, measured this part."
    rows = [
        [
            first.claim,
            *(claims[key].verdict if key in claims else "not measured" for _, claims in judged),
        ]
        for key, first in judged[0][1].items()
    ]
    table = markdown_table(["Claim", *(name for name, _ in judged)], rows)
    if len(judged) == 1:
        table += "\n\nNo run recorded in `docs/runs/` holds these results yet."
    return table


CHAPTER_WORKLOADS: dict[str, tuple[str, ...]] = chapters()
"""The workloads each chapter measures (its part of the profile)."""


def chapter(run: Run, name: str) -> list[Measurement]:
    """A chapter's measurements from a run's profile: sweeps sorted by the swept size."""
    wanted = CHAPTER_WORKLOADS[name]
    found = [m for m in profile_of(run) if m.workload in wanted]
    if name == "mlp":
        found.sort(key=lambda m: m.size("B"))
    if name == "transformer":  # the encoder's sweep over S, the causal prefill, the decode step
        order = {"transformer-prefill": 0, "transformer-prefill-causal": 1}
        found.sort(key=lambda m: (order.get(m.workload, 2), m.size("S")))
    return found


def claim_measurement(run: Run, result: ClaimResult) -> Measurement:
    """The measurement behind a roofline claim (its values name the workload and sizes)."""
    for m in run.measurements:
        if m.workload == result.values.get("workload") and sizes_text(
            m.params
        ) == result.values.get("sizes"):
            return m
    raise GpuConceptsError(f"{run.label}: no measurement behind claim {result.key!r}")


def gpu_latency_floors(runs: Iterable[Run]) -> list[tuple[str, float]]:
    """(device and the run's dtype, latency floor in seconds) of each run measured on a GPU
    that measured one: the time of its smallest kernel, launch included. Empty until a GPU run
    is recorded. The dtype tells apart two runs of one GPU."""
    return [
        (f"{run.provenance.device_name} in its {run.peaks.dtype} run", run.peaks.latency_seconds)
        for run in runs
        if run.peaks.device == "cuda" and run.peaks.latency_seconds is not None
    ]


def gpu_floor_texts(runs: Iterable[Run]) -> dict[str, str]:
    """Each latency floor :func:`gpu_latency_floors` gives, by its label, with its spread
    (:func:`~gpuconcepts.render.text.runs.floor_spread`; bare where the run kept none of its
    repetitions): what a page shows beside the bare seconds it computes with."""
    gpu = [r for r in runs if r.peaks.device == "cuda" and r.peaks.latency_seconds is not None]
    labels = [label for label, _ in gpu_latency_floors(gpu)]
    return {
        label: floor_spread(r.peaks, "latency_seconds")
        for label, r in zip(labels, gpu, strict=True)
    }


def run_source(run: Run) -> str:
    """What names a recorded run in its tables' ``data-run``: its label (device, time, commit
    and sizes, unique to the run)."""
    return run.label
