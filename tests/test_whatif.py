"""The what-if panels' JavaScript, run in Node, against the library it is generated from.

Every exported formula is evaluated in JavaScript on random valid inputs and compared with
``gpuconcepts calc NAME ... --json``: exactly for whole results, to 1e-12 for the others; the
worked derivation and the value in words must be the ones the CLI prints. Invalid entries must
get the library's own message for the same value.
"""

from __future__ import annotations

import io
import json
import random
import shutil
import subprocess
from contextlib import redirect_stderr, redirect_stdout
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import sympy as sp

from gpuconcepts import whatif
from gpuconcepts.attention import TILE_ROWS
from gpuconcepts.claims.judge import profile_of
from gpuconcepts.cli import main
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.formulas import CATALOGUE, get
from gpuconcepts.hardware import DEFAULT_GPU, GPUS
from gpuconcepts.questions import question
from gpuconcepts.symbols import SYMBOLS

NODE = shutil.which("node") or "/usr/bin/node"
pytestmark = pytest.mark.skipif(not Path(NODE).exists(), reason="needs Node (/usr/bin/node)")

# Reads {"calls": [[kind, name, {symbol: text}], ...]} on stdin and answers one result per call.
DRIVER = r"""
const G = require(process.argv[2]);
const input = JSON.parse(require("fs").readFileSync(0, "utf8"));
// Python's numbers as JSON: {int: digits}, {float: repr}, {frac: [p, q]}; else as they are.
const py = (a) => (a === null || typeof a !== "object" ? a : "int" in a ? BigInt(a.int)
  : "float" in a ? Number(a.float) : {n: BigInt(a.frac[0]), d: BigInt(a.frac[1])});
const out = input.calls.map(([kind, name, texts]) => {
  if (kind === "parse") return G.parseInput(name, texts).error || null;
  if (kind === "units") return G.UNITS[name](...texts.map(py));
  const values = {};
  for (const [s, t] of Object.entries(texts)) {
    const parsed = G.parseInput(s, t);
    if (parsed.error) return {error: parsed.error};
    values[s] = parsed.value;
  }
  const r = G.evaluate(name, values);
  if (r.error) return {error: r.error};
  const kindOf = G.DATA.formulas[name].kind;
  // describe() is given what Python's is: formula(**values), an int or a float
  return {value: r.text, isInt: r.isInt, worked: G.worked(name, values),
          text: G.UNITS.describe(r.value, kindOf)};
});
process.stdout.write(JSON.stringify(out));
"""


@pytest.fixture(scope="module")
def node_run(tmp_path_factory: pytest.TempPathFactory) -> Any:
    folder = tmp_path_factory.mktemp("whatif")
    script = folder / whatif.FILENAME
    script.write_text(whatif.javascript(), encoding="utf-8")
    driver = folder / "driver.js"
    driver.write_text(DRIVER, encoding="utf-8")

    def run(calls: list[list[Any]]) -> list[Any]:
        done = subprocess.run(
            [NODE, str(driver), str(script)],
            input=json.dumps({"calls": calls}),
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        result: list[Any] = json.loads(done.stdout)
        return result

    return run


def calc(name: str, texts: dict[str, str]) -> dict[str, Any]:
    """``gpuconcepts calc NAME SYM=TEXT ... --json``, in this process."""
    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(io.StringIO()):
        assert main(["calc", name, *(f"{k}={v}" for k, v in texts.items()), "--json"]) == 0
    record: dict[str, Any] = json.loads(out.getvalue())
    return record


def random_text(rng: random.Random, symbol: str) -> str:
    """A valid entry as a reader might type it: small or huge counts, decimals for reals, and
    values inside a symbol's range (a ZeRO stage, a probability)."""
    low, _, high, _ = SYMBOLS[symbol].bounds
    if high is not None:  # a bounded range: each whole value, or a decimal strictly inside
        if SYMBOLS[symbol].is_count:
            return str(rng.randint(int(low), int(high)))
        return rng.choice(["0.5", "0.001", "0.999", repr(round(rng.uniform(0.01, 0.99), 4))])
    if SYMBOLS[symbol].is_count:
        return str(rng.choice([rng.randint(1, 64), rng.randint(1, 10**6), rng.randint(1, 10**24)]))
    if symbol in ("P", "beta"):
        gpu = rng.choice(list(GPUS.values()))
        return repr(
            rng.choice(list(gpu.flops_per_s.values())) if symbol == "P" else gpu.bytes_per_s
        )
    return rng.choice(["0.5", "2", "4", "1.5", repr(round(rng.uniform(0.01, 1e6), 3)), "3e12"])


def has_lattice(name: str) -> bool:
    return get(name).expr.has(sp.Max, sp.Min)


def test_every_exported_formula_matches_python_on_random_inputs(node_run):
    rng = random.Random(20261130)
    cases = [
        (f.name, {s: random_text(rng, s) for s in f.params})
        for f in whatif._exported()
        for _ in range(12)
    ]
    answers = node_run([["eval", name, texts] for name, texts in cases])
    assert {name for name, _ in cases} >= set(whatif.ROOFLINE_FORMULAS)
    derivations = 0
    for (name, texts), js in zip(cases, answers, strict=True):
        record = calc(name, texts)
        where = f"{name} {texts}"
        if isinstance(record["value"], int):
            assert js["isInt"], where
            assert int(js["value"]) == record["value"], where
        else:
            assert not js["isInt"], where
            assert float(js["value"]) == pytest.approx(record["value"], rel=1e-12, abs=0), where
        assert js["text"] == record["text"], where
        # Max and Min order their arguments by value in sympy; and sympy's LaTeX printer
        # writes a product with a non-whole factor such as s = 1.5 as a fraction over 2,
        # where the panel writes 1.5: the derivations are compared for whole inputs.
        whole = all(float(v).is_integer() for v in texts.values())
        if not has_lattice(name) and whole:
            assert js["worked"] == record["worked"], where
            derivations += 1
    assert derivations > len(cases) // 4


def test_large_counts_stay_exact(node_run):
    texts = {"N": "123456789012345678901234567", "d": "98765432109876543", "s": "4"}
    (js,) = node_run([["eval", "embedding_memory", texts]])
    assert js["value"] == str(123456789012345678901234567 * 98765432109876543 * 4)
    assert int(js["value"]) == calc("embedding_memory", texts)["value"]


@pytest.mark.parametrize(
    ("symbol", "text"),
    [("B", "0"), ("B", "-3"), ("B", "6.5"), ("B", "-6.5"), ("s", "-0.5"), ("s", "0"),
     ("B", "abc"), ("s", "4x"), ("d_in", "1e10000"), ("s", "1e-10000"), ("s", " inf"),
    ("s", "NaN"), ("s", "1e1000000000000000000"), ("B", "1_0.5"), ("s", "١ ٢"), ("B", "-0.0"),
     ("stage", "4"), ("stage", "-1"), ("stage", "1.5"), ("N_d", "0")],
)  # fmt: skip
def test_invalid_entries_get_the_library_message(node_run, symbol, text):
    (message,) = node_run([["parse", symbol, text]])
    formula = next(f for f in CATALOGUE.values() if symbol in f.params)
    others = {p: "1" for p in formula.params if p != symbol}
    err = io.StringIO()
    with redirect_stdout(io.StringIO()), redirect_stderr(err):
        status = main(["calc", formula.name, *(f"{k}={v}" for k, v in others.items()),
                       f"{symbol}={text}"])  # fmt: skip
    assert status == 2
    # The CLI says "calc: error: NAME: <rule>"; its number parser omits the meaning.
    library = err.getvalue().strip().split(f"{formula.name}: ", 1)[1]
    assert message.replace(f" ({SYMBOLS[symbol].meaning})", "") in library.replace(
        f" ({SYMBOLS[symbol].meaning})", ""
    )
    assert f"{symbol} ({SYMBOLS[symbol].meaning})" in message


def test_empty_entry_names_the_symbol(node_run):
    (message,) = node_run([["parse", "B", "  "]])
    with pytest.raises(GpuConceptsError, match="missing value for B") as caught:
        get("mlp_macs")(d_in=1, d_out=1)
    assert message == str(caught.value).split(": ", 1)[1].split(";")[0]


def test_panel_defaults_are_the_posts_worked_questions():
    mlp = whatif.PANELS["mlp"].defaults()
    q12 = question(12).steps[0].values
    assert {k: mlp[k] for k in q12} == q12
    # the tiled kernel's tile: the book's one attention-traffic model (gpuconcepts.attention)
    assert whatif.PANELS["transformer"].defaults() == {
        **question(17).steps[0].values,
        "S_tile": TILE_ROWS,
    }
    assert whatif.PANELS["dlrm"].defaults()["N"] == question(10).steps[0].values["N"]


def test_every_panel_symbol_has_a_default_and_every_workload_is_shown():
    for panel in whatif.PANELS.values():
        assert set(panel.defaults()) == set(panel.symbols)
        for w in panel.workloads:
            assert {w.flops, w.bytes, w.intensity} <= set(panel.outputs)


def test_generated_script_is_small_and_carries_no_hand_typed_formula():
    script = whatif.javascript()
    assert len(script.encode()) < 100_000
    runtime = whatif.runtime()
    for formula in CATALOGUE.values():
        assert formula.name not in runtime or formula.name in whatif.ROOFLINE_FORMULAS
    assert runtime.count("CODE.") == runtime.count("CODE.attainable_flops")


def test_generated_script_is_never_committed():
    docs = Path(__file__).resolve().parents[1] / "docs"
    sources = [p for p in docs.rglob(whatif.FILENAME) if "_build" not in p.parts]
    assert not sources, "the docs build generates it into _build; do not commit a copy"


def test_printer_refuses_what_it_cannot_keep_exact():
    from gpuconcepts.formula import Formula

    root = Formula("root", sp.sqrt(SYMBOLS["S"].sym), kind="count", summary="not exact")
    with pytest.raises(GpuConceptsError, match="only whole exponents"):
        whatif.formula_js(root)


def test_unknown_panel_is_named():
    with pytest.raises(GpuConceptsError, match="unknown what-if panel 'mpl'"):
        whatif.panel_html("mpl")


def test_huge_exact_entries_are_the_clis(node_run):
    texts = {"B": "3", "d_in": "1e400", "d_out": "7"}
    (js,) = node_run([["eval", "mlp_macs", texts]])
    record = calc("mlp_macs", texts)
    assert js["value"] == str(21 * 10**400) == str(record["value"])
    assert js["text"] == record["text"] == f"{21 * 10**400:,} MACs (2.1×10⁴⁰¹)"


def test_a_result_no_float_holds_gets_the_library_message(node_run):
    texts = {"B": "1", "d_in": "1", "d_out": "1", "s": "1e-400"}
    (js,) = node_run([["eval", "mlp_intensity", texts]])
    err = io.StringIO()
    with redirect_stdout(io.StringIO()), redirect_stderr(err):
        status = main(["calc", "mlp_intensity", *(f"{k}={v}" for k, v in texts.items())])
    assert status == 2
    assert js == {"error": err.getvalue().strip().split("error: ", 1)[1]}
    assert "beyond what a float can hold" in js["error"]


def _py(value: int | float | Fraction) -> dict[str, Any]:
    """A Python number as the Node driver reads it back, type and all."""
    if isinstance(value, int):
        return {"int": str(value)}
    if isinstance(value, float):
        return {"float": repr(value)}
    return {"frac": [str(value.numerator), str(value.denominator)]}


def _numbers(rng: random.Random) -> list[int | float | Fraction]:
    """Values on every side of the policy's edges: rounding ties, 10**6, 10**15, 2**53, tiny."""
    edges: list[int | float | Fraction] = [
        0, 1, 999, 1000, 999_999, 10**6, 999_995_000, 10**15 - 1, 10**15, 2**53, 2**53 + 1,
        10**30 + 5, 0.0, -0.0, 0.125, 2.675, 0.0001, 0.00009995, 9.995, 99.95, 999.5, 1e15,
        2.0**53, 2.0**60, 11_942_443.5, 1_462_608.4, 315.08, 1e-320, 1.7e308, 48_828.125,
        0.5, 1.5, 2.5, 1023.995, 1_048_575.999, Fraction(2, 3), Fraction(2 * 10**320, 3),
        Fraction(1, 10**320), Fraction(10**70 + 1, 7), Fraction(123_456_789, 1000), -1234.5,
        Fraction(-7, 2), -(10**20), Fraction(125 * 10**40 + 1, 10**43),
        Fraction(125 * 10**70 + 1, 10**73),  # rounded to 60 digits first, as units._decimal does
    ]  # fmt: skip
    for _ in range(150):
        exponent = rng.uniform(-12, 40)
        edges.append(rng.choice([
            int(10**exponent) if exponent > 0 else rng.randint(0, 50),
            10**exponent,
            round(10 ** min(exponent, 20), rng.randint(0, 6)),
            Fraction(rng.randint(1, 10**30), rng.randint(1, 10**12)),
            rng.randint(1, 10**6) / 2 ** rng.randint(1, 8),
        ]))  # fmt: skip
    return edges


# units.py's functions and their names in the runtime's port (UNITS).
PORTED = {
    "significant": "significant", "plain_number": "plainNumber", "exact_number": "exactNumber",
    "latex_number": "latexNumber", "decimal_bytes": "decimalBytes", "binary_bytes": "binaryBytes",
    "describe_bytes": "describeBytes", "in_words": "inWords", "describe": "describe", "si": "si",
    "how_many": "howMany", "times": "times", "percent": "percent",
}  # fmt: skip


def test_number_formatting_is_units_py_value_for_value(node_run):
    from gpuconcepts import units

    numbers = _numbers(random.Random(7))
    floats = [float(v) for v in numbers if abs(v) < 1e300]
    whole_range = ("plain_number", "exact_number", "latex_number", "decimal_bytes",
                   "binary_bytes", "describe_bytes", "in_words")  # fmt: skip
    calls: list[tuple[str, list[Any]]] = [
        *((fn, [v]) for v in numbers for fn in whole_range),
        *(("significant", [v, digits]) for v in numbers for digits in (2, 3, 4)),
        *(("describe", [v, kind]) for v in numbers for kind in ("MACs", "count", "FLOP/byte")),
        *(("describe", [x, "seconds"]) for x in floats),
        *(("si", [x, unit]) for x in floats for unit in ("s", "FLOP/s", "B/s", "")),
        *((fn, [x]) for x in floats for fn in ("how_many", "times", "percent")),
        *(("percent", [x / 1e6, 3]) for x in floats),
    ]
    answers = node_run([["units", PORTED[fn], [_py(args[0]), *args[1:]]] for fn, args in calls])
    expected = [getattr(units, fn)(*args) for fn, args in calls]
    wrong = [
        (call, js, python)
        for call, js, python in zip(calls, answers, expected, strict=True)
        if js != python
    ]
    assert not wrong, wrong[:5]
    assert len(calls) > 3000


def test_run_data_is_the_runs_measured_peaks_and_profile():
    import re

    from synthetic import synthetic_run

    run = synthetic_run()
    data = whatif.run_data(run)
    profile = profile_of(run)
    assert data["label"] == "cpu (Example CPU, 2 threads)"
    assert data["dtype"] == "fp32"  # float32, named as the datasheet names it
    assert (data["flops_per_s"], data["bytes_per_s"], data["ridge_point"]) == (1e11, 1e10, 10.0)
    assert len(data["points"]) == len(profile) > 5
    for point, m in zip(data["points"], profile, strict=True):
        assert point == {
            "workload": m.workload,
            "intensity": m.intensity,
            "flops_per_s": m.flops_per_s,
        }
    # the page's island holds the same data, and no name in it can end the script early
    hostile = synthetic_run(label="cpu </script><b>x</b>")
    html = whatif.run_html(hostile)
    assert html.count("</script>") == 1
    body = re.fullmatch(
        r'<script type="application/json" class="gc-run-data">(.*)</script>', html, re.DOTALL
    )
    assert body is not None
    assert json.loads(body.group(1)) == whatif.run_data(hostile)


def test_piecewise_formula_shows_the_case_python_shows(node_run):
    """ZeRO's stages: each stage's value and worked derivation are the CLI's."""
    cases = [
        ("zero_memory_per_device", {"n_params": "7500000000", "N_d": "64", "stage": str(z),
                                    "k_opt": "12"})
        for z in range(4)
    ]  # fmt: skip
    answers = node_run([["eval", name, texts] for name, texts in cases])
    for (name, texts), js in zip(cases, answers, strict=True):
        record = calc(name, texts)
        assert int(js["value"]) == record["value"]
        assert js["worked"] == record["worked"]
    assert len({js["worked"].split(" = ")[0] for js in answers}) == 4


def test_floor_rounds_down_on_both_sides_of_zero(node_run):
    """max_decode_batch: 30 sequences fit; with too little memory the floor is negative."""
    shape = {"n_params": "6738415616", "S": "4096", "n_layers": "32", "n_kv": "32",
             "d_head": "128", "s": "2"}  # fmt: skip
    cases = [{**shape, "M_dev": m} for m in ("80000000000", "1000", "13476831232", "13476831231")]
    answers = node_run([["eval", "max_decode_batch", texts] for texts in cases])
    for texts, js in zip(cases, answers, strict=True):
        record = calc("max_decode_batch", texts)
        assert int(js["value"]) == record["value"], texts
        assert js["worked"] == record["worked"], texts
    assert [int(js["value"]) for js in answers] == [30, -7, 0, -1]


def test_a_range_is_the_symbols(node_run):
    """A stage of 0 and 3 is valid, a probability of 0 or 1 is not, as Symbol.allows says."""
    entries = [
        ("stage", "0"),
        ("stage", "0.0"),
        ("stage", "3"),
        ("alpha", "0"),
        ("alpha", "1"),
        ("alpha", "0.5"),
    ]
    answers = node_run([["parse", s, text] for s, text in entries])
    for (symbol, text), message in zip(entries, answers, strict=True):
        allowed = SYMBOLS[symbol].allows(Fraction(text))
        assert (message is None) == allowed, (symbol, text, message)
        if message is not None:
            assert message.endswith(f"{SYMBOLS[symbol].rule}; got {text}")


def test_gpu_symbols_start_at_the_default_gpus_datasheet():
    model = whatif.PANELS["model"].defaults()
    h100 = GPUS[DEFAULT_GPU]
    assert model["M_dev"] == h100.memory_bytes
    assert model["beta"] == h100.bytes_per_s
    assert model["P"] == h100.flops_per_s[whatif.default_dtype(model["s"])]
    assert whatif.PANELS["model"].limits[0].symbol == "M_dev"
    # the distributed panel's defaults are the post's table and each formula's example
    distributed = whatif.PANELS["distributed"].defaults()
    assert distributed["N"] == question(10).steps[0].values["N"]
    assert distributed["stage"] in range(4)


def test_every_formula_of_the_catalogue_prints_as_javascript():
    """Floors, ceilings, maxima and piecewise cases print; only non-whole powers are refused."""
    refused = []
    for formula in CATALOGUE.values():
        try:
            whatif.formula_js(formula)
        except GpuConceptsError:
            refused.append(formula.name)
    assert set(refused) <= {"speculative_expected_tokens", "speculative_speedup"}, refused
