"""Values printed as Flink's Java side prints them (``print()``, the test sink's strings)."""

from __future__ import annotations

import datetime
from collections.abc import Callable
from decimal import Decimal
from typing import Any


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
        return _java_double(value)
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
    if v != v:
        return "NaN"
    if v in (float("inf"), float("-inf")):
        return "Infinity" if v > 0 else "-Infinity"
    if v == 0 or 1e-3 <= abs(v) < 1e7:
        text = repr(v)
        return text if "." in text else text + ".0"
    sign, digits, exp = Decimal(repr(v)).normalize().as_tuple()
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
    return java_str
