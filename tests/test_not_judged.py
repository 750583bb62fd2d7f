"""What is not judged is said, never dropped (issue 45, item 7): a claim whose verdict reads a
GEMM sweep of another precision than its kernels, and a ledger 2 kernel whose bound reads a
peak of another precision or that was timed on fewer threads than its ceilings, appear with
their reason in ``gpuconcepts verify``'s text and in
the claims appendix (``render.pages.claims.ledgers``)."""

from __future__ import annotations

import dataclasses
from functools import cache

from book_pages import DOCS

from gpuconcepts.book import recorded_runs
from gpuconcepts.claims.accuracy import AccuracyRow, accuracy, summary
from gpuconcepts.cli import main
from gpuconcepts.measure import Measurement
from gpuconcepts.render.ledgers import format_accuracy, format_apart
from gpuconcepts.render.pages.claims import ledgers, not_judged_rows
from gpuconcepts.results.claim import example
from gpuconcepts.results.measured import SECOND_LOOK
from gpuconcepts.roofline import Peaks
from gpuconcepts.run import Provenance, Run

TF32 = DOCS / "runs" / "nvidia-h200-tf32.json"


@cache
def _runs() -> tuple[Run, ...]:
    return tuple(recorded_runs(DOCS))


def _tf32() -> Run:
    return next(r for r in _runs() if r.peaks.dtype == "tf32")


def test_verify_text_gives_the_reason_of_a_claim_not_judged(capsys) -> None:
    main(["verify", "--run", str(TF32)])
    text = capsys.readouterr().out
    head = text.index("  mlp-crossover: not visible")
    after = text[head : head + 400]
    assert "why: not judged: its GEMM sweep ran in float32" in after
    assert all(len(line) <= 100 for line in text.splitlines())


def test_a_claim_apart_shows_its_reason_only_when_not_visible() -> None:
    hidden = dataclasses.replace(example(), visible=False, reason="not judged: a planted reason")
    assert "why: not judged: a planted reason" in format_apart("Facts", [hidden])
    assert "why:" not in format_apart("Facts", [example()])


def test_ledger_2_text_marks_a_kernel_not_judged_with_its_reason() -> None:
    scored = AccuracyRow("mlp at B=4", 1e-6, 1e-6, 1.0, (0.9, 1.1), "compute", "v", "out")
    left = dataclasses.replace(scored, kernel="rnn at B=1", not_judged="not judged: planted")
    text = format_accuracy([scored, left])
    assert "1 kernel not judged, left out of these numbers" in text
    assert "  rnn at B=1:\n" in text
    assert text.rstrip().endswith("not judged: planted")
    assert "not judged" not in format_accuracy([scored])


def test_the_claims_appendix_lists_every_claim_and_kernel_not_judged() -> None:
    build = next(r for r in _runs() if r.peaks.device == "cpu")
    recorded = [r for r in _runs() if r is not build]
    glue = ledgers(build, recorded)
    table = glue["not_judged_table"]
    # the tf32 run's crossover reads its FP32 sweep: listed with the reason the judge gave
    crossover = next(r for r in _tf32().claims if r.key == "mlp-crossover")
    assert crossover.reason.startswith("not judged")
    # named by its statement, linked to its place in the book, never by its registry key
    said = f"{{ref}}`{crossover.claim} <claim-mlp-crossover>`"
    assert f"| {said} | {crossover.reason.removeprefix('not judged: ')} |" in table
    assert "`mlp-crossover`" not in table
    # every claim and every ledger 2 row left out, of every run, is a row of the table
    runs = [build, *recorded]
    expected = sum(bool(row.not_judged) for run in runs for row in accuracy(run))
    expected += sum(
        not r.visible and r.reason.startswith("not judged") for run in runs for r in run.claims
    )
    # and each prediction read from the tf32 run's FP32 sweep, beside a verdict that stands
    predictions = ("mlp-batch-trend", "rnn-loop-vs-gemm", "prefill-vs-decode")
    for key in predictions:
        said = next(r.claim for r in _tf32().claims if r.key == key)
        assert f"| {{ref}}`{said} <claim-{key}>` (its prediction alone: the verdict stands) |" in (
            table
        )
    expected += len(predictions)
    assert expected >= 5
    assert glue["n_not_judged"] == str(expected)
    assert len(table.splitlines()) == 2 + expected


def test_a_run_with_nothing_left_out_says_so() -> None:
    cpu = next(r for r in _runs() if r.peaks.device == "cpu")
    assert not_judged_rows("cpu", cpu) == []
    glue = ledgers(cpu, [])
    assert glue["not_judged_table"] == "Every claim and every kernel of every run is judged."
    assert glue["n_not_judged"] == "0"


def _threads_run(threads: tuple[int | None, ...], ceilings: int | None = 2) -> Run:
    """MLP layers timed at 3x their DRAM roof (1 µs), each on ``threads`` CPU threads, under
    ceilings measured on ``ceilings`` threads."""
    ms = tuple(
        Measurement("mlp", "cpu", {"B": 4 + i, "d_in": 8, "d_out": 16, "s": 4,
                    "dtype": "float32"}, (3e-6,) * 3, 1024, 896, threads=t)
        for i, t in enumerate(threads)
    )  # fmt: skip
    peaks = Peaks("cpu", 1e12, 896e6, "float32", threads=ceilings)
    return Run(Provenance.example(), peaks, ms, {}, ())


def test_a_kernel_timed_on_fewer_threads_than_its_ceilings_is_not_judged() -> None:
    fewer, same = accuracy(_threads_run((1, 2)))
    assert fewer.not_judged == (
        "not judged: it ran on 1 thread while its ceilings were measured on 2"
    )
    assert same.not_judged == ""
    # left out of every number: one kernel judged, at 3x (a miss), not two
    found = summary((fewer, same))
    assert (found.kernels, found.share_within) == (1, 0.0)
    # and listed with its reason where the appendix lists what is not judged
    rows = not_judged_rows("demo", _threads_run((1, 2)))
    assert rows == [["demo", "the model's time for " + fewer.kernel,
                     "it ran on 1 thread while its ceilings were measured on 2"]]  # fmt: skip


def test_a_kernel_is_judged_when_either_thread_count_is_unknown() -> None:
    assert [r.not_judged for r in accuracy(_threads_run((1, None), ceilings=None))] == ["", ""]
    assert [r.not_judged for r in accuracy(_threads_run((None, 4)))] == ["", ""]


def test_a_second_look_at_an_anomaly_is_never_scored_in_ledger_2() -> None:
    # only anomalies are timed twice: scoring the second look would count those misses twice
    first, again = _threads_run((2, 2)).measurements
    looked = dataclasses.replace(again, group=first.group + SECOND_LOOK)
    run = Run(Provenance.example(), _threads_run((2,)).peaks, (first, looked), {}, ())
    assert [row.kernel for row in accuracy(run)] == [accuracy(_threads_run((2,)))[0].kernel]
