"""Values of a declared type to and from the plain values JSON and CSV hold (private helpers of
``fs_compat.datastream.formats``)."""

from __future__ import annotations

import base64
import datetime
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from fs_compat.common import (
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
    TypeInformation,
)
from fs_compat.common.internal import create_row, to_float32

Convert = Callable[[Any], Any]

_INTEGERS = (BasicType.BYTE, BasicType.SHORT, BasicType.INT, BasicType.LONG, BasicType.BIG_INT)


def _nullable(conv: Convert) -> Convert:
    def convert(value: Any) -> Any:
        return None if value is None else conv(value)

    return convert


def _element_type(info: Any) -> TypeInformation[Any] | None:
    if isinstance(info, ListTypeInfo):
        return info.elem_type
    if isinstance(info, (BasicArrayTypeInfo, ObjectArrayTypeInfo, PrimitiveArrayTypeInfo)):
        return info._element_type
    return None


def _is_bytes(info: Any) -> bool:
    return (
        isinstance(info, PrimitiveArrayTypeInfo)
        and getattr(info._element_type, "_basic_type", None) is BasicType.BYTE
    )


def _text_to_basic(basic: BasicType) -> Convert:
    if basic in _INTEGERS:
        return int
    if basic is BasicType.FLOAT:  # 32-bit, as Flink's Float
        return lambda v: to_float32(float(v))
    if basic is BasicType.DOUBLE:
        return float
    if basic is BasicType.BOOLEAN:
        return lambda v: v if isinstance(v, bool) else str(v).strip().lower() == "true"
    if basic is BasicType.BIG_DEC:
        return lambda v: Decimal(str(v))
    if basic is BasicType.STRING or basic is BasicType.CHAR:
        return lambda v: v if isinstance(v, str) else str(v)
    return lambda v: v


def from_plain(info: TypeInformation[Any] | None, where: str) -> Convert:
    """Turns a plain value (as ``json.loads`` gives it) into a value of ``info``: named Rows for
    ``ROW_NAMED``/``ROW``, tuples for ``TUPLE``, dates and times from ISO text."""
    if info is None:
        return lambda v: v
    if isinstance(info, RowTypeInfo):
        names = info.get_field_names()
        convs = [from_plain(t, f"{where}.{n}") for n, t in zip(names, info.get_field_types(), strict=True)]

        def row(value: Any) -> Any:
            if isinstance(value, dict):
                fields = [value.get(n) for n in names]
            else:
                fields = list(value)
            return create_row(names, [c(f) for c, f in zip(convs, fields, strict=True)])

        return _nullable(row)
    if isinstance(info, TupleTypeInfo):
        tconvs = [from_plain(t, where) for t in info.get_field_types()]
        return _nullable(lambda v: tuple(c(f) for c, f in zip(tconvs, v, strict=True)))
    if _is_bytes(info):
        return _nullable(lambda v: v if isinstance(v, bytes) else base64.b64decode(v))
    element = _element_type(info)
    if element is not None:
        econv = from_plain(element, where)
        return _nullable(lambda v: [econv(e) for e in v])
    if isinstance(info, MapTypeInfo):
        kconv = from_plain(info._key_type_info, where)
        vconv = from_plain(info._value_type_info, where)
        return _nullable(lambda v: {kconv(k): vconv(x) for k, x in v.items()})
    if isinstance(info, DateTypeInfo):
        return _nullable(lambda v: datetime.date.fromisoformat(v))
    if isinstance(info, TimeTypeInfo):
        return _nullable(lambda v: datetime.time.fromisoformat(v))
    if isinstance(info, TimestampTypeInfo):
        return _nullable(lambda v: datetime.datetime.fromisoformat(str(v).replace("Z", "").replace(" ", "T")))
    if isinstance(info, BasicTypeInfo):
        return _nullable(_text_to_basic(info._basic_type))
    return lambda v: v


def to_plain(value: Any) -> Any:
    """A value as JSON holds it: Rows with names as objects (positional ones as arrays), tuples
    and lists as arrays, bytes as base64, dates and times as ISO text, Decimals as numbers."""
    from fs_compat.common import Row

    if isinstance(value, Row):
        try:
            return {k: to_plain(v) for k, v in value.as_dict().items()}
        except Exception:
            return [to_plain(v) for v in value]
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value) if value != value.to_integral_value() else int(value)
    return value
