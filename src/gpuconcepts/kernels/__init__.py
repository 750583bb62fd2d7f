r"""Real PyTorch kernels for the five workloads, timed on this machine and placed on its roofline.

Every kernel takes a resolved device (``"cpu"`` or ``"cuda"``, see
:func:`gpuconcepts.measure.resolve_device`) and the device's measured :class:`~gpuconcepts.measure.Peaks`,
runs a real torch kernel of the given size, and returns a
:class:`~gpuconcepts.measure.Measurement` whose FLOP and byte counts come from
:mod:`gpuconcepts.formulas` (never recomputed here) with ``s`` taken from the tensor's
``element_size()``.

>>> from gpuconcepts.kernels import mlp
>>> from gpuconcepts.roofline import Peaks
>>> peaks = Peaks(device="cpu", flops_per_s=1e11, bytes_per_s=1e10, dtype="float32")
>>> m = mlp.linear("cpu", peaks, B=4, d_in=8, d_out=16, repeats=2)
>>> m.workload, m.flops, m.bytes, m.params["s"]
('mlp', 1024, 896, 4)

Final API
---------
Common keywords of every kernel: ``dtype: str | None = None`` (default
:func:`default_dtype`: float32 on CPU; bfloat16 on CUDA, except embedding tables, which
stay float32) and ``repeats: int = 7`` (timed repetitions; the median and IQR come from them).

``gpuconcepts.kernels``
    ``measure_peaks(device, quick=False, *, presets=None, repeats=None) -> Peaks``
        STREAM-like copy and triad on arrays of at least 4× the last-level cache (copy
        counts read + write, ``formulas.stream_copy_bytes``) and a large square GEMM in the
        book's dtype; each rate at its best repetition. The GEMM is the fastest of
        ``torch.mm`` and, on a CPU, oneDNN's GEMM (MKL's ``torch.mm`` runs at about half
        the AVX-512 peak on AMD EPYC, below what torch's own convolutions reach).
        The pieces: ``peaks.copy_bandwidth(device, *, array_bytes, repeats)``,
        ``peaks.triad_bandwidth(...)``, ``peaks.gemm_flops(device, *, n, dtype=None,
        repeats=5, backend="best" | "mm" | "onednn")``, ``peaks.stream_array_bytes(...)``.
    ``load_presets(device, quick, *, free_bytes=None, path=None) -> dict[str, dict[str, int]]``
        Sizes per kernel from ``conf/presets.toml`` for the device class (``cpu``,
        ``cuda-small`` under 24 GiB, ``cuda-large``), capped by free memory. Keys:
        ``timing`` {repeats}, ``peaks`` {gemm_n, stream_mib}, ``dlrm`` {N, B, L, d},
        ``dlrm_dense`` {B, d_in, d_out}, ``mlp`` {B, d_in, d_out}, ``cnn``
        {B, H, W, C_in, C_out, K}, ``cnn_depthwise`` {B, H, W, C, K}, ``rnn``
        {B, S, d_in, d_h}, ``transformer_prefill`` {B, S, d, heads}, ``transformer_decode``
        {B, S_prompt, steps, d, heads}.
        The file ships in the package as ``gpuconcepts/presets.toml``, a symlink to
        ``conf/presets.toml``; ``presets.cap_presets(tables, free_bytes)`` is the capping
        rule (halve B, or N for DLRM, until ``presets.FOOTPRINTS`` fits half the free memory).
    ``load_sweeps(device, quick, *, free_bytes=None, path=None) -> dict[str, tuple[int, ...]]``
        ``mlp_B`` (batch sizes of the MLP sweep) and ``transformer_S`` (prefill lengths);
        values that would not fit in memory are dropped.
    ``device_class(device, total_bytes=None) -> "cpu" | "cuda-small" | "cuda-large"``
    ``default_dtype(device, role="compute") -> str`` (role ``"compute"`` or ``"embedding"``)
    ``torch_dtype(name) -> torch.dtype`` (``"tf32"`` stores float32)
    ``profile_all(device, quick, peaks=None, progress=None, presets=None, sweeps=None)
    -> list[Measurement]``
        Every workload at preset sizes, in this order of workload names: ``dlrm-random``,
        ``dlrm-sequential``, ``dlrm-hot``, ``dlrm-dense``, ``mlp``, ``mlp-B<B>`` (sweep),
        ``cnn-conv3x3``, ``cnn-depthwise3x3``, ``rnn-module``, ``rnn-loop``, ``rnn-gemm``,
        ``transformer-prefill``, ``transformer-prefill-S<S>`` (sweep), ``transformer-decode``.
        ``progress`` is called with one line of text before each kernel.

``gpuconcepts.kernels.dlrm``
    ``embedding_lookup(device, peaks, *, N, B, L, d, pattern="random") -> Measurement``
        ``F.embedding_bag`` (sum) of B bags of L rows from an N × d table; ``pattern`` is
        ``"random"`` (uniform rows), ``"sequential"`` (consecutive rows) or ``"hot"`` (rows
        drawn from a small hot set that fits in cache). Workload ``dlrm-<pattern>``. Counts:
        ``embedding_bag_flops``, ``embedding_bag_bytes``. Caches are flushed before each
        repetition.
    ``dense_mlp(device, peaks, *, B, d_in, d_out) -> Measurement``
        The dense (bottom/top MLP) part: one ``nn.Linear``. Workload ``dlrm-dense``.

``gpuconcepts.kernels.mlp``
    ``linear(device, peaks, *, B, d_in, d_out) -> Measurement``  (workload ``mlp``;
    counts ``mlp_flops``, ``mlp_bytes``)
    ``batch_sweep(device, peaks, *, batches, d_in, d_out) -> list[Measurement]``
    (workloads ``mlp-B<B>``)

``gpuconcepts.kernels.cnn``
    ``conv2d(device, peaks, *, B, H, W, C_in, C_out, K=3) -> Measurement``
        Stride 1, 'same' padding, no bias; workload ``cnn-conv<K>x<K>``; counts
        ``conv_flops``, ``conv_bytes`` with H_out = H, W_out = W.
    ``depthwise_conv2d(device, peaks, *, B, H, W, C, K=3) -> Measurement``
        ``groups=C``; workload ``cnn-depthwise<K>x<K>``; counts ``depthwise_conv_*``.

``gpuconcepts.kernels.rnn`` (all three count ``rnn_flops`` and ``rnn_bytes``)
    ``rnn_module(device, peaks, *, B, S, d_in, d_h) -> Measurement``  ``nn.RNN`` (tanh),
    workload ``rnn-module``.
    ``step_loop(device, peaks, *, B, S, d_in, d_h) -> Measurement``  the explicit loop
    h_t = tanh(W_x x_t + W_h h_{t-1} + b), workload ``rnn-loop``.
    ``batched_gemm(device, peaks, *, B, S, d_in, d_h) -> Measurement``  the same FLOPs as
    one (B·S) × (d_in + d_h) × d_h GEMM with no step dependency, workload ``rnn-gemm``.

``gpuconcepts.kernels.transformer`` (d is the model width = heads × head width)
    ``prefill(device, peaks, *, B, S, d, heads) -> Measurement``
        Non-causal ``scaled_dot_product_attention``; workload ``transformer-prefill``;
        counts ``attention_flops``, ``attention_bytes``.
    ``prefill_sweep(device, peaks, *, B, lengths, d, heads) -> list[Measurement]``
        (workloads ``transformer-prefill-S<S>``)
    ``decode(device, peaks, *, B, S_prompt, steps, d, heads) -> DecodeResult``
        Autoregressive decode: each step appends one K and one V row per sequence to the
        cache (``torch.cat``, so the cache really grows) and attends one new query to it.
    ``DecodeResult`` (frozen): ``measurement`` (one decode step at the final length
    S_prompt + steps, caches flushed; counts ``attention_decode_flops`` and
    ``attention_decode_bytes``; workload ``transformer-decode``), ``lengths``
    (cache length after each step), ``cache_bytes`` (bytes of the K and V storages
    measured after each step), ``expected_bytes`` (``kv_cache_memory`` at each length),
    ``step_seconds`` (wall time of each step of the growing loop, append included).
"""

from __future__ import annotations

from gpuconcepts.kernels._common import default_dtype, torch_dtype
from gpuconcepts.kernels.peaks import measure_peaks
from gpuconcepts.kernels.presets import device_class, load_presets, load_sweeps
from gpuconcepts.kernels.suite import KERNELS

__all__ = [
    "KERNELS",
    "default_dtype",
    "device_class",
    "load_presets",
    "load_sweeps",
    "measure_peaks",
    "torch_dtype",
]
