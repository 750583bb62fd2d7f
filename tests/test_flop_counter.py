"""Our FLOP formulas against what torch's FlopCounterMode counts on real modules."""

from __future__ import annotations

import pytest

from gpuconcepts import formulas as f

torch = pytest.importorskip("torch")
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
