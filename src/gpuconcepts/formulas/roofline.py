"""The roofline and the roofs of one machine: STREAM-like kernels, the ridge point, the
roofline's time, launch overhead, a CPU's peak, random access and serial chains.

Part of the catalogue (:mod:`gpuconcepts.formulas`), in the book's order."""

from __future__ import annotations

import sympy as sp

from gpuconcepts.formula import Formula, product, ratio, total
from gpuconcepts.symbols import sym

(
    N,
    d,
    s,
    c,
    S,
    F,
    Q,
    P,
    beta,
    I,
    t_launch,
    n_cores,
    lanes,
    n_fma,
    f_clk,
    R,
    r_line,
    n_ops,
    t_op,
    n_calls,
    t_call,
) = (
    sym(n)
    for n in (
        "N",
        "d",
        "s",
        "c",
        "S",
        "F",
        "Q",
        "P",
        "beta",
        "I",
        "t_launch",
        "n_cores",
        "lanes",
        "n_fma",
        "f_clk",
        "R",
        "r_line",
        "n_ops",
        "t_op",
        "n_calls",
        "t_call",
    )
)

# -- Measured peaks (STREAM-like kernels) ----------------------------------------------------
stream_copy_bytes = Formula(
    "stream_copy_bytes",
    product(2, N, d, s),
    kind="bytes",
    lhs=r"\text{Bytes}_{\text{copy}}",
    summary="Traffic of copying an N × d array of s-byte elements: every element is read once "
    "and written once (STREAM counts both).",
    doc="""
    A 128 MiB FP32 array (32768 rows of 1024) moves 256 MiB when copied:

    >>> stream_copy_bytes(N=32768, d=1024, s=4)
    268435456
    """,
)

stream_triad_bytes = Formula(
    "stream_triad_bytes",
    product(3, N, d, s),
    kind="bytes",
    lhs=r"\text{Bytes}_{\text{triad}}",
    summary="Traffic of the STREAM triad a = b + q·c on N × d arrays: two reads and one write "
    "per element.",
    doc="""
    >>> stream_triad_bytes(N=32768, d=1024, s=4)
    402653184
    """,
)

stream_triad_flops = Formula(
    "stream_triad_flops",
    product(2, N, d),
    kind="FLOPs",
    lhs=r"\text{FLOPs}_{\text{triad}}",
    summary="FLOPs of the STREAM triad a = b + q·c: one multiply and one add per element.",
    doc="""
    >>> stream_triad_flops(N=32768, d=1024)
    67108864
    """,
)

# -- Roofline ------------------------------------------------------------------------------
ridge_point = Formula(
    "ridge_point",
    ratio(P, beta),
    kind="FLOP/byte",
    lhs=r"I_{\text{ridge}}",
    summary="The intensity at which a machine's compute and bandwidth limits meet.",
    doc="""
    H100 SXM: 989 TFLOP/s dense BF16 over 3.35 TB/s.

    >>> round(ridge_point(P=989e12, beta=3.35e12))
    295
    """,
)

roofline_seconds = Formula(
    "roofline_seconds",
    sp.Max(ratio(F, P), ratio(Q, beta)),
    kind="seconds",
    lhs=r"t_{\text{roofline}}",
    summary="Roofline lower bound on run time: the slower of doing F FLOPs at P and moving Q bytes at beta.",
    doc="""
    >>> roofline_seconds(F=2e12, Q=1e9, P=1e12, beta=1e11)
    2
    """,
)


kernel_seconds = Formula(
    "kernel_seconds",
    sp.Max(ratio(F, P), ratio(Q, beta), t_launch),
    kind="seconds",
    lhs=r"t_{\text{kernel}}",
    summary="Least time of one kernel call: the roofline's bound, or the launch floor when the "
    "call is too small to hide it.",
    doc="""
    A call that does a few thousand FLOPs takes far less than a microsecond by the roofline,
    yet no eager framework runs it faster than the cost of dispatching and launching it.
    A tiny element-wise call and a large matmul on an H100 SXM in bf16 (989 TFLOP/s,
    3.35 TB/s), with a launch floor of 5 µs:

    >>> kernel_seconds(F=4096, Q=32768, P=989e12, beta=3.35e12, t_launch=5e-6)
    5e-06
    >>> round(kernel_seconds(F=2 * 4096**3, Q=3 * 2 * 4096**2, P=989e12, beta=3.35e12,
    ...                      t_launch=5e-6) * 1e6, 1)
    139.0
    """,
)

attainable_flops = Formula(
    "attainable_flops",
    sp.Min(P, product(I, beta)),
    kind="FLOP/s",
    lhs=r"\text{FLOP/s}_{\text{attainable}}",
    summary="Roofline ceiling in FLOP/s at intensity I: bandwidth-limited below the ridge, "
    "compute-limited above it.",
    doc="""
    >>> attainable_flops(I=10, P=1e12, beta=1e11)
    1000000000000
    >>> attainable_flops(I=1, P=1e12, beta=1e11)
    100000000000
    """,
)

# -- The roofs of one machine, beyond compute and streaming bandwidth --------------------------


cpu_peak_flops = Formula(
    "cpu_peak_flops",
    product(2, n_cores, lanes, n_fma, f_clk),
    kind="FLOP/s",
    lhs=r"P_{\text{physical}}",
    summary="The most FLOP/s a CPU's cores can issue: every core retires n_fma fused "
    "multiply-adds of a full vector each cycle, two FLOPs per lane.",
    doc="""
    An upper bound no kernel can pass: it assumes every cycle issues a full-width FMA on every
    unit, with no loads, stores or loop overhead. Measured peaks sit below it; how far below is
    what the library's GEMM paths leave on the table. Two cores of AVX-512 (16 float32 lanes)
    with two FMA units at 2.6 GHz:

    >>> cpu_peak_flops(n_cores=2, lanes=16, n_fma=2, f_clk=2.6e9)
    332800000000
    """,
)

random_access_seconds = Formula(
    "random_access_seconds",
    ratio(product(R, sp.ceiling(ratio(product(d, s), c))), r_line),
    kind="seconds",
    lhs=r"t_{\text{random}}",
    summary="Lower bound on the time of R row fetches at random addresses: each costs "
    "⌈d·s/c⌉ whole lines, and memory sustains r_line independent line fetches per second.",
    doc="""
    The random-access roof counts misses, not bytes: a row at a random address shares no line
    with its neighbours (:data:`random_row_bytes`), and the memory system keeps only so many
    misses in flight, so the rate of line fetches, not the bytes per second, sets the ceiling.
    A million 16-byte rows at 100 million lines per second:

    >>> random_access_seconds(R=1_000_000, d=4, s=4, c=64, r_line=1e8)
    0.01
    """,
)

chain_seconds = Formula(
    "chain_seconds",
    product(
        S,
        sp.Max(ratio(F, P), ratio(Q, beta), total(product(n_ops, t_op), product(n_calls, t_call))),
    ),
    kind="seconds",
    lhs=r"t_{\text{chain}}",
    summary="Lower bound on the time of S dependent steps: no step starts before the one before "
    "it ends, and each takes at least its roofline time (F FLOPs and Q bytes per step) or its "
    "dispatch, whichever is longer: n_ops operations dispatched inside the framework at the "
    "per-operation floor t_op, and n_calls operations Python calls at the latency floor t_call.",
    doc="""
    The roofline assumes all of a kernel's work may overlap. An RNN's step t needs step t − 1's
    hidden state, so S steps add up; and a step too small to fill the machine still pays each
    operation's dispatch. An operation Python calls pays its argument parsing too, which one
    dispatched from inside C++ (an ``nn.RNN`` step) does not. 128 steps of 3 operations at
    1 µs and one call at 3 µs each: a step's arithmetic of 2 MFLOP at 100 GFLOP/s (20 µs)
    outlasts its dispatch (6 µs), while one of 0.2 MFLOP (2 µs) does not:

    >>> chain_seconds(S=128, F=2e6, Q=1e5, P=1e11, beta=1e10, n_ops=3, t_op=1e-6,
    ...               n_calls=1, t_call=3e-6)
    0.00256
    >>> chain_seconds(S=128, F=2e5, Q=1e4, P=1e11, beta=1e10, n_ops=3, t_op=1e-6,
    ...               n_calls=1, t_call=3e-6)
    0.000768
    """,
)

serial_chain_seconds = Formula(
    "serial_chain_seconds",
    product(S, total(ratio(F, P), product(n_ops, t_op), product(n_calls, t_call))),
    kind="seconds",
    lhs=r"t_{\text{chain}}^{\text{serial}}",
    summary="Lower bound on the time of S dependent steps where one thread dispatches each "
    "operation and then runs it (a CPU): each step's dispatch (n_ops operations at t_op, n_calls "
    "Python calls at t_call) and its F FLOPs at the rate P its products reach add up.",
    doc="""
    A GPU runs one kernel while the CPU launches the next, so there a step takes the longer of
    its dispatch and its work (:data:`chain_seconds`). On a CPU the thread that parses and
    dispatches an operation is the one that then computes it, so nothing overlaps: 128 steps of
    3 operations at 1 µs and one call at 3 µs, each step's 0.2 MFLOP at 100 GFLOP/s (2 µs):

    >>> serial_chain_seconds(S=128, F=2e5, P=1e11, n_ops=3, t_op=1e-6, n_calls=1, t_call=3e-6)
    0.001024
    """,
)
