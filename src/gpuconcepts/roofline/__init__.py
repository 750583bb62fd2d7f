r"""The roofline model: a device's measured ceilings, and measurements placed under them.

The verdict is the post's model, ``time ≥ max(F/P, Q/β, overhead)``, with P, each memory
level's β and the latency floors measured once by microbenchmarks apart from every kernel
(:mod:`~gpuconcepts.roofline.peaks`). The roofs are a registry
(:mod:`~gpuconcepts.roofline.roofs`: one class per roof, one list, one loop); what explains a
gap below a kernel's roof is a diagnosis measured apart (:mod:`~gpuconcepts.roofline.diagnosis`),
which never changes the verdict. :mod:`~gpuconcepts.roofline.model` says it in the book's words.
A :class:`~gpuconcepts.measure.Measurement` knows nothing of any machine model, so one
measurement can be read against this machine's roofs or another's.

>>> peaks = Peaks(device="cpu", flops_per_s=1e11, bytes_per_s=1e10, dtype="float32")
>>> ridge(peaks.flops_per_s, peaks.bytes_per_s)
10.0
>>> classify(0.25, peaks), classify(10, peaks), classify(60, peaks)
('memory', 'compute', 'compute')
>>> predicted_seconds(flops=2e9, bytes=1e8, peaks=peaks)
0.02
>>> attainable(1.0, peaks)
10000000000.0
"""

from gpuconcepts.roofline.counts import (
    activation_elements,
    gemm_products,
    moved_bytes,
    random_table_bytes,
    working_set_bytes,
)
from gpuconcepts.roofline.diagnosis import (
    COLD_START,
    FUSED,
    MECHANISMS,
    OPERATION_CHAIN,
    RANDOM_ACCESS,
    SHAPE,
    Diagnosis,
    diagnoses,
    diagnosis,
    shape_seconds,
)
from gpuconcepts.roofline.mechanisms import DIAGNOSES, MODEL, model_seconds
from gpuconcepts.roofline.model import (
    ABOVE_EVERY_ROOF,
    FASTER_GATHER,
    FASTER_PATH,
    PATH_FACTOR,
    GapSplit,
    Placement,
    Side,
    attainable,
    beaten_by,
    beats_every_roof,
    changes_side,
    classify,
    faster_gather,
    faster_path,
    finding,
    gap_split,
    observe,
    overhead_flops_per_s,
    place,
    predicted_seconds,
    roof_times,
    streaming_seconds,
)
from gpuconcepts.roofline.peaks import MemoryLevel, Peaks, RateSweep, ridge
from gpuconcepts.roofline.points import RANDOM_ROWS_BEFORE, random_rows_per_call
from gpuconcepts.roofline.references import FLOORS, Reference, paired_peaks, references_of
from gpuconcepts.roofline.roofs import (
    OVERHEAD,
    ROOFS,
    Bound,
    ComputeRoof,
    MemoryRoof,
    OverheadRoof,
    Roof,
    RoofKind,
    Verdict,
    level,
    verdict,
)

# Names of the retired paired roofs (2026-12-06), kept so that older callers import: the
# overhead roof took the place of the per-call and chain floors, and the GEMM shape is a
# diagnosis (:data:`SHAPE`), never a verdict's name.
PER_CALL = CHAIN = OVERHEAD
GEMM_SHAPE = SHAPE

__all__ = [
    "ABOVE_EVERY_ROOF",
    "CHAIN",
    "COLD_START",
    "DIAGNOSES",
    "FASTER_GATHER",
    "FASTER_PATH",
    "FLOORS",
    "FUSED",
    "GEMM_SHAPE",
    "MECHANISMS",
    "MODEL",
    "OPERATION_CHAIN",
    "OVERHEAD",
    "PATH_FACTOR",
    "PER_CALL",
    "RANDOM_ACCESS",
    "RANDOM_ROWS_BEFORE",
    "ROOFS",
    "SHAPE",
    "Bound",
    "ComputeRoof",
    "Diagnosis",
    "GapSplit",
    "MemoryLevel",
    "MemoryRoof",
    "OverheadRoof",
    "Peaks",
    "Placement",
    "RateSweep",
    "Reference",
    "Roof",
    "RoofKind",
    "Side",
    "Verdict",
    "activation_elements",
    "attainable",
    "beaten_by",
    "beats_every_roof",
    "changes_side",
    "classify",
    "diagnoses",
    "diagnosis",
    "faster_gather",
    "faster_path",
    "finding",
    "gap_split",
    "gemm_products",
    "level",
    "model_seconds",
    "moved_bytes",
    "observe",
    "overhead_flops_per_s",
    "paired_peaks",
    "place",
    "predicted_seconds",
    "random_rows_per_call",
    "random_table_bytes",
    "references_of",
    "ridge",
    "roof_times",
    "shape_seconds",
    "streaming_seconds",
    "verdict",
    "working_set_bytes",
]
