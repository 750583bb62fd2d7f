"""The model's version covers what a prediction reads (issue 45, item 4): a change to a
workload's counts, to a formula they call, or to a ceiling's size in the presets changes it;
a change to a diagnosis, or to a size that only a diagnosis's sweep reads, does not."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpuconcepts.roofline import version


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A copy of the model's sources and of the presets, read in place of the package's."""
    copy = tmp_path / "gpuconcepts"
    for name in {*version.MODEL_SOURCES, "roofline/mechanisms.py"}:
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(version.PACKAGE / name, copy / name)
    presets = tmp_path / "presets.toml"
    shutil.copy(version.presets_path(), presets)
    monkeypatch.setattr(version, "PACKAGE", copy)
    monkeypatch.setattr(version, "presets_path", lambda: presets)
    version.model_version.cache_clear()
    yield copy
    monkeypatch.undo()
    version.model_version.cache_clear()


def _changed(path: Path, old: str, new: str) -> str:
    """The model's version after replacing ``old`` (which must be there) by ``new`` in ``path``."""
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    version.model_version.cache_clear()
    return version.model_version()


@pytest.mark.parametrize("name", ["workloads.py", "formulas/embeddings.py", "formulas/mlp.py"])
def test_a_change_to_the_counts_changes_the_version(package: Path, name: str) -> None:
    before = version.model_version()
    assert _changed(package / name, '"""', '"""A changed count. ') != before


def test_a_change_to_a_diagnosis_leaves_the_version(package: Path) -> None:
    before = version.model_version()
    assert _changed(package / "roofline/mechanisms.py", '"""', '"""A changed diagnosis. ') == before


def test_a_ceiling_s_size_changes_the_version_and_a_diagnosis_s_size_does_not(
    package: Path,
) -> None:
    presets = package.parent / "presets.toml"
    before = version.model_version()
    assert _changed(presets, "stencil_HW = 14", "stencil_HW = 15") == before
    assert _changed(presets, "gemm_n = 4096", "gemm_n = 4000") != before


def test_every_formulas_module_the_workloads_call_is_in_the_version() -> None:
    workloads = (version.PACKAGE / "workloads.py").read_text()
    called = set(re.findall(r"formulas\.(\w+)", workloads))
    assert called
    homes = {
        path.relative_to(version.PACKAGE).as_posix()
        for path in (version.PACKAGE / "formulas").glob("*.py")
        if any(re.search(rf"^{name}\b", path.read_text(), re.MULTILINE) for name in called)
    }
    assert homes
    assert homes <= set(version.MODEL_SOURCES), homes - set(version.MODEL_SOURCES)
