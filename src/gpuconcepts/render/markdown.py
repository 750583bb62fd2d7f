r"""Markdown rendering for the book: tables of measurements and of claims.

>>> print(markdown_table(["a", "b"], [[1, "x"], [2, "y|z"]]))
| a | b |
| --- | --- |
| 1 | x |
| 2 | y\|z |
"""

from __future__ import annotations

import ast
import inspect
import itertools
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from types import ModuleType
from typing import TYPE_CHECKING

from gpuconcepts.render.text import kernel_sizes, observed, time_spread, unmeasured_cache
from gpuconcepts.results.registry import CLAIMS, TESTS_WORDS, anchor, ledger
from gpuconcepts.roofline import Peaks, place
from gpuconcepts.units import describe, measured_or_dash, number, si, significant, times

if TYPE_CHECKING:
    from gpuconcepts.formula import Formula, Number
    from gpuconcepts.measure import Measurement
    from gpuconcepts.results.claim import ClaimResult
    from gpuconcepts.results.registry import Ledger
    from gpuconcepts.run import Run


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """A Markdown table; ``|`` inside a cell is escaped."""

    def cell(value: object) -> str:
        return str(value).replace("|", r"\|")

    lines = [
        "| " + " | ".join(header) + " |",
        "| " + " | ".join("---" for _ in header) + " |",
    ]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


# -- measurements ------------------------------------------------------------------------------
MEASUREMENT_COLUMNS = (
    "Kernel and sizes",
    "Time (median ± IQR)",
    "Roofline time",
    "Time ÷ roofline",
    "FLOP/s",
    "Bytes/s",
    "FLOP/byte",
    "Predicted bound",
    "Bound: attained (spread)",
)
"""The columns of :func:`measurement_table` (after ``#`` when numbered)."""


def measurement_table(
    measurements: Iterable[Measurement],
    peaks: Peaks,
    *,
    numbered: bool = False,
    source: str = "live",
    device_name: str = "",
) -> str:
    """Measurements beside the roofline's prediction under ``peaks``, as a Markdown table.

    The sizes go under the kernel's name in small type (inline HTML), so the table has short
    columns; ``numbered`` puts a ``#`` column in front that matches the numbered points of
    :func:`gpuconcepts.render.plots.roofline.roofline_chart`. ``source`` names the run the rows come from
    (``data-run`` on the sizes), so that a check of the built book can find every row of one
    run on every page and see that it shows one time. ``device_name`` (the run's) lets a
    GPU run that measured no cache roof name the L2 that served a kernel
    (:func:`~gpuconcepts.render.text.unmeasured_cache`); each kernel's data type is the one
    it ran in (:func:`~gpuconcepts.render.text.ran_in`).
    """
    header = ["#", *MEASUREMENT_COLUMNS] if numbered else list(MEASUREMENT_COLUMNS)
    rows = []
    for index, m in enumerate(measurements, start=1):
        where = place(m, peaks)
        row = [
            f'`{m.workload}`<br><small data-run="{source}">{kernel_sizes(m)}</small>',
            time_spread(m).replace(" ", "\u00a0"),  # a time never breaks before its unit
            si(where.predicted_seconds, "s").replace(" ", "\u00a0"),
            times(where.ratio),
            si(m.flops_per_s, "FLOP/s"),
            si(m.bytes_per_s, "B/s"),
            si(m.intensity, ""),
            f"**{where.bound}**",
            observed(where, unmeasured_cache(m, peaks, device_name)),
        ]
        rows.append([str(index), *row] if numbered else row)
    return markdown_table(header, rows)


def verdict_cell(result: ClaimResult) -> str:
    """The verdict in bold, then why it is not "holds"; a reason that opens with the verdict's
    own word does not say it twice.

    >>> from gpuconcepts.results.claim import example
    >>> verdict_cell(example(1.5))
    '**fails**: the measured 1.5 lies outside the pass region (≥ 2)'
    >>> from types import SimpleNamespace
    >>> verdict_cell(SimpleNamespace(verdict="undecided", why="undecided: it straddles"))
    '**undecided**: it straddles'
    """
    why = result.why.removeprefix(f"{result.verdict}: ")
    return f"**{result.verdict}**" + (f": {why}" if result.verdict != "holds" and why else "")


def markdown_claim(result: ClaimResult) -> str:
    """One claim as a Markdown table (for the book): claim, prediction, the alternative ruled
    out, the pass region, the measurement with its interval, the verdict and why.

    >>> from gpuconcepts.results.claim import example
    >>> print(markdown_claim(example(1.5)).splitlines()[-2])
    | **Verdict** | **fails**: the measured 1.5 lies outside the pass region (≥ 2) |
    """
    verdict = verdict_cell(result)
    test = result.test
    predicted = measured_or_dash(test.predicted, number)  # "—": a prediction not judged
    return markdown_table(
        ["", ""],
        [
            ["**Claim**", result.claim],
            [
                "**Prediction**",
                f"{result.prediction} ({test.quantity} = {predicted})",
            ],
            ["**Rules out**", result.alternative],
            ["**Pass region**", result.pass_region],
            ["**Measured**", result.measured],
            ["**Verdict**", verdict],
            ["**Device**", result.device],
        ],
    )


def markdown_claims_table(results: Sequence[ClaimResult]) -> str:
    """Several claims as one Markdown table: claim, prediction, the alternative ruled out, the
    pass region, the measured value with its interval, and the verdict (with why, when it does
    not hold).

    >>> from gpuconcepts.results.claim import example
    >>> print(markdown_claims_table([example()]).splitlines()[-1])
    | Bigger batches run faster per sample. | 8 | FLOP/s independent of batch (FLOP/s gain = 1) | FLOP/s gain ≥ 2 | 4 [4, 4] | **holds** |
    """
    rows = []
    for r in results:
        verdict = verdict_cell(r)
        test = r.test
        measured = (
            f"{measured_or_dash(test.measured, number)} {test.interval_text()}"
            if math.isfinite(test.measured)
            else measured_or_dash(test.measured)  # nothing to bracket
        )
        rows.append(
            [r.claim, measured_or_dash(test.predicted, number), r.alternative, r.pass_region,
             measured, verdict]
        )  # fmt: skip
    return markdown_table(
        ["Claim", "Predicted", "Rules out", "Pass region", "Measured [interval]", "Verdict"], rows
    )


def audit_cell(result: ClaimResult) -> str:
    """A claim's verdict on one machine, then, in words, its measured value over the value the
    post's model predicts: a number of ledger 2's kind, which a post's claim is never judged by,
    so the cell says what it is rather than leave a bare number beside a verdict.

    >>> from gpuconcepts.results.claim import example
    >>> audit_cell(example()), audit_cell(example(1.5))
    ('holds (0.5× predicted)', 'fails (0.19× predicted)')

    A value a busy machine could not measure shows the verdict alone (issue 44):

    >>> import dataclasses
    >>> unmeasured = dataclasses.replace(example().test, measured=float("nan"),
    ...                                  interval=(float("nan"), float("nan")))
    >>> audit_cell(dataclasses.replace(example(), test=unmeasured, visible=False))
    'not visible'

    A fact (an exact count) has no prediction to score, only its verdict:

    >>> audit_cell(dataclasses.replace(example(), key="kv-cache-exact"))
    'holds'
    """
    test = result.test
    scored = test.predicted and math.isfinite(test.measured * test.predicted)
    if ledger(result.key) == "fact" or not scored:  # an exact count, none measured, or a
        return result.verdict  # prediction not judged: nothing to divide, the verdict alone
    ratio = measured_or_dash(test.measured / test.predicted, lambda r: significant(r, 2))
    return f"{result.verdict} ({ratio}× predicted)"


def markdown_claims_summary(
    runs: Sequence[Run],
    labels: Mapping[str, str],
    names: Sequence[str],
    ledgers: Sequence[Ledger] = ("post",),
) -> str:
    """One row per claim counted in ``ledgers`` (the post's claims by default: the facts and
    the model's own predictions get a table of their own, so that the table of the post's
    claims is the one the tally counts), one column per run: its verdict and its measured ÷
    predicted (:func:`audit_cell`); each architecture links to its section. A table of more
    than one ledger says in a column what each claim's test checks
    (:data:`~gpuconcepts.results.registry.TESTS_WORDS`).

    ``labels`` maps an architecture (``"DLRM"``) to a MyST label (``"claims-dlrm"``); ``names``
    heads the runs' columns (e.g. "this machine (live)", "NVIDIA H200 (recorded)").
    """
    first = runs[0]
    rows = []
    shown = [r for r in first.claims if ledger(r.key) in ledgers]
    for index, result in enumerate(shown, start=1):
        section = result.architecture
        if section in labels:
            section = f"{{ref}}`{result.architecture} <{labels[result.architecture]}>`"
        verdicts = []
        for run in runs:
            found = [r for r in run.claims if r.key == result.key]
            verdicts.append(audit_cell(found[0]) if found else "not measured")
        kind = [TESTS_WORDS[CLAIMS[result.key].tests]] if len(ledgers) > 1 else []
        rows.append([str(index), section, claim_link(result.key, result.claim), *kind, *verdicts])
    kind_header = ["What it checks"] if len(ledgers) > 1 else []
    return markdown_table(["#", "Section", "Claim", *kind_header, *names], rows)


def claim_link(key: str, text: str) -> str:
    """``text``, the claim ``key`` in words, as a MyST link to where its page discusses it
    (:func:`~gpuconcepts.results.registry.anchor`); a claim the registry does not hold (an
    example's) stays plain text.

    >>> claim_link("rnn-linear-in-S", "RNN time grows linearly with S")
    '{ref}`RNN time grows linearly with S <claim-rnn-linear-in-s>`'
    >>> claim_link("demo", "Bigger batches run faster")
    'Bigger batches run faster'
    """
    if key not in CLAIMS:
        return text
    title = text.replace("`", "").replace("<", "\\<")  # a role's title ends at a backtick
    return f"{{ref}}`{title} <{anchor(key)}>`"


def worked_answer(formula: Formula, **values: Number) -> str:
    r"""A worked answer as Markdown: the derivation as display math, then the value in words.

    >>> from gpuconcepts.formulas import mlp_weight_memory
    >>> print(worked_answer(mlp_weight_memory, d_in=1024, d_out=512, s=4))
    $$\text{Weight Memory} = d_{in} d_{out} s = 1{,}024 \times 512 \times 4 = 2{,}097{,}152$$
    <BLANKLINE>
    **2,097,152 bytes (2.1 MB, 2 MiB)**
    >>> from gpuconcepts.formulas import attention_scores
    >>> print(worked_answer(attention_scores, S=1000).splitlines()[-1])
    **1,000,000 (1 million)**
    """
    said = describe(formula(**values), formula.kind)
    return f"$${formula.lhs} = {formula.worked(**values)}$$\n\n**{said}**"


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>])")


def literal(text: str) -> str:
    r"""Plain text made safe to put into Markdown: ``2**1.7`` stays ``2**1.7``, not bold.

    >>> literal("between 2**1.7 and 2**2.3 times, S_first")
    'between 2\\*\\*1.7 and 2\\*\\*2.3 times, S\\_first'
    """
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def constant_doc(module: ModuleType, name: str) -> str:
    """The docstring written under the module constant ``name`` (read from the source, as
    Sphinx autodoc reads it), so that a page can say a rule in the words the code keeps; a
    clear error when the constant has none.

    >>> from gpuconcepts.claims import thresholds
    >>> constant_doc(thresholds, "MIN_BLOCKS").split(" (")[0]
    'A live run times every comparison in at least 3 independent blocks'
    >>> constant_doc(thresholds, "NOWHERE")
    Traceback (most recent call last):
    ...
    ValueError: gpuconcepts.claims.thresholds.NOWHERE: no docstring under such a constant
    """
    body = ast.parse(inspect.getsource(module)).body
    for node, following in itertools.pairwise(body):
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        if not any(isinstance(t, ast.Name) and t.id == name for t in targets):
            continue
        if isinstance(following, ast.Expr) and isinstance(following.value, ast.Constant):
            return " ".join(str(following.value.value).split())
    raise ValueError(f"{module.__name__}.{name}: no docstring under such a constant")


_ROLE = re.compile(r":[\w:]+:`(?:[^`<]*<)?~?([^`>]+)>?`")
_POINTER = re.compile(r"\s*\((?::[\w:]+:`[^`]+`(?:,\s*)?)+\)")


def plain_doc(text: str) -> str:
    """A docstring's words for a page: a parenthesis that only points to code goes, another
    cross-reference keeps the last part of its name as code, and ``code`` becomes `code`.

    >>> plain_doc("It is shown (:attr:`~a.b.C.look`), in :data:`~a.SECOND` and ``-again``.")
    'It is shown, in `SECOND` and `-again`.'
    >>> plain_doc("Read by :func:`the rule <a.b.finding>`.")
    'Read by `finding`.'
    """
    text = _POINTER.sub("", text).replace("``", "`")
    return _ROLE.sub(lambda m: f"`{m.group(1).rsplit('.', 1)[-1]}`", text)
