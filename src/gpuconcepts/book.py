r"""Small helpers the book's pages use to glue library results into their prose.

The pure functions build Markdown from library objects and are tested here; the ``glue_*``
functions hand those strings to MyST-NB (imported inside them, so this module stays light).

The build's measurements come from one Run (:func:`build_run`), runs of other machines from
``docs/runs/`` (:func:`recorded_runs`); tables of them are rendered by :mod:`gpuconcepts.render`.

>>> print(catalogue_table(["mlp_weights"]))
| Formula | Equation | Counts |
| --- | --- | --- |
| `mlp_weights` | $\text{Weights} = d_{in} d_{out}$ | count |
"""

# MyST-NB, IPython and matplotlib are imported inside functions on purpose (DESIGN rule 3).
# ruff: noqa: PLC0415

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import sympy as sp

from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.formula import total
from gpuconcepts.formulas import CATALOGUE, get
from gpuconcepts.render import markdown_table, measurement_table
from gpuconcepts.roofline import place
from gpuconcepts.units import describe

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from gpuconcepts.claims.result import ClaimResult
    from gpuconcepts.formula import Formula, Number
    from gpuconcepts.measure import Measurement
    from gpuconcepts.run import Run

__all__ = [  # markdown_table and measurement_table live in gpuconcepts.render
    "CHAPTER_WORKLOADS",
    "MODEL_EQUATIONS",
    "bound",
    "build_run",
    "catalogue_table",
    "chapter",
    "claim_measurement",
    "figure_svg",
    "glue_figure",
    "glue_math",
    "glue_md",
    "markdown_table",
    "measurement_table",
    "package_hash",
    "plain_status",
    "profile_of",
    "recorded_runs",
    "recorded_section",
    "worked_answer",
]


def _model_equations() -> dict[str, str]:
    r"""The models' defining equations, built in sympy (non-commuting: matrices) and printed.

    >>> print(_model_equations()["rnn_step"].replace("\\", "/"))
    h_{t} = f{/left(W_{x} x_{t} + W_{h} h_{t-1} + b /right)}
    >>> print(_model_equations()["cnn_layer"].replace("\\", "/"))
    /text{Output} = /operatorname{Convolution}{/left(/text{Input},/text{Filter} /right)}
    """
    X, W, Y, b, x, y = sp.symbols("X W Y b x y", commutative=False)
    W_x, W_h, x_t, h_t, h_prev = sp.symbols("W_x W_h x_t h_t h_{t-1}", commutative=False)
    Q, K_T, V, O = sp.symbols("Q K^{T} V O", commutative=False)
    d_k = sp.Symbol("d_k", positive=True)
    f = sp.Function("f")
    softmax = sp.Function(r"\operatorname{softmax}")
    convolution = sp.Function(r"\operatorname{Convolution}")
    image, kernel, feature_map = sp.symbols(
        r"\text{Input} \text{Filter} \text{Output}", commutative=False
    )
    equations = {
        "mlp_layer": sp.Eq(Y, total(X * W, b)),
        "cnn_layer": sp.Eq(feature_map, convolution(image, kernel)),
        "mlp_neuron": sp.Eq(y, f(total(W * x, b))),
        "rnn_recurrence": sp.Eq(h_t, f(x_t, h_prev)),
        "rnn_step": sp.Eq(h_t, f(total(W_x * x_t, W_h * h_prev, b))),
        "attention": sp.Eq(O, softmax(Q * K_T / sp.sqrt(d_k)) * V),
    }
    return {name: str(sp.latex(eq, order="none")) for name, eq in equations.items()}


MODEL_EQUATIONS: dict[str, str] = _model_equations()
"""LaTeX of the models' defining equations (what a layer computes, not what it costs)."""


def catalogue_table(names: Iterable[str] | None = None) -> str:
    """The formulas named (default: the whole catalogue) as a Markdown table with their LaTeX."""
    chosen = [get(n) for n in names] if names is not None else list(CATALOGUE.values())
    return markdown_table(
        ["Formula", "Equation", "Counts"],
        [[f"`{f.name}`", f"${f.equation()}$", f.kind] for f in chosen],
    )


def worked_answer(formula: Formula, **values: Number) -> str:
    r"""A worked answer as Markdown: the derivation as display math, then the value in words.

    >>> from gpuconcepts.formulas import mlp_weight_memory
    >>> print(worked_answer(mlp_weight_memory, d_in=1024, d_out=512, s=4))
    $$\text{Weight Memory} = d_{in} d_{out} s = 1{,}024 \times 512 \times 4 = 2{,}097{,}152$$
    <BLANKLINE>
    **2,097,152 bytes (2.1 MB, 2 MiB)**
    >>> from gpuconcepts.formulas import attention_scores
    >>> print(worked_answer(attention_scores, S=1000).splitlines()[-1])
    **1,000,000 (1 million)**
    """
    said = describe(formula(**values), formula.kind)
    return f"$${formula.lhs} = {formula.worked(**values)}$$\n\n**{said}**"


def package_hash(root: Path) -> str:
    """A short hash of what the book's pages execute: ``src/gpuconcepts/**/*.py`` and ``conf/*.toml``.

    ``docs/conf.py`` names MyST-NB's execution cache after it, so any change to the package or
    to the kernel presets re-runs every page; the execution report prints it.

    >>> import gpuconcepts
    >>> root = Path(gpuconcepts.__file__).resolve().parents[2]
    >>> len(package_hash(root)), package_hash(root) == package_hash(root)
    (16, True)
    """
    inputs = sorted(
        [*(root / "src" / "gpuconcepts").rglob("*.py"), *(root / "conf").glob("*.toml")]
    )
    digest = hashlib.sha256()
    for path in inputs:
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


_STATUS_MARKS = {"\u2705": "succeeded", "\u274c": "failed", "\u2796": "not run"}


def plain_status(text: str) -> str:
    """Status emoji as words: a mark alone becomes a word, a mark before a word is dropped.

    MyST-NB's execution table uses emoji that many fonts (headless
    Chromium's among them) draw as an empty box; ``docs/conf.py`` passes every text of the
    book through this function.

    >>> plain_status("\u2705"), plain_status("\u274c does not hold"), plain_status("no mark")
    ('succeeded', 'does not hold', 'no mark')
    """
    stripped = text.strip()
    if stripped in _STATUS_MARKS:
        return text.replace(stripped, _STATUS_MARKS[stripped])
    for mark in _STATUS_MARKS:
        text = text.replace(f"{mark} ", "")
    return text


def _docs_folder(docs: Path | None) -> Path | None:
    """``docs/`` while the book builds in a source checkout (pages run there), else None."""
    docs = Path.cwd() if docs is None else docs
    if (docs / "_build").is_dir() and (docs.parent / "src" / "gpuconcepts").is_dir():
        return docs
    return None


def build_run(docs: Path | None = None) -> Run:
    """This machine's Run, collected once per build and read by every page.

    While the book builds (pages run with ``docs/`` as their working directory and
    ``docs/_build`` exists) the first page to ask collects the run — peaks, every workload,
    every claim, each kernel once per size — and saves it in ``docs/_build/.run/`` under the
    package hash and the device, so every later page (and a warm rebuild) reads the same
    measurements. Anywhere else (a downloaded notebook, Colab) the run is simply collected.
    Quick sizes on a CPU, full ones on a GPU.
    """
    from gpuconcepts.measure import device_name, resolve_device
    from gpuconcepts.run import collect, load

    device = resolve_device("auto")
    quick = device == "cpu"
    folder = _docs_folder(docs)
    if folder is None:
        return collect(device, quick, command="the book (a notebook)")
    key = hashlib.sha256(f"{device_name(device)}|{quick}".encode()).hexdigest()[:12]
    store = folder / "_build" / ".run" / f"{package_hash(folder.parent)}-{key}.json"
    if store.is_file():
        return load(store)
    run = collect(device, quick, command="nox -s docs (the book's build)")
    run.save(store)
    return run


def recorded_runs(docs: Path | None = None) -> list[Run]:
    """The runs recorded on other machines and committed in ``docs/runs/``, by file name."""
    from gpuconcepts.run import load_all

    folder = _docs_folder(docs) or Path.cwd()
    return load_all(folder / "runs")


def profile_of(run: Run) -> list[Measurement]:
    """A run's profile (the five workloads at its preset sizes) in the order of the book.

    Read through a replaying lab, so it needs no torch and measures nothing.
    """
    from gpuconcepts.profile import profile_all

    sizes = run.provenance.sizes
    return profile_all(run.lab(), sizes["presets"], sizes["sweeps"])


CHAPTER_WORKLOADS: dict[str, tuple[str, ...]] = {
    "dlrm": ("dlrm-random", "dlrm-sequential", "dlrm-hot", "dlrm-dense"),
    "mlp": ("mlp",),
    "cnn": ("cnn-conv", "cnn-depthwise"),
    "rnn": ("rnn-module", "rnn-loop", "rnn-hoisted", "rnn-gemm"),
    "transformer": ("transformer-prefill", "transformer-prefill-causal", "transformer-decode"),
}
"""The workloads each chapter measures (its part of the profile)."""


def chapter(run: Run, name: str) -> list[Measurement]:
    """A chapter's measurements from a run's profile: sweeps sorted by the swept size."""
    wanted = CHAPTER_WORKLOADS[name]
    found = [m for m in profile_of(run) if m.workload in wanted]
    if name == "mlp":
        found.sort(key=lambda m: m.size("B"))
    if name == "transformer":  # the encoder's sweep over S, the causal prefill, the decode step
        order = {"transformer-prefill": 0, "transformer-prefill-causal": 1}
        found.sort(key=lambda m: (order.get(m.workload, 2), m.size("S")))
    return found


def claim_measurement(run: Run, result: ClaimResult) -> Measurement:
    """The measurement behind a roofline claim (its values name the workload and sizes)."""
    from gpuconcepts.render import sizes as sizes_text

    for m in run.measurements:
        if m.workload == result.values.get("workload") and sizes_text(
            m.params
        ) == result.values.get("sizes"):
            return m
    raise GpuConceptsError(f"{run.label}: no measurement behind claim {result.key!r}")


def bound(m: Measurement, run: Run) -> str:
    """The side of the ridge of ``m`` under its run's peaks (``"memory"`` or ``"compute"``)."""
    return place(m, run.peaks).bound


def recorded_section(name: str, docs: Path | None = None) -> str:
    """Markdown: a chapter's measurements on every recorded run, each labelled with its device
    and provenance (each at that machine's own preset sizes and dtype)."""
    parts = [
        f"**Recorded** on {run.provenance.summary} (commit "
        f"{(run.provenance.git_commit or 'unknown')[:10]}):\n\n"
        + measurement_table(chapter(run, name), run.peaks)
        for run in recorded_runs(docs)
    ]
    if not parts:
        return "No runs from other machines are recorded in `docs/runs/` yet."
    return "\n\n".join(parts)


def glue_md(name: str, text: str) -> None:
    """Glue Markdown text under ``name`` for ``{glue:md}`` (inline) or ``{glue:md}`` (block)."""
    from IPython.display import Markdown  # type: ignore[import-untyped,import-not-found,unused-ignore]
    from myst_nb import glue  # type: ignore[import-untyped,import-not-found,unused-ignore]

    glue(name, Markdown(text), display=False)  # type: ignore[no-untyped-call,unused-ignore]


def glue_math(name: str, latex: str) -> None:
    """Glue LaTeX under ``name`` for the ``{glue:math}`` directive."""
    from IPython.display import Math  # type: ignore[import-untyped,import-not-found,unused-ignore]
    from myst_nb import glue  # type: ignore[import-untyped,import-not-found,unused-ignore]

    glue(name, Math(latex), display=False)  # type: ignore[no-untyped-call,unused-ignore]


def figure_svg(fig: Figure) -> object:
    """A matplotlib figure as an IPython SVG object (what pages glue or display)."""
    from io import StringIO

    from IPython.display import SVG  # type: ignore[import-untyped,import-not-found,unused-ignore]

    buffer = StringIO()
    fig.savefig(buffer, format="svg", metadata={"Date": None}, bbox_inches="tight")
    return SVG(buffer.getvalue())  # type: ignore[no-untyped-call,unused-ignore]


def glue_figure(name: str, fig: Figure) -> None:
    """Glue a matplotlib figure as SVG under ``name`` for ``{glue:figure}`` (with ``:alt:``)."""
    from myst_nb import glue  # type: ignore[import-untyped,import-not-found,unused-ignore]

    glue(name, figure_svg(fig), display=False)  # type: ignore[no-untyped-call,unused-ignore]
