r"""The catalogue: every formula of the book, defined once.

Each entry is a :class:`~gpuconcepts.formula.Formula`. Call it with keyword values for
the exact number, ask ``.latex()`` or ``.equation()`` for the formula, ``.worked(...)``
for the derivation and ``.vectorized(...)`` for numpy arrays. Each docstring carries the
post's worked example, which the test-suite runs.

>>> embedding_memory(N=100_000_000, d=128, s=4)
51200000000
>>> sorted(CATALOGUE)[:3]
['adam_training_memory', 'attainable_flops', 'attention_bytes']

Counting conventions, stated once:

* **MACs vs FLOPs.** One multiply-accumulate (MAC) is two FLOPs. ``*_macs`` formulas
  count MACs, ``*_flops`` formulas count FLOPs; ``*_flops = 2 × *_macs`` where both exist.
* **Traffic model.** ``*_bytes`` is the *minimal* DRAM traffic: every input, weight and
  output crosses DRAM exactly once, as if caches were perfect. Real kernels move at least
  this much, so the intensities here are upper bounds.
* **Forward pass only**, no bias or activation FLOPs (they are lower order).

One module per chapter (embeddings, mlp, cnn, rnn, transformer, wholemodel, serving,
distributed, roofline); this package re-exports every formula, and :data:`CATALOGUE` holds
them in that order, the book's.
"""

from __future__ import annotations

from difflib import get_close_matches

from gpuconcepts.errors import GpuConceptsError, GpuConceptsTypeError
from gpuconcepts.formula import Formula
from gpuconcepts.formulas import (
    cnn,
    distributed,
    embeddings,
    mlp,
    rnn,
    roofline,
    serving,
    transformer,
    wholemodel,
)
from gpuconcepts.formulas.cnn import (
    conv_bytes,
    conv_flops,
    conv_intensity,
    conv_macs,
    conv_weights,
    depthwise_conv_bytes,
    depthwise_conv_flops,
    depthwise_conv_intensity,
    depthwise_conv_macs,
)
from gpuconcepts.formulas.distributed import (
    columnwise_alltoall_bytes,
    grouped_mm_flops,
    moe_alltoall_bytes,
    pipeline_activation_bytes,
    pipeline_bubble_fraction,
    pipeline_bubble_fraction_interleaved,
    pipeline_bubble_with_messages,
    ring_allreduce_bytes,
    rowwise_alltoall_bytes,
    sharded_table_memory,
    tablewise_alltoall_bytes,
    tensor_parallel_mlp_bytes,
    zero_memory_per_device,
)
from gpuconcepts.formulas.embeddings import (
    embedding_bag_bytes,
    embedding_bag_flops,
    embedding_bag_traffic,
    embedding_intensity,
    embedding_memory,
    embedding_payload,
    lookup_order_ratio,
    random_row_bytes,
)
from gpuconcepts.formulas.mlp import (
    mlp_bytes,
    mlp_flops,
    mlp_intensity,
    mlp_macs,
    mlp_weight_memory,
    mlp_weights,
)
from gpuconcepts.formulas.rnn import (
    gru_flops,
    lstm_flops,
    rnn_bytes,
    rnn_flops,
    rnn_intensity,
    rnn_macs,
)
from gpuconcepts.formulas.roofline import (
    attainable_flops,
    chain_seconds,
    cpu_peak_flops,
    kernel_seconds,
    random_access_seconds,
    ridge_point,
    roofline_seconds,
    serial_chain_seconds,
    stream_copy_bytes,
    stream_triad_bytes,
    stream_triad_flops,
)
from gpuconcepts.formulas.serving import (
    decode_intensity,
    decode_intensity_limit,
    decode_step_bytes,
    decode_step_flops,
    max_decode_batch,
    speculative_expected_tokens,
    speculative_speedup,
    tpot_seconds_lower_bound,
    ttft_seconds_lower_bound,
)
from gpuconcepts.formulas.transformer import (
    attention_bytes,
    attention_bytes_general,
    attention_decode_bytes,
    attention_decode_flops,
    attention_decode_intensity,
    attention_flops,
    attention_flops_causal,
    attention_flops_general,
    attention_intensity,
    attention_scores,
    attention_tiled_bytes,
    attention_tiled_intensity,
    kv_cache_memory,
)
from gpuconcepts.formulas.wholemodel import (
    adam_training_memory,
    attention_linear_flops_ratio,
    decode_compute_bound_batch,
    decode_seconds_lower_bound,
    embedding_params,
    forward_flops_per_token,
    gated_mlp_params,
    gqa_attention_params,
    gqa_kv_cache_memory,
    layer_activation_memory,
    layer_activation_memory_recomputed,
    training_flops_per_token,
    transformer_layer_params,
    weight_memory,
)

__all__ = [
    "CATALOGUE",
    "adam_training_memory",
    "attainable_flops",
    "attention_bytes",
    "attention_bytes_general",
    "attention_decode_bytes",
    "attention_decode_flops",
    "attention_decode_intensity",
    "attention_flops",
    "attention_flops_causal",
    "attention_flops_general",
    "attention_intensity",
    "attention_linear_flops_ratio",
    "attention_scores",
    "attention_tiled_bytes",
    "attention_tiled_intensity",
    "chain_seconds",
    "columnwise_alltoall_bytes",
    "conv_bytes",
    "conv_flops",
    "conv_intensity",
    "conv_macs",
    "conv_weights",
    "cpu_peak_flops",
    "decode_compute_bound_batch",
    "decode_intensity",
    "decode_intensity_limit",
    "decode_seconds_lower_bound",
    "decode_step_bytes",
    "decode_step_flops",
    "depthwise_conv_bytes",
    "depthwise_conv_flops",
    "depthwise_conv_intensity",
    "depthwise_conv_macs",
    "embedding_bag_bytes",
    "embedding_bag_flops",
    "embedding_bag_traffic",
    "embedding_intensity",
    "embedding_memory",
    "embedding_params",
    "embedding_payload",
    "forward_flops_per_token",
    "gated_mlp_params",
    "get",
    "gqa_attention_params",
    "gqa_kv_cache_memory",
    "grouped_mm_flops",
    "gru_flops",
    "kernel_seconds",
    "kv_cache_memory",
    "layer_activation_memory",
    "layer_activation_memory_recomputed",
    "lookup_order_ratio",
    "lstm_flops",
    "max_decode_batch",
    "mlp_bytes",
    "mlp_flops",
    "mlp_intensity",
    "mlp_macs",
    "mlp_weight_memory",
    "mlp_weights",
    "moe_alltoall_bytes",
    "pipeline_activation_bytes",
    "pipeline_bubble_fraction",
    "pipeline_bubble_fraction_interleaved",
    "pipeline_bubble_with_messages",
    "random_access_seconds",
    "random_row_bytes",
    "ridge_point",
    "ring_allreduce_bytes",
    "rnn_bytes",
    "rnn_flops",
    "rnn_intensity",
    "rnn_macs",
    "roofline_seconds",
    "rowwise_alltoall_bytes",
    "serial_chain_seconds",
    "sharded_table_memory",
    "speculative_expected_tokens",
    "speculative_speedup",
    "stream_copy_bytes",
    "stream_triad_bytes",
    "stream_triad_flops",
    "tablewise_alltoall_bytes",
    "tensor_parallel_mlp_bytes",
    "tpot_seconds_lower_bound",
    "training_flops_per_token",
    "transformer_layer_params",
    "ttft_seconds_lower_bound",
    "weight_memory",
    "zero_memory_per_device",
]

CATALOGUE: dict[str, Formula] = {
    f.name: f
    for chapter in (
        embeddings,
        mlp,
        cnn,
        rnn,
        transformer,
        wholemodel,
        serving,
        distributed,
        roofline,
    )
    for f in vars(chapter).values()
    if isinstance(f, Formula)
}
"""Every formula by name (the API reference shows it as a table).

:meta hide-value:
"""

__test__ = {name: f.__doc__ for name, f in CATALOGUE.items()}


def get(name: str) -> Formula:
    """The formula called ``name``, with a helpful error listing the names that exist.

    >>> get("mlp_macs").kind
    'MACs'
    >>> get("mlp_mac")
    Traceback (most recent call last):
    ...
    gpuconcepts.errors.GpuConceptsError: unknown formula 'mlp_mac'; did you mean mlp_macs? (gpuconcepts formulas lists them all)
    """
    if not isinstance(name, str):
        raise GpuConceptsTypeError(
            f"a formula name must be a string; got {name!r} ({type(name).__name__})"
        )
    if name in CATALOGUE:
        return CATALOGUE[name]
    close = get_close_matches(name, CATALOGUE, n=3)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise GpuConceptsError(f"unknown formula {name!r}{hint} (gpuconcepts formulas lists them all)")
