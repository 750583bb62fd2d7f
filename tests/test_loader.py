"""A run file that fights back: every wrong value is one line naming the file and the field,
and `verify --run` and `compare` exit 2 with no traceback."""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from synthetic import synthetic_run

from gpuconcepts import cli
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.run import MAX_DEPTH, MAX_RUN_BYTES, Run, load

Edit = Callable[[dict[str, Any]], object]

BASE: dict[str, Any] = json.loads(synthetic_run().to_json())


def _edited(edit: Edit) -> dict[str, Any]:
    data = copy.deepcopy(BASE)
    edit(data)
    return data


# One wrong value per kind of field (bool, whole number, string, Literal, the default sign, a
# positive size, a lower bound, a finite number, a tuple's length, an object, an optional
# entry, a nested record), in each part of a run.
FIELDS: list[tuple[str, Edit, str]] = [
    ("bool", lambda d: d["provenance"].update(quick="no"),
     "provenance: quick must be true or false; got 'no'"),
    ("object, null", lambda d: d["provenance"].update(sizes=None),
     "provenance: sizes must be an object; got None"),
    ("object, number", lambda d: d["provenance"].update(sizes=7),
     "provenance: sizes must be an object; got 7"),
    ("whole number", lambda d: d["provenance"].update(cpu_threads="two"),
     "provenance: cpu_threads must be a whole number; got 'two'"),
    ("positive", lambda d: d["provenance"].update(cache_bytes=0),
     "provenance: cache_bytes must be positive; got 0"),
    ("positive threads", lambda d: d["provenance"].update(cpu_threads=0),
     "provenance: cpu_threads must be positive; got 0"),
    ("optional string", lambda d: d["provenance"].update(gpu_name=3),
     "provenance: gpu_name must be a string; got 3"),
    ("sizes: claims", lambda d: d["provenance"]["sizes"].update(claims=5),
     "provenance.sizes: claims must be an object; got 5"),
    ("sizes: presets", lambda d: d["provenance"]["sizes"]["presets"]["mlp"].update(B="4"),
     r"provenance.sizes: presets['mlp']['B'] must be a whole number; got '4'"),
    ("string", lambda d: d["peaks"].update(device=None),
     "peaks: device must be a string; got None"),
    ("tuple length", lambda d: d["peaks"].update(sweep=[[1]]),
     "peaks: sweep[0] must hold 2 entries; got 1"),
    ("nested record", lambda d: d["peaks"].update(levels=[{"name": "L2", "size_bytes": 0,
                                                           "bytes_per_s": 1e9}]),
     "peaks: levels[0].size_bytes must be positive; got 0"),
    ("measurement bool", lambda d: d["measurements"][0].update(flush="no"),
     "measurements[0]: flush must be true or false; got 'no'"),
    ("measurement sign", lambda d: d["measurements"][1].update(bytes=-8),
     "measurements[1]: bytes must be 0 or more; got -8"),
    ("literal verdict", lambda d: d["claims"][0].update(verdict="maybe"),
     "claims[0]: verdict must be 'holds' or 'fails' or 'undecided' or 'not visible'; got 'maybe'"),
    ("verdict against its test", lambda d: d["claims"][0].update(verdict="fails"),
     "claims[0]: verdict is 'fails', but its own test and gates give 'holds' (an edited file?)"),
    ("claim bool", lambda d: d["claims"][0].update(visible="no"),
     "claims[0]: visible must be true or false; got 'no'"),
    ("claim string", lambda d: d["claims"][1].update(key=5),
     "claims[1]: key must be a string; got 5"),
    ("claim gate", lambda d: d["claims"][2].update(gates=[{"condition": "c", "met": "yes"}]),
     "claims[2]: gates[0].met must be true or false; got 'yes'"),
    ("claim number", lambda d: d["claims"][0].update(measured="4"),
     "claims[0]: measured must be a number, null, 'inf' or '-inf'; got '4'"),
    ("claim pair", lambda d: d["claims"][0].update(interval=[1.0]),
     "claims[0]: interval must hold 2 entries; got 1"),
    ("whole model, negative count", lambda d: d["wholemodel"]["backward"].update(tokens=-5),
     "wholemodel: backward.tokens must be 0 or more; got -5"),
    ("whole model, negative time",
     lambda d: d["wholemodel"]["decode"]["seconds"][0].__setitem__(0, -1e-3),
     r"wholemodel: decode.seconds[0][0] must be 0 or more; got -0.001"),
    ("distributed, negative bytes",
     lambda d: d["distributed"]["collectives"][0].update(formula_bytes=-1.0),
     "distributed: collectives[0].formula_bytes must be 0 or more; got -1.0"),
    ("distributed, world size", lambda d: d["distributed"].update(world_size=1),
     "distributed: world_size must be at least 2; got 1"),
    ("distributed, literal", lambda d: d["distributed"].update(backend="mpi"),
     "distributed: backend must be 'gloo' or 'nccl'; got 'mpi'"),
    ("distributed, cores", lambda d: d["distributed"].update(cores=0),
     "distributed: cores must be positive; got 0"),
]  # fmt: skip


@pytest.mark.parametrize(("kind", "edit", "message"), FIELDS, ids=[f[0] for f in FIELDS])
def test_one_wrong_value_per_field_kind_is_named(
    kind: str, edit: Edit, message: str, tmp_path: Path
) -> None:
    del kind
    path = tmp_path / "r.json"
    path.write_text(json.dumps(_edited(edit)))
    with pytest.raises(GpuConceptsError) as caught:
        load(path)
    assert str(caught.value) == f"{path}: {message}"


TEXT = synthetic_run().to_json()

# Numbers JSON may spell but no run holds, and nesting, anywhere in the file: named by path.
NUMBERS: list[tuple[str, str, str]] = [
    ("NaN in peaks", TEXT.replace('"flops_per_s": ', '"flops_per_s": NaN, "was": ', 1),
     "peaks.flops_per_s must be a finite number; got NaN"),
    ("Infinity in provenance", TEXT.replace('"seconds": ', '"seconds": Infinity, "was": ', 1),
     "provenance.seconds must be a finite number; got Infinity"),
    ("-Infinity in a part",
     TEXT.replace('"n_params": ', '"n_params": -Infinity, "was": ', 1),
     "wholemodel.backward.n_params must be a finite number; got -Infinity"),
    ("1e999", TEXT.replace('"seconds": ', '"seconds": 1e999, "was": ', 1),
     "provenance.seconds must be a finite number; got Infinity"),
    ("NaN in a measurement", TEXT.replace('"raw_seconds": [', '"raw_seconds": [NaN, ', 1),
     "measurements[0].raw_seconds[0] must be a finite number; got NaN"),
    ("5,000 digits", TEXT.replace('"cpu_threads": 2', '"cpu_threads": ' + "9" * 5000),
     ("provenance.cpu_threads: a whole number of 5,000 digits is beyond what a run holds "
     "(64 bits)")),
    ("2**64", TEXT.replace('"cpu_threads": 2', f'"cpu_threads": -{2**64}'),
     f"provenance.cpu_threads: -{2**64} is beyond what a run holds (64 bits)"),
    ("nested 500 deep", TEXT.replace('"provenance": {', '"provenance": {"deep": ' + "[" * 500
                                     + "]" * 500 + ", ", 1),
     f"provenance: nested deeper than a run can be (at most {MAX_DEPTH} levels)"),
    ("nested 100,000 deep", '{"schema": 2, "facts": ' + "[" * 100_000 + "]" * 100_000 + "}",
     f"nested deeper than a run can be (at most {MAX_DEPTH} levels)"),
]  # fmt: skip


DUPLICATES = [
    ("at the top", TEXT.replace('"schema": ', '"schema": 1, "schema": ', 1), "schema"),
    ("in the provenance", TEXT.replace('"cpu_threads": 2', '"cpu_threads": 64, "cpu_threads": 2', 1),
     "cpu_threads"),
]  # fmt: skip


@pytest.mark.parametrize(("case", "text", "key"), DUPLICATES, ids=[n[0] for n in DUPLICATES])
def test_a_key_given_twice_is_refused(case: str, text: str, key: str) -> None:
    """JSON keeps the last of two values silently: which one the file meant is a guess."""
    del case
    with pytest.raises(GpuConceptsError) as caught:
        Run.from_json(text, source="r.json")
    assert str(caught.value) == (
        f"r.json: the key {key!r} is given twice in one object; a run gives each field once"
    )


@pytest.mark.parametrize(("case", "text", "message"), NUMBERS, ids=[n[0] for n in NUMBERS])
def test_numbers_no_run_holds_are_named(case: str, text: str, message: str) -> None:
    del case
    with pytest.raises(GpuConceptsError) as caught:
        Run.from_json(text, source="r.json")
    assert str(caught.value) == f"r.json: {message}"


@pytest.mark.timeout(20)
def test_a_fifo_with_no_writer_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    with pytest.raises(GpuConceptsError) as caught:
        load(fifo)
    assert str(caught.value) == f"{fifo}: is a FIFO (named pipe), not a run file"


@pytest.mark.timeout(20)
def test_devices_and_directories_are_refused_without_reading(tmp_path: Path) -> None:
    with pytest.raises(GpuConceptsError) as caught:
        load("/dev/zero")
    assert str(caught.value) == "/dev/zero: is a character device, not a run file"
    with pytest.raises(GpuConceptsError) as caught:
        load(tmp_path)
    assert str(caught.value) == f"{tmp_path}: is a directory, not a run file"


@pytest.mark.timeout(20)
def test_a_file_over_64_mib_is_refused_before_reading(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    with big.open("wb") as stream:  # sparse: no disk is used
        stream.truncate(MAX_RUN_BYTES + 1)
    with pytest.raises(GpuConceptsError) as caught:
        load(big)
    assert str(caught.value) == f"{big}: is 64 MiB; a run file is at most 64 MiB"
    exact = tmp_path / "exact.json"
    with exact.open("wb") as stream:
        stream.truncate(MAX_RUN_BYTES)  # at the limit it is read, and found not to be JSON
    with pytest.raises(GpuConceptsError, match="not a valid JSON file"):
        load(exact)


def test_bytes_that_are_not_text_are_named(tmp_path: Path) -> None:
    binary = tmp_path / "r.json"
    binary.write_bytes(b'{"schema": 2, \xff}')
    with pytest.raises(GpuConceptsError) as caught:
        load(binary)
    assert str(caught.value) == f"{binary}: not a run file (not UTF-8 text: byte 14 is 0xff)"


@pytest.mark.parametrize(
    "command", [["verify", "--run"], ["compare"], ["verify", "--json", "--run"]]
)
@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("fifo", "is a FIFO (named pipe), not a run file"),
        ("/dev/zero", "is a character device, not a run file"),
        ("nan", "peaks.flops_per_s must be a finite number; got NaN"),
        ("quick", "provenance: quick must be true or false; got 'no'"),
        ("world", "distributed: world_size must be at least 2; got 1"),
    ],
)
@pytest.mark.timeout(60)
def test_the_cli_says_one_line_and_exits_2(
    command: list[str], bad: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "r.json"
    if bad == "fifo":
        os.mkfifo(path)
    elif bad == "/dev/zero":
        path = Path("/dev/zero")
    elif bad == "nan":
        path.write_text(TEXT.replace('"flops_per_s": ', '"flops_per_s": NaN, "was": ', 1))
    else:
        field = FIELDS[0] if bad == "quick" else FIELDS[-3]
        path.write_text(json.dumps(_edited(field[1])))
    assert cli.main([*command, str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"gpuconcepts {command[0]}: error: {path}: {message}\n"
