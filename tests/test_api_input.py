"""The API refuses what it cannot answer: overflow is an error, never inf; NaN is an error,
never sympy's TypeError; a string is never handed to sympy, which would run it as code."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

from gpuconcepts import formulas, units
from gpuconcepts.errors import GpuConceptsError, GpuConceptsTypeError
from gpuconcepts.expressions import exact_number
from gpuconcepts.formula import Formula, product, ratio, total
from gpuconcepts.symbols import sym


def test_vectorized_refuses_an_overflow_it_would_return_as_inf() -> None:
    exact = formulas.attention_scores(S=10**300)  # the exact value is finite: 10**600
    assert exact == 10**600
    with pytest.raises(GpuConceptsError) as caught:
        formulas.attention_scores.vectorized(S=[1e3, 1e300])
    assert str(caught.value) == (
        "attention_scores: float64 overflows at S=1×10³⁰⁰ (the result, or a step on the way, "
        "is beyond about 1.8e308); call attention_scores(...) for the exact value"
    )


def test_vectorized_refuses_an_overflow_on_the_way_to_a_finite_result() -> None:
    """2·B·d_in·d_out overflows though the intensity itself is about 2 FLOP/byte."""
    exact = formulas.mlp_intensity(B=10**300, d_in=10**10, d_out=4, s=2)
    assert 1 < exact < 5
    with pytest.raises(
        GpuConceptsError,
        match=r"mlp_intensity: float64 overflows at B=1×10³⁰⁰, d_in=10,000,000,000,",
    ):
        formulas.mlp_intensity.vectorized(B=1e300, d_in=1e10, d_out=4, s=2)


def test_vectorized_still_answers_below_the_limit() -> None:
    got = formulas.attention_scores.vectorized(S=[1e150, 1e154])
    assert got.tolist() == pytest.approx([1e300, 1e308])
    assert np.isfinite(got).all()


@pytest.mark.parametrize(
    ("level", "error", "message"),
    [
        (math.nan, GpuConceptsError, "mlp_intensity: level must be finite; got nan"),
        (math.inf, GpuConceptsError, "mlp_intensity: level must be finite; got inf"),
        (-math.inf, GpuConceptsError, "mlp_intensity: level must be finite; got -inf"),
        (None, GpuConceptsTypeError, "mlp_intensity: level must be a number; got None (NoneType)"),
        (True, GpuConceptsTypeError, "mlp_intensity: level must be a number; got True (bool)"),
        ("20", GpuConceptsTypeError, "mlp_intensity: level must be a number; got '20' (str)"),
    ],
)
def test_reaches_refuses_what_is_not_a_finite_number(
    level: object, error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as caught:
        formulas.mlp_intensity.reaches(level, "B", d_in=512, d_out=256, s=2)  # type: ignore[arg-type]
    assert type(caught.value) is error
    assert str(caught.value) == message


def test_a_code_string_is_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    code = f"__import__('pathlib').Path({str(marker)!r}).touch() or 20"
    calls = [
        lambda: formulas.mlp_intensity.reaches(code, "B", d_in=512, d_out=256, s=2),
        lambda: formulas.mlp_intensity(B=code, d_in=512, d_out=256, s=2),
        lambda: formulas.mlp_intensity.vectorized(B=[code], d_in=512, d_out=256, s=2),
        lambda: Formula("f", code, kind="count", summary="code"),  # type: ignore[arg-type]
        lambda: product(sym("B"), code),  # type: ignore[arg-type]
        lambda: total(code),  # type: ignore[arg-type]
        lambda: ratio(code, sym("B")),  # type: ignore[arg-type]
        lambda: exact_number(code, "x"),
    ]
    for call in calls:
        with pytest.raises(GpuConceptsTypeError):
            call()
    assert not marker.exists()
    with pytest.raises(GpuConceptsError, match=r"^unknown symbol 'B \* 2'; the declared"):
        sym("B * 2")


@pytest.mark.parametrize(
    "call",
    [
        lambda: units.significant(math.nan),
        lambda: units.describe_bytes(math.nan),
        lambda: units.decimal_bytes(math.inf),
        lambda: units.describe(-math.inf, "bytes"),
        lambda: units.exact_number(math.nan),
        lambda: units.si(math.nan, "s"),
    ],
)
def test_units_refuse_nan_and_infinities_with_the_project_error(call: object) -> None:
    with pytest.raises(GpuConceptsError, match="is not a number a reader can use"):
        call()  # type: ignore[operator]


def test_exact_number_is_exact() -> None:
    assert exact_number(0.1, "x") == sp.Rational(1, 10)
    assert exact_number(np.float64(2.5), "x") == sp.Rational(5, 2)
    assert exact_number(np.int64(7), "x") == 7


@pytest.mark.parametrize(
    ("alpha", "gamma"),
    [(0.5, 10**9), (0.5, 10**20), (0.9999999999, 10**6)],
    ids=["half-to-a-billion", "half-to-1e20", "ten-nines-to-a-million"],
)
def test_a_power_too_large_to_compute_exactly_is_refused_first(alpha: float, gamma: int) -> None:
    """alpha ** (gamma + 1) exactly: gamma=10**9 grew the process by gigabytes for minutes
    (``gpuconcepts model --draft-alpha 0.5 --draft-gamma 1000000000``); it is refused at once,
    naming the symbol and the rule."""
    for formula in (formulas.speculative_expected_tokens, formulas.speculative_speedup):
        values = {"alpha": alpha, "gamma": gamma, "c_draft": 0.05}
        values = {k: v for k, v in values.items() if k in formula.params}
        with pytest.raises(
            GpuConceptsError,
            match=r": gamma \(.*\) must keep alpha\^\(gamma \+ 1\) within 1,048,576 bits exact",
        ):
            formula(**values)
        with pytest.raises(GpuConceptsError, match="must keep"):
            formula.worked(**values)


def test_a_power_within_the_limit_is_still_exact() -> None:
    assert formulas.speculative_expected_tokens(alpha=0.5, gamma=1000) == pytest.approx(2)
    assert formulas.speculative_expected_tokens(alpha=0.8, gamma=4) == 3.3616


@pytest.mark.parametrize("value", [-(10**5000), 10**5000], ids=["negative", "positive"])
def test_an_error_names_a_huge_whole_number_without_writing_it_out(value: int) -> None:
    """Python refuses to write an int of more than 4,300 digits: the error said ValueError
    (``gpuconcepts calc zero_memory_per_device stage=1e9999 ...`` was a traceback)."""
    with pytest.raises(GpuConceptsError, match=r"must be 0, 1, 2 or 3; got -?1×10⁵⁰⁰⁰$"):
        formulas.zero_memory_per_device(stage=value, n_params=1, k_opt=12, N_d=8)
    if value < 0:
        with pytest.raises(GpuConceptsError, match=r"N \(.*\) must be positive; got -1×10⁵⁰⁰⁰"):
            formulas.embedding_memory.worked(N=value, d=4, s=4)


@pytest.mark.parametrize(
    "value", [True, False, np.bool_(True)], ids=["True", "False", "numpy-bool"]
)
def test_a_bool_is_not_a_count(value: object) -> None:
    """True is not a batch size."""
    with pytest.raises(GpuConceptsTypeError, match=r"B \(batch size\) must be a number; got"):
        formulas.mlp_macs(B=value, d_in=4, d_out=4)
    with pytest.raises(GpuConceptsTypeError, match=r"B \(batch size\) must be numeric"):
        formulas.mlp_macs.vectorized(B=[value, value], d_in=4, d_out=4)
