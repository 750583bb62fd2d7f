"""The floors a kernel is timed beside: the latency of a minimal call, of a call after a flush,
and of one operation dispatched inside the framework. Each is a microbenchmark of its own
(:mod:`gpuconcepts.kernels.dispatch`), never one of the kernel's operations; timed in the same
rounds as the kernel, it slows down and speeds up with the machine as the kernel does.

Saved runs also hold references of the earlier paired roofs (a kernel's products run bare, its
lookup's random-access point, the activation's rate); they still load, and nothing reads them:
a ceiling is never timed from the kernel's own operations.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar

from gpuconcepts.errors import GpuConceptsError

if TYPE_CHECKING:
    from gpuconcepts.measurement import Measurement
    from gpuconcepts.roofline.peaks import Peaks

FLOORS = ("latency_seconds", "cold_latency_seconds", "op_seconds")
"""The :class:`~gpuconcepts.roofline.peaks.Peaks` fields a kernel may be timed beside: the
overhead roof's per-call and per-operation latencies."""


@dataclass(frozen=True)
class Reference:
    """One reference a measurement stores (:attr:`Measurement.references
    <gpuconcepts.measure.Measurement.references>`, under :attr:`key`): a floor of
    :class:`~gpuconcepts.roofline.peaks.Peaks` by its field's name (:data:`FLOORS`), or, in a
    run saved before 2026-12-06, a bare product (``product``, its rows, columns and depth), the
    activation's rate or a random-access point (``random``, table, row and rows per call).

    >>> Reference("product", (1024, 16, 32), flush=True).key
    'product 1024 16 32 flushed'
    >>> Reference.from_key("random 262144 16 65536")
    Reference(peak='random', sizes=(262144, 16, 65536), flush=False)
    >>> Reference.from_key("product 4 8")
    Traceback (most recent call last):
    ...
    gpuconcepts.errors.GpuConceptsError: reference 'product 4 8': a product names its rows, columns and depth (3 sizes), a random point its table, row and call (3), a floor or rate none
    """

    peak: str
    sizes: tuple[int, ...] = ()
    flush: bool = False

    SCALARS: ClassVar[tuple[str, ...]] = (*FLOORS, "activation_per_s")

    @property
    def key(self) -> str:
        """The name a measurement stores this reference under."""
        return " ".join([self.peak, *map(str, self.sizes), *(["flushed"] if self.flush else [])])

    @property
    def is_floor(self) -> bool:
        """Whether this reference is one of the overhead roof's floors (:data:`FLOORS`)."""
        return self.peak in FLOORS

    @classmethod
    def from_key(cls, key: str) -> Reference:
        """The reference a measurement stored under ``key``; a clear error for a key that
        names none."""
        words = key.split()
        flush = bool(words) and words[-1] == "flushed"
        words = words[:-1] if flush else words
        if not words or words[0] not in (*cls.SCALARS, "product", "random"):
            raise GpuConceptsError(
                f"reference {key!r} names no roof: it starts with one of "
                f"{', '.join((*cls.SCALARS, 'product', 'random'))}"
            )
        sizes = words[1:]
        wanted = 0 if words[0] in cls.SCALARS else 3
        if len(sizes) != wanted or not all(size.isdigit() and int(size) > 0 for size in sizes):
            raise GpuConceptsError(
                f"reference {key!r}: a product names its rows, columns and depth (3 sizes), a "
                "random point its table, row and call (3), a floor or rate none"
            )
        return cls(words[0], tuple(int(size) for size in sizes), flush)


def references_of(m: Measurement) -> tuple[Reference, ...]:
    """The floors ``m``'s overhead roof reads, to be timed beside it: a call's latency, a cold
    call's when it is timed after a flush, and an operation's when it dispatches more
    operations than Python calls. Nothing of the kernel's own.

    >>> from gpuconcepts.measure import Measurement
    >>> m = Measurement("rnn-module", "cpu", {"B": 2, "S": 8, "d_in": 4, "d_h": 4},
    ...                 (1e-4,), 1, 1, flush=True, ops=30, calls=2, steps=8)
    >>> [r.key for r in references_of(m)]
    ['latency_seconds', 'cold_latency_seconds', 'op_seconds']
    """
    wanted = [Reference("latency_seconds")]
    if m.flush:
        wanted.append(Reference("cold_latency_seconds"))
    if (m.ops or 0) > (m.calls or 0):
        wanted.append(Reference("op_seconds"))
    return tuple(wanted)


def paired_peaks(m: Measurement, peaks: Peaks) -> Peaks:
    """``peaks`` with the floors ``m`` was timed beside, each at its median over the rounds
    (paired with the kernel's median), in place of the ones measured with the peaks, and their
    rounds in place of those peaks' repetitions (so a page gives the spread of the floor it
    used). Every other reference a saved run holds is left unread.

    >>> from gpuconcepts.measure import Measurement
    >>> from gpuconcepts.roofline.peaks import Peaks
    >>> p = Peaks("cpu", 1e11, 1e10, "float32", latency_seconds=1e-6)
    >>> m = Measurement("mlp", "cpu", {}, (1.0, 1.0, 1.0), 1, 1, references={
    ...     "latency_seconds": (2e-6, 3e-6, 4e-6), "product 2 4 8": (9.0, 9.0, 9.0)})
    >>> paired_peaks(m, p).latency_seconds, paired_peaks(m, p).ceiling_seconds
    (3e-06, {'latency_seconds': (2e-06, 3e-06, 4e-06)})
    """
    rounds = {
        key: tuple(values)
        for key, values in m.references.items()
        if Reference.from_key(key).is_floor
    }
    if not rounds:
        return peaks
    floors: dict[str, Any] = {key: float(statistics.median(v)) for key, v in rounds.items()}
    return replace(peaks, **floors, ceiling_seconds={**peaks.ceiling_seconds, **rounds})
