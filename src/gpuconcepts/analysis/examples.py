"""Three small models for the "Your model on the roofline" chapter to analyse, with random
weights: a CNN with a dense and a depthwise-separable block, one transformer block, and a
DLRM-like recommender. The chapter shows this file's code below its docstring.

>>> import torch
>>> small_cnn()(torch.randn(2, 3, 32, 32)).shape
torch.Size([2, 10])
>>> TransformerBlock()(torch.randn(2, 8, 128)).shape
torch.Size([2, 8, 128])
>>> TinyDLRM(rows=100)(torch.randn(2, 13), torch.randint(0, 100, (2, 3, 4))).shape
torch.Size([2, 1])
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


def small_cnn() -> nn.Module:
    """Two dense 3×3 convolutions, then a depthwise-separable block, then a classifier."""
    return nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1, bias=False),
        nn.BatchNorm2d(32),
        nn.ReLU(),
        nn.Conv2d(32, 32, 3, padding=1, bias=False),
        nn.ReLU(),
        nn.Conv2d(32, 32, 3, padding=1, groups=32, bias=False),  # depthwise
        nn.Conv2d(32, 64, 1, bias=False),  # pointwise
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(64, 10),
    )


class TransformerBlock(nn.Module):
    """Pre-norm self-attention and an MLP, each with a residual connection."""

    def __init__(self, d: int = 128, heads: int = 4, hidden: int = 512) -> None:
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.out = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.up, self.down = nn.Linear(d, hidden), nn.Linear(hidden, d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, S, d = x.shape
        q, k, v = (
            t.view(B, S, self.heads, d // self.heads).transpose(1, 2)
            for t in self.qkv(self.norm1(x)).chunk(3, dim=-1)
        )
        attended = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(B, S, d)
        x = x + self.out(attended)
        mlp: torch.Tensor = self.down(F.gelu(self.up(self.norm2(x))))
        return x + mlp


class TinyDLRM(nn.Module):
    """A bottom MLP for dense features, one embedding bag per sparse feature, a top MLP."""

    def __init__(self, tables: int = 3, rows: int = 20_000, d: int = 32, dense: int = 13) -> None:
        super().__init__()
        self.bottom = nn.Sequential(nn.Linear(dense, 64), nn.ReLU(), nn.Linear(64, d), nn.ReLU())
        self.bags = nn.ModuleList(nn.EmbeddingBag(rows, d, mode="sum") for _ in range(tables))
        self.top = nn.Sequential(nn.Linear(d * (tables + 1), 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, dense: torch.Tensor, sparse: torch.Tensor) -> torch.Tensor:
        pooled = [bag(sparse[:, i]) for i, bag in enumerate(self.bags)]
        score: torch.Tensor = self.top(torch.cat([self.bottom(dense), *pooled], dim=1))
        return score
