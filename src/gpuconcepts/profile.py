"""The profile: the five workloads at preset sizes; and ``gpuconcepts profile``, which collects a
Run on this machine and prints (or saves) it.

Progress goes to stderr, the result to stdout: a table, or with ``--json`` the run itself
(what ``--save`` writes). torch is imported only when a run is collected.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping

from gpuconcepts.files import check_writable
from gpuconcepts.lab import Lab
from gpuconcepts.measure import Measurement, resolve_device
from gpuconcepts.render import format_run
from gpuconcepts.run import collect


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
        hoisted loop, GEMM), Transformer (prefill, causal prefill, the length sweep, decode). A size met twice is one
        measurement, listed once.
    """
    out: list[Measurement] = []

    def add(workload: str, **sizes: object) -> None:
        m = lab.measure(workload, **sizes)
        if all(m is not seen for seen in out):
            out.append(m)

    for pattern in ("random", "sequential", "hot"):
        add(f"dlrm-{pattern}", **presets["dlrm"])
    add("dlrm-dense", **presets["dlrm_dense"])
    add("mlp", **presets["mlp"])
    for B in sweeps.get("mlp_B", ()):
        add("mlp", **{**presets["mlp"], "B": B})
    add("cnn-conv", **presets["cnn"])
    add("cnn-depthwise", **presets["cnn_depthwise"])
    for workload in ("rnn-module", "rnn-loop", "rnn-hoisted", "rnn-gemm"):
        add(workload, **presets["rnn"])
    add("transformer-prefill", **presets["transformer_prefill"])
    add("transformer-prefill-causal", **presets["transformer_prefill"])
    for S in sweeps.get("transformer_S", ()):
        add("transformer-prefill", **{**presets["transformer_prefill"], "S": S})
    add("transformer-decode", **presets["transformer_decode"])
    return out


def stderr_line(line: str) -> None:
    """Write one progress line to stderr, at once."""
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def run_profile(
    device: str, quick: bool, as_json: bool, save: str | None = None, dtype: str | None = None
) -> int:
    """The CLI's ``gpuconcepts profile``: measure, then print the run; ``save`` writes it too."""
    resolved = resolve_device(device)
    if save is not None:
        check_writable(save)  # a path that cannot be written is said now, not after the run
    run = collect(resolved, quick, progress=stderr_line, dtype=dtype)
    if save is not None:
        run.save(save)
        stderr_line(f"saved the run to {save}")
    sys.stdout.write(run.to_json() if as_json else format_run(run) + "\n")
    return 0
