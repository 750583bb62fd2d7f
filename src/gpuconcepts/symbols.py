"""Every sympy symbol of the book, declared once with its meaning, unit and domain.

>>> SYMBOLS["d_in"].meaning
'input features of a layer'
>>> SYMBOLS["s"].domain
'positive real'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import sympy as sp

from gpuconcepts.errors import GpuConceptsError

Domain = Literal["positive integer", "positive real"]


@dataclass(frozen=True)
class Symbol:
    """A named quantity: its sympy symbol, what it means, its unit and the values it may take."""

    name: str
    meaning: str
    unit: str
    domain: Domain

    @property
    def sym(self) -> sp.Symbol:
        """The sympy symbol, with the assumptions that match the domain."""
        return _SYMPY[self.name]

    @property
    def is_count(self) -> bool:
        """True when the symbol only takes whole numbers (sizes, lengths, batch)."""
        return self.domain == "positive integer"

    def latex(self) -> str:
        """LaTeX for the symbol alone, e.g. ``d_{in}``."""
        return str(sp.latex(self.sym))


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
    Symbol("n_tables", "number of embedding tables", "tables", "positive integer"),
)

_SYMPY: dict[str, sp.Symbol] = {
    s.name: sp.Symbol(s.name, positive=True, integer=s.is_count) for s in _TABLE
}

SYMBOLS: dict[str, Symbol] = {s.name: s for s in _TABLE}
"""All symbols by name."""


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
