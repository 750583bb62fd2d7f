"""What a GPU is rounds the launch's equivalents (the FLOPs and bytes a launch's time is worth)
like every other measured quantity: three significant digits, through ``units.si``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpuconcepts import units
from gpuconcepts.hardware import lookup
from gpuconcepts.render.pages.gpu_basics import anatomy, leading_run
from gpuconcepts.run import Run, load_all

RUNS = Path(__file__).resolve().parents[1] / "docs" / "runs"
_DIGITS = re.compile(r"\d[\d,.]*")


def significant_digits(text: str) -> int:
    """The most significant digits of any number in ``text`` (``13.38 billion``: 4)."""
    return max(
        (len(d.replace(",", "").replace(".", "").lstrip("0")) for d in _DIGITS.findall(text)),
        default=0,
    )


@pytest.fixture(scope="module")
def run() -> Run:
    found = leading_run(load_all(RUNS))
    if found is None or found.peaks.latency_seconds is None:
        pytest.skip("no GPU run with a launch time recorded in docs/runs/")
    return found


def test_the_launch_equivalents_are_rounded_as_the_book_rounds(run: Run) -> None:
    glue = anatomy([run])
    gpu = lookup(run.provenance.device_name)
    assert gpu is not None
    launch = run.peaks.latency_seconds
    assert launch is not None
    peak = gpu.flops_per_s[gpu.sixteen_bit]
    assert glue["launch_flops"] == units.si(peak * launch, "FLOP")
    assert glue["launch_bytes"] == units.si(gpu.bytes_per_s * launch, "B")
    assert significant_digits(str(glue["launch_flops"])) <= 3
    assert significant_digits(str(glue["launch_bytes"])) <= 3


def test_the_digit_count_sees_four_digits() -> None:
    assert significant_digits("13.38 billion") == 4
    assert significant_digits("65 MB") == 2
