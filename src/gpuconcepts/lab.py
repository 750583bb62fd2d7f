"""The one place experiments get their measurements from: measured once, or read from a Run.

The profile and every claim ask a :class:`Lab` for a workload at some sizes. A live lab runs
the kernel the first time and hands back the same measurement every later time, so one build
times each kernel at each size once, and every page quotes the same number. A replaying lab
(:meth:`Lab.replay`) answers from a saved :class:`~gpuconcepts.run.Run` and never runs
anything: that is how ``gpuconcepts verify --run`` judges a file, and how the book shows runs
recorded on other machines. torch is imported only when a live lab measures.

>>> from gpuconcepts.measure import Measurement
>>> from gpuconcepts.roofline import Peaks
>>> saved = Measurement("mlp", "cpu", {"B": 4, "d_in": 8, "d_out": 8, "s": 4, "dtype": "float32"},
...                     (1e-6,), 256, 384)
>>> lab = Lab("cpu", Peaks("cpu", 1e11, 1e10, "float32"), repeats=3, cache_bytes=2**25,
...           free_bytes=2**34, recorded=[saved])
>>> lab.measure("mlp", B=4, d_in=8, d_out=8) is saved
True
>>> lab.measure("mlp", B=8, d_in=8, d_out=8)
Traceback (most recent call last):
...
gpuconcepts.errors.GpuConceptsError: this run holds no mlp measurement at B=8, d_in=8, d_out=8; it was recorded with other sizes (record it again with this version: gpuconcepts profile --save)
"""

# torch is imported inside functions on purpose (DESIGN rule 3).
# ruff: noqa: PLC0415

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.measure import Measurement
from gpuconcepts.roofline import Peaks

Progress = Callable[[str], None]
Fact = dict[str, Any]


def _key(workload: str, sizes: Mapping[str, object]) -> tuple[str, tuple[tuple[str, object], ...]]:
    return workload, tuple(sorted(sizes.items()))


class Lab:
    """Measurements by workload and sizes: each measured once (live) or read back (replay).

    Args:
        device: the resolved device (``"cpu"`` or ``"cuda"``) the measurements belong to.
        label: the device for people, e.g. ``"cpu (AMD EPYC 9R14, 2 threads)"``.
        dtype: the data type every kernel runs in (None: each kernel's default, see
            :func:`~gpuconcepts.kernels.default_dtype`).
        peaks: its measured peaks (kernels use the ridge point to decide whether to flush).
        repeats: timed repetitions of each kernel.
        cache_bytes, free_bytes: the device's last-level cache and free memory when the run
            was collected; experiments size themselves from these, never from the machine
            that happens to read a saved run.
        recorded: measurements of a saved run; when given, the lab only replays them.
        facts: non-timing results of a saved run (e.g. counted weights), by name.
        progress: called with a line of text before each kernel runs.
    """

    def __init__(
        self,
        device: str,
        peaks: Peaks,
        repeats: int,
        *,
        cache_bytes: int,
        free_bytes: int,
        recorded: Sequence[Measurement] | None = None,
        facts: Mapping[str, Fact] | None = None,
        label: str = "",
        dtype: str | None = None,
        progress: Progress | None = None,
    ) -> None:
        self.device = device
        self.label = label or device
        self.dtype = dtype
        self.peaks = peaks
        self.repeats = repeats
        self.cache_bytes = cache_bytes
        self.free_bytes = free_bytes
        self.replaying = recorded is not None
        self._say = progress or (lambda _line: None)
        self._recorded = tuple(recorded or ())
        self._measured: dict[tuple[str, tuple[tuple[str, object], ...]], Measurement] = {}
        self._facts: dict[str, Fact] = {k: dict(v) for k, v in (facts or {}).items()}

    def say(self, line: str) -> None:
        """Report progress (live labs only: a replay has nothing to wait for)."""
        if not self.replaying:
            self._say(line)

    @property
    def measurements(self) -> tuple[Measurement, ...]:
        """Every measurement handed out so far, each once, in the order first asked for."""
        return tuple(self._measured.values())

    @property
    def facts(self) -> dict[str, Fact]:
        """Every fact computed or replayed so far, by name."""
        return {k: dict(v) for k, v in self._facts.items()}

    def measure(self, workload: str, **sizes: object) -> Measurement:
        """The measurement of ``workload`` at ``sizes``: from the cache, the run, or the kernel."""
        key = _key(workload, sizes)
        if key in self._measured:
            return self._measured[key]
        if self.replaying:
            found = self._find(workload, sizes)
        else:
            from gpuconcepts.kernels.suite import KERNELS

            shown = ", ".join(f"{k}={v}" for k, v in sizes.items())
            self._say(f"{workload}: {shown}")
            chosen = {"dtype": self.dtype} if self.dtype else {}
            found = KERNELS[workload](
                self.device, self.peaks, repeats=self.repeats, **chosen, **sizes
            )
        self._measured[key] = found
        return found

    def _find(self, workload: str, sizes: Mapping[str, object]) -> Measurement:
        for m in self._recorded:
            if m.workload == workload and all(m.params.get(k) == v for k, v in sizes.items()):
                return m
        shown = ", ".join(f"{k}={v}" for k, v in sizes.items())
        raise GpuConceptsError(
            f"this run holds no {workload} measurement at {shown}; it was recorded with other "
            "sizes (record it again with this version: gpuconcepts profile --save)"
        )

    def fact(self, name: str, compute: Callable[[], Fact]) -> Fact:
        """A non-timing result (a count, a size) under ``name``: computed once, or replayed."""
        if name not in self._facts:
            if self.replaying:
                raise GpuConceptsError(f"this run holds no fact {name!r}; record it again")
            self._facts[name] = dict(compute())
        return dict(self._facts[name])
