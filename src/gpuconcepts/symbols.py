"""Every sympy symbol of the book, declared once with its meaning, unit and domain.

>>> SYMBOLS["d_in"].meaning
'input features of a layer'
>>> SYMBOLS["s"].domain
'positive real'
>>> SYMBOLS["alpha"].allows(1), SYMBOLS["stage"].allows(0), SYMBOLS["B"].allows(0)
(False, True, False)
>>> SYMBOLS["alpha"].rule
'must lie strictly between 0 and 1'
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

import sympy as sp

from gpuconcepts.errors import GpuConceptsError

Domain = Literal["positive integer", "positive real", "between 0 and 1", "0, 1, 2 or 3"]
"""The values a symbol may take: a count, a size, a probability, a ZeRO stage."""

_RANGES: dict[Domain, tuple[str, Fraction, bool, Fraction | None, bool]] = {
    # the rule as an error says it; lowest value, whether it is allowed; highest, likewise
    "positive integer": ("must be positive", Fraction(0), False, None, False),
    "positive real": ("must be positive", Fraction(0), False, None, False),
    "between 0 and 1": (
        "must lie strictly between 0 and 1",
        Fraction(0),
        False,
        Fraction(1),
        False,
    ),
    "0, 1, 2 or 3": ("must be 0, 1, 2 or 3", Fraction(0), True, Fraction(3), True),
}
_WHOLE: frozenset[Domain] = frozenset({"positive integer", "0, 1, 2 or 3"})


@dataclass(frozen=True)
class Symbol:
    """A named quantity: its sympy symbol, what it means, its unit and the values it may take."""

    name: str
    meaning: str
    unit: str
    domain: Domain
    latex_name: str | None = None

    @property
    def sym(self) -> sp.Symbol:
        """The sympy symbol, with the assumptions that match the domain."""
        return _SYMPY[self.name]

    @property
    def is_count(self) -> bool:
        """True when the symbol only takes whole numbers (sizes, lengths, batch, a stage)."""
        return self.domain in _WHOLE

    @property
    def rule(self) -> str:
        """What a value must satisfy beyond being a (whole) number, as an error says it."""
        return _RANGES[self.domain][0]

    @property
    def bounds(self) -> tuple[Fraction, bool, Fraction | None, bool]:
        """The range: lowest value and whether it is allowed, highest (None: no bound) likewise.

        >>> SYMBOLS["stage"].bounds
        (Fraction(0, 1), True, Fraction(3, 1), True)
        """
        _, low, low_allowed, high, high_allowed = _RANGES[self.domain]
        return low, low_allowed, high, high_allowed

    def allows(self, value: Fraction | int | float) -> bool:
        """True when ``value`` lies in the domain's range (wholeness is checked apart)."""
        _, low, low_allowed, high, high_allowed = _RANGES[self.domain]
        above = value > low or (low_allowed and value == low)
        below = high is None or value < high or (high_allowed and value == high)
        return bool(above and below)

    def latex(self) -> str:
        """LaTeX for the symbol alone, e.g. ``d_{in}``."""
        return str(sp.latex(self.sym, symbol_names=LATEX_NAMES))


_TABLE: tuple[Symbol, ...] = (
    Symbol("N", "rows in the embedding table", "rows", "positive integer"),
    Symbol(
        "d", "vector width: embedding dimension or model dimension", "elements", "positive integer"
    ),
    Symbol(
        "s", "bytes per element (4 for FP32, 2 for FP16, 0.5 for 4-bit)", "bytes", "positive real"
    ),
    Symbol("B", "batch size", "samples", "positive integer"),
    Symbol("L", "embedding rows looked up per sample", "rows", "positive integer"),
    Symbol(
        "c",
        "bytes memory moves as one unit: a CPU cache line, a GPU sector",
        "bytes",
        "positive integer",
    ),
    Symbol("d_in", "input features of a layer", "features", "positive integer"),
    Symbol("d_out", "output features of a layer", "features", "positive integer"),
    Symbol("d_h", "hidden-state width of an RNN", "features", "positive integer"),
    Symbol("H_out", "output height of a convolution", "pixels", "positive integer"),
    Symbol("W_out", "output width of a convolution", "pixels", "positive integer"),
    Symbol("K", "kernel (filter) side length", "pixels", "positive integer"),
    Symbol("C_in", "input channels", "channels", "positive integer"),
    Symbol("C_out", "output channels", "channels", "positive integer"),
    Symbol(
        "C", "channels of a depthwise convolution (input = output)", "channels", "positive integer"
    ),
    Symbol("S", "sequence length", "tokens", "positive integer"),
    Symbol(
        "S_q", "queries of an attention call (1 in a decode step)", "tokens", "positive integer"
    ),
    Symbol(
        "S_kv",
        "keys and values each query attends to (the cached tokens in a decode step)",
        "tokens",
        "positive integer",
    ),
    Symbol(
        "S_tile",
        "query rows per tile of a tiled (flash) attention kernel",
        "tokens",
        "positive integer",
    ),
    Symbol("F", "floating-point operations of a kernel", "FLOPs", "positive real"),
    Symbol("Q", "bytes a kernel must move to or from DRAM", "bytes", "positive real"),
    Symbol("P", "peak compute throughput", "FLOP/s", "positive real"),
    Symbol("beta", "peak memory bandwidth", "bytes/s", "positive real"),
    Symbol(
        "I", "arithmetic intensity: FLOPs per byte of DRAM traffic", "FLOP/byte", "positive real"
    ),
    Symbol(
        "t_launch",
        "least time of one kernel call: launching it and the framework's dispatch",
        "seconds",
        "positive real",
        r"t_{\mathrm{launch}}",
    ),
    # from a layer to a model
    Symbol("n_params", "parameters (weights) of a model", "parameters", "positive integer"),
    Symbol("n_kv", "key/value heads of an attention layer", "heads", "positive integer"),
    Symbol("d_head", "width of one attention head", "elements", "positive integer"),
    Symbol("d_ff", "hidden width of a transformer's MLP", "features", "positive integer"),
    Symbol("M_w", "bytes of a model's weights", "bytes", "positive real"),
    Symbol("M_kv", "bytes of the KV cache of every layer", "bytes", "positive real"),
    # beyond one device
    Symbol("W", "number of devices (world size)", "devices", "positive integer"),
    Symbol("p", "pipeline stages", "stages", "positive integer"),
    Symbol("m", "micro-batches per batch in a pipeline", "micro-batches", "positive integer"),
    Symbol(
        "t_stage",
        "a pipeline stage's work on one micro-batch",
        "seconds",
        "positive real",
        r"t_{\mathrm{stage}}",
    ),
    Symbol(
        "t_msg",
        "time of one message between neighbouring pipeline stages (α + bytes / bandwidth)",
        "seconds",
        "positive real",
        r"t_{\mathrm{msg}}",
    ),
    Symbol("n_tables", "number of embedding tables", "tables", "positive integer"),
    # serving and scaling
    Symbol("n_layers", "transformer layers of a model", "layers", "positive integer"),
    Symbol("M_dev", "memory of one device", "bytes", "positive real"),
    Symbol(
        "N_d", "data-parallel devices sharing ZeRO's model states", "devices", "positive integer"
    ),
    Symbol(
        "stage",
        "ZeRO stage: 0 none, 1 optimizer states, 2 and gradients, 3 and weights",
        "stage",
        "0, 1, 2 or 3",
        r"\mathrm{stage}",
    ),
    Symbol(
        "k_opt",
        "optimizer-state bytes per parameter (12 for mixed-precision Adam)",
        "bytes",
        "positive real",
    ),
    Symbol(
        "v",
        "model chunks per device in an interleaved pipeline schedule",
        "chunks",
        "positive integer",
    ),
    Symbol(
        "alpha",
        "chance that the target model accepts a drafted token",
        "probability",
        "between 0 and 1",
    ),
    Symbol("gamma", "tokens the draft model proposes per step", "tokens", "positive integer"),
    Symbol(
        "c_draft",
        "time of a draft-model step over a target-model step",
        "ratio",
        "positive real",
        r"c_{\mathrm{draft}}",
    ),
    Symbol(
        "n_tokens",
        "tokens one device routes through a mixture-of-experts layer",
        "tokens",
        "positive integer",
    ),
    Symbol(
        "top_k",
        "experts each token is routed to",
        "experts",
        "positive integer",
        r"k_{\mathrm{top}}",
    ),
    # the roofs of one machine
    Symbol("n_cores", "cores (hardware threads) a kernel runs on", "cores", "positive integer"),
    Symbol(
        "lanes",
        "elements one vector instruction holds (16 float32 in 512 bits)",
        "elements",
        "positive integer",
        r"\mathrm{lanes}",
    ),
    Symbol("n_fma", "fused multiply-add units per core", "units", "positive integer"),
    Symbol("f_clk", "clock of a core", "Hz", "positive real", r"f_{\mathrm{clk}}"),
    Symbol("R", "rows fetched at random addresses", "rows", "positive integer"),
    Symbol(
        "s_idx",
        "bytes of one row index of a lookup (8 for torch's int64)",
        "bytes",
        "positive integer",
        r"s_{\mathrm{idx}}",
    ),
    Symbol(
        "r_line",
        "sustained rate of independent line fetches from memory",
        "lines/s",
        "positive real",
        r"r_{\mathrm{line}}",
    ),
    Symbol(
        "n_ops",
        "operations dispatched per step of a kernel from inside the framework (a mean)",
        "operations",
        "positive real",
    ),
    Symbol(
        "n_calls",
        "operations Python calls per step of a kernel (a mean)",
        "operations",
        "positive real",
        r"n_{\mathrm{calls}}",
    ),
    Symbol(
        "t_call",
        "latency floor: the time of the smallest operation Python calls",
        "seconds",
        "positive real",
        r"t_{\mathrm{call}}",
    ),
    Symbol(
        "t_op",
        "per-call floor: the time of the smallest operation the framework dispatches",
        "seconds",
        "positive real",
        r"t_{\mathrm{op}}",
    ),
)

_SYMPY: dict[str, sp.Symbol] = {
    s.name: (
        sp.Symbol(s.name, integer=True, nonnegative=True)
        if s.domain == "0, 1, 2 or 3"
        else sp.Symbol(s.name, positive=True, integer=s.is_count)
    )
    for s in _TABLE
}

LATEX_NAMES: dict[sp.Symbol, str] = {
    _SYMPY[s.name]: s.latex_name for s in _TABLE if s.latex_name is not None
}
"""LaTeX for the symbols whose name sympy would print as a product of letters (``stage``); the
API page's symbol table shows each one typeset.

:meta hide-value:
"""

SYMBOLS: dict[str, Symbol] = {s.name: s for s in _TABLE}
"""All symbols by name; the API page's symbol table shows each one typeset.

:meta hide-value:
"""


def sym(name: object) -> sp.Symbol:
    """The sympy symbol called ``name``: a declared name only, never an expression to parse.

    >>> sym("d_in")
    d_in
    >>> sym("N + 1")
    Traceback (most recent call last):
    ...
    gpuconcepts.errors.GpuConceptsError: unknown symbol 'N + 1'; the declared symbols are N, d, s, B, ...
    """
    if not isinstance(name, str) or name not in _SYMPY:
        first = ", ".join(list(_SYMPY)[:4])
        raise GpuConceptsError(f"unknown symbol {name!r}; the declared symbols are {first}, ...")
    return _SYMPY[name]
