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
>>> ClaimResult.from_dict(result.to_dict()) == result
True
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from gpuconcepts.errors import GpuConceptsError

SeriesRole = Literal["measured", "predicted", "threshold"]


def _field(record: Mapping[str, Any], name: str) -> Any:
    """``record[name]``, or a :class:`GpuConceptsError` naming the missing field."""
    if not isinstance(record, Mapping):
        raise GpuConceptsError(f"expected an object, got {type(record).__name__}")
    if name not in record:
        raise GpuConceptsError(f"missing field {name!r}")
    return record[name]


Status = Literal["holds", "does not hold", "not visible here"]


@dataclass(frozen=True)
class Series:
    """One line of a plot: ``x`` against ``y``, measured or predicted.

    A measured series may carry its spread: ``low`` and ``high`` give, for each point, the
    ends of its interval (for a time, the first and third quartiles of the repetitions), drawn
    as error bars. Both or neither, each as long as ``y``.

    >>> Series("time", (1.0, 2.0), (3.0, 4.0)).role
    'measured'
    >>> Series("time", (1.0, 2.0), (3.0, 4.0), low=(2.5, 3.5), high=(3.5, 5.0)).to_dict()["low"]
    [2.5, 3.5]
    """

    label: str
    x: tuple[float, ...]
    y: tuple[float, ...]
    role: SeriesRole = "measured"
    low: tuple[float, ...] | None = None
    high: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        if len(self.x) != len(self.y):
            raise GpuConceptsError(
                f"series {self.label!r}: x and y differ in length ({len(self.x)} vs {len(self.y)})"
            )
        if (self.low is None) != (self.high is None):
            raise GpuConceptsError(
                f"series {self.label!r}: give both low and high (the spread's two ends) or neither"
            )
        if self.low is None or self.high is None:
            return
        for name, ends in (("low", self.low), ("high", self.high)):
            if len(ends) != len(self.y):
                raise GpuConceptsError(
                    f"series {self.label!r}: {name} and y differ in length "
                    f"({len(ends)} vs {len(self.y)})"
                )
        for i, (lo, y, hi) in enumerate(zip(self.low, self.y, self.high, strict=True)):
            slack = 1e-9 * abs(y)  # quartiles computed apart from the median may differ by an ulp
            if not lo - slack <= y <= hi + slack:
                raise GpuConceptsError(
                    f"series {self.label!r}: point {i} must lie within its spread "
                    f"(low ≤ y ≤ high); got {lo!r} ≤ {y!r} ≤ {hi!r}"
                )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (``low`` and ``high`` only when the series has a spread)."""
        record: dict[str, Any] = {
            "label": self.label,
            "x": list(self.x),
            "y": list(self.y),
            "role": self.role,
        }
        if self.low is not None and self.high is not None:
            record["low"], record["high"] = list(self.low), list(self.high)
        return record

    @classmethod
    def from_dict(cls, record: Mapping[str, Any]) -> Series:
        """The inverse of :meth:`to_dict`."""
        label = str(_field(record, "label"))
        low, high = record.get("low"), record.get("high")  # absent from a series without spread
        return cls(
            label=label,
            x=tuple(_field(record, "x")),
            y=tuple(_field(record, "y")),
            role=_field(record, "role"),
            low=None if low is None else tuple(low),
            high=None if high is None else tuple(high),
        )


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

    @classmethod
    def from_dict(cls, record: Mapping[str, Any]) -> PlotSpec:
        """The inverse of :meth:`to_dict`."""
        return cls(
            title=str(_field(record, "title")),
            x_label=str(_field(record, "x_label")),
            y_label=str(_field(record, "y_label")),
            series=tuple(Series.from_dict(s) for s in _field(record, "series")),
            log_x=bool(_field(record, "log_x")),
            log_y=bool(_field(record, "log_y")),
            hlines=tuple((str(a), float(b)) for a, b in _field(record, "hlines")),
            vlines=tuple((str(a), float(b)) for a, b in _field(record, "vlines")),
            categories=tuple(_field(record, "categories")),
        )


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

    @classmethod
    def from_dict(cls, record: Mapping[str, Any]) -> ClaimResult:
        """The inverse of :meth:`to_dict` (``status`` is derived again, not read).

        >>> r = ClaimResult("k", "MLP", "c", "p", "m", "t", True, "cpu", values={"gain": 4})
        >>> ClaimResult.from_dict(r.to_dict()) == r
        True
        """
        plot = record.get("plot")
        return cls(
            key=str(_field(record, "key")),
            architecture=str(_field(record, "architecture")),
            claim=str(_field(record, "claim")),
            prediction=str(_field(record, "prediction")),
            measured=str(_field(record, "measured")),
            threshold=str(_field(record, "threshold")),
            verdict=bool(_field(record, "verdict")),
            device=str(_field(record, "device")),
            visible=bool(record.get("visible", True)),
            reason=str(record.get("reason", "")),
            values=dict(record.get("values", {})),
            plot=PlotSpec.from_dict(plot) if plot is not None else None,
        )
