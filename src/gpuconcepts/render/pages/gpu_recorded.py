"""The GPU runs recorded in ``docs/runs/``: picking them, naming them in a sentence, a
chapter's kernels in one of them and where each landed, and where its distributed part ran.

The GPU chapter (:mod:`~gpuconcepts.render.pages.gpu`) and the chapters' "on other machines"
passages (:mod:`~gpuconcepts.render.pages.gpu_story`) build on these.

>>> gpu_name("cuda (NVIDIA H200)"), gpu_name("cpu (AMD EPYC, 2 threads)")
('NVIDIA H200', 'cpu (AMD EPYC, 2 threads)')
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from gpuconcepts import units
from gpuconcepts.claims.judge import profile_of
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.render.text import EXPLAINED, roof_name, unmeasured_cache
from gpuconcepts.roofline import place
from gpuconcepts.units import percent
from gpuconcepts.workloads import chapter_of, chapters

if TYPE_CHECKING:
    from gpuconcepts.measure import Measurement
    from gpuconcepts.run import Run

FAMILIES = ("dlrm", "mlp", "cnn", "rnn", "transformer")
"""The five families, in the book's order (their chapters' names)."""

FAMILY_NAMES = {
    "dlrm": "DLRM",
    "mlp": "MLP",
    "cnn": "CNN",
    "rnn": "RNN",
    "transformer": "Transformer",
}


def gpu_name(device_name: str) -> str:
    """The GPU's own name from a run's ``device_name`` (``cuda (NVIDIA H200)``)."""
    found = re.fullmatch(r"cuda \((.+)\)", device_name)
    return found.group(1) if found else device_name


def gpu_runs(runs: Sequence[Run]) -> list[Run]:
    """The runs measured on a GPU, in the order given."""
    return [run for run in runs if run.peaks.device == "cuda"]


def run_name(run: Run) -> str:
    """A GPU run for a sentence: its GPU and its data type (``NVIDIA H200, bfloat16 run``)."""
    return f"{gpu_name(run.provenance.device_name)}, {run.peaks.dtype} run"


def run_phrase(run: Run) -> str:
    """A GPU run inside a sentence: ``the NVIDIA H200's bfloat16 run``."""
    return f"the {gpu_name(run.provenance.device_name)}'s {run.peaks.dtype} run"


def chapter_kernels(run: Run, workload: str) -> list[Measurement]:
    """The chapter measurements of ``workload`` in ``run`` (not the claims' own sizes)."""
    family = chapter_of(workload)
    if not family:
        return []
    try:
        measured = chapter(run, family)
    except GpuConceptsError:  # a run recorded without this chapter's sizes
        return []
    return [m for m in measured if m.workload == workload]


def chapter(run: Run, family: str) -> list[Measurement]:
    """A chapter's measurements from the run's profile (its preset sizes, not the sizes of the
    claims), sweeps in the order of the swept size."""
    wanted = chapters()[family]
    found = [m for m in profile_of(run) if m.workload in wanted]
    if family == "mlp":  # the sweep by batch, as the chapter shows it
        found.sort(key=lambda m: m.size("B"))
    if family == "transformer":  # the sweep over S, the causal prefill, the decode step
        order = {"transformer-prefill": 0, "transformer-prefill-causal": 1}
        found.sort(key=lambda m: (order.get(m.workload, 2), m.size("S")))
    return found


def first_kernel(run: Run, workload: str) -> Measurement | None:
    """The first chapter measurement of ``workload`` in ``run``, or None."""
    found = chapter_kernels(run, workload)
    return found[0] if found else None


def roof_phrase(m: Measurement, run: Run) -> str:
    """Where a kernel landed, as a verb phrase: on the roof that explains its time when it
    reached at least half of it (``render.EXPLAINED``), else how far below its nearest roof it
    stayed, which then does not set its time."""
    where = place(m, run.peaks)
    cache = unmeasured_cache(m, run.peaks, run.provenance.device_name)
    served = f", its rows served from the {cache}" if cache and where.kind == "memory" else ""
    roof = roof_name(where)
    if where.beaten:
        return f"ran above {roof} ({percent(where.attained)} of it){served}"
    if where.attained >= EXPLAINED[0]:
        return f"landed on {roof} ({percent(where.attained)} of it){served}"
    return (
        f"reached only {percent(where.attained)} of {roof}, its nearest"
        f"{served}: under half of it, so that roof does not explain its time"
    )


# -- distributed results measured on the host -----------------------------------------------
def distributed_column(run: Run, *, recorded: bool = True) -> str:
    """A run's column name on a table of distributed results: its label, and where the
    distributed part really ran when that was not the run's own device (gloo on the host CPU).

    >>> from gpuconcepts.run import Run
    >>> from gpuconcepts.run.provenance import Provenance
    >>> from gpuconcepts.roofline import Peaks
    >>> run = Run(Provenance.example(), Peaks("cpu", 1e11, 1e10, "float32"), (), {}, ())
    >>> distributed_column(run, recorded=False) == run.label
    True
    """
    name = f"{run.label} (recorded)" if recorded else run.label
    report = run.distributed
    if report is None or run.peaks.device != "cuda" or report.backend != "gloo":
        return name
    return f"{name}: distributed part on the host CPU ({report.device}), not the GPU"


def distributed_note(runs: Sequence[Run]) -> str:
    """A sentence for a page that shows recorded runs' distributed verdicts: which of them
    ran with gloo on the host CPU of a GPU machine (empty when none did)."""
    host = [
        run
        for run in runs
        if run.peaks.device == "cuda"
        and run.distributed is not None
        and run.distributed.backend == "gloo"
    ]
    if not host:
        return ""
    names = units.listing([run_phrase(run) for run in host])
    devices = units.listing(sorted({run.distributed.device for run in host if run.distributed}))
    return (
        f"The distributed results of {names} were not measured on the GPU: they ran with "
        f"the gloo backend on the machine's host CPU ({devices}). Their verdicts speak of "
        "that CPU and its loopback interface, not of NVLink or the GPU."
    )
