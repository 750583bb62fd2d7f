"""Issue 46: the errors an editor found in the built book, each checked on the glue the pages
show for the runs recorded in ``docs/runs/`` (every check here failed on the text of a8acdec)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from gpuconcepts import formulas, units
from gpuconcepts.analysis.report import observed_bound
from gpuconcepts.book import recorded_runs, recorded_section
from gpuconcepts.hardware import GPUS, table_rows
from gpuconcepts.measure import Measurement
from gpuconcepts.render.pages import dlrm, gpu, model
from gpuconcepts.render.text.runs import NO_FLOOR_SPREAD
from gpuconcepts.roofline import observe
from gpuconcepts.run import Run

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


@pytest.fixture(scope="module")
def runs() -> list[Run]:
    return recorded_runs(DOCS)


def gpu_run(runs: list[Run], dtype: str) -> Run:
    return next(r for r in runs if r.peaks.device == "cuda" and r.peaks.dtype == dtype)


def rows_of(table: str, workload: str) -> list[str]:
    return [line for line in table.splitlines() if f"`{workload}`" in line]


# -- one parameter count on the model page ---------------------------------------------------
def test_time_per_output_token_uses_the_flops_tables_parameter_count() -> None:
    answers, flops = model.exercises(), model.flops()
    assert answers["ex_tpot_params"] == flops["mult_params"]
    l2 = model.PRESETS["llama-2-7b-like"]
    h200 = GPUS["H200"]
    multiplied = int(model.account(l2).value("forward_flops")) // 2
    expected = formulas.tpot_seconds_lower_bound(
        n_params=multiplied, B=int(answers["ex_tpot_batch"]), S=l2.seq, n_layers=l2.layers,
        n_kv=l2.n_kv, d_head=l2.d_head, s=2, P=h200.flops_per_s["bf16"], beta=h200.bytes_per_s,
    )  # fmt: skip
    assert answers["ex_tpot"] == units.si(expected, "s")
    page = (DOCS / "model.md").read_text(encoding="utf-8")
    assert "{glue:md}`ex_tpot_params`" in page


# -- the H200's hot rows come from L2 ----------------------------------------------------------
@pytest.mark.parametrize("dtype", ["bfloat16", "tf32"])
def test_h200_hot_rows_are_labelled_by_the_cache_their_working_set_fits(
    runs: list[Run], dtype: str
) -> None:
    run = gpu_run(runs, dtype)
    table = recorded_section("dlrm", DOCS)
    hot = [row for row in rows_of(table, "dlrm-hot") if "H200" in row]
    assert hot
    assert all("memory (L2" in row for row in hot), hot
    assert not any(re.search(r"memory \(HBM\) \d", row) for row in hot)
    glue = dlrm.hot_rows(run, gpu.chapter(run, "dlrm"))
    assert "L2" in str(glue["hot_served"])
    # rows read once (random ones over a 10 GB table) stay on HBM
    random = [row for row in rows_of(table, "dlrm-random") if "H200" in row]
    assert random
    assert not any("L2" in row for row in random)


# -- a kernel below the ridge is not called compute-bound ------------------------------------
def test_a_depthwise_convolution_below_the_ridge_is_not_labelled_compute(
    runs: list[Run],
) -> None:
    cpu = next(r for r in runs if r.peaks.device == "cpu")
    peaks = cpu.peaks
    moved = 512 * 2**10  # held by the run's 1 MiB L2
    flops = 2.25 * moved  # the depthwise convolution's intensity
    seconds = 20 * flops / peaks.flops_per_s  # 5 % of the compute roof
    call = Measurement("cnn-depthwise", "cpu", {}, (seconds,), flops, moved)
    assert flops / moved < peaks.ridge_point
    assert observe(call, peaks)[0] == "compute"  # the nearest roof
    assert observed_bound(call, peaks) == "memory"


def test_labels_do_not_call_a_kernel_far_below_its_roof_bound_by_it(runs: list[Run]) -> None:
    run = gpu_run(runs, "bfloat16")
    table = gpu.families_table(run)
    module = rows_of(table, "rnn-module")[0]
    assert not re.search(r"\| compute \d", module), module
    assert "under half of every roof" in module
    assert "nearest, compute" in module
    for family in gpu.FAMILIES:
        passage = gpu.chapter_passage(runs, family)
        assert not re.search(r"landed on the \w+ roof \((\d|[1-4]\d)(\.\d)?% of it\)", passage)


# -- the LATEX_NAMES dict is not shown raw -----------------------------------------------------
@pytest.mark.parametrize("name", ["LATEX_NAMES", "SYMBOLS"])
def test_the_api_page_hides_the_values_that_hold_raw_tex(name: str) -> None:
    source = (ROOT / "src" / "gpuconcepts" / "symbols.py").read_text(encoding="utf-8")
    body = ast.parse(source).body
    at = next(
        i
        for i, node in enumerate(body)
        if isinstance(node, ast.AnnAssign)
        and isinstance(node.target, ast.Name)
        and node.target.id == name
    )
    doc = body[at + 1]
    assert isinstance(doc, ast.Expr)
    assert isinstance(doc.value, ast.Constant)
    assert ":meta hide-value:" in str(doc.value.value)


# -- each kernel's dtype is the one it ran in ---------------------------------------------------
def test_tf32_lookups_are_labelled_float32(runs: list[Run]) -> None:
    table = recorded_section("dlrm", DOCS)
    tf32_rows = [row for row in table.splitlines() if "tf32" in row or "f6ec6c8" in row]
    lookups = [
        row
        for name in ("dlrm-random", "dlrm-sequential", "dlrm-hot")
        for row in rows_of(table, name)
        if "H200" in row
    ]
    assert lookups
    assert tf32_rows
    assert not any(re.search(r"d=128, tf32<", row) for row in lookups)
    run = gpu_run(runs, "tf32")
    dense = rows_of(gpu.families_table(run), "dlrm-dense")[0]
    assert "tf32" in dense  # its product did run in TF32


def test_the_bf16_runs_float16_rnn_is_explained(runs: list[Run]) -> None:
    passage = gpu.chapter_passage(runs, "rnn")
    assert "`nn.RNN` ran in float16, not bfloat16" in passage
    assert "cuDNN" in passage


# -- one label for the L4's ridge point ----------------------------------------------------------
def test_the_l4_ridge_point_has_one_label() -> None:
    high = str(dlrm.lookups()["ridge_high"])
    l4_cell = next(row for row in table_rows() if row[0] == "L4")[-1]
    number, dtype = re.fullmatch(r"(\S+) \((\w+)\)", l4_cell).groups()  # type: ignore[union-attr]
    assert high == f"{number} (L4, {dtype})"


# -- the post's questions are linked where a chapter first names them ----------------------------
def prose_lines(text: str) -> list[str]:
    """The lines of a page a reader follows a link from: no code cell, heading or option."""
    kept, in_code = [], False
    for line in text.splitlines():
        if line.startswith("```{code-cell}"):
            in_code = True
            continue
        if in_code:
            in_code = line.strip() != "```"
            continue
        if line.startswith(("#", ":", "%")) or re.match(r"^\(.*\)=$", line):
            continue
        kept.append(line)
    return kept


CHAPTERS = sorted(
    p
    for p in DOCS.glob("*.md")
    if not p.name.startswith("qa-") and p.stem not in {"quiz", "revision", "glossary"}
)


@pytest.mark.parametrize("page", CHAPTERS, ids=lambda p: p.stem)
def test_a_question_is_linked_where_a_chapter_first_names_it(page: Path) -> None:
    seen: set[str] = set()
    for line in prose_lines(page.read_text(encoding="utf-8")):
        for found in re.finditer(r"(\{ref\}`Q(1\d) <q1\d>`)|\bQ(1\d)\b", line):
            number = found.group(2) or found.group(3)
            if number in seen:
                continue
            seen.add(number)
            assert found.group(1), f"{page.name}: Q{number} first named unlinked: {line}"


def test_the_questions_have_labels() -> None:
    page = (DOCS / "qa-math.md").read_text(encoding="utf-8")
    for number in range(10, 18):
        assert f"(q{number})=\n## Q{number}." in page


# -- the DLRM exercise says it switched to BF16 ---------------------------------------------------
def test_the_dlrm_exercise_names_its_bf16_bytes() -> None:
    answers = dlrm.exercises()
    assert answers["ex_lookup_bytes"] == "2"
    assert answers["ex_lookup_fp32_bytes"] == "4"
    page = (DOCS / "dlrm.md").read_text(encoding="utf-8")
    solution = page.split(":label: dlrm-ex-never", 1)[1].split(":::{dropdown} Solution", 1)[1]
    solution = solution.split("\n:::", 1)[0]
    assert "BF16" in solution
    assert "{glue:md}`ex_lookup_bytes`" in solution
    assert "{glue:md}`ex_lookup_fp32_I`" in solution


# -- the note on the machine's load is on one page --------------------------------------------
def test_the_machine_load_note_is_glued_on_the_method_page_only(runs: list[Run]) -> None:
    from gpuconcepts.render.pages import method

    pages = {p.stem: p.read_text(encoding="utf-8") for p in DOCS.glob("*.md")}
    gluing = sorted(name for name, text in pages.items() if "{glue:md}`noise`" in text)
    assert gluing == ["method"]
    assert "(method-noise)=" in pages["method"]
    for name in ("dlrm", "mlp", "cnn", "rnn", "transformer", "model", "claims"):
        assert "<method-noise>`" in pages[name], name
    sources = ROOT / "src" / "gpuconcepts" / "render" / "pages"
    saying = sorted(p.stem for p in sources.glob("*.py") if "provenance.noise" in p.read_text())
    assert saying == ["method"]
    run = gpu_run(runs, "bfloat16")
    shown = dlrm.measured(run, gpu.chapter(run, "dlrm"))
    assert not any("machine was" in str(value) for value in shown.values())
    noted = method.noise([run, *runs])
    assert str(noted["noise"]).startswith("This run's machine was")
    assert str(noted["noise_recorded"]).count("machine was") == len(runs)


# -- the reading path ------------------------------------------------------------------------------
def toctrees(page: str = "index") -> dict[str, list[str]]:
    """Each toctree of ``page`` by its caption: its pages in order."""
    text = (DOCS / f"{page}.md").read_text(encoding="utf-8")
    found = {}
    for block in re.findall(r"```\{toctree\}\n(.*?)```", text, re.DOTALL):
        caption = re.search(r":caption: (.*)", block)
        pages = [line for line in block.splitlines() if line and not line.startswith(":")]
        found[caption.group(1) if caption else ""] = pages
    return found


def test_the_table_of_contents_follows_the_reading_path() -> None:
    trees = toctrees()
    first = next(iter(trees.values()))
    assert first == [
        "gpu-basics", "questions", "bound", "dlrm", "mlp", "cnn", "rnn", "transformer",
        "comparison", "gpu",
    ]  # fmt: skip
    appendices = trees["Appendices"]
    assert {"claims", "changes", "method", "execution", "devices", "roofline"} <= set(appendices)
    listed = [page for pages in trees.values() for page in pages]
    # a page listed there may hold a toctree of its own (the API reference, a page per layer)
    listed += [sub for page in list(listed) for pages in toctrees(page).values() for sub in pages]
    assert len(listed) == len(set(listed))
    assert sorted(listed) == sorted(p.stem for p in DOCS.glob("*.md") if p.stem != "index")


def test_what_a_gpu_is_takes_its_sizes_from_the_datasheet_table(runs: list[Run]) -> None:
    from gpuconcepts.render.pages.gpu_basics import anatomy

    glue = anatomy(runs)
    h200 = GPUS["H200"]
    assert glue["gpu"] == "H200"
    assert glue["sms"] == units.plain_number(h200.sms or 0)
    assert glue["l2"] == units.binary_bytes(h200.l2_bytes)
    assert glue["hbm_bw"] == units.si(h200.bytes_per_s, "B/s")
    run = gpu_run(runs, "bfloat16")
    assert glue["launch"] == units.si(run.peaks.latency_seconds or 0, "s")
    figure = glue["anatomy"]
    texts = [t.get_text() for t in figure.axes[0].texts]  # type: ignore[union-attr]
    assert f"{glue['sms']} SMs in all" in texts
    page = (DOCS / "gpu-basics.md").read_text(encoding="utf-8")
    assert "```{glue:figure} anatomy\n:alt: " in page


def test_three_regimes_are_drawn_where_the_model_is_introduced(runs: list[Run]) -> None:
    from gpuconcepts.render.pages.regimes import regimes

    glue = regimes(runs)
    run = gpu_run(runs, "bfloat16")
    assert glue["regimes_ridge"] == units.significant(run.peaks.ridge_point)
    # a recorded run kept no repetitions of its floors: bare, and said why
    assert glue["regimes_launch"] == (
        f"{units.si(run.peaks.latency_seconds or 0, 's')} ({NO_FLOOR_SPREAD})"
    )
    texts = {t.get_text() for t in glue["regimes_figure"].axes[0].texts}  # type: ignore[union-attr]
    assert {"compute-bound", "memory-bound", "overhead-bound"} <= texts
    for name in ("questions", "bound"):
        page = (DOCS / f"{name}.md").read_text(encoding="utf-8")
        assert "```{glue:figure} regimes_figure\n:alt: " in page, name
        assert "{glue:math} regimes_eq" in page, name
        assert "overhead-bound" in page, name
        assert "{term}`overhead`" in page, name
