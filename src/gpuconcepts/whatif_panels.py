"""The what-if panels, one per chapter: the formulas each shows, the kernels it places on the
chosen GPU's roofline, and its defaults, taken from the post's worked questions and the
formulas' doctest examples.

>>> PANELS["mlp"].defaults()
{'B': 64, 'd_in': 512, 'd_out': 256, 's': 4}
>>> PANELS["roofline"].defaults()
{'B': 512, 'd_in': 4096, 'd_out': 1024, 's': 2}
>>> default_dtype(4), default_dtype(2)
('fp32', 'fp16')
"""

from __future__ import annotations

import ast
import doctest
from dataclasses import dataclass

from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.formula import Formula, Number
from gpuconcepts.formulas import get
from gpuconcepts.hardware import DEFAULT_GPU, DTYPE_BYTES, DTYPES, GPUS
from gpuconcepts.questions import question

GPU_SYMBOLS: dict[str, str] = {
    "P": "its dense peak in the chosen dtype",
    "beta": "its memory bandwidth",
    "M_dev": "its memory",
}
"""Symbols a panel's GPU and dtype choice sets (still editable), with what they take from it."""


@dataclass(frozen=True)
class Point:
    """A kernel a panel places on the roofline: its FLOPs, bytes and intensity formulas (a
    point of the panel's chart, not a measured workload of :mod:`gpuconcepts.workloads`)."""

    label: str
    flops: str
    bytes: str
    intensity: str


@dataclass(frozen=True)
class Limit:
    """A result a panel compares with a limit the chosen GPU sets: weights and caches against
    its memory (``M_dev``)."""

    label: str
    formula: str
    symbol: str


@dataclass(frozen=True)
class Panel:
    """One chapter's what-if panel.

    Attributes:
        title: the panel's heading.
        outputs: the formulas shown, in order; their symbols are the panel's inputs.
        workloads: what the panel places on the chosen GPU's roofline.
        questions: the post's worked questions whose inputs are the defaults (first wins).
        examples: formulas whose doctest example fills the symbols still without a default.
        chart: whether to draw the roofline chart.
        limits: results compared with what the GPU holds (its memory).

    A symbol of :data:`GPU_SYMBOLS` starts at the default GPU's datasheet value, in the dtype
    of the default element width ``s``, and follows the GPU and dtype the reader picks.
    """

    title: str
    outputs: tuple[str, ...]
    workloads: tuple[Point, ...]
    questions: tuple[int, ...] = ()
    examples: tuple[str, ...] = ()
    chart: bool = False
    limits: tuple[Limit, ...] = ()

    @property
    def symbols(self) -> tuple[str, ...]:
        """The inputs: every symbol of the outputs, in the order they first appear."""
        names = (p for name in self.outputs for p in get(name).params)
        return tuple(dict.fromkeys(names))

    def defaults(self) -> dict[str, Number]:
        """The post's values: its worked questions first, then the formulas' doctest examples."""
        values: dict[str, Number] = {}
        for number in self.questions:
            for step in question(number).steps:
                for name, value in step.inputs:
                    values.setdefault(name, value)
        for name in self.examples:
            for symbol, example in doctest_example(get(name)).items():
                values.setdefault(symbol, example)
        gpu = GPUS[DEFAULT_GPU]
        dtype = default_dtype(values.get("s", DTYPE_BYTES[DTYPES[0]]))
        from_gpu: dict[str, Number] = {
            "P": gpu.flops_per_s[dtype],
            "beta": gpu.bytes_per_s,
            "M_dev": gpu.memory_bytes,
        }
        values.update({k: v for k, v in from_gpu.items() if k in self.symbols})
        missing = [s for s in self.symbols if s not in values]
        if missing:
            raise GpuConceptsError(f"{self.title}: no default for {', '.join(missing)}")
        return {s: values[s] for s in self.symbols}


def doctest_example(formula: Formula) -> dict[str, Number]:
    """The keyword values of the first call of ``formula`` in its docstring's examples.

    >>> doctest_example(get("conv_bytes"))
    {'B': 1, 'H_out': 32, 'W_out': 32, 'K': 3, 'C_in': 16, 'C_out': 32, 's': 4}
    """
    for example in doctest.DocTestParser().get_examples(formula.__doc__ or ""):
        for node in ast.walk(ast.parse(example.source)):
            if isinstance(node, ast.Call) and _calls(node.func, formula.name):
                try:  # a call inside a loop (stage=z) is not an example of values
                    return {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg}
                except ValueError:
                    continue
    raise GpuConceptsError(f"{formula.name}: its docstring has no example call")


def _calls(func: ast.expr, name: str) -> bool:
    """Whether ``func`` is the formula ``name`` or its worked derivation (``name.worked``)."""
    if isinstance(func, ast.Attribute) and func.attr == "worked":
        func = func.value
    return isinstance(func, ast.Name) and func.id == name


def default_dtype(element_bytes: Number) -> str:
    """The first datasheet dtype whose elements take ``element_bytes`` bytes (fp32 for 4, fp16
    for 2)."""
    return next((d for d in DTYPES if DTYPE_BYTES[d] == element_bytes), DTYPES[0])


PANELS: dict[str, Panel] = {
    "dlrm": Panel(
        "What if the table or the batch were different?",
        (
            "embedding_memory",
            "embedding_payload",
            "embedding_bag_flops",
            "embedding_bag_bytes",
            "embedding_intensity",
        ),
        (
            Point(
                "embedding-bag lookup",
                "embedding_bag_flops",
                "embedding_bag_bytes",
                "embedding_intensity",
            ),
        ),
        questions=(10, 11),
    ),
    "mlp": Panel(
        "What if the layer or the batch were different?",
        ("mlp_macs", "mlp_flops", "mlp_weights", "mlp_weight_memory", "mlp_bytes", "mlp_intensity"),
        (Point("fully connected layer", "mlp_flops", "mlp_bytes", "mlp_intensity"),),
        questions=(12, 13),
    ),
    "cnn": Panel(
        "What if the convolution were different?",
        ("conv_macs", "conv_flops", "conv_weights", "conv_bytes", "conv_intensity"),
        (Point("convolution", "conv_flops", "conv_bytes", "conv_intensity"),),
        questions=(14,),
        examples=("conv_bytes",),
    ),
    "rnn": Panel(
        "What if the sequence or the hidden state were different?",
        ("rnn_macs", "rnn_flops", "rnn_bytes", "rnn_intensity"),
        (Point("RNN layer (all S steps)", "rnn_flops", "rnn_bytes", "rnn_intensity"),),
        questions=(15,),
        examples=("rnn_bytes",),
    ),
    "transformer": Panel(
        "What if the sequence, the batch or the width were different?",
        (
            "attention_scores",
            "attention_flops",
            "attention_bytes",
            "attention_intensity",
            "attention_tiled_bytes",
            "attention_tiled_intensity",
            "kv_cache_memory",
            "attention_decode_flops",
            "attention_decode_bytes",
            "attention_decode_intensity",
        ),
        (
            Point(
                "attention prefill, minimal traffic (the bound)",
                "attention_flops",
                "attention_bytes",
                "attention_intensity",
            ),
            Point(
                "attention prefill, tiled kernel (K and V from memory for every tile)",
                "attention_flops",
                "attention_tiled_bytes",
                "attention_tiled_intensity",
            ),
            Point(
                "one decode step",
                "attention_decode_flops",
                "attention_decode_bytes",
                "attention_decode_intensity",
            ),
        ),
        questions=(17, 16),
        examples=("attention_tiled_bytes",),
    ),
    "model": Panel(
        "What if the model, the context, the batch or the GPU were different?",
        (
            "decode_step_bytes",
            "max_decode_batch",
            "decode_step_flops",
            "decode_intensity",
            "decode_intensity_limit",
            "decode_compute_bound_batch",
            "tpot_seconds_lower_bound",
        ),
        (
            Point(
                "one decode step (weights and every KV cache)",
                "decode_step_flops",
                "decode_step_bytes",
                "decode_intensity",
            ),
        ),
        examples=("decode_step_bytes",),
        limits=(Limit("weights and KV cache of the batch", "decode_step_bytes", "M_dev"),),
    ),
    "distributed": Panel(
        "What if the devices, the table, the pipeline or the ZeRO stage were different?",
        (
            "sharded_table_memory",
            "tablewise_alltoall_bytes",
            "rowwise_alltoall_bytes",
            "ring_allreduce_bytes",
            "zero_memory_per_device",
            "pipeline_bubble_fraction",
            "pipeline_bubble_fraction_interleaved",
        ),
        (),
        questions=(10, 11),
        examples=(
            "tablewise_alltoall_bytes",
            "ring_allreduce_bytes",
            "zero_memory_per_device",
            "pipeline_bubble_fraction_interleaved",
        ),
    ),
    "roofline": Panel(
        "What if the layer or the GPU were different?",
        ("mlp_flops", "mlp_bytes", "mlp_intensity"),
        (Point("fully connected layer", "mlp_flops", "mlp_bytes", "mlp_intensity"),),
        examples=("mlp_intensity",),
        chart=True,
    ),
}
"""Every panel of the book, by the name its page gives the directive."""
