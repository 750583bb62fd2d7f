"""This machine's peaks, kept between runs: ``analyze`` and ``verify`` measure them once."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import pytest

from gpuconcepts import peaks_cache
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.peaks_cache import Identity, cache_folder, load_peaks, save_peaks
from gpuconcepts.roofline import Peaks
from gpuconcepts.sizing import RunSizes

HERE = Identity("cpu", "Example CPU", 2, None, "2.13.0", "0.1.0", "float32", quick=True)
PEAKS = Peaks("cpu", 1e11, 1e10, "float32", sweep=((2**20, 9e10), (2**26, 1e10), (2**27, 1e10)))


def test_kept_peaks_come_back_only_for_the_same_machine_and_software() -> None:
    save_peaks(PEAKS, HERE)
    kept = load_peaks(HERE)
    assert kept is not None
    assert kept[0] == PEAKS
    assert kept[1].startswith("20")  # when they were saved, UTC
    for change in (
        {"cpu_model": "Other CPU"},
        {"threads": 1},
        {"torch_version": "2.14.0"},
        {"gpuconcepts_version": "0.2.0"},
        {"dtype": "bfloat16"},
        {"quick": False},
    ):
        assert load_peaks(dataclasses.replace(HERE, **change)) is None, change


def test_a_damaged_file_is_measured_again() -> None:
    path = save_peaks(PEAKS, HERE)
    path.write_text("{not json")
    assert load_peaks(HERE) is None
    path.write_text(json.dumps({"identity": dataclasses.asdict(HERE), "peaks": {"device": 1}}))
    assert load_peaks(HERE) is None


def test_a_folder_that_cannot_be_written_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("")
    monkeypatch.setenv("GPUCONCEPTS_CACHE_DIR", str(blocked / "inside"))
    with pytest.raises(GpuConceptsError, match=r"cannot keep the measured peaks in .*inside"):
        save_peaks(PEAKS, HERE)


@pytest.mark.skipif(sys.platform in ("darwin", "win32"), reason="the Linux convention")
def test_the_cache_folder_follows_xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GPUCONCEPTS_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_folder() == tmp_path / "gpuconcepts"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache_folder() == Path.home() / ".cache" / "gpuconcepts"


def test_measured_once_then_kept_unless_fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("torch")
    import gpuconcepts.kernels

    measured: list[bool] = []

    def measure(_device: str, sizes: RunSizes, **_k: object) -> Peaks:
        measured.append(sizes.quick)
        return dataclasses.replace(PEAKS, flops_per_s=1e11 + len(measured))

    monkeypatch.setattr(gpuconcepts.kernels, "measure_peaks", measure)
    quick = RunSizes.resolve("cpu", True, free_bytes=2**36)
    first, said = peaks_cache.this_machine_peaks(quick)
    assert (measured, said) == ([True], "measured now")
    again, said = peaks_cache.this_machine_peaks(quick)
    assert again == first
    assert said.startswith("kept from ")
    assert "--fresh" in said
    assert len(measured) == 1
    fresh, said = peaks_cache.this_machine_peaks(quick, fresh=True)
    assert (len(measured), said) == (2, "measured now")
    assert fresh.flops_per_s == 1e11 + 2
    assert peaks_cache.this_machine_peaks(quick)[0] == fresh  # the fresh ones are kept


def test_kept_peaks_size_the_flush(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("torch")
    from gpuconcepts import measure

    monkeypatch.setattr(measure.memory, "_FLUSH_BYTES", {})
    peaks_cache.use_peaks(PEAKS, RunSizes.resolve("cpu", True, free_bytes=2**36).budget)
    # DRAM's plateau begins at 64 MiB: twice that reaches past every cache
    assert measure.flush_bytes("cpu") == 128 * 2**20


@pytest.mark.parametrize("command", ["analyze", "verify"])
def test_fresh_is_in_the_help(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    from gpuconcepts.cli import main

    assert main([command, "--help"]) == 0
    out = capsys.readouterr().out
    assert "--fresh" in out
    assert "measure this machine's peaks again" in " ".join(out.split())


def test_kept_peaks_are_measured_again_when_any_sweep_changes_a_diagnosis_s_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the stencil's sweep is a diagnosis: it leaves the model's version alone, but the peaks
    # it stored must not be kept across a change of its code
    import shutil

    from gpuconcepts.roofline import version

    package = version.PACKAGE
    copy = tmp_path / "gpuconcepts"
    for name in {*version.MODEL_SOURCES, "kernels/ceilings/stencil.py"}:
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(package / name, copy / name)
    assert "kernels/ceilings/stencil.py" not in version.MODEL_SOURCES
    monkeypatch.setattr(version, "PACKAGE", copy)

    def versions() -> tuple[str, str]:
        version.model_version.cache_clear()
        version.sweeps_version.cache_clear()
        return version.model_version(), version.sweeps_version()

    model, sweeps = versions()
    with (copy / "kernels/ceilings/stencil.py").open("a") as stencil:
        stencil.write("\n# a changed sweep\n")
    model_after, sweeps_after = versions()
    assert model_after == model
    assert sweeps_after != sweeps
    with (copy / "kernels/ceilings/compute.py").open("a") as compute:
        compute.write("\n# a changed ceiling\n")
    assert versions()[0] != model  # a ceiling's code is the model's
    monkeypatch.undo()  # and the caches filled again by the real package
    version.model_version.cache_clear()
    version.sweeps_version.cache_clear()
