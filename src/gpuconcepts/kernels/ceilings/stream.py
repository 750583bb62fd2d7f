"""DRAM's roof: STREAM-like copy and triad on arrays far beyond every cache.

Copy counts the bytes read and the bytes written (``formulas.stream_copy_bytes``), as STREAM
does. Each rate is taken at the median repetition, the statistic the kernels a ceiling bounds
are read by (issue 45: a best repetition, raised whenever a kernel beat it, read 1.45x
STREAM's triad on a 2-core EPYC).

>>> rate = copy_bandwidth("cpu", array_bytes=4 * 1024**2, repeats=2)
>>> rate > 0
True
"""

from __future__ import annotations

import statistics

import torch

from gpuconcepts import formulas
from gpuconcepts.kernels._common import Kernel, check_sizes, prepare
from gpuconcepts.measure import COLUMNS, stream_rows, time_function
from gpuconcepts.roofline import Peaks


def copy_bandwidth(device: str, *, array_bytes: int, repeats: int = 5) -> float:
    """Bytes/s of ``dst.copy_(src)`` on float32 arrays of ``array_bytes`` (read + write)."""
    rows = stream_rows(array_bytes, 4)
    src = torch.ones((rows, COLUMNS), dtype=torch.float32, device=device)
    dst = torch.zeros_like(src)
    times = time_function(lambda: dst.copy_(src), device, repeats=repeats)
    nbytes = formulas.stream_copy_bytes(N=rows, d=COLUMNS, s=src.element_size())
    return float(nbytes) / statistics.median(times)


def triad_kernel(device: str, peaks: Peaks | None = None, *, N: int, d: int = COLUMNS) -> Kernel:
    """The triad ``a = b + 3·c`` on N × d float32 arrays (two reads, one write per element):
    workload ``peak-triad``, the reference of the DRAM roof.

    A claim that reads a memory-bound kernel against DRAM's bandwidth times this kernel in the
    same rounds (:meth:`~gpuconcepts.lab.Lab.compare`), so that load on the machine slows the
    roof and the kernel alike.
    """
    check_sizes("peaks.triad", N=N, d=d)
    b = torch.ones((N, d), dtype=torch.float32, device=device)
    c = torch.full_like(b, 2.0)
    a = torch.zeros_like(b)
    return prepare(
        "peak-triad",
        device,
        peaks,
        lambda: torch.add(b, c, alpha=3.0, out=a),
        params={"N": N, "d": d, "s": a.element_size()},
        dtype="float32",
        flush=False,  # arrays of at least 4x the last-level cache: DRAM serves them anyway
    )


def triad_bandwidth(
    device: str,
    *,
    array_bytes: int,
    repeats: int = 5,
    keep: dict[str, tuple[float, ...]] | None = None,
) -> float:
    """Bytes/s of the triad ``a = b + 3·c`` (two reads, one write per element, as STREAM
    counts it), at its median repetition: DRAM's roof. ``keep``, when given, receives its
    seconds repetition by repetition under ``bytes_per_s``, the roof's key among
    :attr:`Peaks.ceiling_seconds <gpuconcepts.roofline.Peaks.ceiling_seconds>`."""
    kernel = triad_kernel(device, N=stream_rows(array_bytes))
    seconds = kernel.time(repeats).raw_seconds
    if keep is not None:
        keep["bytes_per_s"] = tuple(seconds)
    return kernel.bytes / statistics.median(seconds)
