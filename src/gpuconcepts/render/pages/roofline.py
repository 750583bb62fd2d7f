"""The "All five on this machine's roofline" chapter: this machine's roofs and kernels, each
kernel's bound (compute, a memory level, or overhead) and the share of it attained, the
diagnoses of the kernels far below their roofs, the same kernels read against the datasheet
GPUs, and the recorded runs' peaks.

>>> from gpuconcepts.roofline import Peaks
>>> peaks = Peaks("cpu", 1e11, 1e10, "float32")
>>> factor_range([Peaks("cuda", 4e13, 2e12, "float32"), Peaks("cuda", 6e13, 2e12, "float32")],
...              peaks)
'2 to 3'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from gpuconcepts import formulas, hardware, units
from gpuconcepts.changelog import first_dated
from gpuconcepts.measure import LLC_MULTIPLE
from gpuconcepts.measure.hierarchy import dram_start_bytes
from gpuconcepts.measure.physical import covered_families, cpu_id, fma_core
from gpuconcepts.render import (
    EXPLAINED,
    cold_start_sentence,
    gemm_shape_sentence,
    measurement_table,
    plots,
    why_unexplained,
)
from gpuconcepts.render.pages import Glue, Math, bound
from gpuconcepts.render.pages.gpu_tables import PEAK_DEFINITIONS
from gpuconcepts.render.text.runs import floor_spread
from gpuconcepts.render.text.sentences import beaten_rule
from gpuconcepts.roofline import (
    ROOFS,
    Peaks,
    changes_side,
    classify,
    place,
)
from gpuconcepts.roofline.diagnosis import TOLERANCE
from gpuconcepts.sweeps import AWAY, COLD_SMALLEST, GEMM_SWEEP, SWEEP_ROUNDS, gemm_sweep_points
from gpuconcepts.workloads import INDEX_BYTES, chapter_of

if TYPE_CHECKING:
    from gpuconcepts.changelog import Change
    from gpuconcepts.measure import Measurement
    from gpuconcepts.run import Run

FAMILIES = {
    "dlrm": "DLRM",
    "mlp": "the MLP",
    "cnn": "the CNN",
    "rnn": "the RNN",
    "transformer": "the Transformer",
}
"""The five workloads' chapters and how the page names them."""


def machine(run: Run, measurements: Sequence[Measurement]) -> Glue:
    """This machine's roofs (with its physical limit and memory hierarchy) and its kernels'
    table."""
    peaks = run.peaks
    levels = [f"{level.name} {units.si(level.bytes_per_s, 'B/s')}" for level in peaks.memory_roofs]
    return {
        "device": run.provenance.device_name,
        "peak_flops": units.si(peaks.flops_per_s, "FLOP/s"),
        "peak_bw": units.si(peaks.bytes_per_s, "B/s"),
        "ridge": units.significant(peaks.ridge_point),
        "dtype": peaks.dtype,
        "table": measurement_table(measurements, peaks, numbered=True),
        "count": units.plural(len(measurements), "measurement"),
        "gemm_n": gemm_side(run),
        **hierarchy_sizes(run),
        "physical": physical_sentence(run),
        "hierarchy": plots.memory_hierarchy(peaks),
        "levels": units.listing(levels),
        "latency": floor_spread(peaks, "latency_seconds")
        if peaks.latency_seconds
        else "not measured",
    }


def rules(changes: Sequence[Change]) -> Glue:
    """The page's rules in the code's words: since when the compute peak has its current
    definition (the change log's date of the last of :data:`PEAK_DEFINITIONS
    <gpuconcepts.render.pages.gpu_tables.PEAK_DEFINITIONS>`), how far every sweep point stays
    from a judged kernel, and what beating a roof means.

    >>> import datetime as dt
    >>> from gpuconcepts.changelog import Change
    >>> glue = rules([Change(dt.date(2026, 12, 7), PEAK_DEFINITIONS[-1][0], "w", "y", "e")])
    >>> glue["peak_since"], glue["away"]
    ('2026-12-07', '2×')
    """
    return {
        "peak_since": first_dated(changes, PEAK_DEFINITIONS[-1][0]).isoformat(),
        "away": units.times(AWAY),
        "beaten": beaten_rule(),
    }


def physical_sentence(run: Run) -> str:
    """What the figure draws above the measured compute roof, for this build's run (so this
    machine's CPU): the hardware's limit, how it is computed, the CPU family it was computed
    for and the families the FMA table covers; or why no limit is drawn."""
    peaks = run.peaks
    covered = units.listing(covered_families())
    if not peaks.physical_flops_per_s:
        return (
            "This machine's physical limit is not known, so no line is drawn above the measured "
            "roof: an AVX-512 flag says which instructions a core decodes, not how wide its "
            f"FMA pipes are, and the table of known cores ({covered}) does not hold this one, "
            "or its clock could not be measured."
        )
    drawn = (
        "Above the measured compute roof the figure draws the hardware's physical limit, "
        f"{units.si(peaks.physical_flops_per_s, 'FLOP/s')}: every core issuing full-width fused "
        "multiply-adds on every unit at every cycle (cores × vector lanes × FMA units × 2 × "
        "clock). The measured peak reaches "
        f"{units.percent(peaks.flops_per_s / peaks.physical_flops_per_s)} of it; the rest is "
        "what the library's kernels leave on the table."
    )
    if peaks.device != "cpu":
        return f"{drawn} On a GPU the datasheet gives the units, their width and the clock."
    found = cpu_id()
    core = None if found is None else fma_core(found)
    table = f"The table covers {covered}; on any other CPU the limit is not drawn."
    if core is None:
        return (
            f"{drawn} The table of FMA pipes by CPU family does not hold this CPU, so the limit "
            f"was recorded under an older rule. {table}"
        )
    return (
        f"{drawn} A table of FMA pipes and their width by CPU family and model gives the "
        f"units, here for this CPU's family, {core.family}: {core.units} FMA pipes of "
        f"{core.width_bits} bits per core; a chain of dependent additions measures the clock. "
        f"{table}"
    )


def hierarchy_sizes(run: Run) -> Glue:
    """Where the run's working-set sweep found DRAM (``dram_from``), the working set it sized
    as DRAM's (``beyond``: the STREAM arrays' least size, the flush, the cold and
    random-access sweeps' largest) and the sweep's largest working set (``sweep_top``), in
    words. A run saved before budgets sized them as 4x the last cache it reported.

    >>> from dataclasses import replace
    >>> from gpuconcepts.roofline import Peaks
    >>> from gpuconcepts.run import Provenance, Run
    >>> sweep = ((2**20, 9e10), (2**25, 1.3e10), (2**26, 1.2e10), (2**27, 1.25e10))
    >>> here = replace(Provenance.example(), sizes={"budget": {"beyond_bytes": 2**26}})
    >>> glue = hierarchy_sizes(Run(here, Peaks("cpu", 1e11, 1e10, "float32", sweep=sweep), (), {}, ()))
    >>> glue["dram_from"], glue["beyond"], glue["sweep_top"]
    ('32 MiB', '64 MiB', '128 MiB')
    """
    peaks, provenance = run.peaks, run.provenance
    start = dram_start_bytes(peaks.sweep)
    top = max((size for size, _ in peaks.sweep), default=None)
    budget = provenance.sizes.get("budget") or {}
    beyond = budget.get("beyond_bytes") or LLC_MULTIPLE * provenance.cache_bytes
    return {
        "dram_from": units.binary_bytes(start) if start else "beyond its largest working set",
        "beyond": units.binary_bytes(int(beyond)),
        "sweep_top": units.binary_bytes(top) if top else "the largest array it allows",
    }


def families(run: Run, measurements: Sequence[Measurement]) -> Glue:
    """Which of the five workloads have memory-bound kernels here, which compute-bound ones,
    and which have both."""
    by_bound = {
        b: [
            name
            for family, name in FAMILIES.items()
            if any(chapter_of(m.workload) == family and bound(m, run) == b for m in measurements)
        ]
        for b in ("memory", "compute")
    }
    both = [name for name in by_bound["memory"] if name in by_bound["compute"]]
    if both:
        verb = "has" if len(both) == 1 else "have"
        sides = f"Here {units.listing(both)} {verb} kernels on both sides of the ridge."
    else:
        sides = "Here no workload has kernels on both sides of the ridge."
    return {
        "memory_families": units.listing(by_bound["memory"]) or "none of the five",
        "compute_families": units.listing(by_bound["compute"]) or "none of the five",
        "both_families": sides,
    }


def observed(measurements: Sequence[Measurement], peaks: Peaks) -> Glue:
    """How many kernels each roof binds (by its kind), the kernels a cache serves, and those
    whose bound contradicts the predicted side of the ridge (compute against memory)."""
    placed = [(m, place(m, peaks)) for m in measurements]
    counts = [
        f"{units.plain_number(sum(w.kind == roof.kind for _, w in placed))} {roof.kind}"
        for roof in ROOFS
    ]
    caches = {level.name for level in peaks.levels}
    cached = [
        f"`{m.workload}` ({w.observed})"
        for m, w in placed
        if w.kind == "memory" and w.observed in caches
    ]
    disagree = [
        m.workload
        for m, w in placed
        if (w.bound, w.kind) in (("memory", "compute"), ("compute", "memory"))
    ]
    return {
        "by_kind": units.listing(counts),
        "cached": units.listing(cached) or "none",
        "n_disagree": units.listing([f"`{name}`" for name in dict.fromkeys(disagree)]) or "none",
    }


def roofs(peaks: Peaks) -> Glue:
    """The overhead floor and the diagnoses beside the roofs: their equations, the sweeps'
    sizes and rounds, and the measured floors."""
    return {
        "op_floor": floor_spread(peaks, "op_seconds") if peaks.op_seconds else "not measured",
        "roofline_eq": Math(formulas.roofline_seconds.equation()),
        "chain_eq": Math(formulas.chain_seconds.equation()),
        "serial_chain_eq": Math(formulas.serial_chain_seconds.equation()),
        "cold_start": cold_start_sentence(peaks),
        "cold_smallest": units.binary_bytes(COLD_SMALLEST),
        "random_eq": Math(formulas.random_access_seconds.equation()),
        "traffic_eq": Math(formulas.embedding_bag_traffic.equation()),
        "index_bytes": units.plain_number(INDEX_BYTES),
        "gemm_rows": units.plain_number(max(rows for rows, _ in _swept(peaks))),
        "gemm_widths": units.listing(
            [units.plain_number(w) for w in sorted({w for _, w in _swept(peaks)})]
        ),
        "gemm_shape": gemm_shape_sentence(peaks),
        "sweep_rounds": units.in_words(SWEEP_ROUNDS),
        "diagnosis_tolerance": units.percent(TOLERANCE - 1),
    }


def explained(measurements: Sequence[Measurement], peaks: Peaks) -> Glue:
    """How many measurements reach at least half of their roof (``render.EXPLAINED``), and the
    others, numbered as in the table, each with the share it reached and the diagnosis that
    accounts for the rest, where one does."""
    within = f"[1, {units.plain_number(1 / EXPLAINED[0])}]×"  # the time against the roof's bound
    numbered = [(n, m, why_unexplained(m, peaks)) for n, m in enumerate(measurements, start=1)]
    others = [
        f"- **{n}.** `{m.workload}` ({units.sizes(m.params)}): {why}."
        for n, m, why in numbered
        if why is not None
    ]
    return {
        "explained": within,
        "explained_share": units.percent(EXPLAINED[0]),
        "n_explained": f"{len(measurements) - len(others)} of {len(measurements)}",
        "unexplained": "\n".join(others)
        or f"Every measurement on this page lies within {within} of its roof.",
    }


def factor_range(gpus: Sequence[Peaks], here: Peaks) -> str:
    """How many times this machine's ridge point the GPUs' ridge points are, lowest to highest."""
    factors = sorted(p.ridge_point / here.ridge_point for p in gpus)
    return f"{units.how_many(factors[0])} to {units.how_many(factors[-1])}"


def on_gpus(measurements: Sequence[Measurement], peaks: Peaks) -> Glue:
    """The datasheet GPUs' ridge points against this machine's, and the kernels measured here
    that would change side on some of them in the same data type."""
    same_dtype = hardware.datasheet_peaks(peaks.dtype)  # every datasheet GPU in this dtype
    changed = changes_side(measurements, peaks, same_dtype)

    def line(m: Measurement, where: tuple[str, ...]) -> str:
        here = classify(m.intensity, peaks)
        there = "compute" if here == "memory" else "memory"
        gpus = (
            "every GPU of the table"
            if len(where) == len(same_dtype)
            else "the " + units.listing(list(where))
        )
        return (
            f"* `{m.workload}` ({units.sizes(m.params)}), {units.significant(m.intensity)} "
            f"FLOP/byte: {here}-bound here, {there}-bound on {gpus}"
        )

    ridges = [f"{p.name} {units.significant(p.ridge_point)}" for p in same_dtype]
    return {
        "gpu_dtype": same_dtype[0].dtype if same_dtype else peaks.dtype,
        "gpu_ridges": units.listing(ridges),
        "gpu_factor": factor_range(same_dtype, peaks),
        "half_factor": factor_range(hardware.datasheet_peaks("fp16"), peaks),
        "n_changed": f"{len(changed)} of the {units.plural(len(measurements), 'kernel')}",
        "changed": "\n".join(line(m, where) for m, where in changed)
        or "* none: every kernel keeps its verdict on every GPU of the table.",
    }


def recorded_peaks(other: Run) -> str:
    """A recorded run's provenance and measured peaks, above its roofline and table."""
    peaks = other.peaks
    return (
        f"**Recorded** on {other.provenance.summary}. Measured peaks in {peaks.dtype}: "
        f"{units.si(peaks.flops_per_s, 'FLOP/s')} and {units.si(peaks.bytes_per_s, 'B/s')}, "
        f"a ridge point of {units.significant(peaks.ridge_point)} FLOP/byte."
    )


def recorded(others: Sequence[Run]) -> Glue:
    """How many runs recorded on other machines the page draws.

    >>> recorded([])
    {'recorded_count': '0 runs'}
    """
    return {"recorded_count": units.plural(len(others), "run")}


def _swept(peaks: Peaks) -> tuple[tuple[int, int], ...]:
    """The (rows, width) products the peaks' GEMM sweep timed; this version's for their device
    kind when they hold none."""
    if peaks.gemm_sweep:
        return tuple((rows, width) for rows, width, *_ in peaks.gemm_sweep)
    return gemm_sweep_points(peaks.device if peaks.device in GEMM_SWEEP else "cpu")


def gemm_side(run: Run) -> str:
    """The side of the square GEMM the run's compute peak was timed on (its presets'
    ``gemm_n``), in words; "a large" when the run did not record its sizes."""
    presets = (run.provenance.sizes or {}).get("presets") or {}
    side = presets.get("peaks", {}).get("gemm_n") if isinstance(presets, dict) else None
    return units.plain_number(side) if isinstance(side, int) else "a large"
