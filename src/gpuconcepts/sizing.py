"""The one sizing decision of a run: every size it measures at, resolved once.

``--quick`` (the smaller sizes) and the device's class are decided at the top, by
:func:`gpuconcepts.collect.collect`, the CLI or another entry point, into one
:class:`RunSizes`: the kernels' presets, the sweeps, the claims' sizes, the whole model's, the
distributed part's and the peaks' (the presets' ``peaks``, ``timing`` and ``budget`` tables).
Everything below is handed that value and reads no ``quick`` and no presets file again
(``tests/test_sizing.py`` checks both).

>>> sizes = RunSizes.resolve("cpu", quick=True, free_bytes=64 * 1024**3)
>>> sizes.device_cls, sizes.presets["mlp"]["B"], sizes.sweeps["mlp_B"], sizes.claims.mlp_batches[:3]
('cpu', 512, (1, 64, 512), (1, 2, 4))
>>> sizes.wholemodel.repeats, sizes.distributed.repeats, sizes.budget.seconds
(6, 6, 60.0)
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path

from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.records import from_record
from gpuconcepts.results.claim_sizes import ClaimSizes
from gpuconcepts.results.distributed import Sizes as DistributedSizes
from gpuconcepts.results.wholemodel import WholeModelSizes
from gpuconcepts.sizes import (
    DeviceClass,
    PresetsFile,
    RunBudget,
    device_class,
    free_memory,
    presets_within,
    sweeps_within,
)


@dataclass(frozen=True)
class RunSizes:
    """Every size one run measures at on one resolved device (see the module's docstring).

    ``presets``: each kernel's table, capped by the free memory at resolution, with the
    ``timing``, ``budget`` and ``peaks`` tables; ``sweeps``: the values swept that fit;
    ``claims``: the claims' experiments'; ``wholemodel``: the whole-model experiments'
    (``[wholemodel.cpu]`` or ``[wholemodel.cuda]``); ``distributed``: the distributed part's
    (``[distributed]``). ``quick`` is kept to be recorded (a Run's provenance, the peaks
    cache's identity), never to choose a size again.
    """

    device: str
    device_cls: DeviceClass
    quick: bool
    presets: dict[str, dict[str, int]]
    sweeps: dict[str, tuple[int, ...]]
    claims: ClaimSizes
    wholemodel: WholeModelSizes
    distributed: DistributedSizes

    @property
    def budget(self) -> RunBudget:
        """What the run may spend (the presets' ``budget`` table)."""
        return RunBudget.from_presets(self.presets)

    @classmethod
    def resolve(
        cls,
        device: str,
        quick: bool,
        *,
        free_bytes: int | None = None,
        path: Path | None = None,
        device_cls: DeviceClass | None = None,
    ) -> RunSizes:
        """The sizes for a resolved device (``"cpu"`` or ``"cuda"``): the presets file read
        once, its ``quick`` tables over the full ones when ``quick``.

        Args:
            device: ``"cpu"`` or ``"cuda"``.
            quick: the smaller sizes (the CLI's ``--quick``).
            free_bytes: free memory the kernels' sizes are capped to fit; measured when None.
            path: another presets file (tests).
            device_cls: this device class instead of the one the device's memory gives.
        """
        if device not in ("cpu", "cuda"):
            raise GpuConceptsError(
                f"RunSizes.resolve: device {device!r} is not a resolved device (cpu or cuda)"
            )
        found = device_cls or device_class(device)
        file = PresetsFile.read(path)
        tables = file.device_tables(found, quick)
        free = free_memory(device, free_bytes)
        whole = file.part("wholemodel", quick, device)
        part = "[distributed.quick]" if quick else "[distributed]"
        unknown = sorted(set(whole) - {f.name for f in fields(WholeModelSizes)})
        if unknown:
            raise GpuConceptsError(f"[wholemodel.{device}]: unknown sizes {', '.join(unknown)}")
        return cls(
            device=device,
            device_cls=found,
            quick=quick,
            presets=presets_within(tables, found, free),
            sweeps=sweeps_within(tables, free),
            claims=ClaimSizes.from_table(tables["claims"]),
            wholemodel=from_record(WholeModelSizes, whole, f"[wholemodel.{device}]"),
            distributed=from_record(DistributedSizes, file.part("distributed", quick), part),
        )
