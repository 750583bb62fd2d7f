"""Tiny sizes every test of the profile shares, and a synthetic Run: the profile's workloads
at those sizes, times made up, counts real; and made-up whole-model and distributed results,
every count from the formulas, every time chosen so that their claims hold (the growth of the
all-reduce with W excepted: at W = 2 it is not visible)."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Mapping

from gpuconcepts import formulas
from gpuconcepts.claims.judge import part_claims
from gpuconcepts.distributed import quick_sizes
from gpuconcepts.lab import Lab
from gpuconcepts.measure import Measurement
from gpuconcepts.model import ModelShape, kv_cache, matmul_params
from gpuconcepts.results.distributed import Collective, DistributedReport, fit_alpha_beta
from gpuconcepts.results.wholemodel import (
    BackwardForward,
    DecodeSweep,
    TrainingPeak,
    WholeModelResults,
    WholeModelSizes,
)
from gpuconcepts.roofline import Peaks
from gpuconcepts.run import Provenance, Run
from gpuconcepts.sizing import RunSizes
from gpuconcepts.workloads import workload

TINY_PRESETS: dict[str, dict[str, int]] = {
    "timing": {"repeats": 2},
    "budget": {"seconds": 60, "memory_mib": 512},
    "peaks": {"gemm_n": 32, "stream_mib": 1},
    "dlrm": {"N": 256, "d": 8, "B": 4, "L": 2},
    "dlrm_dense": {"B": 4, "d_in": 8, "d_out": 8},
    "mlp": {"B": 4, "d_in": 8, "d_out": 8},
    "cnn": {"B": 1, "H": 6, "W": 6, "C_in": 2, "C_out": 2, "K": 3},
    "cnn_depthwise": {"B": 1, "H": 6, "W": 6, "C": 2, "K": 3},
    "rnn": {"B": 2, "S": 3, "d_in": 4, "d_h": 4},
    "transformer_prefill": {"B": 1, "S": 8, "d": 8, "heads": 2},
    "transformer_decode": {"B": 1, "S_prompt": 4, "steps": 2, "d": 8, "heads": 2},
}
TINY_SWEEPS: dict[str, list[int]] = {"mlp_B": [1, 2], "transformer_S": [4, 16]}
_TOY = ModelShape("toy", d=32, layers=2, d_ff=64, heads=4, n_kv=2, d_head=8, vocab=50, seq=16,
                  dtype="float32")  # fmt: skip
TINY_WHOLEMODEL = WholeModelSizes(
    backward={"tokens": 8, "d": 16, "d_ff": 32, "blocks": 1}, decode=_TOY, batches=(1, 2),
    cached=4, training=_TOY, training_batch=2, repeats=2,
)  # fmt: skip
"""Whole-model experiments that run in well under a second (their verdicts mean nothing)."""


Timing = Callable[[str, Mapping[str, object], float, float], float]
"""Made-up seconds of a kernel from its name, sizes, FLOPs and bytes."""


def fake_measurement(
    name: str, sizes: Mapping[str, object], seconds: float | Timing = 1e-3, spread: float = 0.2
) -> Measurement:
    """What a kernel would return at these sizes (float32), with made-up times: ``seconds``,
    or what ``seconds(name, params, flops, bytes)`` says, repeated with ``spread``."""
    params: dict[str, object] = {**sizes, "s": 4}
    series: dict[str, tuple[float, ...]] = {}
    if name == "transformer-decode":
        steps, prompt = int(sizes["steps"]), int(sizes["S_prompt"])  # type: ignore[call-overload]
        params["S"] = prompt + steps
        lengths = tuple(float(prompt + i) for i in range(1, steps + 1))
        cache = tuple(
            float(formulas.kv_cache_memory(B=sizes["B"], S=int(n), d=sizes["d"], s=4))
            for n in lengths
        )
        series = {"lengths": lengths, "cache_bytes": cache}
    flops, nbytes = workload(name).counts(params)
    t = seconds(name, params, flops, nbytes) if callable(seconds) else seconds
    # a step loop calls from Python once a step, as the real kernel does: its chain of calls;
    # nn.RNN is one call that dispatches an operation a step (the CPU's dispatches three)
    S = int(params["S"]) if name in ("rnn-loop", "rnn-module") else None  # type: ignore[call-overload]
    calls = 1 if name == "rnn-module" else S
    return Measurement(
        name, "cpu", {**params, "dtype": "float32"}, (t, (1 + spread) * t, (1 - spread / 2) * t),
        flops, nbytes, series=series, ops=S, calls=calls, steps=S,
    )  # fmt: skip


PEAKS = Peaks("cpu", 1e11, 1e10, "float32")
"""The synthetic run's peaks: a ridge point of 10 FLOP/byte."""


def synthetic_wholemodel(peaks: Peaks = PEAKS) -> WholeModelResults:
    """The whole-model experiments at the CPU's quick sizes, as they would go on ``peaks``.

    The backward pass takes twice the forward; a decode step is ``a + b·B`` with ``a`` 1.2x the
    decode floor and its knee where ``decode_compute_bound_batch`` puts it; at the long context
    it is 1.2x the weights' and the caches' read; the training peak is 16 bytes per weight plus
    the activations.
    """
    sizes = RunSizes.resolve("cpu", quick=True, free_bytes=2**36).wholemodel
    tokens, n = sizes.backward["tokens"], 2 * sizes.backward["d"] * sizes.backward["d_ff"]
    forward = tokens * int(formulas.forward_flops_per_token(n_params=n))
    backward = BackwardForward(
        tokens=tokens, n_params=n, forward_flops=forward, backward_flops=2 * forward,
        predicted_forward_flops=forward, predicted_backward_flops=2 * forward,
        forward_seconds=(1e-3, 1.1e-3, 1.05e-3), step_seconds=(3e-3, 3.2e-3, 3.1e-3),
    )  # fmt: skip
    shape = sizes.decode
    weights = int(formulas.weight_memory(n_params=matmul_params(shape), s=shape.s))
    cache = tuple(1024 * B for B in sizes.batches)
    floor = float(
        formulas.decode_seconds_lower_bound(M_w=weights, M_kv=cache[0], beta=peaks.bytes_per_s)
    )
    knee = float(
        formulas.decode_compute_bound_batch(P=peaks.flops_per_s, s=shape.s, beta=peaks.bytes_per_s)
    )
    step = [1.2 * floor * (1 + B / knee) for B in sizes.batches]
    decode = DecodeSweep(
        shape=shape, cached=sizes.cached, batches=sizes.batches,
        seconds=tuple((t, 1.01 * t, 1.02 * t) for t in step), weight_bytes=weights,
        cache_bytes=cache,
    )  # fmt: skip
    train = sizes.training
    n_train = 1_000_000
    tokens_train = sizes.training_batch * train.seq
    activations = (
        tokens_train
        * train.layers
        * int(formulas.layer_activation_memory(d=train.d, d_ff=train.d_ff, s=train.s))
    )
    training = TrainingPeak(
        n_params=n_train, tokens=tokens_train, peak_bytes=16 * n_train + activations,
        state_bytes=16 * n_train,
    )  # fmt: skip
    # at the long context every sequence reads its own cache: memory-bound, 1.2x the roofline
    long_cache = tuple(kv_cache(shape, B=B, S=sizes.long_cached) for B in sizes.long_batches)
    long_step = [1.2 * (weights + c) / peaks.bytes_per_s for c in long_cache]
    long_decode = DecodeSweep(
        shape=shape, cached=sizes.long_cached, batches=sizes.long_batches,
        seconds=tuple((t, 1.01 * t, 1.02 * t) for t in long_step), weight_bytes=weights,
        cache_bytes=long_cache,
    )  # fmt: skip
    return WholeModelResults(sizes, backward, decode, training, long_decode)


def _collective(
    name: str, kind: str, formula: str, inputs: dict[str, int], **more: object
) -> Collective:
    """A collective whose loopback bytes are 0.1% above the formula's (headers) and whose time
    the synthetic α–β line predicts."""
    expected = float(formulas.get(formula)(**inputs))
    calls = 2 if kind == "tensor parallel" else 1
    seconds = 1e-4 * calls + expected / 1e9
    return Collective(
        name=name, kind=kind, formula=formula, inputs=inputs, formula_bytes=expected,
        senders=2, loopback_bytes=(1.001 * expected, 1.002 * expected),
        seconds=(seconds, 1.05 * seconds, 0.98 * seconds), max_error=0.0, **more,  # type: ignore[arg-type]
    )  # fmt: skip


def synthetic_distributed() -> DistributedReport:
    """A two-process gloo run: every collective of the book, its bytes as the formulas count,
    the pipeline's bubble as GPipe's formula gives it at each m, and the all-reduce's bytes
    counted in groups of up to 4 processes."""
    lookup = {"B": 2048, "n_tables": 4, "d": 64, "s": 4, "W": 2}
    sweep = tuple(
        _collective(f"all-reduce of {n:,} values", "size sweep", "ring_allreduce_bytes",
                    {"n_params": n, "s": 4, "W": 2})
        for n in (4096, 65536, 1048576)
    )  # fmt: skip
    p, m = 2, 4
    growth = tuple(
        _collective(f"all-reduce, {w} of 4 processes", "world-size sweep", "ring_allreduce_bytes",
                    {"n_params": 1_000_000, "s": 4, "W": w})
        for w in (2, 3, 4)
    )  # fmt: skip
    pipelines = tuple(
        _collective(f"{p}-stage pipeline, {k} micro-batches", "pipeline sweep",
                    "pipeline_activation_bytes", {"B": 128 * k, "d": 768, "s": 4},
                    bubble=(float(formulas.pipeline_bubble_fraction(p=p, m=k)),) * 5,
                    schedule={"p": p, "m": k}, busy_seconds=(1.0, 1.1), solo_seconds=1.0)
        for k in (1, 2, 8)
    )  # fmt: skip
    collectives = (
        _collective("all-reduce", "data parallel", "ring_allreduce_bytes",
                    {"n_params": 1_000_000, "s": 4, "W": 2}),
        *sweep,
        *(_collective(f"{scheme} lookup", "sharded embedding", f"{scheme[:-5]}wise_alltoall_bytes",
                      lookup, order=order)
          for scheme, order in (("table-wise", (0, 2, 1)), ("row-wise", (1, 0, 2)),
                                ("column-wise", (2, 1, 0)))),
        _collective("two-way tensor-parallel MLP", "tensor parallel",
                    "tensor_parallel_mlp_bytes", {"B": 4, "S": 128, "d": 256, "s": 4, "W": 2}),
        _collective(f"{p}-stage pipeline, {m} micro-batches", "pipeline",
                    "pipeline_activation_bytes", {"B": 512, "d": 768, "s": 4},
                    bubble=(float(formulas.pipeline_bubble_fraction(p=p, m=m)),) * 5,
                    schedule={"p": p, "m": m}, busy_seconds=(1.0, 1.1), solo_seconds=1.0),
        *pipelines,
        *growth,
    )  # fmt: skip
    fit = fit_alpha_beta([c.formula_bytes for c in sweep], [c.median_seconds for c in sweep])
    return DistributedReport(
        world_size=2, backend="gloo", quick=True,
        device="gloo over loopback TCP, 2 processes on Example CPU", sizes=quick_sizes(),
        collectives=collectives, fit=fit, cores=2, seconds=60.0,
        timings={"data parallel": 1.0, "size sweep": 2.0},
    )  # fmt: skip


@dataclasses.dataclass(frozen=True)
class FakeKernel:
    """Stands for a prepared kernel (:class:`gpuconcepts.kernels._common.Kernel`): a call that
    does nothing, timed (alone or in rounds beside its references) into a made-up
    measurement."""

    made: Measurement
    flush: bool = False

    @property
    def device(self) -> str:
        return self.made.device

    @property
    def dtype(self) -> str:
        return str(self.made.params.get("dtype", "float32"))

    @staticmethod
    def fn() -> None:
        return None

    def settings(self) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    def measurement(self, raw_seconds: object, **_: object) -> Measurement:
        del raw_seconds
        return self.made

    def time(self, repeats: int) -> Measurement:
        del repeats
        return self.made


def synthetic_lab(
    peaks: Peaks, label: str, seconds: float | Timing = 1e-3, spread: float = 0.2
) -> Lab:
    """A lab whose every kernel is faked: real counts, times from ``seconds``."""
    lab = Lab("cpu", peaks, repeats=3, cache_bytes=2**25, free_bytes=2**34, label=label)
    lab.measure = lambda name, **sizes: lab._measured.setdefault(  # type: ignore[method-assign]
        (name, tuple(sorted(sizes.items()))), fake_measurement(name, sizes, seconds, spread)
    )
    # compared kernels are faked the same way: timed apart, judged without pairing
    lab.compare = lambda wanted, _judge=None: tuple(  # type: ignore[method-assign]
        lab.measure(name, **sizes) for name, sizes in wanted
    )
    return lab


def synthetic_run(
    label: str = "cpu (Example CPU, 2 threads)", seconds: float = 1e-3, *, parts: bool = True
) -> Run:
    """A Run of the profile at tiny sizes, measured by nothing: every kernel faked. With
    ``parts`` it holds the synthetic whole-model and distributed results and their claims
    (judged by :meth:`Run.part_claims`, as :func:`gpuconcepts.collect.collect` does)."""
    from gpuconcepts.lab import profile_all

    peaks = PEAKS
    lab = synthetic_lab(peaks, label, seconds)
    profile_all(lab, TINY_PRESETS, {k: tuple(v) for k, v in TINY_SWEEPS.items()})
    provenance = dataclasses.replace(
        Provenance.example(),
        device_name=label,
        sizes={"presets": TINY_PRESETS, "sweeps": TINY_SWEEPS, "claims": None},
    )
    run = Run(provenance, peaks, lab.measurements, {}, ())
    if not parts:
        return run
    run = dataclasses.replace(
        run, wholemodel=synthetic_wholemodel(peaks), distributed=synthetic_distributed()
    )
    return dataclasses.replace(run, claims=part_claims(run))
