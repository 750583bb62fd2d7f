r"""Text rendering: runs, measurements, claims and comparisons as text for the command line, and
the sentences the book's pages say about a measurement.

One module per subject: :mod:`.runs` (a run and its measurements), :mod:`.sentences` (what
the pages say about a measurement), :mod:`.claims` (the post's claims), :mod:`.compare`
(several runs side by side); this package re-exports them.

Everything here reads values (:class:`~gpuconcepts.run.Run`, measurements, claim results) and
returns strings; nothing measures. Times are shown as the median with its interquartile range,
the one statistic of :class:`~gpuconcepts.measure.Measurement`.

>>> from gpuconcepts.measure import Measurement
>>> from gpuconcepts.roofline import Peaks
>>> p = Peaks(device="cpu", flops_per_s=1e11, bytes_per_s=1e10, dtype="float32")
>>> m = Measurement("mlp", "cpu", {"B": 64}, (0.011, 0.01, 0.012), 1e9, 2e7)
>>> print(format_measurements([m], p))
workload  sizes  median ± IQR  GFLOP/s  GB/s  FLOP/B  roofline  measured/roofline  predicted  bound, attained (spread)
mlp       B=64   11 ms ± 1 ms     90.9  1.82      50     10 ms                1.1    compute     compute 91% (87%–95%)
"""

from gpuconcepts.render.text.claims import (
    WIDTH,
    format_claim,
    format_claims,
    tally_sentence,
    tally_text,
)
from gpuconcepts.render.text.compare import compare_dict, compare_rows, format_compare, preset_rows
from gpuconcepts.render.text.runs import (
    EXPLAINED,
    TF32_ADDS_ONLY,
    budget_lines,
    explained,
    format_measurements,
    format_peaks,
    format_run,
    kernel_sizes,
    observed,
    ran_in,
    roof_label,
    roof_name,
    time_spread,
    unmeasured_cache,
)
from gpuconcepts.render.text.sentences import (
    chain_bound,
    chain_sentence,
    cold_read_sentence,
    cold_start_sentence,
    gemm_shape_sentence,
    random_access_sentence,
    why_unexplained,
)

__all__ = [
    "EXPLAINED",
    "TF32_ADDS_ONLY",
    "WIDTH",
    "budget_lines",
    "chain_bound",
    "chain_sentence",
    "cold_read_sentence",
    "cold_start_sentence",
    "compare_dict",
    "compare_rows",
    "explained",
    "format_claim",
    "format_claims",
    "format_compare",
    "format_measurements",
    "format_peaks",
    "format_run",
    "gemm_shape_sentence",
    "kernel_sizes",
    "observed",
    "preset_rows",
    "ran_in",
    "random_access_sentence",
    "roof_label",
    "roof_name",
    "tally_sentence",
    "tally_text",
    "time_spread",
    "unmeasured_cache",
    "why_unexplained",
]
