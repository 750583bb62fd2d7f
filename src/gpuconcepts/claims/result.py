"""What a claim check returns: the claim, its two-sided test and the verdict.

Plain frozen values, separate from the experiments that produce them (as
``torch.utils.benchmark`` keeps ``Measurement`` apart from ``Timer``), so the verdict logic
and the renderers can be tested without running a kernel.

>>> result = example()
>>> result.verdict, result.test.region_text()
('holds', 'FLOP/s gain ≥ 2')
>>> from gpuconcepts.records import from_record
>>> from_record(ClaimRecord, result.to_dict()).result() == result
True
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar, Literal

from gpuconcepts.claims.registry import Ledger, ledger
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.records import ANY_SIGN, to_record
from gpuconcepts.units import measured_or_dash, number

SeriesRole = Literal["measured", "predicted", "threshold"]
Points = Annotated[tuple[int | float, ...], ANY_SIGN]
"""A plot's coordinates: any sign (an exponent, a difference); a whole number stays whole."""


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
    x: Points
    y: Points
    role: SeriesRole = "measured"
    low: Points | None = None
    high: Points | None = None

    OPTIONAL_KEYS: ClassVar[frozenset[str]] = frozenset({"low", "high"})
    """Written only for a series with a spread."""

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
        return to_record(self)


@dataclass(frozen=True)
class PlotSpec:
    """What to draw for a claim; :func:`gpuconcepts.render.plots.claims.draw` turns it into a figure.

    With ``categories`` the plot is a bar chart: each series gives one bar per category
    (its ``x`` are the category positions 0, 1, ...).
    """

    title: str
    x_label: str
    y_label: str
    series: tuple[Series, ...]
    log_x: bool = True
    log_y: bool = True
    hlines: tuple[tuple[str, Annotated[float, ANY_SIGN]], ...] = ()
    vlines: tuple[tuple[str, Annotated[float, ANY_SIGN]], ...] = ()
    categories: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return to_record(self)


Verdict = Literal["holds", "fails", "undecided", "not visible"]
VERDICTS: tuple[Verdict, ...] = ("holds", "fails", "undecided", "not visible")
"""Every verdict a claim can have, in the order the summaries count them. "undecided": after
its time budget the measured interval still straddles an edge of the pass region, so noise
could decide it either way; noise alone never makes a claim fail."""


JsonValue = float | int | bool | str | None


def _json_value(value: JsonValue) -> JsonValue:
    """A value JSON can hold: a non-finite float ("never", an infinity, unmeasured) becomes
    None, as does an open bound already."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _stored(x: float | None) -> float | None:
    """A number of a test as a stored claim holds it (see :data:`Bound`)."""
    return x if x is None or math.isfinite(x) else None


def _one_nan(x: float) -> float:
    """``math.nan`` itself for any nan (see :meth:`TwoSided.__post_init__`)."""
    return math.nan if math.isnan(x) else x


def _short(x: float) -> str:
    """A claim's value for people: three significant digits (the values are ratios,
    exponents and fractions; the detail text shows the times behind them), "—" where the
    run measured none (see :func:`~gpuconcepts.units.measured_or_dash`)."""
    return measured_or_dash(x, number)


@dataclass(frozen=True)
class TwoSided:
    """A claim as a test: the prediction, the alternative it must rule out, the pass region,
    and the measured value with its interval.

    The pass region ``low ≤ quantity ≤ high`` (either end may be open: None) holds the
    prediction and leaves the alternative out. The claim holds only when the whole measured
    interval lies inside it. When, at this device's peaks and sizes, the alternative falls
    inside the region or the prediction outside it, no measurement here could tell the two
    apart: the claim is "not visible".

    >>> t = TwoSided("sequential ÷ random bandwidth", predicted=4.0,
    ...              alternative="random rows stream as fast as consecutive ones",
    ...              alternative_value=1.0, low=2.0, high=None,
    ...              measured=3.1, interval=(2.8, 3.4))
    >>> t.region_text(), t.inside, t.distinguishes
    ('sequential ÷ random bandwidth ≥ 2', True, True)
    >>> TwoSided("r", 4.0, "one", 1.0, 2.0, None, 2.5, (1.9, 2.7)).inside
    False
    """

    quantity: str
    predicted: float
    alternative: str
    alternative_value: float
    low: float | None
    high: float | None
    measured: float
    interval: tuple[float, float]

    def __post_init__(self) -> None:
        if self.low is None and self.high is None:
            raise GpuConceptsError(f"{self.quantity}: the pass region needs at least one bound")
        # "not measured" is one value: nan is unequal to itself but tuples compare by identity
        # first, so one shared nan lets a run read back from its file equal the run it was
        object.__setattr__(self, "measured", _one_nan(self.measured))
        object.__setattr__(self, "interval", tuple(_one_nan(x) for x in self.interval))
        if self.low is not None and self.high is not None and self.low > self.high:
            raise GpuConceptsError(
                f"{self.quantity}: the pass region needs low ≤ high; got {self.low}, {self.high}"
            )
        low, high = self.interval
        # nan: unmeasured; an end read back as nan was an infinity JSON could not hold (an
        # open end, "never"), which holds any value on its side
        above = math.isnan(low) or low <= self.measured
        below = math.isnan(high) or self.measured <= high
        if not math.isnan(self.measured) and not (above and below):
            raise GpuConceptsError(
                f"{self.quantity}: the interval [{number(low)}, {number(high)}] must hold the measured "
                f"value {number(self.measured)}"
            )

    def contains(self, x: float) -> bool:
        """True when ``x`` lies in the pass region (ends included)."""
        return (self.low is None or x >= self.low) and (self.high is None or x <= self.high)

    @property
    def inside(self) -> bool:
        """True when the whole measured interval lies in the pass region."""
        return self.contains(self.interval[0]) and self.contains(self.interval[1])

    @property
    def outside(self) -> bool:
        """True when the whole measured interval lies outside the pass region (on one side)."""
        low, high = self.interval
        return (self.low is not None and high < self.low) or (
            self.high is not None and low > self.high
        )

    @property
    def anomalous(self) -> bool:
        """True when the whole interval lies beyond the alternative, on the side away from the
        prediction: the measurement contradicts the model more than the alternative does
        (e.g. consecutive rows slower than random ones), which is a faulty measurement or a
        missing piece of physics, never a verdict on the claim.

        >>> TwoSided("r", 4.0, "no gap", 1.0, 2.0, None, 0.2, (0.1, 0.3)).anomalous
        True
        >>> TwoSided("r", 4.0, "no gap", 1.0, 2.0, None, 0.9, (0.8, 1.1)).anomalous
        False
        """
        low, high = self.interval
        if self.alternative_value < self.predicted:
            return high < self.alternative_value
        if self.alternative_value > self.predicted:
            return low > self.alternative_value
        return False

    def edge_crossed(self) -> float | None:
        """The edge of the pass region the interval straddles (None when it straddles none)."""
        low, high = self.interval
        for edge in (self.low, self.high):
            if edge is not None and low < edge < high:
                return edge
        return None

    @property
    def distinguishes(self) -> bool:
        """False when the test cannot tell the prediction from the alternative on this device:
        the alternative falls inside the pass region, or the prediction outside it."""
        return self.contains(self.predicted) and not self.contains(self.alternative_value)

    def region_text(self) -> str:
        """The pass region for people, e.g. ``"ratio ≥ 2"`` or ``"1.7 ≤ exponent ≤ 2.3"``."""
        if self.low is not None and self.high is not None and self.low != self.high:
            return f"{_short(self.low)} ≤ {self.quantity} ≤ {_short(self.high)}"
        return f"{self.quantity} {self.bounds_text()}"

    def bounds_text(self) -> str:
        """The pass region's bounds alone, e.g. ``"≥ 2"`` or ``"0.2 to 1.5"``."""
        if self.low is not None and self.high is not None:
            if self.low == self.high:
                return f"= {_short(self.low)}"
            return f"{_short(self.low)} to {_short(self.high)}"
        if self.low is not None:
            return f"≥ {_short(self.low)}"
        return f"≤ {_short(self.high)}"  # type: ignore[arg-type]  # one bound is set

    def interval_text(self) -> str:
        """The measured interval, e.g. ``"[2.8, 3.4]"``."""
        low, high = self.interval
        return f"[{_short(low)}, {_short(high)}]"


@dataclass(frozen=True)
class ClaimResult:
    """One claim of the post, checked on one device.

    ``test`` states the claim as a :class:`TwoSided` test; its pass region is fixed before
    any run (the constants of :mod:`gpuconcepts.claims.thresholds`). ``gates`` are further
    conditions, each a sentence and whether the data met it. ``visible`` is False when this
    device cannot show the effect at all, ``reason`` saying why (from the device or the data).
    ``anomalies`` are results that contradict physics beyond the noise, each a sentence with
    its numbers (besides the test's own, see :attr:`TwoSided.anomalous`): the kernels were
    measured again, the anomaly persisted, and it is shown, never read as agreement.
    :attr:`verdict` is computed from these, never stored.
    """

    key: str
    architecture: str
    claim: str
    prediction: str
    test: TwoSided
    device: str
    detail: str = ""
    visible: bool = True
    reason: str = ""
    gates: tuple[tuple[str, bool], ...] = ()
    anomalies: tuple[str, ...] = ()
    values: Mapping[str, float | int | bool | str | None] = field(default_factory=dict)
    plot: PlotSpec | None = None

    def __post_init__(self) -> None:
        # a value JSON cannot hold ("never", an infinity) is stored as None, as a saved run has it
        object.__setattr__(self, "values", {k: _json_value(v) for k, v in self.values.items()})

    @property
    def anomaly(self) -> tuple[str, ...]:
        """Every anomaly of this result, each a sentence with its numbers (empty: none)."""
        test = self.test
        own = (
            f"{test.quantity} measured {test.interval_text()}, beyond the alternative "
            f"({test.alternative}: {_short(test.alternative_value)}) on the side away from the "
            f"prediction ({_short(test.predicted)})"
        )
        return ((own,) if test.anomalous else ()) + self.anomalies

    @property
    def anomalous(self) -> bool:
        """True when the result holds an anomaly (see :attr:`anomaly`)."""
        return bool(self.anomaly)

    @property
    def verdict(self) -> Verdict:
        """ "not visible" when the device or the test cannot show the effect; "holds" when
        the whole measured interval lies in the pass region and every gate is met; "fails"
        when it lies wholly outside, a gate is unmet, or the result is an anomaly; else
        (the interval straddles an edge of the region) "undecided"."""
        if not self.visible or not self.test.distinguishes:
            return "not visible"
        if self.anomalous or not all(met for _, met in self.gates):
            return "fails"
        if self.test.inside:
            return "holds"
        if self.test.outside:
            return "fails"
        return "undecided"

    @property
    def decided(self) -> bool:
        """False while noise could still decide the verdict (it is "undecided")."""
        return self.verdict != "undecided"

    @property
    def why(self) -> str:
        """Why the verdict is not "holds", in one sentence computed from the data ("" when
        it holds)."""
        test = self.test
        if not self.visible:
            return self.reason
        if not test.contains(test.predicted):
            return (
                f"the prediction here ({test.quantity} = {_short(test.predicted)}) falls outside "
                f"the pass region {test.region_text()}: this device cannot show the effect"
            )
        if not test.distinguishes:
            return (
                f"the alternative ({test.alternative}: {_short(test.alternative_value)}) falls "
                f"inside the pass region {test.region_text()}, so no measurement here could "
                "tell the two apart"
            )
        if self.anomalous:
            return "anomaly, measured again and persisting: " + "; ".join(self.anomaly)
        unmet = [sentence for sentence, met in self.gates if not met]
        if unmet:
            return "; ".join(unmet)
        if test.inside:
            return ""
        if not math.isfinite(test.measured):  # nothing usable to place against the region
            return "this run measured no usable value for it"
        if test.outside:
            low, high = test.interval
            if low == high:
                return f"the measured {_short(test.measured)} lies outside the pass region ({test.bounds_text()})"
            return (
                f"the whole interval {test.interval_text()} lies outside the pass region "
                f"({test.bounds_text()})"
            )
        edge = test.edge_crossed()
        return (
            f"undecided: the interval {test.interval_text()} straddles the pass region's edge "
            f"{_short(edge if edge is not None else test.measured)}, so the machine's noise could "
            "still decide it either way"
        )

    @property
    def measured(self) -> str:
        """The measured value with its interval, then the detail, for people."""
        if math.isnan(self.test.measured):
            head = f"{self.test.quantity}: not measured"
        else:
            head = (
                f"{self.test.quantity} = {_short(self.test.measured)} "
                f"(interval {self.test.interval_text()})"
            )
        return f"{head}; {self.detail}" if self.detail else head

    @property
    def alternative(self) -> str:
        """The alternative ruled out, with its value."""
        return f"{self.test.alternative} ({self.test.quantity} = {_short(self.test.alternative_value)})"

    @property
    def pass_region(self) -> str:
        """The pass region, with the gates that come on top of it."""
        return "; ".join([self.test.region_text(), *(sentence for sentence, _ in self.gates)])

    def number(self, name: str) -> float:
        """A numeric entry of ``values`` as a float, with a clear error when it is not one.

        >>> example().number("gain")
        4.0
        """
        value = self.values.get(name)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise GpuConceptsError(
                f"claim {self.key!r}: values[{name!r}] is {value!r}, not a number"
            )
        return float(value)

    def to_dict(self, *, with_plot: bool = True) -> dict[str, Any]:
        """JSON-ready form, as a saved run stores it (see :class:`ClaimRecord`); read it back
        with ``from_record(ClaimRecord, record).result()``."""
        record = to_record(ClaimRecord.of(self))
        if not with_plot:
            del record["plot"]
        return record


Bound = Annotated[float, ANY_SIGN] | None
"""A number of a stored claim's test: null where JSON cannot hold the value (an infinity, a
time of "never"), or an open end of the pass region."""

Reading = Annotated[float, ANY_SIGN] | str | None
"""A number of a stored claim's test: null where there is none (nan: nothing measured, no
prediction possible), the word "inf" or "-inf" where it is unbounded (a crossover never
reached, a time of "never"), else the number. Schema 3 wrote null for both; its migration
(:data:`gpuconcepts.run.run.MIGRATIONS`) keeps its predictions unbounded, and the only null
measurement its recorded runs hold was unmeasured."""


def _stored_reading(x: float) -> float | str | None:
    """A measured number as :data:`Reading` writes it."""
    if math.isnan(x):
        return None
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def _read(x: float | str | None, name: str) -> float:
    """A :data:`Reading` back as a number: nan for null, an infinity for its word."""
    if x is None:
        return math.nan
    if isinstance(x, str) and x not in ("inf", "-inf"):
        raise GpuConceptsError(f"{name} must be a number, null, 'inf' or '-inf'; got {x!r}")
    return float(x)


Scalar = Annotated[int | float, ANY_SIGN] | bool | str | None
"""One of a claim's ``values``: a number of any sign, a flag, a word, or null."""


@dataclass(frozen=True)
class Gate:
    """A gate of a stored claim: its condition in words and whether the data met it."""

    condition: str
    met: bool


@dataclass(frozen=True)
class ClaimRecord:
    """A :class:`ClaimResult` as a saved run stores it, read with
    :func:`~gpuconcepts.records.from_record`, every field checked.

    The record is flat: the test's fields (``quantity`` to ``interval``) sit beside the
    claim's. ``pass_region_text``, ``verdict`` and, for a visible claim, ``reason`` derive from
    the rest and are written for readers of the file: :meth:`result` refuses a ``verdict``
    other than the one its own test and gates give (an edited file), and ignores the others.

    >>> from gpuconcepts.records import from_record
    >>> record = example().to_dict()
    >>> record["pass_region"], record["verdict"]
    ([2.0, None], 'holds')
    >>> from_record(ClaimRecord, {**record, "verdict": "fails"}).result()
    Traceback (most recent call last):
    ...
    gpuconcepts.errors.GpuConceptsError: verdict is 'fails', but its own test and gates give 'holds' (an edited file?)
    """

    key: str
    architecture: str
    claim: str
    device: str
    prediction: str
    quantity: str
    predicted: Reading
    alternative: str
    alternative_value: Reading
    pass_region: tuple[Bound, Bound]
    measured: Reading
    interval: tuple[Reading, Reading]
    pass_region_text: str = ""
    detail: str = ""
    gates: tuple[Gate, ...] = ()
    anomalies: tuple[str, ...] = ()
    visible: bool = True
    verdict: Verdict | None = None
    reason: str = ""
    values: Mapping[str, Scalar] = field(default_factory=dict)
    plot: PlotSpec | None = None

    @classmethod
    def of(cls, result: ClaimResult) -> ClaimRecord:
        """The record of ``result``, its derived entries filled in."""
        test = result.test
        return cls(
            key=result.key,
            architecture=result.architecture,
            claim=result.claim,
            device=result.device,
            prediction=result.prediction,
            quantity=test.quantity,
            predicted=_stored_reading(test.predicted),
            alternative=test.alternative,
            alternative_value=_stored_reading(test.alternative_value),
            pass_region=(_stored(test.low), _stored(test.high)),
            measured=_stored_reading(test.measured),
            interval=(_stored_reading(test.interval[0]), _stored_reading(test.interval[1])),
            pass_region_text=test.region_text(),
            detail=result.detail,
            gates=tuple(Gate(condition, met) for condition, met in result.gates),
            anomalies=result.anomalies,
            visible=result.visible,
            verdict=result.verdict,
            reason=result.why,
            values=result.values,
            plot=result.plot,
        )

    def result(self) -> ClaimResult:
        """The claim result stored here (a null number read back as an infinity, a null end
        of the pass region as an open one)."""
        low, high = self.interval
        test = TwoSided(
            quantity=self.quantity,
            predicted=_read(self.predicted, "predicted"),
            alternative=self.alternative,
            alternative_value=_read(self.alternative_value, "alternative_value"),
            low=self.pass_region[0],
            high=self.pass_region[1],
            measured=_read(self.measured, "measured"),
            interval=(_read(low, "interval"), _read(high, "interval")),
        )
        result = ClaimResult(
            key=self.key,
            architecture=self.architecture,
            claim=self.claim,
            prediction=self.prediction,
            test=test,
            device=self.device,
            detail=self.detail,
            visible=self.visible,
            reason="" if self.visible else self.reason,  # a visible claim's reason derives
            gates=tuple((gate.condition, gate.met) for gate in self.gates),
            anomalies=self.anomalies,
            values=self.values,
            plot=self.plot,
        )
        if self.verdict is not None and self.verdict != result.verdict:
            raise GpuConceptsError(
                f"verdict is {self.verdict!r}, but its own test and gates give "
                f"{result.verdict!r} (an edited file?)"
            )
        return result


def example(measured: float = 4.0, *, interval: tuple[float, float] | None = None) -> ClaimResult:
    """A small claim for examples and tests: "FLOP/s rises with batch", gain ≥ 2, the
    alternative "no gain" (1).

    >>> example().verdict, example(1.5).verdict, example(2.5, interval=(1.8, 3)).verdict
    ('holds', 'fails', 'undecided')
    >>> example(0.5).verdict, example(0.5).why.split(":")[0]
    ('fails', 'anomaly, measured again and persisting')
    """
    return ClaimResult(
        key="demo",
        architecture="MLP",
        claim="Bigger batches run faster per sample.",
        prediction="intensity rises from 0.5 to 64 FLOP/byte",
        test=TwoSided(
            "FLOP/s gain",
            predicted=8.0,
            alternative="FLOP/s independent of batch",
            alternative_value=1.0,
            low=2.0,
            high=None,
            measured=measured,
            interval=interval or (measured, measured),
        ),
        device="cpu (demo)",
        values={"gain": measured},
    )


def tally(claims: Sequence[ClaimResult]) -> dict[Verdict, int]:
    """How many of the post's claims hold, fail, or are not visible: facts and the model's
    own predictions are left out (:func:`in_ledger`; issue 45: a count is not evidence of a
    claim, and the model is scored apart).

    >>> from gpuconcepts.claims.result import example
    >>> tally([example(), example(1.0), example(2.5, interval=(1.8, 3))])
    {'holds': 1, 'fails': 1, 'undecided': 1, 'not visible': 0}
    >>> from dataclasses import replace
    >>> tally([replace(example(), key="kv-cache-exact"), replace(example(), key="decode-knee")])
    {'holds': 0, 'fails': 0, 'undecided': 0, 'not visible': 0}
    """
    counts: dict[Verdict, int] = dict.fromkeys(VERDICTS, 0)
    for result in in_ledger(claims, "post"):
        counts[result.verdict] += 1
    return counts


def in_ledger(claims: Sequence[ClaimResult], which: Ledger) -> tuple[ClaimResult, ...]:
    """The claims counted in ``which`` (:data:`~gpuconcepts.claims.registry.Ledger`): the
    post's claims, the facts, or the model's predictions, in their order.

    >>> from dataclasses import replace
    >>> [r.key for r in in_ledger([example(), replace(example(), key="kv-cache-exact")], "fact")]
    ['kv-cache-exact']
    """
    return tuple(result for result in claims if ledger(result.key) == which)
