r"""Small helpers the book's pages use to glue library results into their prose.

The pure functions build Markdown from library objects and are tested here; the ``glue_*``
functions hand those strings to MyST-NB (imported inside them, so this module stays light).

>>> from gpuconcepts.formulas import mlp_weights
>>> print(markdown_table(["a", "b"], [[1, "x"], [2, "y|z"]]))
| a | b |
| --- | --- |
| 1 | x |
| 2 | y\|z |
>>> print(catalogue_table(["mlp_weights"]))
| Formula | Kind | Equation |
| --- | --- | --- |
| `mlp_weights` | count | $\text{Weights} = d_{in} d_{out}$ |
"""

# MyST-NB, IPython and matplotlib are imported inside functions on purpose (DESIGN rule 3).
# ruff: noqa: PLC0415

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import sympy as sp

from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.formula import total
from gpuconcepts.formulas import CATALOGUE, get
from gpuconcepts.units import describe, plain_number, si

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from gpuconcepts.formula import Formula, Number
    from gpuconcepts.measure import Measurement, Peaks


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


def sizes(params: Mapping[str, object]) -> str:
    """Kernel sizes as ``B=64, d_in=512, float32``: the element size ``s`` is left out and the
    data type is shown bare, last.

    >>> sizes({"B": 4096, "d_in": 512, "s": 4, "dtype": "float32"})
    'B=4,096, d_in=512, float32'
    """
    shown = [
        f"{k}={plain_number(v) if isinstance(v, int | float) else v}"
        for k, v in params.items()
        if k not in ("s", "dtype")
    ]
    if "dtype" in params:
        shown.append(str(params["dtype"]))
    return ", ".join(shown)


MEASUREMENT_COLUMNS = (
    "Kernel and sizes",
    "Time",
    "Roofline time",
    "Time ÷ roofline",
    "FLOP/s",
    "Bytes/s",
    "FLOP/byte",
    "Bound",
)
"""The columns of :func:`measurement_table` (after ``#`` when numbered)."""


def measurement_table(measurements: Iterable[Measurement], *, numbered: bool = False) -> str:
    """Measurements beside the roofline's prediction, as a Markdown table narrow enough for a page.

    The sizes go under the kernel's name in small type (inline HTML), so the table has eight
    short columns; ``numbered`` puts a ``#`` column in front that matches the numbered points
    of :func:`gpuconcepts.figures.roofline_chart`.
    """
    header = ["#", *MEASUREMENT_COLUMNS] if numbered else list(MEASUREMENT_COLUMNS)
    rows = []
    for number, m in enumerate(measurements, start=1):
        row = [
            f"`{m.workload}`<br><small>{sizes(m.params)}</small>",
            si(m.seconds, "s").replace(" ", "\u00a0"),  # a time never breaks before its unit
            si(m.predicted_seconds, "s").replace(" ", "\u00a0"),
            f"{m.roofline_ratio:.1f}×",
            si(m.flops_per_s, "FLOP/s"),
            si(m.bytes_per_s, "B/s"),
            si(m.intensity, ""),
            f"**{m.bound}**",
        ]
        rows.append([str(number), *row] if numbered else row)
    return markdown_table(header, rows)


def distinct(measurements: Iterable[Measurement]) -> list[Measurement]:
    """The measurements with repeats dropped: one row per workload family and sizes.

    A sweep (``mlp-B512``) may measure the base size of its workload (``mlp``) again; a table
    that shows both repeats a row.
    """
    seen: set[tuple[str, str]] = set()
    kept = []
    for m in measurements:
        key = (m.workload.split("-", 1)[0], repr(sorted(m.params.items())))
        if key not in seen:
            seen.add(key)
            kept.append(m)
    return kept


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """A Markdown table; ``|`` inside a cell is escaped."""

    def cell(value: object) -> str:
        return str(value).replace("|", r"\|")

    lines = [
        "| " + " | ".join(header) + " |",
        "| " + " | ".join("---" for _ in header) + " |",
    ]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>])")


def literal(text: str) -> str:
    r"""Plain text made safe to put into Markdown: ``2**1.7`` stays ``2**1.7``, not bold.

    >>> literal("between 2**1.7 and 2**2.3 times, S_first")
    'between 2\\*\\*1.7 and 2\\*\\*2.3 times, S\\_first'
    """
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def catalogue_table(names: Iterable[str] | None = None) -> str:
    """The formulas named (default: the whole catalogue) as a Markdown table with their LaTeX."""
    chosen = [get(n) for n in names] if names is not None else list(CATALOGUE.values())
    return markdown_table(
        ["Formula", "Kind", "Equation"],
        [[f"`{f.name}`", f.kind, f"${f.equation()}$"] for f in chosen],
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


def package_hash(root: Path | None = None) -> str:
    """A short hash of what the book's pages execute: the package's ``*.py`` and its presets.

    ``root`` is a checkout (its ``src/gpuconcepts`` is hashed); without it, the installed
    package is hashed, which is what a notebook on Colab runs. The two agree for the same
    sources (``presets.toml`` in the package is a link to ``conf/presets.toml``).
    ``docs/conf.py`` names MyST-NB's execution cache after it, so any change to the package or
    to the kernel presets re-runs every page; the execution report prints it.

    >>> import gpuconcepts
    >>> root = Path(gpuconcepts.__file__).resolve().parents[2]
    >>> len(package_hash(root)), package_hash(root) == package_hash()
    (16, True)
    """
    import gpuconcepts

    package = Path(gpuconcepts.__file__).parent if root is None else root / "src" / "gpuconcepts"
    if not package.is_dir():
        raise GpuConceptsError(f"package_hash: {package} holds no gpuconcepts package")
    inputs = sorted([*package.rglob("*.py"), *package.glob("*.toml")])
    digest = hashlib.sha256()
    for path in inputs:
        digest.update(path.relative_to(package).as_posix().encode())
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


def shared_peaks(device: str, quick: bool, docs: Path | None = None) -> Peaks:
    """This machine's measured peaks, measured once per build and read by every page.

    Each page used to measure its own peaks, so the ridge point quoted on one page differed
    from the next by the machine's noise. While the book builds (pages run with ``docs/`` as
    their working directory and ``docs/_build`` exists) the first page to ask measures them
    and stores them in ``docs/_build/.peaks/``, under the package hash, the device's name
    and the preset size; later pages read that file. Anywhere else (a downloaded notebook,
    Colab) the peaks are simply measured.
    """
    import json
    from dataclasses import asdict

    from gpuconcepts.kernels import measure_peaks
    from gpuconcepts.measure import Peaks, device_name

    docs = Path.cwd() if docs is None else docs
    root = docs.parent
    if not ((docs / "_build").is_dir() and (root / "src" / "gpuconcepts").is_dir()):
        return measure_peaks(device, quick=quick)
    key = hashlib.sha256(f"{device_name(device)}|{quick}".encode()).hexdigest()[:12]
    store = docs / "_build" / ".peaks" / f"{package_hash(root)}-{key}.json"
    if store.is_file():
        return Peaks(**json.loads(store.read_text(encoding="utf-8")))
    peaks = measure_peaks(device, quick=quick)
    store.parent.mkdir(parents=True, exist_ok=True)
    store.write_text(json.dumps(asdict(peaks), indent=1), encoding="utf-8")
    return peaks


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


def glue_figure(name: str, fig: Figure) -> None:
    """Glue a matplotlib figure as SVG under ``name`` for ``{glue:figure}`` (with ``:alt:``).

    The background is transparent, so the page's own background shows through (the book's
    stylesheet gives figures a dark variant in dark mode).
    """
    from io import StringIO

    from IPython.display import SVG  # type: ignore[import-untyped,import-not-found,unused-ignore]

    buffer = StringIO()
    fig.savefig(
        buffer, format="svg", metadata={"Date": None}, bbox_inches="tight", transparent=True
    )
    svg = buffer.getvalue()
    _glue(name, "figure", svg, SVG(svg))  # type: ignore[no-untyped-call,unused-ignore]


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
