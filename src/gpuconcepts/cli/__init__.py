"""The ``gpuconcepts`` command line: formulas, calc, profile, verify, compare, hardware,
analyze, model, distributed.

Bad input never shows a traceback: it prints one line on stderr and exits with status 2.
torch and matplotlib are imported only by the subcommands that measure. The command line owns
the output: a subcommand asks the library for a value, renders it and writes it (results on
stdout, progress on stderr).

One module per command (``add``: its subparser; ``command``: what it runs); ``core`` assembles
the parser and holds :func:`main`; ``common`` holds what several commands share.
"""

import signal

from gpuconcepts.cli.core import (
    EXIT_BROKEN_PIPE,
    EXIT_INTERRUPTED,
    EXIT_TERMINATED,
    EXIT_USAGE,
    build_parser,
    main,
)

__all__ = [
    "EXIT_BROKEN_PIPE",
    "EXIT_INTERRUPTED",
    "EXIT_TERMINATED",
    "EXIT_USAGE",
    "build_parser",
    "entry",
    "main",
]


def entry() -> int:
    """The program's entry point (the ``gpuconcepts`` script, ``python -m gpuconcepts``):
    :func:`main`, after which Ctrl-C and SIGTERM are ignored. The command is over and has
    said so; a signal landing while the interpreter shuts down, when its handler is the default
    one again, would otherwise turn exit 130 into a death by signal (status -2) or add a
    traceback. A fresh-clone CI saw that twice, under load."""
    status = main()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    return status
