"""The command line: output, JSON contract and one-line errors with exit status 2."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from gpuconcepts.cli import main
from gpuconcepts.formulas import CATALOGUE


def test_calc_prints_value_units_and_derivation(capsys):
    assert main(["calc", "embedding_memory", "N=100000000", "d=128", "s=4"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "51,200,000,000 bytes (51.2 GB, 47.68 GiB)"
    assert out[1].strip() == (
        r"\text{Memory} = N d s = 100{,}000{,}000 \times 128 \times 4 = 51{,}200{,}000{,}000"
    )


def test_calc_json_contract(capsys):
    assert main(["calc", "kv_cache_memory", "B=2", "S=1_000", "d=512", "s=2", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["name"] == "kv_cache_memory"
    assert record["value"] == 4_096_000
    assert record["unit"] == "bytes"
    assert record["binary"] == "3.91 MiB"
    assert record["latex"] == r"\text{KV Cache} = 2 B S d s"
    assert record["worked"].endswith("= 4{,}096{,}000")
    assert record["inputs"] == {"B": 2, "S": 1000, "d": 512, "s": 2}


def test_calc_accepts_exponent_for_counts_and_fraction_for_s(capsys):
    assert main(["calc", "embedding_memory", "N=1e8", "d=128", "s=0.5", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["value"] == 6_400_000_000


def test_formulas_lists_the_catalogue(capsys):
    assert main(["formulas", "--json"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in records] == list(CATALOGUE)
    mlp = next(r for r in records if r["name"] == "mlp_flops")
    assert mlp["latex"] == r"\text{FLOPs} = 2 B d_{in} d_{out}"
    assert {s["name"] for s in mlp["symbols"]} == {"B", "d_in", "d_out"}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["calc", "mlp_macs", "B=0", "d_in=1", "d_out=1"],
            "B (batch size) must be positive; got 0",
        ),
        (
            ["calc", "mlp_macs", "B=2.5", "d_in=1", "d_out=1"],
            "must be a whole number (it is a count)",
        ),
        (["calc", "mlp_macs", "B=two", "d_in=1", "d_out=1"], "B must be a number; got 'two'"),
        (["calc", "mlp_macs", "B=1", "d_in=1"], "missing value for d_out"),
        (["calc", "mlp_macs", "B=1", "d_in=1", "d_out=1", "q=3"], "unknown symbol 'q'"),
        (["calc", "mlp_macs", "B"], "expected SYMBOL=VALUE, got 'B'"),
        (["calc", "no_such"], "unknown formula 'no_such'"),
    ],
)
def test_bad_input_is_one_line_exit_2(capsys, argv, message):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert message in captured.err
    assert captured.err.count("\n") == 1
    assert "Traceback" not in captured.err


def test_module_entry_point_and_usage_errors():
    run = subprocess.run(
        [sys.executable, "-m", "gpuconcepts", "calc", "attention_scores", "S=2000"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0
    assert run.stdout.startswith("4,000,000 (4 million)\n")
    bad = subprocess.run(
        [sys.executable, "-m", "gpuconcepts", "calcc"], capture_output=True, text=True, check=False
    )
    assert bad.returncode == 2
    assert bad.stderr.count("\n") == 1
    assert "invalid choice: 'calcc'" in bad.stderr
