"""Every number that two pages both show agrees, for the recorded runs (issue 46).

The pages run outside Sphinx (tests/book_pages.py) on the recorded runs, and each quantity a
page shows of a recorded run is read back from its text with what it belongs to: a kernel's
median time and the share of its roof (the chapters' lead tables and the GPU chapter's
table), a run's ridge point (the chapters' leads and the GPU chapter's roofs), its measured
HBM bandwidth, compute peak and latency floor (What a GPU is, the GPU chapter and the
machines side by side), a run's tally
of the post's claims (the GPU chapter and the claims appendix), and a claim's verdict in a
run (the claims appendix and the whole-model chapter). A quantity shown twice must read the
same, to the rounding shown. A planted disagreement is caught.

The pages agree by construction, each shared number coming from one function
(``render.text.observed``, ``units.seconds``, ``results.ledger.tally``, the run's judged
claims); this test is what keeps it so.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache

import pytest
from book_pages import DOCS, render_page
from run_states import real_runs

from gpuconcepts.render.pages.gpu_basics import leading_run
from gpuconcepts.render.pages.gpu_recorded import run_name, run_phrase
from gpuconcepts.run import Run

CHAPTERS = ("dlrm", "mlp", "cnn", "rnn", "transformer")
PAGES = (*CHAPTERS, "gpu", "gpu-basics", "claims", "model", "devices")

Shown = Mapping[str, Mapping[str, str]]
"""Each page's glued texts, by page and glue name."""


@dataclass(frozen=True)
class Fact:
    """One number or verdict a page shows: what it is of (``about``), its text, and where."""

    about: tuple[str, ...]
    value: str
    page: str


@cache
def _book() -> tuple[tuple[Run, ...], dict[str, dict[str, str]]]:
    *recorded, build = real_runs()
    shown = {page: dict(render_page(DOCS / f"{page}.md", build, recorded).texts) for page in PAGES}
    return tuple(recorded), shown


def _rows(markdown: str) -> Iterator[list[str]]:
    """The cells of every row of the Markdown tables in ``markdown`` (header rows too)."""
    for line in markdown.splitlines():
        if line.startswith("|") and not line.startswith("| ---"):
            yield [cell.strip().replace("\u00a0", " ") for cell in line.strip("|").split(" | ")]


KERNEL = re.compile(r'`([\w-]+)`<br><small data-run="([^"]+)">(.*?)</small>')


def lead_facts(shown: Shown) -> Iterator[Fact]:
    """Each chapter's lead table: every kernel's median time and the share of its roof, and
    the lead run's ridge point."""
    for page in CHAPTERS:
        table = shown[page].get("lead_table", "")
        labels = set()
        for cells in _rows(table):
            found = KERNEL.search(cells[0])
            if found is None:
                continue
            kernel, label, sizes = found.groups()
            labels.add(label)
            sizes = _sizes(sizes)
            yield Fact((label, kernel, sizes, "time"), cells[1].split(" ± ")[0], page)
            yield Fact((label, kernel, sizes, "share of the roof"), cells[3], page)
        for label in labels:
            yield Fact((label, "ridge point"), shown[page]["lead_ridge"], page)


def gpu_facts(shown: Shown, runs: Sequence[Run]) -> Iterator[Fact]:
    """The GPU chapter: its table's kernels (the first GPU run's), each run's ridge point from
    the roofs' sentences, and each run's tally of the post's claims."""
    texts = shown["gpu"]
    by_name = {run_name(run): run.label for run in runs}
    table = texts["families_first"]
    label = by_name[table.splitlines()[0].strip("*")]
    for cells in _rows(table):
        if len(cells) < 7 or not cells[2].startswith("`"):
            continue
        kernel, sizes = cells[2].strip("`"), _sizes(cells[3])
        yield Fact((label, kernel, sizes, "time"), cells[4].split(" ± ")[0], "gpu")
        yield Fact((label, kernel, sizes, "share of the roof"), cells[6], "gpu")
    for run in runs:
        phrase = run_phrase(run)
        for text, pattern, about in (
            (texts["peaks_text"], r"The measured ridge point is ([\d,.]+)", "ridge point"),
            (
                texts["peaks_text"],
                r"the compute peak reached ([\d,.]+ \w?FLOP/s)",
                "compute peak",
            ),
            (texts["peaks_text"], r"streaming reached ([\d,.]+ \w?B/s)", "HBM bandwidth"),
            (texts["peaks_text"], r"the smallest kernel took ([\d,.]+ \w?s)\b", "latency floor"),
            (texts["tally"], r"judged ([^;.]+)", "tally"),
        ):
            start = text.find(phrase[4:])  # "the NVIDIA H200's …" begins a sentence capitalised
            found = re.search(pattern, text[start:]) if start >= 0 else None
            if found:
                value = found.group(1)
                if about == "tally":
                    value = _counts(value)
                yield Fact((run.label, about), value, "gpu")


def basics_facts(shown: Shown, runs: Sequence[Run]) -> Iterator[Fact]:
    """What a GPU is: the leading run's measured HBM bandwidth and its launch (latency floor)."""
    run = leading_run(runs)
    texts = shown["gpu-basics"]
    if run is None:
        return
    found = re.search(r"measured ([\d,.]+ \w?B/s) from HBM", texts["hbm_measured"])
    if found:
        yield Fact((run.label, "HBM bandwidth"), found.group(1), "gpu-basics")
    yield Fact((run.label, "latency floor"), texts["launch"], "gpu-basics")


def devices_facts(shown: Shown, runs: Sequence[Run]) -> Iterator[Fact]:
    """The machines side by side: each recorded run ("Recorded 1", … in the runs' order)
    with its compute peak, bandwidth and ridge point, its kernels' median times, and its
    claims' verdicts."""
    texts = shown["devices"]
    named = {f"Recorded {i}": run.label for i, run in enumerate(runs, start=1)}
    for cells in _rows(texts["machines"]):
        if cells[0] in named:
            label = named[cells[0]]
            yield Fact((label, "compute peak"), cells[2].split(" (")[0], "devices")
            yield Fact((label, "HBM bandwidth"), cells[3], "devices")
            yield Fact((label, "ridge point"), cells[4], "devices")
    for table, about in ((texts["workloads"], "time"), (texts["claims"], "verdict")):
        rows = list(_rows(table))
        columns = {i: named[name] for i, name in enumerate(rows[0]) if name in named}
        for cells in rows[1:]:
            for i, label in columns.items():
                if about == "verdict":
                    yield Fact((label, "verdict", cells[0]), cells[i], "devices")
                    continue
                found = re.match(r"(.+?) ± .*<small>(.*?)</small>", cells[i])
                if found:
                    kernel = cells[0].strip("`")
                    key = (label, kernel, _sizes(found.group(2)), "time")
                    yield Fact(key, found.group(1), "devices")


def _sizes(text: str) -> str:
    """A kernel's sizes without its data type (one page names it, another leaves it out)."""
    return ", ".join(part for part in text.split(", ") if "=" in part)


def _counts(text: str) -> str:
    """A tally in one form, whatever its words: ``20: 16 holds, 2 fails, …``."""
    numbers = dict.fromkeys(("holds", "fails", "undecided", "not visible"), "0")
    total = re.match(r"([\d,]+)", text)
    for count, word in re.findall(r"([\d,]+) (held|failed|undecided|not visible)", text):
        numbers[{"held": "holds", "failed": "fails"}.get(word, word)] = count
    head = total.group(1) if total else "?"
    return f"{head}: " + ", ".join(f"{n} {word}" for word, n in numbers.items())


def claims_facts(shown: Shown, runs: Sequence[Run]) -> Iterator[Fact]:
    """The claims appendix: each run's tally of the post's claims, and each claim's verdict in
    each recorded run (its summary's columns)."""
    texts = shown["claims"]
    by_row = {f"{run.label}, {run.peaks.dtype}": run.label for run in runs}
    for cells in _rows(texts["tally_table"]):
        if cells[0] in by_row:
            counts = dict(
                zip(("holds", "fails", "undecided", "not visible"), cells[2:6], strict=True)
            )
            value = f"{cells[1]}: " + ", ".join(f"{n} {w}" for w, n in counts.items())
            yield Fact((by_row[cells[0]], "tally"), value, "claims")
    yield from _verdicts(texts["summary"], runs, "claims", first_claim_column=2)


def _verdicts(
    table: str, runs: Sequence[Run], page: str, first_claim_column: int
) -> Iterator[Fact]:
    """Each claim's verdict under each column named ``<run label> (recorded)``."""
    rows = list(_rows(table))
    if not rows:
        return
    header = rows[0]
    columns = {
        i: run.label
        for i, name in enumerate(header)
        for run in runs
        if name == f"{run.label} (recorded)"
    }
    for cells in rows[1:]:
        claim = cells[first_claim_column]
        for i, label in columns.items():
            yield Fact((label, "verdict", claim), cells[i].split(",")[0], page)


def model_facts(shown: Shown, runs: Sequence[Run]) -> Iterator[Fact]:
    """The whole-model chapter's verdicts of its claims in each recorded run."""
    yield from _verdicts(shown["model"].get("recorded_claims", ""), runs, "model", 0)


def facts(shown: Shown, runs: Sequence[Run]) -> list[Fact]:
    """Every shared-number fact every page shows of the recorded runs."""
    return [
        *lead_facts(shown),
        *gpu_facts(shown, runs),
        *basics_facts(shown, runs),
        *devices_facts(shown, runs),
        *claims_facts(shown, runs),
        *model_facts(shown, runs),
    ]


def disagreements(found: Sequence[Fact]) -> dict[tuple[str, ...], dict[str, list[str]]]:
    """Each quantity shown with more than one value: its values and the pages showing each."""
    seen: dict[tuple[str, ...], dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for fact in found:
        seen[fact.about][fact.value].append(fact.page)
    return {about: dict(values) for about, values in seen.items() if len(values) > 1}


def test_every_number_two_pages_show_of_a_recorded_run_agrees() -> None:
    runs, shown = _book()
    found = facts(shown, runs)
    pages: dict[tuple[str, ...], set[str]] = defaultdict(set)
    for fact in found:
        pages[fact.about].add(fact.page)
    shared = {about for about, where in pages.items() if len(where) >= 2}
    kinds = {about[-1] if about[1] != "verdict" else "verdict" for about in shared}
    # the check compares something of each kind: times, shares, ridge points, tallies, verdicts
    assert {
        "time", "share of the roof", "ridge point", "tally", "verdict", "HBM bandwidth",
        "latency floor", "compute peak",
    } <= kinds, kinds  # fmt: skip
    assert len(shared) >= 40
    assert disagreements(found) == {}


@pytest.mark.parametrize(
    ("page", "name", "old", "new"),
    [
        ("mlp", "lead_table", "68.9\u00a0µs", "69\u00a0µs"),  # a time
        ("gpu", "families_first", "compute 93% (92%–94%)", "compute 94% (92%–94%)"),  # a share
        ("cnn", "lead_ridge", "185", "186"),  # a ridge point
        ("gpu", "tally", " held,", "1 held,"),  # a tally (its count of held claims, one digit more)
        ("gpu-basics", "launch", "13.5", "13.4"),  # a latency floor
        ("gpu-basics", "hbm_measured", "4.49 TB/s", "4.5 TB/s"),  # a measured bandwidth
        ("devices", "machines", "830 TFLOP/s", "831 TFLOP/s"),  # a compute peak
        ("devices", "workloads", "343 µs ± 4.3 µs", "344 µs ± 4.3 µs"),  # a lookup's time
        ("model", "recorded_claims", "| holds | holds |", "| holds | fails |"),  # a verdict
    ],
)
def test_a_planted_disagreement_is_caught(page: str, name: str, old: str, new: str) -> None:
    runs, shown = _book()
    assert old in shown[page][name], "the planted value is on the page today"
    planted = {p: dict(texts) for p, texts in shown.items()}
    planted[page][name] = planted[page][name].replace(old, new, 1)
    assert disagreements(facts(shown, runs)) == {}
    assert disagreements(facts(planted, runs)) != {}
