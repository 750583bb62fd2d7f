r"""``gpuconcepts profile``: measure peaks, run the five workloads, print them on the roofline.

Progress goes to stderr, the result to stdout: a table, or with ``--json`` one object with
``device``, ``peaks`` and ``measurements`` (see :func:`collect`). torch is imported only
when a profile runs.

>>> from gpuconcepts.measure import Measurement, Peaks
>>> p = Peaks(device="cpu", flops_per_s=1e11, bytes_per_s=1e10, dtype="float32")
>>> m = Measurement("mlp", "cpu", {"B": 64}, (0.011, 0.01, 0.012), 1e9, 2e7, p)
>>> print(format_measurements([m]))
workload  ms (median ± IQR)  GFLOP/s  GB/s  FLOP/B  roofline ms  measured/roofline    bound
mlp              11.000 ± 1     90.9  1.82      50       10.000               1.10  compute
"""

# torch and matplotlib are imported inside functions on purpose (DESIGN rule 3).
# ruff: noqa: PLC0415

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from gpuconcepts.hardware import GPU, format_table
from gpuconcepts.measure import Measurement, Peaks, device_name, resolve_device


def _stderr(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


@dataclass(frozen=True)
class ProfileResult:
    """What one profile run produced; :meth:`to_dict` is the ``--json`` payload."""

    device: str
    device_name: str
    quick: bool
    peaks: Peaks
    datasheet: GPU | None
    measurements: tuple[Measurement, ...]
    wall_seconds: float

    def to_dict(self) -> dict[str, Any]:
        """Keys: ``device`` (``"cpu"``/``"cuda"``), ``device_name``, ``quick``, ``peaks``
        (``Peaks.to_dict()``: ``flops_per_s``, ``bytes_per_s``, ``copy_bytes_per_s``,
        ``triad_bytes_per_s``, ``dtype``, ``ridge_point``), ``datasheet`` (the
        :mod:`gpuconcepts.hardware` row of a known GPU, else None), ``measurements``
        (``Measurement.to_dict()`` each) and ``wall_seconds``."""
        return {
            "device": self.device,
            "device_name": self.device_name,
            "quick": self.quick,
            "peaks": self.peaks.to_dict(),
            "datasheet": self.datasheet.to_dict() if self.datasheet else None,
            "measurements": [m.to_dict() for m in self.measurements],
            "wall_seconds": self.wall_seconds,
        }


def collect(
    device: str, quick: bool, progress: Callable[[str], None] | None = None
) -> ProfileResult:
    """Resolve the device, measure its peaks, run every workload (``kernels.profile_all``)."""
    from gpuconcepts.hardware import current_gpu
    from gpuconcepts.kernels import measure_peaks, profile_all
    from gpuconcepts.kernels.presets import load_presets

    say = progress or (lambda _line: None)
    start = time.perf_counter()
    resolved = resolve_device(device)
    name = device_name(resolved)
    say(f"profiling on {name}{' (quick)' if quick else ''}")

    def timed(line: str) -> None:
        say(f"[{time.perf_counter() - start:6.1f} s] {line}")

    presets = load_presets(resolved, quick)
    timed(f"peaks: STREAM copy/triad and a {presets['peaks']['gemm_n']}² GEMM")
    peaks = measure_peaks(resolved, quick, presets=presets)
    timed(format_peaks(peaks))
    measurements = profile_all(resolved, quick, peaks=peaks, progress=timed, presets=presets)
    timed("done")
    return ProfileResult(
        device=resolved,
        device_name=name,
        quick=quick,
        peaks=peaks,
        datasheet=current_gpu() if resolved == "cuda" else None,
        measurements=tuple(measurements),
        wall_seconds=time.perf_counter() - start,
    )


def format_measurements(measurements: Sequence[Measurement]) -> str:
    """The measurements as an aligned text table (times in ms, rates in G/s)."""
    rows = [
        [
            "workload",
            "ms (median ± IQR)",
            "GFLOP/s",
            "GB/s",
            "FLOP/B",
            "roofline ms",
            "measured/roofline",
            "bound",
        ]
    ]
    rows.extend(
        [
            m.workload,
            f"{m.seconds * 1e3:.3f} ± {m.iqr_seconds * 1e3:.2g}",
            f"{m.flops_per_s / 1e9:.1f}",
            f"{m.bytes_per_s / 1e9:.3g}",
            f"{m.intensity:.3g}",
            f"{m.predicted_seconds * 1e3:.3f}",
            f"{m.roofline_ratio:.2f}",
            m.bound,
        ]
        for m in measurements
    )
    return format_table(rows)


def format_peaks(peaks: Peaks) -> str:
    """One paragraph on the measured peaks."""
    parts = [
        f"compute {peaks.flops_per_s / 1e9:.1f} GFLOP/s ({peaks.dtype} GEMM)",
        f"bandwidth {peaks.bytes_per_s / 1e9:.1f} GB/s",
    ]
    if peaks.copy_bytes_per_s and peaks.triad_bytes_per_s:
        parts[-1] += (
            f" (copy {peaks.copy_bytes_per_s / 1e9:.1f}, triad {peaks.triad_bytes_per_s / 1e9:.1f})"
        )
    parts.append(f"ridge point {peaks.ridge_point:.1f} FLOP/B")
    return "peaks: " + "; ".join(parts)


def format_result(result: ProfileResult) -> str:
    """The text report: device, peaks, datasheet ridge points, the table, a footnote."""
    out = [
        f"device: {result.device_name}{' (quick sizes)' if result.quick else ''}",
        format_peaks(result.peaks),
    ]
    sheet = result.datasheet
    if sheet is not None:
        ridges = ", ".join(f"{k} {sheet.ridge_point(k):.0f}" for k in sheet.flops_per_s)
        out.append(f"datasheet ({sheet.name}): {sheet.bytes_per_s / 1e12:g} TB/s; ridge {ridges}")
    out += ["", format_measurements(result.measurements), ""]
    out.append(
        "roofline ms = max(FLOPs / peak FLOP/s, bytes / peak B/s) at the measured peaks; "
        "bytes are the formulas' minimal DRAM traffic."
    )
    out.append(f"wall time {result.wall_seconds:.1f} s")
    return "\n".join(out)


def run_profile(device: str, quick: bool, as_json: bool) -> int:
    """The CLI's ``gpuconcepts profile``: progress to stderr, table or JSON to stdout."""
    result = collect(device, quick, progress=_stderr)
    text = json.dumps(result.to_dict(), indent=2) if as_json else format_result(result)
    sys.stdout.write(text + "\n")
    return 0
