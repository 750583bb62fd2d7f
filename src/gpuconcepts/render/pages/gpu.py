"""The GPU chapter: the runs recorded on a GPU (``docs/runs/``), told in words from their data.

Every sentence here is built from a recorded :class:`~gpuconcepts.run.Run`: the datasheet
against the measured peaks, where each family's kernels landed, each claim that failed with
its measured reason, and why random and consecutive rows meet on HBM. This module glues the
chapter (:func:`page`); its parts live beside it: the runs and their kernels
(:mod:`~gpuconcepts.render.pages.gpu_recorded`), the sentences of each chapter and the failed
claims (:mod:`~gpuconcepts.render.pages.gpu_story`), the tables
(:mod:`~gpuconcepts.render.pages.gpu_tables`) and bf16 against TF32
(:mod:`~gpuconcepts.render.pages.gpu_dtype`). The names other pages import from here stay
here: the chapters' "on other machines" passages use :func:`chapter_passage`; pages that show
a run's distributed results use :func:`distributed_column`, which says when those ran with gloo
on the host CPU.

>>> gpu_name("cuda (NVIDIA H200)"), gpu_name("cpu (AMD EPYC, 2 threads)")
('NVIDIA H200', 'cpu (AMD EPYC, 2 threads)')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from gpuconcepts import units
from gpuconcepts.changelog import Change
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.hardware import lookup
from gpuconcepts.render.pages.gpu_dtype import dtype_story
from gpuconcepts.render.pages.gpu_recorded import (
    FAMILIES,
    FAMILY_NAMES,
    chapter,
    distributed_column,
    distributed_note,
    gpu_name,
    gpu_runs,
    run_name,
)
from gpuconcepts.render.pages.gpu_story import SENTENCES, chapter_passage, highlights, tally
from gpuconcepts.render.pages.gpu_tables import families_table, peaks_paragraph, random_rows
from gpuconcepts.render.plots.roofline import roofline_chart
from gpuconcepts.render.plots.runs import run_title

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from gpuconcepts.render.pages import Glue
    from gpuconcepts.run import Run

__all__ = [  # what other pages and the docs import from the chapter's module
    "FAMILY_NAMES",
    "SENTENCES",
    "chapter",
    "chapter_passage",
    "distributed_column",
    "distributed_note",
    "gpu_name",
    "overlay",
    "page",
]


def overlay(run: Run) -> Figure:
    """The run's measured roofline with its datasheet's dashed beside it, and its chapter
    kernels as points."""
    kernels = [m for family in FAMILIES for m in chapter(run, family)]
    return roofline_chart(
        run.peaks,
        kernels,
        numbered=True,
        title=f"{run_title(run)}'s roofline, with its datasheet's",
        gpu=lookup(run.provenance.device_name),
    )


def page(runs: Sequence[Run], changes: Sequence[Change] = ()) -> Glue:
    """Everything the GPU chapter glues, from the recorded runs (the GPU ones are picked) and
    the change log ``changes`` (which dates what each run's compute peak measured)."""
    found = gpu_runs(runs)
    if not found:
        raise GpuConceptsError("the GPU chapter needs a run recorded on a GPU in docs/runs/")
    first = found[0]
    glue: Glue = {
        "gpu": gpu_name(first.provenance.device_name),
        "n_runs": units.plural(len(found), "run"),
        "run_list": "\n".join(
            f"* {run_name(run)}: {run.provenance.summary}, commit "
            f"{(run.provenance.git_commit or 'unknown')[:10]}"
            for run in found
        ),
        "peaks_text": peaks_paragraph(found, changes),
        "tally": tally(found),  # each failure is listed in the claims appendix
        "distributed_note": distributed_note(found)
        or "Every distributed result shown ran on the device its run names.",
        "overlay": overlay(first),
    }
    glue.update(highlights(first))
    glue["hl_run"] = run_name(first)
    glue["rows_text"] = random_rows(first)["rows_text"]  # its table is the DLRM chapter's
    glue.update(dtype_story(found))
    # the chapter's one table: the first run's kernels, numbered as on its roofline
    glue["families_first"] = f"**{run_name(first)}**\n\n" + families_table(first)
    return glue
