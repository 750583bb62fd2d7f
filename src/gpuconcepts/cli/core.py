"""The command line's core: the parser, assembled from one module per command, :func:`main`
and :func:`entry`, and what every command's output needs (stdout that a reader closed or a
full disk refused, a terminal that takes ASCII only, Ctrl-C and SIGTERM)."""

from __future__ import annotations

import argparse
import codecs
import errno
import io
import os
import signal
import sys
import threading
import unicodedata
from collections.abc import Sequence
from typing import Any

from gpuconcepts import __version__
from gpuconcepts.cli import (
    analyze,
    calc,
    common,
    compare,
    distributed,
    formulas,
    hardware,
    model,
    profile,
    verify,
)
from gpuconcepts.errors import GpuConceptsError, Terminated

EXIT_USAGE = common.EXIT_USAGE

COMMANDS = (formulas, calc, profile, verify, compare, analyze, model, distributed, hardware)
"""The command modules in the order ``gpuconcepts --help`` lists them: each adds its own
subparser (``add``) and runs (``command``)."""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``gpuconcepts`` command."""
    parser = common.Parser(
        prog="gpuconcepts",
        description="How DLRM, MLP, CNN, RNN and Transformer load a GPU: the book's formulas, "
        "and measurements on this machine.",
        epilog="Example: gpuconcepts calc embedding_memory N=100000000 d=128 s=4",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=common.Parser)
    sub.required = True
    for module in COMMANDS:
        module.add(sub)
    return parser


def _unknown_leading_option(parser: argparse.ArgumentParser, argv: Sequence[str]) -> str | None:
    """An option before COMMAND that the top-level parser does not know (``--bogus``).

    argparse would otherwise report the missing COMMAND and never name the option.
    """
    for arg in argv:
        if not arg.startswith("-"):
            return None  # options after COMMAND are the subcommand's to judge
        if arg.split("=", 1)[0] not in parser._option_string_actions:
            return arg
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status."""
    _ascii_where_needed()
    parser = build_parser()
    arguments = sys.argv[1:] if argv is None else list(argv)
    try:
        unknown = _unknown_leading_option(parser, arguments)
        if unknown is not None:
            parser.error(f"unknown option {unknown!r}")
        args = parser.parse_args(arguments)
    except SystemExit as done:  # usage errors, --help, --version: argparse has printed them
        return done.code if isinstance(done.code, int) else common.EXIT_USAGE
    try:
        with _StopOnSignals(args.command):
            try:
                status: int = args.run(args)
                sys.stdout.flush()  # a closed pipe shows here, not at exit
            except BrokenPipeError:  # `gpuconcepts model --json | head`: the reader has enough
                _silence(sys.stdout, sys.stderr)
                return EXIT_BROKEN_PIPE
            except OSError as error:  # `gpuconcepts formulas > /dev/full`
                if not _is_output_error(error):
                    raise
                from gpuconcepts.files import cause

                print(
                    f"gpuconcepts {args.command}: error: cannot write to stdout: {cause(error)}",
                    file=sys.stderr,
                )
                _silence(sys.stdout)
                return common.EXIT_USAGE
            except GpuConceptsError as error:
                print(f"gpuconcepts {args.command}: error: {error}", file=sys.stderr)
                return common.EXIT_USAGE
            except KeyboardInterrupt:
                print(f"gpuconcepts {args.command}: interrupted (Ctrl-C)", file=sys.stderr)
                return EXIT_INTERRUPTED
            except Terminated:
                print(f"gpuconcepts {args.command}: terminated (SIGTERM)", file=sys.stderr)
                return EXIT_TERMINATED
    except KeyboardInterrupt:  # a Ctrl-C pending as the handlers were restored: seen once
        return EXIT_INTERRUPTED
    return status


EXIT_BROKEN_PIPE = 128 + signal.SIGPIPE
"""The reader of stdout went away (``| head``): 141, as for any program that SIGPIPE ends."""


_OUTPUT_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})
"""What a stream that cannot take the output raises: a full disk or quota, a file over the
process's size limit, a device that fails."""


def _is_output_error(error: OSError) -> bool:
    """Whether an OSError that escaped a command is stdout's (or stderr's) refusing what was
    written: every file a command writes itself fails as a :class:`GpuConceptsError`, and an
    error of a named file carries its name.

    >>> _is_output_error(OSError(errno.ENOSPC, "No space left on device"))
    True
    >>> _is_output_error(FileNotFoundError(errno.ENOENT, "No such file", "r.json"))
    False
    """
    return error.errno in _OUTPUT_ERRNOS and error.filename is None


def _silence(*streams: Any) -> None:
    """Point ``streams`` at /dev/null, so that nothing more (not the interpreter's own flush
    at exit) is written to a closed pipe or a full disk."""
    null = os.open(os.devnull, os.O_WRONLY)
    for stream in streams:
        try:
            os.dup2(null, stream.fileno())
        except (OSError, ValueError, AttributeError):  # a stream with no file (tests capture)
            continue
    os.close(null)


ASCII_FALLBACKS = {
    "×": "x", "÷": "/", "µ": "u", "μ": "u", "·": "*", "−": "-", "–": "-", "—": "--",
    "≥": ">=", "≤": "<=", "≈": "~", "≠": "!=", "±": "+/-", "→": "->", "←": "<-", "…": "...",
    "α": "alpha", "β": "beta", "Σ": "sum", "√": "sqrt", "²": "^2", "³": "^3", "⁰": "^0",
    "\u00a0": " ", "‘": "'", "’": "'", "“": '"', "”": '"', "✓": "ok", "✗": "x",
}  # fmt: skip
"""What a terminal that takes ASCII only (``PYTHONIOENCODING=ascii``, ``LANG=C`` on old
systems) shows for the characters the output uses; any other becomes its ASCII letters (é: e)
or ``?``."""


def _ascii_fallback(error: UnicodeError) -> tuple[str, int]:
    """The codec error handler ``gpuconcepts-ascii``: :data:`ASCII_FALLBACKS` for the
    characters an encoding cannot hold.

    >>> "8 × 4 µs ≥ é ☃".encode("ascii", errors="gpuconcepts-ascii")
    b'8 x 4 us >= e ?'
    """
    if not isinstance(error, UnicodeEncodeError):
        raise error
    text = error.object[error.start : error.end]
    out = []
    for char in text:
        plain = unicodedata.normalize("NFKD", char).encode("ascii", "ignore").decode()
        out.append(ASCII_FALLBACKS.get(char) or plain or "?")
    return "".join(out), error.end


codecs.register_error("gpuconcepts-ascii", _ascii_fallback)


def _ascii_where_needed() -> None:
    """Let stdout and stderr fall back to ASCII where their encoding cannot say a character
    (instead of a UnicodeEncodeError); a handler the user chose (``:replace``) is kept."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and stream.errors == "strict":
            stream.reconfigure(errors="gpuconcepts-ascii")


EXIT_INTERRUPTED = 128 + signal.SIGINT
"""Ctrl-C (SIGINT): 130, what a shell reports for a program the signal ended."""


EXIT_TERMINATED = 128 + signal.SIGTERM
"""SIGTERM: 143."""


class _StopOnSignals:
    """While a command runs, SIGINT raises KeyboardInterrupt and SIGTERM raises
    :class:`~gpuconcepts.errors.Terminated`, so the command unwinds (stopping its worker
    processes, removing its temporary files) and :func:`main` prints one line. A second
    signal during that cleanup ends the process at once, with the same line and status.
    The previous handlers are restored afterwards (tests call :func:`main` in-process)."""

    def __init__(self, command: str) -> None:
        self.command = command
        self.received: int | None = None
        self.previous: dict[int, Any] = {}

    def __enter__(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return  # only the main thread may handle signals
        for number in (signal.SIGINT, signal.SIGTERM):
            self.previous[number] = signal.signal(number, self._handle)

    def __exit__(self, *_exc: object) -> None:
        for number, handler in self.previous.items():
            signal.signal(number, handler)

    def _handle(self, number: int, _frame: object) -> None:
        if self.received is not None:  # a second signal: no more cleanup
            what = "interrupted (Ctrl-C)" if number == signal.SIGINT else "terminated (SIGTERM)"
            sys.stderr.write(f"gpuconcepts {self.command}: {what}\n")
            sys.stderr.flush()
            os._exit(128 + number)
        self.received = number
        if number == signal.SIGINT:
            raise KeyboardInterrupt
        raise Terminated
