"""The GPU chapter's measured tables and the sentences beside them: the datasheet against the
measured peaks, where each chapter kernel landed, and random against consecutive rows on HBM.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from gpuconcepts import units
from gpuconcepts.changelog import Change
from gpuconcepts.claims.thresholds import PREDICTION_FACTOR
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.hardware import dtype_name, lookup
from gpuconcepts.render.markdown import markdown_table
from gpuconcepts.render.pages.claims import CHANGE_LOG
from gpuconcepts.render.pages.gpu_recorded import (
    FAMILIES,
    FAMILY_NAMES,
    chapter,
    run_phrase,
)
from gpuconcepts.render.text import kernel_sizes, observed, time_spread, unmeasured_cache
from gpuconcepts.render.text.runs import floor_spread, why_bare
from gpuconcepts.roofline import place
from gpuconcepts.units import percent, si
from gpuconcepts.words import listing

if TYPE_CHECKING:
    from gpuconcepts.render.pages import Glue
    from gpuconcepts.run import Run


# -- datasheet against measured ------------------------------------------------------------
#: What the compute peak P was, by the change-log entry (its topic) that made it so; the
#: first applies to runs recorded before every entry. A run is told by the definition in force
#: on the day it was recorded (:func:`peak_definition`).
PEAK_DEFINITIONS: tuple[tuple[str, str], ...] = (
    ("", "the faster of a large GEMM and the book's dense convolution"),
    ("independent ceilings", "one square GEMM through the fastest GEMM path"),
    ("compute peak in ledger 2", "torch.mm's square GEMM"),
)


def peak_definition(run: Run, changes: Sequence[Change]) -> str:
    """What ``run``'s compute peak measured, from the day it was recorded against the change
    log's dates of :data:`PEAK_DEFINITIONS`; "" for a run recorded on the day of such a change
    (the log keeps days, so which definition it ran under is not known) or without a log.

    """
    if not changes:
        return ""
    day = run.provenance.created_utc[:10]
    found = PEAK_DEFINITIONS[0][1]
    for topic, definition in PEAK_DEFINITIONS[1:]:
        dates = [c.date.isoformat() for c in changes if c.topic == topic]
        if not dates:
            raise GpuConceptsError(f"PEAK_DEFINITIONS: the change log has no entry {topic!r}")
        if day == dates[0]:
            return ""
        if day > dates[0]:
            found = definition
    return found


def peaks_paragraph(runs: Sequence[Run], changes: Sequence[Change]) -> str:
    """The roofs of each run (:func:`peaks_sentence`), after one sentence for the runs recorded
    under an older definition of the compute peak (:func:`peak_definition`), said once for all
    of them rather than in every run's sentence."""
    current = PEAK_DEFINITIONS[-1][1]
    older: dict[str, list[Run]] = {}
    for run in runs:
        definition = peak_definition(run, changes)
        if definition and definition != current:
            older.setdefault(definition, []).append(run)
    said = [
        f"{_which(found, len(runs))} recorded when the compute peak was {definition}; it is "
        f"now {current}."
        for definition, found in older.items()
    ]
    bare = [run for run in runs if why_bare(run.peaks, "latency_seconds")]
    why = bare[0] if bare else None  # the first floor given without a spread says why, once
    return " ".join([*said, *(peaks_sentence(run, say_why=run is why) for run in runs)])


def _which(found: Sequence[Run], total: int) -> str:
    """The subject of a sentence about ``found`` of ``total`` runs, with its verb."""
    if len(found) == total:
        return "The run was" if total == 1 else "Both runs were" if total == 2 else "All runs were"
    names = listing([run_phrase(run) for run in found])
    return f"{names[0].upper()}{names[1:]} {'was' if len(found) == 1 else 'were'}"


def peaks_sentence(run: Run, *, say_why: bool = False) -> str:
    """In words: the share of the datasheet's compute and memory roofs the run reached, its
    latency floor (with its spread, or bare and, when ``say_why``, why), and what its GEMM
    sweep reached (:func:`sweep_sentence`)."""
    gpu = lookup(run.provenance.device_name)
    peaks = run.peaks
    if gpu is None or gpu.peak(peaks.dtype) is None:
        return (
            f"T{run_phrase(run)[1:]} measured {si(peaks.flops_per_s, 'FLOP/s')} and "
            f"{si(peaks.bytes_per_s, 'B/s')}; its GPU is not in the datasheet table. "
            + sweep_sentence(run)
        )
    sheet = gpu.peak(peaks.dtype) or 1.0
    return (
        f"In {run_phrase(run)} the compute peak reached {si(peaks.flops_per_s, 'FLOP/s')} of "
        f"the {si(sheet, 'FLOP/s')} the {gpu.name} datasheet lists for {peaks.dtype} "
        f"({percent(peaks.flops_per_s / sheet)}), and streaming reached "
        f"{si(peaks.bytes_per_s, 'B/s')} of {si(gpu.bytes_per_s, 'B/s')} "
        f"({percent(peaks.bytes_per_s / gpu.bytes_per_s)}). The measured ridge point is "
        f"{units.significant(peaks.ridge_point)} FLOP/byte against the datasheet's "
        f"{units.significant(gpu.ridge_point(peaks.dtype))}, and the smallest kernel took "
        + ("an unmeasured time" if peaks.latency_seconds is None
           else floor_spread(peaks, "latency_seconds"))
        + (why_bare(peaks, "latency_seconds") if say_why else "")
        + ", the latency floor under every other one. "
        + sweep_sentence(run)
    )  # fmt: skip


def sweep_sentence(run: Run) -> str:
    """In words: the best rate of ``run``'s GEMM sweep, whose products the predictions read,
    against its compute peak; when it is under half of it, that the predictions reading the
    sweep are off, and, for a sweep no faster than the datasheet's FP32 rate in a run of
    another dtype, that its products ran in FP32 ("" for a run without a sweep)."""
    peaks = run.peaks
    best = max((point[3] for point in peaks.gemm_sweep), default=None)
    if best is None:
        return ""
    share = best / peaks.flops_per_s
    said = (
        f"Its GEMM sweep, whose products the predictions read, reached at best "
        f"{si(best, 'FLOP/s')}, {percent(share)} of that peak"
    )
    if share >= 1 / PREDICTION_FACTOR:
        return said + "."
    gpu = lookup(run.provenance.device_name)
    fp32 = None if gpu is None else gpu.peak("fp32")
    if fp32 is not None and dtype_name(peaks.dtype) != "float32" and best <= fp32:
        said += (
            f", below the datasheet's FP32 rate of {si(fp32, 'FLOP/s')}: its products ran in "
            f"FP32, not in {peaks.dtype} as the peak's kernel and the book's kernels did"
        )
    return (
        said + ". On this run the predictions that read the sweep expect slower products than "
        f"its kernels ran, until it is recorded again (the {CHANGE_LOG} says why)."
    )


# -- where each family lands ---------------------------------------------------------------
def families_table(run: Run) -> str:
    """Markdown: every chapter kernel of ``run``, numbered as on its roofline
    (:func:`overlay`), its time, the bound the formulas predict, the roof that explains the
    time and the share of it reached."""
    rows: list[list[str]] = []
    for family in FAMILIES:
        for m in chapter(run, family):
            where = place(m, run.peaks)
            rows.append(
                [
                    units.plain_number(len(rows) + 1),  # its number on the chapter's roofline
                    FAMILY_NAMES[family],
                    f"`{m.workload}`",
                    kernel_sizes(m),
                    time_spread(m).replace(" ", "\u00a0"),  # the spread beside the median
                    where.bound,
                    observed(where, unmeasured_cache(m, run.peaks, run.provenance.device_name)),
                ]
            )
    return markdown_table(
        [
            "#",
            "Family",
            "Kernel",
            "Sizes",
            "Time (median ± IQR)",
            "Predicted",
            "Nearest roof: reached",
        ],
        rows,
    )


# -- random against consecutive rows on HBM -------------------------------------------------
RANDOM_CLAIM = "dlrm-random-vs-sequential"


def random_rows(run: Run) -> Glue:
    """The random-against-consecutive claim's measured ratio at every row size, beside the
    sector model's, and the sentences that explain where they meet."""
    try:
        result = run.claim(RANDOM_CLAIM)
    except GpuConceptsError:
        return {"rows_table": "This run judged no random-lookup claim.", "rows_text": ""}
    values = result.values
    sizes = sorted(
        int(match.group(1)) for key in values if (match := re.fullmatch(r"ratio_(\d+)B_rows", key))
    )
    rows = []
    for size in sizes:
        low, high = values.get(f"ratio_{size}B_rows_low"), values.get(f"ratio_{size}B_rows_high")
        measured = units.times(float(values[f"ratio_{size}B_rows"] or 0))
        if isinstance(low, float) and isinstance(high, float):
            measured += f" [{units.how_many(low)}, {units.how_many(high)}]"
        rows.append(
            [
                units.plural(size, "byte"),
                units.times(float(values.get(f"predicted_{size}B_rows") or 0)),
                measured,
            ]
        )
    unit = values.get("transfer_bytes")
    unit_name = values.get("transfer_unit") or "transfer"
    ratio = values.get("ratio")
    row = values.get("row_bytes")
    text = (
        f"The GPU's memory answers in {unit_name}s of {unit} bytes. A row that fills whole "
        f"{unit_name}s wastes nothing when it is fetched alone, so a random row costs the same "
        "bytes as a consecutive one; the many lookups in flight at once hide each one's latency. "
        f"Only rows smaller than a {unit_name} pay for bytes they do not use, and there the "
        "ratio rises, though less than the model's count of wasted bytes says. With the "
        f"chapter's {units.plain_number(int(row or 0))}-byte rows the consecutive lookups moved "
        f"their bytes {_as_fast(float(ratio or 0))} the random ones."
    )
    return {
        "rows_table": markdown_table(
            [
                "Row size",
                "Model: consecutive ÷ random bandwidth",
                "Measured (interval)",
            ],
            rows,
        ),
        "rows_text": text,
    }


def _as_fast(ratio: float) -> str:
    """``as fast as`` for a ratio that rounds to one, else ``N times as fast as``.

    >>> _as_fast(1.004), _as_fast(1.5)
    ('as fast as', '1.5 times as fast as')
    """
    shown = units.how_many(ratio)
    return "as fast as" if shown == "1" else f"{shown} times as fast as"
