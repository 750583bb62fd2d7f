"""Every kernel by workload name: what a live :class:`~gpuconcepts.lab.Lab` runs."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from gpuconcepts.kernels import cnn, dlrm, mlp, rnn, transformer
from gpuconcepts.measure import Measurement

KERNELS: dict[str, Callable[..., Measurement]] = {
    "dlrm-random": partial(dlrm.embedding_lookup, pattern="random"),
    "dlrm-sequential": partial(dlrm.embedding_lookup, pattern="sequential"),
    "dlrm-hot": partial(dlrm.embedding_lookup, pattern="hot"),
    "dlrm-dense": dlrm.dense_mlp,
    "mlp": mlp.linear,
    "cnn-conv": cnn.conv2d,
    "cnn-depthwise": cnn.depthwise_conv2d,
    "rnn-module": rnn.rnn_module,
    "rnn-loop": rnn.step_loop,
    "rnn-hoisted": rnn.hoisted_loop,
    "rnn-gemm": rnn.batched_gemm,
    "transformer-prefill": transformer.prefill,
    "transformer-prefill-causal": partial(transformer.prefill, causal=True),
    "transformer-decode": transformer.decode,
}
"""The kernel that measures each workload of :data:`gpuconcepts.workloads.WORKLOADS`; each
takes ``(device, peaks, *, repeats, **sizes)``."""
