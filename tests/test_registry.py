"""One claim registry: every threshold in claims/thresholds.py, every size in conf/presets.toml,
every claim judged through claims.judge.judge.

The registry itself (claims/registry.py) and the falsifiability of each claim it lists are
checked in tests/test_falsifiable.py.
"""

from __future__ import annotations

import ast
from pathlib import Path

from gpuconcepts.claims import thresholds, wholemodel
from gpuconcepts.distributed import claims as dclaims

SRC = Path(__file__).resolve().parents[1] / "src" / "gpuconcepts"

JUDGING = [*sorted((SRC / "claims").glob("*.py")), SRC / "distributed" / "claims.py"]
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
        if isinstance(target, ast.Name) and target.id.isupper() and value is not None:
            if numeric(value):
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
    assert wholemodel.DECODE_KNEE_FACTOR is thresholds.DECODE_KNEE_FACTOR
    distributed = {name for name, _, _ in thresholds.described(dclaims)}
    assert distributed == {
        "BYTES_LOW",
        "BYTES_HIGH",
        "ALPHA_BETA_FACTOR",
        "SAME_EXCHANGE_FACTOR",
        "BUBBLE_MARGIN",
        "PIPELINE_MAX_SLOWDOWN",
    }
    assert dclaims.SAME_EXCHANGE_FACTOR is thresholds.SAME_EXCHANGE_FACTOR


def test_every_dated_change_is_listed_once_and_dated() -> None:
    listed = thresholds.changes(wholemodel, dclaims)
    names = [name for name, _ in listed]
    assert names == ["MLP_KNEE_CHANGES", "ROOFS_CHANGES", "DECODE_FLOOR_CHANGES"]
    assert all(entry[:4] == "2026" and entry[10] == ":" for _, entry in listed)
