"""The migrations of the run file's older schemas, each taking a run's parsed JSON at one
version to the next; the one map that applies them is
:data:`gpuconcepts.run.run.MIGRATIONS`, and nothing else reads an older file. What a stored
run's shape lacks, or holds from a retired rule, is settled here, once, when it is read: by its
schema version, and by its date only where the schema cannot tell (:data:`PRECISION_SINCE`).
"""

from __future__ import annotations

from typing import Any

from gpuconcepts.hardware import dtype_name
from gpuconcepts.results.wholemodel import BATCH_1_PRODUCT

PRECISION_SINCE = "2026-12-06T20:35:26Z"
"""When every ceiling began to run in the precision of the run's dtype (``kernels.precision``,
commit e400875). A run recorded before it ran its GEMM sweep in PyTorch's default precision for
products, FP32 for a tf32 run (TF32 products are off by default), while its kernels ran in
TF32: the recorded H200 tf32 run is one. Runs record the sweep's precision
(``sizes["gemm_sweep_dtype"]``) since 2026-12-07 03:07, after version 4 began; version 3 ran on
both sides of this moment, so its migration (:func:`from_3`) reads the run's date, and only
there."""


def from_3(data: dict[str, Any]) -> dict[str, Any]:
    """A version 3 run as version 4: recorded before the model had a version (ledger 2 scores
    it in sample), and before a claim's file told an unbounded prediction ("inf") from none
    (null): version 3 wrote null for both and read it as unbounded, which it keeps meaning."""
    provenance = data.get("provenance")
    if isinstance(provenance, dict):
        provenance = {**provenance, "model_version": ""}
        provenance = _with_sweep_dtype(provenance, data.get("peaks"))
    claims = data.get("claims")
    if isinstance(claims, list):
        claims = [_unbounded_where_null(c) for c in claims]
    return {**data, "schema": 4, "provenance": provenance, "claims": claims}


def _with_sweep_dtype(provenance: dict[str, Any], peaks: object) -> dict[str, Any]:
    """A version 3 provenance with the precision its GEMM sweep ran in, in its ``sizes``
    (``gemm_sweep_dtype``; where the run had a sweep and did not record it): float32 for a tf32
    run recorded before :data:`PRECISION_SINCE`, else the peaks' dtype."""
    sizes = provenance.get("sizes")
    if not isinstance(peaks, dict) or not peaks.get("gemm_sweep") or not isinstance(sizes, dict):
        return provenance
    if "gemm_sweep_dtype" in sizes or not isinstance(peaks.get("dtype"), str):
        return provenance
    dtype = dtype_name(peaks["dtype"])
    before = str(provenance.get("created_utc", "")) < PRECISION_SINCE
    ran = "float32" if dtype == "tf32" and before else dtype
    return {**provenance, "sizes": {**sizes, "gemm_sweep_dtype": ran}}


def _unbounded_where_null(claim: object) -> object:
    """A version 3 claim's null prediction and alternative as version 4 writes an infinity."""
    if not isinstance(claim, dict):
        return claim
    return claim | {
        name: "inf" for name in ("predicted", "alternative_value") if claim.get(name, 0) is None
    }


def from_5(data: dict[str, Any]) -> dict[str, Any]:
    """A version 5 run as version 6: a CPU's physical limit recorded before version 6 may
    have been drawn at /proc/cpuinfo's clock (which boost clocks pass) or, before the FMA
    table, for any AVX-512 CPU at two 512-bit units; it is dropped (unknown), as a run
    measured now says where it cannot measure the clock. A GPU's limit is its datasheet's,
    kept."""
    peaks = data.get("peaks")
    if isinstance(peaks, dict) and peaks.get("device") == "cpu":
        peaks = {**peaks, "physical_flops_per_s": None}
    return {**data, "schema": 6, "peaks": peaks}


def from_6(data: dict[str, Any]) -> dict[str, Any]:
    """A version 6 run as version 7: its decode sweeps name the kernel their floor was read
    from (``reference_kernel``). Every run of versions 4 to 6 (since 2026-12-01, before schema
    7) timed a batch-1 product through as many weight bytes as the model's matrices beside the
    steps, which version 7 replaced with the STREAM triad."""
    part = data.get("wholemodel")
    if isinstance(part, dict):
        part = {
            name: sweep | {"reference_kernel": BATCH_1_PRODUCT}
            if name in ("decode", "long_decode")
            and isinstance(sweep, dict)
            and sweep.get("reference_seconds")
            and "reference_kernel" not in sweep
            else sweep
            for name, sweep in part.items()
        }
    return {**data, "schema": 7, "wholemodel": part}


def from_7(data: dict[str, Any]) -> dict[str, Any]:
    """A version 7 run as version 8: every distributed workload of a run recorded before
    version 8 timed its repetitions in one block, after one warm-up, and says so
    (``blocks`` 1 for each collective, ``timed_blocks`` 1 in its sizes); version 8 times them
    in the presets' independent blocks. Its judges read the one block as before and say so
    beside the interval."""
    part = data.get("distributed")
    if isinstance(part, dict):
        sizes, collectives = part.get("sizes"), part.get("collectives")
        if isinstance(sizes, dict):
            sizes = {"timed_blocks": 1, **sizes}
        if isinstance(collectives, list):
            collectives = [{"blocks": 1, **c} if isinstance(c, dict) else c for c in collectives]
        part = {**part, "sizes": sizes, "collectives": collectives}
    return {**data, "schema": 8, "distributed": part}


def from_8(data: dict[str, Any]) -> dict[str, Any]:
    """A version 8 run as version 9: its peaks kept no repetitions of the ceilings they read
    (``ceiling_seconds``, kept since version 9, absent from the file when empty), so ledger 2
    reads those ceilings as exact: a row's interval is its measured time's alone, and says its
    ceiling's was not recorded (a floor timed beside its kernel keeps its rounds in the
    measurement, and is read). Its peaks are read as they are."""
    return {**data, "schema": 9}
