r"""Small helpers the book's pages use to glue library results into their prose.

The pure functions build Markdown from library objects and are tested here; the ``glue_*``
functions hand those strings to MyST-NB (imported inside them, so this module stays light).

The build's measurements come from one Run (:func:`build_run`), runs of other machines from
``docs/runs/`` (:func:`recorded_runs`); tables of them are rendered by :mod:`gpuconcepts.render`.

>>> print(catalogue_table(["mlp_weights"]))
| Formula | Kind | Equation |
| --- | --- | --- |
| `mlp_weights` | count | $\text{Weights} = d_{in} d_{out}$ |
"""

# MyST-NB, IPython and matplotlib are imported inside functions on purpose (README, Rules: 3).
# ruff: noqa: PLC0415

from __future__ import annotations

import base64
import hashlib
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import sympy as sp

from gpuconcepts.book_config import package_hash, plain_status
from gpuconcepts.book_runs import (
    CHAPTER_WORKLOADS,
    chapter,
    claim_measurement,
    claims_beside,
    gpu_floor_texts,
    gpu_latency_floors,
    run_source,
)
from gpuconcepts.claims.judge import judged_now, profile_of
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.formula import total
from gpuconcepts.formulas import CATALOGUE, get
from gpuconcepts.render import markdown_table, measurement_table
from gpuconcepts.render.markdown import literal, worked_answer
from gpuconcepts.render.pages import Glue, Math, bound

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from gpuconcepts.run import Run

__all__ = [  # markdown_table and measurement_table live in gpuconcepts.render
    "CHAPTER_WORKLOADS",
    "GLUED",
    "MODEL_EQUATIONS",
    "bound",
    "build_run",
    "catalogue_table",
    "chapter",
    "claim_measurement",
    "claims_beside",
    "figure_svg",
    "fill",
    "glue_all",
    "glue_figure",
    "glue_math",
    "glue_md",
    "gpu_floor_texts",
    "gpu_latency_floors",
    "literal",
    "markdown_table",
    "measurement_table",
    "package_hash",
    "plain_status",
    "profile_of",
    "recorded_runs",
    "recorded_section",
    "run_source",
    "show",
    "svg_text",
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
"""LaTeX of the models' defining equations (what a layer computes, not what it costs).

:meta hide-value:
"""


def catalogue_table(names: Iterable[str] | None = None) -> str:
    """The formulas named (default: the whole catalogue) as a Markdown table with their LaTeX."""
    chosen = [get(n) for n in names] if names is not None else list(CATALOGUE.values())
    return markdown_table(
        ["Formula", "Kind", "Equation"],
        [[f"`{f.name}`", f.kind, f"${f.equation()}$"] for f in chosen],
    )


def _docs_folder(docs: Path | None) -> Path | None:
    """``docs/`` while the book builds in a source checkout (pages run there), else None."""
    docs = Path.cwd() if docs is None else docs
    if (docs / "_build").is_dir() and (docs.parent / "src" / "gpuconcepts").is_dir():
        return docs
    return None


def _device_signs() -> str:
    """What could change the device a build resolves while its sources stay the same, read
    without torch: the GPUs CUDA may use and the NVIDIA device files present."""
    devices = sorted(str(p) for p in Path("/dev").glob("nvidia*")) if Path("/dev").is_dir() else []
    return f"{os.environ.get('CUDA_VISIBLE_DEVICES')}|{devices}"


def build_run(docs: Path | None = None) -> Run:
    """This machine's Run, collected once per build and read by every page.

    While the book builds (pages run with ``docs/`` as their working directory and
    ``docs/_build`` exists) the first page to ask collects the run — peaks, every workload,
    every claim, each kernel once per size — and saves it in ``docs/_build/.run/`` under the
    package hash and the device, so every later page (and a warm rebuild) reads the same
    measurements. A note beside it (``.device``, keyed by the package hash and the GPUs
    visible) names that file, so a page that only reads the run needs no torch to find it.
    Anywhere else (a downloaded notebook, Colab) the run is simply collected.
    Quick sizes on a CPU, full ones on a GPU.
    """
    from gpuconcepts.files import write_atomic
    from gpuconcepts.run import load

    folder = _docs_folder(docs)
    if folder is not None:
        runs = folder / "_build" / ".run"
        package = package_hash(folder.parent)
        signs = hashlib.sha256(_device_signs().encode()).hexdigest()[:12]
        note = runs / f"{package}-{signs}.device"
        if note.is_file() and (runs / note.read_text(encoding="utf-8").strip()).is_file():
            return load(runs / note.read_text(encoding="utf-8").strip())
    from gpuconcepts.collect import collect
    from gpuconcepts.measure import device_name, resolve_device  # imports torch

    device = resolve_device("auto")
    quick = device == "cpu"
    if folder is None:
        return collect(device, quick, command="the book (a notebook)")
    key = hashlib.sha256(f"{device_name(device)}|{quick}".encode()).hexdigest()[:12]
    store = runs / f"{package}-{key}.json"
    if store.is_file():
        run = load(store)
    else:
        run = collect(device, quick, command="nox -s docs (the book's build)")
        run.save(store)
    write_atomic(note, store.name)
    return run


def recorded_runs(docs: Path | None = None) -> list[Run]:
    """The runs recorded on other machines and committed in ``docs/runs/``, by file name:
    those of ``docs`` when given (built or not), else of the page's working directory. Each
    is judged again by this version's judges (:meth:`~gpuconcepts.run.Run.judged_now`), so a
    page never shows a verdict of the code that recorded it."""
    from gpuconcepts.run import load_all

    folder = docs if docs is not None else _docs_folder(None) or Path.cwd()
    return [judged_now(run) for run in load_all(folder / "runs")]


def recorded_section(name: str, docs: Path | None = None) -> str:
    """Markdown: a chapter's measurements on every recorded run, each labelled with its device
    and provenance (each at that machine's own preset sizes and dtype)."""
    parts = [
        f"**Recorded** on {run.provenance.summary} (commit "
        f"{(run.provenance.git_commit or 'unknown')[:10]}):\n\n"
        + measurement_table(
            chapter(run, name),
            run.peaks,
            source=run_source(run),
            device_name=run.provenance.device_name,
        )
        for run in recorded_runs(docs)
    ]
    if not parts:
        return "No runs from other machines are recorded in `docs/runs/` yet."
    return "\n\n".join(parts)


GLUED: dict[str, tuple[str, str]] = {}
"""Every value glued in this Python session, by name: ``(kind, content)`` with kind ``md``,
``math`` or ``figure`` (SVG text). :func:`show` reads it, so a plain notebook (Colab) can show
the numbers its own cells computed where the book's pages use ``{glue}`` references.

:meta hide-value:
"""


def _glue(name: str, kind: str, content: str, display_object: object) -> None:
    GLUED[name] = (kind, content)
    try:
        from myst_nb import glue  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError:  # a plain notebook: show() puts the value in place instead
        return
    glue(name, display_object, display=False)  # type: ignore[no-untyped-call,unused-ignore]


def glue_md(name: str, text: str) -> None:
    """Glue Markdown text under ``name`` for ``{glue:md}`` (inline) or ``{glue:md}`` (block)."""
    from IPython.display import Markdown  # type: ignore[import-untyped,import-not-found,unused-ignore]

    _glue(name, "md", text, Markdown(text))  # type: ignore[no-untyped-call,unused-ignore]


def glue_math(name: str, latex: str) -> None:
    """Glue LaTeX under ``name`` for the ``{glue:math}`` directive."""
    from IPython.display import Math  # type: ignore[import-untyped,import-not-found,unused-ignore]

    _glue(name, "math", latex, Math(latex))  # type: ignore[no-untyped-call,unused-ignore]


def glue_all(values: Glue) -> None:
    """Glue every value a page module returned (:mod:`gpuconcepts.render.pages`): Markdown
    for a ``str``, LaTeX for a :class:`~gpuconcepts.render.pages.Math`, SVG for a figure."""
    for name, value in values.items():
        if isinstance(value, str):
            glue_md(name, value)
        elif isinstance(value, Math):
            glue_math(name, value.latex)
        else:
            glue_figure(name, value)


def glue_figure(name: str, fig: Figure) -> None:
    """Glue a matplotlib figure as SVG under ``name`` for ``{glue:figure}`` (with ``:alt:``).

    The background is transparent, so the page's own background shows through (the book's
    stylesheet gives figures a dark variant in dark mode).
    """
    svg = svg_text(fig)
    _glue(name, "figure", svg, _Svg(svg))


def svg_text(fig: Figure) -> str:
    """A matplotlib figure as SVG text, with a transparent background (see glue_figure)."""
    from io import StringIO

    from matplotlib import rcParams

    from gpuconcepts.render.style import laid_out, plain_log_labels

    plain_log_labels(fig)
    # What bbox_inches="tight" does, on a figure laid out once (laid_out): savefig given the
    # box itself neither lays the figure out nor draws it to measure it, only draws it.
    with laid_out(fig) as renderer:
        box = fig.get_tightbbox(renderer).padded(rcParams["savefig.pad_inches"])
    buffer = StringIO()
    fig.savefig(buffer, format="svg", metadata={"Date": None}, bbox_inches=box, transparent=True)
    return buffer.getvalue()


def figure_svg(fig: Figure) -> object:
    """A matplotlib figure as an SVG that IPython displays, for a page's cell to display."""
    return _Svg(svg_text(fig))


class _Svg:
    r"""SVG text as IPython displays it (``image/svg+xml``): its ``<svg>`` element, as
    ``IPython.display.SVG`` shows it, without parsing the document into a DOM and writing it
    out again to find that element (tens of milliseconds for a roofline's SVG).

    >>> _Svg('<?xml version="1.0"?>\n<svg width="2pt"></svg>\n')._repr_svg_()
    '<svg width="2pt"></svg>\n'
    """

    def __init__(self, svg: str) -> None:
        self.svg = svg[svg.index("<svg") :]

    def _repr_svg_(self) -> str:
        return self.svg

    def __repr__(self) -> str:
        return "<gpuconcepts figure (SVG)>"


_PLACEHOLDER = re.compile(r"\[\[(\w[\w-]*)\]\]")


def fill(markdown: str, glued: Mapping[str, tuple[str, str]] | None = None) -> str:
    r"""Markdown with each ``[[name]]`` replaced by the value glued under that name.

    This is how the plain notebooks show their numbers: the generator turns every
    ``{glue}`` reference of a page into ``[[name]]``, and :func:`show` fills it in.

    >>> fill("A table of [[size]]; [[eq]]", {"size": ("md", "51.2 GB"), "eq": ("math", "x^2")})
    'A table of 51.2 GB; $$x^2$$'
    >>> fill("[[nope]]", {})
    Traceback (most recent call last):
    ...
    gpuconcepts.errors.GpuConceptsError: nothing was glued under 'nope': run the cells above first
    """
    values = GLUED if glued is None else glued

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in values:
            raise GpuConceptsError(f"nothing was glued under {name!r}: run the cells above first")
        kind, content = values[name]
        if kind == "math":
            return f"$${content}$$"
        if kind == "figure":
            data = base64.b64encode(content.encode()).decode()
            return f"![{name}](data:image/svg+xml;base64,{data})"
        return content

    return _PLACEHOLDER.sub(value, markdown)


def show(markdown: str) -> None:
    """Display ``markdown`` with its ``[[name]]`` placeholders filled (see :func:`fill`)."""
    from IPython.display import Markdown, display  # type: ignore[import-untyped,import-not-found,unused-ignore]

    display(Markdown(fill(markdown)))  # type: ignore[no-untyped-call,unused-ignore]
