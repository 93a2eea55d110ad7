"""Values printed as Flink's Java side prints them (``print()``, the test sink's strings)."""

from __future__ import annotations

import datetime
import math
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from fs_compat.common.internal import to_float32


def java_str(value: Any) -> str:
    """``value`` as Java's ``toString`` of the matching Flink type would show it.

    >>> java_str(("a", 1, True, None))
    '(a,1,true,null)'
    >>> java_str([1.0, 2.5e10])
    '[1.0, 2.5E10]'
    """
    from fs_compat.common import Row

    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Row):
        fields = ", ".join(java_str(v) for v in value)
        return f"{value.get_row_kind()}[{fields}]"
    if isinstance(value, tuple):
        return "(" + ",".join(java_str(v) for v in value) + ")"
    if isinstance(value, list):
        return "[" + ", ".join(java_str(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{java_str(k)}={java_str(v)}" for k, v in value.items()) + "}"
    if isinstance(value, float):
        return _java_float(value) if isinstance(value, _Float) else _java_double(value)
    if isinstance(value, datetime.datetime):
        return _java_timestamp(value)
    if isinstance(value, datetime.time):
        return value.strftime("%H:%M:%S")  # java.sql.Time shows no fraction
    return str(value)


def _java_timestamp(v: datetime.datetime) -> str:
    """``java.sql.Timestamp.toString``: the fraction without trailing zeros, at least one digit.

    >>> _java_timestamp(datetime.datetime(2021, 1, 9, 12, 0, 0, 11000))
    '2021-01-09 12:00:00.011'
    >>> _java_timestamp(datetime.datetime(2021, 1, 9))
    '2021-01-09 00:00:00.0'
    """
    fraction = f"{v.microsecond:06d}".rstrip("0") or "0"
    return f"{v:%Y-%m-%d %H:%M:%S}.{fraction}"


def _java_double(v: float) -> str:
    """Java's ``Double.toString``: plain between 1e-3 and 1e7, else ``d.dddE<exp>``."""
    return _java_number(v, repr(v))


class _Float(float):
    """A value of a ``Types.FLOAT()`` part, which ``java_str`` shows as Java's ``Float.toString``."""

    __slots__ = ()


def float32_digits(v: float) -> str:
    """The fewest significant digits that give back ``v`` rounded to 32 bits (what Java's
    ``Float.toString`` shows, since Java 19; Java 17 now and then shows one digit more).

    >>> float32_digits(0.10000000149011612), float32_digits(1 / 3), float32_digits(1e10 / 3)
    ('0.1', '0.33333334', '3.3333332e+09')
    """
    v = to_float32(v)
    if v != v or v in (math.inf, -math.inf) or v == 0:
        return repr(v)
    for digits in range(1, 10):
        text = f"{v:.{digits}g}"
        if to_float32(float(text)) == v:
            return text
    return repr(v)  # not reached: 9 significant digits always give a 32-bit float back


def _java_float(v: float) -> str:
    """Java's ``Float.toString`` of ``v`` rounded to 32 bits.

    >>> _java_float(1 / 3), _java_float(1e10 / 3), _java_float(1e-5 / 3), _java_float(100.0)
    ('0.33333334', '3.3333332E9', '3.3333333E-6', '100.0')
    """
    return _java_number(to_float32(v), float32_digits(v))


def _java_number(v: float, text: str) -> str:
    """``v``, whose shortest decimal is ``text``, as Java shows a double or a float: plain between
    1e-3 and 1e7, else ``d.dddE<exp>``."""
    if v != v:
        return "NaN"
    if v in (float("inf"), float("-inf")):
        return "Infinity" if v > 0 else "-Infinity"
    if v == 0 or 1e-3 <= abs(v) < 1e7:
        if "e" in text:
            text = format(Decimal(text), "f")
        return text if "." in text else text + ".0"
    sign, digits, exp = Decimal(text).normalize().as_tuple()
    assert isinstance(exp, int)
    text = "".join(map(str, digits))
    mantissa = text[0] + "." + (text[1:] or "0")
    return ("-" if sign else "") + f"{mantissa}E{len(digits) + exp - 1}"


def value_text(type_info: Any) -> Callable[[Any], str]:
    """How ``print()`` and text sinks show the values of a stream of ``type_info``: pickled
    values (no declared type) with Python's ``str``, values of a declared type as Flink's Java
    side shows them (``java_str``), as PyFlink does.

    >>> from fs_compat.common import Row, Types
    >>> value_text(None)(("a", 1)), value_text(Types.ROW([Types.STRING(), Types.INT()]))(Row("a", 1))
    ("('a', 1)", '+I[a, 1]')
    """
    from fs_compat.common import Types

    if type_info is None or type_info == Types.PICKLED_BYTE_ARRAY():
        return str
    mark = floats_mapped(type_info, _Float, in_rows=False)
    if mark is None:
        return java_str
    return lambda value: java_str(mark(value))


def print_prefix(identifier: str | None, index: int, parallelism: int) -> str:
    """What Flink's print sink puts before each line of instance ``index`` (from 0) of
    ``parallelism``: the identifier, and the instance's number (from 1) when the sink runs in
    parallel, then ``> ``; nothing for neither.

    >>> [print_prefix(None, 0, 1), print_prefix("out", 0, 1)]
    ['', 'out> ']
    >>> [print_prefix(None, 1, 2), print_prefix("out", 0, 2)]
    ['2> ', 'out:1> ']
    """
    prefix = identifier or ""
    if parallelism > 1:
        prefix += f"{':' if prefix else ''}{index + 1}"
    return f"{prefix}> " if prefix else ""


def printed_text(type_info: Any) -> Callable[[Any], str]:
    """How ``print()`` shows the values of a stream of ``type_info``: as ``value_text``, but a
    stream of rows (``Types.ROW`` / ``ROW_NAMED``) as PyFlink 2.3 prints it, which turns each
    row into a string in Python before Java's print sink: its kind, then Python's ``str`` of each
    field joined by commas (no spaces; ``None``, a list or a dict as Python shows them).

    >>> from fs_compat.common import Row, Types
    >>> row = Types.ROW([Types.STRING(), Types.LIST(Types.INT()), Types.MAP(Types.STRING(), Types.DOUBLE())])
    >>> printed_text(row)(Row("a", [1, 2], {"k": 0.5})), printed_text(row)(Row("b", None, None))
    ("+I[a,[1, 2],{'k': 0.5}]", '+I[b,None,None]')
    >>> printed_text(Types.TUPLE([Types.STRING(), Types.INT()]))(("a", 1))
    '(a,1)'
    """
    from fs_compat.common import Row
    from fs_compat.common.typeinfo import RowTypeInfo

    if not isinstance(type_info, RowTypeInfo):
        return value_text(type_info)
    other = value_text(type_info)

    def row_text(value: Any) -> str:
        if not isinstance(value, Row):
            return other(value)
        return f"{value.get_row_kind()}[{','.join(str(v) for v in value._values)}]"

    return row_text


def collected(type_info: Any) -> Callable[[Any], Any] | None:
    """What ``execute_and_collect`` hands back for a value of ``type_info``, as PyFlink does: each
    ``Types.FLOAT()`` part is the Python float of Java's ``Float.toString`` (``0.1`` declared
    ``FLOAT`` comes back as ``0.1``, a step after it sees ``0.10000000149011612``); None when
    values come back as they are.

    >>> from fs_compat.common import Types
    >>> collected(Types.TUPLE([Types.STRING(), Types.FLOAT()]))(("a", 0.10000000149011612))
    ('a', 0.1)
    >>> collected(Types.DOUBLE()) is None
    True
    """
    return floats_mapped(type_info, _java_float_value, in_rows=True)


def _java_float_value(v: Any) -> Any:
    """The Python float of Java's ``Float.toString`` of ``v`` (a value that is no number as it is)."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(float32_digits(v))
    return v


def floats_mapped(
    type_info: Any, fn: Callable[[float], Any], *, in_rows: bool
) -> Callable[[Any], Any] | None:
    """A function giving a value of ``type_info`` with ``fn`` applied to each of its ``FLOAT``
    parts (tuple fields, row fields when ``in_rows``, elements, map keys and values), or None
    when it has none (or only in rows, when not ``in_rows``)."""
    from fs_compat.common.typeinfo import (
        BasicArrayTypeInfo,
        BasicType,
        BasicTypeInfo,
        ListTypeInfo,
        MapTypeInfo,
        ObjectArrayTypeInfo,
        PrimitiveArrayTypeInfo,
        RowTypeInfo,
        TupleTypeInfo,
    )

    def of(info: Any) -> Callable[[Any], Any] | None:
        if isinstance(info, BasicTypeInfo):
            return fn if info._basic_type is BasicType.FLOAT else None
        if isinstance(info, RowTypeInfo) and not in_rows:
            return None
        if isinstance(info, (RowTypeInfo, TupleTypeInfo)):
            parts = [of(t) for t in info.get_field_types()]
            if all(p is None for p in parts):
                return None
            if isinstance(info, RowTypeInfo):
                return lambda row: _mapped_row(row, parts)
            return lambda t: tuple(
                x if p is None or x is None else p(x) for p, x in zip(parts, t, strict=True)
            )
        if isinstance(info, (ListTypeInfo, BasicArrayTypeInfo, ObjectArrayTypeInfo, PrimitiveArrayTypeInfo)):
            part = of(info.elem_type if isinstance(info, ListTypeInfo) else info._element_type)
            if part is None:
                return None
            return lambda xs: [x if x is None else part(x) for x in xs]
        if isinstance(info, MapTypeInfo):
            key, value = of(info._key_type_info), of(info._value_type_info)
            if key is None and value is None:
                return None
            k = key or _same
            v = value or _same
            return lambda d: {
                k(a) if a is not None else a: v(b) if b is not None else b for a, b in d.items()
            }
        return None

    mapped = of(type_info)
    if mapped is None:
        return None
    return lambda value: None if value is None else mapped(value)


def _same(v: Any) -> Any:
    return v


def _mapped_row(row: Any, parts: list[Callable[[Any], Any] | None]) -> Any:
    """``row`` with ``parts`` applied to its fields, of the same kind and names."""
    from fs_compat.common import Row
    from fs_compat.common.internal import create_row

    values = [x if p is None or x is None else p(x) for p, x in zip(parts, row, strict=True)]
    if isinstance(row, Row):
        return create_row(row._fields, values, row.get_row_kind())
    return tuple(values)
