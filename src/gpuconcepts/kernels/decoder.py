r"""A small decoder-only transformer with random weights, and the whole-model workloads on it.

The model is built from a :class:`~gpuconcepts.model.ModelShape` (multi-head or grouped-query
attention, a two-matrix GELU MLP, norms without weights, an untied head), so its weight count
is :func:`gpuconcepts.model.params` exactly. Nothing is downloaded.

* :func:`backward_forward` — FLOPs of a forward and a backward pass counted by
  ``FlopCounterMode``, and both timed, on a stack of linear layers;
* :func:`decode_sweep` — one decode step timed at several batch sizes, at a short context
  (the weights set the time) and at a long one (the KV cache takes over);
* :func:`training_peak` — the peak memory of one training step with Adam;
* :func:`whole_model` — the three at a device's sizes, as one
  :class:`~gpuconcepts.results.wholemodel.WholeModelResults` (what a Run saves).

Their results are plain values of :mod:`gpuconcepts.results.wholemodel`, which a saved
run reads back without torch.

>>> from gpuconcepts.model import ModelShape, kv_cache, matmul_params
>>> shape = ModelShape("toy", d=16, layers=2, d_ff=32, heads=4, n_kv=2, d_head=4,
...                    vocab=64, seq=8, dtype="float32")
>>> model = Decoder(shape)
>>> from gpuconcepts.model import params
>>> sum(p.numel() for p in model.parameters()) == params(shape) == 5632
True
>>> logits, cache = model(torch.zeros(2, 8, dtype=torch.long))
>>> tuple(logits.shape), tuple(cache[0][0].shape)
((2, 8, 64), (2, 2, 8, 4))
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

from gpuconcepts import formulas
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.kernels._common import Kernel, check_sizes, torch_dtype
from gpuconcepts.kernels.ceilings.stream import triad_kernel
from gpuconcepts.kernels.dispatch import cpu_profiler
from gpuconcepts.measure import Rounds, free_memory_bytes, stream_rows
from gpuconcepts.measure.timing import time_in_blocks
from gpuconcepts.model import ModelShape, kv_cache, matmul_params
from gpuconcepts.results.wholemodel import (
    STREAM_TRIAD,
    BackwardForward,
    DecodeSweep,
    TrainingPeak,
    WholeModelResults,
    WholeModelSizes,
)
from gpuconcepts.units import plain_number

Cache = list[tuple[torch.Tensor, torch.Tensor]]


class Block(nn.Module):
    """A pre-norm layer: attention with ``n_kv`` key/value heads, then a GELU MLP.

    ``past`` is a static cache (keys and values of shape B × n_kv × positions × d_head), as a
    server keeps one: the step writes its own keys and values into the last S positions and
    attends over all of them, so it reads each cached byte once and copies none. In a decode
    step (S = 1) the queries of a group attend to their one KV head as rows of one product,
    so grouped-query attention reads its smaller cache and never a repeated copy.
    """

    def __init__(self, shape: ModelShape) -> None:
        super().__init__()
        d, kv = shape.d, shape.n_kv * shape.d_head
        self.shape = shape
        self.norm1 = nn.LayerNorm(d, elementwise_affine=False)
        self.q = nn.Linear(d, d, bias=False)
        self.k = nn.Linear(d, kv, bias=False)
        self.v = nn.Linear(d, kv, bias=False)
        self.o = nn.Linear(d, d, bias=False)
        self.norm2 = nn.LayerNorm(d, elementwise_affine=False)
        self.up = nn.Linear(d, shape.d_ff, bias=False)
        self.down = nn.Linear(shape.d_ff, d, bias=False)

    def forward(
        self, x: torch.Tensor, past: tuple[torch.Tensor, torch.Tensor] | None = None
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        B, S, _ = x.shape
        heads, n_kv, width = self.shape.heads, self.shape.n_kv, self.shape.d_head
        h = self.norm1(x)
        q = self.q(h).view(B, S, heads, width).transpose(1, 2)
        k = self.k(h).view(B, S, n_kv, width).transpose(1, 2)
        v = self.v(h).view(B, S, n_kv, width).transpose(1, 2)
        if past is not None:  # a static cache, as servers keep one: its last S slots are ours
            past[0][:, :, -S:], past[1][:, :, -S:] = k, v
            k, v = past
        group = heads // n_kv  # each KV head serves a group of query heads
        if S == 1 and group > 1:  # decode: a group's queries are rows against their one KV head
            grouped = q.reshape(B, n_kv, group, width)
            a = F.scaled_dot_product_attention(grouped, k, v).reshape(B, heads, 1, width)
        else:
            keys = k.repeat_interleave(group, dim=1) if group > 1 else k
            values = v.repeat_interleave(group, dim=1) if group > 1 else v
            a = F.scaled_dot_product_attention(q, keys, values, is_causal=past is None and S > 1)
        x = x + self.o(a.transpose(1, 2).reshape(B, S, -1))
        x = x + self.down(F.gelu(self.up(self.norm2(x))))
        return x, (k, v)


class Decoder(nn.Module):
    """Embedding, ``layers`` blocks, a final norm and an untied output head; random weights."""

    def __init__(self, shape: ModelShape, *, seed: int = 0) -> None:
        super().__init__()
        if shape.gated or shape.tied or shape.positions:
            raise GpuConceptsError(
                f"Decoder {shape.name}: only a two-matrix MLP, an untied head and no learned "
                "positions are built here"
            )
        torch.manual_seed(seed)
        self.embed = nn.Embedding(shape.vocab, shape.d)
        self.blocks = nn.ModuleList(Block(shape) for _ in range(shape.layers))
        self.norm = nn.LayerNorm(shape.d, elementwise_affine=False)
        self.head = nn.Linear(shape.d, shape.vocab, bias=False)
        self.to(torch_dtype(shape.dtype))

    def forward(
        self, tokens: torch.Tensor, cache: Cache | None = None
    ) -> tuple[torch.Tensor, Cache]:
        x = self.embed(tokens)
        new: Cache = []
        for i, block in enumerate(self.blocks):
            x, kv = block(x, None if cache is None else cache[i])
            new.append(kv)
        return self.head(self.norm(x)), new


# -- backward against forward ------------------------------------------------------------------
def linear_stack(d: int, d_ff: int, blocks: int, *, seed: int = 0) -> nn.Sequential:
    """``blocks`` MLPs (d → d_ff → d, GELU, no bias) one after another: only weight products."""
    check_sizes("decoder.linear_stack", d=d, d_ff=d_ff, blocks=blocks)
    torch.manual_seed(seed)
    layers: list[nn.Module] = []
    for _ in range(blocks):
        layers += [nn.Linear(d, d_ff, bias=False), nn.GELU(), nn.Linear(d_ff, d, bias=False)]
    return nn.Sequential(*layers)


def count_flops(fn: Callable[[], object]) -> int:
    """FLOPs ``FlopCounterMode`` counts while ``fn()`` runs."""
    with FlopCounterMode(display=False) as counter:
        fn()
    return int(counter.get_total_flops())


def backward_forward(
    device: str, *, tokens: int, d: int, d_ff: int, blocks: int, repeats: int = 7, timed_in: int = 1
) -> BackwardForward:
    """Count and time the forward and the backward pass of :func:`linear_stack`.

    The input requires a gradient, so every layer computes both dX and dW, as every layer
    but the first does in a real network. The two passes are timed side by side in
    ``repeats`` paired rounds (on a shared machine the load changes from one second to the
    next; each ratio then compares times taken under the same load), in ``timed_in``
    independent blocks (:func:`~gpuconcepts.measure.timing.time_in_blocks`).
    """
    check_sizes("decoder.backward_forward", tokens=tokens, repeats=repeats, timed_in=timed_in)
    model = linear_stack(d, d_ff, blocks).to(device)
    x = torch.randn(tokens, d, device=device, requires_grad=True)
    n = sum(p.numel() for p in model.parameters())

    def forward() -> None:
        with torch.no_grad():
            model(x)

    def step() -> None:
        model(x).sum().backward()  # the sum's own backward is elementwise, no FLOPs counted
        x.grad = None
        model.zero_grad(set_to_none=True)

    forward_flops = count_flops(lambda: model(x))
    total_flops = count_flops(step)
    rounds = Rounds([_Call(forward, autograd=True), _Call(step, autograd=True)], device)
    time_in_blocks(rounds, repeats, timed_in)
    return BackwardForward(
        tokens=tokens,
        n_params=n,
        forward_flops=forward_flops,
        backward_flops=total_flops - forward_flops,
        predicted_forward_flops=tokens * int(formulas.forward_flops_per_token(n_params=n)),
        predicted_backward_flops=tokens
        * int(
            formulas.training_flops_per_token(n_params=n)
            - formulas.forward_flops_per_token(n_params=n)
        ),
        forward_seconds=tuple(rounds.times[0]),
        step_seconds=tuple(rounds.times[1]),
        blocks=timed_in,
    )


# -- decode ------------------------------------------------------------------------------------
def _step(model: Decoder, token: torch.Tensor, cache: Cache) -> Callable[[], object]:
    """One decode step on a fixed cache, as a call without arguments for the timers."""
    return lambda: model(token, cache)


def decode_sweep(
    device: str,
    shape: ModelShape,
    *,
    batches: Sequence[int],
    cached: int,
    repeats: int = 5,
    timed_in: int = 1,
) -> DecodeSweep:
    """Time one decode step of :class:`Decoder` at each batch size, with ``cached`` tokens of
    KV cache per sequence (random keys and values: a prefill would cost far more than the
    steps) in a static cache with one more position, which the step writes.

    The caches of every batch are held at once (the steps are timed in ``repeats`` paired
    rounds, in ``timed_in`` independent blocks:
    :func:`~gpuconcepts.measure.timing.time_in_blocks`); their bytes must fit in half the
    device's free memory, or the sweep is refused before anything is allocated.
    """
    check_sizes("decoder.decode_sweep", cached=cached, repeats=repeats, timed_in=timed_in)
    check_sizes("decoder.decode_sweep", **{f"batch {B}": B for B in batches})
    total = sum(kv_cache(shape, B=B, S=cached + 1) for B in batches)
    free = free_memory_bytes(device)
    if 2 * total > free:
        raise GpuConceptsError(
            f"decoder.decode_sweep: the KV caches of batches {', '.join(map(str, batches))} at "
            f"{plain_number(cached)} tokens take {plain_number(total)} bytes, more than half the {plain_number(free)} bytes free"
        )
    model = Decoder(shape).to(device).eval()
    dtype = torch_dtype(shape.dtype)
    steps = []
    with torch.inference_mode():
        for B in batches:
            size = (B, shape.n_kv, cached + 1, shape.d_head)
            cache = [
                (torch.empty(size, dtype=dtype, device=device).uniform_(-1, 1),
                 torch.empty(size, dtype=dtype, device=device).uniform_(-1, 1))
                for _ in range(shape.layers)
            ]  # fmt: skip
            token = torch.randint(0, shape.vocab, (B, 1), device=device)
            steps.append(_Call(_step(model, token, cache)))
        graphed = device == "cuda"
        if graphed:
            steps = [_Call(replayed(step.fn)) for step in steps]
    weight_bytes, reference = _weights_read(device, shape)  # timed in the same rounds
    rounds = Rounds([*steps, reference], device)
    time_in_blocks(rounds, repeats, timed_in)
    return DecodeSweep(
        shape=shape,
        cached=cached,
        batches=tuple(batches),
        seconds=tuple(tuple(t) for t in rounds.times[:-1]),
        weight_bytes=weight_bytes,
        cache_bytes=tuple(kv_cache(shape, B=B, S=cached) for B in batches),
        reference_seconds=tuple(rounds.times[-1]),
        reference_bytes=int(reference.bytes),
        graphed=graphed,
        blocks=timed_in,
        reference_kernel=STREAM_TRIAD,
    )


def _weights_read(device: str, shape: ModelShape) -> tuple[int, Kernel]:
    """The bytes of every weight a decode step multiplies by, and the roof of reading them,
    timed in the same rounds as the steps (load slows the steps and the roof alike): the STREAM
    triad on three arrays that together move as many bytes as the weights. A canonical
    streaming kernel, never the step's own kind of operation (issue 45: no ceiling is timed
    from the kernel it judges); that a step's matrix-vector products stream slower is the
    model's miss, scored in ledger 2."""
    weight_bytes = int(formulas.weight_memory(n_params=matmul_params(shape), s=shape.s))
    return weight_bytes, triad_kernel(device, N=stream_rows(max(1, weight_bytes // 3)))


def replayed(step: Callable[[], object]) -> Callable[[], object]:
    """``step`` captured once as a CUDA graph: a call replays the graph's kernels with one
    launch, as servers run decode, instead of Python launching each of them (a step of a
    small model launches about a hundred kernels, each with microseconds of host time: eager,
    the H200 took ten times the weights' floor at batch 1).

    The step must touch only tensors that live as long as the graph (the model's weights, a
    static cache, a fixed token): a replay reads and writes the same addresses.
    """
    side = torch.cuda.Stream()  # type: ignore[no-untyped-call]
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up off the capture: library handles, workspaces
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        step()
    return graph.replay


@dataclass(frozen=True)
class _Call:
    """A call for :class:`~gpuconcepts.measure.Rounds` that keeps its caches (no flush) and
    runs without autograd, unless it needs it (``autograd``: a training step)."""

    fn: Callable[[], object]
    flush: bool = False
    autograd: bool = False

    def settings(self) -> AbstractContextManager[None]:
        return contextlib.nullcontext() if self.autograd else torch.inference_mode()


# -- training memory ---------------------------------------------------------------------------
def _profiled_peak(fn: Callable[[], object]) -> int:
    """Most bytes allocated at once while ``fn()`` runs, from the profiler's memory events."""
    with cpu_profiler(memory=True) as prof:
        fn()
    # An operator's own allocations (less what it freed) are its self usage; frees outside
    # any operator are "[memory]" events. Summed in time order they give the bytes live.
    events = sorted(prof.function_events, key=lambda e: e.time_range.start)
    live = peak = 0
    for event in events:
        live += int(event.self_cpu_memory_usage)
        peak = max(peak, live)
    return peak


def training_peak(device: str, shape: ModelShape, *, batch: int) -> TrainingPeak:
    """Peak memory of one training step of :class:`Decoder` on ``batch`` × ``shape.seq`` tokens.

    One step runs first so that Adam's moments exist; the second is measured.
    """
    check_sizes("decoder.training_peak", batch=batch)
    if shape.dtype != "float32":
        raise GpuConceptsError("decoder.training_peak: trains in float32 (no master copy)")
    model = Decoder(shape).to(device)
    optimizer = torch.optim.Adam(model.parameters())
    tokens = torch.randint(0, shape.vocab, (batch, shape.seq), device=device)

    def step() -> None:
        optimizer.zero_grad(set_to_none=True)
        logits, _ = model(tokens)
        logits.float().pow(2).mean().backward()
        optimizer.step()

    step()
    n = sum(p.numel() for p in model.parameters())
    resident = sum(p.numel() * p.element_size() for p in model.parameters())
    resident += sum(
        t.numel() * t.element_size()
        for state in optimizer.state.values()
        for t in state.values()
        if isinstance(t, torch.Tensor) and t.dim() > 0
    )
    optimizer.zero_grad(set_to_none=True)  # the measured step starts with weights and moments
    if device == "cuda":
        torch.cuda.synchronize()
        before = torch.cuda.memory_allocated()  # weights, moments and the token ids
        torch.cuda.reset_peak_memory_stats()
        step()
        torch.cuda.synchronize()
        peak = resident + torch.cuda.max_memory_allocated() - before
    else:
        peak = resident + _profiled_peak(step)
    grads = sum(p.numel() * p.element_size() for p in model.parameters())
    return TrainingPeak(
        n_params=n, tokens=batch * shape.seq, peak_bytes=int(peak), state_bytes=resident + grads
    )


# -- all three ---------------------------------------------------------------------------------
def whole_model(
    device: str, sizes: WholeModelSizes, *, progress: Callable[[str], None] | None = None
) -> WholeModelResults:
    """Run the three whole-model experiments at ``sizes`` on a resolved device."""
    say = progress or (lambda _line: None)
    say("whole model: backward against forward on a stack of linear layers")
    timing = {"repeats": sizes.repeats, "timed_in": sizes.timed_blocks}
    backward = backward_forward(device, **timing, **sizes.backward)
    say("whole model: decode steps at growing batch")
    decode = decode_sweep(
        device, sizes.decode, batches=sizes.batches, cached=sizes.cached, **timing
    )
    long_decode = None
    if sizes.long_batches:
        say(
            f"whole model: decode steps at growing batch, {plain_number(sizes.long_cached)} tokens cached"
        )
        long_decode = decode_sweep(
            device,
            sizes.decode,
            batches=sizes.long_batches,
            cached=sizes.long_cached,
            **timing,
        )
    say("whole model: peak memory of an Adam training step")
    training = training_peak(device, sizes.training, batch=sizes.training_batch)
    return WholeModelResults(sizes, backward, decode, training, long_decode)
