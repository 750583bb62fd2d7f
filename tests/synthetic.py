"""Tiny sizes every test of the profile shares, and a synthetic Run: the profile's workloads
at those sizes, times made up, counts real."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping

from gpuconcepts import formulas
from gpuconcepts.lab import Lab
from gpuconcepts.measure import Measurement
from gpuconcepts.roofline import Peaks
from gpuconcepts.run import Provenance, Run
from gpuconcepts.workloads import workload

TINY_PRESETS: dict[str, dict[str, int]] = {
    "timing": {"repeats": 2},
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
    return Measurement(
        name, "cpu", {**params, "dtype": "float32"}, (t, (1 + spread) * t, (1 - spread / 2) * t),
        flops, nbytes, series=series,
    )  # fmt: skip


def synthetic_lab(
    peaks: Peaks, label: str, seconds: float | Timing = 1e-3, spread: float = 0.2
) -> Lab:
    """A lab whose every kernel is faked: real counts, times from ``seconds``."""
    lab = Lab("cpu", peaks, repeats=3, cache_bytes=2**25, free_bytes=2**34, label=label)
    lab.measure = lambda name, **sizes: lab._measured.setdefault(  # type: ignore[method-assign]
        (name, tuple(sorted(sizes.items()))), fake_measurement(name, sizes, seconds, spread)
    )
    return lab


def synthetic_run(label: str = "cpu (Example CPU, 2 threads)", seconds: float = 1e-3) -> Run:
    """A Run of the profile at tiny sizes, measured by nothing: every kernel faked."""
    from gpuconcepts.profile import profile_all

    peaks = Peaks("cpu", 1e11, 1e10, "float32")
    lab = synthetic_lab(peaks, label, seconds)
    profile_all(lab, TINY_PRESETS, {k: tuple(v) for k, v in TINY_SWEEPS.items()})
    provenance = dataclasses.replace(
        Provenance.example(),
        device_name=label,
        sizes={"presets": TINY_PRESETS, "sweeps": TINY_SWEEPS, "claims": None},
    )
    return Run(provenance, peaks, lab.measurements, {}, ())
