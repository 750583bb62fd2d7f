"""``gpuconcepts analyze``: every layer of the user's own model on this machine's roofline
and each datasheet GPU's; the user's code runs in :func:`user_code`, progress shows in
:class:`ProgressLine`."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import math
import os
import sys
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from gpuconcepts.cli import common
from gpuconcepts.errors import GpuConceptsError, Terminated, require
from gpuconcepts.units import significant

if TYPE_CHECKING:
    from gpuconcepts.analysis import InputSpec, Report
    from gpuconcepts.roofline.peaks import Peaks
    from gpuconcepts.sizing import RunSizes

ANALYZE_EPILOG = """\
Examples:
  gpuconcepts analyze model.py:build --input 8x3x224x224
  gpuconcepts analyze dlrm.py:make --input 64x13 --input 64x26:int64 --json
  gpuconcepts analyze --factory torchvision.models:resnet18 --input 1x3x224x224 --csv
  gpuconcepts analyze bert.py:build --input input_ids=1x128:int64 \\
      --input attention_mask=ones:1x128 --peaks run.json --figure bert.svg

FACTORY is a function of FILE.py (or, with --factory, of an importable module) that takes no
argument and returns the model. Each --input is one forward argument, positional in order, or
passed as a keyword with NAME=:
  [NAME=]SHAPE[:DTYPE[:LOW..HIGH]]  random values: floats standard normal (uniform in LOW..HIGH),
                                    integers over the rows of the embedding that reads them
                                    (found in one probe pass; LOW..HIGH, both included,
                                    overrides it); an integer input no embedding reads is ones
  [NAME=]ones:SHAPE[:DTYPE]         all ones (a mask that hides nothing; DTYPE as the model's)
DTYPE is one of float32, float64, float16, bfloat16, int64, int32, bool.

The table fits 100 columns; --json and --csv hold every detail (shapes, exact counts, the
formula that counted each call, each GPU's bound). Identical calls are timed once. Ctrl-C
prints what was measured so far, then exits 130. Without --peaks, this machine's peaks are
measured first (seconds), with a warning when they are far from a run recorded here.

FILE.py is imported and runs as Python with your rights, as `python FILE.py` would: it can
read, change or delete anything you can. Only analyze files you trust. With --json or --csv,
whatever the model prints goes to stderr, so stdout holds the JSON or CSV alone.
"""


def add(sub: Any) -> None:
    """The ``analyze`` subcommand."""
    p = sub.add_parser(
        "analyze",
        help="every layer of your own model on this machine's roofline and each GPU's",
        description="Import FILE.py (your code runs, with your rights), call FACTORY for the "
        "model, then count, time and place every leaf module call of one forward pass.",
        epilog=ANALYZE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "model",
        metavar="FILE.py:FACTORY",
        nargs="?",
        help="where the model comes from (FILE.py is imported: it runs with your rights, "
        "and FACTORY is called)",
    )
    p.add_argument(
        "--factory",
        metavar="pkg.module:fn",
        help="the model from an importable module instead of a file (it runs with your rights)",
    )
    p.add_argument(
        "--input",
        metavar="[NAME=]SHAPE",
        action="append",
        required=True,
        help="one forward argument (repeatable): 8x3x224x224, 64x26:int64, "
        "input_ids=1x128:int64:0..999, attention_mask=ones:1x128 (forms below)",
    )
    p.add_argument(
        "--dtype",
        type=common.dtype,
        metavar="D",
        help=f"{common.DTYPE_NAMES} but tf32 (default: the model's)",
    )
    _measuring_options(p)
    p.set_defaults(run=command)


def _measuring_options(p: argparse.ArgumentParser) -> None:
    """How ``analyze`` measures and what it writes: device, repeats, peaks, threads, output."""
    p.add_argument(
        "--device", choices=("auto", "cpu", "cuda"), default="auto", help="default: auto"
    )
    p.add_argument("--repeats", type=int, default=5, help="timed repetitions per call (5)")
    p.add_argument(
        "--peaks",
        metavar="RUN.json",
        help="judge against a saved run's peaks (gpuconcepts profile --save) instead of "
        "this machine's (kept from the last measurement here, else measured now)",
    )
    p.add_argument("--fresh", action="store_true", help=common.FRESH_HELP)
    p.add_argument(
        "--threads", type=int, metavar="N", help="CPU threads for torch (default: torch's)"
    )
    p.add_argument(
        "--figure",
        metavar="PATH",
        help=common.SAVE_HELP.format(what="the roofline figure (.svg, .png, .pdf)"),
    )
    shown = p.add_mutually_exclusive_group()
    shown.add_argument("--json", action="store_true", help="print the report as JSON")
    shown.add_argument("--csv", action="store_true", help="print every call as CSV")


def command(args: argparse.Namespace) -> int:
    """``gpuconcepts analyze``: build the model, make its inputs, print the table, JSON or CSV
    (and write the figure); on Ctrl-C, what was measured so far, then the signal goes on."""
    require("torch", "`analyze`", "kernels")
    import torch

    from gpuconcepts.analysis import parse_input

    if (args.model is None) == (args.factory is None):
        raise GpuConceptsError("give FILE.py:FACTORY or --factory pkg.module:fn (one of them)")
    from gpuconcepts.analysis.checks import check_repeats

    specs = [parse_input(text) for text in args.input]
    check_repeats(args.repeats, "--repeats")
    cores = len(os.sched_getaffinity(0))
    if args.threads is not None and not 1 <= args.threads <= cores:
        raise GpuConceptsError(
            f"--threads {args.threads}: a thread count is 1 or more, and at most the "
            f"{cores} cores this process may run on"
        )
    previous = torch.get_num_threads()
    try:
        torch.set_num_threads(args.threads or previous)
        return _analyze(args, specs)
    finally:
        torch.set_num_threads(previous)


def _analyze(args: argparse.Namespace, specs: Sequence[InputSpec]) -> int:
    from gpuconcepts.analysis import analyze, build_model, make_inputs
    from gpuconcepts.files import save_figure
    from gpuconcepts.measure import resolve_device
    from gpuconcepts.peaks_cache import identity_here, keep_peaks, kept_peaks
    from gpuconcepts.render.plots.analysis import layers_figure
    from gpuconcepts.sizing import RunSizes

    resolved = resolve_device(args.device)
    sizes = RunSizes.resolve(resolved, quick=resolved == "cpu")  # the command's one sizing
    peaks, source = _saved_peaks(args, sizes)
    _check_figure(args)
    origin = args.model if args.model is not None else str(args.factory)
    progress = ProgressLine()

    def write(report: Report) -> None:
        if source is not None:
            report = dataclasses.replace(report, peaks_source=source)
        if args.figure is not None:
            save_figure(layers_figure(report), args.figure)
        text = report.to_json() if args.json else report.csv() if args.csv else report.text()
        sys.stdout.write(text.rstrip("\n") + "\n")

    with user_code(origin, quiet=args.json or args.csv):
        model = build_model(origin, module=args.factory is not None)
        inputs, kwargs = make_inputs(model, specs, resolved, args.dtype)
        # this machine's peaks, kept from an earlier measurement (after the model and its
        # inputs, whose mistakes are said before anything is measured); else analyze
        # measures them, and they are kept below
        identity = identity_here(sizes)
        if peaks is None and not args.fresh:
            peaks, source = kept_peaks(identity, sizes.budget) or (None, None)
        measuring = peaks is None
        try:
            report = analyze(
                model,
                *inputs,
                device=resolved,
                dtype=args.dtype,
                peaks=peaks,
                repeats=args.repeats,
                progress=progress,
                sizes=sizes,
                **kwargs,
            )
        except (KeyboardInterrupt, Terminated) as stop:
            progress.done()
            partial = getattr(stop, "report", None)
            if partial is not None:
                write(partial)
            raise
        finally:
            progress.done()
    if measuring:  # a cache that cannot be written costs the next run time, never this result
        keep_peaks(report.peaks, identity, common.warning("analyze"))
    write(report)
    return 0


def _saved_peaks(args: argparse.Namespace, sizes: RunSizes) -> tuple[Peaks | None, str | None]:
    """``--peaks RUN.json``: that run's peaks and where they come from, once they are checked
    to be this device's and put to use within the command's budget; none without the option."""
    if args.peaks is None:
        return None, None
    from gpuconcepts.peaks_cache import use_peaks
    from gpuconcepts.run import load

    saved = load(args.peaks)
    resolved = sizes.device
    if saved.peaks.device != resolved:
        raise GpuConceptsError(
            f"--peaks {args.peaks}: its peaks were measured on {saved.peaks.device}; "
            f"analyze runs on {resolved}"
        )
    use_peaks(saved.peaks, sizes.budget)
    return saved.peaks, f"from {args.peaks}, {saved.provenance.created_utc}"


def _check_figure(args: argparse.Namespace) -> None:
    """``--figure PATH``: matplotlib there, PATH writable and with a suffix, said before anything
    is measured."""
    if args.figure is None:
        return
    from pathlib import PurePath

    from gpuconcepts.files import check_writable

    require("matplotlib", "`analyze --figure`", "plots")
    check_writable(args.figure, "--figure")
    if not PurePath(args.figure).suffix:
        raise GpuConceptsError(
            f"--figure {args.figure}: give the figure a suffix (.svg, .png, .pdf)"
        )


@contextlib.contextmanager
def user_code(spec: str, *, quiet: bool) -> Iterator[None]:
    """Run the user's file, factory and model: what they print goes to stderr when ``quiet``
    (stdout then holds the JSON alone), and a ``sys.exit()`` or another exception that is
    not an :class:`Exception` becomes one :class:`GpuConceptsError`. Ctrl-C and SIGTERM pass.

    >>> with user_code("model.py:build", quiet=True):
    ...     sys.exit(7)
    Traceback (most recent call last):
    ...
    gpuconcepts.errors.GpuConceptsError: model.py:build called sys.exit(7); analyze needs the model back
    """
    try:
        with contextlib.redirect_stdout(sys.stderr) if quiet else contextlib.nullcontext():
            yield
    except (KeyboardInterrupt, Terminated, GeneratorExit):
        raise
    except SystemExit as done:
        raise GpuConceptsError(
            f"{spec} called sys.exit({done.code!r}); analyze needs the model back"
        ) from None
    except Exception:
        raise
    except BaseException as error:  # noqa: BLE001 - whatever the user's code raises, in one line
        from gpuconcepts.analysis.failures import first_line

        raise GpuConceptsError(f"{spec} raised {first_line(error)}") from None


class ProgressLine:
    """What ``analyze`` does now, on stderr, once it has run for ``after`` seconds: rewritten in
    place on a terminal, else one line every ``every`` seconds. :meth:`done` clears it."""

    def __init__(self, stream: Any = None, after: float = 2.0, every: float = 5.0) -> None:
        import time

        from gpuconcepts.analysis.report import TEXT_WIDTH

        self.width_limit = TEXT_WIDTH  # as wide as the report's table
        self.stream = sys.stderr if stream is None else stream
        self.after, self.every = after, every
        self.start = time.monotonic()
        self.last = -math.inf
        self.width = 0
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())

    def __call__(self, text: str) -> None:
        import time

        now = time.monotonic()
        if now - self.start < self.after or now - self.last < (0.2 if self.tty else self.every):
            return
        self.last = now
        line = f"gpuconcepts analyze: {text} ({significant(now - self.start)} s)"
        line = line[: self.width_limit - 1]
        if self.tty:
            self.stream.write("\r" + line.ljust(self.width))
            self.width = len(line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def done(self) -> None:
        if self.tty and self.width:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()
            self.width = 0
