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
from ._row import _new_row

__all__ = [
    "DeclaredTypeError",
    "JavaConfiguration",
    "conformer",
    "create_row",
    "exact_class",
    "has_float32",
    "make_rows",
    "row_lists",
    "to_float32",
]


def make_rows(names: list[str], tuples: Iterable[Sequence[Any]]) -> list[_Row]:
    """``create_row(names, t)`` for each of ``tuples``, sharing ``names`` (Row never changes it
    in place): the per-record cost of a DataFrame source is mostly making its Rows, so the slots
    are set directly (as ``_row._named_row`` does, inline: a call per record less)."""
    new, row_class, insert = _new_row, _Row, _RowKind.INSERT
    out: list[_Row] = []
    append = out.append
    for t in tuples:
        row = new(row_class)
        row._fields = names
        row._values = list(t)
        row._from_dict = False
        row._row_kind = insert
        append(row)
    return out


def row_lists(values: Sequence[Any]) -> tuple[list[str] | None, list[list[Any]]] | None:
    """When every one of ``values`` is a ``Row`` (not a subclass) of kind INSERT with the same
    field names: those names and each row's list of values (``make_rows`` makes such rows
    again); else None. How rows from user functions travel in bulk between Spark passes.

    >>> from fs_compat.common import Row
    >>> row_lists([Row(a=1, b=2), Row(a=3, b=4)]), row_lists([Row(a=1), Row(b=1)])
    ((['a', 'b'], [[1, 2], [3, 4]]), None)
    """
    if not values or values[0].__class__ is not _Row:
        return None
    names = values[0]._fields
    insert = _RowKind.INSERT
    lists = [
        r._values
        for r in values
        if r.__class__ is _Row and r._row_kind is insert and (r._fields is names or r._fields == names)
    ]
    return (names, lists) if len(lists) == len(values) else None
