"""Timing the calls one at a time with the kernels' timers and flush policy (a call whose
intensity is below the ridge point is timed after a cache flush); identical calls share one
timing."""

# torch is imported inside functions (README, Rules: 3).
# ruff: noqa: PLC0415

from __future__ import annotations

from collections.abc import Callable, Sequence

from gpuconcepts.errors import Terminated

Progress = Callable[[str], None]
"""Told what :func:`~gpuconcepts.analysis.analyze` does now (``timing call 3 of 40: conv1``)."""


def time_calls(
    calls: Sequence[tuple[str, Callable[[], object], bool]],
    device: str,
    repeats: int,
    progress: Progress | None = None,
) -> tuple[list[tuple[float, ...]], BaseException | None]:
    """Raw seconds of each (name, call, flush) with the kernels' timers, one flush buffer for
    every call; on Ctrl-C or SIGTERM, the calls timed so far and the signal's exception."""
    import torch

    from gpuconcepts.measure import make_flusher, time_cpu, time_cuda

    flusher = make_flusher(device) if any(flush for _, _, flush in calls) else None
    timer = time_cuda if device == "cuda" else time_cpu
    times: list[tuple[float, ...]] = []
    try:
        with torch.inference_mode():
            for number, (name, fn, flush) in enumerate(calls, start=1):
                if progress is not None:
                    progress(f"timing call {number} of {len(calls)}: {name}")
                times.append(timer(fn, repeats=repeats, flush=flusher if flush else None))
    except (KeyboardInterrupt, Terminated) as stop:
        return times, stop
    return times, None
