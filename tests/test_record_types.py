"""One wrong type per field of every record a run holds, generated from the dataclasses' own
annotations: a field added to a record is covered without a line here. Each wrong value is
refused with one line naming the file and the field's path."""

from __future__ import annotations

import copy
import dataclasses
import json
import types
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin, get_type_hints

import pytest
from synthetic import synthetic_run

from gpuconcepts import cli
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.measure import Measurement
from gpuconcepts.results.claim import ClaimRecord
from gpuconcepts.results.distributed import DistributedReport
from gpuconcepts.results.wholemodel import WholeModelResults
from gpuconcepts.roofline import Peaks
from gpuconcepts.run import Run, load
from gpuconcepts.run.provenance import Provenance


def _run() -> Run:
    """The synthetic run, its first claim with a second look (written only where one was
    taken), so that every field of a stored claim has its case."""
    run = synthetic_run()
    first = dataclasses.replace(run.claims[0], second_look=True)
    return dataclasses.replace(run, claims=(first, *run.claims[1:]))


BASE: dict[str, Any] = json.loads(_run().to_json())

_NOT = object()
"""No wrong type exists for this annotation (``Any``: every value is right)."""


def _inner(kind: Any) -> Any:
    """What an ``Annotated`` or optional annotation holds."""
    return next(a for a in get_args(kind) if a is not type(None))


def _wrong(kind: Any) -> object:
    """A JSON value of the wrong type for ``kind``."""
    origin = get_origin(kind)
    if origin is Annotated:
        return _wrong(get_args(kind)[0])
    if origin in (Union, types.UnionType):
        options = [a for a in get_args(kind) if a is not type(None)]
        return "x" if set(options) == {int, float} else _wrong(options[0])
    if kind is Any or kind is object:
        return _NOT
    if kind is bool or origin is Literal:
        return "not-one-of-them"
    if kind is str:
        return 3
    if kind in (int, float):
        return "x"
    return True  # a list, an object or a record: a bool is none of them


def _paths(kind: Any, record: object, where: str) -> Iterator[tuple[str, tuple[object, ...]]]:
    """(path for the message, keys into the record) of every field a record holds, nested
    records and each record's first list entry included."""
    origin = get_origin(kind)
    if origin is Annotated or (origin in (Union, types.UnionType)):
        inner = _inner(kind)
        if origin is Annotated or len(get_args(kind)) == 2:
            yield from _paths(inner, record, where)
        return
    if origin is tuple and isinstance(record, list) and record:
        args = get_args(kind)
        for sub, keys in _paths(args[0], record[0], f"{where}[0]"):
            yield sub, (0, *keys)
        return
    if isinstance(kind, type) and dataclasses.is_dataclass(kind) and isinstance(record, Mapping):
        hints = get_type_hints(kind, include_extras=True)
        for f in dataclasses.fields(kind):
            if f.name not in record:
                continue
            name = f"{where}.{f.name}" if where else f.name
            yield name, (f.name,)
            for sub, keys in _paths(hints[f.name], record[f.name], name):
                yield sub, (f.name, *keys)


def _cases() -> Iterator[tuple[str, tuple[object, ...], object]]:
    """(message path, keys from the run's top, wrong value) for every field of every record."""
    parts: list[tuple[str, Any, tuple[object, ...]]] = [
        ("provenance", Provenance, ("provenance",)),
        ("peaks", Peaks, ("peaks",)),
        ("measurements[0]", Measurement, ("measurements", 0)),
        ("wholemodel", WholeModelResults, ("wholemodel",)),
        ("distributed", DistributedReport, ("distributed",)),
        ("claims[0]", ClaimRecord, ("claims", 0)),  # stored flat: the test's fields beside
    ]
    hints: dict[str, Any] = {}
    for top, kind, keys in parts:
        record: Any = BASE
        for key in keys:
            record = record[key]
        for path, sub in _paths(kind, record, ""):
            hints[f"{top}: {path}"] = (keys + sub, _leaf_kind(kind, sub))
    for path, (keys, kind) in hints.items():
        wrong = _wrong(kind)
        if wrong is not _NOT:
            yield path, keys, wrong


def _leaf_kind(kind: Any, keys: tuple[object, ...]) -> Any:
    """The annotation the last of ``keys`` reaches from ``kind``."""
    for key in keys:
        while get_origin(kind) in (Annotated, Union, types.UnionType):
            kind = _inner(kind)
        if isinstance(key, int):
            kind = get_args(kind)[0]
        else:
            kind = get_type_hints(kind, include_extras=True)[key]
    return kind


CASES = list(_cases())


def _edited(keys: tuple[object, ...], wrong: object) -> dict[str, Any]:
    data = copy.deepcopy(BASE)
    target: Any = data
    for key in keys[:-1]:
        target = target[key]
    target[keys[-1]] = wrong
    return data


def test_every_record_of_a_run_is_covered() -> None:
    """The cases reach into every part, so a record left out of the walk is seen here."""
    tops = {path.split(":")[0] for path, _, _ in CASES}
    assert tops == {"provenance", "peaks", "measurements[0]", "wholemodel", "distributed",
                    "claims[0]"}  # fmt: skip
    assert len(CASES) > 80
    assert "distributed: collectives[0].seconds" in {p for p, _, _ in CASES}
    paths = {p for p, _, _ in CASES}
    assert "claims[0]: plot.series[0].x" in paths
    # every field of a stored claim and of its gates has its case
    claim = [f"claims[0]: {f.name}" for f in dataclasses.fields(ClaimRecord)]
    assert set(claim) | {"claims[0]: gates[0].condition", "claims[0]: gates[0].met"} <= paths


@pytest.mark.parametrize(("path", "keys", "wrong"), CASES, ids=[c[0] for c in CASES])
def test_a_wrong_type_is_refused_naming_the_field(
    path: str, keys: tuple[object, ...], wrong: object
) -> None:
    with pytest.raises(GpuConceptsError) as caught:
        Run.from_dict(_edited(keys, wrong), source="r.json")
    message = str(caught.value)
    assert "\n" not in message
    top, field = path.split(": ")
    assert message.startswith(f"r.json: {top.split('[')[0]}"), message
    assert f"{field} must be" in message, message
    assert f"got {wrong!r}" in message, message


def _records() -> Iterator[tuple[str, tuple[object, ...]]]:
    """(message path, keys from the run's top) of every record a run holds: each field's
    parent, so nested records and each list's first entry are included."""
    for path, keys, _ in CASES:
        top, inner = path.split(": ")
        parent = inner.rpartition(".")[0]
        yield (f"{top}: {parent}" if parent else top), keys[:-1]


RECORDS = sorted(set(_records()))


def test_every_record_is_checked_for_unknown_keys() -> None:
    paths = {path for path, _ in RECORDS}
    assert {"provenance", "peaks", "measurements[0]", "wholemodel", "distributed", "claims[0]",
            "claims[0]: gates[0]", "claims[0]: plot.series[0]", "distributed: collectives[0]",
            "wholemodel: decode.shape"} <= paths  # fmt: skip


@pytest.mark.parametrize(("path", "keys"), RECORDS, ids=[r[0] for r in RECORDS])
def test_an_unknown_key_is_refused_naming_it(
    path: str, keys: tuple[object, ...], tmp_path: Path
) -> None:
    data = copy.deepcopy(BASE)
    target: Any = data
    for key in keys:
        target = target[key]
    target["typo"] = 1
    file = tmp_path / "r.json"
    file.write_text(json.dumps(data))
    top, _, inner = path.partition(": ")
    field = f"{inner}.typo" if inner else "typo"
    with pytest.raises(GpuConceptsError) as caught:
        load(file)
    assert str(caught.value) == f"{file}: {top}: unknown field {field!r}"


def test_the_derived_keys_are_read_and_ignored() -> None:
    """A run's file carries the peaks' ridge point and each measurement's summary for its
    readers; reading accepts them and nothing else beside the fields."""
    assert "ridge_point" in BASE["peaks"]
    assert "summary" in BASE["measurements"][0]
    assert {"pass_region_text", "verdict", "reason"} <= set(BASE["claims"][0])
    assert Run.from_dict(copy.deepcopy(BASE)) == _run()


@pytest.mark.parametrize(
    ("command", "keys", "wrong", "message"),
    [
        ("verify", ("provenance", "cpu_threads"), "two",
         "provenance: cpu_threads must be a whole number; got 'two'"),
        ("compare", ("provenance", "cpu_threads"), "two",
         "provenance: cpu_threads must be a whole number; got 'two'"),
        ("verify", ("claims", 0, "pass_region"), [2, "high"],
         "claims[0]: pass_region[1] must be a number; got 'high'"),
        ("compare", ("claims", 0, "gates", 0, "met"), "yes",
         "claims[0]: gates[0].met must be true or false; got 'yes'"),
        ("verify", ("claims", 0, "values", "flops_exact"), [1],
         "claims[0]: values['flops_exact'] must be a number, true or false or a string; got [1]"),
        ("verify", ("claims", 0, "verdictt"), "holds", "claims[0]: unknown field 'verdictt'"),
        ("compare", ("claims", 0), 7, "claims[0]: expected an object; got 7"),
        ("verify", ("peaks",), [], "peaks: expected an object; got []"),
    ],
)  # fmt: skip
def test_the_command_line_exits_2_naming_file_and_field(
    command: str,
    keys: tuple[object, ...],
    wrong: object,
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / "r.json"
    path.write_text(json.dumps(_edited(keys, wrong)))
    args = ["verify", "--run", str(path)] if command == "verify" else ["compare", str(path)]
    assert cli.main(args) == 2
    err = capsys.readouterr().err
    assert err == f"gpuconcepts {command}: error: {path}: {message}\n"
