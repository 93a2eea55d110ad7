"""Declared types, checked where a value is produced: ``conformer(type_info)`` gives the one
function every target runs on a value declared as ``type_info`` (a step's ``output_type``, a
``from_collection`` element's ``type_info``).

It hands back the value in the declared type's shape, converting where PyFlink's coders convert
silently (an ``int`` for ``FLOAT``/``DOUBLE`` becomes a ``float``, a ``bool`` for an integer type
an ``int``, a tuple or list for a ``ROW`` a ``Row``, a list for a ``TUPLE`` a tuple; a ``FLOAT``
is rounded to 32 bits, as Flink's ``Float`` holds it: ``to_float32``), and raises
``DeclaredTypeError`` (a ``TypeError``) naming the value, the declared type and the part that
does not fit. None fits every type (a null field, as in Flink and Spark).

Hot path: a value whose class is exactly the type's class (``int`` for ``INT``, ``tuple`` for
``TUPLE``, ...) is handed back at once, unchecked inside (``conformer`` checks it fully with
``full=True``, as ``from_collection`` does once per element). A type with a ``FLOAT`` in it has
no such path: its floats are rounded wherever they are.

>>> from fs_compat.common import Types
>>> conformer(Types.DOUBLE())(1)
1.0
>>> conformer(Types.FLOAT())(0.1), conformer(Types.TUPLE([Types.STRING(), Types.FLOAT()]))(("a", 3))
(0.10000000149011612, ('a', 3.0))
>>> conformer(Types.ROW_NAMED(["k", "n"], [Types.STRING(), Types.INT()]))(("a", 1))
Row(k='a', n=1)
>>> conformer(Types.INT())("a")
Traceback (most recent call last):
...
fs_compat.common._conform.DeclaredTypeError: 'a' (str) does not fit the declared type Integer
"""

from __future__ import annotations

import datetime
import math
import operator
import struct
from collections.abc import Callable
from decimal import Decimal
from numbers import Real
from typing import Any

from ._row import Row, _named_row
from ._time import Instant
from ._typeinfo import (
    BasicArrayTypeInfo,
    BasicType,
    BasicTypeInfo,
    DateTypeInfo,
    ListTypeInfo,
    MapTypeInfo,
    ObjectArrayTypeInfo,
    PrimitiveArrayTypeInfo,
    RowTypeInfo,
    TimestampTypeInfo,
    TimeTypeInfo,
    TupleTypeInfo,
)

Conform = Callable[[Any], Any]


class DeclaredTypeError(TypeError):
    """A value does not fit its declared type: ``value`` (what arrived), ``declared`` (the type
    information), ``detail`` (which part does not fit, and why; empty when the value itself),
    ``where`` (where it arrived, leading the message when given); ``of`` names what was declared
    (``"output type"``, or a side output's type: ``"type of side output 'late'"``)."""

    def __init__(self, value: Any, declared: Any, detail: str = "", where: str = "") -> None:
        self.value = value
        self.declared = declared
        self.detail = detail
        self.of = "output type"
        lead = f"{where} " if where else ""
        super().__init__(f"{lead}{self.arrived()} does not fit the declared type {declared!r}{self.why()}")

    def arrived(self) -> str:
        """``'a' (str)``: the value and its class."""
        return f"{self.value!r} ({type(self.value).__name__})"

    def why(self) -> str:
        """``: field 1: ...`` when a part of the value does not fit, else empty."""
        return f": {self.detail}" if self.detail else ""


class _MisfitError(Exception):
    """A part of a value does not fit (``conformer`` turns it into a DeclaredTypeError)."""


def conformer(type_info: Any, full: bool = False, fields: bool = False) -> Conform | None:
    """The function that checks a value declared as ``type_info`` and hands it back in the type's
    shape (see the module docstring), or None when any value fits (no type, ``PICKLED_BYTE_ARRAY``).
    ``full``: check inside values of the type's exact class too (not only other values).
    ``fields``: for a consumer that reads a ``ROW`` value only field by field (a DataFrame's
    columns): a tuple or list whose fields fit as they are is handed back as it is, not as a Row
    (the same checks and errors; a value that needs converting still becomes a Row).

    >>> from fs_compat.common import Types
    >>> declared = Types.ROW_NAMED(["k", "n"], [Types.STRING(), Types.LONG()])
    >>> conformer(declared, fields=True)(("a", 1)), conformer(declared, fields=True)(("a", True))
    (('a', 1), Row(k='a', n=1))
    """
    if type_info is None:
        return None
    part = _part(type_info)
    if part is None:
        return None
    shape = None if full else exact_class(type_info)

    def conform(value: Any) -> Any:
        if value.__class__ is shape:
            return value
        try:
            return part(value)
        except _MisfitError as exc:
            detail = str(exc)
            raise DeclaredTypeError(value, type_info, "" if detail == _SELF else detail) from None

    if shape is Row:  # a tuple or list that fits goes straight to the generated check, the rest here
        return _compiled(type_info, conform, fields) or conform
    return conform


def exact_class(type_info: Any) -> type | None:
    """The class whose values ``conformer(type_info)`` hands back unchecked (its hot path); None
    when there is none, as for every type with a ``FLOAT`` in it (its floats must be rounded).

    >>> from fs_compat.common import Types
    >>> exact_class(Types.DOUBLE()), exact_class(Types.FLOAT()), exact_class(Types.LIST(Types.FLOAT()))
    (<class 'float'>, None, None)
    """
    if has_float32(type_info):
        return None
    if isinstance(type_info, BasicTypeInfo):
        return _BASIC_CLASS.get(type_info._basic_type)
    if isinstance(type_info, RowTypeInfo):
        return Row
    if isinstance(type_info, TupleTypeInfo):
        return tuple
    if isinstance(type_info, (ListTypeInfo, BasicArrayTypeInfo, ObjectArrayTypeInfo)):
        return list
    if isinstance(type_info, MapTypeInfo):
        return dict
    return None


def has_float32(type_info: Any) -> bool:
    """Whether values of ``type_info`` hold a ``Types.FLOAT()`` anywhere (a field, an element, a
    map's key or value), whose floats ``conformer`` rounds to 32 bits.

    >>> from fs_compat.common import Types
    >>> has_float32(Types.ROW([Types.INT(), Types.MAP(Types.STRING(), Types.FLOAT())]))
    True
    >>> has_float32(Types.TUPLE([Types.STRING(), Types.DOUBLE()]))
    False
    """
    if isinstance(type_info, BasicTypeInfo):
        return type_info._basic_type is BasicType.FLOAT
    if isinstance(type_info, (RowTypeInfo, TupleTypeInfo)):
        return any(has_float32(t) for t in type_info.get_field_types())
    if isinstance(type_info, ListTypeInfo):
        return has_float32(type_info.elem_type)
    if isinstance(type_info, (BasicArrayTypeInfo, ObjectArrayTypeInfo, PrimitiveArrayTypeInfo)):
        return has_float32(type_info._element_type)
    if isinstance(type_info, MapTypeInfo):
        return has_float32(type_info._key_type_info) or has_float32(type_info._value_type_info)
    return False


_F32 = struct.Struct("f")


def to_float32(value: float) -> float:
    """``value`` rounded to the nearest 32-bit float, as Java's ``(float)`` and PyFlink's coders
    round a ``Types.FLOAT()``: beyond the 32-bit range it is an infinity, below it a zero.

    >>> to_float32(0.1), to_float32(163.3), to_float32(-1e39), to_float32(1e-50)
    (0.10000000149011612, 163.3000030517578, -inf, 0.0)
    """
    try:
        rounded: float = _F32.unpack(_F32.pack(value))[0]
    except OverflowError:  # Pythons that refuse to pack beyond the range (Java gives infinity)
        return math.copysign(math.inf, value)
    return rounded


_SELF = "<self>"  # a _MisfitError of the whole value (no part to name)

_BASIC_CLASS: dict[BasicType, type] = {
    BasicType.STRING: str,
    BasicType.BOOLEAN: bool,
    BasicType.BYTE: int,
    BasicType.SHORT: int,
    BasicType.INT: int,
    BasicType.LONG: int,
    BasicType.BIG_INT: int,
    BasicType.FLOAT: float,
    BasicType.DOUBLE: float,
    BasicType.BIG_DEC: Decimal,
    BasicType.INSTANT: Instant,
}

_BITS = {BasicType.BYTE: 8, BasicType.SHORT: 16, BasicType.INT: 32, BasicType.LONG: 64}


def _misfit() -> _MisfitError:
    return _MisfitError(_SELF)


def _part(info: Any) -> Conform | None:
    """Check and convert one (part of a) value of ``info``; raises ``_MisfitError``. None: anything fits."""
    if isinstance(info, BasicTypeInfo):
        return _basic(info._basic_type)
    if isinstance(info, DateTypeInfo):
        return _instance_of(datetime.date)
    if isinstance(info, TimeTypeInfo):
        return _instance_of(datetime.time)
    if isinstance(info, TimestampTypeInfo):
        return _instance_of(datetime.datetime)
    if isinstance(info, (RowTypeInfo, TupleTypeInfo)):
        return _fields(info)
    if isinstance(info, PrimitiveArrayTypeInfo) and info._element_type._basic_type is BasicType.BYTE:
        return _instance_of((bytes, bytearray))
    if isinstance(info, (ListTypeInfo, BasicArrayTypeInfo, ObjectArrayTypeInfo, PrimitiveArrayTypeInfo)):
        elem = info.elem_type if isinstance(info, ListTypeInfo) else info._element_type
        return _elements(elem)
    if isinstance(info, MapTypeInfo):
        return _entries(info._key_type_info, info._value_type_info)
    return None


def _basic(basic_type: BasicType) -> Conform:
    bits = _BITS.get(basic_type)
    if bits is not None or basic_type is BasicType.BIG_INT:
        lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if bits is not None else (None, None)

        def integer(v: Any) -> Any:
            if v is None:
                return None
            if isinstance(v, float):
                raise _misfit()
            try:
                n = operator.index(v)  # int, bool, numpy integers; not float or str
            except TypeError:
                raise _misfit() from None
            if lo is not None and not lo <= n <= hi:  # type: ignore[operator]
                raise _MisfitError(f"out of range [{lo}, {hi}]")
            return int(n)

        return integer
    if basic_type is BasicType.DOUBLE:

        def real(v: Any) -> Any:
            if v is None:
                return None
            if isinstance(v, Real) and not isinstance(v, bool):
                return float(v)
            raise _misfit()

        return real
    if basic_type is BasicType.FLOAT:

        def real32(v: Any) -> Any:
            if v is None:
                return None
            if v.__class__ is float:
                return to_float32(v)
            if isinstance(v, Real) and not isinstance(v, bool):
                try:
                    return to_float32(float(v))
                except OverflowError:  # an int beyond any float
                    raise _MisfitError("out of range of a float") from None
            raise _misfit()

        return real32
    if basic_type is BasicType.CHAR:

        def char(v: Any) -> Any:
            if v is None or (isinstance(v, str) and len(v) == 1):
                return v
            raise _misfit()

        return char
    if basic_type is BasicType.BIG_DEC:

        def decimal(v: Any) -> Any:
            if v is None or isinstance(v, Decimal):
                return v
            if isinstance(v, int) and not isinstance(v, bool):
                return Decimal(v)
            raise _misfit()

        return decimal
    return _instance_of(_BASIC_CLASS[basic_type])


def _instance_of(cls: type | tuple[type, ...]) -> Conform:
    def instance(v: Any) -> Any:
        if v is None or isinstance(v, cls):
            return v
        raise _misfit()

    return instance


# Basic types whose values of their exact class fit as they are (not ``FLOAT``: it rounds).
_AS_IS = (BasicType.STRING, BasicType.BOOLEAN, BasicType.BIG_INT, BasicType.DOUBLE)


def _as_is(info: Any) -> tuple[type, int | None, int | None] | None:
    """``(class, lo, hi)`` when a value of exactly that class (an ``int`` between ``lo`` and ``hi``
    where given) fits ``info`` as it is, so ``_part(info)`` hands it back unchanged; else None."""
    if not isinstance(info, BasicTypeInfo):
        return None
    basic_type = info._basic_type
    bits = _BITS.get(basic_type)
    if bits is not None:
        return (int, -(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    if basic_type in _AS_IS:
        return (_BASIC_CLASS[basic_type], None, None)
    return None


def _fields(info: RowTypeInfo | TupleTypeInfo) -> Conform:
    types = info.get_field_types()
    parts = [_part(t) for t in types]
    width = len(parts)
    row_names = list(info.get_field_names()) if isinstance(info, RowTypeInfo) else None
    labels = row_names or [f"f{i}" for i in range(width)]

    def fields(v: Any) -> Any:
        if v is None:
            return None
        if not isinstance(v, (tuple, list, Row)):
            raise _misfit()
        if len(v) != width:
            raise _MisfitError(f"it has {width} fields, got {v!r}")
        values = list(v)
        for i, (part, x) in enumerate(zip(parts, values, strict=True)):
            if part is not None:
                try:
                    values[i] = part(x)
                except _MisfitError as exc:
                    raise _MisfitError(_inside(f"field {labels[i]}", x, types[i], exc)) from None
        if row_names is None:
            return tuple(values)
        if isinstance(v, Row) and all(a is b for a, b in zip(values, v, strict=True)):
            return v  # keeps its kind and names
        return _named_row(row_names, values)

    return _compiled(info, fields) or fields


def _compiled(info: RowTypeInfo | TupleTypeInfo, fallback: Conform, keep: bool = False) -> Conform | None:
    """The hot path of a ``ROW`` or ``TUPLE`` whose fields are all of basic types whose values of
    one class fit as they are (``_as_is``), generated for the type as ``dataclasses`` generates
    an ``__init__``: a tuple or list of the type's width whose fields fit as they are becomes the
    type's value (a Row sharing the type's names, or a tuple) without a loop over its fields;
    anything else goes to ``fallback`` (which checks and converts, or raises). With ``keep``,
    such a tuple or list is handed back itself (``conformer``'s ``fields``). None for other
    types. ``bench/stream_passes.py``'s ``ROW_NAMED`` output (a string and two longs, made from a
    tuple): ``conformer``'s call 870 -> ~400 ns a record.

    >>> from fs_compat.common import Types
    >>> to_row = _compiled(Types.ROW_NAMED(["k", "n"], [Types.STRING(), Types.INT()]), repr)
    >>> to_row(("a", 1)), to_row(["a", None]), to_row(("a", 2**40)), to_row(("a", True))
    (Row(k='a', n=1), Row(k='a', n=None), "('a', 1099511627776)", "('a', True)")
    """
    as_is = [_as_is(t) for t in info.get_field_types()]
    if not as_is or any(a is None for a in as_is):
        return None
    names = [f"f{i}" for i in range(len(as_is))]
    env: dict[str, Any] = {"fallback": fallback, "_named_row": _named_row}
    tests = []
    for i, found in enumerate(as_is):
        assert found is not None
        cls, lo, hi = found
        env[f"c{i}"] = cls
        test = f"{names[i]}.__class__ is c{i}"
        if lo is not None:
            env[f"lo{i}"], env[f"hi{i}"] = lo, hi
            test += f" and lo{i} <= {names[i]} <= hi{i}"
        tests.append(f"({names[i]} is None or ({test}))")
    if keep:
        made = "value"
    elif isinstance(info, RowTypeInfo):
        env["row_names"] = list(info.get_field_names())
        made = f"_named_row(row_names, [{', '.join(names)}])"
    else:
        made = f"({', '.join(names)},)"
    lines = [
        "def conform(value):",
        "    cls = value.__class__",
        f"    if (cls is tuple or cls is list) and len(value) == {len(names)}:",
        f"        {', '.join(names)}, = value",
        f"        if {' and '.join(tests)}:",
        f"            return {made}",
        "    return fallback(value)",
    ]
    exec("\n".join(lines), env)  # code of the type's arity and classes only: no user text
    compiled: Conform = env["conform"]
    return compiled


def _elements(elem: Any) -> Conform:
    part = _part(elem)

    def elements(v: Any) -> Any:
        if v is None:
            return None
        if not isinstance(v, (list, tuple)):
            raise _misfit()
        if part is None:
            return list(v)
        out = []
        for i, x in enumerate(v):
            try:
                out.append(part(x))
            except _MisfitError as exc:
                raise _MisfitError(_inside(f"element {i}", x, elem, exc)) from None
        return out

    return elements


def _entries(key_info: Any, value_info: Any) -> Conform:
    key, value = _part(key_info), _part(value_info)

    def entries(v: Any) -> Any:
        if v is None:
            return None
        if not isinstance(v, dict):
            raise _misfit()
        out = {}
        for k, x in v.items():
            try:
                ck = k if key is None else key(k)
            except _MisfitError as exc:
                raise _MisfitError(_inside("key", k, key_info, exc)) from None
            try:
                out[ck] = x if value is None else value(x)
            except _MisfitError as exc:
                raise _MisfitError(_inside(f"value of key {k!r}", x, value_info, exc)) from None
        return out

    return entries


def _inside(where: str, part: Any, declared: Any, exc: _MisfitError) -> str:
    """``field f0: 'a' (str) is not Integer`` (or the deeper part's own detail)."""
    detail = str(exc)
    if detail != _SELF and not detail.startswith("out of range"):
        return f"{where}: {detail}"
    what = f"{part!r} ({type(part).__name__})"
    if detail != _SELF:
        return f"{where}: {what} {detail}"
    return f"{where}: {what} is not {declared!r}"
