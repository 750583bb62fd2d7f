"""Issue 45, item 5: statistics a performance engineer accepts. The rules are tested, never a
time: a comparison's rounds are fixed before it runs (no optional stopping), measured in at
least three independent blocks, a claim's interval resamples those blocks (and widens when
they disagree), and a run pins and records its threads and its measured clock."""

from __future__ import annotations

import dataclasses
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import pytest

from gpuconcepts.claims.quantities import paired_interval, with_interval
from gpuconcepts.claims.thresholds import INTERVAL_COVERAGE, MIN_BLOCKS, WRONG_VERDICT_RATE
from gpuconcepts.lab import Budget, Lab
from gpuconcepts.measure import Measurement, block_bounds
from gpuconcepts.roofline import Peaks

PRESETS = Path(__file__).resolve().parents[1] / "conf" / "presets.toml"


# -- fixed rounds ------------------------------------------------------------------------------
@dataclass
class FakeBeside:
    """Stands for kernels.references.Beside: counts rounds and blocks, times nothing."""

    kernels: tuple[Any, ...]
    rounds: int = 0
    starts: list[int] = field(default_factory=lambda: [0])

    @property
    def count(self) -> int:
        return self.rounds

    def more(self, rounds: int = 1) -> None:
        self.rounds += rounds

    def new_block(self) -> None:
        self.starts.append(self.rounds)

    def measurements(self, group: str = "") -> tuple[Measurement, ...]:
        times = tuple(1e-3 * (1 + i % 3) for i in range(self.rounds))
        return tuple(
            Measurement(str(k), "cpu", {"B": 1}, times, 1e6, 1e6, group=group) for k in self.kernels
        )


@dataclass(frozen=True)
class Verdict:
    decided: bool
    anomalous: bool = False
    key: str = "demo"


def fake_lab(monkeypatch: pytest.MonkeyPatch, budget: Budget) -> tuple[Lab, list[FakeBeside]]:
    made: list[FakeBeside] = []

    def beside(_self: Lab, kernels: Any) -> FakeBeside:
        made.append(FakeBeside(tuple(kernels)))
        return made[-1]

    @contextmanager
    def no_sampling(_self: Lab) -> Iterator[None]:
        yield

    monkeypatch.setattr(Lab, "_beside", beside)
    monkeypatch.setattr(Lab, "_kernel", lambda _self, workload, _sizes: workload)
    monkeypatch.setattr(Lab, "_free_cores", no_sampling)
    lab = Lab(
        "cpu",
        Peaks("cpu", 1e11, 1e10, "float32"),
        repeats=7,
        cache_bytes=2**25,
        free_bytes=2**34,
        budget=budget,
    )
    return lab, made


@pytest.mark.parametrize("decided", [True, False])
def test_the_rounds_of_a_comparison_do_not_depend_on_what_they_show(
    monkeypatch: pytest.MonkeyPatch, decided: bool
) -> None:
    budget = Budget(rounds=12, blocks=3)
    lab, made = fake_lab(monkeypatch, budget)
    calls = []

    def judge(found: tuple[Measurement, ...]) -> list[Verdict]:
        calls.append(len(found[0].raw_seconds))
        return [Verdict(decided)]

    found = lab.compare([("mlp", {"B": 1}), ("mlp", {"B": 2})], judge)
    (beside,) = made
    assert beside.count == budget.rounds  # as many whether the claim was decided or not
    assert [len(m.raw_seconds) for m in found] == [budget.rounds] * 2
    assert calls == [budget.rounds]  # judged once, for an anomaly, after the fixed rounds


@dataclass
class Looks(FakeBeside):
    """Times the second kernel 2x the first in the first look, 0.5x in the second."""

    looks: ClassVar[int] = 0

    def __post_init__(self) -> None:
        Looks.looks += 1
        self.slower = 2.0 if Looks.looks == 1 else 0.5

    def measurements(self, group: str = "") -> tuple[Measurement, ...]:
        first, second = super().measurements(group)
        seconds = tuple(self.slower * t for t in second.raw_seconds)
        return first, dataclasses.replace(second, params={"B": 2}, raw_seconds=seconds)


def test_a_second_look_is_shown_beside_a_verdict_and_never_replaces_its_rounds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An anomaly (the larger batch ran slower) in the rounds fixed in advance is measured
    again, and gone on that second look: the verdict still reads the first rounds, and its
    reason says what the second look found."""
    from gpuconcepts.claims import experiments as judging
    from gpuconcepts.claims import plan
    from gpuconcepts.claims.plan import Experiment
    from gpuconcepts.results.claim import example
    from gpuconcepts.results.measured import Comparison

    lab, _ = fake_lab(monkeypatch, Budget(rounds=12, blocks=3))
    monkeypatch.setattr(Lab, "_beside", lambda _self, kernels: Looks(tuple(kernels)))
    monkeypatch.setattr(Looks, "looks", 0)
    wanted = (("mlp", {"B": 1}), ("mlp", {"B": 2}))

    def check(ms: tuple[Measurement, ...]) -> list[Any]:
        gain = ms[0].seconds / ms[1].seconds  # FLOP/s gain of the larger batch
        return [example(gain)]

    found = lab.compare(wanted, check)
    measured = lab.measured()
    again = measured.second_look(wanted)
    assert measured.compared(wanted) == found
    assert [m.group for m in again] == ["mlp-1-again"] * 2
    assert check(found)[0].anomalous
    assert not check(again)[0].anomalous
    experiment = Experiment(
        "demo",
        lambda _m, _z: (Comparison(wanted, check),),
        {check: lambda judge, m, _z: judge(m.compared(wanted))},
    )
    monkeypatch.setattr(judging, "experiments", lambda: (experiment,))
    monkeypatch.setattr(plan, "dispatch", lambda _kind: ((check, experiment),))
    (result,) = judging.judge_claims(measured, None)  # type: ignore[arg-type]
    assert result.test.measured == pytest.approx(0.5)  # the first look's gain, not 2
    assert (result.verdict, result.second_look) == ("fails", False)
    assert result.why.startswith("anomaly, gone on a second look")
    # had the anomaly persisted, the reason says so; with no second look taken, neither
    persisted = dataclasses.replace(result, second_look=True)
    assert persisted.why.startswith("anomaly, measured again and persisting: ")
    assert dataclasses.replace(result, second_look=None).why.startswith("anomaly: ")


def test_a_comparison_is_timed_in_blocks_each_warmed_up_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lab, made = fake_lab(monkeypatch, Budget(rounds=10, blocks=3))
    found = lab.compare([("mlp", {"B": 1}), ("mlp", {"B": 2})])
    (beside,) = made
    assert beside.starts == [start for start, _ in block_bounds(10, 3)]
    assert {m.blocks for m in found} == {3}


def test_a_kernel_measured_alone_is_timed_in_blocks_too(monkeypatch: pytest.MonkeyPatch) -> None:
    lab, made = fake_lab(monkeypatch, Budget(rounds=12, blocks=3))
    m = lab.measure("mlp", B=4)
    assert (made[0].count, made[0].starts, m.blocks) == (7, [0, 2, 4], 3)


def test_every_preset_fixes_its_rounds_in_at_least_three_blocks() -> None:
    presets = tomllib.loads(PRESETS.read_text(encoding="utf-8"))
    tables = []
    for device, table in presets.items():
        for timing in (table.get("timing"), table.get("quick", {}).get("timing")):
            if timing is None:
                continue
            tables.append(device)
            # rounds added until a claim is decided are gone: no cap, no seconds to fill
            assert not {"max_rounds", "compare_seconds"} & set(timing), device
            budget = Budget.from_timing(timing)
            assert budget.blocks >= MIN_BLOCKS, device
            assert budget.rounds >= 2 * budget.blocks, device  # rounds to resample in each
    assert tables
    for device, table in presets["wholemodel"].items():  # the whole model's timings too
        for repeats in (table["repeats"], table["quick"]["repeats"]):
            assert table["timed_blocks"] >= MIN_BLOCKS, device
            assert repeats >= 2 * table["timed_blocks"], device
    assert Budget().blocks >= MIN_BLOCKS
    assert pytest.approx((1 - INTERVAL_COVERAGE) / 2) == WRONG_VERDICT_RATE


def test_a_budget_needs_a_round_for_every_block() -> None:
    from gpuconcepts.errors import GpuConceptsError

    with pytest.raises(GpuConceptsError, match="blocks"):
        Budget(rounds=2, blocks=3)


# -- intervals over blocks -------------------------------------------------------------------
WITHIN = (1.0, 1.02, 0.98, 1.01, 0.99, 1.0)
"""Six rounds' worth of a ratio's noise within one block."""


def pair(ratios: tuple[float, ...], blocks: int) -> tuple[Measurement, Measurement]:
    slow = Measurement(
        "a", "cpu", {}, tuple(2e-3 * r for r in ratios), 1, 1, group="g", blocks=blocks
    )
    fast = Measurement("b", "cpu", {}, (1e-3,) * len(ratios), 1, 1, group="g", blocks=blocks)
    return slow, fast


def width(interval: tuple[float, float]) -> float:
    return interval[1] - interval[0]


def test_an_interval_widens_when_the_blocks_disagree() -> None:
    agree = WITHIN * 3
    disagree = WITHIN * 2 + tuple(1.3 * r for r in WITHIN)  # the third block ran elsewhere
    ratio = lambda t: t[0] / t[1]
    _, calm = with_interval(ratio, pair(agree, 3))
    _, apart = with_interval(ratio, pair(disagree, 3))
    assert width(apart) > 3 * width(calm)
    # a bootstrap over rounds alone, as if one block, sees less of the disagreement
    _, one = with_interval(ratio, pair(disagree, 1))
    assert width(apart) > width(one)


def test_unpaired_measurements_resample_their_blocks_too() -> None:
    disagree = tuple(1e-3 * r for r in WITHIN * 2) + tuple(1.3e-3 * r for r in WITHIN)
    blocked = Measurement("a", "cpu", {}, disagree, 1, 1, blocks=3)
    flat = Measurement("a", "cpu", {}, disagree, 1, 1)
    _, across = with_interval(lambda t: t[0], (blocked,))
    _, within = with_interval(lambda t: t[0], (flat,))
    assert width(across) > width(within)


def test_one_block_keeps_the_bootstrap_over_rounds() -> None:
    rounds = [(2.0, 4.0, 3.0), (1.0, 2.0, 1.0)]
    assert paired_interval(lambda t: t[0] / t[1], rounds) == paired_interval(
        lambda t: t[0] / t[1], rounds, 1
    )


def test_blocks_are_kept_in_a_saved_measurement() -> None:
    from gpuconcepts.records import from_record

    m = Measurement("a", "cpu", {}, (1.0, 2.0, 3.0), 1, 1, blocks=3)
    assert from_record(Measurement, m.to_dict()) == m
    assert "blocks" not in Measurement("a", "cpu", {}, (1.0,), 1, 1).to_dict()  # old runs: 1


def test_blocks_must_fit_the_repetitions() -> None:
    from gpuconcepts.errors import GpuConceptsError

    with pytest.raises(GpuConceptsError, match="blocks"):
        Measurement("a", "cpu", {}, (1.0, 2.0), 1, 1, blocks=3)


# -- threads and clock -----------------------------------------------------------------------
def test_the_threads_are_pinned_and_restored() -> None:
    import torch

    from gpuconcepts.measure import pinned_threads

    before = torch.get_num_threads()
    with pinned_threads("cpu", 1) as threads:
        assert threads == torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    with pinned_threads("cuda") as none:
        assert none is None


def test_the_noise_probe_records_the_threads_and_the_measured_clock() -> None:
    import torch

    from gpuconcepts.measure import pinned_threads, probe_noise
    from gpuconcepts.measure.physical import measured_hz

    with pinned_threads("cpu", 1):
        probe = probe_noise("cpu")
    assert probe.threads == 1
    assert (probe.measured_mhz is None) == (measured_hz(tries=1) is None)
    assert "1 thread" in probe.text()
    if probe.measured_mhz is not None:
        assert "measured clock" in probe.text()
    assert torch.get_num_threads() >= 1


def test_a_run_is_collected_with_its_threads_pinned() -> None:
    """collect() pins torch's threads for the whole run: read from its code, since a run takes
    a minute (the probe's and the peaks' threads are recorded from inside it)."""
    import importlib
    import inspect

    module = importlib.import_module("gpuconcepts.collect")
    source = inspect.getsource(module.collect)
    assert "pinned_threads(device)" in source


def test_a_saved_claim_with_an_open_interval_end_reads_back() -> None:
    """A measured value whose interval has an open end ("never") reads back, and an end read
    as nan (null in a file) holds any value on its side (a fresh quick run on 2026-12-07 could
    not be read, its decode knee measured 2.65 in [0, never])."""
    import json
    import math

    from gpuconcepts.records import from_record, to_record
    from gpuconcepts.results.claim import ClaimRecord, example
    from gpuconcepts.results.twosided import TwoSided

    test = TwoSided("knee", 1.0, "never", math.inf, 0.5, 2.0, 2.65, (0.0, math.inf))
    result = dataclasses.replace(example(), test=test)
    record = json.loads(json.dumps(to_record(ClaimRecord.of(result))))
    back = from_record(ClaimRecord, record).result()
    assert back.test.measured == 2.65
    assert back.test.interval[0] == 0.0
    assert not back.test.interval[1] < 2.65  # still open: an infinity, or nan (b953a40)
    assert back.verdict == result.verdict
    nan_end = TwoSided("knee", 1.0, "never", math.inf, 0.5, 2.0, 2.65, (0.0, math.nan))
    assert nan_end.interval[1] != nan_end.interval[1]  # built, not refused
