"""The exercises' answers (gpuconcepts.exercises) against plain arithmetic, and the book's
exercises: at least four on each newer page, and at most a quarter answering "never"."""

from __future__ import annotations

import math
import re
from fractions import Fraction
from pathlib import Path

import pytest

from gpuconcepts import exercises
from gpuconcepts.hardware import GPUS

DOCS = Path(__file__).resolve().parents[1] / "docs"
EXERCISE = re.compile(
    r"^::::\{exercise\}.*?^:::\{dropdown\} Solution\n.*?^:::$", re.DOTALL | re.MULTILINE
)


def test_zero_stage_is_the_papers_arithmetic() -> None:
    psi, n_d = 7_500_000_000, 64
    per_stage = [16 * psi, 4 * psi + 12 * psi / n_d, 2 * psi + 14 * psi / n_d, 16 * psi / n_d]
    for memory in (10**9, 2 * 10**9, 17 * 10**9, 32 * 10**9, 200 * 10**9):
        fitting = [z for z, need in enumerate(per_stage) if need <= memory]
        expected = fitting[0] if fitting else None
        assert exercises.zero_stage_that_fits(n_params=psi, N_d=n_d, memory_bytes=memory) == (
            expected
        )


@pytest.mark.parametrize(("p", "bubble"), [(2, 0.5), (4, 0.1), (8, 0.05), (16, 0.2)])
def test_micro_batches_are_the_closed_forms(p: int, bubble: float) -> None:
    b = Fraction(str(bubble))
    # GPipe: (p - 1) / (m + p - 1) <= b  <=>  m >= (p - 1)(1 - b) / b
    assert exercises.gpipe_micro_batches(p=p, bubble=bubble) == max(
        1, math.ceil((p - 1) * (1 - b) / b)
    )
    for v in (1, 2, 4):  # Megatron: (p - 1) / (v m) <= b  <=>  m >= (p - 1) / (v b)
        assert exercises.interleaved_micro_batches(p=p, v=v, bubble=bubble) == max(
            1, math.ceil((p - 1) / (v * b))
        )


@pytest.mark.parametrize("W", [2, 3, 8, 64])
def test_rowwise_sends_w_times_tablewise(W: int) -> None:
    assert exercises.rowwise_over_tablewise(W=W) == W


def test_moe_growth_is_the_remote_share() -> None:
    growth = exercises.moe_growth(n_tokens=4096, top_k=2, d=4096, s=2, W_from=8, W_to=64)
    assert growth == Fraction(63, 64) / Fraction(7, 8)


def test_best_draft_length_by_brute_force() -> None:
    alpha, cost = 0.8, 0.05

    def speedup(g: int) -> float:
        return (1 - alpha ** (g + 1)) / ((1 - alpha) * (g * cost + 1))

    gamma, best = exercises.best_draft_length(alpha=alpha, c_draft=cost)
    assert gamma == max(range(1, 17), key=speedup)
    assert best == pytest.approx(speedup(gamma), rel=1e-12)


@pytest.mark.parametrize(
    ("gpu", "dtype"), [("H100 SXM", "fp32"), ("H100 SXM", "tf32"), ("T4", "fp16")]
)
def test_linear_compute_bound_batch_by_counting(gpu: str, dtype: str) -> None:
    d, s = 4096, 4 if dtype in ("fp32", "tf32") else 2
    ridge = GPUS[gpu].flops_per_s[dtype] / GPUS[gpu].bytes_per_s
    batch = next(b for b in range(1, 100_000) if 2 * b * d * d / (s * (2 * b * d + d * d)) >= ridge)
    assert exercises.linear_compute_bound_batch(d_in=d, d_out=d, gpu=gpu, dtype=dtype) == batch


@pytest.mark.parametrize("page", ["model", "distributed", "analyze"])
def test_newer_pages_have_at_least_four_exercises(page: str) -> None:
    assert len(EXERCISE.findall((DOCS / f"{page}.md").read_text(encoding="utf-8"))) >= 4


def test_at_most_a_quarter_of_the_exercises_answer_never() -> None:
    blocks = [b for page in DOCS.glob("*.md") for b in EXERCISE.findall(page.read_text("utf-8"))]
    never = [b for b in blocks if "never" in b.lower()]
    assert len(blocks) >= 20
    assert 4 * len(never) <= len(blocks), f"{len(never)} of {len(blocks)} answer 'never'"
