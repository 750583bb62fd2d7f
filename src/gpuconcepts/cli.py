"""The ``gpuconcepts`` command line: formulas, calc, profile, verify, compare, hardware,
analyze, model, distributed.

Bad input never shows a traceback: it prints one line on stderr and exits with status 2.
torch and matplotlib are imported only by the subcommands that measure. The command line owns
the output: a subcommand asks the library for a value, renders it and writes it (results on
stdout, progress on stderr).
"""

from __future__ import annotations

import argparse
import codecs
import contextlib
import dataclasses
import errno
import io
import json
import math
import os
import signal
import sys
import threading
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import TYPE_CHECKING, Any, NoReturn

from gpuconcepts import __version__
from gpuconcepts.errors import GpuConceptsError, Terminated, require
from gpuconcepts.formula import Formula
from gpuconcepts.formulas import CATALOGUE, get
from gpuconcepts.hardware import TORCH_DTYPES, dtype_name
from gpuconcepts.units import binary_bytes, decimal_bytes, describe, plain_number, significant

if TYPE_CHECKING:
    from gpuconcepts.analysis import InputSpec, Report

EXIT_USAGE = 2

CALC_JSON_HELP = """\
--json prints one object:
  name     formula name                     latex    the formula, e.g. "\\\\text{Memory} = N d s"
  inputs   {symbol: value} as given         worked   LaTeX: formula = substituted = result
  value    exact result (int when whole)    unit     kind of result: bytes, MACs, FLOPs, count, FLOP/byte, ...
  text     the result in words              decimal, binary   (bytes only) "51.2 GB", "47.68 GiB"
"""


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line, as every error of this CLI is."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see --help)\n")


MAX_DIGITS = 10_000
"""The most digits a value may have: exact arithmetic is cheap up to here, and no size needs more."""


_DTYPE_NAMES = ", ".join(f"{k} ({v})" if k != v else k for k, v in TORCH_DTYPES.items())
"""Every dtype a command takes, with its alias: ``float32 (fp32), tf32, ...``."""


def _dtype(text: str) -> str:
    """``--dtype``: a dtype's name or alias, as its name (``bf16`` is ``bfloat16``)."""
    try:
        return dtype_name(text)
    except GpuConceptsError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _parse_value(formula: Formula, assignment: str) -> tuple[str, int | Fraction]:
    """``SYMBOL=VALUE`` read exactly: ``N=1e30`` is 10**30, ``s=0.1`` is 1/10 (never a float)."""
    name, sep, text = assignment.partition("=")
    if not sep or not name:
        raise GpuConceptsError(f"{formula.name}: expected SYMBOL=VALUE, got {assignment!r}")
    if name not in formula.params:  # every param is a declared symbol (Formula checks that)
        raise GpuConceptsError(
            f"{formula.name}: unknown symbol {name!r}; it takes {', '.join(formula.params)}"
        )
    try:
        number = Decimal(text.replace("_", "").strip())
    except InvalidOperation:
        raise GpuConceptsError(f"{formula.name}: {name} must be a number; got {text!r}") from None
    if not number.is_finite():
        raise GpuConceptsError(f"{formula.name}: {name} must be finite; got {text!r}")
    if number and abs(number.adjusted()) >= MAX_DIGITS:
        raise GpuConceptsError(
            f"{formula.name}: {name} must have fewer than {plain_number(MAX_DIGITS)} digits; got {text[:20]!r}..."
        )
    exact = Fraction(number)  # Formula refuses a fraction for a count, naming the symbol
    return name, int(exact) if exact.denominator == 1 else exact


def _parse_values(formula: Formula, assignments: Sequence[str]) -> dict[str, int | Fraction]:
    values: dict[str, int | Fraction] = {}
    for assignment in assignments:
        name, value = _parse_value(formula, assignment)
        if name in values:
            raise GpuConceptsError(f"{formula.name}: {name} is given twice; give each symbol once")
        values[name] = value
    return values


def _json_number(value: int | float | Fraction) -> int | float | str:
    """A value as JSON can carry it: no infinite or not-a-number floats, no int past Python's str() limit.

    Ints are exact JSON numbers up to about 4,000 digits and exact digit strings beyond;
    a fraction is a float when a normal float holds it, else its exact decimal text.
    """
    if isinstance(value, int):
        return value if value.bit_length() < _JSON_INT_BITS else format(Decimal(value), "f")
    as_float = float(value)
    if math.isfinite(as_float) and abs(as_float) >= sys.float_info.min:
        return as_float
    return significant(Fraction(value), 17)


_JSON_INT_BITS = 13_000  # about 3,900 digits, below the 4,300 that int -> str allows by default


def _formula_record(formula: Formula) -> dict[str, Any]:
    return {
        "name": formula.name,
        "kind": formula.kind,
        "summary": formula.summary,
        "latex": formula.equation(),
        "symbols": [
            {"name": s.name, "meaning": s.meaning, "unit": s.unit, "domain": s.domain}
            for s in formula.symbols
        ],
    }


def _cmd_formulas(args: argparse.Namespace) -> int:
    records = [_formula_record(f) for f in CATALOGUE.values()]
    if args.json:
        print(json.dumps(records, indent=2))
        return 0
    for record in records:
        print(f"{record['name']}  [{record['kind']}]")
        print(f"    {record['summary']}")
        print(f"    {record['latex']}")
        for s in record["symbols"]:
            print(f"      {s['name']:>6}  {s['meaning']} ({s['unit']})")
    return 0


def _cmd_calc(args: argparse.Namespace) -> int:
    formula = get(args.name)
    values = _parse_values(formula, args.values)
    value = formula(**values)  # refuses a result no float can hold, naming the formula
    record: dict[str, Any] = {
        "name": formula.name,
        "inputs": {k: _json_number(v) for k, v in values.items()},
        "value": _json_number(value),
        "unit": formula.kind,
        "text": describe(value, formula.kind),
        "latex": formula.equation(),
        "worked": formula.worked(**values),
    }
    if formula.kind == "bytes":
        record |= {"decimal": decimal_bytes(value), "binary": binary_bytes(value)}
    if args.json:
        print(json.dumps(record, indent=2, allow_nan=False))
    else:
        print(record["text"])
        print(f"  {formula.lhs} = {record['worked']}")
    return 0


def _progress(line: str) -> None:
    """One progress line on stderr, at once (stdout holds the result alone)."""
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def _warning(command: str) -> Callable[[str], None]:
    """A one-line warning of ``command`` on stderr: something went wrong beside the result."""
    return lambda text: _progress(f"gpuconcepts {command}: warning: {text}")


def _cmd_profile(args: argparse.Namespace) -> int:
    from gpuconcepts.files import check_writable

    if args.save is not None:
        check_writable(args.save, "--save")  # said now, not after a minute of measuring
    require("torch", "`profile`", "kernels")
    from gpuconcepts.measure import resolve_device
    from gpuconcepts.render import format_run
    from gpuconcepts.run import collect

    device = resolve_device(args.device)
    run = collect(device, args.quick, progress=_progress, dtype=args.dtype)
    from gpuconcepts.run.peaks_cache import identity_here, keep_peaks

    # what analyze and verify reuse on this machine (a folder that cannot be written is said)
    keep_peaks(run.peaks, identity_here(device, args.quick, args.dtype), _warning("profile"))
    if args.save is not None:
        run.save(args.save)
        _progress(f"saved the run to {args.save}")
    sys.stdout.write(run.to_json() if args.json else format_run(run) + "\n")
    return 0


def _cmd_verify(args: argparse.Namespace) -> int:
    """``gpuconcepts verify``: exit 0 whenever the claims were judged, whatever the verdicts (a
    claim that does not hold here is a measured result; scripts read verdicts from --json)."""
    if args.run_path is None:  # judging a saved run needs no torch
        require("torch", "`verify`", "kernels")
    from gpuconcepts.claims.verify import judged, verify_dict
    from gpuconcepts.render.ledgers import format_ledgers

    def progress(line: str) -> None:
        _progress(f"[verify] {line}")

    run, claims = judged(
        args.device, args.quick, run_path=args.run_path, progress=progress, fresh=args.fresh
    )
    if args.json:
        sys.stdout.write(json.dumps(verify_dict(run, claims), indent=2, allow_nan=False) + "\n")
    else:  # both ledgers: the post's claims tallied, facts and the model's own apart
        sys.stdout.write(format_ledgers(run, claims) + "\n")
    return 0


def _cmd_compare(args: argparse.Namespace) -> int:
    from gpuconcepts.render import compare_dict, format_compare
    from gpuconcepts.run import load

    runs = [load(path) for path in args.paths]
    if args.json:
        print(json.dumps(compare_dict(runs), indent=2, allow_nan=False))
    else:
        print(format_compare(runs))
    return 0


def _cmd_hardware(args: argparse.Namespace) -> int:
    from gpuconcepts.hardware import GPUS, format_table, table_rows

    if args.json:
        print(json.dumps({"gpus": [gpu.to_dict() for gpu in GPUS.values()]}, indent=2))
        return 0
    print(format_table(table_rows()) + "\n\nSources:")
    for gpu in GPUS.values():
        print(f"  {gpu.name}: {gpu.source}")
    print("FLOP/s are dense (not 2:4 sparse); bandwidths are decimal (1 TB = 1e12 B).")
    return 0


def _cmd_analyze(args: argparse.Namespace) -> int:
    """``gpuconcepts analyze``: build the model, make its inputs, print the table, JSON or CSV
    (and write the figure); on Ctrl-C, what was measured so far, then the signal goes on."""
    require("torch", "`analyze`", "kernels")
    import torch

    from gpuconcepts.analysis import parse_input

    if (args.model is None) == (args.factory is None):
        raise GpuConceptsError("give FILE.py:FACTORY or --factory pkg.module:fn (one of them)")
    from gpuconcepts.analysis.core import check_repeats

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
    from pathlib import PurePath

    from gpuconcepts.analysis import analyze, build_model, make_inputs
    from gpuconcepts.files import check_writable, save_figure
    from gpuconcepts.measure import resolve_device
    from gpuconcepts.run.peaks_cache import identity_here, keep_peaks, kept_peaks, use_peaks

    resolved = resolve_device(args.device)
    peaks, source = None, None
    if args.peaks is not None:
        from gpuconcepts.run import load

        saved = load(args.peaks)
        if saved.peaks.device != resolved:
            raise GpuConceptsError(
                f"--peaks {args.peaks}: its peaks were measured on {saved.peaks.device}; "
                f"analyze runs on {resolved}"
            )
        peaks, source = saved.peaks, f"from {args.peaks}, {saved.provenance.created_utc}"
        use_peaks(peaks)
    if args.figure is not None:
        require("matplotlib", "`analyze --figure`", "plots")
        check_writable(args.figure, "--figure")
        if not PurePath(args.figure).suffix:
            raise GpuConceptsError(
                f"--figure {args.figure}: give the figure a suffix (.svg, .png, .pdf)"
            )
    origin = args.model if args.model is not None else str(args.factory)
    progress = ProgressLine()

    def write(report: Report) -> None:
        if source is not None:
            report = dataclasses.replace(report, peaks_source=source)
        if args.figure is not None:
            save_figure(report.figure(), args.figure)
        text = report.to_json() if args.json else report.csv() if args.csv else report.text()
        sys.stdout.write(text.rstrip("\n") + "\n")

    with user_code(origin, quiet=args.json or args.csv):
        model = build_model(origin, module=args.factory is not None)
        inputs, kwargs = make_inputs(model, specs, resolved, args.dtype)
        # this machine's peaks, kept from an earlier measurement (after the model and its
        # inputs, whose mistakes are said before anything is measured); else analyze
        # measures them, and they are kept below
        identity = identity_here(resolved, quick=resolved == "cpu")
        if peaks is None and not args.fresh:
            peaks, source = kept_peaks(identity) or (None, None)
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
        keep_peaks(report.peaks, identity, _warning("analyze"))
    write(report)
    return 0


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


def _cmd_distributed(args: argparse.Namespace) -> int:
    require("torch", "`distributed`", "kernels")
    from gpuconcepts.distributed.report import measure
    from gpuconcepts.distributed.text import format_report

    report = measure(args.world_size, backend=args.backend, quick=args.quick, port=args.port)
    if args.json:
        sys.stdout.write(json.dumps(report.to_dict(), indent=2) + "\n")
    else:
        sys.stdout.write(format_report(report) + "\n")
    return 0


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


def _cmd_model(args: argparse.Namespace) -> int:
    from gpuconcepts.model import Draft, account, preset, shape_from

    shape = shape_from(
        preset(args.preset),
        d=args.d,
        layers=args.layers,
        d_ff=args.d_ff,
        heads=args.heads,
        n_kv=args.n_kv,
        d_head=args.d_head,
        vocab=args.vocab,
        seq=args.seq,
        batch=args.batch,
        dtype=args.dtype,
        gated=args.gated,
        tied=args.tied,
        experts=args.experts,
        top_k=args.top_k,
    )
    given = [args.draft_alpha is not None, args.draft_gamma is not None]
    if any(given) and not all(given):
        raise GpuConceptsError("give --draft-alpha and --draft-gamma together")
    if args.draft_cost is not None and not all(given):
        raise GpuConceptsError("--draft-cost needs --draft-alpha and --draft-gamma")
    draft = Draft(args.draft_alpha, args.draft_gamma, args.draft_cost) if all(given) else None
    table = account(shape, args.gpu, draft)
    print(table.to_json() if args.json else table.format())
    return 0


_SAVE_HELP = (
    "also write {what} to PATH, a new file or one that replaces a regular file (a directory, "
    "device, pipe or socket is refused; a symbolic link is followed and its file replaced)"
)

_FRESH_HELP = (
    "measure this machine's peaks again instead of reusing the ones kept from an earlier "
    "run (in the user's cache folder, or GPUCONCEPTS_CACHE_DIR)"
)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``gpuconcepts`` command."""
    parser = _Parser(
        prog="gpuconcepts",
        description="How DLRM, MLP, CNN, RNN and Transformer load a GPU: the book's formulas, "
        "and measurements on this machine.",
        epilog="Example: gpuconcepts calc embedding_memory N=100000000 d=128 s=4",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    p = sub.add_parser("formulas", help="list every formula with its LaTeX and symbols")
    p.add_argument("--json", action="store_true", help="print a JSON list instead of text")
    p.set_defaults(run=_cmd_formulas)

    p = sub.add_parser(
        "calc",
        help="evaluate a formula: value, units and the worked derivation",
        description="Evaluate one formula exactly. Values may use _ or exponents for counts "
        "(N=100_000_000, N=1e8); s may be fractional (s=0.5 for 4-bit weights).",
        epilog=CALC_JSON_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("name", metavar="NAME", help="formula name (see `gpuconcepts formulas`)")
    p.add_argument("values", metavar="SYM=VALUE", nargs="*", help="a value for every symbol")
    p.add_argument("--json", action="store_true", help="print a JSON object (fields below)")
    p.set_defaults(run=_cmd_calc)

    for name, run, text in (
        (
            "profile",
            _cmd_profile,
            "measure a run here: peaks, the five workloads on a roofline, every claim",
        ),
        ("verify", _cmd_verify, "judge every claim: measured here, or from a saved run (--run)"),
    ):
        p = sub.add_parser(name, help=text, description=text)
        p.add_argument(
            "--device", choices=("auto", "cpu", "cuda"), default="auto", help="default: auto"
        )
        p.add_argument("--quick", action="store_true", help="small sizes, about a minute on a CPU")
        p.add_argument("--json", action="store_true", help="print JSON on stdout")
        p.set_defaults(run=run)
        if name == "profile":
            p.add_argument("--save", metavar="PATH", help=_SAVE_HELP.format(what="the run"))
            p.add_argument(
                "--dtype",
                type=_dtype,
                metavar="D",
                help=f"run every kernel in this data type: {_DTYPE_NAMES} (default: float32 "
                "on a CPU; bfloat16 on a GPU, embedding tables float32)",
            )
        else:
            p.add_argument(
                "--run",
                dest="run_path",
                metavar="PATH",
                help="judge this saved run (gpuconcepts profile --save) instead of measuring",
            )
            p.add_argument("--fresh", action="store_true", help=_FRESH_HELP)

    p = sub.add_parser(
        "compare",
        help="saved runs side by side: peaks, every workload's time and bound, the claims",
        description="Compare runs saved by `gpuconcepts profile --save` (e.g. docs/runs/*.json).",
    )
    p.add_argument("paths", metavar="PATH", nargs="+", help="a saved run (JSON)")
    p.add_argument("--json", action="store_true", help="print a JSON object instead of text")
    p.set_defaults(run=_cmd_compare)

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
        type=_dtype,
        metavar="D",
        help=f"{_DTYPE_NAMES} but tf32 (default: the model's)",
    )
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
    p.add_argument("--fresh", action="store_true", help=_FRESH_HELP)
    p.add_argument(
        "--threads", type=int, metavar="N", help="CPU threads for torch (default: torch's)"
    )
    p.add_argument(
        "--figure",
        metavar="PATH",
        help=_SAVE_HELP.format(what="the roofline figure (.svg, .png, .pdf)"),
    )
    shown = p.add_mutually_exclusive_group()
    shown.add_argument("--json", action="store_true", help="print the report as JSON")
    shown.add_argument("--csv", action="store_true", help="print every call as CSV")
    p.set_defaults(run=_cmd_analyze)

    from gpuconcepts.hardware import DEFAULT_GPU, GPUS
    from gpuconcepts.model import PRESETS

    p = sub.add_parser(
        "model",
        help="a whole transformer from its shapes: params, FLOPs, memory, KV cache, decode, "
        "serving on a GPU",
        description="Account for a whole decoder-only transformer with the book's formulas, "
        "and answer a serving question on a datasheet GPU: do the weights and the KV cache "
        "fit, the largest batch that does, whether decode can become compute-bound at this "
        "context, and lower bounds on the time to the first token and per output token. "
        "Start from a preset and change any shape; heads and d_head follow d, and the KV "
        "heads follow the heads, unless given.",
    )
    p.add_argument(
        "--preset",
        choices=tuple(PRESETS),
        default="llama-3-8b-like",
        help="published shapes to start from (default: llama-3-8b-like)",
    )
    for flag, text in (
        ("--d", "model width"),
        ("--layers", "transformer layers"),
        ("--d-ff", "MLP width (default: follows --d by the preset family's ratio)"),
        ("--heads", "query heads"),
        ("--n-kv", "key/value heads (= heads: MHA; 1: MQA)"),
        ("--d-head", "width of one head"),
        ("--vocab", "vocabulary size"),
        ("--seq", "sequence length: prompt and context (KV cache, activations, serving)"),
        ("--batch", "sequences per batch"),
        ("--experts", "MLP experts per layer (mixture of experts; 1: dense)"),
        ("--top-k", "experts each token is routed to"),
    ):
        p.add_argument(flag, type=int, metavar="N", help=text)
    p.add_argument("--dtype", metavar="D", help=f"weights and cache dtype: {_DTYPE_NAMES}")
    p.add_argument(
        "--gated",
        action=argparse.BooleanOptionalAction,
        help="three-matrix (SwiGLU) MLP, or two with --no-gated",
    )
    p.add_argument(
        "--tied",
        action=argparse.BooleanOptionalAction,
        help="the output head shares the embedding's weights, or not with --no-tied",
    )
    p.add_argument(
        "--draft-alpha",
        type=float,
        metavar="A",
        help="speculative decoding: chance a drafted token is accepted (0 < A < 1)",
    )
    p.add_argument(
        "--draft-gamma", type=int, metavar="N", help="speculative decoding: tokens drafted per step"
    )
    p.add_argument(
        "--draft-cost",
        type=float,
        metavar="C",
        help="speculative decoding: a draft step's time over a target step's (default: a "
        "free draft, the speedup's upper bound)",
    )
    p.add_argument(
        "--gpu",
        choices=tuple(GPUS),
        default=DEFAULT_GPU,
        help=f"datasheet GPU for the decode and serving rows (default: {DEFAULT_GPU})",
    )
    p.add_argument("--json", action="store_true", help="print a JSON object instead of text")
    p.set_defaults(run=_cmd_model)

    text = "run collectives in W processes with torch.distributed; check their bytes"
    p = sub.add_parser(
        "distributed",
        help=text,
        description=text + " on the loopback interface and time them",
    )
    p.add_argument(
        "--world-size", type=int, required=True, metavar="W", help="number of processes (2 or more)"
    )
    p.add_argument(
        "--backend", choices=("gloo", "nccl"), default="gloo", help="gloo (CPU, default) or nccl"
    )
    p.add_argument("--port", type=int, help="rendezvous port on 127.0.0.1 (default: a free one)")
    p.add_argument("--quick", action="store_true", help="small sizes, about a minute on a CPU")
    p.add_argument("--json", action="store_true", help="print JSON on stdout")
    p.set_defaults(run=_cmd_distributed)

    p = sub.add_parser("hardware", help="the datasheet table of common GPUs, with sources")
    p.add_argument("--json", action="store_true", help="print a JSON list instead of a table")
    p.set_defaults(run=_cmd_hardware)
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
        return done.code if isinstance(done.code, int) else EXIT_USAGE
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
                return EXIT_USAGE
            except GpuConceptsError as error:
                print(f"gpuconcepts {args.command}: error: {error}", file=sys.stderr)
                return EXIT_USAGE
            except KeyboardInterrupt:
                print(f"gpuconcepts {args.command}: interrupted (Ctrl-C)", file=sys.stderr)
                return EXIT_INTERRUPTED
            except Terminated:
                print(f"gpuconcepts {args.command}: terminated (SIGTERM)", file=sys.stderr)
                return EXIT_TERMINATED
    except KeyboardInterrupt:  # a Ctrl-C pending as the handlers were restored: seen once
        return EXIT_INTERRUPTED
    return status


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


if __name__ == "__main__":
    sys.exit(entry())
