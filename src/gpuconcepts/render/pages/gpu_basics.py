"""The "What a GPU is" chapter: the parts of a GPU with their sizes and rates from the datasheet
table (:data:`gpuconcepts.hardware.GPUS`), and the kernel launch as a recorded GPU run measured it.

The GPU the chapter draws is the one a recorded run measured (the H200 of ``docs/runs/``), or the
table's default GPU when no run on a listed GPU is recorded.

>>> glue = anatomy([])
>>> glue["gpu"], glue["sms"], glue["tc_per_sm"], glue["l2"]
('H100 SXM', '132', '4', '50 MiB')
>>> glue["launch_source"]
'the library assumes about 5 µs where no GPU run is recorded'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from gpuconcepts import formulas, units
from gpuconcepts.hardware import DEFAULT_GPU, GPUS, LAUNCH_FLOOR_SECONDS, lookup
from gpuconcepts.render.markdown import markdown_table
from gpuconcepts.render.plots.gpu_diagrams import gpu_anatomy
from gpuconcepts.render.text.runs import floor_spread, why_bare

if TYPE_CHECKING:
    from gpuconcepts.hardware import GPU
    from gpuconcepts.render.pages import Glue
    from gpuconcepts.run import Run


def leading_run(runs: Sequence[Run]) -> Run | None:
    """The recorded GPU run the chapter tells: a 16-bit one on a listed GPU first, else any run
    on a listed GPU, else None."""
    listed = [r for r in runs if r.peaks.device == "cuda" and lookup(r.provenance.device_name)]
    sixteen = [r for r in listed if r.peaks.dtype in {"bfloat16", "float16"}]
    chosen = sixteen or listed
    return chosen[0] if chosen else None


def _per_sm(value: int | None, sms: int) -> str:
    return units.NOTHING if value is None else units.binary_bytes(value * sms)


def datasheet_rows() -> list[list[str]]:
    """Each datasheet GPU's row of the chapter's table: its SMs, Tensor Cores, L2, HBM
    bandwidth and 16-bit peak."""
    return [
        [
            g.name,
            units.plain_number(g.sms or 0),
            units.plain_number(g.tensor_cores or 0),
            units.binary_bytes(g.l2_bytes),
            units.si(g.bytes_per_s, "B/s"),
            f"{units.si(g.flops_per_s[g.sixteen_bit], 'FLOP/s')} ({g.sixteen_bit})",
        ]
        for g in GPUS.values()
    ]


def anatomy(runs: Sequence[Run]) -> Glue:
    """The chapter's glue: the GPU's parts and their sizes, its peak and ridge point, the launch
    as a recorded run measured it (the library's assumption without one), the diagram, and the
    table of every datasheet GPU."""
    run = leading_run(runs)
    found = lookup(run.provenance.device_name) if run is not None else None
    gpu: GPU = found if found is not None else GPUS[DEFAULT_GPU]
    if gpu.sms is None or gpu.tensor_cores is None:  # every row lists them (tests/test_hardware)
        raise ValueError(f"the datasheet table gives no SMs for the {gpu.name}")
    sixteen = gpu.sixteen_bit
    peak = gpu.flops_per_s[sixteen]
    if run is not None and run.peaks.latency_seconds is not None:
        launch = run.peaks.latency_seconds
        launch_text = floor_spread(run.peaks, "latency_seconds")
        source = f"the shortest kernel the recorded {run.peaks.dtype} run timed on the {gpu.name}"
        where = source + why_bare(run.peaks, "latency_seconds")  # said once on the page
        measured_bw = run.peaks.bytes_per_s
        bw_text = (
            f"The recorded run measured {units.si(measured_bw, 'B/s')} from HBM, "
            f"{units.percent(measured_bw / gpu.bytes_per_s)} of the datasheet's rate."
        )
    else:
        launch = LAUNCH_FLOOR_SECONDS
        launch_text = units.si(launch, "s")
        source = (
            f"the library assumes about {units.si(launch, 's', digits=1)} where no GPU run is "
            "recorded"
        )
        where = source
        bw_text = "No recorded run measured this GPU's HBM yet."
    return {
        "gpu": gpu.name,
        "sms": units.plain_number(gpu.sms),
        "tensor_cores": units.plain_number(gpu.tensor_cores),
        "tc_per_sm": units.plain_number(gpu.tensor_cores // gpu.sms),
        "registers_sm": units.binary_bytes(gpu.registers_per_sm_bytes or 0),
        "registers_all": _per_sm(gpu.registers_per_sm_bytes, gpu.sms),
        "shared_sm": units.binary_bytes(gpu.shared_memory_per_sm_bytes or 0),
        "shared_all": _per_sm(gpu.shared_memory_per_sm_bytes, gpu.sms),
        "l2": units.binary_bytes(gpu.l2_bytes),
        "hbm": units.decimal_bytes(gpu.memory_bytes),
        "hbm_bw": units.si(gpu.bytes_per_s, "B/s"),
        "hbm_measured": bw_text,
        "dtype": sixteen,
        "peak": units.si(peak, "FLOP/s"),
        "peak_sm": units.si(peak / gpu.sms, "FLOP/s"),
        "ridge": units.significant(float(formulas.ridge_point(P=peak, beta=gpu.bytes_per_s))),
        "l2_over_hbm": units.how_many(gpu.memory_bytes / gpu.l2_bytes),
        "launch": launch_text,
        "launch_source": source,
        "launch_where": where,
        # equivalents of a measured time: three significant digits, as every rate and time
        "launch_flops": units.si(peak * launch, "FLOP"),
        "launch_bytes": units.si(gpu.bytes_per_s * launch, "B"),
        "sources": f"* {gpu.anatomy_source}.\n* {gpu.source}.",
        "anatomy": gpu_anatomy(gpu, launch),
        "anatomy_table": markdown_table(
            ["GPU", "SMs", "Tensor Cores", "L2", "HBM bandwidth", "16-bit peak"], datasheet_rows()
        ),
    }
