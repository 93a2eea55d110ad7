"""``Row`` and ``RowKind``: PyFlink's row type, field for field."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from enum import Enum
from typing import Any, overload


class RowKind(Enum):
    """The kind of change a row describes in a changelog; ``str`` gives Flink's short form.

    >>> [str(kind) for kind in RowKind]
    ['+I', '-U', '+U', '-D']
    """

    INSERT = 0
    UPDATE_BEFORE = 1
    UPDATE_AFTER = 2
    DELETE = 3

    def __str__(self) -> str:
        return _SHORT[self.value]


_SHORT = ("+I", "-U", "+U", "-D")
_KINDS: tuple[RowKind, ...] = tuple(RowKind)  # by value
_INSERT = RowKind.INSERT


def _create_row(
    fields: Sequence[str] | None, values: Sequence[Any], row_kind: RowKind | int | None = None
) -> Row:
    """A row of ``values`` named by ``fields`` (positional when ``None``); used by pickling and
    wherever rows are made in bulk (a DataFrame's rows), so it sets the slots directly.
    ``row_kind`` may be given by its value (pickles do: an enum costs a global lookup and a call
    to load)."""
    row = _new_row(Row)
    row._fields = None if fields is None else list(fields)
    row._values = list(values)
    row._from_dict = False
    if row_kind is None:
        row._row_kind = _INSERT
    elif isinstance(row_kind, RowKind):
        row._row_kind = row_kind
    else:
        row._row_kind = _KINDS[row_kind]
    return row


class Row:
    """A fixed-length, null-aware row of values, with optional field names and a ``RowKind``.

    Fields are read by position, by name (``row['name']``) or as attributes (``row.name``).
    Named arguments keep their order; positional arguments make an unnamed row.

    >>> row = Row(name="Alice", age=11)
    >>> row
    Row(name='Alice', age=11)
    >>> row["name"], row.age, row[1]
    ('Alice', 11, 11)
    >>> "name" in row, "wrong_key" in row
    (True, False)
    >>> Row("a", 2)
    <Row('a', 2)>

    A row of names is a factory for rows with those names:

    >>> Person = Row("name", "age")
    >>> Person("Alice", 11)
    Row(name='Alice', age=11)

    Equality compares the row kind and the values (by name for named rows):

    >>> Row(a=1, b=2) == Row(b=2, a=1)
    True
    >>> Row.of_kind(RowKind.DELETE, 1) == Row(1)
    False
    """

    __slots__ = ("_fields", "_from_dict", "_row_kind", "_values")

    _fields: list[str] | None
    _values: list[Any]
    _from_dict: bool
    _row_kind: RowKind

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args and kwargs:
            raise ValueError("Can not use both args and kwargs to create Row")
        if kwargs:
            self._fields = list(kwargs)
            self._values = list(kwargs.values())
            self._from_dict = True
        else:
            self._fields = None
            self._values = list(args)
            self._from_dict = False
        self._row_kind = RowKind.INSERT

    @staticmethod
    def of_kind(row_kind: RowKind, *args: Any, **kwargs: Any) -> Row:
        """A row of the given kind.

        >>> Row.of_kind(RowKind.UPDATE_AFTER, a=1).get_row_kind()
        <RowKind.UPDATE_AFTER: 2>
        """
        row = Row(*args, **kwargs)
        row.set_row_kind(row_kind)
        return row

    def as_dict(self, recursive: bool = False) -> dict[str, Any]:
        """The named fields as a dict; ``recursive`` turns nested rows (also in lists and dicts)
        into dicts too. A ``TypeError`` for rows without names.

        >>> Row(key=1, value=Row(name="a", age=2)).as_dict(True)
        {'key': 1, 'value': {'name': 'a', 'age': 2}}
        """
        if self._fields is None:
            raise TypeError("Cannot convert a Row class into dict")
        if not recursive:
            return dict(zip(self._fields, self._values, strict=False))
        return dict(zip(self._fields, (_as_plain(v) for v in self._values), strict=False))

    def get_row_kind(self) -> RowKind:
        """The kind of change this row describes (``RowKind.INSERT`` unless set)."""
        return self._row_kind

    def set_row_kind(self, row_kind: RowKind) -> None:
        """Sets the kind of change this row describes (a ``TypeError`` for anything but a ``RowKind``)."""
        if not isinstance(row_kind, RowKind):
            raise TypeError(f"row_kind must be a RowKind, got {type(row_kind).__name__}: {row_kind!r}")
        self._row_kind = row_kind

    def set_field_names(self, field_names: list[str]) -> None:
        """Names the fields, in order; the values stay as they are.

        >>> row = Row(1, "a")
        >>> row.set_field_names(["id", "name"])
        >>> row
        Row(id=1, name='a')
        """
        self._fields = list(field_names)

    def get_fields_by_names(self, names: list[str]) -> list[Any]:
        """The values of ``names``, in that order.

        >>> Row(a=1, b=2).get_fields_by_names(["b", "a"])
        [2, 1]
        """
        if self._fields is None or names == self._fields:
            return self._values
        missing = sorted(set(names).difference(self._fields))
        if missing:
            raise ValueError(f"Field names {missing} not exist in {self._fields}.")
        return [self._values[self._fields.index(n)] for n in names]

    def _is_retract_msg(self) -> bool:
        return self._row_kind in (RowKind.UPDATE_BEFORE, RowKind.DELETE)

    def _is_accumulate_msg(self) -> bool:
        return self._row_kind in (RowKind.UPDATE_AFTER, RowKind.INSERT)

    def __contains__(self, item: object) -> bool:
        if self._fields is not None:
            return item in self._fields
        return item in self._values

    def __call__(self, *args: Any) -> Row:
        """A new row with this row's values as its field names."""
        if len(args) > len(self):
            raise ValueError(
                f"Can not create Row with fields {self}, expected {len(self)} values but got {args}"
            )
        return _create_row(self._values, args, self._row_kind)

    @overload
    def __getitem__(self, item: slice) -> list[Any]: ...
    @overload
    def __getitem__(self, item: int | str) -> Any: ...
    def __getitem__(self, item: int | str | slice) -> Any:
        if item.__class__ is int or isinstance(item, (int, slice)):
            return self._values[item]
        if self._fields is None:
            raise KeyError(f"Row {self!r} has no field names; cannot look up {item!r}")
        try:
            return self._values[self._fields.index(item)]
        except IndexError:
            raise KeyError(item) from None
        except ValueError:
            raise ValueError(item) from None

    def __setitem__(self, key: int | str | slice, value: Any) -> None:
        if isinstance(key, (int, slice)):
            self._values[key] = value
            return
        if self._fields is None:
            raise KeyError(key)
        try:
            self._values[self._fields.index(key)] = value
        except IndexError:
            raise KeyError(key) from None
        except ValueError:
            raise ValueError(value) from None

    def __getattr__(self, item: str) -> Any:
        if item[:1] == "_":
            raise AttributeError(item)
        fields = self._fields
        if fields is None:
            raise AttributeError(item)
        try:
            value = self._values[fields.index(item)]
        except (IndexError, ValueError):
            raise AttributeError(item) from None
        # Row has no attribute ``item`` (or this hook would not run): from now on ``_Field``
        # reads it, without this hook's failed lookup first (not for a name the class itself
        # answers through ``type``, such as ``mro``: ``Row.mro()`` must keep working).
        if not hasattr(type, item):
            setattr(Row, item, _Field(item))
        return value

    def __reduce__(self) -> tuple[Any, ...]:
        # The kind by value: pickling the enum would cost a second global and an Enum call.
        return _create_row, (self._fields, tuple(self._values), self._row_kind.value)

    def __repr__(self) -> str:
        if self._fields is not None:
            return "Row({})".format(
                ", ".join(f"{k}={v!r}" for k, v in zip(self._fields, self._values, strict=False))
            )
        return "<Row({})>".format(", ".join(repr(v) for v in self._values))

    def _by_sorted_name(self) -> list[Any]:
        assert self._fields is not None
        fields = self._fields
        return [self._values[fields.index(name)] for name in sorted(fields)]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Row) or self.__class__ is not other.__class__:
            return False
        if self._row_kind != other._row_kind:
            return False
        if self._fields is None or other._fields is None:
            return self._fields is None and other._fields is None and self._values == other._values
        if sorted(self._fields) != sorted(other._fields):
            return False
        return self._by_sorted_name() == other._by_sorted_name()

    def __hash__(self) -> int:
        # Consistent with __eq__: named rows hash their values in field-name order.
        if self._fields is None:
            return hash(tuple(self._values))
        return hash(tuple(self._by_sorted_name()))

    def __iter__(self) -> Iterator[Any]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)


#: ``_Field``'s names before its first read: a list no row holds.
_NO_READ: list[str] = []


class _Field:
    """``row.name`` for a field ``name``, once some row's field was read so (``Row.__getattr__``
    puts it on the class): a read through ``__getattr__`` comes after Python's failed lookup of
    the attribute and costs ~3x as much (PyFlink jobs read fields by attribute per record:
    ``value.key``). Where the row has no such field, an AttributeError, as before (methods of
    Row are never shadowed: ``__getattr__`` runs only for names Row does not have)."""

    __slots__ = ("_last", "name")

    def __init__(self, name: str) -> None:
        self.name = name
        #: The last list of field names a read found this field in, and its position there (one
        #: attribute, replaced whole: a thread never sees one's names with another's position).
        #: Rows made in bulk share one list (``make_rows``), so a read of their field is an
        #: identity check, not a search of the names (``list.index``); rows never change their
        #: names in place (a new list replaces them).
        self._last: tuple[list[str], int] = (_NO_READ, 0)

    def __get__(self, row: Row | None, owner: type | None = None) -> Any:
        if row is not None:
            fields = row._fields
            seen, at = self._last
            if fields is seen:
                try:
                    return row._values[at]
                except IndexError:
                    pass
            elif fields is not None:
                try:
                    at = fields.index(self.name)
                    value = row._values[at]
                except (IndexError, ValueError):
                    pass
                else:
                    self._last = (fields, at)
                    return value
        raise AttributeError(self.name)


def _as_plain(obj: Any) -> Any:
    if isinstance(obj, Row):
        return obj.as_dict(True)
    if isinstance(obj, list):
        return [_as_plain(o) for o in obj]
    if isinstance(obj, dict):
        return {k: _as_plain(v) for k, v in obj.items()}
    return obj


# Rows are made per record (a source's, a declared output's, an unpickled one's): their slots
# are set directly after ``object.__new__``, without ``__init__``'s checks (Row has no
# ``__setattr__``: its slots, and no ``__dict__``, refuse every other attribute).
_new_row = object.__new__


def _named_row(names: list[str], values: list[Any]) -> Row:
    """A new INSERT row of ``values`` (a list the row takes over) named by ``names`` (shared,
    not copied: Row never changes it in place), its slots set directly: for a row per record
    (``_conform``'s tuple to ``ROW_NAMED``), without ``_create_row``'s copies."""
    row = _new_row(Row)
    row._fields = names
    row._values = values
    row._from_dict = False
    row._row_kind = _INSERT
    return row
