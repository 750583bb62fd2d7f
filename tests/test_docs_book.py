"""The helpers the book's pages glue with: measurement tables, status words, shared peaks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuconcepts import book
from gpuconcepts.book import MEASUREMENT_COLUMNS, measurement_table, plain_status, shared_peaks
from gpuconcepts.measure import Measurement, Peaks

PEAKS = Peaks("cpu", 1e11, 1e10, "float32")


def lookup() -> Measurement:
    params = {"N": 1_000_000, "B": 4096, "L": 16, "d": 64, "s": 4, "dtype": "float32"}
    return Measurement("dlrm-random", "cpu", params, (2e-3, 4e-3, 3e-3), 1e6, 4e6, PEAKS)


def test_measurement_table_puts_sizes_under_the_kernel_name() -> None:
    header, rule, row = measurement_table([lookup()]).splitlines()
    assert header == "| " + " | ".join(MEASUREMENT_COLUMNS) + " |"
    assert rule.count("---") == len(MEASUREMENT_COLUMNS)
    cells = [c.strip() for c in row.strip("|").split(" | ")]
    assert cells[0] == ("`dlrm-random`<br><small>N=1,000,000, B=4,096, L=16, d=64, float32</small>")
    # median 3 ms; roofline max(1e6/1e11, 4e6/1e10) = 400 µs; times never break before the unit
    assert cells[1:4] == ["3\u00a0ms", "400\u00a0µs", "7.5×"]
    assert cells[4:] == ["333 MFLOP/s", "1.33 GB/s", "0.25", "**memory**"]


def test_measurement_table_numbered_has_a_hash_column() -> None:
    lines = measurement_table([lookup(), lookup()], numbered=True).splitlines()
    assert lines[0].startswith("| # | Kernel and sizes |")
    assert [line.split(" | ")[0] for line in lines[2:]] == ["| 1", "| 2"]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("\u2705", "succeeded"),
        (" \u274c ", " failed "),
        ("\u2705 holds", "holds"),
        ("**\u274c does not hold**", "**does not hold**"),
        ("\u2796 not visible here: no GPU", "not visible here: no GPU"),
        ("plain text, 4× faster", "plain text, 4× faster"),
    ],
)
def test_plain_status_turns_marks_into_words(text: str, words: str) -> None:
    assert plain_status(text) == words


def _checkout(tmp_path: Path) -> Path:
    """A fake checkout: docs/_build exists and src/gpuconcepts holds a source file."""
    (tmp_path / "src" / "gpuconcepts").mkdir(parents=True)
    (tmp_path / "src" / "gpuconcepts" / "x.py").write_text("x = 1\n")
    (tmp_path / "docs" / "_build").mkdir(parents=True)
    return tmp_path / "docs"


def test_shared_peaks_measures_once_per_build_and_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gpuconcepts.kernels

    calls: list[tuple[str, bool]] = []

    def fake_measure(device: str, quick: bool = False) -> Peaks:
        calls.append((device, quick))
        return Peaks("cpu", 1e11 * len(calls), 1e10, "float32", copy_bytes_per_s=9e9)

    monkeypatch.setattr(gpuconcepts.kernels, "measure_peaks", fake_measure)
    docs = _checkout(tmp_path)
    first = shared_peaks("cpu", True, docs)
    assert shared_peaks("cpu", True, docs) == first  # read back, not measured again
    assert calls == [("cpu", True)]
    (stored,) = (docs / "_build" / ".peaks").iterdir()
    assert stored.name.startswith(book.package_hash(tmp_path))
    assert json.loads(stored.read_text())["copy_bytes_per_s"] == 9e9
    shared_peaks("cpu", False, docs)  # other preset sizes: measured on their own
    assert calls == [("cpu", True), ("cpu", False)]
    (tmp_path / "src" / "gpuconcepts" / "x.py").write_text("x = 2\n")  # the package changed
    assert shared_peaks("cpu", True, docs).flops_per_s == 3e11
    assert len(calls) == 3


def test_shared_peaks_outside_a_book_build_just_measures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gpuconcepts.kernels

    def fake_measure(device: str, quick: bool = False) -> Peaks:
        del device, quick
        return PEAKS

    monkeypatch.setattr(gpuconcepts.kernels, "measure_peaks", fake_measure)
    assert shared_peaks("cpu", True, tmp_path) == PEAKS
    assert list(tmp_path.iterdir()) == []  # nothing written where no book is being built


def test_distinct_drops_a_sweep_point_that_repeats_its_base_size() -> None:
    from types import SimpleNamespace

    base = SimpleNamespace(workload="mlp", params={"B": 512, "d_in": 8})
    small = SimpleNamespace(workload="mlp-B1", params={"B": 1, "d_in": 8})
    again = SimpleNamespace(workload="mlp-B512", params={"B": 512, "d_in": 8})
    other = SimpleNamespace(workload="cnn-conv", params={"B": 512, "d_in": 8})
    assert book.distinct([base, small, again, other]) == [base, small, other]  # type: ignore[list-item]
