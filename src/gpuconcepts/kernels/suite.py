"""Every kernel by workload name, and ``profile_all``: the five workloads at preset sizes."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial

from gpuconcepts.kernels import cnn, dlrm, mlp, rnn, transformer
from gpuconcepts.lab import Lab
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
    "rnn-gemm": rnn.batched_gemm,
    "transformer-prefill": transformer.prefill,
    "transformer-decode": transformer.decode,
}
"""The kernel that measures each workload of :data:`gpuconcepts.workloads.WORKLOADS`; each
takes ``(device, peaks, *, repeats, **sizes)``."""


def profile_all(
    lab: Lab,
    presets: Mapping[str, Mapping[str, int]],
    sweeps: Mapping[str, tuple[int, ...]],
) -> list[Measurement]:
    """The five workloads at the preset sizes, and the MLP batch and prefill length sweeps.

    Args:
        lab: where the measurements come from (live: each kernel runs once; or a saved run).
        presets, sweeps: sizes from :func:`~gpuconcepts.kernels.load_presets` and
            :func:`~gpuconcepts.kernels.load_sweeps` (a saved run keeps the ones it used).

    Returns:
        The measurements in the order of the book: DLRM (random, sequential, hot rows, dense
        part), MLP (preset, then the batch sweep), CNN (dense, depthwise), RNN (module, loop,
        GEMM), Transformer (prefill, the length sweep, decode). A size met twice is one
        measurement, listed once.
    """
    out: list[Measurement] = []

    def add(workload: str, **sizes: object) -> None:
        m = lab.measure(workload, **sizes)
        if all(m is not seen for seen in out):
            out.append(m)

    for pattern in dlrm.PATTERNS:
        add(f"dlrm-{pattern}", **presets["dlrm"])
    add("dlrm-dense", **presets["dlrm_dense"])
    add("mlp", **presets["mlp"])
    for B in sweeps.get("mlp_B", ()):
        add("mlp", **{**presets["mlp"], "B": B})
    add("cnn-conv", **presets["cnn"])
    add("cnn-depthwise", **presets["cnn_depthwise"])
    for workload in ("rnn-module", "rnn-loop", "rnn-gemm"):
        add(workload, **presets["rnn"])
    add("transformer-prefill", **presets["transformer_prefill"])
    for S in sweeps.get("transformer_S", ()):
        add("transformer-prefill", **{**presets["transformer_prefill"], "S": S})
    add("transformer-decode", **presets["transformer_decode"])
    return out
