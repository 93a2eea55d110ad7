"""fs-compat internals of ``fs_compat.common`` shared with the runtime, the Spark adapter and the
front ends; not part of PyFlink's API (``pyflink.common`` has no such module).

>>> create_row(["a", "b"], [1, 2])
Row(a=1, b=2)
>>> make_rows(["x"], [(1,), (2,)])
[Row(x=1), Row(x=2)]
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ._configuration import JavaConfiguration
from ._conform import DeclaredTypeError, conformer, exact_class, has_float32, to_float32
from ._row import Row as _Row
from ._row import RowKind as _RowKind
from ._row import _create_row as create_row
from ._row import _new_row, _set_fields, _set_from_dict, _set_kind, _set_values

__all__ = [
    "DeclaredTypeError",
    "JavaConfiguration",
    "conformer",
    "create_row",
    "exact_class",
    "has_float32",
    "make_rows",
    "to_float32",
]


def make_rows(names: list[str], tuples: Iterable[Sequence[Any]]) -> list[_Row]:
    """``create_row(names, t)`` for each of ``tuples``, sharing ``names`` (Row never changes it
    in place): the per-record cost of a DataFrame source is mostly making its Rows, so the slots
    are set directly."""
    new, fields, values, from_dict, kind, insert = (
        _new_row,
        _set_fields,
        _set_values,
        _set_from_dict,
        _set_kind,
        _RowKind.INSERT,
    )
    out: list[_Row] = []
    append = out.append
    for t in tuples:
        row = new(_Row)
        fields(row, names)
        values(row, list(t))
        from_dict(row, False)
        kind(row, insert)
        append(row)
    return out
