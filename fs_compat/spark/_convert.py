"""DataFrame rows in, stream values out: Spark schemas <-> TypeInformation, Spark rows -> ``Row``
values, stream values -> columns of the schema their ``output_type`` gives.

- A DataFrame's rows become ``Row`` values with the DataFrame's field names; the stream's type is
  ``Types.ROW_NAMED`` of the fields' types (a field of a type with no counterpart is pickled).
- ``to_dataframe`` writes values by their ``output_type``: a ``ROW``/``ROW_NAMED`` as its fields, a
  ``TUPLE`` as fields ``f0``, ``f1``, ...; any other type as one column ``value``; no type (or
  ``PICKLED_BYTE_ARRAY``) as one binary column ``value`` of pickled values.
"""

from __future__ import annotations

import datetime
import functools
import io
import numbers
import pickle
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, cast

import cloudpickle

from fs_compat.common import (
    BasicArrayTypeInfo,
    ListTypeInfo,
    MapTypeInfo,
    ObjectArrayTypeInfo,
    PickledBytesTypeInfo,
    Row,
    RowTypeInfo,
    TupleTypeInfo,
    TypeInformation,
    Types,
)
from fs_compat.common.internal import create_row, make_rows, row_lists

_pickle_dumps = pickle.dumps


def dumps(value: Any) -> bytes:
    """Values cross process boundaries pickled; cloudpickle only where pickle cannot (a class
    defined in a function, a lambda)."""
    try:
        return pickle.dumps(value, protocol=5)
    except Exception:
        return cloudpickle.dumps(value, protocol=5)  # type: ignore[no-any-return]


def dumps_all(values: Sequence[Any]) -> list[bytes]:
    """``dumps`` of each of ``values``, without a call per value when pickle can take them all."""
    try:
        return [_pickle_dumps(v, 5) for v in values]
    except Exception:  # one of them needs cloudpickle
        return [dumps(v) for v in values]


def dumps_copies(values: Sequence[Any]) -> bytes:
    """``values`` pickled so that ``loads_copies`` gives each of them as a copy of its own, as
    pickling each alone would (a value emitted twice, or two values sharing a part, come back
    as two objects, as across a Flink network boundary), in one call: without pickle's memo
    (``Pickler.fast``), and Rows of one set of names as their names once and their value lists
    (``row_lists``). Values that mode cannot take (a cycle) or pickle cannot (``dumps``: by
    cloudpickle) are pickled one by one. ``bench/stream_passes.py``'s two keyed steps: 10,000
    Rows 38 -> 14 ms to pickle and load.

    >>> shared = [1]
    >>> a, b = loads_copies(dumps_copies([shared, shared]))
    >>> a == b == [1], a is b
    (True, False)
    """
    rows = row_lists(values)
    out = io.BytesIO()
    pickler = pickle.Pickler(out, protocol=5)
    try:
        # No memo: what is reached twice is written twice. (``fast`` is documented as
        # deprecated since Python 3.0 and still works in 3.11; a Python without it takes the
        # path below, and test_stream_records checks the copies.)
        pickler.fast = True
        pickler.dump((_ROW_LISTS, rows) if rows is not None else (_VALUES, list(values)))
    except Exception:  # a cycle, or a value pickle cannot take
        return _pickle_dumps((_EACH, dumps_all(values)), 5)
    return out.getvalue()


def loads_copies(blob: bytes) -> list[Any]:
    """The values ``dumps_copies`` pickled."""
    how, payload = pickle.loads(blob)
    if how == _ROW_LISTS:
        names, lists = payload
        return make_rows(names, lists)
    if how == _VALUES:
        return payload  # type: ignore[no-any-return]
    return [pickle.loads(b) for b in payload]


_VALUES, _ROW_LISTS, _EACH = 0, 1, 2  # how ``dumps_copies`` wrote its values


def dumps_events(values: Sequence[Any], marks: Sequence[int | None]) -> list[bytes | None]:
    """``dumps_all`` of the events whose mark is None (a record's value), None for each of
    the others (a watermark's)."""
    try:
        return [None if w is not None else _pickle_dumps(v, 5) for v, w in zip(values, marks, strict=True)]
    except Exception:  # one of them needs cloudpickle
        return [None if w is not None else dumps(v) for v, w in zip(values, marks, strict=True)]


#: The milliseconds since the epoch of a Spark timestamp value (naive values are UTC).
def epoch_ms(value: datetime.datetime) -> int:
    if value.tzinfo is None:
        value = value.replace(tzinfo=datetime.UTC)
    return int(value.timestamp() * 1000)


def type_info_of(data_type: Any) -> TypeInformation[Any]:
    """The TypeInformation that holds values of a Spark SQL type."""
    from pyspark.sql import types as st

    simple: list[tuple[type, Callable[[], TypeInformation[Any]]]] = [
        (st.StringType, Types.STRING),
        (st.BooleanType, Types.BOOLEAN),
        (st.ByteType, Types.BYTE),
        (st.ShortType, Types.SHORT),
        (st.IntegerType, Types.INT),
        (st.LongType, Types.LONG),
        (st.FloatType, Types.FLOAT),
        (st.DoubleType, Types.DOUBLE),
        (st.DecimalType, Types.BIG_DEC),
        (st.DateType, Types.SQL_DATE),
        (st.TimestampType, Types.SQL_TIMESTAMP),
        (st.TimestampNTZType, Types.SQL_TIMESTAMP),
    ]
    for kind, make in simple:
        if isinstance(data_type, kind):
            return make()
    if isinstance(data_type, st.BinaryType):
        return Types.PRIMITIVE_ARRAY(Types.BYTE())
    if isinstance(data_type, st.ArrayType):
        return Types.LIST(type_info_of(data_type.elementType))
    if isinstance(data_type, st.MapType):
        return Types.MAP(type_info_of(data_type.keyType), type_info_of(data_type.valueType))
    if isinstance(data_type, st.StructType):
        return Types.ROW_NAMED(
            [f.name for f in data_type.fields], [type_info_of(f.dataType) for f in data_type.fields]
        )
    return Types.PICKLED_BYTE_ARRAY()


def row_type_of(schema: Any) -> RowTypeInfo:
    """``Types.ROW_NAMED`` of a DataFrame schema."""
    info = type_info_of(schema)
    assert isinstance(info, RowTypeInfo)
    return info


class RowReader:
    """Reads Arrow batches of a DataFrame with ``schema`` as ``Row`` values with its field names
    (nested structs as nested Rows, maps as dicts), and the record timestamps of column
    ``ts_column`` (epoch ms) when given.

    ``tuples`` gives each row's values as a tuple (cheap to pickle); ``row`` makes the Row.
    """

    def __init__(self, schema: Any, ts_column: str | None = None) -> None:
        self.names: list[str] = [f.name for f in schema.fields]
        self._fixes = [(i, _from_arrow(f.dataType)) for i, f in enumerate(schema.fields)]
        self._fixes = [(i, fix) for i, fix in self._fixes if fix is not _identity]
        self._ts = self.names.index(ts_column) if ts_column is not None else None

    def tuples(self, batch: Any) -> tuple[list[tuple[Any, ...]], list[int | None]]:
        cols = [batch.column(i).to_pylist() for i in range(batch.num_columns)]
        for i, fix in self._fixes:
            cols[i] = [fix(v) for v in cols[i]]
        if self._ts is None:
            stamps: list[int | None] = [None] * batch.num_rows
        else:
            stamps = [None if v is None else epoch_ms(v) for v in cols[self._ts]]
        return list(zip(*cols, strict=True)), stamps

    def columns(self, arrays: Sequence[Any]) -> list[list[Any]]:
        """The Python values of Arrow ``arrays`` (one per field, in order) as Rows hold them."""
        cols = [a.to_pylist() for a in arrays]
        for i, fix in self._fixes:
            cols[i] = [fix(v) for v in cols[i]]
        return cols

    def stamps(self, cols: Sequence[list[Any]], n: int) -> list[int | None]:
        """The record timestamps (epoch ms) of ``n`` rows read by ``columns``."""
        if self._ts is None:
            return [None] * n
        return [None if v is None else epoch_ms(v) for v in cols[self._ts]]

    def make_rows(self, cols: Sequence[list[Any]]) -> list[Row]:
        """A Row per position of ``cols`` (from ``columns``), made in bulk: the rows share one
        list of field names (Row never changes it in place)."""
        return make_rows(self.names, zip(*cols, strict=True))

    def row(self, values: Sequence[Any]) -> Row:
        return create_row(self.names, values)

    def rows(self, batch: Any) -> list[Row]:
        names = self.names
        return [create_row(names, values) for values in self.tuples(batch)[0]]


def _from_arrow(data_type: Any) -> Callable[[Any], Any]:
    """What a value of ``data_type`` as Arrow gives it (``to_pylist``) becomes in a Row."""
    from pyspark.sql import types as st

    if isinstance(data_type, st.StructType):
        reader = RowReader(data_type)
        inner = [_from_arrow(f.dataType) for f in data_type.fields]
        names = reader.names

        def struct(v: Any) -> Any:
            if v is None:
                return None
            return create_row(names, [fix(v[n]) for fix, n in zip(inner, names, strict=True)])

        return struct
    if isinstance(data_type, st.MapType):
        k, vv = _from_arrow(data_type.keyType), _from_arrow(data_type.valueType)
        return lambda v: None if v is None else {k(a): vv(b) for a, b in v}
    if isinstance(data_type, st.ArrayType):
        return _each(_from_arrow(data_type.elementType))
    return _identity


class OutputColumns:
    """How values of ``output_type`` become DataFrame columns (see the module docstring)."""

    def __init__(self, output_type: TypeInformation[Any] | None, step: str | None = None) -> None:
        from pyspark.sql.types import BinaryType, StructField, StructType

        self.output_type = output_type
        #: The step whose values these are, which its errors name (``refused``; the Spark
        #: targets give it). None: the caller names it, or nothing does (a TypeError).
        self.step = step
        if output_type is None or isinstance(output_type, PickledBytesTypeInfo):
            self.schema = StructType([StructField("value", BinaryType(), True)])
            self._split: Callable[[Any], Sequence[Any]] = lambda v: (dumps(v),)
        elif isinstance(output_type, (RowTypeInfo, TupleTypeInfo)):
            self.schema = cast(StructType, output_type.spark_type())
            fields = [_to_spark(t) for t in output_type.get_field_types()]
            width = len(fields)
            where = f"output type {output_type!r}"

            def split(value: Any) -> Sequence[Any]:
                if not isinstance(value, (tuple, list, Row)) or len(value) != width:
                    raise TypeError(f"{where}: expected {width} fields, got {value!r}")
                return [conv(v) for conv, v in zip(fields, value, strict=True)]

            self._split = split
            if all(conv is _identity for conv in fields):
                self._width = width
        else:
            self.schema = StructType([StructField("value", output_type.spark_type(), True)])
            conv = _to_spark(output_type)
            self._split = lambda v: (conv(v),)
            self._scalar = conv is _identity
        self.names = [f.name for f in self.schema.fields]
        #: The columns of an integer type: a value there must be an integer (``unfit_integer``).
        self._integers = [f.name for f in self.schema.fields if type(f.dataType).__name__ in _INTEGER_TYPES]
        #: The columns with an integer type inside (an array's elements, a struct's fields, a
        #: map's keys or values), each with its ``_unfit_inside`` check.
        self._inside = {
            f.name: check
            for f in self.schema.fields
            if type(f.dataType).__name__ not in _INTEGER_TYPES
            and (check := _unfit_inside(f.dataType)) is not None
        }
        #: The columns ``frame`` gives as ``float64`` when every value is a float (``DoubleType``;
        #: the integer types are Arrow data there, ``_plain_types``).
        self._floats = {f.name for f in self.schema.fields if type(f.dataType).__name__ == "DoubleType"}

    _width: int | None = None  # set when a value's fields go to the columns unchanged
    _plain: tuple[Any, dict[str, Any]] | None = None  # ``_plain_types``' last schema and answer
    _scalar = False  # set when a value is its one column's value, unchanged (Arrow checks it)

    @property
    def fields_only(self) -> bool:
        """Whether a value is read only field by field (a ``ROW`` or ``TUPLE`` output type, one
        column per field), so a tuple or list does for a Row of the same fields
        (``SinkNode.fields_only``)."""
        return isinstance(self.output_type, (RowTypeInfo, TupleTypeInfo))

    def columns(self, values: Iterable[Any]) -> dict[str, list[Any]]:
        """``values`` as columns of the schema, by name: a row's or tuple's fields in order
        (nested rows as dicts, maps as lists of pairs, as Arrow takes them), any other value as
        the column ``value``. A value with the wrong number of fields is refused (``refused``).

        >>> out = OutputColumns(Types.ROW_NAMED(["k", "n"], [Types.STRING(), Types.LONG()]))
        >>> out.columns([("a", 1), Row(k="b", n=2)])
        {'k': ['a', 'b'], 'n': [1, 2]}
        """
        if self._scalar:
            return {"value": list(values)}
        width = self._width
        if width is not None:
            given = values if type(values) is list else list(values)
            rows, kinds = given, set(map(type, given))
            if Row in kinds:
                rows = [v._values if type(v) is Row else v for v in given]
                kinds = set(map(type, rows))
            if kinds <= _SEQUENCE_SET and set(map(len, rows)) <= {width}:
                fields = list(zip(*rows, strict=True)) if rows else [() for _ in self.names]
                return {name: list(col) for name, col in zip(self.names, fields, strict=True)}
            values = given  # one is wrong: the general path names it (as it was given)
        cols: list[list[Any]] = [[] for _ in self.names]
        try:
            for value in values:
                for col, part in zip(cols, self._split(value), strict=True):
                    col.append(part)
        except TypeError as exc:
            if self.step is None:
                raise
            raise self.refused(str(exc)) from exc
        return dict(zip(self.names, cols, strict=True))

    def frame(self, columns: dict[str, list[Any]], schema: Any = None) -> Any:
        """A pandas frame of ``columns`` (``columns()``'s, and any extra ones, equal lengths;
        ``schema``: the Spark schema of them all, when there are extra ones), for PySpark to turn
        into Arrow by the schema. A column of a string, integer, boolean or binary type is Arrow
        data already (``pa.array`` of its type, as a pandas ``ArrowExtensionArray``), which
        PySpark takes as it is, where it converts an object column value by value (a frame of
        1,560 rows of a string, two longs and the metrics' binary, made and converted: 1.21 ->
        0.87 ms); a value that does not fit is ``refused``, naming it (``mismatch``), where
        PySpark's conversion refused it without a name, or, for an INT, SMALLINT or TINYINT
        column, wrapped it (2**31 became -2**31). A ``DoubleType`` column of floats only is
        ``float64`` (Arrow takes it as it is; NaN, as before, becomes null); any other column
        holds its values as Python objects, as they are (a list or tuple stays one element:
        ``np.fromiter`` does not look inside). Built without copies: ~2-3.5x faster than
        ``pd.DataFrame(columns, dtype=object)``, which converts each list through a
        nested-sequence check.

        >>> types = [Types.STRING(), Types.LONG(), Types.DOUBLE()]
        >>> out = OutputColumns(Types.ROW_NAMED(["k", "n", "x"], types))
        >>> frame = out.frame({"k": ["a", "b"], "n": [1, 2], "x": [0.5, None], "extra": [(1, 2), None]})
        >>> [str(t) for t in frame.dtypes], frame["extra"].tolist()
        (['string[pyarrow]', 'int64[pyarrow]', 'object', 'object'], [(1, 2), None])
        """
        import numpy as np
        import pandas as pd

        fromiter, floats = np.fromiter, self._floats
        self.refuse_unfit_integers(columns)
        plain = self._plain_types(self.schema if schema is None else schema)
        arrays = {}
        for name, col in columns.items():
            arrow_type = plain.get(name)
            if arrow_type is not None:
                arrays[name] = pd.arrays.ArrowExtensionArray(self._arrow_column(columns, col, arrow_type))
            elif name in floats and set(map(type, col)) == {float}:
                arrays[name] = fromiter(col, np.float64, len(col))
            else:
                arrays[name] = fromiter(col, object, len(col))
        return pd.DataFrame(arrays, copy=False)

    def _arrow_column(self, columns: dict[str, list[Any]], col: list[Any], arrow_type: Any) -> Any:
        """``col`` as an Arrow array of ``arrow_type`` (``frame``), or ``refused``."""
        import pyarrow as pa

        try:
            return pa.array(col, arrow_type)
        except (TypeError, ValueError, OverflowError) as exc:  # Arrow's errors are ones of these too
            raise self.refused(self.mismatch([columns[n] for n in self.names], exc)) from exc

    def _plain_types(self, schema: Any) -> dict[str, Any]:
        """The Arrow type of each field of ``schema`` that ``frame`` hands PySpark as Arrow data
        (strings, integers, booleans, binaries), by name; worked out once per schema."""
        last = self._plain
        if last is not None and last[0] is schema:
            return last[1]
        import pyarrow as pa
        from pyspark.sql.pandas.types import to_arrow_schema

        plain = {
            field.name: field.type
            for field in to_arrow_schema(schema, timezone="UTC")
            if pa.types.is_string(field.type)
            or pa.types.is_large_string(field.type)
            or pa.types.is_integer(field.type)
            or pa.types.is_boolean(field.type)
            or pa.types.is_binary(field.type)
            or pa.types.is_large_binary(field.type)
        }
        self._plain = (schema, plain)
        return plain

    def arrow_schema(self) -> Any:
        """The Arrow schema of ``schema`` (timestamps as UTC instants)."""
        from pyspark.sql.pandas.types import to_arrow_schema

        return to_arrow_schema(self.schema, timezone="UTC")  # UTC instants, as in _routing

    def record_batch(self, columns: Sequence[list[Any]], schema: Any = None) -> Any:
        """``columns`` (``columns()``'s, in schema order) as an Arrow record batch of
        ``schema`` (``arrow_schema()``'s, passed in by a caller that makes many). Values that
        do not fit are ``refused``: one that is no integer for an integer type
        (``unfit_integer``: Arrow would truncate it), else what Arrow refuses (``mismatch``).

        >>> out = OutputColumns(Types.ROW_NAMED(["k", "n"], [Types.STRING(), Types.LONG()]), step="s")
        >>> out.record_batch([["a"], [1]]).to_pylist()
        [{'k': 'a', 'n': 1}]
        >>> try:
        ...     out.record_batch([["a"], ["x"]])
        ... except Exception as exc:
        ...     print(type(exc).__name__, str(exc).split(': ')[-1])
        StepError 'x' is a str, not an integer
        """
        import pyarrow as pa

        self.refuse_unfit_integers(dict(zip(self.names, columns, strict=True)))
        schema = self.arrow_schema() if schema is None else schema
        try:
            arrays = [pa.array(col, field.type) for col, field in zip(columns, schema, strict=True)]
        except (TypeError, ValueError, OverflowError) as exc:  # Arrow's errors are ones of these too
            raise self.refused(self.mismatch(columns, exc)) from exc
        return pa.RecordBatch.from_arrays(arrays, schema=schema)

    def unfit_integer(self, columns: Mapping[str, Sequence[Any]]) -> str | None:
        """Why ``columns`` (``columns()``'s, and any extra ones, equal lengths) do not fit this
        schema when an integer column holds a value that is no integer (a ``float``, say), or
        None: Arrow stores such a value truncated, silently (pyarrow 26: ``pa.array([1.5],
        pa.int64())`` is ``[1]``; inside a list, a struct or a map too), where every other misfit
        is an error it raises. Names the first such value, as ``mismatch`` does.

        >>> from fs_compat.common import Types
        >>> out = OutputColumns(Types.ROW_NAMED(["k", "n"], [Types.STRING(), Types.LONG()]))
        >>> out.unfit_integer({"k": ["a", "b"], "n": [1, None]}) is None
        True
        >>> why = out.unfit_integer({"k": ["a", "b"], "n": [1, 2.5]})
        >>> why.startswith("field 'n' of ('b', 2.5) does not fit"), why.endswith("is a float, not an integer")
        (True, True)
        >>> out = OutputColumns(Types.LIST(Types.LONG()))
        >>> out.unfit_integer({"value": [[1, None], None]}) is None
        True
        >>> out.unfit_integer({"value": [[1, 2.5]]})
        'the value [1, 2.5] does not fit the output type ListTypeInfo<Long>: 2.5 is a float, not an integer'
        """
        for name in self._integers:
            column = columns[name]
            try:  # ints only (bools too) sum to an int: a third of ``set(map(type, ...))``'s time
                if sum(column).__class__ is int:
                    continue
            except TypeError:  # a None, or a value that does not add to an int
                if set(map(type, column)) <= _INTEGER_CLASSES:
                    continue
            for row, value in enumerate(column):
                if value is not None and not isinstance(value, numbers.Integral):
                    return self._unfit(columns, name, row, value)
        for name, check in self._inside.items():
            for row, value in enumerate(columns[name]):
                if value is not None:
                    misfit = check(value)
                    if misfit is not None:
                        return self._unfit(columns, name, row, misfit[0])
        return None

    def _unfit(self, columns: Mapping[str, Sequence[Any]], name: str, row: int, misfit: Any) -> str:
        """``unfit_integer``'s why: ``misfit`` (no integer) is in column ``name`` of ``row``."""
        why = f"{misfit!r} is a {type(misfit).__name__}, not an integer"
        wanted = f"the output type {self.output_type!r}"
        if len(self.names) == 1:
            return f"the value {columns[name][row]!r} does not fit {wanted}: {why}"
        values = tuple(columns[n][row] for n in self.names)
        return f"field {name!r} of {values!r} does not fit {wanted}: {why}"

    def refuse_unfit_integers(self, columns: Mapping[str, Sequence[Any]]) -> None:
        """Raise ``refused`` of ``unfit_integer``'s why, if there is one (Arrow would not say it)."""
        why = self.unfit_integer(columns)
        if why is not None:
            raise self.refused(why)

    def refused(self, why: str) -> Exception:
        """The error for values that do not fit: a StepError naming ``step``, or without a step a
        TypeError (its caller names the step)."""
        from fs_compat.runtime import StepError

        return TypeError(why) if self.step is None else StepError(f"step '{self.step}': {why}")

    def mismatch(self, columns: Sequence[Sequence[Any]], error: Exception) -> str:
        """Why ``columns`` (as ``columns()`` gives them, in schema order) did not become an Arrow
        batch of this schema (``error``, what Arrow said): names the first value (and field)
        that does not fit the output type. Only for error messages: it converts value by value."""
        import pyarrow as pa

        fields = list(self.arrow_schema())
        wanted = f"the output type {self.output_type!r}"
        for field, column in zip(fields, columns, strict=True):
            for row, part in enumerate(column):
                try:
                    pa.array([part], field.type)
                except (TypeError, ValueError, OverflowError, pa.ArrowException) as exc:
                    if len(fields) == 1:
                        return f"the value {part!r} does not fit {wanted}: {exc}"
                    values = tuple(col[row] for col in columns)
                    return f"field {field.name!r} of {values!r} does not fit {wanted}: {exc}"
        return f"the values do not fit {wanted}: {error}"


#: Spark's integer types (``OutputColumns.unfit_integer``), and the classes that need no look.
_INTEGER_TYPES = frozenset({"LongType", "IntegerType", "ShortType", "ByteType"})
_INTEGER_CLASSES = frozenset({int, type(None)})


def _unfit_inside(data_type: Any) -> Callable[[Any], tuple[Any] | None] | None:
    """For a Spark type with an integer type in it: a function giving, in a one-tuple, the first
    value in a (non-null) value of that type, as ``OutputColumns.columns`` hands it to Arrow (a
    struct as a dict or a sequence, a map as a dict or a sequence of pairs), that is no integer
    where the type wants one (None: there is none). Anything else is left to Arrow, which refuses
    it. None for a type without an integer type in it. (No sentinel object: the checks travel to
    Spark's workers pickled by value.)

    >>> from pyspark.sql.types import ArrayType, LongType, MapType, StringType, StructField, StructType
    >>> check = _unfit_inside(ArrayType(StructType([StructField("n", LongType())])))
    >>> check([{"n": 1}, (None,)]), check([{"n": 1}, {"n": 1.5}])
    (None, (1.5,))
    >>> _unfit_inside(MapType(StringType(), LongType()))({"a": 2, "b": 0.5})
    (0.5,)
    >>> _unfit_inside(ArrayType(StringType())) is None
    True
    """
    kind = type(data_type).__name__
    if kind in _INTEGER_TYPES:
        return lambda v: None if isinstance(v, numbers.Integral) else (v,)
    if kind == "ArrayType":
        elem = _unfit_inside(data_type.elementType)
        return None if elem is None else functools.partial(_first_unfit, elem)
    if kind == "StructType":
        inner = [(i, f.name, _unfit_inside(f.dataType)) for i, f in enumerate(data_type.fields)]
        checks = [(i, n, c) for i, n, c in inner if c is not None]
        if not checks:
            return None

        def struct(value: Any) -> tuple[Any] | None:
            if value.__class__ is dict:
                parts = [value.get(n) for _i, n, _c in checks]
            elif isinstance(value, (tuple, list, Row)) and len(value) == len(inner):
                parts = [value[i] for i, _n, _c in checks]
            else:
                return None
            for (_i, _n, check), part in zip(checks, parts, strict=True):
                misfit = None if part is None else check(part)
                if misfit is not None:
                    return misfit
            return None

        return struct
    if kind == "MapType":
        key, item = _unfit_inside(data_type.keyType), _unfit_inside(data_type.valueType)
        if key is None and item is None:
            return None

        def mapping(value: Any) -> tuple[Any] | None:
            if not isinstance(value, (dict, tuple, list)):
                return None
            pairs: Iterable[Any] = value.items() if isinstance(value, dict) else value
            for pair in pairs:
                if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                    continue  # Arrow's to judge
                for check, part in ((key, pair[0]), (item, pair[1])):
                    misfit = None if check is None or part is None else check(part)
                    if misfit is not None:
                        return misfit
            return None

        return mapping
    return None


def _first_unfit(check: Callable[[Any], tuple[Any] | None], values: Any) -> tuple[Any] | None:
    """The first misfit ``check`` finds in the elements of ``values`` (a list or tuple; anything
    else is Arrow's to judge), or None."""
    if values.__class__ is not list and values.__class__ is not tuple:
        return None
    for value in values:
        if value is not None:
            misfit = check(value)
            if misfit is not None:
                return misfit
    return None


_SEQUENCES = (tuple, list)
_SEQUENCE_SET = frozenset(_SEQUENCES)


def _to_spark(info: TypeInformation[Any]) -> Callable[[Any], Any]:
    """What Arrow accepts for a value of ``info``: nested rows and tuples as dicts, maps as
    lists of pairs."""
    if isinstance(info, (RowTypeInfo, TupleTypeInfo)):
        names = info.spark_type().names  # type: ignore[attr-defined]
        inner = [_to_spark(t) for t in info.get_field_types()]

        def struct(v: Any) -> Any:
            if v is None:
                return None
            return {n: c(x) for n, c, x in zip(names, inner, v, strict=True)}

        return struct
    if isinstance(info, ListTypeInfo):
        return _each(_to_spark(info.elem_type))
    if isinstance(info, (BasicArrayTypeInfo, ObjectArrayTypeInfo)):
        return _each(_to_spark(info._element_type))
    if isinstance(info, MapTypeInfo):
        k, vv = _to_spark(info._key_type_info), _to_spark(info._value_type_info)

        return lambda v: None if v is None else [(k(a), vv(b)) for a, b in v.items()]
    if isinstance(info, PickledBytesTypeInfo):
        return lambda v: None if v is None else dumps(v)
    return _identity


def _each(elem: Callable[[Any], Any]) -> Callable[[Any], Any]:
    if elem is _identity:
        return _identity
    return lambda v: None if v is None else [elem(x) for x in v]


def _identity(value: Any) -> Any:
    return value
