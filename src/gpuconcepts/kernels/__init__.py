r"""Real PyTorch kernels for the five workloads, timed on this machine.

Every kernel takes a resolved device (``"cpu"`` or ``"cuda"``, see
:func:`gpuconcepts.measure.resolve_device`) and the device's measured
:class:`~gpuconcepts.roofline.Peaks` (only to decide whether to flush the caches: memory-bound
kernels by the formulas read from DRAM, as the roofline assumes), runs a real torch kernel of
the given size, and returns a :class:`~gpuconcepts.measure.Measurement` whose FLOP and byte
counts come from the workload's descriptor in :mod:`gpuconcepts.workloads` (never recomputed
here), with ``s`` taken from the tensor's ``element_size()``. The book and the CLI do not call
kernels directly: they ask a :class:`~gpuconcepts.lab.Lab`, which runs each (workload, sizes)
once per run; :data:`KERNELS` maps each workload name to its kernel.

>>> from gpuconcepts.kernels import mlp
>>> from gpuconcepts.roofline import Peaks
>>> peaks = Peaks(device="cpu", flops_per_s=1e11, bytes_per_s=1e10, dtype="float32")
>>> m = mlp.linear("cpu", peaks, B=4, d_in=8, d_out=16, repeats=2)
>>> m.workload, m.flops, m.bytes, m.params["s"]
('mlp', 1024, 896, 4)

Common keywords of every kernel: ``dtype: str | None = None`` (default
:func:`default_dtype`: float32 on CPU; bfloat16 on CUDA, except embedding tables, which
stay float32) and ``repeats: int = 7`` (timed repetitions; the median and IQR come from them).

* ``measure_peaks(device, sizes, *, presets=None, repeats=None, dtype=None) -> Peaks``:
  the STREAM triad (DRAM's roof; a copy and a read beside it) on arrays far beyond every
  cache and one large square GEMM (the compute roof); each rate at its median repetition, the
  kernels' statistic, and none raised when a kernel beats it.
  On a CPU the GEMM is the faster of ``torch.mm`` and oneDNN's (MKL runs at about half the
  AVX-512 peak on AMD EPYC).
* ``load_presets(device, quick)``, ``load_sweeps(device, quick)``: sizes from
  ``conf/presets.toml`` for the device class (``cpu``, ``cuda-small``, ``cuda-large``),
  capped by free memory, read without torch by :mod:`gpuconcepts.sizes` (named here too);
  a run resolves all of its sizes once, into :class:`gpuconcepts.sizing.RunSizes`.
* ``dlrm.embedding_lookup(device, peaks, *, N, B, L, d, pattern)`` (workloads
  ``dlrm-random``, ``dlrm-sequential``, ``dlrm-hot``), ``dlrm.dense_mlp`` (``dlrm-dense``),
  ``mlp.linear`` (``mlp``), ``cnn.conv2d`` (``cnn-conv``), ``cnn.depthwise_conv2d``
  (``cnn-depthwise``), ``rnn.rnn_module`` / ``rnn.step_loop`` / ``rnn.batched_gemm``
  (``rnn-module``, ``rnn-loop``, ``rnn-gemm``), ``transformer.prefill``
  (``transformer-prefill``) and ``transformer.decode`` (``transformer-decode``: one step at the
  final length, with the KV cache measured after every step in its ``series``).
"""

from __future__ import annotations

from gpuconcepts.kernels._common import default_dtype, precision, torch_dtype
from gpuconcepts.kernels.peaks import measure_peaks
from gpuconcepts.kernels.presets import device_class, load_presets, load_sweeps
from gpuconcepts.workloads import WORKLOADS

KERNELS = {name: w.kernel_function() for name, w in WORKLOADS.items()}
"""The kernel of each workload of :data:`gpuconcepts.workloads.WORKLOADS` (the registry names
it by a dotted path); each takes ``(device, peaks, **sizes)`` (and ``dtype``) and returns a
:class:`~gpuconcepts.kernels._common.Kernel`, ready to time alone or in paired rounds."""

__all__ = [
    "KERNELS",
    "default_dtype",
    "device_class",
    "load_presets",
    "load_sweeps",
    "measure_peaks",
    "precision",
    "torch_dtype",
]
