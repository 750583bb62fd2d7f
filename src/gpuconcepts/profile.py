"""``gpuconcepts profile``, which collects a Run on this machine and prints (or saves) it (the
five workloads at their preset sizes are :func:`gpuconcepts.lab.profile_all`).

Progress goes to stderr, the result to stdout: a table, or with ``--json`` the run itself
(what ``--save`` writes). torch is imported only when a run is collected.
"""

from __future__ import annotations

import sys

from gpuconcepts.files import check_writable
from gpuconcepts.measure import resolve_device
from gpuconcepts.render import format_run
from gpuconcepts.run import collect


def stderr_line(line: str) -> None:
    """Write one progress line to stderr, at once."""
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def run_profile(
    device: str, quick: bool, as_json: bool, save: str | None = None, dtype: str | None = None
) -> int:
    """The CLI's ``gpuconcepts profile``: measure, then print the run; ``save`` writes it too."""
    resolved = resolve_device(device)
    if save is not None:
        check_writable(save)  # a path that cannot be written is said now, not after the run
    run = collect(resolved, quick, progress=stderr_line, dtype=dtype)
    if save is not None:
        run.save(save)
        stderr_line(f"saved the run to {save}")
    sys.stdout.write(run.to_json() if as_json else format_run(run) + "\n")
    return 0
