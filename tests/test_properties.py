"""Scaling laws of the catalogue, as hypothesis properties."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from gpuconcepts import formulas as f

size = st.integers(min_value=1, max_value=4096)
elem = st.sampled_from([0.5, 1, 2, 4, 8])


@given(B=size, d_in=size, d_out=size)
def test_doubling_batch_doubles_mlp_macs(B, d_in, d_out):
    assert f.mlp_macs(B=2 * B, d_in=d_in, d_out=d_out) == 2 * f.mlp_macs(
        B=B, d_in=d_in, d_out=d_out
    )


@given(B=size, d_in=size, d_out=size, s=elem)
def test_mlp_intensity_grows_with_batch_and_weight_memory_does_not(B, d_in, d_out, s):
    assert f.mlp_intensity(B=2 * B, d_in=d_in, d_out=d_out, s=s) > f.mlp_intensity(
        B=B, d_in=d_in, d_out=d_out, s=s
    )
    assert f.mlp_weight_memory(d_in=d_in, d_out=d_out, s=s) == d_in * d_out * s


@given(S=size)
def test_doubling_sequence_quadruples_scores(S):
    assert f.attention_scores(S=2 * S) == 4 * f.attention_scores(S=S)


@given(B=size, S=size, d=size)
def test_attention_flops_quadruple_and_kv_cache_doubles(B, S, d):
    assert f.attention_flops(B=B, S=2 * S, d=d) == 4 * f.attention_flops(B=B, S=S, d=d)
    assert f.kv_cache_memory(B=B, S=2 * S, d=d, s=2) == 2 * f.kv_cache_memory(B=B, S=S, d=d, s=2)
    assert f.attention_decode_intensity(B=B, S=S, d=d, s=2) < 1  # decode: below 2/s = 1


@given(B=size, S=size, d_in=size, d_h=size)
def test_rnn_macs_linear_in_sequence_and_batch(B, S, d_in, d_h):
    base = f.rnn_macs(B=B, S=S, d_in=d_in, d_h=d_h)
    assert f.rnn_macs(B=B, S=3 * S, d_in=d_in, d_h=d_h) == 3 * base
    assert f.rnn_macs(B=2 * B, S=S, d_in=d_in, d_h=d_h) == 2 * base


@given(B=size, H=st.integers(1, 256), K=st.integers(1, 7), C_in=size, C_out=size)
def test_conv_macs_scale_with_k_squared(B, H, K, C_in, C_out):
    one = f.conv_macs(B=B, H_out=H, W_out=H, K=K, C_in=C_in, C_out=C_out)
    assert f.conv_macs(B=B, H_out=H, W_out=H, K=2 * K, C_in=C_in, C_out=C_out) == 4 * one


@given(B=size, H=st.integers(1, 512), C=size, s=elem)
def test_depthwise_intensity_is_bounded_by_k_squared_over_s(B, H, C, s):
    assert f.depthwise_conv_intensity(B=B, H_out=H, W_out=H, K=3, C=C, s=s) < 9 / s


@given(B=size, L=st.integers(1, 512), d=size, s=elem)
def test_embedding_lookups_stay_below_one_flop_per_element_byte(B, L, d, s):
    assert f.embedding_intensity(B=B, L=L, d=d, s=s) < 1 / s
    assert f.embedding_payload(B=2 * B, L=L, d=d, s=s) == 2 * f.embedding_payload(
        B=B, L=L, d=d, s=s
    )


@given(d=size, s=elem, c=st.sampled_from([16, 32, 64, 128]))
def test_a_random_row_moves_whole_units_and_never_less_than_itself(d, s, c):
    moved = f.random_row_bytes(d=d, s=s, c=c)
    assert moved % c == 0
    assert d * s <= moved < d * s + c
    ratio = f.lookup_order_ratio(d=d, s=s, c=c)
    assert 1 <= ratio < 1 + c / (d * s)
    if d * s <= c:  # a row within one unit pays for all of it
        assert ratio == c / (d * s)
    if (d * s) % c == 0:  # rows of whole units waste nothing: the model predicts no gap
        assert ratio == 1
