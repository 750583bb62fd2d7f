"""One claim registry: every threshold in claims/thresholds.py, every size in conf/presets.toml,
every claim judged through claims.judge.judge.

The registry itself (results/registry.py) and the falsifiability of each claim it lists are
checked in tests/test_falsifiable.py.
"""

from __future__ import annotations

import ast
from pathlib import Path

from gpuconcepts.changelog import load_changes
from gpuconcepts.claims import collectives, decode, thresholds, wholemodel
from gpuconcepts.claims import distributed as pipelines
from gpuconcepts.claims.distributed import judge_distributed
from gpuconcepts.claims.judge import measured_of, rejudged

SRC = Path(__file__).resolve().parents[1] / "src" / "gpuconcepts"
CHANGE_LOG = SRC.parents[1] / "docs" / "changes.toml"

JUDGING = sorted((SRC / "claims").glob("*.py"))
"""The modules that judge claims (and thresholds.py, which holds their thresholds)."""

NOT_THRESHOLDS = {
    "claims/cnn.py:POST_IMAGE_SIDE": "the post's worked figure (a 4x4 image), counted, not judged",
    "claims/cnn.py:POST_NEURONS": "the post's worked figure (3 neurons), counted, not judged",
    "claims/cnn.py:POST_KERNEL": "the post's worked figure (a 3x3 kernel), counted, not judged",
}
"""Numeric constants of the judging modules that are no threshold, each with its reason."""


def numeric_constants(source: str) -> list[str]:
    """Names of the module-level UPPER_CASE constants that a number or a tuple of numbers is
    assigned to (what a threshold looks like)."""

    def numeric(node: ast.expr) -> bool:
        if isinstance(node, ast.UnaryOp):
            return numeric(node.operand)
        if isinstance(node, ast.Tuple):
            return bool(node.elts) and all(numeric(e) for e in node.elts)
        if isinstance(node, ast.BinOp):
            return numeric(node.left) and numeric(node.right)
        return (
            isinstance(node, ast.Constant)
            and isinstance(node.value, int | float)
            and not isinstance(node.value, bool)
        )

    found = []
    for node in ast.parse(source).body:
        target, value = None, None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign):
            target, value = node.target, node.value
        named = isinstance(target, ast.Name) and target.id.isupper()
        if named and value is not None and numeric(value):
            assert isinstance(target, ast.Name)
            found.append(target.id)
    return found


def test_no_judging_module_but_thresholds_defines_a_threshold() -> None:
    stray = [
        f"{path.relative_to(SRC).as_posix()}:{name}"
        for path in JUDGING
        if path.name != "thresholds.py"
        for name in numeric_constants(path.read_text())
    ]
    assert sorted(set(stray) - set(NOT_THRESHOLDS)) == []
    assert set(NOT_THRESHOLDS) <= set(stray)  # each exception still exists


def test_the_search_finds_a_threshold_typed_in_a_judging_module() -> None:
    source = (
        "BYTES_LOW = 0.98\n"
        "LIMITS = (1, -2.5)\n"
        "SQUARE = 2**20\n"
        "ARCHITECTURE = 'Whole model'\n"
        "VISIBLE = True\n"
        "_private = 3\n"
        "def f():\n    INNER = 4\n"
    )
    assert numeric_constants(source) == ["BYTES_LOW", "LIMITS", "SQUARE"]


def test_every_threshold_has_its_reason() -> None:
    listed = thresholds.described()
    assert [name for name, _, reason in listed if len(reason) < 40] == []
    names = [name for name, _, _ in listed]
    assert len(names) == len(set(names))
    # the parts' thresholds are there with their values
    values = {name: value for name, value, _ in listed}
    assert values["BACKWARD_MIN_TIME_RATIO"] == 1.4
    assert values["SAME_EXCHANGE_FACTOR"] == 1.4
    assert values["BYTES_LOW"] == 0.98


def test_a_part_reads_the_thresholds_it_judges_with_from_thresholds() -> None:
    whole = [name for name, _, _ in thresholds.described(wholemodel)]
    assert whole[0] == "BACKWARD_MIN_TIME_RATIO"
    assert "TRAINING_MEMORY_MAX_RATIO" in whole
    assert "SAME_EXCHANGE_FACTOR" not in whole  # a distributed threshold
    assert "MLP_MIN_GAIN" not in whole  # a core one
    assert decode.DECODE_KNEE_FACTOR is thresholds.DECODE_KNEE_FACTOR
    traffic = {name for name, _, _ in thresholds.described(collectives)}
    assert traffic == {"BYTES_LOW", "BYTES_HIGH", "ALPHA_BETA_FACTOR", "SAME_EXCHANGE_FACTOR"}
    pipeline = {name for name, _, _ in thresholds.described(pipelines)}
    assert pipeline == {"BUBBLE_MARGIN", "PIPELINE_MAX_SLOWDOWN", "PREDICTION_FACTOR"}
    assert collectives.SAME_EXCHANGE_FACTOR is thresholds.SAME_EXCHANGE_FACTOR


def _defined_names(tree: ast.Module) -> set[str]:
    """Every name a module binds at its top level (assignments, functions and classes)."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign | ast.AugAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
    return names


def test_the_dated_changes_live_in_the_change_log_alone() -> None:
    # no module keeps a dated history as a string constant any more ...
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        kept = sorted(name for name in _defined_names(tree) if name.endswith("_CHANGES"))
        assert not kept, f"{path.relative_to(SRC)} keeps {kept}: they belong in docs/changes.toml"
    assert not hasattr(thresholds, "changes")
    # ... and the entries that moved there are dated, under their topics, with what, why and effect
    logged = [(c.date.isoformat(), c.topic) for c in load_changes(CHANGE_LOG)]
    moved = [
        ("2026-12-01", "MLP knee"),
        ("2026-12-01", "decode floor"),
        ("2026-12-04", "decode floor"),
        ("2026-12-04", "GPU sizes"),
        ("2026-12-06", "roofline claims"),
        ("2026-12-06", "ratio claims"),
        ("2026-12-06", "MLP crossover"),
        ("2026-12-06", "DLRM lookups"),
        ("2026-12-06", "pass regions"),
        ("2026-12-06", "direction-only claims"),
        ("2026-12-06", "memory level"),
        ("2026-12-06", "RNN cost per step"),
    ]
    assert [entry for entry in logged if entry in moved] == moved  # each once, in date order
    by_topic = {c.topic: c for c in load_changes(CHANGE_LOG)}
    assert "4.5x (fails)" in by_topic["MLP knee"].why
    assert "`DECODE_KNEE_FACTOR`" in by_topic["pass regions"].what
    assert by_topic["memory level"].effect == "No recorded run's count moved."


# -- sizes: one file, one loader, no torch -------------------------------------------------------
def test_the_whole_model_sizes_come_from_the_presets_file() -> None:
    from gpuconcepts.sizes import load_part_sizes
    from gpuconcepts.sizing import RunSizes

    def wholemodel_sizes(device: str, quick: bool) -> object:
        cls = "cpu" if device == "cpu" else "cuda-large"
        return RunSizes.resolve(device, quick, free_bytes=2**36, device_cls=cls).wholemodel

    cpu, cuda = wholemodel_sizes("cpu", quick=False), wholemodel_sizes("cuda", quick=True)
    assert (cpu.batches, cpu.cached, cpu.long_cached, cpu.repeats) == ((1, 4, 16, 64), 16, 16384, 7)
    assert (cpu.decode.d, cpu.decode.dtype) == (768, "float32")
    assert (cuda.decode.dtype, cuda.repeats, cuda.batches[-1]) == ("bfloat16", 6, 2048)
    assert cpu.backward == load_part_sizes("wholemodel", False, device="cpu")["backward"]
    assert wholemodel_sizes("cpu", quick=True).repeats == 6


def test_a_part_table_missing_or_per_device_is_named(tmp_path: Path) -> None:
    import pytest

    from gpuconcepts.errors import GpuConceptsError
    from gpuconcepts.sizes import load_part_sizes

    with pytest.raises(GpuConceptsError, match="sizes per device"):
        load_part_sizes("wholemodel", quick=False)
    with pytest.raises(GpuConceptsError, match="no sizes"):
        load_part_sizes("serving", quick=False)
    path = tmp_path / "presets.toml"
    path.write_text("[distributed]\nrepeats = 3\n")
    with pytest.raises(GpuConceptsError, match=r"no table \[wholemodel.cpu\]"):
        load_part_sizes("wholemodel", quick=False, device="cpu", path=path)


def test_a_wrong_whole_model_size_is_refused_naming_it(monkeypatch, tmp_path: Path) -> None:
    import pytest

    from gpuconcepts import sizes
    from gpuconcepts.errors import GpuConceptsError
    from gpuconcepts.sizing import RunSizes

    text = sizes.presets_path().read_text()
    head, part = text.split("\n[wholemodel.cpu]\n")
    for right, wrong, error in (
        ("\ncached = 16\n", '\ncached = "sixteen"\n', r"\[wholemodel.cpu\].cached"),
        ("\nbatches = [1, 4, 16, 64]\n", '\nbatches = [1, "4"]\n', r"cpu\].batches\[1\]"),
        ("\ntraining_batch = 2\n", "\ntraining_batch = 2\ntraining_batches = 2\n",
         "unknown sizes training_batches"),
        ('"decode-cpu", d = 768,', '"decode-cpu", d = 0,',
         r"cpu\].decode: .*d \(model width\) must be a positive"),
    ):  # fmt: skip
        assert part.count(right) == 1, right
        path = tmp_path / "presets.toml"
        path.write_text(f"{head}\n[wholemodel.cpu]\n{part.replace(right, wrong)}")
        monkeypatch.setattr(sizes, "presets_path", lambda path=path: path)
        with pytest.raises(GpuConceptsError, match=error):
            RunSizes.resolve("cpu", quick=False, free_bytes=2**36)


# -- judging: one function ----------------------------------------------------------------------
KIND_JUDGES = ("judge_claims", "judge_wholemodel")
"""The judges of one kind of claim each, which only claims.judge.judge_all calls."""


def kind_judge_calls(source: str) -> list[int]:
    """Lines of ``source`` that call a judge of one kind directly."""
    return [
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call)
        and (
            (isinstance(node.func, ast.Name) and node.func.id in KIND_JUDGES)
            or (isinstance(node.func, ast.Attribute) and node.func.attr in KIND_JUDGES)
        )
    ]


def test_every_claim_is_judged_through_judge_all() -> None:
    callers = [
        f"{path.relative_to(SRC).as_posix()}:{line}"
        for path in sorted(SRC.rglob("*.py"))
        if path.name != "judge.py"
        for line in kind_judge_calls(path.read_text())
    ]
    assert callers == []
    planted = "from gpuconcepts.claims import judge_claims\nresults = judge_claims(lab, sizes)\n"
    assert kind_judge_calls(planted) == [2]
    assert kind_judge_calls("x = wholemodel.judge_wholemodel(r, p)\n") == [1]


def test_judge_all_judges_each_kind_as_its_judges_do() -> None:
    """judge_all gives the core claims' judges' verdicts, then the whole model's, then the
    distributed ones, in that order; a saved run judged again comes through it too."""
    from synthetic import PEAKS, synthetic_lab, synthetic_run
    from test_claims import TINY

    from gpuconcepts.claims.experiments import judge_claims, measure_claims
    from gpuconcepts.claims.judge import judge_all
    from gpuconcepts.claims.wholemodel import judge_wholemodel

    run = synthetic_run()
    assert run.wholemodel is not None
    assert run.distributed is not None
    core = judge_claims(
        measure_claims(synthetic_lab(PEAKS, run.provenance.device_name), TINY), TINY
    )
    lab = synthetic_lab(PEAKS, run.provenance.device_name)
    lab.cache_bytes = measured_of(run).cache_bytes  # the whole model's judges read the run's cache
    measured = measure_claims(lab, TINY)
    whole = judge_wholemodel(
        run.wholemodel, run.peaks, cache_bytes=lab.cache_bytes, device=lab.label
    )
    expected = [*core, *whole, *judge_distributed(run.distributed)]
    judged = judge_all(measured, TINY, wholemodel=run.wholemodel, distributed=run.distributed)
    assert [r.to_dict() for r in judged] == [r.to_dict() for r in expected]
    # the synthetic run records no core sizes: judged again, it holds its parts' claims
    parts = [*whole, *judge_distributed(run.distributed)]
    assert [r.to_dict() for r in rejudged(run)] == [r.to_dict() for r in parts]
    assert [r.key for r in judge_all(measured, wholemodel=run.wholemodel)] == [r.key for r in whole]
    kinds = [registry_kind(r.key) for r in judged]
    assert kinds == sorted(kinds, key=["core", "whole model", "distributed"].index)
    assert set(kinds) == {"core", "whole model", "distributed"}


def registry_kind(key: str) -> str:
    from gpuconcepts.results.registry import CLAIMS

    return CLAIMS[key].kind
