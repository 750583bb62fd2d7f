"""``gpuconcepts distributed``: run the collectives in W processes, then report and judge them.

Measuring (spawned processes, :mod:`~gpuconcepts.distributed.worker`) and reporting (this
module, pure once the records are in) are kept apart, so the claims and the text can be
tested on records made by hand.
"""

# torch is imported inside functions on purpose (README, Rules: 3).
# ruff: noqa: PLC0415

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Annotated, Any, Literal

from gpuconcepts.distributed import claims, launch
from gpuconcepts.distributed.traffic import (
    FULL,
    QUICK,
    AlphaBeta,
    Collective,
    Sizes,
    fit_alpha_beta,
    loopback_available,
)
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.files import temporary_folder
from gpuconcepts.measure import cpu_model
from gpuconcepts.records import POSITIVE, at_least, from_record, to_record
from gpuconcepts.results.claim import ClaimResult
from gpuconcepts.units import number, plain_number, plural, si

GROWTH_REPEATS = 2
"""Repetitions of each all-reduce whose bytes alone are counted: other programs' traffic only
adds bytes, so the smaller of two is the count (times are not read, so no spread is needed)."""

SWEEPS = ("size sweep", "world-size sweep", "pipeline sweep")
"""Kinds of collective measured to fit or sweep, not shown as a collective of their own."""


@dataclass(frozen=True)
class DistributedReport:
    """Everything one ``gpuconcepts distributed`` run measured, with the fit and the claims."""

    world_size: Annotated[int, at_least(2)]
    backend: Literal["gloo", "nccl"]
    quick: bool
    device: str
    sizes: Sizes
    collectives: tuple[Collective, ...]
    fit: AlphaBeta | None
    cores: Annotated[int, POSITIVE]
    seconds: float
    timings: Mapping[str, float]
    fit_problem: str = ""
    """Why there is no fit (``fit`` is None): the sweep's times did not grow with size."""

    def of_kind(self, kind: str) -> tuple[Collective, ...]:
        """The collectives of one kind (``"sharded embedding"``, ``"size sweep"``, ...)."""
        return tuple(c for c in self.collectives if c.kind == kind)

    def collective(self, formula: str) -> Collective:
        """The main (not sweep) collective measured against ``formula``."""
        for c in self.main:
            if c.formula == formula:
                return c
        raise GpuConceptsError(f"no collective measured against {formula!r} in this run")

    @property
    def main(self) -> tuple[Collective, ...]:
        """The collectives the book shows: every kind but the sweeps."""
        return tuple(c for c in self.collectives if c.kind not in SWEEPS)

    @property
    def crowded(self) -> str:
        """Why this run's times are not read (its processes shared cores); "" when they are."""
        if self.cores >= self.world_size:
            return ""
        return (
            f"the {self.world_size} processes shared {plural(self.cores, 'free core')}, so "
            "their times measure the scheduler, not the exchange (the bytes are still counted)"
        )

    @property
    def growth(self) -> tuple[Collective, ...]:
        """The all-reduce of the same gradient at each group size, one per W (smallest first):
        the world-size sweep, else the data-parallel all-reduce."""
        by_world: dict[int, Collective] = {}
        for c in (*self.of_kind("world-size sweep"), *self.of_kind("data parallel")):
            by_world.setdefault(c.inputs["W"], c)
        return tuple(by_world[w] for w in sorted(by_world))

    @property
    def pipelines(self) -> tuple[Collective, ...]:
        """The pipeline and its sweep over the micro-batches, fewest micro-batches first."""
        swept = (*self.of_kind("pipeline"), *self.of_kind("pipeline sweep"))
        return tuple(sorted(swept, key=lambda c: c.schedule["m"]))

    def predicted_seconds(self, c: Collective) -> float | None:
        """The fit's time for ``c``; None for the pipeline, whose time is mostly arithmetic."""
        if c.kind == "pipeline" or self.fit is None:
            return None
        return self.fit.seconds(c.formula_bytes, c.collectives)

    @property
    def claims(self) -> tuple[ClaimResult, ...]:
        """Every claim of the run, judged from the measurements (none when it measured no
        collective: a part that ran nothing has nothing to judge)."""
        if not self.collectives:
            return ()
        results = [claims.traffic_claim(c, self.device) for c in self.main]
        results.append(claims.allreduce_growth_claim(self.growth, self.device))
        lookups = self.of_kind("sharded embedding")
        results.append(claims.rowwise_claim(lookups, self.device))
        results.append(claims.same_exchange_claim(lookups, self.device, crowded=self.crowded))
        predicted = (*self.of_kind("sharded embedding"), *self.of_kind("tensor parallel"))
        results.append(
            claims.alpha_beta_claim(
                predicted,
                self.fit,
                self.device,
                problem=self.fit_problem,
                sweep=self.of_kind("size sweep"),
                crowded=self.crowded,
            )
        )
        pipelines = self.of_kind("pipeline")
        results.extend(
            claims.bubble_claim(c, self.fit, self.cores, self.device, crowded=self.crowded)
            for c in pipelines
        )
        if len(self.pipelines) > 1:
            results.append(
                claims.bubble_sweep_claim(
                    self.pipelines, self.fit, self.cores, self.device, crowded=self.crowded
                )
            )
        return tuple(results)

    def rows(self) -> list[list[str]]:
        """The main collectives as text cells, header first."""
        rows = [
            [
                "collective",
                "formula",
                "formula bytes/device",
                "loopback bytes/device",
                "ratio",
                "time (IQR)",
                "α-β prediction",
            ]
        ]
        for c in self.main:
            q1, q3 = c.iqr_seconds
            predicted = self.predicted_seconds(c)
            rows.append(
                [
                    c.name,
                    c.formula,
                    plain_number(round(c.formula_bytes)),
                    "-" if c.measured_bytes is None else plain_number(round(c.measured_bytes)),
                    "-" if c.bytes_ratio is None else f"{number(c.bytes_ratio, 5)}",
                    f"{si(c.median_seconds, 's')} ({si(q1, 's')}-{si(q3, 's')})",
                    "-" if predicted is None else si(predicted, "s"),
                ]
            )
        return rows

    def record(self) -> dict[str, Any]:
        """Every measured value as plain JSON, losslessly: what a Run saves. (:meth:`to_dict`
        is the CLI's view: statistics, predictions and claims.)"""
        return to_record(self)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form for ``gpuconcepts distributed --json``: every collective with
        formula bytes, loopback bytes and time, and the claims."""
        return {
            "world_size": self.world_size,
            "backend": self.backend,
            "quick": self.quick,
            "device": self.device,
            "cores": self.cores,
            "seconds": self.seconds,
            "timings": dict(self.timings),
            "sizes": self.sizes.to_dict(),
            "fit": None if self.fit is None else self.fit.to_dict(),
            "fit_problem": self.fit_problem,
            "collectives": [
                c.to_dict() | {"predicted_seconds": self.predicted_seconds(c)}
                for c in self.collectives
            ],
            "claims": [r.to_dict(with_plot=False) for r in self.claims],
        }


def _device(backend: str, world_size: int) -> str:
    if backend == "nccl":
        import torch

        return f"nccl, {world_size} GPUs ({torch.cuda.get_device_name(0)})"
    return f"gloo over loopback TCP, {world_size} processes on {cpu_model()}"


def measure(
    world_size: int,
    *,
    backend: str = "gloo",
    quick: bool = True,
    port: int | None = None,
    timeout_s: float = 300.0,
    sizes: Sizes | None = None,
    growth_world: int = 0,
) -> DistributedReport:
    """Check the input, run every workload in ``world_size`` processes, collect the report.

    ``sizes`` overrides the quick or full sizes (the tests use smaller ones). A
    ``growth_world`` above ``world_size`` also counts the all-reduce's bytes in groups of
    2, 3, ... ``growth_world`` processes (:func:`count_growth`), whatever the cores.
    """
    chosen = launch.check_backend(backend)
    launch.check_world_size(world_size, backend)
    if port is not None:
        launch.check_port(port)
    if backend == "gloo" and not loopback_available():
        raise GpuConceptsError(
            "gloo's traffic is counted on the loopback interface, and /proc/net/dev has none "
            "here (Linux only)"
        )
    from gpuconcepts.distributed.worker import run_all  # torch: only once the input is good

    sizes = sizes or (QUICK if quick else FULL)
    start = time.perf_counter()
    with temporary_folder("distributed") as folder:  # a SIGKILL's is removed next time
        out = folder / "result.json"
        launch.launch(
            run_all,
            world_size,
            (sizes.to_dict(), str(out)),
            backend=backend,
            port=port,
            timeout_s=timeout_s,
        )
        payload = json.loads(out.read_text(encoding="utf-8"))
    collectives = tuple(from_record(Collective, r) for r in payload["records"])
    timings = dict(payload["timings"])
    if growth_world > world_size and backend == "gloo":
        counted = time.perf_counter()
        collectives += count_growth(growth_world, sizes, timeout_s=timeout_s)
        timings[f"all-reduce bytes in up to {growth_world} processes"] = (
            time.perf_counter() - counted
        )
    sweep = [c for c in collectives if c.kind == "size sweep"]
    fit: AlphaBeta | None = None
    problem = ""
    try:
        fit = fit_alpha_beta([c.formula_bytes for c in sweep], [c.median_seconds for c in sweep])
    except GpuConceptsError as error:  # a measured outcome (noise), not bad input
        problem = str(error)
    return DistributedReport(
        world_size=world_size,
        backend=chosen,
        quick=quick,
        device=_device(backend, world_size),
        sizes=sizes,
        collectives=collectives,
        fit=fit,
        cores=launch.cpu_cores(),
        seconds=time.perf_counter() - start,
        timings=timings,
        fit_problem=problem,
    )


def count_growth(
    world_size: int, sizes: Sizes, *, timeout_s: float = 300.0
) -> tuple[Collective, ...]:
    """The data-parallel all-reduce's loopback bytes over the first 2, 3, ... ``world_size``
    gloo processes (kind ``"world-size sweep"``).

    Bytes do not depend on the cores, so this runs even where the processes outnumber them
    (up to :data:`~gpuconcepts.distributed.launch.MAX_GLOO_WORLD`); their times then measure
    the scheduler, and nothing reads them.
    """
    from gpuconcepts.distributed.worker import run_growth

    if not 2 <= world_size <= launch.MAX_GLOO_WORLD:
        raise GpuConceptsError(
            f"count_growth: world_size must be between 2 and {launch.MAX_GLOO_WORLD}; "
            f"got {world_size}"
        )
    counting = replace(sizes, repeats=GROWTH_REPEATS)
    with temporary_folder("growth") as folder:
        out = folder / "growth.json"
        launch.launch(run_growth, world_size, (counting.to_dict(), str(out)), timeout_s=timeout_s)
        payload = json.loads(out.read_text(encoding="utf-8"))
    return tuple(from_record(Collective, r) for r in payload["records"])
