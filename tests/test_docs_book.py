"""The helpers the book's pages glue with: measurement tables, status words, the build's run."""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path

import pytest
from synthetic import synthetic_run

from gpuconcepts import book
from gpuconcepts.book import build_run, chapter, plain_status, recorded_section
from gpuconcepts.claims.judge import judged_now, rejudged
from gpuconcepts.measure import Measurement
from gpuconcepts.render import MEASUREMENT_COLUMNS, measurement_table
from gpuconcepts.roofline import Peaks
from gpuconcepts.run import Run

PEAKS = Peaks("cpu", 1e11, 1e10, "float32")


def lookup() -> Measurement:
    params = {"N": 1_000_000, "B": 4096, "L": 16, "d": 64, "s": 4, "dtype": "float32"}
    return Measurement("dlrm-random", "cpu", params, (2e-3, 4e-3, 3e-3), 1e6, 4e6)


def test_measurement_table_puts_sizes_under_the_kernel_name() -> None:
    header, rule, row = measurement_table([lookup()], PEAKS).splitlines()
    assert header == "| " + " | ".join(MEASUREMENT_COLUMNS) + " |"
    assert rule.count("---") == len(MEASUREMENT_COLUMNS)
    cells = [c.strip() for c in row.strip("|").split(" | ")]
    assert cells[0] == (
        '`dlrm-random`<br><small data-run="live">N=1,000,000, B=4,096, L=16, d=64, float32</small>'
    )
    # median 3 ms ± IQR 1 ms; roofline max(1e6/1e11, 4e6/1e10) = 400 µs; a time never breaks
    assert cells[1:4] == ["3\u00a0ms\u00a0±\u00a01\u00a0ms", "400\u00a0µs", "7.5×"]  # units.times
    # 1.33 GB/s against a 10 GB/s DRAM roof: memory-bound by the formulas, its bound is DRAM's;
    # the roof reads the 4 MB and the int64 index of each of the 4,096 × 16 rows and 4,096 bags
    # (4,096 × 17 × 8 = 557,056 bytes): 4.557 MB in 3 ms at 10 GB/s is 15 %
    assert cells[4:] == [
        "333 MFLOP/s",
        "1.33 GB/s",
        "0.25",
        "**memory**",
        # under half of every roof (issue 46): the share of the nearest and its spread
        "under half of every roof: 15% (13%–18%) of the nearest, memory (DRAM)",
    ]


def test_measurement_table_numbered_has_a_hash_column() -> None:
    lines = measurement_table([lookup(), lookup()], PEAKS, numbered=True).splitlines()
    assert lines[0].startswith("| # | Kernel and sizes |")
    assert [line.split(" | ")[0] for line in lines[2:]] == ["| 1", "| 2"]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("\u2705", "succeeded"),
        (" \u274c ", " failed "),
        ("\u2705 holds", "holds"),
        ("**\u274c does not hold**", "**does not hold**"),
        ("\u2796 not visible here: no GPU", "not visible here: no GPU"),
        ("plain text, 4× faster", "plain text, 4× faster"),
    ],
)
def test_plain_status_turns_marks_into_words(text: str, words: str) -> None:
    assert plain_status(text) == words


def _checkout(tmp_path: Path) -> Path:
    """A fake checkout: docs/_build exists and src/gpuconcepts holds a source file."""
    (tmp_path / "src" / "gpuconcepts").mkdir(parents=True)
    (tmp_path / "src" / "gpuconcepts" / "x.py").write_text("x = 1\n")
    (tmp_path / "docs" / "_build").mkdir(parents=True)
    return tmp_path / "docs"


def test_build_run_is_collected_once_per_build_and_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gpuconcepts.collect

    calls: list[tuple[str, bool]] = []

    def fake_collect(device: str, quick: bool, **_: object) -> Run:
        calls.append((device, quick))
        return synthetic_run(seconds=1e-3 * len(calls))

    monkeypatch.setattr(gpuconcepts.collect, "collect", fake_collect)
    docs = _checkout(tmp_path)
    first = build_run(docs)
    assert build_run(docs) == first  # read back from the build folder, not collected again
    assert calls == [("cpu", True)]
    (stored,) = (docs / "_build" / ".run").glob("*.json")
    assert stored.name.startswith(book.package_hash(tmp_path))
    (tmp_path / "src" / "gpuconcepts" / "x.py").write_text("x = 2\n")  # the package changed
    assert build_run(docs).measurements[0].seconds == pytest.approx(2e-3)
    assert len(calls) == 2


def test_build_run_reads_the_stored_run_without_resolving_the_device(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gpuconcepts.collect
    import gpuconcepts.measure

    made = synthetic_run()
    monkeypatch.setattr(gpuconcepts.collect, "collect", lambda *_, **__: made)
    resolved: list[str] = []
    real = gpuconcepts.measure.resolve_device
    monkeypatch.setattr(
        gpuconcepts.measure, "resolve_device", lambda spec: resolved.append(spec) or real(spec)
    )
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    docs = _checkout(tmp_path)
    assert build_run(docs) == made
    assert build_run(docs) == made
    assert resolved == ["auto"]  # the second page found the run from the note, without torch
    (note,) = (docs / "_build" / ".run").glob("*.device")
    (stored,) = (docs / "_build" / ".run").glob("*.json")
    assert note.read_text(encoding="utf-8") == stored.name
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")  # another GPU set: the device is asked again
    assert build_run(docs) == made
    assert resolved == ["auto", "auto"]
    stored.unlink()  # a note naming a run that is gone is not trusted
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert build_run(docs) == made
    assert resolved == ["auto", "auto", "auto"]


def test_build_run_outside_a_book_build_just_collects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gpuconcepts.collect

    made = synthetic_run()
    monkeypatch.setattr(gpuconcepts.collect, "collect", lambda *_, **__: made)
    assert build_run(tmp_path) is made
    assert not (tmp_path / "_build").exists()


def test_chapter_reads_its_workloads_from_the_profile(run: Run) -> None:
    assert [m.workload for m in chapter(run, "dlrm")] == [
        "dlrm-random", "dlrm-sequential", "dlrm-hot", "dlrm-dense"
    ]  # fmt: skip
    assert [m.size("B") for m in chapter(run, "mlp")] == [1, 2, 4]
    prefill_and_decode = chapter(run, "transformer")  # the encoder's sweep, causal, decode
    assert [m.size("S") for m in prefill_and_decode] == [4, 8, 16, 8, 6]
    assert [m.workload for m in prefill_and_decode[-2:]] == [
        "transformer-prefill-causal", "transformer-decode"
    ]  # fmt: skip


def test_a_recorded_run_is_rendered_with_its_provenance(tmp_path: Path) -> None:
    docs = _checkout(tmp_path)
    gpu = synthetic_run("cuda (NVIDIA H200)", seconds=1e-5)
    gpu = dataclasses.replace(
        gpu,
        provenance=dataclasses.replace(gpu.provenance, cuda_version="13.0", git_commit="abc123"),
    )
    gpu.save(docs / "runs" / "h200-bfloat16.json")
    text = recorded_section("cnn", docs)
    head, table = text.split("\n\n", 1)
    assert head == (
        "**Recorded** on cuda (NVIDIA H200) with torch 2.13.0 / CUDA 13.0 on 2026-01-01, "
        "quick sizes (commit abc123):"
    )
    assert table.splitlines()[2].startswith(
        '| `cnn-conv`<br><small data-run="cuda (NVIDIA H200), 2026-01-01 00:00 UTC, abc123, '
        'quick">B=1, H=6'
    )
    assert "10\u00a0µs" in table
    assert recorded_section("cnn", tmp_path) == (
        "No runs from other machines are recorded in `docs/runs/` yet."
    )


def test_gpu_latency_floors_come_only_from_gpu_runs_that_measured_one() -> None:
    cpu = synthetic_run()
    cpu = dataclasses.replace(cpu, peaks=dataclasses.replace(cpu.peaks, latency_seconds=4e-6))
    gpu = synthetic_run("cuda (NVIDIA H200)")
    no_floor = dataclasses.replace(gpu, peaks=dataclasses.replace(gpu.peaks, device="cuda"))
    gpu = dataclasses.replace(no_floor, peaks=dataclasses.replace(
        no_floor.peaks, latency_seconds=6.5e-6))  # fmt: skip
    assert book.gpu_latency_floors([cpu, no_floor]) == []  # the page then says: still to record
    tf32 = dataclasses.replace(gpu, peaks=dataclasses.replace(gpu.peaks, dtype="tf32"))
    assert book.gpu_latency_floors([cpu, gpu, no_floor, tf32]) == [
        (f"cuda (NVIDIA H200) in its {gpu.peaks.dtype} run", 6.5e-6),
        ("cuda (NVIDIA H200) in its tf32 run", 6.5e-6),  # two runs of one GPU, told apart
    ]


def test_claims_beside_rejudges_each_run_that_holds_the_part() -> None:
    from gpuconcepts.book import claims_beside

    here, old, gpu = synthetic_run(), synthetic_run("old", parts=False), synthetic_run("gpu")
    slow = dataclasses.replace(
        gpu.wholemodel.backward,  # type: ignore[union-attr]
        step_seconds=(9e-3, 9e-3, 9e-3),  # the backward pass 8x the forward: outside the region
    )
    gpu = dataclasses.replace(gpu, wholemodel=dataclasses.replace(gpu.wholemodel, backward=slow))
    table = claims_beside([here, old, gpu], ["This machine", "old", "gpu"], "Whole model")
    lines = table.splitlines()
    assert lines[0] == "| Claim | This machine | gpu |"  # the run without the part is left out
    assert len(lines) == 2 + 5
    assert lines[2].startswith("| Training costs three forward passes")
    assert lines[2].endswith("| holds | fails |")  # judged again from the stored results
    alone = claims_beside([here, old], ["This machine", "old"], "Beyond one device")
    assert alone.endswith("No run recorded in `docs/runs/` holds these results yet.")
    # issue 44: when no run holds the part, a sentence stands for the table
    assert claims_beside([old], ["old"], "Whole model") == (
        "No run here, this machine's or a recorded one, measured this part."
    )


def test_recorded_runs_are_judged_by_this_version_not_the_one_that_recorded_them() -> None:
    from gpuconcepts.run import load

    docs = Path(__file__).resolve().parents[1] / "docs"
    shown = {run.label: run for run in book.recorded_runs(docs)}
    epyc = load(docs / "runs" / "cpu-amd-epyc-float32.json")
    stored = {r.key: r for r in epyc.claims}
    now = {r.key: r for r in shown[epyc.label].claims}
    assert set(now) == set(stored)
    # the pipeline's messages were priced after the run was saved: its bubble is now
    # predicted at 0.22, not GPipe's 0.11 alone, and holds
    assert stored["pipeline-bubble"].test.predicted == pytest.approx(1 / 9)
    assert now["pipeline-bubble"].test.predicted == pytest.approx(0.221, abs=1e-3)
    assert now["pipeline-bubble"].verdict == "holds"
    assert [r.verdict for r in shown[epyc.label].claims] == [r.verdict for r in rejudged(epyc)]


def test_a_run_without_claim_sizes_or_parts_keeps_its_claims() -> None:
    bare = synthetic_run("old", parts=False)
    sizes = {k: v for k, v in bare.provenance.sizes.items() if k != "claims"}
    bare = dataclasses.replace(bare, provenance=dataclasses.replace(bare.provenance, sizes=sizes))
    assert judged_now(bare) is bare


def test_the_api_page_prints_no_value_full_of_latex() -> None:
    """autodoc prints a documented constant's repr: one holding LaTeX (the workloads'
    formulas, the models' equations) would put raw TeX in the API reference, so each such
    constant hides its value (``:meta hide-value:``) and the page shows it another way."""
    from test_api_page import api_pages, on_pages, rendered_values

    modules = sorted(set(on_pages(api_pages())))
    leaks = [
        where for name in modules for where, value in rendered_values(name) if "\\" in repr(value)
    ]
    assert "gpuconcepts.workloads" in modules
    assert leaks == []


DOCS = Path(__file__).resolve().parents[1] / "docs"
TIMING_CALLS = re.compile(r"(?<![.\w])(?:analyze|collect|measure|measure_peaks|compare|profile)\(")
"""Functions that time something on the machine building the book. A method such as
``profile_of(run)`` only reads a run; the run itself is collected by ``build_run``, which the
first measuring page calls."""


def _code_cells(page: Path) -> list[str]:
    return re.findall(r"```\{code-cell\}[^\n]*\n(.*?)```", page.read_text("utf-8"), re.DOTALL)


def _measuring_pages() -> tuple[str, ...]:
    tree = ast.parse((DOCS / "conf.py").read_text("utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "MEASURING_PAGES" for t in node.targets
        ):
            value = ast.literal_eval(node.value)
            assert isinstance(value, tuple)
            return value
    raise AssertionError("docs/conf.py defines no MEASURING_PAGES")


def test_every_page_that_times_something_is_read_first_and_alone() -> None:
    """`nox -s docs` reads pages two at a time; a page whose cells time anything must be in
    conf.py's MEASURING_PAGES, which are read one at a time before the others, and the first
    of them must collect the build's run, so no page collects it beside another."""
    timing = {
        page.stem
        for page in DOCS.glob("*.md")
        if any(TIMING_CALLS.search(cell) for cell in _code_cells(page))
    }
    measuring = _measuring_pages()
    assert "analyze" in timing  # the search finds the page known to time three models
    assert timing <= set(measuring)
    assert any("build_run()" in cell for cell in _code_cells(DOCS / f"{measuring[0]}.md"))
