"""``profile_all``: every workload at preset sizes, one after another, on one device."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from gpuconcepts.kernels import cnn, dlrm, mlp, rnn, transformer
from gpuconcepts.kernels.peaks import measure_peaks
from gpuconcepts.kernels.presets import load_presets, load_sweeps
from gpuconcepts.measure import Measurement, Peaks

Progress = Callable[[str], None]


def _sizes(table: Mapping[str, int]) -> dict[str, Any]:
    """A preset table as keyword arguments (typed loosely: kernels mix ints and strings)."""
    return dict(table)


def profile_all(
    device: str,
    quick: bool,
    peaks: Peaks | None = None,
    progress: Progress | None = None,
    presets: Mapping[str, Mapping[str, int]] | None = None,
    sweeps: Mapping[str, tuple[int, ...]] | None = None,
) -> list[Measurement]:
    """Run the five workloads on a resolved device and return their measurements.

    Args:
        device: ``"cpu"`` or ``"cuda"``.
        quick: smaller sizes and fewer repetitions (``--quick``).
        peaks: measured peaks; measured first when None.
        progress: called with a line of text before each step (the CLI prints it to stderr).
        presets, sweeps: sizes to use instead of :func:`load_presets` / :func:`load_sweeps`.
    """
    say = progress or (lambda _line: None)
    sizes = presets if presets is not None else load_presets(device, quick)
    swept = sweeps if sweeps is not None else load_sweeps(device, quick)
    if peaks is None:
        say(f"peaks: STREAM copy/triad and a {sizes['peaks']['gemm_n']}² GEMM on {device}")
        peaks = measure_peaks(device, quick, presets=sizes)
    reps = sizes.get("timing", {}).get("repeats", 7)
    out: list[Measurement] = []

    for pattern in dlrm.PATTERNS:
        say(f"dlrm: embedding_bag, {pattern} rows {dict(sizes['dlrm'])}")
        out.append(
            dlrm.embedding_lookup(
                device, peaks, pattern=pattern, repeats=reps, **_sizes(sizes["dlrm"])
            )
        )
    say(f"dlrm: dense MLP {dict(sizes['dlrm_dense'])}")
    out.append(dlrm.dense_mlp(device, peaks, repeats=reps, **_sizes(sizes["dlrm_dense"])))

    say(f"mlp: nn.Linear {dict(sizes['mlp'])}")
    out.append(mlp.linear(device, peaks, repeats=reps, **_sizes(sizes["mlp"])))
    batches = swept.get("mlp_B", ())
    if batches:
        say(f"mlp: batch sweep B in {list(batches)}")
        out.extend(
            mlp.batch_sweep(
                device,
                peaks,
                batches=batches,
                d_in=sizes["mlp"]["d_in"],
                d_out=sizes["mlp"]["d_out"],
                repeats=reps,
            )
        )

    say(f"cnn: 3x3 conv2d {dict(sizes['cnn'])}")
    out.append(cnn.conv2d(device, peaks, repeats=reps, **_sizes(sizes["cnn"])))
    say(f"cnn: depthwise conv2d {dict(sizes['cnn_depthwise'])}")
    out.append(cnn.depthwise_conv2d(device, peaks, repeats=reps, **_sizes(sizes["cnn_depthwise"])))

    for kernel in (rnn.rnn_module, rnn.step_loop, rnn.batched_gemm):
        say(f"rnn: {kernel.__name__} {dict(sizes['rnn'])}")
        out.append(kernel(device, peaks, repeats=reps, **_sizes(sizes["rnn"])))

    prefill = dict(sizes["transformer_prefill"])
    say(f"transformer: prefill {prefill}")
    out.append(transformer.prefill(device, peaks, repeats=reps, **_sizes(prefill)))
    lengths = swept.get("transformer_S", ())
    if lengths:
        say(f"transformer: prefill sweep S in {list(lengths)}")
        out.extend(
            transformer.prefill_sweep(
                device,
                peaks,
                B=prefill["B"],
                lengths=lengths,
                d=prefill["d"],
                heads=prefill["heads"],
                repeats=reps,
            )
        )
    say(f"transformer: decode {dict(sizes['transformer_decode'])}")
    out.append(
        transformer.decode(
            device, peaks, repeats=reps, **_sizes(sizes["transformer_decode"])
        ).measurement
    )
    return out
