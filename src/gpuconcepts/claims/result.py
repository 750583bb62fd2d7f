"""What a claim check returns: the claim, its prediction, the measurement and the verdict.

Plain frozen values, separate from the experiments that produce them (as
``torch.utils.benchmark`` keeps ``Measurement`` apart from ``Timer``), so the verdict logic
and the renderers can be tested without running a kernel.

>>> result = ClaimResult(
...     key="demo", architecture="MLP", claim="bigger batches run faster per sample",
...     prediction="intensity rises from 0.5 to 64 FLOP/byte", measured="4.1x more FLOP/s",
...     threshold="at least 2x", verdict=True, device="cpu (demo)")
>>> result.status
'holds'
>>> sorted(result.to_dict())[:5]
['architecture', 'claim', 'device', 'key', 'measured']
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.measure import Measurement, Peaks

SeriesRole = Literal["measured", "predicted", "threshold"]
Status = Literal["holds", "does not hold", "not visible here"]


@dataclass(frozen=True)
class Series:
    """One line of a plot: ``x`` against ``y``, measured or predicted.

    >>> Series("time", (1.0, 2.0), (3.0, 4.0)).role
    'measured'
    """

    label: str
    x: tuple[float, ...]
    y: tuple[float, ...]
    role: SeriesRole = "measured"

    def __post_init__(self) -> None:
        if len(self.x) != len(self.y):
            raise GpuConceptsError(
                f"series {self.label!r}: x and y differ in length ({len(self.x)} vs {len(self.y)})"
            )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"label": self.label, "x": list(self.x), "y": list(self.y), "role": self.role}


@dataclass(frozen=True)
class PlotSpec:
    """What to draw for a claim; :func:`gpuconcepts.claims.plots.draw` turns it into a figure.

    With ``categories`` the plot is a bar chart: each series gives one bar per category
    (its ``x`` are the category positions 0, 1, ...).
    """

    title: str
    x_label: str
    y_label: str
    series: tuple[Series, ...]
    log_x: bool = True
    log_y: bool = True
    hlines: tuple[tuple[str, float], ...] = ()
    vlines: tuple[tuple[str, float], ...] = ()
    categories: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "title": self.title,
            "x_label": self.x_label,
            "y_label": self.y_label,
            "log_x": self.log_x,
            "log_y": self.log_y,
            "series": [s.to_dict() for s in self.series],
            "hlines": [list(h) for h in self.hlines],
            "vlines": [list(v) for v in self.vlines],
            "categories": list(self.categories),
        }


@dataclass(frozen=True)
class ClaimResult:
    """One claim of the post, checked on one device.

    ``verdict`` is computed by comparing the measurement with ``threshold``, a rule fixed
    in :mod:`gpuconcepts.claims.thresholds` before any run. ``visible`` is False when this
    device cannot show the effect at all (``reason`` says why, from the device or the data);
    the verdict is then False and the status reads "not visible here", not "does not hold".
    """

    key: str
    architecture: str
    claim: str
    prediction: str
    measured: str
    threshold: str
    verdict: bool
    device: str
    visible: bool = True
    reason: str = ""
    values: Mapping[str, float | int | bool | str | None] = field(default_factory=dict)
    plot: PlotSpec | None = None

    @property
    def status(self) -> Status:
        """One of: holds, does not hold, not visible here."""
        if not self.visible:
            return "not visible here"
        return "holds" if self.verdict else "does not hold"

    def number(self, name: str) -> float:
        """A numeric entry of ``values`` as a float, with a clear error when it is not one.

        >>> ClaimResult("k", "MLP", "c", "p", "m", "t", True, "cpu", values={"gain": 4}).number("gain")
        4.0
        """
        value = self.values.get(name)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise GpuConceptsError(
                f"claim {self.key!r}: values[{name!r}] is {value!r}, not a number"
            )
        return float(value)

    def to_dict(self, *, with_plot: bool = True) -> dict[str, Any]:
        """JSON-ready form: every field, plus ``status``; ``verdict`` is a real boolean."""
        record: dict[str, Any] = {
            "key": self.key,
            "architecture": self.architecture,
            "claim": self.claim,
            "prediction": self.prediction,
            "measured": self.measured,
            "threshold": self.threshold,
            "verdict": bool(self.verdict),
            "status": self.status,
            "visible": bool(self.visible),
            "reason": self.reason,
            "device": self.device,
            "values": dict(self.values),
        }
        if with_plot:
            record["plot"] = self.plot.to_dict() if self.plot is not None else None
        return record


@dataclass(frozen=True)
class ClaimsReport:
    """Every claim checked on one device in one run, with the measurements and peaks behind them.

    >>> from gpuconcepts.measure import Peaks
    >>> peaks = Peaks(device="cpu", flops_per_s=1e11, bytes_per_s=1e10, dtype="float32")
    >>> report = ClaimsReport("cpu", "cpu (demo)", True, peaks, (), (), {}, 0.5)
    >>> report.counts
    {'holds': 0, 'does not hold': 0, 'not visible here': 0}
    """

    device: str
    device_label: str
    quick: bool
    peaks: Peaks
    results: tuple[ClaimResult, ...]
    measurements: tuple[Measurement, ...]
    timings: Mapping[str, float]
    seconds: float

    @property
    def counts(self) -> dict[Status, int]:
        """How many claims hold, do not hold, or are not visible on this device."""
        counts: dict[Status, int] = {"holds": 0, "does not hold": 0, "not visible here": 0}
        for result in self.results:
            counts[result.status] += 1
        return counts

    def result(self, key: str) -> ClaimResult:
        """The result with this key (e.g. ``"kv-cache-exact"``)."""
        for result in self.results:
            if result.key == key:
                return result
        keys = ", ".join(r.key for r in self.results)
        raise GpuConceptsError(f"no claim {key!r} in this report; it has {keys}")

    def by_architecture(self) -> dict[str, list[ClaimResult]]:
        """Results grouped by architecture, in the order they ran."""
        groups: dict[str, list[ClaimResult]] = {}
        for result in self.results:
            groups.setdefault(result.architecture, []).append(result)
        return groups

    def to_dict(self, *, with_plots: bool = True) -> dict[str, Any]:
        """JSON-ready form: device, peaks, counts, timings and the list of ``claims``."""
        return {
            "device": self.device,
            "device_label": self.device_label,
            "quick": self.quick,
            "peaks": self.peaks.to_dict(),
            "counts": dict(self.counts),
            "seconds": self.seconds,
            "timings": dict(self.timings),
            "claims": [r.to_dict(with_plot=with_plots) for r in self.results],
            "measurements": [m.to_dict() for m in self.measurements],
        }
