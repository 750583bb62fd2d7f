"""The comparison page: the post's DLRM lookup and RNN in numbers, and the lookup's verdict on
every GPU of the datasheet table.

>>> glue = comparison()
>>> glue["dlrm_verdict"]
'memory-bound on every GPU of the datasheet table'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from gpuconcepts import formulas, units
from gpuconcepts.claims.judge import profile_of
from gpuconcepts.hardware import GPUS
from gpuconcepts.questions import question
from gpuconcepts.render.pages import unmeasured
from gpuconcepts.roofline import classify

if TYPE_CHECKING:
    from gpuconcepts.render.pages import Glue
    from gpuconcepts.run import Run


def comparison() -> Glue:
    """Q11's lookup (FP32) and Q15's RNN (FP32): their intensities, and the lookup's side of
    each GPU's FP32 ridge point."""
    lookup = question(11).steps[0].values  # the post's Q11 batch, FP32
    rnn = dict(question(15).steps[0].values, s=4)  # the post's Q15 RNN, in FP32
    intensity = formulas.embedding_intensity(**lookup)
    verdicts = {
        classify(intensity, g.datasheet_peaks("fp32"))
        for g in GPUS.values()
        if g.peak("fp32") is not None
    }
    return {
        "dlrm_I": units.significant(intensity),
        "dlrm_B": units.plain_number(lookup["B"]),
        "rnn_I": units.significant(formulas.rnn_intensity(**rnn)),
        "dlrm_verdict": f"{verdicts.pop()}-bound on every GPU of the datasheet table"
        if len(verdicts) == 1
        else "memory-bound on some GPUs of the table and not on others",
    }


def families_figure(runs: Sequence[Run]) -> Glue:
    """The five families of the first GPU run (else the first run) on intensity against the
    work each kernel offers at once, its FLOPs over its dependent steps (``families_fig``)."""
    from gpuconcepts.render.plots.runs import families_map, run_title  # noqa: PLC0415
    from gpuconcepts.workloads import chapter_of  # noqa: PLC0415

    if not runs:
        return unmeasured([], ["families_fig"], "no run recorded")
    run = next((r for r in runs if r.peaks.device == "cuda"), runs[0])
    points = [
        (chapter_of(m.workload) or "other", m.intensity, m.flops / (m.steps or 1))
        for m in profile_of(run)
        if m.flops > 0 and m.bytes > 0
    ]
    return {"families_fig": families_map(points, f"{run_title(run)}: the five families")}
