r"""One descriptor per measured workload: the formulas that count its FLOPs and bytes.

A kernel (in :mod:`gpuconcepts.kernels`) times real torch code; the descriptor here says what
that code costs, from the catalogue. The same descriptor counts a fresh measurement and checks
a saved one, so a Run file whose counts no longer match the formulas is caught on loading
instead of being rendered. This module needs no torch.

>>> WORKLOADS["mlp"].counts({"B": 4, "d_in": 8, "d_out": 16, "s": 4})
(1024, 896)
>>> WORKLOADS["cnn-conv"].flops.name, dict(WORKLOADS["cnn-conv"].renamed)
('conv_flops', {'H_out': 'H', 'W_out': 'W'})
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from gpuconcepts import formulas
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.formula import Formula, Number
from gpuconcepts.size_expressions import all_known, size_of
from gpuconcepts.units import plain_number

if TYPE_CHECKING:
    from gpuconcepts.measurement import Measurement

Product = tuple[str, str, str, str]
"""A matrix product a kernel runs, as size names (``+``, ``*``, ``/`` and whole numbers
allowed): how many times, and its rows, columns and depth."""

GemmProduct = tuple[int, tuple[int, int, int]]
"""A :data:`Product` read from a kernel's params: (count, (rows, columns, depth))."""


@dataclass(frozen=True)
class Workload:
    """What one kind of kernel computes, the formulas that count it, the code that runs it and
    where the book shows it: the one registry of the measured workloads.

    ``renamed`` maps a formula symbol to the kernel's name for that size where they differ
    (the convolutions pad to 'same', so the kernel's ``H`` is the formula's ``H_out``).
    ``kernel`` is the kernel's function as a dotted path (``module:function`` under
    :mod:`gpuconcepts.kernels`, imported only when a kernel runs, since kernels need torch),
    called with ``options`` besides the sizes. ``chapter`` names the book's chapter that
    measures it ("" for the roofs' reference kernels); ``preset`` the table of
    ``conf/presets.toml`` that holds its sizes, and ``sweep`` the sweep of the presets'
    ``sweeps`` table that varies one of them, as (sweep, size). ``gemm`` lists the matrix
    products its time rests on (:data:`Product`), and ``activations`` the elements it passes
    through an activation beside them, both read by the GEMM-shape roof; ``fused`` says that
    its products run fused inside one kernel that never makes them whole (flash attention's
    tiles), so that no bare product of those shapes bounds it, and the GEMM sweep's product
    that holds each does. ``fixed_dtype``
    names the one data type a kernel always runs in, which a run's own dtype never replaces
    (the STREAM triad moves float32, as the bandwidth peak does). ``traffic`` counts the bytes
    its code moves where they exceed the minimal count of :attr:`bytes` (a lookup's int64
    indices), which the memory roofs read.
    """

    name: str
    summary: str
    flops: Formula
    bytes: Formula
    renamed: Mapping[str, str] = field(default_factory=dict)
    steps: str | None = None
    random_rows: bool = False
    kernel: str = ""
    options: Mapping[str, object] = field(default_factory=dict)
    chapter: str = ""
    preset: str = ""
    sweep: tuple[str, str] | None = None
    gemm: tuple[Product, ...] = ()
    table_rows_at_most: int | None = None
    activations: str | None = None
    fixed_dtype: str | None = None
    traffic: Formula | None = None
    fused: bool = False

    def kernel_function(self) -> Callable[..., Any]:
        """The function that prepares this workload's kernel: ``(device, peaks, **sizes)``
        (and ``dtype``) to a :class:`~gpuconcepts.kernels._common.Kernel`.

        >>> workload("dlrm-hot").kernel_function().keywords
        {'pattern': 'hot'}
        """
        module, _, name = self.kernel.partition(":")
        function = getattr(importlib.import_module(f"gpuconcepts.kernels.{module}"), name)
        return functools.partial(function, **self.options) if self.options else function

    def access(self, params: Mapping[str, object]) -> dict[str, int]:
        """The counts the roofs beyond compute and bandwidth read, from a kernel's params:
        ``steps`` (the size named by :attr:`steps`: dependent steps) and, for random row
        lookups, ``random_rows`` (B·L) and ``row_bytes`` (d·s).

        >>> WORKLOADS["dlrm-random"].access({"N": 10, "B": 4, "L": 2, "d": 16, "s": 4})
        {'random_rows': 8, 'row_bytes': 64}
        >>> WORKLOADS["rnn-loop"].access({"B": 1, "S": 32, "d_in": 8, "d_h": 8, "s": 4})
        {'steps': 32}
        """
        counts: dict[str, int] = {}
        if self.steps is not None:
            counts["steps"] = int(params[self.steps])  # type: ignore[call-overload]
        if self.random_rows:
            B, L, d, s = (int(params[k]) for k in ("B", "L", "d", "s"))  # type: ignore[call-overload]
            counts["random_rows"] = B * L
            counts["row_bytes"] = int(formulas.embedding_payload(B=1, L=1, d=d, s=s))
        return counts

    def activation_elements(self, params: Mapping[str, object]) -> int | None:
        """How many elements the kernel passes through an activation after its products (an
        RNN's tanh), from its params (:attr:`activations`); None when it
        names none or the params lack the sizes.

        >>> WORKLOADS["rnn-gemm"].activation_elements({"B": 2, "S": 32, "d_in": 8, "d_h": 16})
        1024
        >>> WORKLOADS["mlp"].activation_elements({"B": 2, "d_in": 8, "d_out": 4}) is None
        True
        """
        if self.activations is None or not all_known([self.activations], params):
            return None
        return size_of(self.activations, params)

    def random_table_bytes(self, params: Mapping[str, object]) -> int | None:
        """The bytes of the table a random row lookup draws its rows from (N rows of d·s, or
        the hot set's :attr:`table_rows_at_most`), which sets the memory level that serves
        them; None for other kernels or params without the sizes.

        >>> WORKLOADS["dlrm-random"].random_table_bytes({"N": 4096, "d": 16, "s": 4})
        262144
        >>> WORKLOADS["dlrm-hot"].random_table_bytes({"N": 4096, "d": 16, "s": 4})
        65536
        """
        sizes = [params.get(name) for name in ("N", "d", "s")]
        if not self.random_rows or not all(isinstance(v, int) for v in sizes):
            return None
        N, d, s = cast("list[int]", sizes)
        rows = N if self.table_rows_at_most is None else min(N, self.table_rows_at_most)
        return int(formulas.embedding_memory(N=rows, d=d, s=s))

    def gemm_products(self, params: Mapping[str, object]) -> tuple[GemmProduct, ...]:
        """The matrix products this kernel's time rests on, as (count, (rows, columns, depth)),
        from a kernel's params (:attr:`gemm`); none for a kernel that runs none, or whose params
        lack the sizes (a hand-made measurement; a saved one is checked on loading).

        >>> WORKLOADS["mlp"].gemm_products({"B": 4, "d_in": 8, "d_out": 16, "s": 4})
        ((1, (4, 16, 8)),)
        >>> WORKLOADS["rnn-hoisted"].gemm_products({"B": 2, "S": 32, "d_in": 8, "d_h": 16})
        ((1, (64, 16, 8)), (32, (2, 16, 16)))
        >>> WORKLOADS["transformer-prefill"].gemm_products({"B": 2, "S": 512, "d": 512, "heads": 8})
        ((32, (512, 512, 64)),)
        >>> WORKLOADS["cnn-depthwise"].gemm_products({})
        ()
        """
        names = [name for product in self.gemm for name in product]
        if not all_known(names, params):
            return ()

        return tuple(
            (size_of(count, params), (size_of(r, params), size_of(c, params), size_of(d, params)))
            for count, r, c, d in self.gemm
        )

    def arguments(self, formula: Formula, params: Mapping[str, object]) -> dict[str, Number]:
        """The values of ``formula``'s symbols, read from a kernel's params."""
        values: dict[str, Number] = {}
        for symbol in formula.params:
            key = self.renamed.get(symbol, symbol)
            value = params.get(key)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise GpuConceptsError(
                    f"workload {self.name!r}: {formula.name} needs the size {key!r}, "
                    f"but the params hold {value!r}"
                )
            values[symbol] = value
        return values

    def extra_bytes(self, params: Mapping[str, object]) -> int | float:
        """The bytes one call's code moves beyond the minimal count of :attr:`bytes`
        (:attr:`traffic`, its indices :data:`INDEX_BYTES` each); 0 for a kernel that moves no
        more, or params without the sizes.

        >>> WORKLOADS["dlrm-sequential"].extra_bytes({"B": 2, "L": 3, "d": 4, "s": 4})
        64
        >>> WORKLOADS["mlp"].extra_bytes({"B": 2, "d_in": 8, "d_out": 4, "s": 4})
        0
        """
        names = [
            symbol for symbol in (self.traffic.params if self.traffic else ()) if symbol != "s_idx"
        ]
        if self.traffic is None or not all_known(names, params):
            return 0
        sizes = {**params, "s_idx": INDEX_BYTES}
        moved = self.traffic(**self.arguments(self.traffic, sizes))
        return _plain(moved - self.bytes(**self.arguments(self.bytes, params)))

    def counts(self, params: Mapping[str, object]) -> tuple[int | float, int | float]:
        """FLOPs and minimal bytes of one call at these sizes (ints when whole)."""
        return (
            _plain(self.flops(**self.arguments(self.flops, params))),
            _plain(self.bytes(**self.arguments(self.bytes, params))),
        )


def _plain(value: Number) -> int | float:
    """An exact count as an int when whole (a Fraction only when s is fractional)."""
    return int(value) if float(value).is_integer() else float(value)


HOT_ROWS = 1024
"""Rows in the hot set of DLRM's ``"hot"`` pattern: small enough to stay in any cache."""

INDEX_BYTES = 8
"""Bytes of one row index or bag offset of a lookup: torch's int64 (a test checks the kernel's
indices are of that size)."""


def _lookup(
    pattern: str, summary: str, *, random_rows: bool = False, at_most: int | None = None
) -> Workload:
    return Workload(
        f"dlrm-{pattern}",
        summary,
        formulas.embedding_bag_flops,
        formulas.embedding_bag_bytes,
        traffic=formulas.embedding_bag_traffic,
        random_rows=random_rows,
        table_rows_at_most=at_most,
        kernel="dlrm:embedding_lookup_kernel",
        options={"pattern": pattern},
        chapter="dlrm",
        preset="dlrm",
    )


def _rnn(
    name: str,
    summary: str,
    kernel: str,
    *,
    chain: bool = True,
    gemm: tuple[Product, ...] = (("S", "B", "d_h", "d_in+d_h"),),
) -> Workload:
    # each of the S steps multiplies [x_t, h_{t-1}] (d_in + d_h columns) by the stacked weights
    return Workload(name, summary, formulas.rnn_flops, formulas.rnn_bytes,
                    steps="S" if chain else None, kernel=f"rnn:{kernel}", chapter="rnn",
                    preset="rnn", gemm=gemm, activations="S*B*d_h")  # tanh of every h_t  # fmt: skip


_SAME = {"H_out": "H", "W_out": "W"}
# every step's x_t W_x as one GEMM up front, then h_{t-1} W_h step by step
_HOISTED: tuple[Product, ...] = (("1", "S*B", "d_h", "d_in"), ("S", "B", "d_h", "d_h"))
# the Python loop's two addmm a step: x_t W_x, then h_{t-1} W_h (two products, not one stacked)
_STEPWISE: tuple[Product, ...] = (("S", "B", "d_h", "d_in"), ("S", "B", "d_h", "d_h"))
_LINEAR: tuple[Product, ...] = (("1", "B", "d_out", "d_in"),)  # x (B × d_in) by Wᵀ (d_in × d_out)
# each head's Q (S × d_head) by Kᵀ (d_head × S), then the scores (S × S) by V (S × d_head): two
# products per head and sequence, each held by an S × S × S one; a causal kernel needs half.
# No activation: a fused (flash) kernel's softmax runs inside its tiles, faster than a bare
# tanh pass over S² elements (2026-12-03: counting one made prefill beat its bound)
_ATTENTION: tuple[Product, ...] = (("2*B*heads", "S", "S", "d/heads"),)
_CAUSAL: tuple[Product, ...] = (("B*heads", "S", "S", "d/heads"),)

WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in (
        _lookup("random", "embedding_bag (sum) over uniformly random rows", random_rows=True),
        _lookup("sequential", "embedding_bag (sum) over consecutive rows"),
        _lookup("hot", "embedding_bag (sum) over a small hot set of rows", random_rows=True,
                at_most=HOT_ROWS),  # random rows, from a set a cache holds
        Workload("dlrm-dense", "the dense part of DLRM: one nn.Linear", formulas.mlp_flops,
                 formulas.mlp_bytes, kernel="dlrm:dense_mlp_kernel", chapter="dlrm",
                 preset="dlrm_dense", gemm=_LINEAR),
        Workload("mlp", "nn.Linear without bias", formulas.mlp_flops, formulas.mlp_bytes,
                 kernel="mlp:linear_kernel", chapter="mlp", preset="mlp", sweep=("mlp_B", "B"),
                 gemm=_LINEAR),
        Workload("cnn-conv", "dense K×K conv2d, 'same' padding", formulas.conv_flops,
                 formulas.conv_bytes, _SAME, kernel="cnn:conv2d_kernel", chapter="cnn",
                 preset="cnn"),
        Workload("cnn-depthwise", "depthwise K×K conv2d (groups = C)",
                 formulas.depthwise_conv_flops, formulas.depthwise_conv_bytes, _SAME,
                 kernel="cnn:depthwise_conv2d_kernel", chapter="cnn", preset="cnn_depthwise"),
        # nn.RNN hoists too: aten's CPU RNN runs one linear over all S·B inputs, then per step
        # h W_h (addmm), the add of that step's input and the tanh (cuDNN's fused RNN likewise)
        _rnn("rnn-module", "nn.RNN (tanh) over S steps", "rnn_module_kernel", gemm=_HOISTED),
        _rnn("rnn-loop", "the RNN step by step in a Python loop", "step_loop_kernel",
             gemm=_STEPWISE),
        _rnn("rnn-hoisted", "the loop with x_t W_x for all t as one GEMM up front",
             "hoisted_loop_kernel", gemm=_HOISTED),
        _rnn("rnn-gemm", "the RNN's FLOPs as one GEMM, no dependency", "batched_gemm_kernel",
             chain=False, gemm=(("1", "S*B", "d_h", "d_in+d_h"),)),
        Workload("transformer-prefill", "scaled_dot_product_attention over a prompt (encoder)",
                 formulas.attention_flops, formulas.attention_bytes,
                 kernel="transformer:prefill_kernel", chapter="transformer",
                 preset="transformer_prefill", sweep=("transformer_S", "S"), gemm=_ATTENTION,
                 fused=True),
        Workload("transformer-prefill-causal", "causal attention over a prompt (decoder)",
                 formulas.attention_flops_causal, formulas.attention_bytes,
                 kernel="transformer:prefill_kernel", options={"causal": True},
                 chapter="transformer", preset="transformer_prefill", gemm=_CAUSAL,
                 fused=True),
        Workload("transformer-decode", "one decode step against a KV cache of length S",
                 formulas.attention_decode_flops, formulas.attention_decode_bytes,
                 kernel="transformer:decode_kernel", chapter="transformer",
                 preset="transformer_decode"),
        Workload("peak-gemm", "a square n×n×n GEMM: the compute roof's reference",
                 formulas.mlp_flops, formulas.mlp_bytes, {"B": "n", "d_in": "n", "d_out": "n"},
                 kernel="peaks:gemm_kernel"),
        Workload("peak-triad", "the STREAM triad a = b + 3c: the DRAM roof's reference",
                 formulas.stream_triad_flops, formulas.stream_triad_bytes,
                 kernel="peaks:triad_kernel", fixed_dtype="float32"),
    )
}  # fmt: skip
"""Every workload by name, in the order of the book; the two roofs' reference kernels last
(timed beside the kernels a roofline claim reads against them). Chapters, kernels, preset
tables and the book's order all come from here. The API page lists them as a
table (its value, Formula objects full of LaTeX, is not printed).

:meta hide-value:
"""


def chapters() -> dict[str, tuple[str, ...]]:
    """The workloads each chapter measures, chapters and workloads in the book's order.

    >>> chapters()["cnn"]
    ('cnn-conv', 'cnn-depthwise')
    >>> list(chapters())
    ['dlrm', 'mlp', 'cnn', 'rnn', 'transformer']
    """
    found: dict[str, tuple[str, ...]] = {}
    for w in WORKLOADS.values():
        if w.chapter:
            found[w.chapter] = (*found.get(w.chapter, ()), w.name)
    return found


def chapter_of(name: str) -> str:
    """The chapter that measures the workload called ``name`` ("" for a reference kernel or
    a name outside the registry, such as a layer ``analyze`` timed).

    >>> chapter_of("rnn-gemm"), chapter_of("peak-triad"), chapter_of("conv1")
    ('rnn', '', '')
    """
    found = WORKLOADS.get(name)
    return "" if found is None else found.chapter


def workload(name: str) -> Workload:
    """The descriptor called ``name``, with the names that exist in the error.

    >>> workload("mlp").summary
    'nn.Linear without bias'
    >>> workload("gemm")
    Traceback (most recent call last):
    ...
    gpuconcepts.errors.GpuConceptsError: unknown workload 'gemm'; known: dlrm-random, dlrm-sequential, dlrm-hot, dlrm-dense, mlp, cnn-conv, cnn-depthwise, rnn-module, rnn-loop, rnn-hoisted, rnn-gemm, transformer-prefill, transformer-prefill-causal, transformer-decode, peak-gemm, peak-triad
    """
    if name not in WORKLOADS:
        raise GpuConceptsError(f"unknown workload {name!r}; known: {', '.join(WORKLOADS)}")
    return WORKLOADS[name]


def check_counts(m: Measurement) -> None:
    """Raise when ``m``'s FLOPs or bytes differ from its workload's formulas at its sizes.

    A saved measurement carries the counts of the formulas of its day; if a formula has
    changed since, its rates and roofline place would be stale numbers.

    >>> from gpuconcepts.measure import Measurement
    >>> check_counts(Measurement("mlp", "cpu", {"B": 4, "d_in": 8, "d_out": 16, "s": 4},
    ...                          (1e-6,), 1024, 896))
    >>> check_counts(Measurement("mlp", "cpu", {"B": 4, "d_in": 8, "d_out": 16, "s": 4},
    ...                          (1e-6,), 1000, 896))
    Traceback (most recent call last):
    ...
    gpuconcepts.errors.GpuConceptsError: flops is 1000, but mlp_flops at its sizes is 1,024 (a stale count)
    """
    w = workload(m.workload)
    for what, formula, saved in (("flops", w.flops, m.flops), ("bytes", w.bytes, m.bytes)):
        expected = formula(**w.arguments(formula, m.params))
        if saved != expected:
            raise GpuConceptsError(
                f"{what} is {saved!r}, but {formula.name} at its sizes is {plain_number(expected)} "
                "(a stale count)"
            )
