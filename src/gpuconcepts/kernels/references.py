"""The floors of a kernel's overhead roof, timed in the same rounds as the kernel.

A floor measured with the peaks ran minutes before the kernels it bounds; if the machine got
busier or quieter in between, a kernel and its floor were timed on two different machines
(2026-12-04, a quick run on the 2-core CPU: 64 of 68 kernels placed while the load held steady,
13 of 68 when it rose half-way through). So each kernel is timed beside the floors its overhead
roof reads (:func:`~gpuconcepts.roofline.references_of`: a minimal call's latency, a cold
call's, an operation's), every round timing each of them once in a shuffled order
(:class:`Beside`), and its measurement keeps their values round by round
(:attr:`Measurement.references <gpuconcepts.measure.Measurement.references>`). Each floor is a
microbenchmark of its own, never one of the kernel's operations: its products, its gathers and
its activation are read from the sweeps measured once with the peaks, and only as a diagnosis.

>>> from gpuconcepts.kernels.mlp import linear_kernel
>>> from gpuconcepts.roofline import Peaks
>>> peaks = Peaks("cpu", 1e11, 1e10, "float32")
>>> beside = Beside([linear_kernel("cpu", peaks, B=2, d_in=8, d_out=8)])
>>> beside.more(3)
>>> m, = beside.measurements()
>>> sorted(m.references)
['cold_latency_seconds', 'latency_seconds']
>>> [len(values) for values in m.references.values()]
[3, 3]
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.kernels._common import Kernel
from gpuconcepts.kernels.dispatch import floor_calls, op_chain
from gpuconcepts.measure import Measurement, Rounds
from gpuconcepts.roofline import FLOORS, Reference, references_of


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
    device = kernel.device
    if ref.peak in ("latency_seconds", "cold_latency_seconds") or (
        ref.peak == "op_seconds" and device == "cuda"  # a GPU's operation floor is its launch
    ):
        cold = ref.peak == "cold_latency_seconds"
        calls = tuple(_Call(fn, cold, kernel) for fn in floor_calls(device))
        return _Timed(calls, min)  # the floor is the cheaper of its two calls
    if ref.peak == "op_seconds":
        chain, ops = op_chain()
        return _Timed((_Call(chain, False, kernel),), lambda t: t[0] / ops)
    raise GpuConceptsError(
        f"reference {ref.key!r}: only the overhead roof's floors are timed beside a kernel "
        f"({', '.join(FLOORS)}); a ceiling is never timed from the kernel's own operations"
    )


class Beside:
    """Kernels and the floors of their overhead roofs, timed in interleaved rounds.

    Each round times every kernel and every reference call once, in a shuffled order
    (:class:`~gpuconcepts.measure.Rounds`); a reference that several kernels read (the latency
    floor) is timed once a round for all of them. :meth:`measurements`
    gives each kernel's times with its references' values in the same rounds.
    """

    def __init__(self, kernels: Sequence[Kernel], *, seed: int = 0) -> None:
        self.kernels = tuple(kernels)
        self._wanted: list[tuple[Reference, ...]] = []
        timed: dict[tuple[str, str], _Timed] = {}
        for kernel in self.kernels:
            wanted = references_of(kernel.measurement((1.0,)))
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

    def new_block(self) -> None:
        """Start an independent block of rounds (:meth:`Rounds.new_block
        <gpuconcepts.measure.Rounds.new_block>`)."""
        self._rounds.new_block()

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
