"""``python -m gpuconcepts`` runs the command line."""

import atexit
import os
import sys

from gpuconcepts.cli import EXIT_INTERRUPTED, entry

status = entry()
if status == EXIT_INTERRUPTED:
    # Under ``-m``, CPython ends by killing itself with SIGINT (status -2, not 130) when a
    # Ctrl-C ever passed through a C library's PyRun_* call (pybind11's exec, which torch
    # uses), even though the command caught it. So the exit work is done here, then the
    # status is given as it is. A fresh-clone CI saw profile die so, 1 run in 30 under load.
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
sys.exit(status)
