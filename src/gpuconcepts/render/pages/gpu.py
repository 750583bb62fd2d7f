"""The GPU chapter: the runs recorded on a GPU (``docs/runs/``), told in words from their data.

Every sentence here is built from a recorded :class:`~gpuconcepts.run.Run`: the datasheet
against the measured peaks, where each family's kernels landed, each claim that failed with
its measured reason, and why random and consecutive rows meet on HBM. The chapters' "on other
machines" passages use :func:`chapter_passage`; pages that show a run's distributed results use
:func:`distributed_column`, which says when those ran with gloo on the host CPU.

>>> gpu_name("cuda (NVIDIA H200)"), gpu_name("cpu (AMD EPYC, 2 threads)")
('NVIDIA H200', 'cpu (AMD EPYC, 2 threads)')
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from gpuconcepts import units
from gpuconcepts.claims.judge import profile_of
from gpuconcepts.claims.thresholds import PREDICTION_FACTOR
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.hardware import TORCH_DTYPES, dtype_bytes, dtype_name, lookup
from gpuconcepts.render.markdown import markdown_table
from gpuconcepts.render.pages.claims import CHANGE_LOG
from gpuconcepts.render.plots.roofline import roofline_chart
from gpuconcepts.render.plots.runs import machine_name, run_title
from gpuconcepts.render.text import (
    EXPLAINED,
    chain_bound,
    kernel_sizes,
    observed,
    ran_in,
    unmeasured_cache,
)
from gpuconcepts.results.registry import CLAIMS
from gpuconcepts.roofline import place
from gpuconcepts.units import NOTHING, percent, seconds, si
from gpuconcepts.workloads import chapter_of, chapters

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from gpuconcepts.measure import Measurement
    from gpuconcepts.render.pages import Glue
    from gpuconcepts.results.claim import ClaimResult
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


def _kernels(run: Run, workload: str) -> list[Measurement]:
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


def _find(run: Run, workload: str) -> Measurement | None:
    found = _kernels(run, workload)
    return found[0] if found else None


def _roof(m: Measurement, run: Run) -> str:
    """Where a kernel landed, as a verb phrase: on the roof that explains its time when it
    reached at least half of it (``render.EXPLAINED``), else how far below its nearest roof it
    stayed, which then does not set its time."""
    where = place(m, run.peaks)
    cache = unmeasured_cache(m, run.peaks, run.provenance.device_name)
    served = f", its rows served from the {cache}" if cache and where.kind == "memory" else ""
    if where.attained >= EXPLAINED[0] or where.beaten:
        return f"landed on the {where.observed} roof ({percent(where.attained)} of it){served}"
    return (
        f"reached only {percent(where.attained)} of the {where.observed} roof, its nearest"
        f"{served}: under half of it, so that roof does not explain its time"
    )


# -- datasheet against measured ------------------------------------------------------------
def datasheet_table(runs: Sequence[Run]) -> str:
    """Markdown: each GPU run's measured peaks beside its datasheet's, with the share reached.

    A run whose GPU is not in the datasheet table shows its measured peaks alone.
    """
    rows = []
    for run in runs:
        peaks = run.peaks
        gpu = lookup(run.provenance.device_name)
        sheet_flops = None if gpu is None else gpu.peak(peaks.dtype)
        sheet_bytes = None if gpu is None else gpu.bytes_per_s
        rows.append(
            [
                run_name(run),
                "-" if sheet_flops is None else si(sheet_flops, "FLOP/s"),
                si(peaks.flops_per_s, "FLOP/s"),
                "-" if sheet_flops is None else percent(peaks.flops_per_s / sheet_flops),
                "-" if sheet_bytes is None else si(sheet_bytes, "B/s"),
                si(peaks.bytes_per_s, "B/s"),
                "-" if sheet_bytes is None else percent(peaks.bytes_per_s / sheet_bytes),
                "-" if gpu is None or sheet_flops is None
                else units.significant(gpu.ridge_point(peaks.dtype)),
                units.significant(peaks.ridge_point),
                "-" if peaks.latency_seconds is None else seconds(peaks.latency_seconds),
            ]
        )  # fmt: skip
    return markdown_table(
        [
            "Run",
            "Datasheet compute",
            "Measured GEMM",
            "Reached",
            "Datasheet memory",
            "Measured stream",
            "Reached",
            "Ridge, datasheet (FLOP/byte)",
            "Ridge, measured",
            "Latency floor",
        ],
        rows,
    )


def peaks_sentence(run: Run) -> str:
    """In words: the share of the datasheet's compute and memory roofs the run reached, and
    what its GEMM sweep reached (:func:`sweep_sentence`)."""
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
        f"In {run_phrase(run)} the compute peak (the faster of a large GEMM and the book's "
        f"dense convolution) reached {si(peaks.flops_per_s, 'FLOP/s')} of "
        f"the {si(sheet, 'FLOP/s')} the {gpu.name} datasheet lists for {peaks.dtype} "
        f"({percent(peaks.flops_per_s / sheet)}), and streaming reached "
        f"{si(peaks.bytes_per_s, 'B/s')} of {si(gpu.bytes_per_s, 'B/s')} "
        f"({percent(peaks.bytes_per_s / gpu.bytes_per_s)}). The measured ridge point is "
        f"{units.significant(peaks.ridge_point)} FLOP/byte against the datasheet's "
        f"{units.significant(gpu.ridge_point(peaks.dtype))}, and the smallest kernel took "
        + ("an unmeasured time" if peaks.latency_seconds is None
           else seconds(peaks.latency_seconds))
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
                    seconds(m.seconds),
                    where.bound,
                    observed(where, unmeasured_cache(m, run.peaks, run.provenance.device_name)),
                ]
            )
    return markdown_table(
        ["#", "Family", "Kernel", "Sizes", "Time (median)", "Predicted", "Nearest roof: reached"],
        rows,
    )


def _dlrm(run: Run) -> str:
    rand, seq = _find(run, "dlrm-random"), _find(run, "dlrm-sequential")
    if rand is None or seq is None:
        return ""
    row = rand.size("d") * rand.size("s")
    return (
        f"random lookups of {units.plain_number(row)}-byte rows took {seconds(rand.seconds)}, "
        f"{units.as_long(rand.seconds / seq.seconds, 'consecutive ones')} "
        f"({seconds(seq.seconds)}); the random ones {_roof(rand, run)}"
    )


def _mlp(run: Run) -> str:
    sweep = sorted(_kernels(run, "mlp"), key=lambda m: m.size("B"))
    memory = [m for m in sweep if place(m, run.peaks).bound == "memory"]
    compute = [m for m in sweep if place(m, run.peaks).bound == "compute"]
    if not memory:
        return ""
    first, last = memory[0], memory[-1]
    b1, b2 = (units.plain_number(m.size("B")) for m in (first, last))
    roofs = [place(m, run.peaks).observed for m in (first, last)]
    landed = (
        f"both landed on the {roofs[0]} roof"
        if roofs[0] == roofs[1]
        else f"they landed on the {roofs[0]} and the {roofs[1]} roofs"
    )
    text = (
        f"a layer at a batch of {b2} took {seconds(last.seconds)}, "
        f"{units.as_long(last.seconds / first.seconds, f'at a batch of {b1}')} "
        f"({seconds(first.seconds)}); {landed}, where the batch costs little"
    )
    if compute:
        big = compute[0]
        text += (
            f"; from B = {units.plain_number(big.size('B'))} it ran at "
            f"{percent(big.flops_per_s / run.peaks.flops_per_s)} of the measured GEMM peak"
        )
    return text


def _cnn(run: Run) -> str:
    conv, depth = _find(run, "cnn-conv"), _find(run, "cnn-depthwise")
    if conv is None or depth is None:
        return ""
    return f"the dense convolution {_roof(conv, run)}; the depthwise one {_roof(depth, run)}"


def _rnn(run: Run) -> str:
    loop, gemm = _find(run, "rnn-loop"), _find(run, "rnn-gemm")
    if loop is None or gemm is None:
        return ""
    text = (
        f"the {units.plain_number(loop.size('S'))}-step loop took {seconds(loop.seconds)} "
        f"against {seconds(gemm.seconds)} for the same FLOPs as one GEMM, "
        f"{units.as_long(loop.seconds / gemm.seconds, 'the GEMM')}"
    )
    bound = chain_bound(loop, run.peaks)
    if bound is not None and loop.ops is not None:
        text += (
            f"; the chain of its {units.plain_number(loop.ops)} dependent operations, "
            f"each at the floor the run measured, accounts for {percent(bound / loop.seconds)} "
            "of the loop's time"
        )
    module = _find(run, "rnn-module")
    if module is not None and ran_in(module) != dtype_name(run.peaks.dtype):
        # the kernel's own record says which type ran; the reason is cuDNN's (kernels/rnn.py)
        text += (
            f". In that run `nn.RNN` ran in {ran_in(module)}, not {run.peaks.dtype}: cuDNN "
            f"packs an RNN's weights into one buffer only in {ran_in(module)}, and with "
            f"{run.peaks.dtype} it would pack them again on every call"
        )
        gpu = lookup(run.provenance.device_name)
        if gpu is not None and gpu.peak(ran_in(module)) == gpu.peak(run.peaks.dtype):
            text += ". The datasheet gives both types one tensor-core peak"
    return text


def _transformer(run: Run) -> str:
    prefill = sorted(_kernels(run, "transformer-prefill"), key=lambda m: m.size("S"))
    decode = _find(run, "transformer-decode")
    parts = []
    if prefill:
        big = prefill[-1]
        parts.append(
            f"prefill at S = {units.plain_number(big.size('S'))} ran at "
            f"{percent(big.flops_per_s / run.peaks.flops_per_s)} of the measured GEMM peak "
            f"and {_roof(big, run)}"
        )
    if decode is not None:
        parts.append(
            f"A decode step read at {percent(decode.bytes_per_s / run.peaks.bytes_per_s)} of "
            f"the measured memory bandwidth and {_roof(decode, run)}"
        )
    text = ". ".join(parts)  # two sentences: each under the prose checks' 60 words
    return text[:1].lower() + text[1:]


def _distributed(run: Run) -> str:
    report = run.distributed
    if report is None:
        return ""
    judged = [r for r in run.claims if CLAIMS[r.key].chapter == "distributed"]
    held = sum(r.verdict == "holds" for r in judged)
    where = (
        f"ran on the machine's host CPU, not on the GPU ({report.device})"
        if report.backend == "gloo"
        else f"ran on the GPUs with {report.backend} ({report.device})"
    )
    text = (
        f"the distributed part {where}; {held} of its "
        f"{units.plural(len(judged), 'distributed claim')} held"
    )
    if report.fit is not None:
        text += (
            f", and its collectives cost {si(report.fit.alpha_s, 's')} a call plus their bytes "
            f"at {si(report.fit.bytes_per_s, 'B/s')}"
        )
    return text


SENTENCES: dict[str, Callable[[Run], str]] = {
    "dlrm": _dlrm,
    "mlp": _mlp,
    "cnn": _cnn,
    "rnn": _rnn,
    "transformer": _transformer,
    "distributed": _distributed,
}
"""What each chapter's GPU passage says of one run (empty when the run lacks the kernels)."""


def chapter_passage(runs: Sequence[Run], family: str) -> str:
    """Markdown: what the recorded GPU runs showed for one chapter, in words from their data.

    >>> chapter_passage([], "rnn")
    'No run on a GPU is recorded in `docs/runs/` yet, so this chapter has no GPU to tell of.'
    """
    said = [
        f"In {run_phrase(run)}, {text}."
        for run in gpu_runs(runs)
        if (text := SENTENCES[family](run))
    ]
    if not said:
        return "No run on a GPU is recorded in `docs/runs/` yet, so this chapter has no GPU to tell of."
    return (
        "**What the GPU showed.** "
        + " ".join(said)
        + " The {doc}`GPU chapter <gpu>` tells these runs in full."
    )


def highlights(run: Run) -> Glue:
    """The chapter's headline sentences of one run, one per family (``hl_dlrm`` ...)."""
    return {f"hl_{family}": SENTENCES[family](run) or "not measured" for family in FAMILIES}


# -- the claims that fail ------------------------------------------------------------------
def tally(runs: Sequence[Run]) -> str:
    """In words: how many claims each GPU run judged, and how many of them failed."""
    parts = []
    for run in runs:
        counts = run.counts
        parts.append(
            f"{run_phrase(run)} judged {units.plural(len(run.claims), 'claim')}: "
            f"{counts['holds']} held, {counts['fails']} failed"
            + (f", {counts['undecided']} undecided" if counts["undecided"] else "")
            + (f", {counts['not visible']} not visible" if counts["not visible"] else "")
        )
    text = "; ".join(parts)
    return text[:1].upper() + text[1:] + "." if text else "No run on a GPU is recorded yet."


def _sentences(text: str, mark: str = "; ") -> str:
    """A result's clauses, joined by ``mark`` where it was written, as sentences of their own
    (the book's pages keep each sentence under 60 words).

    >>> _sentences("random 1.6 TB/s; sequential 1.6 TB/s")
    'random 1.6 TB/s. Sequential 1.6 TB/s'
    """
    parts = text.split(mark)
    return ". ".join([parts[0], *(part[:1].upper() + part[1:] for part in parts[1:])])


def _failure(result: ClaimResult, names: Sequence[str]) -> str:
    runs = units.listing(list(names)) + (" runs" if len(names) > 1 else " run")
    why = _sentences(result.why)  # a sentence of its own after the pass region's
    text = (
        f"* **{_sentences(result.claim.rstrip('.'), ': ')}.** ({result.architecture}; did "
        f"not hold in the {runs}.) "
        f"Result: {_sentences(result.measured)}. Pass region: {result.pass_region}. "
        f"{why[:1].upper()}{why[1:]}."
    )
    if result.detail and result.detail not in result.measured:
        text += f" In numbers: {_sentences(result.detail)}."
    if result.device and not result.device.startswith("cuda"):
        text += f" Measured on: {result.device}."
    return text


def failures(runs: Sequence[Run]) -> str:
    """Markdown: each claim that did not hold on a GPU run, once, with the runs it failed in
    and its measured reason (the first failing run's numbers)."""
    found: dict[str, tuple[ClaimResult, list[str]]] = {}
    for run in runs:
        for result in run.claims:
            if result.verdict == "holds":
                continue
            _, names = found.setdefault(result.key, (result, []))
            names.append(
                run.peaks.dtype if result.verdict == "fails"
                else f"{run.peaks.dtype} ({result.verdict})"
            )  # fmt: skip
    if not found:
        return "Every claim held on every recorded GPU run."
    return "\n".join(_failure(result, names) for result, names in found.values())


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


# -- the page ------------------------------------------------------------------------------
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


# -- bf16 against tf32 ----------------------------------------------------------------------
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
        f"{_short(base.peaks.dtype)} ({seconds(two.seconds)} against {seconds(one.seconds)}), "
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
        f"The Python step loop took {seconds(one.seconds)} in {_short(base.peaks.dtype)} "
        f"against {seconds(two.seconds)} in {_short(other.peaks.dtype)}{ops}."
    )
    floors = base.peaks.latency_seconds, other.peaks.latency_seconds
    if one.ops and floors[0] and floors[1]:
        per_op = one.seconds / one.ops, two.seconds / two.ops if two.ops else 0.0
        text += (
            f" That is {units.si(per_op[0], 's')} against {units.si(per_op[1], 's')} per "
            f"operation, while the runs' own latency floors were {units.si(floors[0], 's')} "
            f"and {units.si(floors[1], 's')}."
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


def page(runs: Sequence[Run]) -> Glue:
    """Everything the GPU chapter glues, from the recorded runs (the GPU ones are picked)."""
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
        "peaks_text": " ".join(peaks_sentence(run) for run in found),
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
