"""Reading a run file with care, before its fields are read: a regular file of at most
:data:`MAX_RUN_BYTES`, UTF-8 text, strict JSON with each key once, nesting at most
:data:`MAX_DEPTH` deep, every number finite and every whole number within 64 bits; each error
names the file and the entry. :func:`gpuconcepts.run.run.load` reads a run through it.

>>> import json
>>> check_numbers(json.loads('{"a": [1, 2.5]}'), "r.json")
>>> check_numbers({"peaks": {"flops_per_s": float("nan")}}, "r.json")
Traceback (most recent call last):
...
gpuconcepts.errors.GpuConceptsError: r.json: peaks.flops_per_s must be a finite number; got NaN
"""

from __future__ import annotations

import json
import math
import os
import stat
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.files import cause
from gpuconcepts.measurement import Measurement
from gpuconcepts.records import from_record, read
from gpuconcepts.units import binary_bytes, plain_number
from gpuconcepts.units import sizes as sizes_text
from gpuconcepts.workloads import check_counts

MAX_RUN_BYTES = 64 * 1024**2
"""The largest run file :func:`~gpuconcepts.run.run.load` reads (a full GPU run is well under 1 MiB); a larger one is
refused before a byte of it is read."""

MAX_DEPTH = 32
"""The deepest nesting of lists and objects a run file may have (a run has about 7 levels)."""

MAX_WHOLE = 2**63
"""Whole numbers in a run lie below this in size: what any JSON reader holds as a 64-bit int."""


class Oversized(int):
    """A whole number too large for a run, kept as its length so that the check can name it."""


def unique_keys(source: str) -> Callable[[list[tuple[str, object]]], dict[str, object]]:
    """A JSON object's keys, each given once: a key given twice is refused (JSON would keep
    the last silently, so which value counts would be a guess)."""

    def build(pairs: list[tuple[str, object]]) -> dict[str, object]:
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise GpuConceptsError(
                    f"{source}: the key {key!r:.60} is given twice in one object; a run gives "
                    "each field once"
                )
            seen.add(key)
        return dict(pairs)

    return build


def whole_number(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > 2 * len(str(MAX_WHOLE)):  # never convert 5,000 digits; quote a few dozen
        return Oversized(digits)
    return int(text)


def check_numbers(data: object, source: str) -> None:
    """Refuse, naming the entry, a number no run holds (not finite, or a whole number of 64
    bits or more) and nesting deeper than :data:`MAX_DEPTH`, walking without recursion."""
    stack: list[tuple[str, object, int]] = [("", data, 0)]
    while stack:
        where, value, depth = stack.pop()
        if isinstance(value, dict | list):
            if depth >= MAX_DEPTH:
                top = where.split(".")[0].split("[")[0]
                raise GpuConceptsError(
                    f"{source}: {top}: nested deeper than a run can be (at most {MAX_DEPTH} levels)"
                )
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, item in items:
                name = f"{where}.{key}" if isinstance(value, dict) else f"{where}[{key}]"
                stack.append((name.lstrip("."), item, depth + 1))
        elif isinstance(value, Oversized):
            raise GpuConceptsError(
                f"{source}: {where}: a whole number of {plain_number(int(value))} digits is beyond what a "
                "run holds (64 bits)"
            )
        elif isinstance(value, int) and not isinstance(value, bool) and abs(value) >= MAX_WHOLE:
            raise GpuConceptsError(
                f"{source}: {where}: {value} is beyond what a run holds (64 bits)"
            )
        elif isinstance(value, float) and not math.isfinite(value):
            raise GpuConceptsError(
                f"{source}: {where} must be a finite number; got {json.dumps(value)}"
            )


@contextmanager
def entry(source: str, where: str) -> Iterator[None]:
    """Prefix any error raised inside with the file and the entry it was reading."""
    try:
        yield
    except GpuConceptsError as error:
        raise GpuConceptsError(f"{source}: {where}: {error}") from None
    except (TypeError, ValueError, KeyError, AttributeError) as error:
        raise GpuConceptsError(f"{source}: {where}: malformed ({error})") from None


_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def read_text(path: Path) -> str:
    """The text of a run file, checked before reading: a regular file, not too large, UTF-8."""
    try:  # non-blocking: opening a FIFO with no writer must not wait
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except FileNotFoundError:
        raise GpuConceptsError(f"{path}: no such file") from None
    except OSError as error:
        raise GpuConceptsError(f"{path}: cannot be read ({cause(error)})") from None
    try:
        info = os.fstat(descriptor)
        for test, kind in _KINDS:
            if test(info.st_mode):
                raise GpuConceptsError(f"{path}: is {kind}, not a run file")
        too_large = GpuConceptsError(
            f"{path}: is {binary_bytes(info.st_size)}; a run file is at most "
            f"{binary_bytes(MAX_RUN_BYTES)}"
        )
        if info.st_size > MAX_RUN_BYTES:
            raise too_large
        with os.fdopen(descriptor, "rb", closefd=False) as stream:
            data = stream.read(MAX_RUN_BYTES + 1)
    except OSError as error:
        raise GpuConceptsError(f"{path}: cannot be read ({cause(error)})") from None
    finally:
        os.close(descriptor)
    if len(data) > MAX_RUN_BYTES:  # it grew since it was measured
        raise too_large
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise GpuConceptsError(
            f"{path}: not a run file (not UTF-8 text: byte {error.start} is {data[error.start]:#x})"
        ) from None


def read_measurements(records: object, source: str) -> list[Measurement]:
    """A run's measurements, each read field by field and its counts checked against the
    catalogue's formulas at its sizes (a stale count is refused)."""
    measurements = []
    if not isinstance(records, list):
        raise GpuConceptsError(f"{source}: measurements must be a list")
    for i, record in enumerate(records):
        with entry(source, f"measurements[{i}]"):
            m = from_record(Measurement, record)  # every field named; whole counts exact
        with entry(source, f"measurements[{i}] ({m.workload} at {sizes_text(m.params)})"):
            check_counts(m)
        measurements.append(m)
    return measurements


def registered_predictions(records: list[Any], source: str) -> tuple[float | None, ...]:
    """Each measurement's registered prediction (``summary.predicted_seconds``), None where
    its record stored none; a stored one that is not a positive number is refused."""
    found: list[float | None] = []
    for i, record in enumerate(records):
        summary = record.get("summary") if isinstance(record, dict) else None
        value = summary.get("predicted_seconds") if isinstance(summary, dict) else None
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int | float) or value <= 0
        ):
            raise GpuConceptsError(
                f"{source}: measurements[{i}].summary.predicted_seconds must be a positive "
                f"number of seconds or null; got {value!r}"
            )
        found.append(None if value is None else float(value))
    return tuple(found)


def check_sizes(sizes: Mapping[str, Any]) -> None:
    """The sizes a run records, as its readers need them: ``presets`` (tables of whole
    numbers), ``sweeps`` (lists of them) and ``claims`` (null, or every claim size)."""
    from gpuconcepts.results.claim_sizes import ClaimSizes  # noqa: PLC0415 (see run.py)

    if "presets" in sizes:
        read(sizes["presets"], Mapping[str, Mapping[str, int]], "presets")
    if "sweeps" in sizes:
        read(sizes["sweeps"], Mapping[str, tuple[int, ...]], "sweeps")
    if sizes.get("claims") is not None:
        ClaimSizes.from_table(read(sizes["claims"], Mapping[str, Any], "claims"))
