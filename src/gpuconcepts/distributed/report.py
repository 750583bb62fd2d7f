"""``gpuconcepts distributed``: run the collectives in W processes and collect their report.

Measuring (spawned processes, :mod:`~gpuconcepts.distributed.worker`, collected here) and the
report (:class:`~gpuconcepts.results.distributed.DistributedReport`, a value) are kept apart,
so the claims (:mod:`gpuconcepts.claims.distributed`) and the text
(:mod:`gpuconcepts.render.text.distributed`) can be tested on records made by hand.
"""

# torch is imported inside functions on purpose (README, Rules: 3).
# ruff: noqa: PLC0415

from __future__ import annotations

import json
import time
from dataclasses import replace
from typing import TYPE_CHECKING

from gpuconcepts.distributed import launch
from gpuconcepts.distributed.traffic import loopback_available
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.files import temporary_folder
from gpuconcepts.measure import cpu_model
from gpuconcepts.records import from_record
from gpuconcepts.results.distributed import (
    AlphaBeta,
    Collective,
    DistributedReport,
    Sizes,
    fit_alpha_beta,
)
from gpuconcepts.sizes import load_part_sizes

if TYPE_CHECKING:
    from gpuconcepts.sizing import RunSizes


def quick_sizes() -> Sizes:
    """The distributed part's ``--quick`` sizes (``conf/presets.toml``, ``[distributed.quick]``
    over ``[distributed]``: every message at least a few hundred kB, so headers stay small),
    read from the presets file when called. Examples, tests and the distributed page's pricing
    of a run without the part use them; a measurement runs at the sizes of the
    :class:`~gpuconcepts.sizing.RunSizes` it is handed, so importing this module reads no file.

    >>> quick_sizes().embedding(2)[:2]
    (4, 2048)
    """
    return from_record(Sizes, load_part_sizes("distributed", quick=True), "[distributed.quick]")


GROWTH_REPEATS = 2
"""Repetitions of each all-reduce whose bytes alone are counted, in one block: other programs'
traffic only adds bytes, so the smaller of two is the count (times are not read, so neither a
spread nor blocks are needed)."""


def _device(backend: str, world_size: int) -> str:
    if backend == "nccl":
        import torch

        return f"nccl, {world_size} GPUs ({torch.cuda.get_device_name(0)})"
    return f"gloo over loopback TCP, {world_size} processes on {cpu_model()}"


def measure(
    world_size: int,
    sizes: RunSizes,
    *,
    backend: str = "gloo",
    port: int | None = None,
    timeout_s: float = 300.0,
    growth_world: int = 0,
) -> DistributedReport:
    """Check the input, run every workload in ``world_size`` processes, collect the report.

    ``sizes`` is the run's one sizing decision (:class:`~gpuconcepts.sizing.RunSizes`): the
    workloads run at its ``distributed`` sizes, and the report records its ``quick``. A
    ``growth_world`` above ``world_size`` also counts the all-reduce's bytes in groups of
    2, 3, ... ``growth_world`` processes (:func:`count_growth`), whatever the cores.
    """
    chosen = check_input(world_size, backend, port)
    from gpuconcepts.distributed.worker import run_all  # torch: only once the input is good

    part = sizes.distributed
    start = time.perf_counter()
    with temporary_folder("distributed") as folder:  # a SIGKILL's is removed next time
        out = folder / "result.json"
        launch.launch(
            run_all,
            world_size,
            (part.to_dict(), str(out)),
            backend=backend,
            port=port,
            timeout_s=timeout_s,
        )
        payload = json.loads(out.read_text(encoding="utf-8"))
    collectives = tuple(from_record(Collective, r) for r in payload["records"])
    timings = dict(payload["timings"])
    if growth_world > world_size and backend == "gloo":
        counted = time.perf_counter()
        collectives += count_growth(growth_world, part, timeout_s=timeout_s)
        timings[f"all-reduce bytes in up to {growth_world} processes"] = (
            time.perf_counter() - counted
        )
    fit, problem = _sweep_fit(collectives)
    return DistributedReport(
        world_size=world_size,
        backend=chosen,
        quick=sizes.quick,
        device=_device(backend, world_size),
        sizes=part,
        collectives=collectives,
        fit=fit,
        cores=launch.cpu_cores(),
        seconds=time.perf_counter() - start,
        timings=timings,
        fit_problem=problem,
    )


def check_input(world_size: int, backend: str, port: int | None) -> launch.Backend:
    """The backend's name, once ``world_size``, ``port`` and this machine can run it (an error
    saying which rule the input breaks otherwise)."""
    chosen = launch.check_backend(backend)
    launch.check_world_size(world_size, backend)
    if port is not None:
        launch.check_port(port)
    if backend == "gloo" and not loopback_available():
        raise GpuConceptsError(
            "gloo's traffic is counted on the loopback interface, and /proc/net/dev has none "
            "here (Linux only)"
        )
    return chosen


def _sweep_fit(collectives: tuple[Collective, ...]) -> tuple[AlphaBeta | None, str]:
    """The α-β fit of the size sweep, or None and why it could not be fitted."""
    sweep = [c for c in collectives if c.kind == "size sweep"]
    try:
        fit = fit_alpha_beta([c.formula_bytes for c in sweep], [c.median_seconds for c in sweep])
    except GpuConceptsError as error:  # a measured outcome (noise), not bad input
        return None, str(error)
    return fit, ""


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
    counting = replace(sizes, repeats=GROWTH_REPEATS, timed_blocks=1)
    with temporary_folder("growth") as folder:
        out = folder / "growth.json"
        launch.launch(run_growth, world_size, (counting.to_dict(), str(out)), timeout_s=timeout_s)
        payload = json.loads(out.read_text(encoding="utf-8"))
    return tuple(from_record(Collective, r) for r in payload["records"])
