"""One sizing decision (issue 47, item 7): ``quick`` and the device class are resolved once, at
the top, into a :class:`~gpuconcepts.sizing.RunSizes` that holds every size, and nothing below
reads ``quick`` or the presets file again."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

from gpuconcepts import sizes as size_tables
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.sizing import RunSizes

SRC = Path(__file__).resolve().parents[1] / "src" / "gpuconcepts"
FREE = 2**36
"""Free memory the tests size against: enough that no preset is capped."""


def _shipped() -> dict[str, dict[str, object]]:
    with size_tables.presets_path().open("rb") as handle:
        return tomllib.load(handle)


@pytest.mark.parametrize("quick", [False, True])
@pytest.mark.parametrize("cls", ["cpu", "cuda-small", "cuda-large"])
def test_the_sizes_are_the_presets_files_own(cls: size_tables.DeviceClass, quick: bool) -> None:
    device = "cpu" if cls == "cpu" else "cuda"
    run = RunSizes.resolve(device, quick, free_bytes=2**40, device_cls=cls)
    shipped = _shipped()
    table = shipped[cls]
    over = table.get("quick", {}) if quick else {}

    def value(part: str, key: str) -> object:
        return over.get(part, {}).get(key, table[part][key])

    assert (run.device, run.device_cls, run.quick) == (device, cls, quick)
    assert run.presets["mlp"]["B"] == value("mlp", "B")
    assert run.presets["peaks"]["gemm_n"] == value("peaks", "gemm_n")
    assert run.presets["timing"]["repeats"] == value("timing", "repeats")
    assert run.sweeps["mlp_B"] == tuple(value("sweeps", "mlp_B"))  # type: ignore[arg-type]
    assert run.claims.mlp_batches == tuple(value("claims", "mlp_batches"))  # type: ignore[arg-type]
    assert run.budget.seconds == value("budget", "seconds")
    whole = shipped["wholemodel"][device]
    repeats = (whole.get("quick", {}) if quick else {}).get("repeats", whole["repeats"])
    assert run.wholemodel.repeats == repeats
    assert run.wholemodel.batches == tuple(whole["batches"])
    dist = shipped["distributed"]
    dist = {**dist, **(dist["quick"] if quick else {})}  # type: ignore[dict-item]
    assert (run.distributed.repeats, run.distributed.sweep) == (
        dist["repeats"],
        tuple(dist["sweep"]),  # type: ignore[arg-type]
    )


def test_known_quick_and_full_sizes_of_the_cpu() -> None:
    # the values written in conf/presets.toml ([cpu.mlp], [cpu.quick.mlp], ...)
    quick = RunSizes.resolve("cpu", True, free_bytes=FREE)
    full = RunSizes.resolve("cpu", False, free_bytes=FREE)
    assert (quick.presets["mlp"], full.presets["mlp"]["B"]) == (
        {"B": 512, "d_in": 2048, "d_out": 2048},
        1024,
    )
    assert (quick.claims.dlrm_B, quick.claims.mlp_batches[:4]) == (2048, (1, 2, 4, 8))
    assert (quick.wholemodel.repeats, full.wholemodel.repeats) == (6, 7)
    assert quick.wholemodel.timed_blocks == full.wholemodel.timed_blocks == 3
    assert (quick.distributed.repeats, full.distributed.repeats) == (6, 10)
    assert quick.distributed.timed_blocks == full.distributed.timed_blocks == 3
    assert quick.budget.seconds == 60.0


def test_the_sizes_are_capped_by_the_free_memory_given() -> None:
    roomy = RunSizes.resolve("cpu", True, free_bytes=FREE)
    tight = RunSizes.resolve("cpu", True, free_bytes=160 * 2**20)
    decode = (tight.presets["transformer_decode"]["B"], roomy.presets["transformer_decode"]["B"])
    assert decode[0] < decode[1]
    assert tight.presets["mlp"] == roomy.presets["mlp"]  # what fits is left as written


def test_a_device_that_is_not_resolved_is_refused_naming_it() -> None:
    with pytest.raises(GpuConceptsError, match=r"RunSizes.resolve: device 'auto' is not"):
        RunSizes.resolve("auto", True, free_bytes=FREE)


def test_resolving_reads_the_presets_file_once(monkeypatch: pytest.MonkeyPatch) -> None:
    reads: list[object] = []
    read = size_tables.PresetsFile.read

    def counted(path: Path | None = None) -> size_tables.PresetsFile:
        reads.append(path)
        return read(path)

    monkeypatch.setattr(size_tables.PresetsFile, "read", staticmethod(counted))
    RunSizes.resolve("cpu", True, free_bytes=FREE)
    assert reads == [None]


def test_a_run_reads_its_sizes_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("torch")
    from synthetic import PEAKS
    from test_profile import TINY_TOML

    import gpuconcepts.kernels
    from gpuconcepts.collect import collect

    path = tmp_path / "presets.toml"
    shipped = size_tables.presets_path().read_text(encoding="utf-8")
    path.write_text(TINY_TOML + shipped[shipped.index("\n[distributed]\n") :])
    monkeypatch.setattr(size_tables, "presets_path", lambda: path)
    given: list[object] = []
    monkeypatch.setattr(
        gpuconcepts.kernels, "measure_peaks", lambda _d, sizes, **_k: given.append(sizes) or PEAKS
    )
    reads: list[object] = []
    read = size_tables.PresetsFile.read

    def counted(path: Path | None = None) -> size_tables.PresetsFile:
        reads.append(path)
        return read(path)

    monkeypatch.setattr(size_tables.PresetsFile, "read", staticmethod(counted))
    run = collect("cpu", True, claims=False, wholemodel=False, distributed=False)
    assert reads == [None]  # one decision: the file read once, by RunSizes.resolve
    (sizes,) = given  # the peaks were measured at the sizes the run resolved
    assert isinstance(sizes, RunSizes)
    assert (sizes.quick, sizes.presets["mlp"]) == (True, {"B": 4, "d_in": 8, "d_out": 8})
    assert run.provenance.quick is True  # recorded as before
    assert run.provenance.sizes["presets"]["mlp"] == sizes.presets["mlp"]
    # [cpu.quick.sweeps] over [cpu.sweeps]
    assert run.provenance.sizes["sweeps"] == {"mlp_B": [1], "transformer_S": [4]}


def test_the_analyze_command_resolves_its_sizes_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("torch")
    from synthetic import PEAKS

    import gpuconcepts.kernels
    from gpuconcepts.cli import main

    model = tmp_path / "model.py"
    model.write_text("import torch\ndef build():\n    return torch.nn.Linear(4, 2, bias=False)\n")
    resolved: list[RunSizes] = []
    resolve = RunSizes.resolve.__func__  # type: ignore[attr-defined]

    def counted(cls: type[RunSizes], *args: object, **kwargs: object) -> RunSizes:
        resolved.append(resolve(cls, *args, **kwargs))
        return resolved[-1]

    monkeypatch.setattr(RunSizes, "resolve", classmethod(counted))
    given: list[object] = []
    monkeypatch.setattr(
        gpuconcepts.kernels, "measure_peaks", lambda _d, sizes, **_k: given.append(sizes) or PEAKS
    )
    argv = ["analyze", f"{model}:build", "--input", "3x4", "--repeats", "1", "--fresh", "--json"]
    assert main(argv) == 0
    assert '"source": "measured now"' in capsys.readouterr().out
    (sizes,) = resolved  # the command's one decision
    assert given == [sizes]  # the peaks measured at it, not at sizes resolved again
    assert (sizes.device, sizes.quick) == ("cpu", True)


def test_analyze_refuses_sizes_of_another_device() -> None:
    torch = pytest.importorskip("torch")
    from synthetic import PEAKS

    from gpuconcepts.analysis import analyze

    other = RunSizes.resolve("cuda", True, free_bytes=FREE, device_cls="cuda-small")
    with pytest.raises(GpuConceptsError, match=r"analyze: sizes were resolved for cuda; the "):
        analyze(torch.nn.Linear(4, 2), torch.randn(3, 4), device="cpu", peaks=PEAKS, sizes=other)


# -- nothing below the top reads quick ---------------------------------------------------------
QUICK_ALLOWED = {
    # the sizing decision and the file reader it uses
    "sizing.py:RunSizes.resolve",
    "sizes.py:PresetsFile.device_tables",
    "sizes.py:PresetsFile.part",
    "sizes.py:load_presets",
    "sizes.py:load_sweeps",
    "sizes.py:load_claim_sizes",
    "sizes.py:load_part_sizes",
    # the top: the functions a user calls with --quick, which resolve the sizes
    "collect.py:collect",
    "verify.py:judged",
    # a recorded run's quick in words, for its page
    "render/pages/method.py:kind_of",
}
"""Every function of src that may take a ``quick`` parameter."""


def _functions_taking_quick(path: Path, root: Path = SRC) -> set[str]:
    """``file:Class.function`` of each function in ``path`` with a parameter named quick."""
    found: set[str] = set()

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                a = child.args
                names = [x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
                if "quick" in names:
                    found.add(f"{path.relative_to(root).as_posix()}:{prefix}{child.name}")
                visit(child, f"{prefix}{child.name}.")

    visit(ast.parse(path.read_text()), "")
    return found


def test_only_the_top_and_the_sizing_take_quick() -> None:
    found = set().union(*(_functions_taking_quick(p) for p in SRC.rglob("*.py")))
    below = sorted(found - QUICK_ALLOWED)
    assert below == [], f"{below} take quick: pass the run's RunSizes (gpuconcepts.sizing) instead"
    assert "sizing.py:RunSizes.resolve" in found  # the walk sees methods


def test_the_walk_finds_a_quick_parameter(tmp_path: Path) -> None:
    source = tmp_path / "x.py"
    source.write_text("class A:\n    def f(self, *, quick: bool) -> None: ...\ndef g(q): ...\n")
    assert _functions_taking_quick(source, tmp_path) == {"x.py:A.f"}


READERS = {"load_presets", "load_sweeps", "load_claim_sizes", "load_part_sizes", "read"}
"""The presets file's readers (:mod:`gpuconcepts.sizes`; ``read`` is ``PresetsFile.read``)."""

READING_ALLOWED = {
    "sizes.py",  # the readers themselves
    "sizing.py",  # RunSizes.resolve, the one decision
    # quick_sizes(), the distributed part's quick table by name, read when called by examples,
    # the distributed page and tests (a measurement runs at the RunSizes it is handed)
    "distributed/report.py",
}


def _modules_reading_presets(root: Path = SRC) -> set[str]:
    """Each module of ``root`` that calls a reader of the presets file."""
    found: set[str] = set()
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                owner = func.value if isinstance(func, ast.Attribute) else None
                presets_read = name == "read" and getattr(owner, "id", "") == "PresetsFile"
                if name in READERS - {"read"} or presets_read:
                    found.add(path.relative_to(root).as_posix())
    return found


def test_only_the_sizing_reads_the_presets_file() -> None:
    found = _modules_reading_presets()
    assert found - READING_ALLOWED == set(), "read the run's RunSizes (gpuconcepts.sizing) instead"
    assert {"sizes.py", "sizing.py"} <= found  # the walk sees the readers' calls
