r"""Frozen dataclasses as plain JSON records, and back, with every bad entry named.

:func:`to_record` turns a dataclass (nested ones included) into dicts, lists and numbers;
:func:`from_record` rebuilds it from its type annotations, checking each field on the way: a
missing field, a string where a number belongs or a list that is not one names the field, so
a damaged file says where it is damaged. A Run stores its whole-model and distributed results
this way (see :mod:`gpuconcepts.run`).

>>> from dataclasses import dataclass
>>> @dataclass(frozen=True)
... class Timed:
...     name: str
...     seconds: tuple[float, ...]
...     sizes: dict[str, int]
>>> timed = Timed("step", (1e-3, 2e-3), {"B": 4})
>>> from_record(Timed, to_record(timed)) == timed
True
>>> from_record(Timed, {"name": "step", "seconds": [1e-3, "slow"], "sizes": {}})
Traceback (most recent call last):
...
gpuconcepts.errors.GpuConceptsError: seconds[1] must be a number; got 'slow'
>>> from_record(Timed, {"name": "step", "seconds": []})
Traceback (most recent call last):
...
gpuconcepts.errors.GpuConceptsError: missing field 'sizes'
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Mapping
from typing import Any, TypeVar, Union, get_args, get_origin, get_type_hints

from gpuconcepts.errors import GpuConceptsError

T = TypeVar("T")

_SHOWN = 60
"""At most this many characters of a bad value are quoted in an error."""


def to_record(value: Any) -> dict[str, Any]:
    """A dataclass as a JSON-ready dict (nested dataclasses too; tuples are written as lists)."""
    if not dataclasses.is_dataclass(value) or isinstance(value, type):
        raise GpuConceptsError(f"to_record: expected a dataclass, got {type(value).__name__}")
    return dataclasses.asdict(value)


def from_record(cls: type[T], record: object, where: str = "") -> T:
    """Rebuild ``cls`` from :func:`to_record`'s dict; a missing or mistyped field is named.

    Fields with a default may be left out. The dataclass's own checks (``__post_init__``) run
    as usual, their errors prefixed with ``where``.
    """
    if not isinstance(record, Mapping):
        raise GpuConceptsError(f"{where or cls.__name__} must be an object; got {_shown(record)}")
    hints = get_type_hints(cls)
    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        name = f"{where}.{f.name}" if where else f.name
        if f.name not in record:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise GpuConceptsError(f"missing field {name!r}")
            continue
        values[f.name] = read(record[f.name], hints[f.name], name)
    try:
        return cls(**values)
    except GpuConceptsError as error:
        if not where:
            raise
        raise GpuConceptsError(f"{where}: {error}") from None


def read(value: object, kind: Any, where: str) -> Any:
    """``value`` checked against the type ``kind`` (lists become tuples where ``kind`` says
    so); a value of the wrong type is a :class:`GpuConceptsError` naming ``where``."""
    origin = get_origin(kind)
    if kind is Any:
        return value
    if origin in (Union, types.UnionType):
        options = [a for a in get_args(kind) if a is not type(None)]
        if value is None and len(options) < len(get_args(kind)):
            return None
        if len(options) != 1:
            raise TypeError(f"records: cannot read the union {kind!r}")
        return read(value, options[0], where)
    if kind is bool:
        return _checked(value, isinstance(value, bool), "true or false", where)
    if kind is int:
        whole = isinstance(value, int) and not isinstance(value, bool)
        return _checked(value, whole, "a whole number", where)
    if kind is float:
        number = isinstance(value, int | float) and not isinstance(value, bool)
        return float(_checked(value, number, "a number", where))  # type: ignore[arg-type]
    if kind is str:
        return _checked(value, isinstance(value, str), "a string", where)
    if origin is tuple:
        _checked(value, isinstance(value, list | tuple), "a list", where)
        items = list(value)  # type: ignore[call-overload]
        args = get_args(kind)
        if len(args) == 2 and args[1] is Ellipsis:
            args = (args[0],) * len(items)
        elif len(args) != len(items):
            raise GpuConceptsError(f"{where} must hold {len(args)} entries; got {len(items)}")
        pairs = enumerate(zip(items, args, strict=True))
        return tuple(read(v, a, f"{where}[{i}]") for i, (v, a) in pairs)
    if origin in (dict, Mapping):
        _checked(value, isinstance(value, Mapping), "an object", where)
        key_kind, item_kind = get_args(kind)
        return {
            read(k, key_kind, f"{where} key"): read(v, item_kind, f"{where}[{k!r}]")
            for k, v in value.items()  # type: ignore[attr-defined]
        }
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        return from_record(kind, value, where)
    raise TypeError(f"records: no reader for {kind!r} ({where})")


def _checked(value: object, ok: bool, what: str, where: str) -> object:
    if not ok:
        raise GpuConceptsError(f"{where} must be {what}; got {_shown(value)}")
    return value


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"
