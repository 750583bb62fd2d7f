"""Every page of the book and every command's report renders every legitimate run (issue 44).

A busy machine measures what it measures: a claim it could not show, one noise left undecided,
no value at all, an infinite or a zero ratio, a part skipped or crowded onto one core. The book
built on it must still build, and say "—" or why in words. These tests run every code cell of
every page (tests/book_pages.py) and the CLI's ``verify``, ``compare`` and ``profile`` reports
against real runs moved into those states (tests/run_states.py), and fail when anything raises,
when JSON is invalid, or when a reader would see nan, inf or None.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from functools import cache
from pathlib import Path

import pytest
from book_pages import DOCS, UNSHOWABLE, CellFailed, executed_pages, render_page
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from run_states import CLAIM_STATES, PART_STATES, each_claim, moved, real_runs, without_claims

from gpuconcepts.cli import main
from gpuconcepts.render import format_run
from gpuconcepts.run import Run, load

# analyze times three small models against the run's peaks: its cells read no claim, so it is
# run only where a state changes the peaks (it costs more than every other page together)
CLAIM_PAGES = [p for p in executed_pages() if p.stem != "analyze"]


@cache
def _runs() -> tuple[Run, ...]:
    return tuple(real_runs())


def _build_and_recorded() -> tuple[Run, list[Run]]:
    """The quick run as this build's, the recorded runs beside it."""
    *recorded, quick = _runs()
    return quick, recorded


def _render_book(build: Run, recorded: Sequence[Run], pages: Sequence[Path]) -> list[str]:
    """Every page rendered; what a reader would see that shows nan, inf or None."""
    found = []
    for page in pages:
        found += render_page(page, build, recorded).unshowable()
    return found


def _no_bad_constant(text: str) -> object:
    """JSON as a strict reader takes it: NaN and Infinity are not JSON."""

    def refuse(constant: str) -> object:
        raise AssertionError(f"invalid JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def _cli_reports(
    build: Run, recorded: Sequence[Run], folder: Path, capsys: pytest.CaptureFixture[str]
) -> list[str]:
    """``verify --run``, ``compare`` (text and --json) on the saved runs, and ``profile``'s
    report of the build's run; every text checked for what a reader must not see."""
    saved = []
    for index, run in enumerate([build, *recorded]):
        saved.append(str(folder / f"run-{index}.json"))
        run.save(saved[-1])
    found = []
    for argv in (
        ["verify", "--run", saved[0]],
        ["verify", "--run", saved[0], "--json"],
        ["compare", *saved],
        ["compare", *saved, "--json"],
    ):
        code = main(argv)
        out, err = capsys.readouterr()
        assert code == 0, f"gpuconcepts {' '.join(argv)} exited {code}: {err}"
        if "--json" in argv:
            _no_bad_constant(out)
        found += [f"{argv[0]}: {m.group(0)} in …{out[max(m.start() - 60, 0):m.end() + 60]}…"
                  for m in UNSHOWABLE.finditer(out if "--json" not in argv else "")]  # fmt: skip
    found += [f"profile: {m.group(0)}" for m in UNSHOWABLE.finditer(format_run(build))]
    _no_bad_constant(build.to_json())
    return found


# -- each state alone, on every claim at once --------------------------------------------------
@pytest.mark.parametrize("state", sorted(CLAIM_STATES))
def test_every_page_shows_every_claim_in_a_state(state: str) -> None:
    build, recorded = _build_and_recorded()
    apply = each_claim(CLAIM_STATES[state])
    assert _render_book(apply(build), [apply(r) for r in recorded], CLAIM_PAGES) == []


@pytest.mark.parametrize("state", sorted(PART_STATES))
def test_every_page_shows_every_part_in_a_state(state: str) -> None:
    build, recorded = _build_and_recorded()
    pages = executed_pages() if state == "fewer_ceilings" else CLAIM_PAGES
    parts = [PART_STATES[state]]
    moved_build = moved(build, parts, [])
    assert _render_book(moved_build, [moved(r, parts, []) for r in recorded], pages) == []


def test_recorded_runs_that_lack_claims() -> None:
    """A recorded run older than a claim lacks it (the build's own run is judged by this
    version, so it has every claim whose part it measured)."""
    build, recorded = _build_and_recorded()
    keys = [r.key for r in build.claims[::3]]
    assert _render_book(build, [without_claims(keys)(r) for r in recorded], CLAIM_PAGES) == []


def test_the_busy_build_of_issue_44_draws_every_figure() -> None:
    """What failed: 2 processes on 1 free core, so alpha-beta-predicts had no value. Every
    page runs with its figures drawn, as the build draws them."""
    build, recorded = _build_and_recorded()
    busy = moved(build, [PART_STATES["distributed_crowded"]], [])
    busy = each_claim(CLAIM_STATES["not_visible"], ["alpha-beta-predicts"])(busy)
    for page in CLAIM_PAGES:
        assert render_page(page, busy, recorded, draw=True).unshowable() == []


@pytest.mark.parametrize("state", sorted(CLAIM_STATES) + sorted(PART_STATES))
def test_every_command_reports_every_state(
    state: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    build, recorded = _build_and_recorded()
    if state in CLAIM_STATES:
        apply = each_claim(CLAIM_STATES[state])
        build, recorded = apply(build), [apply(r) for r in recorded]
    else:
        build = moved(build, [PART_STATES[state]], [])
    assert _cli_reports(build, recorded, tmp_path, capsys) == []


# -- states mixed at random --------------------------------------------------------------------
Plan = tuple[int, tuple[str, ...], tuple[tuple[str, tuple[str, ...]], ...], tuple[str, ...]]
"""One run's states, drawn small (hypothesis shows it when a case fails): which real run, its
parts' states, its claims' states and the claims it lacks."""


@st.composite
def _plan(draw: st.DrawFn, runs: int, *, may_lack: bool = True) -> Plan:
    keys = sorted({r.key for run in _runs() for r in run.claims})
    return (
        draw(st.integers(0, runs - 1)),
        tuple(draw(st.lists(st.sampled_from(sorted(PART_STATES)), max_size=2, unique=True))),
        tuple(
            draw(
                st.lists(
                    st.tuples(
                        st.sampled_from(sorted(CLAIM_STATES)),
                        st.lists(st.sampled_from(keys), min_size=1, max_size=6).map(tuple),
                    ),
                    max_size=4,
                )
            )
        ),
        tuple(draw(st.lists(st.sampled_from(keys), max_size=3 * may_lack, unique=True))),
    )


def _carried_out(plan: Plan) -> Run:
    index, parts, claims, lacking = plan
    return moved(
        _runs()[index],
        [PART_STATES[p] for p in parts],
        [*(each_claim(CLAIM_STATES[s], k) for s, k in claims), without_claims(lacking)],
    )


@settings(max_examples=6, suppress_health_check=[HealthCheck.too_slow])
@given(
    _plan(len(_runs()), may_lack=False),
    st.lists(_plan(len(_runs()) - 1), min_size=1, max_size=3).filter(
        lambda plans: any(_runs()[p[0]].provenance.device == "cuda" for p in plans)
    ),
)
def test_every_page_renders_any_mix_of_states(build: Plan, recorded: list[Plan]) -> None:
    """The book ships with GPU runs in docs/runs/: at least one is among the recorded."""
    found = _render_book(_carried_out(build), [_carried_out(p) for p in recorded], CLAIM_PAGES)
    assert found == []


# -- the harness itself can fail ----------------------------------------------------------------
def test_the_harness_catches_what_a_reader_must_not_see(tmp_path: Path) -> None:
    build, recorded = _build_and_recorded()
    page = tmp_path / "bad.md"
    page.write_text(
        "```{code-cell} python\nfrom gpuconcepts.book import glue_md\n"
        "glue_md('ratio', f'{float(\"inf\")}× faster')\n```\n",
        encoding="utf-8",
    )
    assert render_page(page, build, recorded).unshowable() == ["bad:ratio: …inf× faster…"]
    page.write_text("```{code-cell} python\n1 / 0\n```\n", encoding="utf-8")
    with pytest.raises(CellFailed, match=r"bad\.md, cell 1 \('1 / 0'\) raised ZeroDivisionError"):
        render_page(page, build, recorded)


def test_every_page_with_code_is_covered() -> None:
    assert {p.stem for p in executed_pages()} >= {"claims", "gpu", "dlrm", "rnn", "analyze"}
    assert all(p.parent == DOCS for p in CLAIM_PAGES)
    assert dataclasses.is_dataclass(_runs()[0])


@pytest.mark.parametrize("state", ["unmeasured", "not_visible", "infinite"])
def test_a_saved_run_reads_back_each_state_as_it_was(state: str, tmp_path: Path) -> None:
    """Nothing measured (nan) and an unbounded measurement (an infinity) stay apart in the
    file: null for the first, the word "inf" for the second."""
    build, _ = _build_and_recorded()
    moved_run = each_claim(CLAIM_STATES[state])(build)
    moved_run.save(tmp_path / "run.json")
    assert load(tmp_path / "run.json").claims == moved_run.claims
    stored = json.loads((tmp_path / "run.json").read_text())["claims"][0]
    assert stored["measured"] == {"infinite": "inf"}.get(state)
