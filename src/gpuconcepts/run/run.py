r"""The Run: everything one machine measured, saved once and read by every page and command.

A :class:`Run` holds the provenance of a machine and its software, the measured peaks, every
measurement (raw repetition times, FLOPs and bytes, sizes, dtype, flush policy), the facts
counted along the way, the raw results of the whole-model experiments and of the distributed
measurement (:data:`PARTS`; a part not measured is recorded with the reason in ``skipped``),
and the claim results. :func:`~gpuconcepts.collect.collect` measures one; ``to_json`` and :func:`load` save and
read it. Loading checks everything: the schema version, every field,
and that each measurement's FLOPs and bytes still equal the catalogue's formulas at its sizes
(a stale count is refused, never rendered). Nothing here needs torch.

>>> from gpuconcepts.measure import Measurement
>>> from gpuconcepts.roofline import ABOVE_EVERY_ROOF, Peaks, observe, place
>>> m = Measurement("mlp", "cpu", {"B": 4, "d_in": 8, "d_out": 16, "s": 4, "dtype": "float32"},
...                 (2e-6, 1e-6, 3e-6), 1024, 896)
>>> run = Run(Provenance.example(), Peaks("cpu", 1e11, 1e10, "float32"), (m,), {}, ())
>>> Run.from_json(run.to_json()) == run
True
>>> Run.from_json(run.to_json().replace('"flops": 1024', '"flops": 1000'), source="r.json")
Traceback (most recent call last):
...
gpuconcepts.errors.GpuConceptsError: r.json: measurements[0] (mlp at B=4, d_in=8, d_out=16, float32): flops is 1000, but mlp_flops at its sizes is 1,024 (a stale count)
"""

# torch is imported inside functions on purpose (README, Rules: 3).

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.files import write_atomic
from gpuconcepts.measurement import Measurement
from gpuconcepts.records import from_record
from gpuconcepts.results.claim import ClaimRecord, ClaimResult, Verdict
from gpuconcepts.results.distributed import DistributedReport
from gpuconcepts.results.ledger import tally
from gpuconcepts.results.wholemodel import WholeModelResults
from gpuconcepts.roofline import Peaks, place
from gpuconcepts.roofline.roofs import verdict
from gpuconcepts.run._migrations import from_3, from_5, from_6, from_7, from_8
from gpuconcepts.run.provenance import Provenance
from gpuconcepts.run.reading import (
    MAX_DEPTH,
    check_numbers,
    check_sizes,
    entry,
    read_measurements,
    read_text,
    registered_predictions,
    unique_keys,
    whole_number,
)

Fact = dict[str, Any]
"""A fact of a run (a count, an allocation's size, a backend's name), by field."""


SCHEMA = 9
"""Version of the Run file format; :func:`load` reads it and the versions of
:data:`MIGRATIONS`, and refuses any other. Version 2 added the whole-model and distributed
parts (``wholemodel``, ``distributed``, ``skipped``); version 3 the paired rounds (a
measurement's ``group``), the roofs' reference kernels, the noise probes in the provenance and
the claims' ``anomalies``; version 4 the model's version in the provenance
(``model_version``); version 5 claims whose visibility reads no prediction (a saved claim's
``visible`` is false for every reason it was not visible but an alternative inside its pass
region); version 6 a CPU's physical limit drawn only at a measured clock, never
/proc/cpuinfo's (issue 45, item 6); version 7 the name of the kernel a decode sweep read its
weights' floor from (``reference_kernel``: the STREAM triad since version 7); version 8 the
independent blocks each distributed workload was timed in (a collective's ``blocks``, the
sizes' ``timed_blocks``; issue 45, item 5); version 9 the repetitions each ceiling the
prediction reads was taken from (the peaks' ``ceiling_seconds``; issue 45, items 2 and 5)."""


def _from_4(data: dict[str, Any]) -> dict[str, Any]:
    """A version 4 run as version 5. Until 2026-12-07 a claim was also "not visible" when the
    measured ceilings' prediction fell outside its pass region, which its test alone no longer
    says (ledger 1 reads no prediction): a claim saved "not visible" keeps that verdict, and
    the reason it was saved with, as a claim the run could not show (``visible`` false).
    Judged again by today's judges it may read otherwise; the book lists such flips."""
    claims = data.get("claims")
    if isinstance(claims, list):
        claims = [
            c | {"visible": False}
            if isinstance(c, dict) and c.get("verdict") == "not visible"
            else c
            for c in claims
        ]
    return {**data, "schema": 5, "claims": claims}


MIGRATIONS: Mapping[int, Callable[[dict[str, Any]], dict[str, Any]]] = {
    3: from_3,
    4: _from_4,
    5: from_5,
    6: from_6,
    7: from_7,
    8: from_8,
}
"""The one map from an older schema to the next: :meth:`Run.from_dict` applies them in turn
until the run is at :data:`SCHEMA`; nothing else reads an older file, so no judge, page or
command keeps a branch for an old run's shape."""

PARTS = ("wholemodel", "distributed")
"""The parts of a run beyond the profile and the core claims, in the order they are judged:
the whole-model experiments (:mod:`gpuconcepts.claims.wholemodel`) and the distributed
measurement (:mod:`gpuconcepts.distributed`)."""


# -- the run -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Run:
    """Everything one machine measured in one collection; see the module docstring.

    ``wholemodel`` and ``distributed`` hold what those experiments measured (None when the
    part was not measured, ``skipped`` then saying why, by part name).
    """

    provenance: Provenance
    peaks: Peaks
    measurements: tuple[Measurement, ...]
    facts: Mapping[str, Fact]
    claims: tuple[ClaimResult, ...]
    wholemodel: WholeModelResults | None = None
    distributed: DistributedReport | None = None
    skipped: Mapping[str, str] = field(default_factory=dict)
    stored_claims: tuple[ClaimResult, ...] | None = field(default=None, compare=False)
    """The claims as the run was saved with them, when
    :func:`~gpuconcepts.claims.judge.judged_now` judged them again
    (None otherwise: ``claims`` are those it was saved with). Never written: the file keeps
    ``claims``."""
    registered: tuple[float | None, ...] | None = field(default=None, compare=False)
    """Each measurement's prediction as the file stored it when the run was measured (its
    ``summary.predicted_seconds``; None for one that stored none), for a run read from a file;
    None for a run made in memory, which registers today's (:attr:`registered_seconds`).
    Kept so that a model refitted on the run shows what the refit gained in sample."""

    def __post_init__(self) -> None:
        if self.registered is not None and len(self.registered) != len(self.measurements):
            raise GpuConceptsError(
                f"Run.registered holds {len(self.registered)} predictions for "
                f"{len(self.measurements)} measurements (one each, in run order)"
            )

    @property
    def registered_seconds(self) -> tuple[float | None, ...]:
        """Each measurement's registered prediction, in run order: the one its file stored
        (:attr:`registered`), else the one the run writes now, ledger 2's
        (:func:`~gpuconcepts.roofline.roofs.verdict` under the run's peaks)."""
        if self.registered is not None:
            return self.registered
        return tuple(verdict(m, self.peaks).roof_seconds for m in self.measurements)

    @property
    def label(self) -> str:
        """The run for people, unique: device, time, commit and sizes (see
        :attr:`Provenance.label`); the device alone is ``provenance.device_name``."""
        return self.provenance.label

    @property
    def counts(self) -> dict[Verdict, int]:
        """How many claims hold, do not hold, or are not visible on this device."""
        return tally(self.claims)

    def select(self, workload: str, **sizes: object) -> list[Measurement]:
        """Every measurement of ``workload`` whose params match ``sizes``, in run order."""
        return [
            m
            for m in self.measurements
            if m.workload == workload and all(m.params.get(k) == v for k, v in sizes.items())
        ]

    def measurement(self, workload: str, **sizes: object) -> Measurement:
        """The one measurement of ``workload`` at ``sizes`` (the first when several match)."""
        found = self.select(workload, **sizes)
        if not found:
            shown = ", ".join(f"{k}={v}" for k, v in sizes.items())
            raise GpuConceptsError(
                f"{self.label}: no {workload} measurement" + (f" at {shown}" if shown else "")
            )
        return found[0]

    def claim(self, key: str) -> ClaimResult:
        """The claim result with this key (e.g. ``"kv-cache-exact"``)."""
        for result in self.claims:
            if result.key == key:
                return result
        keys = ", ".join(r.key for r in self.claims)
        raise GpuConceptsError(f"no claim {key!r} in this run; it has {keys}")

    def by_architecture(self) -> dict[str, list[ClaimResult]]:
        """Claim results grouped by architecture, in the order they were judged."""
        groups: dict[str, list[ClaimResult]] = {}
        for result in self.claims:
            groups.setdefault(result.architecture, []).append(result)
        return groups

    @property
    def saved_claims(self) -> tuple[ClaimResult, ...]:
        """The claims as the run was saved with them (before
        :func:`~gpuconcepts.claims.judge.judged_now`)."""
        return self.claims if self.stored_claims is None else self.stored_claims

    @property
    def judgeable(self) -> bool:
        """Whether the run records what its claims are judged from: the claims' sizes, or a
        part (the whole model, beyond one device)."""
        parts = (self.wholemodel, self.distributed)
        recorded = self.provenance.sizes.get("claims")
        return isinstance(recorded, Mapping) or any(part is not None for part in parts)

    # -- JSON ------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict: ``schema``, ``provenance``, ``peaks``, ``measurements`` (each with a
        derived ``summary``), ``facts``, ``wholemodel``, ``distributed`` (null when not
        measured), ``skipped`` (why, by part) and ``claims``."""
        return {
            "schema": SCHEMA,
            "provenance": self.provenance.to_dict(),
            "peaks": self.peaks.to_dict(),
            "measurements": [
                self._measurement_record(m, predicted)
                for m, predicted in zip(self.measurements, self.registered_seconds, strict=True)
            ],
            "facts": {k: dict(v) for k, v in self.facts.items()},
            "wholemodel": None if self.wholemodel is None else self.wholemodel.to_dict(),
            "distributed": None if self.distributed is None else self.distributed.record(),
            "skipped": dict(self.skipped),
            "claims": [c.to_dict() for c in self.claims],
        }

    def _measurement_record(self, m: Measurement, predicted: float | None) -> dict[str, Any]:
        """A measurement's fields, plus (for readers of the file) its statistics, its place
        under this run's peaks and its registered prediction ``predicted`` (loading keeps only
        that one: :attr:`registered`)."""
        where = place(m, self.peaks)
        return {
            **m.to_dict(),
            "summary": {
                "seconds": m.seconds,
                "iqr_seconds": m.iqr_seconds,
                "flops_per_s": m.flops_per_s,
                "bytes_per_s": m.bytes_per_s,
                "intensity": m.intensity,
                "predicted_seconds": predicted,
                "roofline_ratio": None if predicted is None else m.seconds / predicted,
                "bound": where.bound,
                "observed": where.observed,
                "attained": where.attained,
            },
        }

    def to_json(self) -> str:
        """The run as strict JSON text: every number finite (JSON has no infinities)."""
        return json.dumps(self.to_dict(), indent=1, allow_nan=False) + "\n"

    @classmethod
    def from_json(cls, text: str, *, source: str = "<run>") -> Run:
        """Parse and validate a run; every problem is a GpuConceptsError naming ``source`` and
        the entry: bad JSON, nesting deeper than :data:`MAX_DEPTH`, a number that is not
        finite (not a number, an infinity, ``1e999``) or a whole number beyond 64 bits anywhere,
        then each field (see :meth:`from_dict`)."""
        try:
            data = json.loads(text, parse_int=whole_number, object_pairs_hook=unique_keys(source))
        except json.JSONDecodeError as error:
            raise GpuConceptsError(
                f"{source}: not a valid JSON file (truncated or damaged?): {error}"
            ) from None
        except RecursionError:
            raise GpuConceptsError(
                f"{source}: nested deeper than a run can be (at most {MAX_DEPTH} levels)"
            ) from None
        check_numbers(data, source)
        return cls.from_dict(data, source=source)

    @classmethod
    def from_dict(cls, data: object, *, source: str = "<run>") -> Run:
        """Validate a parsed run (see :meth:`from_json`)."""
        if not isinstance(data, dict):
            raise GpuConceptsError(f"{source}: a run is a JSON object, not {type(data).__name__}")
        schema = data.get("schema")
        while isinstance(schema, int) and schema in MIGRATIONS:
            data = MIGRATIONS[schema](data)
            schema = data.get("schema")
        if schema != SCHEMA:
            raise GpuConceptsError(
                f"{source}: unknown schema version {schema!r}; this gpuconcepts reads {SCHEMA}"
            )
        for name in ("provenance", "peaks", "measurements", "facts", *PARTS, "skipped", "claims"):
            if name not in data:
                raise GpuConceptsError(f"{source}: missing field {name!r}")
        with entry(source, "provenance"):
            provenance = from_record(Provenance, data["provenance"])
        with entry(source, "provenance.sizes"):
            check_sizes(provenance.sizes)
        with entry(source, "peaks"):
            peaks = from_record(Peaks, data["peaks"])
        measurements = read_measurements(data["measurements"], source)
        registered = registered_predictions(data["measurements"], source)
        facts = data["facts"]
        if not isinstance(facts, dict) or not all(isinstance(v, dict) for v in facts.values()):
            raise GpuConceptsError(f"{source}: facts must be an object of objects")
        wholemodel = distributed = None
        if data["wholemodel"] is not None:
            with entry(source, "wholemodel"):
                wholemodel = from_record(WholeModelResults, data["wholemodel"])
        if data["distributed"] is not None:
            with entry(source, "distributed"):
                distributed = from_record(DistributedReport, data["distributed"])
        skipped = _skipped(data, source)
        claims = []
        if not isinstance(data["claims"], list):
            raise GpuConceptsError(f"{source}: claims must be a list")
        for i, record in enumerate(data["claims"]):
            with entry(source, f"claims[{i}]"):
                claims.append(from_record(ClaimRecord, record).result())
        return cls(
            provenance,
            peaks,
            tuple(measurements),
            facts,
            tuple(claims),
            wholemodel,
            distributed,
            skipped,
            registered=registered,
        )

    def save(self, path: str | Path) -> None:
        """Write the run to ``path`` as JSON, at once or not at all (parent folders are made;
        see :func:`gpuconcepts.files.write_atomic`): an earlier file there survives a failed
        save byte for byte."""
        write_atomic(path, self.to_json())


def _skipped(data: dict[str, Any], source: str) -> dict[str, str]:
    """The parts a run left out, each with its reason: only a part of :data:`PARTS` that
    holds nothing."""
    skipped: object = data["skipped"]
    if not isinstance(skipped, dict) or not all(isinstance(v, str) for v in skipped.values()):
        raise GpuConceptsError(f"{source}: skipped must be an object of reasons (text)")
    for part in skipped:
        if part not in PARTS or data[part] is not None:
            raise GpuConceptsError(
                f"{source}: skipped names {part!r}, which is not a part this run left out "
                f"(the parts are {', '.join(PARTS)})"
            )
    return skipped


def load(path: str | Path) -> Run:
    """Read and validate a saved run; a missing or bad file is a GpuConceptsError naming it.

    Only a regular file of at most :data:`MAX_RUN_BYTES` is read: a FIFO, a device
    (``/dev/zero``) or a directory is refused without waiting or reading.
    """
    path = Path(path)
    return Run.from_json(read_text(path), source=str(path))


def load_all(folder: str | Path) -> list[Run]:
    """Every ``*.json`` run in a folder, sorted by file name (none when it does not exist)."""
    folder = Path(folder)
    return [load(p) for p in sorted(folder.glob("*.json"))] if folder.is_dir() else []
