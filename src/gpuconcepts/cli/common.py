"""What every command of the ``gpuconcepts`` command line shares: the one-line parser, the
dtype option, progress and warnings on stderr, the help of the options several commands take."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import NoReturn

from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.hardware import TORCH_DTYPES, dtype_name

EXIT_USAGE = 2


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line, as every error of this CLI is."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see --help)\n")


DTYPE_NAMES = ", ".join(f"{k} ({v})" if k != v else k for k, v in TORCH_DTYPES.items())
"""Every dtype a command takes, with its alias: ``float32 (fp32), tf32, ...``."""


def dtype(text: str) -> str:
    """``--dtype``: a dtype's name or alias, as its name (``bf16`` is ``bfloat16``)."""
    try:
        return dtype_name(text)
    except GpuConceptsError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def progress(line: str) -> None:
    """One progress line on stderr, at once (stdout holds the result alone)."""
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def warning(command: str) -> Callable[[str], None]:
    """A one-line warning of ``command`` on stderr: something went wrong beside the result."""
    return lambda text: progress(f"gpuconcepts {command}: warning: {text}")


SAVE_HELP = (
    "also write {what} to PATH, a new file or one that replaces a regular file (a directory, "
    "device, pipe or socket is refused; a symbolic link is followed and its file replaced)"
)

FRESH_HELP = (
    "measure this machine's peaks again instead of reusing the ones kept from an earlier "
    "run (in the user's cache folder, or GPUCONCEPTS_CACHE_DIR)"
)


def measuring_options(p: argparse.ArgumentParser) -> None:
    """The options of the commands that measure here: ``--device``, ``--quick``, ``--json``."""
    p.add_argument(
        "--device", choices=("auto", "cpu", "cuda"), default="auto", help="default: auto"
    )
    p.add_argument("--quick", action="store_true", help="small sizes, about a minute on a CPU")
    p.add_argument("--json", action="store_true", help="print JSON on stdout")
