"""Packaging promises: a light import, units that never mix, the public surface."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

from gpuconcepts import units

ROOT = Path(__file__).resolve().parents[1]


def test_import_needs_only_sympy_and_numpy():
    code = (
        "import sys, gpuconcepts, gpuconcepts.cli, gpuconcepts.questions;"
        "heavy = [m for m in ('torch', 'matplotlib') if m in sys.modules];"
        "print(','.join(heavy))"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == ""


def test_sizes_are_read_without_torch():
    code = (
        "import sys;"
        "from gpuconcepts.sizes import load_presets, load_sweeps;"
        "from gpuconcepts.sizing import RunSizes;"
        "mlp = load_presets('cpu', True, free_bytes=2**34)['mlp'];"
        "sweep = load_sweeps('cpu', True, free_bytes=2**34)['mlp_B'];"
        "run = RunSizes.resolve('cpu', True, free_bytes=2**34);"
        "claims, whole = run.claims, run.wholemodel;"
        "print(mlp['B'] > 0, sweep[:2], claims.mlp_batches[:2], whole.repeats,"
        " 'torch' in sys.modules)"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    presets = tomllib.loads((Path(__file__).parents[1] / "conf" / "presets.toml").read_text())
    repeats = str(presets["wholemodel"]["cpu"]["quick"]["repeats"])  # the quick table's own
    assert run.stdout.split() == ["True", "(1,", "64)", "(1,", "2)", repeats, "False"]


def test_the_pages_modules_import_without_torch():
    """A page that only reads the build's run must not pay for torch (about a second) or
    matplotlib when its module loads: the roofline page names the peaks' sweeps from
    gpuconcepts.sweeps, not from kernels.peaks (whose package imports torch)."""
    code = (
        "import sys, importlib, pkgutil, gpuconcepts.render.pages as pages;"
        "[importlib.import_module(m.name) for m in"
        " pkgutil.iter_modules(pages.__path__, pages.__name__ + '.')];"
        "import gpuconcepts.sweeps;"
        "print(len(list(pkgutil.iter_modules(pages.__path__))) > 10,"
        " [m for m in ('torch', 'matplotlib') if m in sys.modules])"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.split() == ["True", "[]"]


def test_a_built_wheel_carries_the_presets_file(tmp_path: Path):
    """conf/presets.toml is the one copy; the build copies it into the package (no link)."""
    assert not (ROOT / "src" / "gpuconcepts" / "presets.toml").exists()
    tree = tmp_path / "tree"
    tree.mkdir()
    for name in ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, tree / name)
    shutil.copytree(ROOT / "conf", tree / "conf")
    shutil.copytree(ROOT / "src", tree / "src", ignore=shutil.ignore_patterns("__pycache__"))
    build = [sys.executable, "-m", "pip", "wheel", "-q", "--no-build-isolation", "--no-deps"]
    subprocess.run([*build, str(tree), "-w", str(tmp_path)], check=True, capture_output=True)
    (wheel,) = tmp_path.glob("gpuconcepts-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        shipped = archive.read("gpuconcepts/presets.toml")
    assert shipped == (ROOT / "conf" / "presets.toml").read_bytes()


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
