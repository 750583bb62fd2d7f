"""What every whole-model claim's result shares: its architecture's name and how a two-sided
test becomes a :class:`~gpuconcepts.results.claim.ClaimResult` (:func:`whole_result`), for
:mod:`~gpuconcepts.claims.wholemodel` and :mod:`~gpuconcepts.claims.decode`."""

from __future__ import annotations

from gpuconcepts.results.claim import ClaimResult
from gpuconcepts.results.plot import PlotSpec
from gpuconcepts.results.twosided import TwoSided

ARCHITECTURE = "Whole model"
"""The architecture every whole-model claim is filed under."""


def whole_result(
    key: str,
    claim: str,
    prediction: str,
    test: TwoSided,
    *,
    device: str,
    measured_extra: str = "",
    gate: tuple[bool, str] = (True, ""),
    visible: tuple[bool, str] = (True, ""),
    values: dict[str, float | int | bool | str] | None = None,
    plot: PlotSpec | None = None,
) -> ClaimResult:
    """A :class:`ClaimResult` from a two-sided test; ``gate`` is a further condition
    (with the sentence that says it failed), ``visible`` a condition of the device."""
    passed, why_not = gate
    seen, reason = visible
    return ClaimResult(
        key=key,
        architecture=ARCHITECTURE,
        claim=claim,
        prediction=prediction,
        test=test,
        detail=measured_extra,
        gates=((why_not, passed),) if why_not else (),
        device=device,
        visible=seen,
        reason="" if seen else reason,
        values=values or {},
        plot=plot,
    )
