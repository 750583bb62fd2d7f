"""Packaging promises: a light import, units that never mix, the public surface."""

from __future__ import annotations

import subprocess
import sys

from gpuconcepts import units


def test_import_needs_only_sympy_and_numpy():
    code = (
        "import sys, gpuconcepts, gpuconcepts.cli, gpuconcepts.questions;"
        "heavy = [m for m in ('torch', 'matplotlib') if m in sys.modules];"
        "print(','.join(heavy))"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == ""


def test_bytes_in_both_unit_systems():
    assert units.decimal_bytes(51_200_000_000) == "51.2 GB"
    assert units.binary_bytes(51_200_000_000) == "47.68 GiB"
    assert units.binary_bytes(1_048_576) == "1 MiB"
    assert units.binary_bytes(4_096_000) == "3.91 MiB"
    assert units.binary_bytes(2_097_152) == "2 MiB"
    assert units.decimal_bytes(999) == "999 bytes"
    # The classic mistake: 3.35 TB/s is 3.35e12 bytes, not 3.35 * 1024**4.
    assert units.decimal_bytes(3.35e12) == "3.35 TB"


def test_counts_in_words_name_macs_or_flops():
    assert units.describe(8_388_608, "MACs") == "8,388,608 MACs (8.39 million)"
    assert units.describe(16_777_216, "FLOPs") == "16,777,216 FLOPs (16.78 million)"
    assert units.in_words(78_643_200) == "78.64 million"
    assert units.FLOPS_PER_MAC == 2
