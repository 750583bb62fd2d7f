"""The roofs as a registry: one class per roof, one list, placement as a loop; and no roof is
ever timed from the kernel's own operations, for any workload."""

from __future__ import annotations

import dataclasses
from dataclasses import replace
from typing import ClassVar

import pytest

from gpuconcepts import roofline
from gpuconcepts.measure import Measurement
from gpuconcepts.roofline import (
    ROOFS,
    Bound,
    MemoryLevel,
    Peaks,
    Reference,
    Roof,
    RoofKind,
    references_of,
    verdict,
)
from gpuconcepts.workloads import WORKLOADS

PEAKS = Peaks(
    "cpu", 1e11, 1e10, "float32", levels=(MemoryLevel("L2", 2**20, 1e11),),
    latency_seconds=3e-6, op_seconds=1e-6, cold_latency_seconds=2e-5, line_bytes=64,
    random_sweep=((2**28, 16, 3e7),), cold_sweep=((2**20, 1e-3),),
    gemm_sweep=((1, 16, False, 1e6), (64, 2048, False, 1e7), (1, 16, True, 1e5)),
    activation_per_s=1e6,
)  # fmt: skip
"""Ceilings with every sweep measured, and sweeps so slow that any roof read from them would
bind every kernel."""

SIZES = {
    "B": 4, "n": 16, "L": 8, "d": 16, "d_in": 16, "d_out": 16, "C_in": 4, "C_out": 4, "C": 4, "H": 8,
    "W": 8, "H_out": 8, "W_out": 8, "K": 3, "S": 8, "d_h": 16, "N": 1024, "heads": 2, "s": 4,
}  # fmt: skip
"""Small sizes of every symbol any workload reads."""

SWEEPS = ("gemm_sweep", "cold_sweep", "activation_per_s")
"""The fields of Peaks that sweep a kernel's own kind of operation: diagnoses read them."""

GATHER_SWEEP = "random_sweep"
"""The gather sweep: a ceiling since 2026-12-07 (issue 45: "a gather rate from tables unlike the
book's"), read by the memory roof for rows fetched at random only; its tables keep 2x from every
judged lookup's (tests/test_ceilings.py)."""


def _kernel(name: str, *, flush: bool) -> Measurement:
    """A measurement of workload ``name`` at :data:`SIZES`, with its counts and accesses."""
    workload = WORKLOADS[name]
    params = dict(SIZES)
    flops, nbytes = workload.counts(params)
    return Measurement(name, "cpu", params, (1e-3, 1.1e-3, 1.2e-3), flops, nbytes, flush=flush,
                       ops=40, calls=2, **workload.access(params))  # fmt: skip


def _own_references(m: Measurement) -> dict[str, tuple[float, ...]]:
    """References timed from ``m``'s own operations, as runs saved before 2026-12-06 hold them:
    its products bare, its lookup's point of the random sweep, the activation's rate, each
    absurdly fast, so that a roof that read them would move."""
    keys = [Reference("product", shape, flush=m.flush).key
            for _, shape in roofline.gemm_products(m)]  # fmt: skip
    keys += ["activation_per_s", "random 268435456 16 262144"]
    rounds = len(m.raw_seconds)
    return {key: (1e-12 if key.startswith("product") else 1e15,) * rounds for key in keys}


@pytest.mark.parametrize("flush", [False, True])
@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_no_roof_reads_a_time_of_the_kernels_own_operations(name: str, flush: bool) -> None:
    m = _kernel(name, flush=flush)
    # what it is timed beside are the overhead roof's floors, microbenchmarks of their own
    assert all(ref.is_floor for ref in references_of(m))
    assert {ref.peak for ref in references_of(m)} <= set(roofline.FLOORS)
    # a roof needs only the ceilings measured once, never a sweep of its own kind of operation
    # (the gather sweep is a ceiling, 2x from every judged table)
    assert all(set(roof.needs).isdisjoint(SWEEPS) for roof in ROOFS)
    found = verdict(m, PEAKS)
    # the kernel's own operations, timed beside it in an old run, move no roof
    assert verdict(replace(m, references=_own_references(m)), PEAKS) == found
    # nor does any sweep of its kind: they feed the diagnoses only
    bare = replace(PEAKS, **dict.fromkeys(SWEEPS[:2], ()), activation_per_s=None)
    assert verdict(m, bare) == found
    # the gather sweep moves only the roof of rows fetched at random
    without = verdict(m, replace(PEAKS, **{GATHER_SWEEP: ()}))
    if m.random_rows:
        assert found.roof_seconds >= without.roof_seconds  # a random row is never cheaper
    else:
        assert without == found
    # while the ceilings do: the verdict is theirs
    faster = replace(PEAKS, flops_per_s=1e13, bytes_per_s=1e12, latency_seconds=1e-9,
                     op_seconds=1e-9, cold_latency_seconds=1e-9,
                     levels=(MemoryLevel("L2", 2**20, 1e13),))  # fmt: skip
    assert verdict(m, faster).roof_seconds < found.roof_seconds


def test_the_registry_holds_one_roof_of_each_kind() -> None:
    assert [roof.kind for roof in ROOFS] == ["compute", "memory", "overhead"]
    fields = {f.name for f in dataclasses.fields(Peaks)}
    for roof in ROOFS:
        assert set(roof.needs) <= fields, roof


def test_a_new_roof_is_one_class_in_the_list(monkeypatch: pytest.MonkeyPatch) -> None:
    class Tensor(Roof):
        """A made-up roof: twice the compute bound, of a kind renderers already know."""

        kind: ClassVar[RoofKind] = "compute"
        needs: ClassVar[tuple[str, ...]] = ("flops_per_s",)

        def bound(self, m: Measurement, peaks: Peaks) -> Bound:
            return Bound(self, "tensor", 2 * m.flops / peaks.flops_per_s)

    monkeypatch.setattr("gpuconcepts.roofline.roofs.ROOFS", (*ROOFS, Tensor()))
    m = Measurement("x", "cpu", {}, (1.0,), 2.5e10, 1.0)
    found = verdict(m, PEAKS)
    assert (found.name, found.kind, found.attained) == ("tensor", "compute", 0.5)
    assert roofline.place(m, PEAKS).kind == "compute"


def test_a_roof_without_its_ceiling_sets_no_bound() -> None:
    bare = Peaks("cpu", 1e11, 1e10, "float32")
    m = Measurement("x", "cpu", {}, (1.0,), 1.0, 1.0)
    assert [b.kind for b in verdict(m, bare).bounds] == ["compute", "memory"]


def test_the_roofline_package_is_files_under_four_hundred_lines() -> None:
    from pathlib import Path

    folder = Path(roofline.__file__).parent
    lengths = {p.name: len(p.read_text(encoding="utf-8").splitlines()) for p in folder.glob("*.py")}
    assert {"roofs.py", "diagnosis.py", "peaks.py"} <= set(lengths)
    assert max(lengths.values()) < 400, lengths


def test_random_rows_cost_their_lines_at_the_random_rate_not_the_stream() -> None:
    """The memory roof of a random lookup (2026-12-07): every row's whole lines at the gather
    sweep's line rate, when that is longer than its bytes at the streaming bandwidth; the
    same rows consecutive are not charged it."""
    peaks = Peaks("cpu", 1e11, 1e10, "float32", line_bytes=64, random_sweep=((2**28, 16, 5e6),))
    sizes = {"N": 2**24, "B": 1024, "L": 64, "d": 4, "s": 4}
    rows = Measurement("dlrm-random", "cpu", sizes, (1.0,), 0, 2**20,
                       random_rows=2**16, row_bytes=16)  # fmt: skip
    v = verdict(rows, peaks)
    assert v.kind == "memory"
    assert v.roof_seconds == pytest.approx(2**16 / 5e6)  # a line a row, at 5 M lines/s
    consecutive = replace(rows, workload="dlrm-sequential", random_rows=None, row_bytes=None)
    streamed = verdict(consecutive, peaks)
    assert streamed.kind == "memory"
    assert streamed.roof_seconds < v.roof_seconds / 10  # its bytes at the streaming bandwidth
