r"""Your own model on the roofline: every leaf module call, counted, timed and placed.

The package's parts, each with one job, in the order the data flows: :mod:`.checks` (the
arguments checked first), :mod:`.trace` (the counting pass) and :mod:`.calls` (a recorded call
and what is read from it), :mod:`.layers` (the known layers' formulas), :mod:`.timing` (each distinct
call timed alone), :mod:`.predict` (each datasheet GPU), :mod:`.peaks` (peaks worth a
warning), :mod:`.values` (a call's Layer and the report's other parts), :mod:`.report` (the
report and its text, table and CSV) and :mod:`.core`
(:func:`analyze`, which runs them); :mod:`.inputs` and :mod:`.factory` make the model and its
inputs for the command line. Nothing here prints: ``gpuconcepts analyze`` (``cli.py``)
writes what the report returns.


:func:`analyze` runs one forward pass of any ``torch.nn.Module`` with hooks on its leaf
modules and a ``TorchFunctionMode`` that sees the functional calls made between them
(``x + y``, ``F.scaled_dot_product_attention``, ...), all inside ``FlopCounterMode``. Each
call becomes one :class:`Layer`, in execution order:

* FLOPs come from the catalogue's formula when the module type is known (``nn.Linear``,
  ``nn.Conv2d`` with any ``groups``, ``nn.EmbeddingBag``, ``nn.RNN``, ``nn.LSTM``,
  ``nn.GRU``, ``nn.MultiheadAttention``, ``F.scaled_dot_product_attention`` with any query
  and key lengths and key/value heads, ``torch._grouped_mm`` even inside a module of its
  own), otherwise from ``FlopCounterMode``; ``flops_source`` says which, and
  ``counter_flops`` keeps what ``FlopCounterMode`` counted for the same call, so the
  report's total can be set against ``FlopCounterMode``'s total for the whole pass, row by
  row (:attr:`Layer.note`). A call that computes (it has a weight matrix, or it is a known
  compute op) but ends up with 0 FLOPs carries a :attr:`Layer.warning`: never silent.
* Bytes are the minimal traffic: the call's input tensors, its module's weights and buffers
  and its outputs, each counted once as seen; an embedding reads only the rows it looks up
  (``embedding_bag_bytes``), not its whole table. A call that only views or passes on its
  input (a reshape, ``nn.Identity``, eval-mode dropout) moves nothing and is no row.
* Each call is then replayed alone and timed with :mod:`gpuconcepts.measure`'s timers under
  the kernels' flush policy: caches are flushed before each repetition of a call whose
  intensity is below the ridge point. Identical calls (same module configuration, weights'
  shapes and inputs' shapes) are timed once and share the timing.

The model is left as it was: the hooks are removed, the training flags restored, and a
model is only copied (never moved) when another device or dtype is asked for.

One difference from a plain run: modules with a fused inference fast path
(``nn.TransformerEncoderLayer`` in eval mode) skip it while any ``TorchFunctionMode`` is
active, so the analysis counts and times their ordinary path, submodule by submodule.

>>> import torch
>>> from gpuconcepts.roofline import Peaks
>>> model = torch.nn.Sequential(torch.nn.Linear(64, 32, bias=False), torch.nn.ReLU())
>>> report = analyze(model, torch.randn(8, 64), device="cpu",
...                  peaks=Peaks("cpu", 1e11, 1e10, "float32"), repeats=2)
>>> [(layer.path, layer.type, layer.flops, layer.flops_source) for layer in report.layers]
[('0', 'Linear', 32768, 'mlp_flops'), ('1', 'ReLU', 0, 'FlopCounterMode')]
>>> report.layers[0].bytes == 4 * (8 * 64 + 64 * 32 + 8 * 32)
True
>>> report.total_flops == report.counter_total
True
"""

# torch is imported inside functions (README, Rules: 3).

from __future__ import annotations

from gpuconcepts.analysis.core import analyze
from gpuconcepts.analysis.factory import build_model, import_factory, load_factory
from gpuconcepts.analysis.failures import is_out_of_memory, out_of_memory_message
from gpuconcepts.analysis.inputs import (
    INPUT_DTYPES,
    INPUT_RULE,
    InputSpec,
    make_inputs,
    parse_input,
)
from gpuconcepts.analysis.layers import COMPUTE_OPS
from gpuconcepts.analysis.peaks import FAR_BELOW_DATASHEET, FAR_FROM_RECORDED, peaks_warnings
from gpuconcepts.analysis.predict import TF32_DEFAULTS, tf32_settings
from gpuconcepts.analysis.report import (
    COUNTER,
    TENSORS,
    TEXT_WIDTH,
    GpuPrediction,
    Layer,
    ObservedBound,
    Report,
    count_types,
    fit_table,
    observed_bound,
    shapes_text,
)
from gpuconcepts.analysis.timing import Progress

__all__ = [
    "COMPUTE_OPS",
    "COUNTER",
    "FAR_BELOW_DATASHEET",
    "FAR_FROM_RECORDED",
    "INPUT_DTYPES",
    "INPUT_RULE",
    "TENSORS",
    "TEXT_WIDTH",
    "TF32_DEFAULTS",
    "GpuPrediction",
    "InputSpec",
    "Layer",
    "ObservedBound",
    "Progress",
    "Report",
    "analyze",
    "build_model",
    "count_types",
    "fit_table",
    "import_factory",
    "is_out_of_memory",
    "load_factory",
    "make_inputs",
    "observed_bound",
    "out_of_memory_message",
    "parse_input",
    "peaks_warnings",
    "shapes_text",
    "tf32_settings",
]
