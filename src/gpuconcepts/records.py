r"""Frozen dataclasses as plain JSON records, and back, with every bad entry named.

:func:`to_record` turns a dataclass (nested ones included) into dicts, lists and numbers;
:func:`from_record` rebuilds it from its type annotations, checking each field on the way: a
missing field, a string where a number belongs or a list that is not one names the field, so
a damaged file says where it is damaged. A Run stores each of its parts this way, claims
included (see :mod:`gpuconcepts.run`).

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

Every number a record holds is a count, a size, a time or a rate: it must be finite and, unless
its annotation says otherwise (:class:`Bounds` in ``Annotated``), zero or more. A ``Literal``
field takes one of its values only:

>>> from typing import Annotated, Literal
>>> @dataclass(frozen=True)
... class Launch:
...     backend: Literal["gloo", "nccl"]
...     world_size: Annotated[int, at_least(2)]
...     offset: Annotated[float, ANY_SIGN] = 0.0
>>> from_record(Launch, {"backend": "gloo", "world_size": 2, "offset": -1.5})
Launch(backend='gloo', world_size=2, offset=-1.5)
>>> from_record(Launch, {"backend": "mpi", "world_size": 2})
Traceback (most recent call last):
...
gpuconcepts.errors.GpuConceptsError: backend must be 'gloo' or 'nccl'; got 'mpi'
>>> from_record(Launch, {"backend": "gloo", "world_size": 1})
Traceback (most recent call last):
...
gpuconcepts.errors.GpuConceptsError: world_size must be at least 2; got 1
>>> from_record(Timed, {"name": "step", "seconds": [float("nan")], "sizes": {}})
Traceback (most recent call last):
...
gpuconcepts.errors.GpuConceptsError: seconds[0] must be a finite number; got nan
>>> from_record(Timed, {"name": "step", "seconds": [-1e-3], "sizes": {}})
Traceback (most recent call last):
...
gpuconcepts.errors.GpuConceptsError: seconds[0] must be 0 or more; got -0.001

A count that is exact when whole is annotated ``int | float``: an int stays an int. A union of
several kinds (a claim's values) takes the first that reads:

>>> read(51200000000, int | float, "bytes"), read(2.5, int | float, "bytes")
(51200000000, 2.5)
>>> read(True, int | bool | str, "value"), read("fast", int | bool | str, "value")
(True, 'fast')
>>> read([1], int | bool | str, "value")
Traceback (most recent call last):
...
gpuconcepts.errors.GpuConceptsError: value must be a whole number, true or false or a string; got [1]

A key that is not a field is refused, so a misspelt one is named rather than ignored. A record
may carry keys its writer derives from the fields for people reading the file (a ridge point,
a summary): the dataclass names them in ``DERIVED_KEYS`` and reading ignores them. Fields named
in ``OPTIONAL_KEYS`` are written only when they differ from their default, so records that
never set them stay as short as they were. Both are class attributes, not fields
(``ClassVar[frozenset[str]]``):

>>> @dataclass(frozen=True)
... class Rate:
...     DERIVED_KEYS = frozenset({"per_ms"})
...     OPTIONAL_KEYS = frozenset({"note"})
...     per_s: float
...     note: str = ""
...     def to_dict(self) -> dict[str, float]:
...         return {**to_record(self), "per_ms": self.per_s / 1e3}
>>> Rate(2e3).to_dict()
{'per_s': 2000.0, 'per_ms': 2.0}
>>> from_record(Rate, Rate(2e3).to_dict())
Rate(per_s=2000.0, note='')
>>> from_record(Rate, {"per_s": 2e3, "per_us": 2e-3}, "rate")
Traceback (most recent call last):
...
gpuconcepts.errors.GpuConceptsError: unknown field 'rate.per_us'
"""

from __future__ import annotations

import dataclasses
import math
import types
from collections.abc import Mapping
from dataclasses import dataclass
from typing import (
    Annotated,
    Any,
    Literal,
    TypeVar,
    Union,
    get_args,
    get_origin,
    get_type_hints,
)

from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.units import plain_number

T = TypeVar("T")

_SHOWN = 60
"""At most this many characters of a bad value are quoted in an error."""


@dataclass(frozen=True)
class Bounds:
    """Where a number of a record may lie: ``low`` ≤ value ≤ ``high`` (None: no bound on that
    side; ``open_low``: ``low`` itself is excluded). Put it in a field's annotation,
    ``Annotated[int, at_least(2)]``; a number without one must be zero or more
    (:data:`NON_NEGATIVE`).

    >>> POSITIVE.admits(0), POSITIVE.admits(1e-9), at_least(2).text, ANY_SIGN.admits(-5)
    (False, True, 'at least 2', True)
    """

    low: float | None = 0
    high: float | None = None
    open_low: bool = False

    def admits(self, value: float) -> bool:
        """Whether ``value`` lies within the bounds."""
        if self.low is not None and (value <= self.low if self.open_low else value < self.low):
            return False
        return self.high is None or value <= self.high

    @property
    def text(self) -> str:
        """The bounds in words, as an error says them."""
        low = None if self.low is None else f"{plain_number(self.low)}"
        if self.high is not None:
            top = f"{plain_number(self.high)}"
            return f"at most {top}" if low is None else f"between {low} and {top}"
        if low is None:
            return "any number"
        if self.open_low:
            return "positive" if self.low == 0 else f"more than {low}"
        return f"{low} or more" if self.low == 0 else f"at least {low}"


NON_NEGATIVE = Bounds()
"""The bounds of a number whose annotation gives none: a count, a size, a time, a rate."""
POSITIVE = Bounds(open_low=True)
"""More than zero: a size that cannot be empty (a cache, a thread count)."""
ANY_SIGN = Bounds(low=None)
"""Any finite number (an offset, a difference)."""


def at_least(low: float) -> Bounds:
    """``low`` or more."""
    return Bounds(low=low)


def to_record(value: Any) -> dict[str, Any]:
    """A dataclass as a JSON-ready dict: nested dataclasses too, tuples written as lists, and
    the fields its ``OPTIONAL_KEYS`` names left out while at their default."""
    if not dataclasses.is_dataclass(value) or isinstance(value, type):
        raise GpuConceptsError(f"to_record: expected a dataclass, got {type(value).__name__}")
    return _plain(value)  # type: ignore[no-any-return]  # a dataclass gives a dict


def _plain(value: Any) -> Any:
    """``value`` in JSON's kinds: dicts, lists and the scalars."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        optional: frozenset[str] = getattr(value, "OPTIONAL_KEYS", frozenset())
        return {
            f.name: _plain(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if f.name not in optional or getattr(value, f.name) != _default(f)
        }
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _default(f: dataclasses.Field[Any]) -> Any:
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    if f.default is dataclasses.MISSING:
        raise TypeError(f"records: optional field {f.name!r} has no default")
    return f.default


def from_record(cls: type[T], record: object, where: str = "") -> T:
    """Rebuild ``cls`` from :func:`to_record`'s dict; a missing, mistyped or unknown field is
    named (keys in the class's ``DERIVED_KEYS`` are ignored).

    Fields with a default may be left out. The dataclass's own checks (``__post_init__``) run
    as usual, their errors prefixed with ``where``.
    """
    if not isinstance(record, Mapping):
        what = f"{where} must be" if where else "expected"  # the caller names the entry
        raise GpuConceptsError(f"{what} an object; got {_shown(record)}")
    hints, fields, known = _layout(cls)
    for key in record:
        if key not in known:
            name = f"{where}.{key}" if where else key
            raise GpuConceptsError(f"unknown field {name!r}")
    values: dict[str, Any] = {}
    for f in fields:
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


_Layout = tuple[dict[str, Any], tuple[dataclasses.Field[Any], ...], frozenset[str]]
_LAYOUTS: dict[type[Any], _Layout] = {}


def _layout(cls: type[Any]) -> _Layout:
    """A dataclass's resolved annotations, its fields and the keys a record of it may hold.

    Resolved once per class: evaluating the string annotations again for every record was
    most of the time a run took to load (hundreds of measurements and claims)."""
    found = _LAYOUTS.get(cls)
    if found is None:
        fields = dataclasses.fields(cls)
        names = frozenset(f.name for f in fields) | getattr(cls, "DERIVED_KEYS", frozenset())
        found = _LAYOUTS[cls] = (get_type_hints(cls, include_extras=True), fields, names)
    return found


def read(value: object, kind: Any, where: str, bounds: Bounds = NON_NEGATIVE) -> Any:
    """``value`` checked against the type ``kind`` (lists become tuples where ``kind`` says
    so); a value of the wrong type is a :class:`GpuConceptsError` naming ``where``.

    A number must be finite and within ``bounds`` (or the :class:`Bounds` in ``kind``'s
    ``Annotated``); a ``Literal`` admits its values only.
    """
    origin = get_origin(kind)
    if kind is Any or kind is object:
        return value
    if origin is Annotated:
        base, *extras = get_args(kind)
        found = [e for e in extras if isinstance(e, Bounds)]
        return read(value, base, where, found[0] if found else bounds)
    if origin is Literal:
        allowed = get_args(kind)
        if value not in allowed or isinstance(value, bool) != any(
            isinstance(o, bool) for o in allowed
        ):
            listed = " or ".join(repr(o) for o in allowed)
            raise GpuConceptsError(f"{where} must be {listed}; got {_shown(value)}")
        return value
    if origin in (Union, types.UnionType):
        return _read_union(value, kind, where, bounds)
    if kind is bool:
        return _checked(value, isinstance(value, bool), "true or false", where)
    if kind is int:
        whole = isinstance(value, int) and not isinstance(value, bool)
        return _within(_checked(value, whole, "a whole number", where), bounds, where)
    if kind is float:
        number = isinstance(value, int | float) and not isinstance(value, bool)
        _checked(value, number, "a number", where)
        return float(_within(value, bounds, where))
    if kind is str:
        return _checked(value, isinstance(value, str), "a string", where)
    if origin in (tuple, dict, Mapping):
        return _read_collection(value, kind, where, bounds)
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        return from_record(kind, value, where)
    raise TypeError(f"records: no reader for {kind!r} ({where})")


def _read_union(value: object, kind: Any, where: str, bounds: Bounds) -> Any:
    """``value`` read as one of the union ``kind``'s members (None where it admits None)."""
    options = [a for a in get_args(kind) if a is not type(None)]
    if value is None and len(options) < len(get_args(kind)):
        return None
    if set(options) == {int, float}:  # a count exact when whole: an int stays an int
        number = isinstance(value, int | float) and not isinstance(value, bool)
        return _within(_checked(value, number, "a number", where), bounds, where)
    if len(options) == 1:
        return read(value, options[0], where, bounds)
    for option in options:  # several kinds of scalar (a claim's values): the first that reads
        try:
            return read(value, option, where, bounds)
        except GpuConceptsError:
            pass
    kinds = [_kind_text(o) for o in options]
    listed = f"{', '.join(kinds[:-1])} or {kinds[-1]}"
    raise GpuConceptsError(f"{where} must be {listed}; got {_shown(value)}")


def _read_collection(value: object, kind: Any, where: str, bounds: Bounds) -> Any:
    """``value`` read as the tuple or mapping ``kind``, each item by its own type."""
    if get_origin(kind) is tuple:
        _checked(value, isinstance(value, list | tuple), "a list", where)
        items = list(value)  # type: ignore[call-overload]
        args = get_args(kind)
        if len(args) == 2 and args[1] is Ellipsis:
            args = (args[0],) * len(items)
        elif len(args) != len(items):
            raise GpuConceptsError(f"{where} must hold {len(args)} entries; got {len(items)}")
        pairs = enumerate(zip(items, args, strict=True))
        return tuple(read(v, a, f"{where}[{i}]", bounds) for i, (v, a) in pairs)
    _checked(value, isinstance(value, Mapping), "an object", where)  # a dict or a Mapping
    key_kind, item_kind = get_args(kind)
    return {
        read(k, key_kind, f"{where} key"): read(v, item_kind, f"{where}[{k!r}]", bounds)
        for k, v in value.items()  # type: ignore[attr-defined]
    }


_KIND_TEXT: dict[Any, str] = {
    bool: "true or false",
    int: "a whole number",
    float: "a number",
    str: "a string",
}


def _kind_text(kind: Any) -> str:
    """One kind of a union in words, as an error lists them."""
    if get_origin(kind) is Annotated:
        return _kind_text(get_args(kind)[0])
    if get_origin(kind) in (Union, types.UnionType) and set(get_args(kind)) == {int, float}:
        return "a number"
    if kind in _KIND_TEXT:
        return _KIND_TEXT[kind]
    raise TypeError(f"records: cannot read the union member {kind!r}")


def _within(value: Any, bounds: Bounds, where: str) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        raise GpuConceptsError(f"{where} must be a finite number; got {_shown(value)}")
    if not bounds.admits(value):
        raise GpuConceptsError(f"{where} must be {bounds.text}; got {_shown(value)}")
    return value


def _checked(value: object, ok: bool, what: str, where: str) -> object:
    if not ok:
        raise GpuConceptsError(f"{where} must be {what}; got {_shown(value)}")
    return value


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"
