"""`gpuconcepts model` as a serving question: memory fit, largest batch, decode bound, latency."""

from __future__ import annotations

import json

import pytest

from gpuconcepts import formulas as f
from gpuconcepts.cli import main
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.hardware import GPUS
from gpuconcepts.model import (
    PRESETS,
    Draft,
    account,
    active_matmul_params,
    params,
    serving,
    shape_from,
)

H100 = GPUS["H100 SXM"]


def _json(capsys, *argv: str) -> dict:
    assert main(["model", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_done_when_llama2_7b_on_h100_at_4096_tokens(capsys):
    record = _json(capsys, "--preset", "llama-2-7b-like", "--gpu", "H100 SXM", "--seq", "4096")
    answer = record["serving"]
    assert answer["max_batch"] == 30
    assert answer["decode_can_be_compute_bound"] is False
    assert answer["compute_bound_batch"] is None
    assert answer["verdict"].startswith("decode is never compute-bound at 4,096 tokens")
    assert answer["fits"] is True


def test_serving_numbers_are_the_catalogues():
    shape = PRESETS["llama-2-7b-like"]
    answer = serving(shape, H100)
    kv = {"S": 4096, "n_layers": 32, "n_kv": 32, "d_head": 128, "s": 2}
    step = active_matmul_params(shape)
    assert answer.max_batch == f.max_decode_batch(M_dev=80 * 10**9, n_params=params(shape), **kv)
    assert answer.intensity_at_max_batch == f.decode_intensity(n_params=step, B=30, **kv)
    assert answer.intensity_limit == f.decode_intensity.supremum("B", n_params=step, **kv)
    assert round(answer.intensity_limit, 2) == 6.15
    assert answer.tpot_seconds == f.tpot_seconds_lower_bound(
        n_params=step, B=1, P=989e12, beta=3.35e12, **kv
    )
    assert answer.ttft_seconds == f.ttft_seconds_lower_bound(
        n_params=step, B=1, S=4096, s=2, P=989e12, beta=3.35e12
    )
    # The floor row and the TPOT agree while the step is memory-bound.
    assert account(shape).value("decode_floor") == pytest.approx(answer.tpot_seconds)


def test_a_short_context_can_turn_compute_bound_within_memory():
    short = shape_from(PRESETS["llama-3.2-1b"], seq=64)
    answer = serving(short, H100)
    kv = {"S": 64, "n_layers": 16, "n_kv": 8, "d_head": 64, "s": 2}
    knee = f.decode_intensity.reaches(
        H100.ridge_point("bf16"), "B", n_params=active_matmul_params(short), **kv
    )
    assert answer.compute_bound_batch == knee
    assert knee is not None
    assert answer.compute_bound_within_memory
    assert answer.verdict().startswith(f"decode turns compute-bound from batch {knee:,}")


def test_a_model_too_big_for_the_gpu_does_not_fit():
    answer = serving(PRESETS["llama-2-70b"], H100)
    assert not answer.fits
    assert answer.max_batch < 0
    assert answer.intensity_at_max_batch is None
    assert "does not fit in 80 GB" in "\n".join(answer.lines())


def test_speculative_rows_when_a_draft_is_given(capsys):
    record = _json(capsys, "--draft-alpha", "0.8", "--draft-gamma", "4", "--draft-cost", "0.05")
    answer = record["serving"]
    assert answer["expected_tokens"] == f.speculative_expected_tokens(alpha=0.8, gamma=4)
    assert answer["expected_tokens"] == 3.3616
    assert answer["speculative_speedup"] == f.speculative_speedup(alpha=0.8, gamma=4, c_draft=0.05)
    assert main(["model", "--draft-alpha", "0.8", "--draft-gamma", "4"]) == 0
    out = capsys.readouterr().out
    assert "3.36 tokens per target step" in out
    assert "speculative speedup, at most (free draft)  3.36×" in out  # issue 22, Deliver 3


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--gpu", "T4"], ("the T4 has no bfloat16 (bf16) peak on its datasheet, which lists "
                           "fp32, fp16: choose another --dtype or --gpu")),
        (["--dtype", "int8"], "unknown dtype 'int8'"),
        (["--draft-alpha", "0.8"], "give --draft-alpha and --draft-gamma together"),
        (["--draft-alpha", "1", "--draft-gamma", "3"], ("alpha (chance that the target model "
                                                        "accepts a drafted token) must lie "
                                                        "strictly between 0 and 1")),
        (["--experts", "8", "--top-k", "9"], "top_k (experts per token) must be at most experts"),
    ],
)  # fmt: skip
def test_refusals_are_one_line_with_status_2(argv, message, capsys):
    assert main(["model", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(("alias", "name"), [("bf16", "bfloat16"), ("fp16", "float16"),
                                             ("fp32", "float32"), ("tf32", "tf32")])  # fmt: skip
def test_dtype_aliases(alias, name, capsys):
    record = _json(capsys, "--dtype", alias)
    assert record["shape"]["dtype"] == name
    assert record["serving"]["dtype"] == name


def test_t4_serves_in_fp16_and_a_draft_without_cost_gives_a_free_drafts_speedup():
    answer = serving(shape_from(PRESETS["llama-3.2-1b"], dtype="fp16", seq=4096), GPUS["T4"],
                     Draft(0.6, 3))  # fmt: skip
    assert answer.fits
    assert answer.expected_tokens == f.speculative_expected_tokens(alpha=0.6, gamma=3)
    # (1 - 0.6^4) / (1 - 0.6) = 2.176: with a free draft the speedup is the tokens per step.
    assert answer.speculative_speedup == pytest.approx(2.176)
    assert "speculative speedup, at most (free draft)  2.18×" in "\n".join(answer.lines())


def test_unknown_gpu_is_named():
    with pytest.raises(GpuConceptsError, match="unknown GPU 'H300'"):
        account(PRESETS["gpt2-small"], "H300")


def test_mixture_text_says_the_intensity_is_an_upper_bound(capsys):
    assert main(["model", "--preset", "mixtral-8x7b", "--gpu", "H200", "--seq", "4096"]) == 0
    out = capsys.readouterr().out
    assert "a step reads only the routed ones, an upper bound on intensity" in out
