"""The RNN chapter: the unrolled recurrence, the hidden state of a few sentences, this build's
step loops against one GEMM of the same FLOPs, why the chain of steps costs little at one size
and much at another, and the exercises' answers.

>>> from gpuconcepts import formulas
>>> from gpuconcepts.measure import Measurement
>>> from gpuconcepts.roofline import Peaks
>>> sizes = {"B": 8, "S": 4, "d_in": 64, "d_h": 64, "s": 4}
>>> f = formulas.rnn_flops(B=8, S=4, d_in=64, d_h=64)
>>> pair = [Measurement(w, "cpu", sizes, (t,), f, 1.0)
...         for w, t in (("rnn-loop", 4e-5), ("rnn-gemm", 1e-5))]
>>> glue = step_costs(pair, Peaks("cpu", 1e11, 1e10, "float32", latency_seconds=5e-6))
>>> glue["small_layer"], glue["small_slowdown"], glue["latency"]
('B = 8, d = 64', '4', '5 µs')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from gpuconcepts import formulas, units
from gpuconcepts.claims.quantities import time_each, with_interval
from gpuconcepts.claims.rnn_steps import StepCost
from gpuconcepts.claims.rnn_steps import step_costs as costs_of
from gpuconcepts.claims.thresholds import RNN_MIN_LOOP_SLOWDOWN
from gpuconcepts.hardware import GPUS
from gpuconcepts.questions import question
from gpuconcepts.render import chain_sentence, markdown_table, measurement_table, plots, time_spread
from gpuconcepts.render.pages import Glue, Math, from_batch
from gpuconcepts.render.text.runs import floor_spread, with_interval_text
from gpuconcepts.roofline import place

if TYPE_CHECKING:
    from gpuconcepts.measure import Measurement
    from gpuconcepts.roofline import Peaks
    from gpuconcepts.run import Run

P_NEXT = 0.81
"""The post's illustrative guess at the next word, not a trained model's."""

CLAIMS = "{doc}`the claims chapter <claims>`"


def intro() -> Glue:
    """The RNN unrolled over three words, and the post's illustrative output."""
    return {
        "unrolled": plots.rnn_unrolled(("I", "love", "AI")),
        "p_next": Math(rf"P(\text{{the next word is “learning”}}) = {P_NEXT}"),
    }


def sentences(texts: Sequence[str], parameters: int, hidden: int) -> Glue:
    """Two sentences of different lengths through one RNN: their words, its parameters and
    the width of its hidden state.

    >>> sentences(["I love AI", "I love it a lot"], 42, 3)
    {'short': '3', 'long': '5', 'params': '42', 'hidden': '3'}
    """
    short, long = (len(text.split()) for text in texts)
    return {
        "short": units.plain_number(short),
        "long": units.plain_number(long),
        "params": units.plain_number(parameters),
        "hidden": units.plain_number(hidden),
    }


def word_order(same_bag: bool, same_rnn: bool) -> Glue:
    """Whether an order-blind summary and the RNN's final state tell two word orders apart.

    >>> word_order(True, False)
    {'bag_same': 'the same', 'rnn_same': 'different'}
    """
    return {
        "bag_same": "the same" if same_bag else "different",
        "rnn_same": "the same" if same_rnn else "different",
    }


def states(words: Sequence[str], values: Sequence[Sequence[float]], matches: bool) -> Glue:
    """The hidden state after each word as a table, and whether the last one matches the state
    ``nn.RNN`` computes over the whole sentence at once.

    >>> glue = states(["I"], [[0.5, -0.25]], True)
    >>> glue["states"].splitlines()[-1], glue["matches"]
    ('| step 1 | “I” | $h_{0}$ | $h_{1}$ | 0.5, -0.25 |', 'matches')
    """
    rows = [
        [
            f"step {t}",
            f"“{word}”",
            rf"$h_{{{t - 1}}}$",
            rf"$h_{{{t}}}$",
            ", ".join(units.significant(v) for v in state),
        ]
        for t, (word, state) in enumerate(zip(words, values, strict=True), start=1)
    ]
    return {
        "states": markdown_table(["Step", "Input word", "Uses", "Produces", "Values"], rows),
        "matches": "matches" if matches else "does not match",
    }


def q15() -> Glue:
    """Q15's multiply-adds: the formula and its worked values."""
    step = question(15).steps[0]
    return {
        "macs_eq": Math(formulas.rnn_macs.equation()),
        "macs_worked": Math(f"{formulas.rnn_macs.lhs} = {step.worked}"),
        "macs": units.describe(step.value, "MACs"),
    }


def chain(slowdown: float) -> str:
    """What a step loop's slowdown against the GEMM of the same FLOPs says about the chain,
    against the claim's threshold (``RNN_MIN_LOOP_SLOWDOWN``).

    >>> chain(0.9)
    'At these sizes, on this machine, the step loop was not slower than the single product: the cost of the chain did not show.'
    """
    need = f"the {units.times(RNN_MIN_LOOP_SLOWDOWN)} that {CLAIMS} requires"
    if slowdown >= RNN_MIN_LOOP_SLOWDOWN:
        return (
            "That is the dependency chain, which the roofline cannot see: the same arithmetic, "
            f"split into steps that wait for each other. It clears {need} before calling the "
            "loop much slower."
        )
    if slowdown > 1:
        return (
            f"The loop was slower, but by less than {need} before calling it much slower: at "
            "these sizes, on this machine, the cost of the chain barely shows."
        )
    return (
        "At these sizes, on this machine, the step loop was not slower than the single "
        "product: the cost of the chain did not show."
    )


def hoisted_gain(gain: float) -> str:
    """The hoisted loop against the naive one (``gain``: the naive loop's time over its own).

    >>> hoisted_gain(2), hoisted_gain(1.05), hoisted_gain(0.5)
    ('2 times faster than the naive loop', 'about as fast as the naive loop', '2 times slower than the naive loop')
    """
    if gain >= 1.1:
        return f"{units.how_many(gain)} times faster than the naive loop"
    if gain > 1 / 1.1:
        return "about as fast as the naive loop"
    return f"{units.how_many(1 / gain)} times slower than the naive loop"


def measured(run: Run, runs: Sequence[Measurement]) -> Glue:
    """This build's ``nn.RNN``, naive and hoisted step loops and one GEMM of the same FLOPs
    (``runs``, in that order): their table, and each against the GEMM and its roofline."""
    peaks = run.peaks
    module, loop, hoisted, gemm = runs
    return {
        "device": run.provenance.device_name,
        "table": measurement_table(runs, peaks),
        "S": units.plain_number(loop.size("S")),
        "slowdown": units.how_many(loop.seconds / gemm.seconds),
        "module_slowdown": units.how_many(module.seconds / gemm.seconds),
        "hoisted_slowdown": units.how_many(hoisted.seconds / gemm.seconds),
        "hoisted_gain": hoisted_gain(loop.seconds / hoisted.seconds),
        "loop_roof": units.how_many(place(loop, peaks).ratio),
        "gemm_roof": units.how_many(place(gemm, peaks).ratio),
        "chain": chain(loop.seconds / gemm.seconds),
    }


def module_vs_python(run: Run, runs: Sequence[Measurement]) -> Glue:
    """``nn.RNN`` against the two Python loops at the chapter's sizes, and what it does
    differently on this device (on a CPU: the bookkeeping it adds per step, said to cost
    something only where the whole interval of the difference lies above zero)."""
    peaks = run.peaks
    module, loop, hoisted, _ = runs
    module_vs_loop = module.seconds / loop.seconds
    module_vs_hoisted = module.seconds / hoisted.seconds
    steps = module.size("S")
    # per step, against the hoisted loop, with its interval (per round where timed together)
    gap, (low, high) = with_interval(lambda t: (t[0] - t[1]) / steps, (module, hoisted))
    floors = (
        f"{units.significant(abs(gap) / peaks.latency_seconds)} latency floors or "
        if peaks.latency_seconds
        else ""
    )
    size = with_interval_text(abs(gap), (low, high) if gap > 0 else (-high, -low), per="a step")
    # a share of the slower one's time, so it never passes 100% (cuDNN's nn.RNN is the faster)
    slower, whose = (module, "its") if gap > 0 else (hoisted, "the hoisted loop's")
    gap_text = f"{size}, {floors}{units.percent(abs(gap) * steps / slower.seconds)} of {whose} time"
    if module_vs_loop > 1:
        verdict = (
            f"slower than the Python loop: it took {units.as_long(module_vs_loop, 'the loop')}, "
            f"and {units.as_long(module_vs_hoisted, 'the hoisted loop')}."
        )
    else:  # said from the loops' side: "took 17 times as long", not "0.06 times as long"
        verdict = (
            "not slower than the Python loop here: the naive loop took "
            f"{units.as_long(1 / module_vs_loop, 'nn.RNN')} and the hoisted one "
            f"{units.as_long(1 / module_vs_hoisted, 'nn.RNN')}."
        )
    if peaks.device == "cpu":
        why = (
            "On a CPU, PyTorch's `nn.RNN` already does what the hoisted loop does: one product "
            "projects every input up front, then each step runs one product with $W_h$, adds "
            "the projected input in a separate pass and applies the tanh; at the end every "
            "step's output is copied into one tensor. The arithmetic is the hoisted loop's; "
        )
        if low > 0:  # nn.RNN slower than the hoisted loop beyond the interval
            why += (
                f"that bookkeeping is what it adds: {gap_text}, a cost per step of the same "
                "kind as the chain's, not extra FLOPs."
            )
        else:
            why += f"here its bookkeeping cost nothing measurable: the two differed by {gap_text}."
    else:
        why = (
            "On a GPU, `nn.RNN` runs cuDNN's recurrent kernels, which project every input at "
            "once and fuse each step's additions and tanh; the Python loops launch several "
            f"kernels per step instead. Against the hoisted loop the difference was {gap_text}."
        )
    return {"module_vs_python": f"{verdict} {why}"}


def layer(c: StepCost) -> str:
    """A step loop's layer: its batch and hidden width."""
    return (
        f"B = {units.plain_number(c.loop.size('B'))}, d = {units.plain_number(c.loop.size('d_h'))}"
    )


def step_costs(measurements: Sequence[Measurement], peaks: Peaks) -> Glue:
    """Every step loop beside the GEMM at its sizes as a table, and the least and most work
    per step in sentences (the chapter's loop and the claim's)."""
    costs = costs_of(measurements, peaks)  # least work first
    rows = [
        [
            layer(c),
            units.plain_number(c.steps),
            units.describe(c.step_flops, "FLOPs"),
            units.si(c.step_at_peak, "s"),
            units.measured_or_dash(c.floors),  # no latency floor measured: "—"
            time_spread(c.gemm),
            time_spread(c.loop),
            with_interval_text(*c.extra_and_interval),
            units.times(c.slowdown),
        ]
        for c in costs
    ]
    glue: Glue = {
        "step_table": markdown_table(
            [
                "Layer",
                "Steps S",
                "Work per step",
                "At the peak",
                "In latency floors",
                "One GEMM",
                "Step loop",
                "Extra per step",
                "Loop ÷ GEMM",
            ],
            rows,
        ),
        # the peaks' latency floor with its spread; "—" (and "—" floors below) if none measured
        "latency": units.NOTHING
        if peaks.latency_seconds is None
        else floor_spread(peaks, "latency_seconds"),
    }
    for name, c in (("small", costs[0]), ("large", costs[-1])):
        glue[f"{name}_layer"] = layer(c)
        glue[f"{name}_flops"] = units.describe(c.step_flops, "FLOPs")
        glue[f"{name}_at_peak"] = units.si(c.step_at_peak, "s")
        glue[f"{name}_floors"] = units.measured_or_dash(c.floors)
        glue[f"{name}_gemm_step"] = time_each(c.gemm, c.steps)
        glue[f"{name}_extra"] = with_interval_text(*c.extra_and_interval)
        glue[f"{name}_extra_floors"] = units.measured_or_dash(c.extra_per_step / c.latency)
        glue[f"{name}_slowdown"] = units.how_many(c.slowdown)
    glue["chain_roof"] = chain_sentence(costs[0].loop, peaks)
    return glue


def central_figure(run: Run) -> Glue:
    """The chapter's lead figure: the run's RNN kernels' time against the sequence length S,
    the Python step loop, ``nn.RNN`` and one GEMM of the same FLOPs (``rnn_central``)."""
    from gpuconcepts.render.plots.runs import rnn_over_s  # noqa: PLC0415  # matplotlib

    return {"rnn_central": rnn_over_s(run)}


def exercises() -> Glue:
    """The exercises' answers for Q15's RNN on an H100 (BF16), from the formulas and the
    datasheet table.

    >>> glue = exercises()
    >>> glue["ex_rnn_answer"], glue["ex_rnn_limit"]
    ('Never', '128')
    """
    ridge = GPUS["H100 SXM"].ridge_point("bf16")
    sizes = question(15).steps[0].values
    others = {k: v for k, v in sizes.items() if k != "B"}
    first = formulas.rnn_intensity.reaches(ridge, "B", **others, s=2)
    return {
        "ex_steps": units.plural(sizes["S"], "step"),
        "ex_per_step": units.describe(formulas.rnn_macs(**(sizes | {"S": 1})), "MACs"),
        "ex_ridge": units.significant(ridge),
        "ex_rnn_answer": from_batch(first),
        "ex_rnn_limit": units.significant(formulas.rnn_intensity.supremum("B", **others, s=2)),
    }


def lead_figure(run: Run | None) -> Glue:
    """The lead figure (:func:`central_figure`) of the recorded GPU run, or a figure that says
    no GPU run is recorded."""
    if run is None:
        from gpuconcepts.render.plots.claims import unmeasured_figure  # noqa: PLC0415

        return {"rnn_central": unmeasured_figure("no run on a GPU is recorded in docs/runs/")}
    return central_figure(run)


def two_step() -> Glue:
    """The two-step exercise: Q15's RNN on an H100 in BF16, first one step's FLOPs and bytes,
    then each step's least time (``kernel_seconds``: a launch, its FLOPs or its bytes), times
    the S steps of the chain, against one GEMM of all its FLOPs.

    >>> glue = two_step()
    >>> glue["ex2_step"], glue["ex2_chain"], glue["ex2_ratio"]
    ('5 µs', '500 µs', '3,144')
    """
    from gpuconcepts.hardware import LAUNCH_FLOOR_SECONDS  # noqa: PLC0415

    h100 = GPUS["H100 SXM"]
    peak, beta = h100.flops_per_s["bf16"], h100.bytes_per_s
    sizes = question(15).steps[0].values
    one = sizes | {"S": 1}
    flops, read = formulas.rnn_flops(**one), formulas.rnn_bytes(**one, s=2)
    step = formulas.kernel_seconds(
        t_launch=LAUNCH_FLOOR_SECONDS, F=flops, P=peak, Q=read, beta=beta
    )
    whole = formulas.rnn_flops(**sizes) / peak
    return {
        "ex2_S": units.plain_number(sizes["S"]),
        "ex2_flops": units.describe(flops, "FLOPs"),
        "ex2_bytes": units.si(read, "B"),
        "ex2_launch": units.si(LAUNCH_FLOOR_SECONDS, "s"),
        "ex2_step_eq": Math(
            rf"{formulas.kernel_seconds.lhs} = {formulas.kernel_seconds.latex()} = \max\left("
            rf"\text{{{units.si(LAUNCH_FLOOR_SECONDS, 's')}}}, "
            rf"\text{{{units.si(flops / peak, 's')}}}, \text{{{units.si(read / beta, 's')}}}"
            rf"\right) = \text{{{units.si(step, 's')}}}"
        ),
        "ex2_step": units.si(step, "s"),
        "ex2_chain": units.si(step * sizes["S"], "s"),
        "ex2_gemm": units.si(whole, "s"),
        "ex2_ratio": units.how_many(step * sizes["S"] / whole),
    }


FASTER = 1.1
"""From this ratio of times one kernel is said to run faster than another."""


def takeaways(run: Run | None) -> Glue:
    """The chapter's two measured takeaways, true to ``run``: how long the step loop took
    against one GEMM of the same FLOPs, and where ``nn.RNN`` fell between them. "—" without a
    run.

    >>> takeaways(None)["take_loop"]
    '—'
    """
    from gpuconcepts.render.pages.gpu import chapter  # noqa: PLC0415
    from gpuconcepts.render.pages.lead import run_words  # noqa: PLC0415

    found = {m.workload: m for m in chapter(run, "rnn")} if run is not None else {}
    loop, gemm, module = (found.get(f"rnn-{k}") for k in ("loop", "gemm", "module"))
    if run is None or loop is None or gemm is None or module is None:
        return dict.fromkeys(("take_loop", "take_module"), units.NOTHING)
    who = run_words(run)
    steps = units.plain_number(loop.size("S"))
    slower = loop.seconds / gemm.seconds
    loop_text = (
        f"The chain, not the arithmetic, sets the time: in {who} the {steps}-step loop took "
        f"{units.how_many(slower)} times as long as one GEMM of the same FLOPs."
        if slower >= RNN_MIN_LOOP_SLOWDOWN
        else f"In {who} the {steps}-step loop took "
        f"{units.as_long(slower, 'one GEMM of the same FLOPs')}, less than "
        f"{units.how_many(RNN_MIN_LOOP_SLOWDOWN)} times: at these sizes the chain cost little."
    )
    faster, behind = loop.seconds / module.seconds, module.seconds / gemm.seconds
    module_text = (
        "A fused kernel shortens each step but keeps the chain: in "
        f"{who} `nn.RNN` ran {units.how_many(faster)} times as fast as the Python loop, yet "
        f"took {units.how_many(behind)} times as long as the GEMM."
        if faster >= FASTER and behind >= FASTER
        else f"In {who} `nn.RNN` took {units.as_long(1 / faster, 'the Python loop')} and "
        f"{units.as_long(behind, 'the GEMM')}."
    )
    return {"take_loop": loop_text, "take_module": module_text}
