"""The catalogue: the post's values, the rendering, validation and vectorised evaluation."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from gpuconcepts import formulas as f
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.questions import QUESTIONS, question
from gpuconcepts.symbols import SYMBOLS


@pytest.mark.parametrize(
    ("formula", "values", "expected"),
    [
        (f.embedding_memory, {"N": 100_000_000, "d": 128, "s": 4}, 51_200_000_000),
        (f.embedding_payload, {"B": 2048, "L": 1, "d": 128, "s": 4}, 1_048_576),
        (f.mlp_macs, {"B": 64, "d_in": 512, "d_out": 256}, 8_388_608),
        (f.mlp_flops, {"B": 64, "d_in": 512, "d_out": 256}, 16_777_216),
        (f.mlp_weight_memory, {"d_in": 1024, "d_out": 512, "s": 4}, 2_097_152),
        (
            f.conv_macs,
            {"B": 1, "H_out": 32, "W_out": 32, "K": 3, "C_in": 16, "C_out": 32},
            4_718_592,
        ),
        (f.rnn_macs, {"B": 32, "S": 100, "d_in": 64, "d_h": 128}, 78_643_200),
        (f.attention_scores, {"S": 1000}, 1_000_000),
        (f.attention_scores, {"S": 2000}, 4_000_000),
        (f.kv_cache_memory, {"B": 2, "S": 1000, "d": 512, "s": 2}, 4_096_000),
        (f.mlp_weights, {"d_in": 16, "d_out": 3}, 48),
        (f.conv_weights, {"K": 3, "C_in": 1, "C_out": 1}, 9),
    ],
)
def test_post_values_exactly(formula, values, expected):
    value = formula(**values)
    assert value == expected
    assert type(value) is int


def test_every_worked_question_matches_the_post():
    assert [q.number for q in QUESTIONS] == list(range(10, 18))
    for q in QUESTIONS:
        assert q.value_matches_post, q.number
    assert question(16).ratio == 4


def test_worked_derivation_has_the_post_form():
    assert f.embedding_memory.worked(N=100_000_000, d=128, s=4) == (
        r"N d s = 100{,}000{,}000 \times 128 \times 4 = 51{,}200{,}000{,}000"
    )
    assert f.rnn_macs.worked(B=32, S=100, d_in=64, d_h=128).endswith(
        r"= 32 \times 100 \times \left(64 \times 128 + 128^{2}\right) = 78{,}643{,}200"
    )
    # A short exact decimal stays exact; anything else is rounded and marked as such.
    assert f.embedding_intensity.worked(B=2048, L=1, d=128, s=4).endswith("= 0.125")
    assert f.attention_decode_intensity.worked(B=2, S=1000, d=512, s=2).endswith(r"\approx 0.999")
    assert f.mlp_intensity.worked(B=512, d_in=4096, d_out=1024, s=2).endswith(r"\approx 315")


def test_latex_and_equation():
    assert f.embedding_memory.latex() == "N d s"
    assert f.kv_cache_memory.equation() == r"\text{KV Cache} = 2 B S d s"
    assert f.conv_macs.latex() == "B H_{out} W_{out} K^{2} C_{in} C_{out}"


def test_every_formula_declares_kind_symbols_and_a_runnable_example():
    for formula in f.CATALOGUE.values():
        assert formula.kind in {"bytes", "MACs", "FLOPs", "count", "FLOP/byte", "FLOP/s", "seconds"}
        assert formula.params, formula.name
        assert all(p in SYMBOLS for p in formula.params)
        assert ">>> " in (formula.__doc__ or ""), formula.name


def test_flops_are_twice_macs():
    assert f.mlp_flops(B=3, d_in=5, d_out=7) == 2 * f.mlp_macs(B=3, d_in=5, d_out=7)
    conv = {"B": 2, "H_out": 5, "W_out": 6, "K": 3, "C_in": 4, "C_out": 8}
    assert f.conv_flops(**conv) == 2 * f.conv_macs(**conv)
    assert f.rnn_flops(B=2, S=3, d_in=4, d_h=5) == 2 * f.rnn_macs(B=2, S=3, d_in=4, d_h=5)


def test_nvidia_linear_layer_intensity():
    # NVIDIA's GEMM guide: about 315 FLOP/B for 4096 -> 1024 at batch 512 in FP16.
    assert f.mlp_intensity(B=512, d_in=4096, d_out=1024, s=2) == pytest.approx(315.08, abs=0.01)
    exact = f.mlp_intensity.exact(B=512, d_in=4096, d_out=1024, s=2)
    assert Fraction(int(exact.p), int(exact.q)) == Fraction(2 * 512 * 4096 * 1024, 2 * 6815744)


def test_fractional_bytes_per_element_are_exact():
    # 4-bit weights: half a byte each.
    assert f.mlp_weight_memory(d_in=1024, d_out=512, s=0.5) == 262_144
    assert f.embedding_memory(N=3, d=1, s=0.1) == pytest.approx(0.3)
    assert f.embedding_memory.exact(N=3, d=1, s=0.1) == Fraction(3, 10)


def test_causal_attention_is_about_half():
    full = f.attention_flops(B=1, S=4096, d=64)
    causal = f.attention_flops_causal(B=1, S=4096, d=64)
    assert causal / full == pytest.approx(0.5, rel=1e-3)
    assert causal > full / 2


def test_ridge_point_of_h100_bf16():
    assert f.ridge_point(P=989e12, beta=3.35e12) == pytest.approx(295.2, abs=0.1)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: f.embedding_memory(N=0, d=128, s=4),
            "N (rows in the embedding table) must be positive; got 0",
        ),
        (lambda: f.embedding_memory(N=-5, d=128, s=4), "must be positive; got -5"),
        (lambda: f.embedding_memory(N=10, d=128.5, s=4), "d (vector width"),
        (lambda: f.embedding_memory(N=10, d=128, s=-0.5), "s (bytes per element"),
        (lambda: f.embedding_memory(N=10, d=128), "missing value for s"),
        (lambda: f.embedding_memory(N=10, d=128, s=4, x=1), "unknown symbol 'x'"),
        (
            lambda: f.embedding_memory(N="10", d=128, s=4),
            "N (rows in the embedding table) must be a number; got '10' (str)",
        ),
        (lambda: f.embedding_memory(N=True, d=128, s=4), "must be a number; got True (bool)"),
        (lambda: f.embedding_memory(N=10, d=128, s=float("nan")), "must be finite"),
        (lambda: f.get("kv_cache"), "unknown formula 'kv_cache'; did you mean kv_cache_memory?"),
    ],
)
def test_bad_input_names_symbol_and_rule(call, message):
    with pytest.raises(GpuConceptsError, match=None) as info:
        call()
    assert message in str(info.value)
    assert str(info.value).startswith(("embedding_memory:", "unknown formula"))


def test_float_for_a_count_is_a_type_error():
    with pytest.raises(
        TypeError, match=r"d \(vector width.*\) must be a whole number \(it is a count\); got 128.0"
    ):
        f.embedding_memory(N=10, d=128.0, s=4)


def test_vectorized_matches_exact_and_validates():
    S = np.array([5, 100, 1000])
    assert f.attention_scores.vectorized(S=S).tolist() == [25.0, 10_000.0, 1_000_000.0]
    B = np.arange(1, 65)
    got = f.mlp_intensity.vectorized(B=B, d_in=4096, d_out=1024, s=2)
    want = [f.mlp_intensity(B=int(b), d_in=4096, d_out=1024, s=2) for b in B]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert np.all(np.diff(got) > 0)  # more batch, more weight reuse
    with pytest.raises(
        GpuConceptsError,
        match=r"mlp_macs: d_in \(input features of a layer\) must be positive; got 0",
    ):
        f.mlp_macs.vectorized(B=[1, 2], d_in=[0, 3], d_out=1)
    with pytest.raises(GpuConceptsError, match=r"must be positive; got 0$"):  # the first, not -2
        f.mlp_macs.vectorized(B=[1, 2, 3], d_in=[3, 0, -2], d_out=1)
    with pytest.raises(TypeError, match=r"B .* must hold whole numbers"):
        f.mlp_macs.vectorized(B=[1.5], d_in=3, d_out=1)
    with pytest.raises(TypeError, match="must be numeric"):
        f.mlp_macs.vectorized(B=["a"], d_in=3, d_out=1)
    with pytest.raises(GpuConceptsError, match="missing value for d_out"):
        f.mlp_macs.vectorized(B=[1], d_in=3)


def test_vectorized_does_not_overflow_int64():
    # 4·B·S²·d with S = 10^7 overflows int64 arithmetic; float64 keeps the magnitude right.
    got = f.attention_flops.vectorized(B=np.array([64]), S=np.array([10**7]), d=np.array([8192]))
    assert got[0] == pytest.approx(4 * 64 * 10**14 * 8192)


# -- issue 14: the API refuses what the CLI refuses, naming the symbol -------------------------


@pytest.mark.parametrize(
    ("arrays", "message"),
    [
        ({"B": [1.0, float("nan")]}, r"B \(batch size\) must be finite; got nan"),
        ({"B": [1.0, float("inf")]}, r"B \(batch size\) must be finite; got inf"),
        ({"d_in": [4.0, -np.inf]}, r"d_in \(input features of a layer\) must be finite"),
        ({"B": [1, 0]}, r"B \(batch size\) must be positive; got 0"),
        ({"B": [1.5]}, r"B \(batch size\) must hold whole numbers \(it is a count\); got 1.5"),
        ({"B": [1, 2], "d_in": [1, 2, 3]}, r"must broadcast together; got shapes B \(2,\), d_in"),
        ({"B": [[1, 2], [3]]}, r"B \(batch size\) must be a rectangular array"),
        ({"B": [True]}, r"B \(batch size\) must be numeric"),
    ],
)
def test_vectorized_validates_as_the_scalar_path_does(arrays, message):
    values = {"B": [1], "d_in": 3, "d_out": 1} | arrays
    with pytest.raises(GpuConceptsError, match=message):
        f.mlp_macs.vectorized(**values)


def test_scalar_refuses_the_same_non_finite_values():
    with pytest.raises(
        GpuConceptsError, match=r"d_in \(input features of a layer\) must be finite"
    ):
        f.mlp_intensity(B=1, d_in=float("inf"), d_out=1, s=2)


def test_get_refuses_a_non_string():
    with pytest.raises(GpuConceptsError, match=r"a formula name must be a string; got None"):
        f.get(None)


def test_unknown_formula_message_has_no_stray_punctuation():
    with pytest.raises(GpuConceptsError) as info:
        f.get("nope")
    assert str(info.value) == "unknown formula 'nope' (gpuconcepts formulas lists them all)"


def test_results_beyond_a_float_are_refused_not_inf():
    from fractions import Fraction

    with pytest.raises(GpuConceptsError, match=r"mlp_intensity: the result, about 6.67×10³¹⁹"):
        f.mlp_intensity(B=1, d_in=1, d_out=1, s=Fraction(1, 10**320))
    assert f.embedding_memory(N=10**3000, d=1, s=1) == 10**3000  # ints stay exact


def test_fraction_for_a_count_is_exact_when_whole():
    from fractions import Fraction

    assert f.embedding_memory(N=Fraction(10**30), d=1, s=1) == 10**30
    with pytest.raises(TypeError, match=r"N \(rows in the embedding table\) must be a whole"):
        f.embedding_memory(N=Fraction(3, 2), d=1, s=1)


def test_reaches_finds_the_first_batch_past_a_level_or_never():
    # 65536·B / (768·B + 131072) = 20 at B = 52.2...: batch 53 is the first at or above 20.
    assert f.mlp_intensity.reaches(20, "B", d_in=512, d_out=256, s=4) == 53
    assert f.mlp_intensity(B=53, d_in=512, d_out=256, s=4) >= 20
    assert f.mlp_intensity(B=52, d_in=512, d_out=256, s=4) < 20
    # In BF16 the layer's intensity never passes 2·512·256 / (2·768) = 170.67 FLOP/byte.
    assert f.mlp_intensity.supremum("B", d_in=512, d_out=256, s=2) == pytest.approx(512 / 3)
    assert f.mlp_intensity.reaches(512 / 3, "B", d_in=512, d_out=256, s=2) is None
    with pytest.raises(GpuConceptsError, match="unknown symbol 'q'"):
        f.mlp_intensity.reaches(1, "q", d_in=512, d_out=256, s=2)


def test_tiled_attention_traffic_levels_the_intensity_off_at_twice_the_tile() -> None:
    sizes = {"B": 2, "d": 512, "s": 2}
    # one tile for the whole sequence: the minimal traffic, and the intensity S/s
    assert f.attention_tiled_bytes(**sizes, S=1024, S_tile=1024) == f.attention_bytes(
        **sizes, S=1024
    )
    assert f.attention_tiled_intensity(**sizes, S=256, S_tile=512) == 256 / 2
    # 64 tiles of 128 rows: Q and O once, K and V 64 times, each B·S·d·s bytes
    assert f.attention_tiled_bytes(**sizes, S=8192, S_tile=128) == (2 * 8192 * 512 * 2) * (
        2 + 2 * 64
    )
    # a partial last tile is a whole re-read: ⌈1000/128⌉ = 8
    assert f.attention_tiled_bytes(**sizes, S=1000, S_tile=128) == 2 * 2 * 1000 * 512 * 2 * 9
    grows = [f.attention_tiled_intensity(**sizes, S=n, S_tile=128) for n in (128, 1024, 2**16)]
    assert grows == sorted(grows)
    assert grows[-1] < 128 < grows[-1] * 1.01
    assert f.attention_tiled_intensity.supremum("S", B=1, d=64, s=2, S_tile=128) == 128
    assert f.attention_tiled_intensity.supremum("S", B=1, d=64, s=4, S_tile=256) == 128
