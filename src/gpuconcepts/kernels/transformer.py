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
from collections.abc import Callable, Iterator, Sequence

import torch
import torch.nn.functional as F
from torch._C._profiler import _ExtraFields_Allocation, _ProfilerEvent
from torch.profiler import record_function

from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.kernels._common import Kernel, check_sizes, default_dtype, prepare, tensor, timed
from gpuconcepts.kernels.dispatch import cpu_profiler
from gpuconcepts.roofline import Peaks


def _head_width(kernel: str, d: int, heads: int) -> int:
    if d % heads:
        raise GpuConceptsError(f"{kernel}: d={d} must be a multiple of heads={heads}")
    return d // heads


def prefill_kernel(
    device: str,
    peaks: Peaks,
    *,
    B: int,
    S: int,
    d: int,
    heads: int,
    dtype: str | None = None,
    causal: bool = False,
) -> Kernel:
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

    return prepare(
        "transformer-prefill-causal" if causal else "transformer-prefill",
        device,
        peaks,
        fn,
        params={"B": B, "S": S, "d": d, "heads": heads, "s": q.element_size()},
        dtype=dtype,
    )


prefill = timed(prefill_kernel)


CACHE_SCOPE = "gpuconcepts::kv_cache"
"""The profiler scope around the code that builds the KV cache: the prompt's, then each append."""


def _append(cache: torch.Tensor, row: torch.Tensor) -> torch.Tensor:
    """The cache one token longer: ``torch.cat`` copies old rows and the new one to new storage."""
    return torch.cat((cache, row), dim=2)


def _requested_bytes() -> int:
    """Bytes live tensors asked the CUDA caching allocator for (not its rounded block sizes)."""
    torch.cuda.synchronize()
    return int(torch.cuda.memory_stats().get("requested_bytes.all.current", 0))


def _walk(events: Sequence[_ProfilerEvent]) -> Iterator[_ProfilerEvent]:
    for event in events:
        yield event
        yield from _walk(event.children)


def _inside_cache_scope(event: _ProfilerEvent) -> bool:
    parent = event.parent
    while parent is not None:
        if parent.name == CACHE_SCOPE:
            return True
        parent = parent.parent
    return False


def live_cache_bytes(events: Sequence[_ProfilerEvent], device: str = "cpu") -> list[int]:
    """Bytes the allocator handed out inside a :data:`CACHE_SCOPE` and had not taken back, at
    the end of each such scope, from a profiler's event tree (``profile_memory=True``).

    Every allocation event carries its address and size (negative for a free), so a block
    allocated inside a scope counts from then until its free, wherever the free happens.
    Blocks allocated outside the scopes (the attention's output and scratch) never count.
    """
    timeline: list[tuple[int, int, int, int]] = []  # (ns, 0 memory | 1 scope end, address, bytes)
    for event in _walk(events):
        memory = event.extra_fields
        if event.name == CACHE_SCOPE:
            timeline.append((event.end_time_ns, 1, 0, 0))
        elif (
            isinstance(memory, _ExtraFields_Allocation)
            and memory.device.type == device
            and (memory.alloc_size < 0 or _inside_cache_scope(event))
        ):
            timeline.append((event.start_time_ns, 0, memory.ptr, memory.alloc_size))
    live: dict[int, int] = {}
    at_scope_ends: list[int] = []
    for _ns, scope_end, address, size in sorted(timeline):
        if scope_end:
            at_scope_ends.append(sum(live.values()))
        elif size > 0:
            live[address] = size
        else:
            live.pop(address, None)
    return at_scope_ends


Prompt = Callable[[], tuple[torch.Tensor, torch.Tensor]]
"""Makes the prompt's K and V caches."""


def _grow(
    prompt: Prompt,
    new: tuple[torch.Tensor, torch.Tensor, torch.Tensor],
    device: str,
    after_step: Callable[[torch.Tensor], None],
) -> tuple[torch.Tensor, torch.Tensor, list[float]]:
    """The decode loop: the prompt's cache, then per step one K and one V row appended and the
    new query attended to the whole cache. Returns the final K and V and each step's time."""
    new_q, new_k, new_v = new
    with record_function(CACHE_SCOPE):
        k, v = prompt()
    step_seconds: list[float] = []
    for step in range(new_q.shape[0]):
        start = time.perf_counter()
        with record_function(CACHE_SCOPE):
            k = _append(k, new_k[step])
            v = _append(v, new_v[step])
        F.scaled_dot_product_attention(new_q[step], k, v)
        if device == "cuda":
            torch.cuda.synchronize()
        step_seconds.append(time.perf_counter() - start)
        after_step(k)
    return k, v, step_seconds


def _cpu_cache_bytes(
    prompt: Prompt, new: tuple[torch.Tensor, torch.Tensor, torch.Tensor]
) -> list[int]:
    """The decode loop run once more under the profiler: the cache's live bytes after each
    step, as the CPU allocator handed them out."""
    with cpu_profiler(memory=True) as profiler:
        _grow(prompt, new, "cpu", lambda _k: None)
    recorded = profiler.kineto_results
    if recorded is None:
        raise GpuConceptsError("transformer.decode: the profiler returned no events")
    return live_cache_bytes(recorded.experimental_event_tree())[1:]  # [0] is the prompt's


def _grown(
    prompt_shape: tuple[int, int, int, int],
    new: tuple[torch.Tensor, torch.Tensor, torch.Tensor],
    device: str,
    dtype: str,
) -> tuple[torch.Tensor, torch.Tensor, dict[str, tuple[float, ...]]]:
    """The decode loop run once from a prompt's cache of ``prompt_shape``: the final K and V,
    and the series it observed (each step's cache length, the cache's memory by the allocator
    then, each step's wall time), as :func:`decode_kernel` describes them."""

    def prompt() -> tuple[torch.Tensor, torch.Tensor]:
        return (
            tensor(prompt_shape, dtype, device, seed=1),
            tensor(prompt_shape, dtype, device, seed=2),
        )

    before_cache = _requested_bytes() if device == "cuda" else 0
    lengths: list[int] = []
    cache_bytes: list[int] = []

    def after_step(k: torch.Tensor) -> None:
        lengths.append(int(k.shape[2]))
        if device == "cuda":
            cache_bytes.append(_requested_bytes() - before_cache)

    with torch.inference_mode():
        k, v, step_seconds = _grow(prompt, new, device, after_step)
        if device != "cuda":
            cache_bytes = _cpu_cache_bytes(prompt, new)
    series = {
        "lengths": tuple(lengths),
        "cache_bytes": tuple(cache_bytes),
        "step_seconds": tuple(step_seconds),
    }
    return k, v, series


def decode_kernel(
    device: str,
    peaks: Peaks,
    *,
    B: int,
    S_prompt: int,
    steps: int,
    d: int,
    heads: int,
    dtype: str | None = None,
) -> Kernel:
    """Decode ``steps`` tokens after a prompt of ``S_prompt``, growing the KV cache each step.

    Each step appends one K and one V row per sequence with ``torch.cat`` (so the cache's
    storage really grows) and attends the new query to the whole cache. After every step the
    cache's memory is read from the allocator, never from the tensors' shapes: on CUDA the
    growth of the caching allocator's requested bytes over the moment before the cache existed
    (``memory_allocated`` would add the allocator's rounding of each block); on a CPU the same
    loop runs again under ``torch.profiler`` with ``profile_memory=True``, and the cache is the
    bytes the CPU allocator handed out while building it and had not taken back
    (:func:`live_cache_bytes`). Then one step at the final length S = S_prompt + steps is
    timed ``repeats`` times with caches flushed; it counts ``attention_decode_flops(B, S, d)``
    and ``attention_decode_bytes(B, S, d, s)``.

    The measurement's ``series`` keeps what the growing loop observed: ``lengths`` (cache
    length after each step), ``cache_bytes`` (the cache's memory then, by the allocator) and
    ``step_seconds`` (wall time of each step, the append included; never under the profiler).
    """
    check_sizes("transformer.decode", B=B, S_prompt=S_prompt, steps=steps, d=d, heads=heads)
    width = _head_width("transformer.decode", d, heads)
    dtype = dtype or default_dtype(device)
    new_q, new_k, new_v = (
        tensor((steps, B, heads, 1, width), dtype, device, seed=i) for i in (3, 4, 5)
    )
    k, v, series = _grown((B, heads, S_prompt, width), (new_q, new_k, new_v), device, dtype)
    query = new_q[-1]

    def fn() -> torch.Tensor:
        return F.scaled_dot_product_attention(query, k, v)

    return prepare(
        "transformer-decode",
        device,
        peaks,
        fn,
        params={
            "B": B,
            "S": series["lengths"][-1],
            "S_prompt": S_prompt,
            "steps": steps,
            "d": d,
            "heads": heads,
            "s": k.element_size(),
        },
        flush=True,
        dtype=dtype,
        series=series,
    )


decode = timed(decode_kernel)
