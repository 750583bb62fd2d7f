"""The whole-model table: published parameter counts, KV cache per token, errors, and the CLI."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuconcepts import formulas as f
from gpuconcepts.cli import main
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.model import (
    PRESETS,
    account,
    active_matmul_params,
    attention_crossover,
    attention_params,
    attention_share,
    layer_matmul_params,
    params,
    shape_from,
)


@pytest.mark.parametrize(
    ("name", "published"),
    [
        ("gpt2-small", 124_439_808),  # GPT-2's 124M: biases, LayerNorms, positions, tied head
        ("llama-2-7b-like", 6_738_415_616),  # Llama-2-7B's weights, RMSNorm weights included
        ("llama-3-8b-like", 8_030_261_248),  # Llama-3-8B's
        ("llama-2-70b", 68_976_648_192),
        ("mistral-7b", 7_241_732_096),
        ("llama-3.2-1b", 1_235_814_400),  # tied head
        ("gemma-7b", 8_537_680_896),  # 16 heads of 256 on d = 3,072, tied head
        ("qwen2-7b", 7_615_616_512),  # biases on Q, K and V
        ("mixtral-8x7b", 46_702_792_704),  # all eight experts
    ],
)
def test_presets_are_the_published_parameter_counts(name, published):
    assert params(PRESETS[name]) == published


def test_mixtral_active_parameters_and_flops_use_two_experts():
    mixtral = PRESETS["mixtral-8x7b"]
    table = account(mixtral)
    assert table.value("params") == 46_702_792_704
    assert table.value("active_params") == 12_879_925_248  # "12.9B active"
    expert = f.gated_mlp_params(d=4096, d_ff=14336)
    assert table.value("params") - table.value("active_params") == 32 * 6 * expert
    # Less the norms and the embedding (a lookup), the active weights are the ones multiplied.
    active_matmul = table.value("active_params") - (2 * 32 + 1) * 4096 - 32000 * 4096
    assert active_matmul == active_matmul_params(mixtral)
    assert table.value("forward_flops") == f.forward_flops_per_token(
        n_params=active_matmul_params(mixtral)
    )
    # Memory counts every expert.
    assert table.value("weights") == f.weight_memory(n_params=46_702_792_704, s=2)


def test_gpt2_xl_typed_naturally_is_its_published_count():
    xl = shape_from(PRESETS["gpt2-small"], d=1600, layers=48, heads=25)
    assert (xl.heads, xl.n_kv, xl.d_head, xl.d_ff) == (25, 25, 64, 6400)
    assert params(xl) == 1_557_611_200


def test_cli_gpt2_xl_typed_naturally_prints_its_published_count(capsys):
    argv = ["model", "--preset", "gpt2-small", "--d", "1600", "--layers", "48", "--heads", "25"]
    assert main([*argv, "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["shape"]["d_ff"] == 6400
    assert {r["key"]: r["value"] for r in record["rows"]}["params"] == 1_557_611_200


def test_gated_d_ff_follows_d_by_llamas_rule_and_a_given_d_ff_wins():
    llama = PRESETS["llama-2-7b-like"]
    # Llama 2 13B (d = 5,120) publishes an MLP of 13,824: 2.6875 · d, rounded up to 256.
    assert shape_from(llama, d=5120).d_ff == 13_824
    assert shape_from(llama, d=5120, d_ff=12_000).d_ff == 12_000
    assert shape_from(llama, layers=40).d_ff == 11_008  # d unchanged: d_ff unchanged


def test_layer_matrices_are_the_catalogue_layer_for_gpt2():
    shape = PRESETS["gpt2-small"]
    assert layer_matmul_params(shape) == f.transformer_layer_params(d=768, d_ff=3072)


def test_kv_heads_follow_heads_unless_given():
    llama2, llama3 = PRESETS["llama-2-7b-like"], PRESETS["llama-3-8b-like"]
    assert shape_from(llama2, heads=64).n_kv == 64
    assert shape_from(llama3, heads=64).n_kv == 16
    assert shape_from(llama3, heads=64, n_kv=8).n_kv == 8
    with pytest.raises(GpuConceptsError, match="give n_kv"):
        shape_from(llama3, heads=2, d_head=128)


def test_gemma_keeps_its_wide_heads_and_free_d_head_is_accepted():
    gemma = PRESETS["gemma-7b"]
    assert shape_from(gemma, seq=1024) == replace(gemma, seq=1024)
    wide = shape_from(PRESETS["llama-3-8b-like"], heads=32, d_head=256)
    assert wide.heads * wide.d_head == 2 * wide.d
    # Attention is counted from the heads, not from d.
    assert attention_params(gemma) == 2 * 3072 * 4096 + 2 * 3072 * 4096


def test_tied_head_is_counted_once():
    untied = shape_from(PRESETS["llama-3.2-1b"], tied=False)
    assert params(untied) - params(PRESETS["llama-3.2-1b"]) == f.embedding_params(N=128256, d=2048)


def test_kv_cache_per_token_under_mha_gqa_and_mqa():
    llama3 = PRESETS["llama-3-8b-like"]
    mha = shape_from(llama3, n_kv=32)
    mqa = shape_from(llama3, n_kv=1)
    per_token = [account(s).value("kv_per_token") for s in (mha, llama3, mqa)]
    assert per_token == [512 * 1024, 128 * 1024, 16 * 1024]


def test_training_flops_are_three_forward_passes_and_adam_sixteen_bytes():
    table = account(PRESETS["llama-2-7b-like"])
    assert table.value("training_flops") == 3 * table.value("forward_flops")
    assert table.value("adam") == 16 * table.value("params")


def test_attention_share_is_the_catalogue_ratio_for_mha_and_a_plain_mlp():
    gpt2 = PRESETS["gpt2-small"]
    for S in (128, 1024, 4608, 10_000):
        assert attention_share(gpt2, S) == pytest.approx(
            f.attention_linear_flops_ratio(S=S, d=768, d_ff=3072), rel=1e-12
        )
    assert attention_crossover(gpt2) == pytest.approx(6 * 768)


def test_decode_rows_use_the_datasheet_gpu():
    shape = PRESETS["llama-3-8b-like"]
    table = account(shape, "H100 SXM")
    read = f.weight_memory(n_params=active_matmul_params(shape), s=2)  # not the embedding table
    cache = table.value("kv_cache")
    assert table.value("decode_floor") == pytest.approx((read + cache) / 3.35e12)
    assert round(table.value("decode_knee")) == 295


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"heads": 30},
            "heads (query heads) must divide d (model width); 4096 is not a multiple of 30",
        ),
        ({"n_kv": 64}, "n_kv (key/value heads) must be at most heads (32); got 64"),
        ({"n_kv": 3}, "n_kv (key/value heads) must divide heads (32)"),
        ({"vocab": 0}, "vocab (vocabulary size) must be a positive whole number; got 0"),
        ({"vocab": 2**53 + 1}, "vocab (vocabulary size) must be at most 2**53"),
        (
            {"d": 1000},
            "d_head (head width) must divide d (model width); 1000 is not a multiple of 128",
        ),
        (
            {"dtype": "int8"},
            (
                "dtype: unknown dtype 'int8'; one of float32 (fp32), tf32, float16 (fp16), "
                "bfloat16 (bf16)"
            ),
        ),
    ],
)
def test_bad_shapes_name_the_symbol_and_the_rule(change, message):
    with pytest.raises(GpuConceptsError, match="model llama-3-8b-like: ") as error:
        shape_from(PRESETS["llama-3-8b-like"], **change)
    assert message in str(error.value)


def test_cli_prints_the_llama3_table_with_the_kv_cache_per_token(capsys):
    assert main(["model"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("llama-3-8b-like: d=4,096, 32 layers")
    assert "KV cache per token" in out
    assert "131,072 bytes (131.07 kB, 128 KiB)" in out


def test_cli_model_json_and_overrides(capsys):
    assert main(["model", "--preset", "gpt2-small", "--seq", "2048", "--batch", "4", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["shape"]["seq"] == 2048
    assert record["shape"]["batch"] == 4
    rows = {r["key"]: r for r in record["rows"]}
    assert rows["kv_cache"]["value"] == 4 * 2048 * 12 * 2 * 768 * 2
    assert rows["params"]["unit"] == "count"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["model", "--heads", "30"], "heads (query heads) must divide d"),
        (["model", "--n-kv", "64"], "n_kv (key/value heads) must be at most heads"),
        (["model", "--vocab", "0"], "vocab (vocabulary size) must be a positive whole number"),
        (["model", "--d-head", "100"], "d_head (head width) must divide d (model width)"),
        # sizes past any machine: an overflow (layers, experts) or an empty time (seq) before
        (["model", "--layers", "9" * 300], "layers (transformer layers) must be at most 2**53"),
        (["model", "--experts", "9" * 300], "experts (MLP experts per layer) must be at most"),
        (["model", "--seq", "9" * 60], "seq (sequence length) must be at most 2**53"),
        (["model", "--batch", str(2**53 + 1)], "got a 16-digit number"),
    ],
)
def test_cli_model_errors_are_one_line_with_status_2(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("gpuconcepts model: error: model llama-3-8b-like: ")
    assert message in err
    assert len(err.strip().splitlines()) == 1


def test_cli_model_usage_error_is_one_line_with_status_2(capsys):
    assert main(["model", "--d", "x"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "argument --d: invalid int value: 'x'" in err[0]


def test_calc_adam_training_memory_prints_the_issue_example(capsys):
    assert main(["calc", "adam_training_memory", "n_params=7000000000"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "112,000,000,000 bytes (112 GB, 104.31 GiB)"


@pytest.mark.parametrize("name", [
    "transformer_layer_params", "forward_flops_per_token", "training_flops_per_token",
    "adam_training_memory", "gqa_kv_cache_memory", "decode_seconds_lower_bound",
    "decode_compute_bound_batch", "layer_activation_memory",
    "layer_activation_memory_recomputed", "attention_linear_flops_ratio",
])  # fmt: skip
def test_calc_works_for_every_new_formula(name, capsys):
    formula = f.get(name)
    values = {p: 4 if p == "s" else 1000 for p in formula.params}
    assert main(["calc", name, *(f"{k}={v}" for k, v in values.items()), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["value"] == formula(**values)


# -- scaling laws ---------------------------------------------------------------------------------
count = st.integers(min_value=1, max_value=10**12)
size = st.integers(min_value=1, max_value=4096)


@given(n=count)
def test_doubling_parameters_doubles_training_flops_and_memory(n):
    assert f.training_flops_per_token(n_params=2 * n) == 2 * f.training_flops_per_token(n_params=n)
    assert f.training_flops_per_token(n_params=n) == 3 * f.forward_flops_per_token(n_params=n)
    assert f.adam_training_memory(n_params=2 * n) == 2 * f.adam_training_memory(n_params=n)


@given(B=size, S=size, n_kv=size, d_head=size)
def test_doubling_kv_heads_doubles_the_cache_and_mha_is_the_old_formula(B, S, n_kv, d_head):
    cache = f.gqa_kv_cache_memory(B=B, S=S, n_kv=n_kv, d_head=d_head, s=2)
    assert f.gqa_kv_cache_memory(B=B, S=S, n_kv=2 * n_kv, d_head=d_head, s=2) == 2 * cache
    assert cache == f.kv_cache_memory(B=B, S=S, d=n_kv * d_head, s=2)


@given(S=size, d=size)
def test_attention_overtakes_the_linears_past_six_d(S, d):
    ratio = f.attention_linear_flops_ratio(S=S, d=d, d_ff=4 * d)
    assert (ratio > 1) == (6 * d < S)
    assert f.attention_linear_flops_ratio(S=2 * S, d=d, d_ff=4 * d) == pytest.approx(2 * ratio)


@given(d=size, d_ff=size)
def test_mha_attention_params_are_four_d_squared(d, d_ff):
    assert f.gqa_attention_params(
        d=d, n_kv=1, d_head=d
    ) + 2 * d * d_ff == f.transformer_layer_params(d=d, d_ff=d_ff)
