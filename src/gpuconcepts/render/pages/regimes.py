"""The three regimes where the model is introduced (the questions and bound pages): compute,
memory and overhead, with the roofline of a recorded GPU run (its measured peak, bandwidth and
launch) drawn with its ridge point and the overhead floors of two small kernels.

Without a recorded GPU run the datasheet's default GPU and the library's assumed launch are
drawn instead.

>>> glue = regimes([])
>>> glue["regimes_gpu"], glue["regimes_launch"], glue["regimes_ridge"]
('the H100 SXM datasheet (bf16)', '5 µs', '295')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from gpuconcepts import formulas, units
from gpuconcepts.hardware import DEFAULT_GPU, GPUS, LAUNCH_FLOOR_SECONDS, lookup
from gpuconcepts.render.pages import Math
from gpuconcepts.render.pages.gpu_basics import leading_run
from gpuconcepts.render.plots.gpu_diagrams import REGIME_FLOORS, three_regimes
from gpuconcepts.render.text.runs import floor_spread, why_bare

if TYPE_CHECKING:
    from gpuconcepts.render.pages import Glue
    from gpuconcepts.run import Run


def regimes(runs: Sequence[Run]) -> Glue:
    """The glue of the three regimes: the kernel-time equation, the figure, and the numbers the
    text quotes (ridge point, launch, the small kernels whose floor sits below the peak). The
    launch is given with its spread, or bare and said once why, for a run that kept none."""
    run = leading_run(runs)
    if run is not None and run.peaks.latency_seconds is not None:
        gpu = lookup(run.provenance.device_name)
        name = gpu.name if gpu is not None else run.provenance.device_name
        whose = f"the {name}'s recorded {run.peaks.dtype} run"
        flops, bandwidth = run.peaks.flops_per_s, run.peaks.bytes_per_s
        launch = run.peaks.latency_seconds
        # with its spread, or said once on the page why it has none
        said = floor_spread(run.peaks, "latency_seconds") + why_bare(run.peaks, "latency_seconds")
        title = f"Three regimes on the {name}, as its {run.peaks.dtype} run measured it"
    else:
        sheet = GPUS[DEFAULT_GPU]
        dtype = sheet.sixteen_bit
        whose = f"the {sheet.name} datasheet ({dtype})"
        flops, bandwidth = sheet.flops_per_s[dtype], sheet.bytes_per_s
        launch = LAUNCH_FLOOR_SECONDS
        said = units.si(launch, "s")
        title = f"Three regimes on the {sheet.name} datasheet ({dtype})"
    big, small = (flops / share * launch for share in REGIME_FLOORS)
    return {
        "regimes_eq": Math(formulas.kernel_seconds.equation()),
        "regimes_figure": three_regimes(flops, bandwidth, launch, title),
        "regimes_gpu": whose,
        "regimes_peak": units.si(flops, "FLOP/s"),
        "regimes_bw": units.si(bandwidth, "B/s"),
        "regimes_ridge": units.significant(float(formulas.ridge_point(P=flops, beta=bandwidth))),
        "regimes_launch": said,
        "regimes_big": units.in_words(big),
        "regimes_big_share": units.percent(1 / REGIME_FLOORS[0]),
        "regimes_small": units.in_words(small),
        "regimes_small_share": units.percent(1 / REGIME_FLOORS[-1]),
    }
