"""What leads each of the five chapters (issue 46): the recorded GPU run (the H200's bf16 run in
``docs/runs/``), as one figure, one short table and a few sentences computed from that run.

The run is :func:`~gpuconcepts.render.pages.gpu_basics.leading_run`'s: a 16-bit run on a
listed GPU first. Without one (a checkout with no GPU run) every text is "—" and the figure
says why, so a page still builds.

>>> glue = lead([], "mlp")
>>> glue["lead_gpu"], glue["lead_table"]
('—', 'No run on a GPU is recorded in `docs/runs/` yet.')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from gpuconcepts import units
from gpuconcepts.render.markdown import markdown_table
from gpuconcepts.render.pages import unmeasured
from gpuconcepts.render.pages.gpu import FAMILY_NAMES, SENTENCES, chapter, gpu_name
from gpuconcepts.render.pages.gpu_basics import leading_run
from gpuconcepts.render.text import kernel_sizes, observed, time_spread, unmeasured_cache
from gpuconcepts.roofline import place

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from gpuconcepts.measure import Measurement
    from gpuconcepts.render.pages import Glue
    from gpuconcepts.run import Run

LEAD_COLUMNS = (
    "Kernel",
    "Time (median ± IQR)",
    "Intensity (FLOP/byte)",
    "Bound: share of that roof",
)
"""The lead table's few columns: what ran, how long, how much arithmetic per byte, and the roof
that explains its time with the share of it reached."""

NO_RUN = "No run on a GPU is recorded in `docs/runs/` yet."

TEXTS = ("lead_gpu", "lead_dtype", "lead_run", "lead_ridge", "lead_words", "lead_table")


def run_words(run: Run) -> str:
    """A run inside a sentence: ``the NVIDIA H200 bfloat16 run``."""
    return f"the {gpu_name(run.provenance.device_name)} {run.peaks.dtype} run"


def lead_kernels(run: Run, family: str) -> list[Measurement]:
    """The chapter's kernels in ``run``, a few rows: the transformer's sweep over S keeps only
    its shortest and longest prompt, beside the causal prefill and the decode step."""
    found = chapter(run, family)
    if family == "transformer":
        sweep = [m for m in found if m.workload == "transformer-prefill"]
        rest = [m for m in found if m.workload != "transformer-prefill"]
        found = [*(sweep[:1] + sweep[-1:] if len(sweep) > 1 else sweep), *rest]
    return found


def lead_table(run: Run, kernels: Sequence[Measurement]) -> str:
    """Markdown: the lead table of ``kernels`` under ``run``'s measured roofs."""
    rows = []
    for m in kernels:
        where = place(m, run.peaks)
        cache = unmeasured_cache(m, run.peaks, run.provenance.device_name)
        rows.append(
            [
                f'`{m.workload}`<br><small data-run="{run.label}">{kernel_sizes(m)}</small>',
                time_spread(m).replace(" ", "\u00a0"),
                units.measured_or_dash(m.intensity),
                observed(where, cache),
            ]
        )
    return markdown_table(LEAD_COLUMNS, rows)


def lead_figure(run: Run, family: str, kernels: Sequence[Measurement]) -> Figure:
    """The run's roofline with the chapter's kernels on it, titled in words."""
    from matplotlib.text import Annotation  # noqa: PLC0415  # matplotlib

    from gpuconcepts.render.plots import roofline_chart  # noqa: PLC0415  # matplotlib
    from gpuconcepts.render.plots.labels import place_labels  # noqa: PLC0415  # matplotlib

    fig = roofline_chart(run.peaks, kernels)
    ax = fig.axes[0]
    name = gpu_name(run.provenance.device_name).removeprefix("NVIDIA ")
    ax.set_title(f"{FAMILY_NAMES[family]} on the {name}, its {run.peaks.dtype} run")
    # roofline_chart names each point by its kernel; one kernel at several sizes (the MLP's
    # batches) needs the sizes that tell its points apart, placed again at their new widths
    names = {m.workload for m in kernels}
    labels = [t for t in ax.texts if isinstance(t, Annotation) and t.get_text() in names]
    for label, text in zip(labels, point_labels(kernels), strict=True):
        label.set_text(text)
    place_labels(fig, ax, labels)
    return fig


def point_labels(kernels: Sequence[Measurement]) -> list[str]:
    """Each point's label on a lead figure: its kernel, and for a kernel shown at several sizes
    the sizes that tell them apart; the kernel's name is left out when the figure shows one.

    >>> from gpuconcepts.measure import Measurement
    >>> mlp = [Measurement("mlp", "cuda", {"B": b, "d_in": 8}, (1.0,), 1, 1) for b in (1, 1024)]
    >>> point_labels(mlp)
    ['B=1', 'B=1,024']
    >>> point_labels([*mlp, Measurement("rnn-gemm", "cuda", {"B": 1}, (1.0,), 1, 1)])
    ['mlp B=1', 'mlp B=1,024', 'rnn-gemm']
    """
    workloads = [m.workload for m in kernels]
    labels = []
    for m in kernels:
        same = [k for k in kernels if k.workload == m.workload]
        differ = [
            key
            for key in m.params
            if key not in {"dtype", "s"} and len({str(k.params.get(key)) for k in same}) > 1
        ]
        sizes = " ".join(f"{key}={units.plain_number(m.params[key])}" for key in differ)  # type: ignore[arg-type]
        if len(set(workloads)) == 1 and sizes:
            labels.append(sizes)
        else:
            labels.append(f"{m.workload} {sizes}".strip())
    return labels


def lead(runs: Sequence[Run], family: str) -> Glue:
    """The chapter's lead: the recorded GPU run's figure, table and words for ``family``."""
    run = leading_run(runs)
    if run is None or not (kernels := lead_kernels(run, family)):
        glue = unmeasured(TEXTS, ["lead_figure"], "no run on a GPU is recorded in docs/runs/")
        glue["lead_table"] = NO_RUN
        return glue
    said = SENTENCES[family](run)
    return {
        "lead_gpu": gpu_name(run.provenance.device_name),
        "lead_dtype": run.peaks.dtype,
        "lead_run": run_words(run),
        "lead_ridge": units.measured_or_dash(run.peaks.ridge_point),
        "lead_words": f"In {run_words(run)}, {said}." if said else units.NOTHING,
        "lead_table": lead_table(run, kernels),
        "lead_figure": lead_figure(run, family, kernels),
    }
