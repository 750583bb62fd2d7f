r"""Transformer attention: prefill over a whole prompt, and decode with a growing KV cache.

Prefill does 4·B·S²·d FLOPs on 4·B·S·d·s bytes (fused attention never writes the S×S
scores), so its intensity grows with S. Decode attends one new token to the whole cache:
every cached byte is used for one multiply-add, so it is memory-bound.

>>> from gpuconcepts.roofline import Peaks
>>> peaks = Peaks(device="cpu", flops_per_s=1e11, bytes_per_s=1e10, dtype="float32")
>>> m = prefill("cpu", peaks, B=1, S=16, d=8, heads=2, repeats=2)
>>> m.workload, m.flops, m.bytes
('transformer-prefill', 8192, 2048)
>>> r = decode("cpu", peaks, B=2, S_prompt=4, steps=3, d=8, heads=2, repeats=2)
>>> r.series["lengths"], r.size("S")
((5, 6, 7), 7)
"""

from __future__ import annotations

import time

import torch
import torch.nn.functional as F

from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.kernels._common import DEFAULT_REPEATS, check_sizes, default_dtype, run, tensor
from gpuconcepts.measure import Measurement
from gpuconcepts.roofline import Peaks


def _head_width(kernel: str, d: int, heads: int) -> int:
    if d % heads:
        raise GpuConceptsError(f"{kernel}: d={d} must be a multiple of heads={heads}")
    return d // heads


def prefill(
    device: str,
    peaks: Peaks,
    *,
    B: int,
    S: int,
    d: int,
    heads: int,
    dtype: str | None = None,
    repeats: int = DEFAULT_REPEATS,
    causal: bool = False,
) -> Measurement:
    """Time ``scaled_dot_product_attention`` on B × heads × S × (d / heads) Q, K, V.

    ``causal=False`` is an encoder's attention (every token sees every other), workload
    ``transformer-prefill``; ``causal=True`` is a decoder's prefill (a token sees only the
    ones before it), workload ``transformer-prefill-causal``, counted by
    ``attention_flops_causal``: about half the scores.

    Counts: ``attention_flops(B, S, d)`` and ``attention_bytes(B, S, d, s)``.
    """
    check_sizes("transformer.prefill", B=B, S=S, d=d, heads=heads)
    width = _head_width("transformer.prefill", d, heads)
    dtype = dtype or default_dtype(device)
    q, k, v = (tensor((B, heads, S, width), dtype, device, seed=i) for i in (1, 2, 3))

    def fn() -> torch.Tensor:
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    return run(
        "transformer-prefill-causal" if causal else "transformer-prefill",
        device,
        peaks,
        fn,
        params={"B": B, "S": S, "d": d, "heads": heads, "s": q.element_size()},
        repeats=repeats,
        dtype=dtype,
    )


def _allocated_bytes(device: str) -> int:
    """Bytes live tensors asked the CUDA caching allocator for (0 on CPU, where storages are read)."""
    if device != "cuda":
        return 0
    torch.cuda.synchronize()
    return int(torch.cuda.memory_stats().get("requested_bytes.all.current", 0))


def decode(
    device: str,
    peaks: Peaks,
    *,
    B: int,
    S_prompt: int,
    steps: int,
    d: int,
    heads: int,
    dtype: str | None = None,
    repeats: int = DEFAULT_REPEATS,
) -> Measurement:
    """Decode ``steps`` tokens after a prompt of ``S_prompt``, growing the KV cache each step.

    Each step appends one K and one V row per sequence with ``torch.cat`` (so the cache's
    storage really grows) and attends the new query to the whole cache. After every step the
    cache's memory is measured: the bytes of the K and V storages on CPU, and on CUDA the
    growth of the caching allocator's requested bytes over the moment before the cache
    existed (``memory_allocated`` would add the allocator's rounding of each block). Then one step at the final length
    S = S_prompt + steps is timed ``repeats`` times with caches flushed; it counts
    ``attention_decode_flops(B, S, d)`` and ``attention_decode_bytes(B, S, d, s)``.

    The measurement's ``series`` keeps what the growing loop observed: ``lengths`` (cache
    length after each step), ``cache_bytes`` (the cache's memory then) and ``step_seconds``
    (wall time of each step, the append included).
    """
    check_sizes("transformer.decode", B=B, S_prompt=S_prompt, steps=steps, d=d, heads=heads)
    width = _head_width("transformer.decode", d, heads)
    dtype = dtype or default_dtype(device)
    new_q, new_k, new_v = (
        tensor((steps, B, heads, 1, width), dtype, device, seed=i) for i in (3, 4, 5)
    )
    before_cache = _allocated_bytes(device)
    k = tensor((B, heads, S_prompt, width), dtype, device, seed=1)
    v = tensor((B, heads, S_prompt, width), dtype, device, seed=2)
    s = k.element_size()
    lengths: list[int] = []
    cache_bytes: list[int] = []
    step_seconds: list[float] = []
    with torch.inference_mode():
        for step in range(steps):
            start = time.perf_counter()
            k = torch.cat((k, new_k[step]), dim=2)
            v = torch.cat((v, new_v[step]), dim=2)
            F.scaled_dot_product_attention(new_q[step], k, v)
            if device == "cuda":
                torch.cuda.synchronize()
            step_seconds.append(time.perf_counter() - start)
            lengths.append(int(k.shape[2]))
            if device == "cuda":
                cache_bytes.append(_allocated_bytes(device) - before_cache)
            else:
                cache_bytes.append(k.untyped_storage().nbytes() + v.untyped_storage().nbytes())
    query = new_q[-1]

    def fn() -> torch.Tensor:
        return F.scaled_dot_product_attention(query, k, v)

    return run(
        "transformer-decode",
        device,
        peaks,
        fn,
        params={
            "B": B,
            "S": lengths[-1],
            "S_prompt": S_prompt,
            "steps": steps,
            "d": d,
            "heads": heads,
            "s": s,
        },
        repeats=repeats,
        flush=True,
        dtype=dtype,
        series={
            "lengths": tuple(lengths),
            "cache_bytes": tuple(cache_bytes),
            "step_seconds": tuple(step_seconds),
        },
    )
