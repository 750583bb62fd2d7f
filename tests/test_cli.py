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


# -- issue 14: every failure is one line and exit 2, torch present or not ---------------------

BIG = str(7**3500)  # 2,958 digits: exact integer arithmetic, no OverflowError

ONE_LINE_FAILURES = [
    (["calc", "mlp_intensity", "B=1", "d_in=1", "d_out=1", "s=1e-320"], "beyond what a float"),
    (["calc", "embedding_memory", "N=10", "d=10", "s=1e-320"], "beyond what a float can hold"),
    (["calc", "embedding_memory", "N=1e30", "N=2", "d=1", "s=1"], "N is given twice"),
    (["calc", "embedding_memory", "N=1.5e0", "d=1", "s=1"], "N (rows in the embedding table) "),
    (["calc", "embedding_memory", "N=nan", "d=1", "s=1"], "N must be finite; got 'nan'"),
    (["calc", "embedding_memory", "N=1", "d=1", "s=inf"], "s must be finite; got 'inf'"),
    (["calc", "embedding_memory", "N=1e99999", "d=1", "s=1"], "fewer than 10,000 digits"),
    (["calc", "embedding_memory", "N=1", "d=1", "s=-0.5"], "must be positive; got -0.5"),
    (["--bogus"], "unknown option '--bogus'"),
    (["calc", "nope"], "unknown formula 'nope' (gpuconcepts formulas lists them all)"),
    (["calc", "embedding_memory", "--bogus"], "unrecognized arguments: --bogus"),
    # a power computed exactly: gamma=10**9 grew the process by gigabytes for minutes
    (
        ["model", "--draft-alpha", "0.5", "--draft-gamma", "1000000000"],
        "must keep alpha^(gamma + 1) within 1,048,576 bits exact",
    ),
    (
        ["calc", "speculative_expected_tokens", "alpha=0.9999999999", "gamma=1e6"],
        "got gamma=1,000,000",
    ),
    # an error that quotes a whole number beyond Python's 4,300-digit str() limit
    (
        ["calc", "zero_memory_per_device", "stage=1e9999", "n_params=1", "k_opt=1", "N_d=1"],
        "must be 0, 1, 2 or 3; got 1×10⁹⁹⁹⁹",
    ),
    (["calc", "embedding_memory", "N=-1e9999", "d=1", "s=1"], "must be positive; got -1×10⁹⁹⁹⁹"),
]


@pytest.fixture(params=["torch present", "torch absent"])
def torch_state(request, monkeypatch):
    if request.param == "torch absent":
        monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` now fails
    return request.param


@pytest.mark.usefixtures("torch_state")
@pytest.mark.parametrize(("argv", "message"), ONE_LINE_FAILURES)
def test_every_failure_is_one_line_and_exit_2(capsys, argv, message):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert message in captured.err
    assert captured.err.count("\n") == 1
    assert "; (" not in captured.err


@pytest.mark.parametrize("command", ["profile", "verify"])
def test_measuring_without_torch_names_the_extra(capsys, monkeypatch, command):
    monkeypatch.setitem(sys.modules, "torch", None)
    assert main([command, "--quick"]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"gpuconcepts {command}: error: `{command}` needs torch: pip install gpuconcepts[kernels]\n"
    )


def test_exponent_for_a_count_is_exact(capsys):
    assert main(["calc", "embedding_memory", "N=1e30", "d=1", "s=1", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["value"] == 10**30  # not 1,000,000,000,000,000,019,884,624,838,656
    assert record["inputs"]["N"] == 10**30


def test_huge_integers_are_exact(capsys):
    assert main(["calc", "embedding_memory", f"N={BIG}", "d=10", "s=1e308", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["value"] == 7**3500 * 10 * 10**308
    assert record["text"].startswith(f"{7**3500 * 10 * 10**308:,} bytes (")
    assert main(["calc", "embedding_memory", "s=1e308", "N=10", "d=10"]) == 0
    assert capsys.readouterr().out.startswith("10" + ",000" * 103 + " bytes")


def test_json_never_holds_infinity_or_nan(capsys):
    for values in (["s=0.1"], ["s=1e-300"], ["s=3"]):
        assert main(["calc", "mlp_intensity", "B=1", "d_in=1", "d_out=1", *values, "--json"]) == 0
        out = capsys.readouterr().out
        assert "Infinity" not in out
        assert "NaN" not in out
        json.loads(out, parse_constant=lambda c: pytest.fail(f"non-JSON constant {c}"))


@pytest.mark.parametrize(
    ("command", "given", "meant"),
    [
        ("profile", "bf16", "bfloat16"),
        ("profile", "tf32", "tf32"),
        ("verify", None, None),
        ("analyze", "fp16", "float16"),
        ("analyze", "bfloat16", "bfloat16"),
        ("model", "fp32", "fp32"),  # the model's shape reads it (ModelShape), alias and all
    ],
)
def test_every_dtype_option_takes_the_aliases(command: str, given: str | None, meant: str) -> None:
    from gpuconcepts.cli import build_parser

    extra = {"analyze": ["m.py:f", "--input", "2x3"]}.get(command, [])
    flags = [] if given is None else ["--dtype", given]
    args = build_parser().parse_args([command, *extra, *flags])
    assert getattr(args, "dtype", None) == meant


def test_a_dtype_no_table_knows_is_refused_with_the_names(capsys: pytest.CaptureFixture[str]):
    assert main(["profile", "--dtype", "half"]) == 2
    assert "unknown dtype 'half'; one of float32 (fp32), tf32, float16 (fp16), bfloat16 (bf16)" in (
        capsys.readouterr().err
    )
