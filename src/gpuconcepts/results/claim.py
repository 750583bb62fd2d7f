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
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar, Literal

from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.records import ANY_SIGN, to_record
from gpuconcepts.results.plot import PlotSpec
from gpuconcepts.results.twosided import TwoSided, short

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


_ANOMALY = {
    True: "anomaly, measured again and persisting",
    False: "anomaly, gone on a second look (the verdict reads the first measurement)",
    None: "anomaly",
}
"""How a reason names an anomaly, by what the second look found (:class:`ClaimResult`)."""


@dataclass(frozen=True)
class ClaimResult:
    """One claim of the post, checked on one device.

    ``test`` states the claim as a :class:`TwoSided` test; its pass region is fixed before
    any run (the constants of :mod:`gpuconcepts.claims.thresholds`). ``gates`` are further
    conditions, each a sentence and whether the data met it. ``visible`` is False when this
    device cannot show the effect at all, ``reason`` saying why (from the device or the data).
    ``anomalies`` are results that contradict physics beyond the noise, each a sentence with
    its numbers (besides the test's own, see :attr:`TwoSided.anomalous`), shown and never
    read as agreement. ``second_look`` says what the comparison's second look found
    (:data:`~gpuconcepts.results.measured.SECOND_LOOK`): True, the anomaly persisted; False,
    it was gone; None, none was taken. It never changes the verdict, which reads the rounds
    fixed in advance. :attr:`verdict` is computed from these, never stored.
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
    second_look: bool | None = None

    def __post_init__(self) -> None:
        # a value JSON cannot hold ("never", an infinity) is stored as None, as a saved run has it
        object.__setattr__(self, "values", {k: _json_value(v) for k, v in self.values.items()})

    @property
    def anomaly(self) -> tuple[str, ...]:
        """Every anomaly of this result, each a sentence with its numbers (empty: none)."""
        test = self.test
        own = (
            f"{test.quantity} measured {test.interval_text()}, beyond the alternative "
            f"({test.alternative}: {short(test.alternative_value)}) on the side away from the "
            f"pass region ({test.bounds_text()})"
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
        if not test.distinguishes:
            return (
                f"the alternative ({test.alternative}: {short(test.alternative_value)}) falls "
                f"inside the pass region {test.region_text()}, so no measurement here could "
                "tell the two apart"
            )
        if self.anomalous:
            return f"{_ANOMALY[self.second_look]}: " + "; ".join(self.anomaly)
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
                return f"the measured {short(test.measured)} lies outside the pass region ({test.bounds_text()})"
            return (
                f"the whole interval {test.interval_text()} lies outside the pass region "
                f"({test.bounds_text()})"
            )
        edge = test.edge_crossed()
        return (
            f"undecided: the interval {test.interval_text()} straddles the pass region's edge "
            f"{short(edge if edge is not None else test.measured)}, so the machine's noise could "
            "still decide it either way"
        )

    @property
    def measured(self) -> str:
        """The measured value with its interval, then the detail, for people."""
        if math.isnan(self.test.measured):
            head = f"{self.test.quantity}: not measured"
        else:
            head = (
                f"{self.test.quantity} = {short(self.test.measured)} "
                f"(interval {self.test.interval_text()})"
            )
        return f"{head}; {self.detail}" if self.detail else head

    @property
    def alternative(self) -> str:
        """The alternative ruled out, with its value."""
        return (
            f"{self.test.alternative} ({self.test.quantity} = {short(self.test.alternative_value)})"
        )

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
    second_look: bool | None = None
    OPTIONAL_KEYS: ClassVar[frozenset[str]] = frozenset({"second_look"})  # runs before it lack it

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
            second_look=result.second_look,
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
            second_look=self.second_look,
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
    ('fails', 'anomaly')
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
