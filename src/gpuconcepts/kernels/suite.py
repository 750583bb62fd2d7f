"""Every kernel by workload name: what a live :class:`~gpuconcepts.lab.Lab` prepares and times."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from gpuconcepts.kernels import cnn, dlrm, mlp, peaks, rnn, transformer
from gpuconcepts.kernels._common import Kernel

KERNELS: dict[str, Callable[..., Kernel]] = {
    "dlrm-random": partial(dlrm.embedding_lookup_kernel, pattern="random"),
    "dlrm-sequential": partial(dlrm.embedding_lookup_kernel, pattern="sequential"),
    "dlrm-hot": partial(dlrm.embedding_lookup_kernel, pattern="hot"),
    "dlrm-dense": dlrm.dense_mlp_kernel,
    "mlp": mlp.linear_kernel,
    "cnn-conv": cnn.conv2d_kernel,
    "cnn-depthwise": cnn.depthwise_conv2d_kernel,
    "rnn-module": rnn.rnn_module_kernel,
    "rnn-loop": rnn.step_loop_kernel,
    "rnn-hoisted": rnn.hoisted_loop_kernel,
    "rnn-gemm": rnn.batched_gemm_kernel,
    "transformer-prefill": transformer.prefill_kernel,
    "transformer-prefill-causal": partial(transformer.prefill_kernel, causal=True),
    "transformer-decode": transformer.decode_kernel,
    "peak-gemm": peaks.gemm_kernel,
    "peak-triad": peaks.triad_kernel,
}
"""The kernel of each workload of :data:`gpuconcepts.workloads.WORKLOADS`; each takes
``(device, peaks, **sizes)`` (and ``dtype``) and returns a
:class:`~gpuconcepts.kernels._common.Kernel`, ready to time alone or in paired rounds."""
