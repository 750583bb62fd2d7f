"""A bounded background load for the benchmarks: one process that streams memory on one core.

``with streaming_load(seconds=120):`` starts a process pinned to the last core that copies a
128 MiB array into another, again and again, until the block ends or ``seconds`` pass
(whichever comes first: a crashed benchmark never leaves it running). It is the load a reader's
laptop with a browser open, or a shared builder, puts on the book's measurements.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

_STREAM = """
import os, sys, time
import numpy as np
os.sched_setaffinity(0, {int(sys.argv[1])})
time.sleep(float(sys.argv[3]))  # a load that starts part-way through what is measured
stop = time.monotonic() + float(sys.argv[2])
a = np.ones(32 * 1024 * 1024, dtype=np.float32)  # 128 MiB, far beyond any cache
b = np.empty_like(a)
while time.monotonic() < stop:
    np.copyto(b, a)
"""


@contextmanager
def streaming_load(
    seconds: float = 300.0, core: int | None = None, *, after: float = 0.0
) -> Iterator[int]:
    """Stream memory on one core (the last by default) for at most ``seconds``, starting
    ``after`` seconds into the block (a load that rises part-way through); yields the core."""
    cores = sorted(os.sched_getaffinity(0))
    chosen = cores[-1] if core is None else core
    arguments = [str(chosen), str(seconds), str(after)]
    process = subprocess.Popen([sys.executable, "-c", _STREAM, *arguments])
    time.sleep(0.5)  # let it reach its loop before anything is measured
    try:
        yield chosen
    finally:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
