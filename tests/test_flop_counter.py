"""Our FLOP formulas against what torch's FlopCounterMode counts on real modules and kernels."""

from __future__ import annotations

import pytest

from gpuconcepts import formulas as f

torch = pytest.importorskip("torch")
from kernel_probe import closure, timed_function
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils.flop_counter import FlopCounterMode


def _count(fn) -> int:
    with FlopCounterMode(display=False) as counter:
        fn()
    return int(counter.get_total_flops())


@pytest.mark.parametrize(("B", "d_in", "d_out"), [(64, 512, 256), (3, 17, 5)])
def test_linear(B, d_in, d_out):
    layer = torch.nn.Linear(d_in, d_out, bias=False)
    x = torch.randn(B, d_in)
    assert _count(lambda: layer(x)) == f.mlp_flops(B=B, d_in=d_in, d_out=d_out)


@pytest.mark.parametrize(("B", "H", "C_in", "C_out"), [(1, 32, 16, 32), (2, 7, 3, 5)])
def test_conv2d(B, H, C_in, C_out):
    conv = torch.nn.Conv2d(C_in, C_out, 3, padding=1, bias=False)
    x = torch.randn(B, C_in, H, H)
    macs = f.conv_macs(B=B, H_out=H, W_out=H, K=3, C_in=C_in, C_out=C_out)
    assert (
        _count(lambda: conv(x))
        == 2 * macs
        == f.conv_flops(B=B, H_out=H, W_out=H, K=3, C_in=C_in, C_out=C_out)
    )


@pytest.mark.parametrize(("B", "S", "d"), [(2, 128, 64), (1, 33, 8)])
def test_explicit_attention(B, S, d):
    q, k, v = (torch.randn(B, S, d) for _ in range(3))

    def attention():
        scores = torch.softmax(q @ k.transpose(-2, -1) / d**0.5, dim=-1)
        return scores @ v

    assert _count(attention) == f.attention_flops(B=B, S=S, d=d)


@pytest.mark.parametrize("workload", ["transformer-prefill", "transformer-prefill-causal"])
def test_sdpa_prefill_kernels(workload, monkeypatch):
    # The functions the two prefill kernels time, with their own Q, K and V.
    B, S, d, heads = 2, 9, 12, 3
    fn, m = timed_function(monkeypatch, workload, {"B": B, "S": S, "d": d, "heads": heads})
    causal = workload.endswith("-causal")
    formula = f.attention_flops_causal if causal else f.attention_flops
    assert m.flops == formula(B=B, S=S, d=d)

    # torch 2.13's FlopCounterMode has no formula for the CPU's fused attention op
    # (_scaled_dot_product_flash_attention_for_cpu): it counts nothing there.
    assert _count(fn) == 0
    # On the math backend SDPA is two batched matmuls, which it counts: the full S×S square
    # in both cases, because a causal mask is applied to scores already computed (its CUDA
    # formulas say the same: "We aren't accounting for causal attention here").
    with sdpa_kernel(SDPBackend.MATH):
        assert _count(fn) == f.attention_flops(B=B, S=S, d=d)

    # What the causal formula counts is the products a causal kernel needs: a multiply-add
    # per width element for each (query, key) pair the mask lets through, in QKᵀ and again in
    # P·V. The kernel's own attention weights say which pairs those are: with V = identity its
    # output is P, nonzero exactly where a key is visible.
    q, k = closure(fn)["q"], closure(fn)["k"]
    identity = torch.eye(S).expand(B, heads, S, S)
    with torch.inference_mode():
        weights = torch.nn.functional.scaled_dot_product_attention(q, k, identity, is_causal=causal)
    visible_pairs = int(torch.count_nonzero(weights))
    assert visible_pairs == B * heads * (S * (S + 1) // 2 if causal else S * S)
    width = d // heads
    assert formula(B=B, S=S, d=d) == 2 * 2 * visible_pairs * width
