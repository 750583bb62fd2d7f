"""What the recorded GPU runs showed, in sentences: one per chapter and run (the chapters'
"on other machines" passages and the GPU chapter's highlights), and the claims that failed.

>>> chapter_passage([], "rnn")
'No run on a GPU is recorded in `docs/runs/` yet, so this chapter has no GPU to tell of.'
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from gpuconcepts import units
from gpuconcepts.hardware import dtype_name, lookup
from gpuconcepts.render.pages.gpu_recorded import (
    FAMILIES,
    chapter_kernels,
    first_kernel,
    gpu_runs,
    roof_phrase,
    run_phrase,
)
from gpuconcepts.render.text import EXPLAINED, chain_bound, ran_in, time_spread
from gpuconcepts.render.text.distributed import fit_values
from gpuconcepts.results.registry import CLAIMS
from gpuconcepts.roofline import place
from gpuconcepts.units import percent

if TYPE_CHECKING:
    from gpuconcepts.render.pages import Glue
    from gpuconcepts.results.claim import ClaimResult
    from gpuconcepts.run import Run


def _dlrm(run: Run) -> str:
    rand, seq = first_kernel(run, "dlrm-random"), first_kernel(run, "dlrm-sequential")
    if rand is None or seq is None:
        return ""
    row = rand.size("d") * rand.size("s")
    return (
        f"random lookups of {units.plain_number(row)}-byte rows took {time_spread(rand)}, "
        f"{units.as_long(rand.seconds / seq.seconds, 'consecutive ones')} "
        f"({time_spread(seq)}); the random ones {roof_phrase(rand, run)}"
    )


def _mlp(run: Run) -> str:
    sweep = sorted(chapter_kernels(run, "mlp"), key=lambda m: m.size("B"))
    memory = [m for m in sweep if place(m, run.peaks).bound == "memory"]
    compute = [m for m in sweep if place(m, run.peaks).bound == "compute"]
    if not memory:
        return ""
    first, last = memory[0], memory[-1]
    b1, b2 = (units.plain_number(m.size("B")) for m in (first, last))
    places = [place(m, run.peaks) for m in (first, last)]
    roofs = [where.observed for where in places]
    landed = (
        f"both landed on the {roofs[0]} roof"
        if roofs[0] == roofs[1]
        else f"they landed on the {roofs[0]} and the {roofs[1]} roofs"
    )
    if all(where.attained < EXPLAINED[0] and not where.beaten for where in places):
        # under half of the nearest roof is not "on" it (the lesson a label must not teach)
        shares = " and ".join(percent(where.attained) for where in places)
        landed = f"both stayed under half of the {roofs[0]} roof, their nearest ({shares})"
    text = (
        f"a layer at a batch of {b2} took {time_spread(last)}, "
        f"{units.as_long(last.seconds / first.seconds, f'at a batch of {b1}')} "
        f"({time_spread(first)}); {landed}, where the batch costs little"
    )
    if compute:
        big = compute[0]
        text += (
            f"; from B = {units.plain_number(big.size('B'))} it ran at "
            f"{percent(big.flops_per_s / run.peaks.flops_per_s)} of the measured GEMM peak"
        )
    return text


def _cnn(run: Run) -> str:
    conv, depth = first_kernel(run, "cnn-conv"), first_kernel(run, "cnn-depthwise")
    if conv is None or depth is None:
        return ""
    return f"the dense convolution {roof_phrase(conv, run)}; the depthwise one {roof_phrase(depth, run)}"


def _rnn(run: Run) -> str:
    loop, gemm = first_kernel(run, "rnn-loop"), first_kernel(run, "rnn-gemm")
    if loop is None or gemm is None:
        return ""
    text = (
        f"the {units.plain_number(loop.size('S'))}-step loop took {time_spread(loop)} "
        f"against {time_spread(gemm)} for the same FLOPs as one GEMM, "
        f"{units.as_long(loop.seconds / gemm.seconds, 'the GEMM')}"
    )
    bound = chain_bound(loop, run.peaks)
    if bound is not None and loop.ops is not None:
        text += (
            f"; the chain of its {units.plain_number(loop.ops)} dependent operations, "
            f"each at the floor the run measured, accounts for {percent(bound / loop.seconds)} "
            "of the loop's time"
        )
    module = first_kernel(run, "rnn-module")
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
    prefill = sorted(chapter_kernels(run, "transformer-prefill"), key=lambda m: m.size("S"))
    decode = first_kernel(run, "transformer-decode")
    parts = []
    if prefill:
        big = prefill[-1]
        parts.append(
            f"prefill at S = {units.plain_number(big.size('S'))} ran at "
            f"{percent(big.flops_per_s / run.peaks.flops_per_s)} of the measured GEMM peak "
            f"and {roof_phrase(big, run)}"
        )
    if decode is not None:
        parts.append(
            f"A decode step read at {percent(decode.bytes_per_s / run.peaks.bytes_per_s)} of "
            f"the measured memory bandwidth and {roof_phrase(decode, run)}"
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
    fit = fit_values(report)  # each with its bootstrap interval: a sentence of its own
    if fit is not None:
        text += f". Its collectives cost {fit[0]} a call plus their bytes at {fit[1]}"
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
    """Markdown: what the recorded GPU runs showed for one chapter, in words from their data."""
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
            f"{run_phrase(run)} judged {units.plain_number(sum(counts.values()))} of the "
            "post's claims: "  # the tally's own total, as the claims appendix counts them
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
