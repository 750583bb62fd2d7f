"""The roofs of a kernel's own kind, timed in the same rounds as the kernel.

A sweep point or a floor measured with the peaks ran minutes before the kernels it bounds. If
the machine got busier or quieter in between, a kernel and its roof were timed in two
different machines, and its share of the roof says more about the load than about the kernel
(2026-12-04, a quick run on the 2-core CPU: 64 of 68 kernels explained by their roofs while
the load held steady, 13 of 68 when it rose half-way through). So each kernel is timed beside
what its own roofs read (:func:`~gpuconcepts.roofline.references_of`: the floors of its
calls, its products run bare, the activation's rate, its lookup's random-access point), every
round timing each of them once in a shuffled order (:class:`Beside`), and its measurement
keeps their values round by round (:attr:`Measurement.references
<gpuconcepts.measure.Measurement.references>`).

>>> from gpuconcepts.kernels.mlp import linear_kernel
>>> from gpuconcepts.roofline import Peaks
>>> peaks = Peaks("cpu", 1e11, 1e10, "float32")
>>> beside = Beside([linear_kernel("cpu", peaks, B=2, d_in=8, d_out=8)], peaks)
>>> beside.more(3)
>>> m, = beside.measurements()
>>> sorted(m.references)
['cold_latency_seconds', 'latency_seconds', 'product 1 16 16', 'product 2 8 8 flushed']
>>> [len(values) for values in m.references.values()]
[3, 3, 3, 3]
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import torch

from gpuconcepts.kernels._common import Kernel, tensor
from gpuconcepts.kernels.dispatch import floor_calls, op_chain
from gpuconcepts.kernels.peaks import (
    ACTIVATION_ELEMENTS,
    activation_call,
    gather_call,
    linear_call,
)
from gpuconcepts.measure import Measurement, Rounds
from gpuconcepts.roofline import Peaks, Reference, references_of


@dataclass(frozen=True)
class _Call:
    """One call a reference times, under the settings of the kernel it stands beside (TF32
    matmuls for a tf32 kernel)."""

    fn: Callable[[], object]
    flush: bool
    kernel: Kernel

    @contextlib.contextmanager
    def settings(self) -> Iterator[None]:
        with self.kernel.settings():
            yield


@dataclass(frozen=True)
class _Timed:
    """A reference as timed: its calls, and how the seconds of one repetition of each become
    its value (in the unit of the peak it stands for)."""

    calls: tuple[_Call, ...]
    value: Callable[[Sequence[float]], float]


def _timed(ref: Reference, kernel: Kernel) -> _Timed:
    """The calls that measure ``ref`` beside ``kernel``, built as the peaks build them."""
    device, dtype = kernel.device, kernel.dtype
    if ref.peak in ("latency_seconds", "cold_latency_seconds") or (
        ref.peak == "op_seconds" and device == "cuda"  # a GPU's operation floor is its launch
    ):
        cold = ref.peak == "cold_latency_seconds"
        calls = tuple(_Call(fn, cold, kernel) for fn in floor_calls(device))
        return _Timed(calls, min)  # the floor is the cheaper of its two calls
    if ref.peak == "op_seconds":
        chain, ops = op_chain()
        return _Timed((_Call(chain, False, kernel),), lambda t: t[0] / ops)
    if ref.peak == "activation_per_s":
        call = _Call(activation_call(device, dtype), False, kernel)
        return _Timed((call,), lambda t: ACTIVATION_ELEMENTS / t[0])
    if ref.peak == "product":
        rows, columns, depth = ref.sizes
        weight = tensor((columns, depth), dtype, device, seed=2)
        call = _Call(linear_call(device, dtype, rows, weight), ref.flush, kernel)
        return _Timed((call,), lambda t: t[0])
    table_bytes, row, per_call = ref.sizes  # "random": the sweep's point
    store = torch.ones(table_bytes // 4, dtype=torch.float32, device=device)
    generator = torch.Generator(device="cpu").manual_seed(7)
    gather, lines = gather_call(store, row, per_call, generator)
    return _Timed((_Call(gather, True, kernel),), lambda t: lines / t[0])


class Beside:
    """Kernels and the references of their own roofs, timed in interleaved rounds.

    Each round times every kernel and every reference call once, in a shuffled order
    (:class:`~gpuconcepts.measure.Rounds`); a reference that several kernels read (the latency
    floor, a product they share) is timed once a round for all of them. :meth:`measurements`
    gives each kernel's times with its references' values in the same rounds.
    """

    def __init__(self, kernels: Sequence[Kernel], peaks: Peaks, *, seed: int = 0) -> None:
        self.kernels = tuple(kernels)
        self._wanted: list[tuple[Reference, ...]] = []
        timed: dict[tuple[str, str], _Timed] = {}
        for kernel in self.kernels:
            wanted = references_of(kernel.measurement((1.0,)), peaks)
            self._wanted.append(wanted)
            for ref in wanted:
                if (ref.key, kernel.dtype) not in timed:
                    timed[(ref.key, kernel.dtype)] = _timed(ref, kernel)
        self._timed = timed
        calls = [call for reference in timed.values() for call in reference.calls]
        device = self.kernels[0].device
        self._rounds = Rounds([*self.kernels, *calls], device, seed=seed)

    @property
    def count(self) -> int:
        """Rounds timed so far."""
        return self._rounds.count

    def more(self, rounds: int = 1) -> None:
        """Time ``rounds`` more rounds."""
        self._rounds.more(rounds)

    def measurements(self, group: str = "") -> tuple[Measurement, ...]:
        """Each kernel's measurement so far, its references' values round by round beside it
        (``group``: the comparison they were timed in, "" for a kernel timed alone)."""
        times = self._rounds.times
        values: dict[tuple[str, str], tuple[float, ...]] = {}
        position = len(self.kernels)
        for key, reference in self._timed.items():
            own = times[position : position + len(reference.calls)]
            position += len(reference.calls)
            values[key] = tuple(reference.value(round_) for round_ in zip(*own, strict=True))
        return tuple(
            kernel.measurement(
                times[i],
                group=group,
                references={ref.key: values[(ref.key, kernel.dtype)] for ref in wanted},
            )
            for i, (kernel, wanted) in enumerate(zip(self.kernels, self._wanted, strict=True))
        )
