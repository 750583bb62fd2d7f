"""Serving and scaling formulas: published values, their links to the older formulas, domains."""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout
from fractions import Fraction

import numpy as np
import pytest

from gpuconcepts import formulas as f
from gpuconcepts.cli import main
from gpuconcepts.errors import GpuConceptsError, GpuConceptsTypeError

LLAMA2_7B = 6_738_415_616  # published parameter count (Hugging Face config, norms included)
LLAMA2_KV = {"n_layers": 32, "n_kv": 32, "d_head": 128}


# -- ZeRO (Rajbhandari et al. 2020, figure 1: 7.5B parameters, 64 devices, K = 12) ------------
@pytest.mark.parametrize(
    ("stage", "published_gb", "exact"),
    [(0, "120", 120_000_000_000), (1, "31.4", 31_406_250_000), (2, "16.6", 16_640_625_000),
     (3, "1.88", 1_875_000_000)],
)  # fmt: skip
def test_zero_memory_matches_the_paper(stage, published_gb, exact):
    value = f.zero_memory_per_device(n_params=7_500_000_000, N_d=64, stage=stage, k_opt=12)
    assert value == exact
    assert type(value) is int
    assert f"{value / 1e9:.3g}" == published_gb


def test_zero_stage_0_is_adam_and_stage_3_is_it_over_the_devices():
    plain = f.zero_memory_per_device(n_params=10**9, N_d=8, stage=0, k_opt=12)
    assert plain == f.adam_training_memory(n_params=10**9)
    assert f.zero_memory_per_device(n_params=10**9, N_d=8, stage=3, k_opt=12) == plain // 8


@pytest.mark.parametrize("stage", [4, -1])
def test_zero_stage_outside_0_to_3_is_refused_by_name(stage):
    with pytest.raises(GpuConceptsError, match=r"stage \(ZeRO stage.*must be 0, 1, 2 or 3"):
        f.zero_memory_per_device(n_params=10**9, N_d=8, stage=stage, k_opt=12)


def test_zero_stage_must_be_whole():
    with pytest.raises(GpuConceptsTypeError, match=r"stage .* must be a whole number"):
        f.zero_memory_per_device(n_params=10**9, N_d=8, stage=1.5, k_opt=12)


def test_zero_worked_derivation_shows_only_the_chosen_stage():
    worked = f.zero_memory_per_device.worked(n_params=7_500_000_000, N_d=64, stage=3, k_opt=12)
    assert worked == (
        r"\frac{\left(2 + 2 + k_{opt}\right) n_{params}}{N_{d}} = "
        r"\frac{\left(2 + 2 + 12\right) \times 7{,}500{,}000{,}000}{64} = 1{,}875{,}000{,}000"
    )
    assert r"\begin{cases}" in f.zero_memory_per_device.latex()


# -- decode with the KV cache ----------------------------------------------------------------
def test_decode_intensity_is_the_step_flops_over_weight_and_cache_bytes():
    args = {"n_params": LLAMA2_7B, "B": 8, "S": 4096, "s": 2, **LLAMA2_KV}
    flops = 8 * f.forward_flops_per_token(n_params=LLAMA2_7B)
    cache = 32 * f.gqa_kv_cache_memory(B=8, S=4096, n_kv=32, d_head=128, s=2)
    weights = f.weight_memory(n_params=LLAMA2_7B, s=2)
    assert f.decode_intensity.exact(**args) == Fraction(flops, weights + cache)


def test_decode_intensity_limit_is_two_n_over_the_cache_of_one_sequence():
    # The figures: about 6 FLOP/byte for a 7B model at 4,096 tokens.
    limit = f.decode_intensity.supremum("B", n_params=7 * 10**9, S=4096, s=2, **LLAMA2_KV)
    per_sequence = 32 * f.gqa_kv_cache_memory(B=1, S=4096, n_kv=32, d_head=128, s=2)
    assert limit == pytest.approx(2 * 7e9 / per_sequence, rel=1e-12)
    assert round(limit, 2) == 6.52
    # Without a cache (S -> 0 is outside the domain; S = 1 is nearly none) the old knee returns.
    knee = f.decode_compute_bound_batch(P=989e12, s=2, beta=3.35e12)
    assert (
        f.decode_intensity.reaches(295, "B", n_params=7 * 10**9, S=4096, s=2, **LLAMA2_KV) is None
    )
    tiny = f.decode_intensity.reaches(295, "B", n_params=7 * 10**9, S=1, s=2, **LLAMA2_KV)
    assert tiny is not None
    assert tiny > round(knee)


def test_llama3_8b_at_8192_tokens_never_reaches_the_h100_ridge():
    limit = f.decode_intensity.supremum(
        "B", n_params=8_030_261_248, S=8192, s=2, n_layers=32, n_kv=8, d_head=128
    )
    assert round(limit, 1) == 15.0
    assert limit < f.ridge_point(P=989e12, beta=3.35e12)


def test_max_decode_batch_on_an_80_gb_h100():
    args = {"n_params": LLAMA2_7B, "S": 4096, "s": 2, **LLAMA2_KV}
    batch = f.max_decode_batch(M_dev=80 * 10**9, **args)
    assert batch == 30
    weights = f.weight_memory(n_params=LLAMA2_7B, s=2)
    cache = 32 * f.gqa_kv_cache_memory(B=batch, S=4096, n_kv=32, d_head=128, s=2)
    one_more = 32 * f.gqa_kv_cache_memory(B=batch + 1, S=4096, n_kv=32, d_head=128, s=2)
    assert weights + cache <= 80 * 10**9 < weights + one_more


def test_max_decode_batch_is_negative_when_the_weights_alone_overflow():
    assert (
        f.max_decode_batch(M_dev=16 * 10**9, n_params=LLAMA2_7B * 2, S=4096, s=2, **LLAMA2_KV) < 0
    )


def test_tpot_memory_term_is_the_decode_floor_and_ttft_the_prefill_roofline():
    tpot = f.tpot_seconds_lower_bound(
        n_params=LLAMA2_7B, B=1, S=4096, s=2, P=989e12, beta=3.35e12, **LLAMA2_KV
    )
    weights = f.weight_memory(n_params=LLAMA2_7B, s=2)
    cache = 32 * f.gqa_kv_cache_memory(B=1, S=4096, n_kv=32, d_head=128, s=2)
    assert tpot == f.decode_seconds_lower_bound(M_w=weights, M_kv=cache, beta=3.35e12)
    assert round(tpot * 1e3, 2) == 4.66
    ttft = f.ttft_seconds_lower_bound(n_params=LLAMA2_7B, B=1, S=4096, s=2, P=989e12, beta=3.35e12)
    prefill = f.roofline_seconds(
        F=4096 * f.forward_flops_per_token(n_params=LLAMA2_7B), Q=weights, P=989e12, beta=3.35e12
    )
    assert ttft == prefill
    assert round(ttft * 1e3, 1) == 55.8


def test_tpot_turns_compute_bound_where_decode_intensity_passes_the_ridge():
    args = {"n_params": 10**9, "S": 1, "s": 2, **LLAMA2_KV}
    knee = f.decode_intensity.reaches(295, "B", **args)
    assert knee is not None
    for batch, compute in ((knee - 1, False), (knee, True)):
        tpot = f.tpot_seconds_lower_bound(B=batch, P=989e12, beta=3.35e12, **args)
        flops_time = f.forward_flops_per_token(n_params=10**9) * batch / 989e12
        assert (tpot == pytest.approx(flops_time)) is compute


# -- pipeline conventions --------------------------------------------------------------------
@pytest.mark.parametrize(("p", "m"), [(4, 4), (4, 32), (8, 3)])
def test_interleaved_bubble_at_one_chunk_is_the_gpipe_bubble_over_the_ideal_time(p, m):
    whole = f.pipeline_bubble_fraction.exact(p=p, m=m)
    assert f.pipeline_bubble_fraction_interleaved.exact(p=p, m=m, v=1) == whole / (1 - whole)
    assert f.pipeline_bubble_fraction_interleaved.exact(p=p, m=m, v=4) == whole / (1 - whole) / 4


def test_interleaved_bubble_values():
    assert f.pipeline_bubble_fraction_interleaved(p=4, m=4, v=1) == 0.75
    assert f.pipeline_bubble_fraction_interleaved(p=4, m=4, v=2) == 0.375


# -- speculative decoding (Leviathan et al. 2023) --------------------------------------------
def test_speculative_expected_tokens_worked_values():
    assert f.speculative_expected_tokens(alpha=0.8, gamma=4) == 3.3616  # (1 - 0.8^5) / 0.2
    assert f.speculative_expected_tokens.exact(alpha=0.5, gamma=1) == Fraction(3, 2)
    # gamma drafted tokens and one of the target's: never more than gamma + 1.
    near_one = f.speculative_expected_tokens(alpha=0.999999, gamma=7)
    assert 7.99 < near_one < 8


def test_speculative_speedup_is_expected_tokens_over_the_step_cost():
    for alpha, gamma, c in (("0.8", 4, "0.05"), ("0.6", 3, "0.2"), ("0.9", 7, "0.01")):
        tokens = f.speculative_expected_tokens.exact(alpha=Fraction(alpha), gamma=gamma)
        speedup = f.speculative_speedup.exact(
            alpha=Fraction(alpha), gamma=gamma, c_draft=Fraction(c)
        )
        assert speedup == tokens / (gamma * Fraction(c) + 1)
    assert round(f.speculative_speedup(alpha=0.8, gamma=4, c_draft=0.05), 3) == 2.801
    # A draft that costs as much as the target never pays (alpha < 1 = c_draft).
    assert f.speculative_speedup(alpha=0.9, gamma=3, c_draft=1) < 1


@pytest.mark.parametrize("alpha", [0, 1, 1.5, -0.2])
def test_alpha_must_lie_strictly_between_0_and_1(alpha):
    with pytest.raises(GpuConceptsError, match=r"alpha \(chance .*\) must lie strictly between"):
        f.speculative_expected_tokens(alpha=alpha, gamma=4)


def test_alpha_is_checked_in_arrays_too():
    values = f.speculative_expected_tokens.vectorized(alpha=[0.5, 0.8], gamma=4)
    assert values.tolist() == pytest.approx([1.9375, 3.3616])
    with pytest.raises(GpuConceptsError, match="must lie strictly between 0 and 1; got 1"):
        f.speculative_expected_tokens.vectorized(alpha=np.array([0.5, 1.0]), gamma=4)


# -- MoE -------------------------------------------------------------------------------------
def test_moe_alltoall_is_the_tablewise_alltoall_without_pooling():
    moe = f.moe_alltoall_bytes(n_tokens=4096, top_k=2, d=4096, s=2, W=8)
    assert moe == 58_720_256
    # Table-wise, a device sends (W-1)/W of B·n_tables/W pooled rows; with the B = W·n_tokens
    # tokens of all devices as samples and the top_k choices as tables, the count is the same.
    tablewise = f.tablewise_alltoall_bytes(B=8 * 4096, n_tables=2, d=4096, s=2, W=8)
    assert moe == tablewise


# -- the command line ------------------------------------------------------------------------
NEW = {
    "decode_intensity": ("n_params=7e9 B=1 S=4096 n_layers=32 n_kv=32 d_head=128 s=2", "0.867"),
    "max_decode_batch": (
        "M_dev=80e9 n_params=6738415616 S=4096 n_layers=32 n_kv=32 d_head=128 s=2", "30"),
    "zero_memory_per_device": ("n_params=7.5e9 N_d=64 stage=1 k_opt=12", "31.41 GB"),
    "pipeline_bubble_fraction_interleaved": ("p=4 m=4 v=2", "0.375"),
    "speculative_expected_tokens": ("alpha=0.8 gamma=4", "3.36"),
    "speculative_speedup": ("alpha=0.8 gamma=4 c_draft=0.05", "2.8"),
    "ttft_seconds_lower_bound": ("n_params=6738415616 B=1 S=4096 P=989e12 s=2 beta=3.35e12",
                                 "55.8 ms"),
    "tpot_seconds_lower_bound": (
        "n_params=6738415616 B=1 S=4096 n_layers=32 n_kv=32 d_head=128 s=2 P=989e12 beta=3.35e12",
        "4.66 ms"),
    "moe_alltoall_bytes": ("n_tokens=4096 top_k=2 d=4096 s=2 W=8", "58.72 MB"),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(NEW))
def test_calc_evaluates_every_new_formula_by_name(name, capsys):
    values, shown = NEW[name]
    assert main(["calc", name, *values.split()]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert shown in first


def test_calc_refuses_a_bad_stage_in_one_line():
    err = io.StringIO()
    with redirect_stdout(io.StringIO()), redirect_stderr(err):
        status = main(["calc", "zero_memory_per_device", "n_params=1e9", "N_d=8", "stage=4",
                       "k_opt=12"])  # fmt: skip
    assert status == 2
    assert err.getvalue().count("\n") == 1
    assert "stage (ZeRO stage" in err.getvalue()
    assert "must be 0, 1, 2 or 3; got 4" in err.getvalue()


def test_decode_step_flops_and_bytes_are_decode_intensitys_parts_and_fit_max_batch() -> None:
    """The panel's decode step: FLOPs over bytes is decode_intensity, the limit its supremum,
    and the bytes of max_decode_batch sequences fit the device while one more does not."""
    shape = {"n_params": 6_738_415_616, "S": 4096, "s": 2, **LLAMA2_KV}
    for batch in (1, 30, 1000):
        flops = f.decode_step_flops.exact(n_params=shape["n_params"], B=batch)
        step = f.decode_step_bytes.exact(B=batch, **shape)
        assert flops / step == f.decode_intensity.exact(B=batch, **shape)
    assert f.decode_intensity_limit(**shape) == pytest.approx(
        f.decode_intensity.supremum("B", **shape), rel=1e-12
    )
    memory = 80_000_000_000
    most = f.max_decode_batch(M_dev=memory, **shape)
    assert f.decode_step_bytes(B=most, **shape) <= memory < f.decode_step_bytes(B=most + 1, **shape)
