"""Beyond one device: the formulas' laws, the launcher's checks and cleanup, a real 2-process
gloo run, and every claim fed data that violates it."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import socket
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
from book_pages import DOCS
from hypothesis import given
from hypothesis import strategies as st

from gpuconcepts import formulas as f
from gpuconcepts.claims import collectives as claims
from gpuconcepts.claims.distributed import bubble_claim, bubble_sweep_claim, judge_distributed
from gpuconcepts.cli import main
from gpuconcepts.distributed import launch, quick_sizes
from gpuconcepts.distributed.report import count_growth, measure
from gpuconcepts.distributed.traffic import parse_loopback
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.records import from_record
from gpuconcepts.render.text.distributed import (
    exchange_gap,
    fit_intervals,
    fit_words,
    format_report,
    report_dict,
)
from gpuconcepts.results.distributed import AlphaBeta, Collective, fit_alpha_beta
from gpuconcepts.sizing import RunSizes
from gpuconcepts.units import si

counts = st.integers(min_value=1, max_value=10**9)
worlds = st.integers(min_value=1, max_value=4096)


# -- formulas ---------------------------------------------------------------------------------
def test_done_when_value() -> None:
    assert f.sharded_table_memory(N=100_000_000, d=128, s=4, W=8) == 6_400_000_000


def test_calc_prints_the_sharded_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calc", "sharded_table_memory", "N=100000000", "d=128", "s=4", "W=8"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "6,400,000,000 bytes (6.4 GB, 5.96 GiB)"


def test_importing_the_package_loads_no_torch() -> None:
    code = (
        "import sys, gpuconcepts.distributed, gpuconcepts.results.distributed;"
        "print(','.join(m for m in ('torch', 'matplotlib') if m in sys.modules))"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == ""


@given(n=counts, s=st.sampled_from([0.5, 1, 2, 4]), w=worlds)
def test_allreduce_bytes_rise_with_w_and_stay_below_2ns(n: int, s: float, w: int) -> None:
    here, next_ = (
        f.ring_allreduce_bytes(n_params=n, s=s, W=w),
        f.ring_allreduce_bytes(n_params=n, s=s, W=w + 1),
    )
    assert here < next_ < 2 * n * s


@given(b=counts, t=st.integers(1, 64), d=st.integers(1, 4096), w=st.integers(2, 64))
def test_rowwise_is_w_times_tablewise_and_columnwise_equals_it(
    b: int, t: int, d: int, w: int
) -> None:
    sizes = {"B": b, "n_tables": t, "d": d, "s": 4, "W": w}
    table = f.tablewise_alltoall_bytes.exact(**sizes)
    assert f.rowwise_alltoall_bytes.exact(**sizes) == w * table
    assert f.columnwise_alltoall_bytes.exact(**sizes) == table


@given(n=counts, d=st.integers(1, 4096), w=worlds)
def test_sharded_memory_times_w_is_the_whole_table(n: int, d: int, w: int) -> None:
    assert f.sharded_table_memory(N=n, d=d, s=4, W=w) * w == pytest.approx(
        f.embedding_memory(N=n, d=d, s=4)
    )


@given(p=st.integers(1, 64), m=st.integers(1, 512))
def test_bubble_shrinks_with_micro_batches(p: int, m: int) -> None:
    bubble = f.pipeline_bubble_fraction(p=p, m=m)
    assert 0 <= bubble < 1
    assert f.pipeline_bubble_fraction(p=p, m=m + 1) <= bubble


def test_tensor_parallel_is_two_ring_allreduces_of_the_activations() -> None:
    b, s_, d = 8, 2048, 4096
    ring = f.ring_allreduce_bytes(n_params=b * s_ * d, s=2, W=8)
    assert f.tensor_parallel_mlp_bytes(B=b, S=s_, d=d, s=2, W=8) == 2 * ring


# -- launcher: input checks ---------------------------------------------------------------------
def test_world_size_rules() -> None:
    with pytest.raises(GpuConceptsError, match="at least 2; got 1"):
        launch.check_world_size(1, "gloo")
    with pytest.raises(GpuConceptsError, match="at most 4 with gloo"):
        launch.check_world_size(5, "gloo", limit=4)
    with pytest.raises(GpuConceptsError, match=r"nccl needs at least 2 GPUs.*has 0"):
        launch.check_world_size(2, "nccl", limit=0)
    assert launch.check_world_size(4, "gloo", limit=4) == 4


def test_port_in_use_is_refused() -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        with pytest.raises(GpuConceptsError, match=f"--port {port} is already in use"):
            launch.check_port(port)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--world-size", "1"], "must be at least 2; got 1"),
        (["--world-size", "999"], "must be at most"),
        (["--world-size", "2", "--backend", "nccl"], "nccl needs at least 2 GPUs"),
    ],
)
def test_cli_bad_input_is_one_line_exit_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["distributed", *argv, "--quick"]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1
    assert "Traceback" not in err


def test_cli_port_in_use_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        start = time.monotonic()
        assert main(["distributed", "--world-size", "2", "--port", str(port)]) == 2
        assert time.monotonic() - start < 10  # refused before any process starts
    assert "already in use" in capsys.readouterr().err


# -- launcher: failure and cleanup ------------------------------------------------------------
def _write_pid(folder: str, rank: int) -> None:
    Path(folder, f"{rank}.pid").write_text(str(os.getpid()), encoding="ascii")


def raise_on_rank_1(rank: int, _world: int, folder: str) -> None:
    """A worker whose process 1 raises while process 0 waits for it in a collective."""
    import torch.distributed as dist

    _write_pid(folder, rank)
    if rank == 1:
        raise RuntimeError("worker 1 broke on purpose")
    dist.barrier()


def hang_on_rank_1(rank: int, _world: int, folder: str) -> None:
    """A worker whose process 1 never returns."""
    _write_pid(folder, rank)
    if rank == 1:
        time.sleep(3600)


def _all_gone(folder: Path) -> bool:
    for pid_file in folder.glob("*.pid"):
        try:
            os.kill(int(pid_file.read_text(encoding="ascii")), 0)
        except ProcessLookupError:
            continue
        return False
    return True


def test_a_raising_worker_stops_them_all(tmp_path: Path) -> None:
    with pytest.raises(GpuConceptsError, match="process 1 failed: RuntimeError: worker 1 broke"):
        launch.launch(raise_on_rank_1, 2, (str(tmp_path),), timeout_s=120)
    assert len(list(tmp_path.glob("*.pid"))) == 2
    assert _all_gone(tmp_path)


def test_a_hanging_worker_is_stopped_at_the_timeout(tmp_path: Path) -> None:
    with pytest.raises(GpuConceptsError, match="did not finish within 20 s; all were stopped"):
        launch.launch(hang_on_rank_1, 2, (str(tmp_path),), timeout_s=20)
    assert _all_gone(tmp_path)


# -- a real run ------------------------------------------------------------------------------
SMALL = replace(
    quick_sizes(),
    repeats=3,
    sweep=(2**12, 2**16, 2**20),
    pp_width=256,
    pp_batch=256,
    pp_sweep=(2, 4),
)


@pytest.fixture(scope="module")
def report():  # type: ignore[no-untyped-def]
    run_sizes = RunSizes.resolve("cpu", quick=True, free_bytes=2**36)
    return measure(2, replace(run_sizes, distributed=SMALL))


def test_two_process_gloo_run_matches_the_formulas(report) -> None:  # type: ignore[no-untyped-def]
    names = {c.name for c in report.main}
    assert {"all-reduce", "table-wise lookup", "row-wise lookup", "column-wise lookup"} <= names
    for c in report.main:
        # The loopback interface saw the formula's bytes, plus a few headers.
        assert c.bytes_ratio is not None, c.name
        assert 0.98 <= c.bytes_ratio <= 1.15, c.name
        # And the sharded computation gave one device's answer.
        assert c.max_error < 1e-3, c.name
        assert all(t > 0 for t in c.seconds)
        # its repetitions ran in the presets' independent blocks, one warm-up before each
        assert c.blocks == SMALL.timed_blocks == 3, c.name
    by_key = {r.key: r for r in judge_distributed(report)}
    assert by_key["pipeline-bubble"].detail.endswith("timed in 3 blocks of 1 repetition")
    # a timed direction: on a loaded machine its interval may straddle an edge (undecided),
    # but two processes on one host never show row-wise exchanging less than table-wise
    assert by_key["rowwise-more-than-tablewise"].verdict in ("holds", "undecided")
    assert by_key["traffic-all-reduce"].verdict == "holds"  # counted bytes: exact
    # the lookups ran in 3 rounds per repetition, each round every scheme once in some order,
    # with pack, exchange and unpack timed inside each whole lookup
    lookups = report.of_kind("sharded embedding")
    rounds = 3 * SMALL.repeats
    assert sorted(zip(*(c.order for c in lookups), strict=True)) != [(0, 1, 2)] * rounds
    for positions in zip(*(c.order for c in lookups), strict=True):
        assert sorted(positions) == [0, 1, 2]
    for c in lookups:
        assert [len(c.phases[p]) for p in ("pack", "exchange", "unpack")] == [rounds] * 3
        assert all(e < whole for e, whole in zip(c.exchange_seconds, c.seconds, strict=True)), (
            c.name
        )
    assert "tablewise-columnwise-same-exchange" in by_key
    assert by_key["allreduce-grows-with-w"].verdict == "not visible"  # W = 2: ratio is 1
    # the pipeline ran at m = 4 and again at m = 2 with micro-batches of the same size
    pipelines = sorted(
        (*report.of_kind("pipeline"), *report.of_kind("pipeline sweep")),
        key=lambda c: c.schedule["m"],
    )
    assert [(c.kind, c.schedule["m"], c.inputs["B"]) for c in pipelines] == [
        ("pipeline sweep", 2, 128), ("pipeline", 4, 256)
    ]  # fmt: skip
    assert "pipeline-bubble-shrinks" in by_key


def test_text_report_has_the_table_the_fit_and_every_claim(report) -> None:  # type: ignore[no-untyped-def]
    text = format_report(report)
    assert text.startswith("gpuconcepts distributed: gloo over loopback TCP, 2 processes")
    for c in report.main:
        assert c.name in text
    assert ("α-β fit over 3 all-reduce sizes" in text) or ("no α-β fit" in text)
    assert text.count("Beyond one device:") == len(judge_distributed(report))


def test_the_fit_gives_its_latency_and_bandwidth_with_their_bootstrap_intervals() -> None:
    """The editor's read: the α-β fit's α and bandwidth came without an interval. Each now has
    the bootstrap interval of the sweep's repetitions, the fit made again from each resample."""
    from synthetic import synthetic_distributed

    report = synthetic_distributed()
    assert report.fit is not None
    found = fit_intervals(report)
    assert found is not None
    (alpha, *alpha_ends), (bandwidth, *bandwidth_ends) = found
    assert (alpha, bandwidth) == (report.fit.alpha_s, report.fit.bytes_per_s)
    # the synthetic repetitions spread -2% to +5% around the α-β line: the refits move both
    assert alpha_ends[0] < alpha < alpha_ends[1]
    assert bandwidth_ends[0] < bandwidth < bandwidth_ends[1]
    words = fit_words(report)
    assert words == (
        f"α = {si(alpha, 's')} (interval [{si(alpha_ends[0], 's')}, {si(alpha_ends[1], 's')}]) "
        f"and a bandwidth of {si(bandwidth, 'B/s')} (interval [{si(bandwidth_ends[0], 'B/s')}, "
        f"{si(bandwidth_ends[1], 'B/s')}]) per process"
    )
    assert words in format_report(report)
    # equal repetitions: every resample refits the same line, a zero-width interval
    still = tuple(
        dataclasses.replace(c, seconds=(c.median_seconds,) * 3) if c.kind == "size sweep" else c
        for c in report.collectives
    )
    flat = fit_intervals(dataclasses.replace(report, collectives=still))
    assert flat is not None
    assert [ends[1] == ends[2] for ends in flat] == [True, True]
    # repetitions that overlap across sizes: a resample whose times fall with size has no fit,
    # all latency and no bound on the bandwidth, an open upper end said in words
    small, big = report.of_kind("size sweep")[:2]
    overlap = (dataclasses.replace(small, seconds=(1e-3, 1e-3, 3e-3)),
               dataclasses.replace(big, seconds=(2e-3, 2e-3, 5e-4)))  # fmt: skip
    shaky = dataclasses.replace(report, collectives=overlap)
    open_ended = fit_intervals(shaky)
    assert open_ended is not None
    assert [math.isinf(ends[2]) for ends in open_ended] == [True, True]
    assert fit_words(shaky).count("no upper bound]") == 2
    # without a fit there is nothing to give an interval; a sweep of single repetitions has
    # nothing to resample, and the words say so
    assert fit_intervals(dataclasses.replace(report, fit=None)) is None
    assert fit_words(dataclasses.replace(report, fit=None)) == ""
    once = tuple(
        dataclasses.replace(c, seconds=c.seconds[:1]) if c.kind == "size sweep" else c
        for c in report.collectives
    )
    bare = dataclasses.replace(report, collectives=once)
    assert fit_intervals(bare) is None
    assert fit_words(bare) == (
        f"α = {si(alpha, 's')} and a bandwidth of {si(bandwidth, 'B/s')} per process (the "
        "sweep kept a single repetition of a size: the fit has no interval)"
    )


def test_a_recorded_gpu_runs_fit_is_told_with_its_intervals() -> None:
    """The distributed chapter's "What the GPU showed" gives each recorded run's α and
    bandwidth with the intervals the page's own fit has, in a sentence of their own."""
    from gpuconcepts.book import recorded_runs
    from gpuconcepts.render.pages.gpu_story import SENTENCES

    runs = [r for r in recorded_runs(DOCS) if r.distributed is not None]
    assert runs, "the recorded runs hold a distributed part"
    for run in runs:
        assert run.distributed is not None
        found = fit_intervals(run.distributed)
        assert found is not None, "every recorded sweep kept its repetitions"
        (alpha, *alpha_ends), (bandwidth, *bandwidth_ends) = found
        assert alpha_ends[0] <= alpha <= alpha_ends[1] < math.inf
        said = SENTENCES["distributed"](run)
        assert said.endswith(
            f" held. Its collectives cost {si(alpha, 's')} (interval [{si(alpha_ends[0], 's')}, "
            f"{si(alpha_ends[1], 's')}]) a call plus their bytes at {si(bandwidth, 'B/s')} "
            f"(interval [{si(bandwidth_ends[0], 'B/s')}, {si(bandwidth_ends[1], 'B/s')}])"
        )


def test_json_reports_formula_loopback_and_time(report) -> None:  # type: ignore[no-untyped-def]
    record = json.loads(json.dumps(report_dict(report)))
    assert record["world_size"] == 2
    assert record["backend"] == "gloo"
    for c in record["collectives"]:
        assert c["formula_bytes"] > 0
        assert c["loopback_bytes"] > 0
        assert c["seconds"] > 0
    for claim in record["claims"]:
        assert {"alternative", "pass_region", "interval", "measured", "verdict"} <= set(claim)


def test_the_record_a_run_saves_gives_the_same_report_and_claims(report) -> None:  # type: ignore[no-untyped-def]
    from gpuconcepts.results.distributed import DistributedReport

    again = from_record(DistributedReport, json.loads(json.dumps(report.record())))
    assert again == report
    assert judge_distributed(again) == judge_distributed(report)


# -- claims fed violating data -----------------------------------------------------------------
def _collective(
    kind: str = "data parallel",
    formula: str = "ring_allreduce_bytes",
    inputs: dict[str, int] | None = None,
    measured: float | None = None,
    seconds: float = 1e-3,
    **extra: object,
) -> Collective:
    inputs = inputs or {"n_params": 1_000_000, "s": 4, "W": 2}
    expected = float(f.get(formula)(**inputs))
    measured = expected * 1.001 if measured is None else measured
    return Collective(
        name=f"{kind} {inputs.get('W', '')}",
        kind=kind,
        formula=formula,
        inputs=inputs,
        formula_bytes=expected,
        senders=2,
        loopback_bytes=(measured, measured * 1.01),
        seconds=(seconds, seconds * 1.1, seconds * 0.9),
        max_error=0.0,
        **extra,  # type: ignore[arg-type]
    )


def test_traffic_claim_fails_when_the_bytes_are_doubled() -> None:
    good = _collective()
    assert claims.traffic_claim(good, "demo").verdict == "holds"
    doubled = _collective(measured=2 * good.formula_bytes)
    assert claims.traffic_claim(doubled, "demo").verdict == "fails"
    halved = _collective(measured=0.5 * good.formula_bytes)
    assert claims.traffic_claim(halved, "demo").verdict == "fails"


def test_allreduce_growth_fails_when_bytes_stay_flat() -> None:
    sweep = [
        _collective(inputs={"n_params": 1000, "s": 4, "W": w}, measured=4000.0 * 1.001)
        for w in (2, 3, 4)
    ]
    assert claims.allreduce_growth_claim(sweep, "demo").verdict == "fails"
    honest = [_collective(inputs={"n_params": 1000, "s": 4, "W": w}) for w in (2, 3, 4)]
    result = claims.allreduce_growth_claim(honest, "demo")
    assert result.verdict == "holds"
    assert result.test.alternative_value == 1.0


def _lookups(row_factor: float) -> list[Collective]:
    inputs = {"B": 2048, "n_tables": 4, "d": 64, "s": 4, "W": 2}
    table = _collective("sharded embedding", "tablewise_alltoall_bytes", inputs)
    row_bytes = f.tablewise_alltoall_bytes(**inputs) * row_factor
    row = _collective("sharded embedding", "rowwise_alltoall_bytes", inputs, measured=row_bytes)
    return [table, row]


def test_rowwise_claim_fails_when_rowwise_moves_no_more() -> None:
    assert claims.rowwise_claim(_lookups(2.0), "demo").verdict == "holds"
    assert claims.rowwise_claim(_lookups(1.0), "demo").verdict == "fails"


def _paired(table_exchange: list[float], column_exchange: list[float]) -> list[Collective]:
    """Table-wise and column-wise lookups whose all-to-alls took these times, round by round;
    the packing and unpacking around them took ten times longer (they must not count)."""
    inputs = {"B": 2048, "n_tables": 4, "d": 64, "s": 4, "W": 2}

    def lookup(formula: str, exchange: list[float]) -> Collective:
        return dataclasses.replace(
            _collective("sharded embedding", formula, inputs),
            seconds=tuple(21 * t for t in exchange),
            phases={"pack": tuple(10 * t for t in exchange), "exchange": tuple(exchange),
                    "unpack": tuple(10 * t for t in exchange)},
            order=tuple((i + (formula[0] == "c")) % 2 for i in range(len(exchange))),
        )  # fmt: skip

    return [
        lookup("tablewise_alltoall_bytes", table_exchange),
        lookup("columnwise_alltoall_bytes", column_exchange),
    ]


# drift across rounds that hits both schemes of a round alike
_ROUNDS = [1e-3, 1.3e-3, 0.9e-3, 2e-3, 1.1e-3, 1.05e-3]


def test_same_exchange_holds_for_equal_times_and_fails_for_a_4x_gap() -> None:
    equal = claims.same_exchange_claim(_paired(_ROUNDS, _ROUNDS), "demo")
    assert (equal.verdict, equal.test.measured, equal.test.interval) == ("holds", 1.0, (1.0, 1.0))
    gap = claims.same_exchange_claim(_paired(_ROUNDS, [4 * t for t in _ROUNDS]), "demo")
    assert (gap.verdict, gap.test.measured) == ("fails", 4.0)
    assert gap.test.region_text() == "0.714 ≤ column-wise ÷ table-wise exchange time ≤ 1.4"
    assert gap.test.alternative_value == 2.0  # W rows, each W times shorter
    faster = claims.same_exchange_claim(_paired(_ROUNDS, [t / 4 for t in _ROUNDS]), "demo")
    assert faster.verdict == "fails"


def test_same_exchange_is_undecided_when_the_rounds_straddle_the_edge() -> None:
    column = [t * r for t, r in zip(_ROUNDS, (1.0, 1.9, 1.1, 1.8, 1.2, 1.7), strict=True)]
    result = claims.same_exchange_claim(_paired(_ROUNDS, column), "demo")
    low, high = result.test.interval
    assert low < claims.SAME_EXCHANGE_FACTOR < high
    assert result.verdict == "undecided"


def test_same_exchange_hides_when_crowded_and_needs_paired_rounds() -> None:
    lookups = _paired(_ROUNDS, _ROUNDS)
    hidden = claims.same_exchange_claim(lookups, "demo", crowded="the 2 processes shared a core")
    assert (hidden.verdict, hidden.reason) == ("not visible", "the 2 processes shared a core")
    unpaired = [dataclasses.replace(c, order=()) for c in lookups]  # timed one after another
    assert "not in shuffled paired rounds" in claims.same_exchange_claim(unpaired, "demo").reason
    short = [lookups[0], _paired(_ROUNDS[:3], _ROUNDS[:3])[1]]
    with pytest.raises(GpuConceptsError, match="got 6 and 3"):
        claims.same_exchange_claim(short, "demo")


def test_alpha_beta_reads_the_exchange_not_the_packing() -> None:
    fit = AlphaBeta(alpha_s=1e-4, bytes_per_s=1e9, points=5)
    bytes_ = f.tablewise_alltoall_bytes(B=2048, n_tables=4, d=64, s=4, W=2)
    on_line = _paired([fit.seconds(bytes_)] * 3, [fit.seconds(bytes_)] * 3)
    # the whole lookups took 21 times the prediction, their exchanges exactly it
    result = claims.alpha_beta_claim(on_line, fit, "demo")
    assert (result.verdict, result.test.measured) == ("holds", pytest.approx(1.0))


def test_alpha_beta_claim_fails_when_times_are_far_off() -> None:
    fit = AlphaBeta(alpha_s=1e-4, bytes_per_s=1e9, points=5)
    inputs = {"B": 2048, "n_tables": 4, "d": 64, "s": 4, "W": 2}
    bytes_ = f.rowwise_alltoall_bytes(**inputs)
    on_line = _collective(
        "sharded embedding", "rowwise_alltoall_bytes", inputs, seconds=fit.seconds(bytes_)
    )
    assert claims.alpha_beta_claim([on_line], fit, "demo").verdict == "holds"
    slow = _collective(
        "sharded embedding", "rowwise_alltoall_bytes", inputs, seconds=10 * fit.seconds(bytes_)
    )
    assert claims.alpha_beta_claim([slow], fit, "demo").verdict == "fails"


def test_alpha_beta_interval_carries_the_fits_own_uncertainty() -> None:
    # a sweep whose small messages are noisy: the fit's alpha is barely known, and a prediction
    # that leans on it cannot be called from the predicted collective's spread alone
    fit_bytes = (1e3, 1e5, 1e7)
    sweep = [
        dataclasses.replace(
            _collective(seconds=1e-4 + b / 1e9),
            formula_bytes=b,
            seconds=(1e-4 + b / 1e9, 3e-4 + b / 1e9, 0.2e-4 + b / 1e9),
        )
        for b in fit_bytes
    ]
    fit = fit_alpha_beta([c.formula_bytes for c in sweep], [c.median_seconds for c in sweep])
    inputs = {"B": 16, "n_tables": 1, "d": 8, "s": 4, "W": 2}  # a tiny message: alpha decides
    tiny = f.rowwise_alltoall_bytes(**inputs)
    lookup = _collective(
        "sharded embedding", "rowwise_alltoall_bytes", inputs, seconds=1.8 * fit.seconds(tiny)
    )
    large = {"B": 65536, "n_tables": 8, "d": 64, "s": 4, "W": 2}  # bytes decide: alpha cannot
    big = f.rowwise_alltoall_bytes(**large)
    bulk = _collective(
        "sharded embedding", "rowwise_alltoall_bytes", large, seconds=fit.seconds(big)
    )
    alone = claims.alpha_beta_claim([lookup, bulk], fit, "demo")
    refitted = claims.alpha_beta_claim([lookup, bulk], fit, "demo", sweep=sweep)
    assert refitted.test.measured == alone.test.measured
    assert refitted.test.interval[1] - refitted.test.interval[0] > (
        alone.test.interval[1] - alone.test.interval[0]
    )
    assert (alone.verdict, refitted.verdict) == ("holds", "undecided")
    far = dataclasses.replace(lookup, seconds=tuple(30 * t for t in lookup.seconds))
    assert claims.alpha_beta_claim([far, bulk], fit, "demo", sweep=sweep).verdict == "fails"


FREE = AlphaBeta(alpha_s=1e-12, bytes_per_s=1e18, points=7)
"""Messages between pipeline stages that cost next to nothing: GPipe's bubble alone."""


def _costly(alpha_s: float) -> AlphaBeta:
    """Messages whose latency ``alpha_s`` outweighs their bytes."""
    return AlphaBeta(alpha_s=alpha_s, bytes_per_s=1e15, points=7)


def _pipeline(bubble: float, slowdown: float = 1.0) -> Collective:
    """Two stages, four micro-batches of 0.25 s of work each."""
    return _collective(
        "pipeline",
        "pipeline_activation_bytes",
        {"B": 512, "d": 256, "s": 4},
        bubble=(bubble,) * 5,
        schedule={"p": 2, "m": 4},
        busy_seconds=(slowdown,),
        solo_seconds=1.0,
    )


def test_bubble_claim_fails_without_overlap_and_hides_when_crowded() -> None:
    predicted = f.pipeline_bubble_fraction(p=2, m=4)
    assert bubble_claim(_pipeline(predicted), FREE, 2, "demo").verdict == "holds"
    assert bubble_claim(_pipeline(0.5), FREE, 2, "demo").verdict == "fails"
    assert bubble_claim(_pipeline(0.2), FREE, 1, "demo").verdict == "not visible"
    crowded = bubble_claim(_pipeline(0.2, slowdown=3.0), FREE, 2, "demo")
    assert crowded.verdict == "not visible"
    assert "3x longer" in crowded.reason


def test_bubble_claim_prices_each_message_between_stages() -> None:
    # 0.25 s of work and 50 ms per message: (0.25 + 4·0.05) / (5·0.25 + 4·0.05) = 0.45/1.45
    costly = _costly(0.05)
    result = bubble_claim(_pipeline(0.45 / 1.45), costly, 2, "demo")
    assert result.test.predicted == pytest.approx(0.45 / 1.45)
    assert result.verdict == "holds"
    # the alternative waits for the whole batch (1 s) and its message: 1 - 1/2.05
    assert result.test.alternative_value == pytest.approx(1 - 1 / 2.05, rel=1e-6)
    assert "each message 50 ms by the α-β fit" in result.prediction
    # GPipe's bubble alone is now too small: the messages' idle time is missing
    assert bubble_claim(_pipeline(0.2), costly, 2, "demo").verdict == "fails"


def test_bubble_claims_without_an_alpha_beta_fit_are_not_visible() -> None:
    result = bubble_claim(_pipeline(0.2), None, 2, "demo")
    assert (result.verdict, result.reason) == (
        "not visible",
        "no α-β fit of the all-reduces prices the messages between stages",
    )
    gpipe = {m: float(f.pipeline_bubble_fraction(p=2, m=m)) for m in (1, 2, 4)}
    assert bubble_sweep_claim(_swept(gpipe), None, 2, "d").verdict == "not visible"


def test_alpha_beta_claim_without_a_fit_is_not_visible() -> None:
    inputs = {"B": 2048, "n_tables": 4, "d": 64, "s": 4, "W": 2}
    lookup = _collective("sharded embedding", "rowwise_alltoall_bytes", inputs)
    result = claims.alpha_beta_claim([lookup], None, "demo", problem="time fell with size")
    assert result.verdict == "not visible"
    assert "time fell with size" in result.reason


# -- pure helpers ---------------------------------------------------------------------------
def test_fit_recovers_alpha_and_bandwidth() -> None:
    sizes = [1e3, 1e4, 1e5, 1e6, 1e7]
    fit = fit_alpha_beta(sizes, [5e-5 + b / 2e9 for b in sizes])
    assert fit.alpha_s == pytest.approx(5e-5, rel=1e-6)
    assert fit.bytes_per_s == pytest.approx(2e9, rel=1e-6)
    with pytest.raises(GpuConceptsError, match="at least 2 message sizes"):
        fit_alpha_beta([1e3], [1e-3])


def test_loopback_parse_needs_lo() -> None:
    with pytest.raises(GpuConceptsError, match="no loopback interface"):
        parse_loopback(" eth0: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n")


# -- the bubble swept over m ----------------------------------------------------------------------
def _swept(bubbles: dict[int, float], p: int = 2, slowdown: float = 1.0) -> list[Collective]:
    """A sweep over m with micro-batches of 0.25 s of work each."""
    return [
        _collective(
            "pipeline sweep",
            "pipeline_activation_bytes",
            {"B": 128 * m, "d": 256, "s": 4},
            bubble=(b, b * 1.02, b * 0.98, b, b),
            schedule={"p": p, "m": m},
            busy_seconds=(slowdown * m / 4,),
            solo_seconds=m / 4,
        )
        for m, b in bubbles.items()
    ]


def test_bubble_sweep_slope_is_one_whatever_the_constant_idle_share() -> None:
    gpipe = {m: float(f.pipeline_bubble_fraction(p=2, m=m)) for m in (1, 2, 4, 8)}
    exact = bubble_sweep_claim(_swept(gpipe), FREE, cores=2, device="demo")
    assert exact.verdict == "holds"
    assert exact.test.measured == pytest.approx(1.0)
    assert exact.key == "pipeline-bubble-shrinks"
    # a constant idle share (the time to start) goes into the intercept
    offset = bubble_sweep_claim(
        _swept({m: b + 0.1 for m, b in gpipe.items()}), FREE, cores=2, device="demo"
    )
    assert offset.verdict == "holds"
    assert offset.test.measured == pytest.approx(1.0)


def test_bubble_sweep_reads_the_bubble_its_messages_leave() -> None:
    # messages as long as the work: the bubble falls from 2/3 at m = 1 towards 1/2, as
    # (m + 1)/(2m + 1); GPipe's alone falls 2.8 times as steeply
    costly = _costly(0.25)
    priced = {m: (m + 1) / (2 * m + 1) for m in (1, 2, 4, 8)}
    result = bubble_sweep_claim(_swept(priced), costly, 2, "demo")
    assert result.verdict == "holds"
    assert result.test.measured == pytest.approx(1.0, rel=1e-3)
    gpipe = {m: float(f.pipeline_bubble_fraction(p=2, m=m)) for m in (1, 2, 4, 8)}
    too_steep = bubble_sweep_claim(_swept(gpipe), costly, 2, "demo")
    assert too_steep.verdict == "fails"
    assert too_steep.test.measured == pytest.approx(2.8, abs=0.1)


@pytest.mark.parametrize(
    "bubbles",
    [
        {1: 0.5, 2: 0.5, 4: 0.5, 8: 0.5},  # no overlap at any m: (p - 1)/p
        {1: 0.3, 2: 0.3, 4: 0.3, 8: 0.3},  # a bubble that does not shrink with m
        {1: 0.5, 2: 0.45, 4: 0.42, 8: 0.4},  # shrinks, but a quarter as fast
        {1: 0.9, 2: 0.3, 4: 0.05, 8: 0.0},  # shrinks twice as fast as the formula
    ],
)
def test_bubble_sweep_fails_when_the_bubble_does_not_follow_m(bubbles: dict[int, float]) -> None:
    assert bubble_sweep_claim(_swept(bubbles), FREE, 2, "demo").verdict == "fails"


def test_bubble_sweep_is_not_visible_when_the_stages_did_not_run_side_by_side() -> None:
    gpipe = {m: float(f.pipeline_bubble_fraction(p=2, m=m)) for m in (1, 2, 4)}
    assert bubble_sweep_claim(_swept(gpipe), FREE, 1, "d").verdict == "not visible"
    slow = bubble_sweep_claim(_swept(gpipe, slowdown=2.0), FREE, 2, "d")
    assert slow.verdict == "not visible"
    assert "2x longer in the pipeline than alone (at m = 1)" in slow.reason
    crowded = bubble_sweep_claim(_swept(gpipe), FREE, 2, "d", crowded="shared")
    assert (crowded.verdict, crowded.reason) == ("not visible", "shared")


def test_bubble_sweep_needs_two_values_of_m() -> None:
    with pytest.raises(
        GpuConceptsError, match="at least two values of m; got p, m = \\[\\(2, 4\\)\\]"
    ):
        bubble_sweep_claim(_swept({4: 0.2}), FREE, cores=2, device="demo")


def test_growth_keeps_one_all_reduce_per_group_size() -> None:
    from synthetic import synthetic_distributed

    report = synthetic_distributed()
    assert [c.inputs["W"] for c in report.growth] == [2, 3, 4]
    assert report.growth[0].kind == "world-size sweep"  # the counted group, not the timed one
    only_timed = dataclasses.replace(
        report, collectives=tuple(c for c in report.collectives if c.kind != "world-size sweep")
    )
    assert [c.inputs["W"] for c in only_timed.growth] == [2]
    judged = {r.key: r.verdict for r in judge_distributed(only_timed)}
    assert judged["allreduce-grows-with-w"] == (
        "not visible"  # at W = 2 alone the share is 1 whatever the model
    )


def test_growth_counts_bytes_in_more_processes_than_cores() -> None:
    """Three gloo processes (on this machine's cores, however few): each group's bytes per
    device are the ring's 2 (W - 1)/W n_params s, within the headers."""
    counted = count_growth(3, SMALL)
    assert [(c.kind, c.inputs["W"]) for c in counted] == [
        ("world-size sweep", 2),
        ("world-size sweep", 3),
    ]
    for c in counted:
        assert c.bytes_ratio is not None
        assert 0.98 <= c.bytes_ratio <= 1.15, c.name
        assert (len(c.seconds), c.blocks) == (2, 1)  # bytes alone: two repetitions, one block
    with pytest.raises(GpuConceptsError, match="world_size must be between 2 and 8; got 9"):
        count_growth(9, SMALL)


def test_exchange_gap_splits_the_time_and_reads_the_run_order() -> None:
    from synthetic import synthetic_distributed

    report = synthetic_distributed()
    whole = exchange_gap(report)
    assert "each as 1 message per device in one all-to-all" in whole
    # every measured time has its spread beside it: the median of the synthetic repetitions
    # (612, 624 and 656 us) ± their interquartile range, 640 - 618 us (each quartile the
    # midpoint of its two neighbours), as every page writes a time
    assert "Whole, the table-wise lookup took 624 µs ± 22 µs and the column" in whole
    assert "(IQR" not in whole
    assert whole.endswith("nor told from run order.")
    # the exchange that ran first in its round took twice as long as the others
    table, column = _paired([2e-3, 1e-3, 1e-3], [1e-3, 2e-3, 1e-3])
    ordered = (
        dataclasses.replace(table, name="table-wise lookup", order=(0, 1, 1)),
        dataclasses.replace(column, name="column-wise lookup", order=(1, 0, 1)),
    )
    kept = tuple(c for c in report.collectives if c.formula not in {t.formula for t in ordered})
    text = exchange_gap(dataclasses.replace(report, collectives=(*kept, *ordered)))
    assert "the table-wise lookup spent pack 48%, exchange 4.8%, unpack 48%" in text
    assert "The all-to-alls alone took 1 ms ± 500 µs and 1 ms ± 500 µs." in text
    assert "an all-to-all that ran first took 2 times as long as one that ran later" in text


def test_the_bubble_interval_is_the_medians_bootstrap_not_the_quartiles() -> None:
    """Issue 45, item 5: a claim's interval is the bootstrap interval of its median over the
    repetitions; the quartiles are the spread shown beside it, never the interval."""
    from gpuconcepts.measure import quartiles

    predicted = f.pipeline_bubble_fraction(p=2, m=4)
    bubbles = tuple(predicted * (1 + 0.02 * ((i * 7) % 11 - 5)) for i in range(31))
    result = bubble_claim(replace(_pipeline(predicted), bubble=bubbles), FREE, 2, "demo")
    low, high = result.test.interval
    q1, q3 = quartiles(bubbles)
    assert q1 <= low <= result.test.measured <= high <= q3
    assert (low, high) != (q1, q3)
    assert "IQR" in result.measured  # the spread is still said


# -- independent blocks (issue 45, item 5) ------------------------------------------------------
def _blocked_pipeline(spread: float, blocks: int) -> Collective:
    """A pipeline whose 30 repetitions sit at three levels, 10 at each, around GPipe's bubble
    (0.2 at p = 2, m = 4): ``spread`` below it, at it, and ``spread`` above it."""
    levels = (1 - spread, 1.0, 1 + spread)
    return replace(
        _pipeline(0.2),
        seconds=(1e-3,) * 30,
        loopback_bytes=None,
        bubble=tuple(round(0.2 * level, 6) for level in levels for _ in range(10)),
        busy_seconds=(1.0,) * 30,
        blocks=blocks,
    )


def test_a_judges_interval_widens_when_its_blocks_disagree() -> None:
    # the same 30 bubbles: in one block the median's bootstrap sees only the 10 in the middle;
    # as three blocks that moved from one moment to the next, the interval reaches two of them
    one = bubble_claim(_blocked_pipeline(0.5, 1), FREE, 2, "demo")
    three = bubble_claim(_blocked_pipeline(0.5, 3), FREE, 2, "demo")
    assert (one.test.measured, one.test.interval, one.verdict) == (0.2, (0.2, 0.2), "holds")
    assert (three.test.measured, three.test.interval) == (0.2, (0.1, 0.3))
    assert three.verdict == "undecided"  # 0.1 lies below the pass region's low edge
    assert three.detail.endswith("timed in 3 blocks of 10 repetitions")
    assert one.detail.endswith(
        "timed in one block: its interval misses the variation from moment to moment"
    )
    # the paired exchanges alike: column-wise ran 0.8, 1 and 1.2 times table-wise in its blocks
    table = [1e-3] * 30
    column = [t * level for level in (0.8, 1.0, 1.2) for t in table[:10]]
    lookups = _paired(table, column)
    paired = claims.same_exchange_claim(lookups, "demo")
    blocked = claims.same_exchange_claim(
        [replace(c, loopback_bytes=None, blocks=3) for c in lookups], "demo"
    )
    assert paired.test.interval == pytest.approx((1.0, 1.0))
    assert blocked.test.interval == pytest.approx((0.8, 1.2))


def test_the_bubble_sweeps_slope_resamples_each_pipelines_blocks() -> None:
    def swept(m: int, bubble: float, blocks: int) -> Collective:
        drift = (0.7, 1.0, 1.3)  # each block at another level
        return replace(
            _pipeline(bubble),
            schedule={"p": 2, "m": m},
            seconds=(1e-3,) * 9,
            loopback_bytes=None,
            busy_seconds=(1.0,) * 9,
            bubble=tuple(bubble * d for d in drift for _ in range(3)),
            blocks=blocks,
        )

    ms = (1, 2, 4, 8)
    gpipe = [f.pipeline_bubble_fraction(p=2, m=m) for m in ms]
    one = bubble_sweep_claim([swept(m, b, 1) for m, b in zip(ms, gpipe, strict=True)], FREE, 2, "d")
    three = bubble_sweep_claim(
        [swept(m, b, 3) for m, b in zip(ms, gpipe, strict=True)], FREE, 2, "d"
    )
    assert one.test.measured == three.test.measured == pytest.approx(1.0)
    (low1, high1), (low3, high3) = one.test.interval, three.test.interval
    assert high3 - low3 > high1 - low1
    assert three.detail.endswith("each timed in 3 blocks of 3 repetitions")


def test_a_collectives_blocks_travel_with_its_record() -> None:
    from gpuconcepts.records import to_record

    c = _blocked_pipeline(0.1, 3)
    again = from_record(Collective, json.loads(json.dumps(to_record(c))))
    assert (again, again.blocks) == (c, 3)
    assert c.to_dict()["repetitions"]["blocks"] == 3
    with pytest.raises(
        GpuConceptsError, match=r"blocks must be at least 1 .* got 4 .*'busy_seconds': 3"
    ):
        replace(c, busy_seconds=(1.0,) * 3, blocks=4)
    with pytest.raises(
        GpuConceptsError, match=r"timed_blocks must be from 1 to the repeats \(3\); got 4"
    ):
        replace(quick_sizes(), repeats=3, timed_blocks=4)


def test_the_presets_time_every_workload_in_enough_blocks_of_two() -> None:
    from gpuconcepts.claims.thresholds import MIN_BLOCKS

    for quick in (True, False):
        sizes = RunSizes.resolve("cpu", quick=quick, free_bytes=2**36).distributed
        assert sizes.timed_blocks >= MIN_BLOCKS, quick
        assert sizes.repeats >= 2 * sizes.timed_blocks, quick


def test_a_distributed_claim_gives_its_measured_value_once() -> None:
    """The claim's head states the measured value and its interval; the detail after it adds
    what the head does not (the bytes sent, the rounds and their spread), never the value again."""
    from gpuconcepts.book import recorded_runs
    from gpuconcepts.claims.judge import judged_now

    cpu = next(
        r for r in recorded_runs(Path(__file__).parents[1] / "docs") if r.provenance.device == "cpu"
    )
    detail = {c.key: c.detail for c in judged_now(cpu).claims}
    assert detail["traffic-all-reduce"] == "8,406,664 bytes per device on loopback"
    assert detail["rowwise-more-than-tablewise"] == (
        "8,396,132 and 4,198,414 bytes per device on loopback"
    )
    assert detail["tablewise-columnwise-same-exchange"].startswith(
        "median of 30 paired rounds, IQR 0.686-1.26, timed in one block"
    )
    assert detail["pipeline-bubble"].startswith(
        "median of 10 repetitions, IQR 0.237-0.32, timed in one block"
    )
