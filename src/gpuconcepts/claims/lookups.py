"""DLRM's lookups across row widths: random and consecutive rows at each width, the ratio of
their bandwidths measured and predicted, and the width where the claim is judged
(:class:`LookupSweep`, read by :func:`~gpuconcepts.claims.dlrm.judge_dlrm_lookups`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from gpuconcepts import formulas
from gpuconcepts.claims import thresholds as T
from gpuconcepts.claims.predict import predicted_seconds, random_line_seconds
from gpuconcepts.claims.quantities import param, with_interval
from gpuconcepts.claims.shape import bars
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.measure import Measurement
from gpuconcepts.results.plot import PlotSpec, Series
from gpuconcepts.results.twosided import TwoSided
from gpuconcepts.roofline import Peaks
from gpuconcepts.units import plain_number, significant, times

Pair = tuple[Measurement, Measurement]
"""Random and sequential lookups at one row width (random first)."""


def row_bytes_of(m: Measurement) -> float:
    """Bytes of one embedding row: the table's formula at N = 1."""
    return float(formulas.embedding_memory(N=1, d=param(m, "d"), s=param(m, "s")))


def bandwidth_ratio(pair: Pair) -> Callable[[Sequence[float]], float]:
    """Sequential ÷ random bandwidth from the two lookups' times (random first)."""
    random, sequential = pair
    return lambda t: (sequential.bytes / t[1]) / (random.bytes / t[0])


@dataclass(frozen=True)
class LookupSweep:
    """The lookups' pairs sorted by row bytes, with each width's measured ratio (sequential ÷
    random bandwidth) and its interval, the transfer-unit model's ratio (``lines``) and the
    measured ceilings' (``predicted``, shown beside the claim, never its test), and the index
    of the judged width: the post's row width, fixed before any run. Until 2026-12-07 it was
    the width where the ceilings predicted the largest gap, a choice that read the prediction
    (ledger 1 reads none, issue 45)."""

    pairs: tuple[Pair, ...]
    row_bytes: tuple[float, ...]
    ratios: tuple[float, ...]
    spreads: tuple[tuple[float, float], ...]
    lines: tuple[float, ...]
    predicted: tuple[float, ...]
    judged: int

    @classmethod
    def of(
        cls, pairs: Sequence[Pair], peaks: Peaks, transfer_bytes: int, judged: Pair
    ) -> LookupSweep:
        """The sweep of ``pairs``, whose row widths must differ, judged at the width of
        ``judged`` (the post's pair, one of ``pairs``)."""
        ordered = tuple(sorted(pairs, key=lambda pair: row_bytes_of(pair[0])))
        row_bytes = tuple(row_bytes_of(r) for r, _ in ordered)
        if len(set(row_bytes)) != len(row_bytes):
            raise GpuConceptsError(f"row widths must differ; got {sorted(row_bytes)} bytes")
        if judged not in ordered:
            raise GpuConceptsError(
                f"the judged pair ({row_bytes_of(judged[0])}-byte rows) is not one of the "
                "sweep's pairs"
            )
        c = transfer_bytes
        # the measured ceilings' times: random rows at the random-access sweep's line rate,
        # consecutive ones at the memory's, each row no faster than the gather issues rows
        predicted = tuple(
            max(predicted_seconds(r, peaks), random_line_seconds(r, peaks, c) or 0.0)
            / predicted_seconds(q, peaks)
            * q.bytes
            / r.bytes
            for r, q in ordered
        )
        return cls(
            pairs=ordered,
            row_bytes=row_bytes,
            ratios=tuple(q.bytes_per_s / r.bytes_per_s for r, q in ordered),
            spreads=tuple(with_interval(bandwidth_ratio(pair), pair)[1] for pair in ordered),
            lines=tuple(
                float(formulas.lookup_order_ratio(d=param(r, "d"), s=param(r, "s"), c=c))
                for r, _ in ordered
            ),
            predicted=predicted,
            judged=ordered.index(judged),
        )

    def test(self) -> TwoSided:
        """The claim's test at the judged width: sequential ÷ random bandwidth, at least
        :data:`~gpuconcepts.claims.thresholds.DIRECTION_MIN_EFFECT` (the post's "much lower")."""
        pair = self.pairs[self.judged]
        measured, interval = with_interval(bandwidth_ratio(pair), pair)
        return TwoSided(
            f"sequential ÷ random bandwidth with {plain_number(self.row_bytes[self.judged])}-byte rows",
            predicted=self.predicted[self.judged],
            alternative="random rows stream as fast as consecutive ones",
            alternative_value=1.0,
            low=T.DIRECTION_MIN_EFFECT,
            high=None,
            measured=measured,
            interval=interval,
        )

    def anomalies(self, test: TwoSided) -> tuple[str, ...]:
        """Widths where consecutive rows streamed slower than random ones beyond the noise
        (they share lines, random rows do not); the judged width's ``test`` says so itself."""
        return tuple(
            f"with {plain_number(self.row_bytes[k])}-byte rows consecutive lookups streamed "
            f"slower than random ones (sequential ÷ random bandwidth {significant(low)} to "
            f"{significant(high)}, model {significant(self.predicted[k])})"
            for k, (low, high) in enumerate(self.spreads)
            if high < 1.0 and not (k == self.judged and test.anomalous)
        )

    def by_row(self, unit: str) -> str:
        """Each width's ratio, measured, predicted and by the transfer-unit model, in words."""
        return "; ".join(  # a clause each: the list is long, and a page may split it there
            f"{plain_number(b)} bytes {times(x)} (predicted {times(p)}, {unit} model {times(q)})"
            for b, x, p, q in zip(
                self.row_bytes, self.ratios, self.predicted, self.lines, strict=True
            )
        )

    def values(self) -> dict[str, Any]:
        """Each width's measured ratio, its interval and its predicted ratio, by row bytes."""
        named = {
            "ratio_{}B_rows": self.ratios,
            "ratio_{}B_rows_low": tuple(lo for lo, _ in self.spreads),
            "ratio_{}B_rows_high": tuple(hi for _, hi in self.spreads),
            "predicted_{}B_rows": self.predicted,
        }
        return {
            name.format(int(b)): x
            for name, xs in named.items()
            for b, x in zip(self.row_bytes, xs, strict=True)
        }

    def plot(self, peaks: Peaks, unit: str, transfer_bytes: int) -> PlotSpec:
        """Achieved bandwidth by access order, over the row widths (bars at one width)."""
        dram = (("measured DRAM bandwidth", peaks.bytes_per_s),)
        if len(self.pairs) == 1:
            ((random, sequential),) = self.pairs
            return bars(
                "Embedding lookups: achieved bandwidth by access order",
                "access order",
                "achieved bandwidth (bytes/s)",
                ("random rows", "consecutive rows"),
                (random.bytes_per_s, sequential.bytes_per_s),
                log_y=False,
                hlines=dram,
                spread=(random.interval_bytes_per_s, sequential.interval_bytes_per_s),
            )
        randoms = [r for r, _ in self.pairs]
        sequentials = [q for _, q in self.pairs]
        model = (q.bytes_per_s / p for q, p in zip(sequentials, self.predicted, strict=True))
        return PlotSpec(
            title="Embedding lookups: achieved bandwidth by access order and row size",
            x_label="bytes per embedding row (d·s)",
            y_label="achieved bandwidth (bytes/s)",
            series=(
                _measured("random rows", self.row_bytes, randoms),
                _measured("consecutive rows", self.row_bytes, sequentials),
                Series(
                    "random rows, predicted (consecutive ÷ the ceilings' predicted ratio)",
                    self.row_bytes,
                    tuple(model),
                    role="predicted",
                ),
            ),
            hlines=dram,
            vlines=((f"one {unit} ({plain_number(transfer_bytes)} bytes)", float(transfer_bytes)),),
        )


def _measured(name: str, x: tuple[float, ...], ms: Sequence[Measurement]) -> Series:
    """Achieved bandwidth of ``ms`` over ``x``, with each one's interval."""
    return Series(
        name,
        x,
        tuple(m.bytes_per_s for m in ms),
        low=tuple(m.interval_bytes_per_s[0] for m in ms),
        high=tuple(m.interval_bytes_per_s[1] for m in ms),
    )
