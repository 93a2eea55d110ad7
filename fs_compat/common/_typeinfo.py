# ruff: noqa: N802
"""``TypeInformation`` and ``Types``: PyFlink's type descriptors, each able to give the codec that
stores its values and the Spark SQL type that holds them."""

from __future__ import annotations

import abc
import datetime
from collections.abc import Sequence
from decimal import Decimal
from enum import Enum
from typing import TYPE_CHECKING, Any, Generic, NoReturn, cast

from typing_extensions import TypeVar

from fs_api_advanced import BoolCodec, BytesCodec, Codec, FloatCodec, IntCodec, PickleCodec, StringCodec

from ._codecs import (
    CharCodec,
    CheckedPickleCodec,
    DateCodec,
    InstantCodec,
    ListCodec,
    MapCodec,
    RangedIntCodec,
    RowCodec,
    TupleCodec,
)
from ._row import Row
from ._time import Instant

if TYPE_CHECKING:
    from pyspark.sql.types import DataType

T = TypeVar("T", default=Any)
T_co = TypeVar("T_co", covariant=True, default=Any)
K = TypeVar("K", default=Any)
V = TypeVar("V", default=Any)


class TypeInformation(abc.ABC, Generic[T_co]):
    """The type of values of a stream or a state: picks their codec and their Spark SQL type.

    Made by the ``Types`` factories; two descriptions of the same type compare equal.

    >>> Types.INT(), Types.LIST(Types.STRING())
    (Integer, ListTypeInfo<String>)
    >>> Types.INT() == Types.INT(), Types.INT() == Types.LONG()
    (True, False)
    """

    __slots__ = ()

    @abc.abstractmethod
    def codec(self) -> Codec[T_co]:
        """The codec that turns values of this type into bytes and back."""

    @abc.abstractmethod
    def spark_type(self) -> DataType:
        """The ``pyspark.sql.types`` data type that holds values of this type."""

    @abc.abstractmethod
    def _key(self) -> tuple[Any, ...]:
        """What equality and hashing compare."""

    def get_java_type_info(self) -> NoReturn:
        """PyFlink's handle on the JVM's type information: fs_compat runs without a JVM, so this raises
        ``NotImplementedError`` (``codec()`` and ``spark_type()`` give what it is used for)."""
        raise NotImplementedError(
            "TypeInformation.get_java_type_info: fs_compat runs without a JVM; "
            "use codec() for the Python encoding or spark_type() for the Spark SQL type"
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TypeInformation) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())


class BasicType(Enum):
    STRING = "String"
    BYTE = "Byte"
    BOOLEAN = "Boolean"
    SHORT = "Short"
    INT = "Integer"
    LONG = "Long"
    FLOAT = "Float"
    DOUBLE = "Double"
    CHAR = "Char"
    BIG_INT = "BigInteger"
    BIG_DEC = "BigDecimal"
    INSTANT = "Instant"


def _basic_codec(basic_type: BasicType) -> Codec[Any]:
    if basic_type is BasicType.STRING:
        return StringCodec()
    if basic_type is BasicType.BYTE:
        return RangedIntCodec("BYTE", 8)
    if basic_type is BasicType.BOOLEAN:
        return BoolCodec()
    if basic_type is BasicType.SHORT:
        return RangedIntCodec("SHORT", 16)
    if basic_type is BasicType.INT:
        return RangedIntCodec("INT", 32)
    if basic_type is BasicType.LONG:
        return IntCodec()
    if basic_type in (BasicType.FLOAT, BasicType.DOUBLE):
        return FloatCodec()
    if basic_type is BasicType.CHAR:
        return CharCodec()
    if basic_type is BasicType.BIG_INT:
        return CheckedPickleCodec("BIG_INT", (int,), (bool,))
    if basic_type is BasicType.BIG_DEC:
        return CheckedPickleCodec("BIG_DEC", (Decimal,))
    return InstantCodec()


def _basic_spark_type(basic_type: BasicType) -> DataType:
    from pyspark.sql import types as st

    simple: dict[BasicType, DataType] = {
        BasicType.STRING: st.StringType(),
        BasicType.BYTE: st.ByteType(),
        BasicType.BOOLEAN: st.BooleanType(),
        BasicType.SHORT: st.ShortType(),
        BasicType.INT: st.IntegerType(),
        BasicType.LONG: st.LongType(),
        BasicType.FLOAT: st.FloatType(),
        BasicType.DOUBLE: st.DoubleType(),
        BasicType.CHAR: st.StringType(),
        BasicType.BIG_INT: st.DecimalType(38, 0),
        BasicType.BIG_DEC: st.DecimalType(38, 18),
        BasicType.INSTANT: st.TimestampType(),
    }
    return simple[basic_type]


class BasicTypeInfo(TypeInformation[T]):
    """Type information for primitive types (int, long, double, byte, ...), String, BigInteger,
    BigDecimal and Instant; its repr is the Java class name.

    >>> BasicTypeInfo.STRING_TYPE_INFO()
    String
    """

    __slots__ = ("_basic_type",)

    def __init__(self, basic_type: BasicType) -> None:
        self._basic_type = basic_type

    def codec(self) -> Codec[T]:
        return cast(Codec[T], _basic_codec(self._basic_type))

    def spark_type(self) -> DataType:
        return _basic_spark_type(self._basic_type)

    def _key(self) -> tuple[Any, ...]:
        return ("basic", self._basic_type)

    def __repr__(self) -> str:
        return self._basic_type.value

    @staticmethod
    def STRING_TYPE_INFO() -> BasicTypeInfo[str]:
        """Java's ``String``: Python strings (``Types.STRING()``)."""
        return BasicTypeInfo(BasicType.STRING)

    @staticmethod
    def BOOLEAN_TYPE_INFO() -> BasicTypeInfo[bool]:
        """Java's ``Boolean``: Python bools (``Types.BOOLEAN()``)."""
        return BasicTypeInfo(BasicType.BOOLEAN)

    @staticmethod
    def BYTE_TYPE_INFO() -> BasicTypeInfo[int]:
        """Java's ``Byte``: ints in the 8-bit signed range (``Types.BYTE()``)."""
        return BasicTypeInfo(BasicType.BYTE)

    @staticmethod
    def SHORT_TYPE_INFO() -> BasicTypeInfo[int]:
        """Java's ``Short``: ints in the 16-bit signed range (``Types.SHORT()``)."""
        return BasicTypeInfo(BasicType.SHORT)

    @staticmethod
    def INT_TYPE_INFO() -> BasicTypeInfo[int]:
        """Java's ``Integer``: ints in the 32-bit signed range (``Types.INT()``)."""
        return BasicTypeInfo(BasicType.INT)

    @staticmethod
    def LONG_TYPE_INFO() -> BasicTypeInfo[int]:
        """Java's ``Long``: 64-bit signed ints (``Types.LONG()``)."""
        return BasicTypeInfo(BasicType.LONG)

    @staticmethod
    def FLOAT_TYPE_INFO() -> BasicTypeInfo[float]:
        """Java's ``Float``: Python floats (``Types.FLOAT()``); a step's output declared so is
        rounded to 32 bits, as PyFlink's coder rounds it, and state keeps double precision."""
        return BasicTypeInfo(BasicType.FLOAT)

    @staticmethod
    def DOUBLE_TYPE_INFO() -> BasicTypeInfo[float]:
        """Java's ``Double``: Python floats (``Types.DOUBLE()``)."""
        return BasicTypeInfo(BasicType.DOUBLE)

    @staticmethod
    def CHAR_TYPE_INFO() -> BasicTypeInfo[str]:
        """Java's ``Character``: one-character strings (``Types.CHAR()``)."""
        return BasicTypeInfo(BasicType.CHAR)

    @staticmethod
    def BIG_INT_TYPE_INFO() -> BasicTypeInfo[int]:
        """Java's ``BigInteger``: ints of any size (``Types.BIG_INT()``)."""
        return BasicTypeInfo(BasicType.BIG_INT)

    @staticmethod
    def BIG_DEC_TYPE_INFO() -> BasicTypeInfo[Decimal]:
        """Java's ``BigDecimal``: ``decimal.Decimal`` values (``Types.BIG_DEC()``)."""
        return BasicTypeInfo(BasicType.BIG_DEC)

    @staticmethod
    def INSTANT_TYPE_INFO() -> InstantTypeInfo:
        """Java's ``Instant``: ``Instant`` values (``Types.INSTANT()``)."""
        return InstantTypeInfo(BasicType.INSTANT)


class InstantTypeInfo(BasicTypeInfo[Instant]):
    """Type information for ``Instant`` (ordered 12-byte codec)."""

    __slots__ = ()


class DateTypeInfo(TypeInformation[datetime.date]):
    """Type information for SQL dates (``datetime.date``; ordered codec)."""

    __slots__ = ()

    def codec(self) -> Codec[datetime.date]:
        return DateCodec()

    def spark_type(self) -> DataType:
        from pyspark.sql.types import DateType

        return DateType()

    def _key(self) -> tuple[Any, ...]:
        return ("sql_date",)

    def __repr__(self) -> str:
        return "DateTypeInfo"


class TimeTypeInfo(TypeInformation[datetime.time]):
    """Type information for SQL times (``datetime.time``)."""

    __slots__ = ()

    def codec(self) -> Codec[datetime.time]:
        return CheckedPickleCodec("SQL_TIME", (datetime.time,))

    def spark_type(self) -> DataType:
        from pyspark.sql.types import TimeType

        return TimeType()

    def _key(self) -> tuple[Any, ...]:
        return ("sql_time",)

    def __repr__(self) -> str:
        return "TimeTypeInfo"


class TimestampTypeInfo(TypeInformation[datetime.datetime]):
    """Type information for SQL timestamps (``datetime.datetime``)."""

    __slots__ = ()

    def codec(self) -> Codec[datetime.datetime]:
        return CheckedPickleCodec("SQL_TIMESTAMP", (datetime.datetime,))

    def spark_type(self) -> DataType:
        from pyspark.sql.types import TimestampType

        return TimestampType()

    def _key(self) -> tuple[Any, ...]:
        return ("sql_timestamp",)

    def __repr__(self) -> str:
        return "TimestampTypeInfo"


class SqlTimeTypeInfo:
    """Factories of the SQL date, time and timestamp type informations."""

    @staticmethod
    def DATE() -> DateTypeInfo:
        """SQL dates: ``datetime.date`` values (``Types.SQL_DATE()``)."""
        return DateTypeInfo()

    @staticmethod
    def TIME() -> TimeTypeInfo:
        """SQL times: ``datetime.time`` values (``Types.SQL_TIME()``)."""
        return TimeTypeInfo()

    @staticmethod
    def TIMESTAMP() -> TimestampTypeInfo:
        """SQL timestamps: ``datetime.datetime`` values (``Types.SQL_TIMESTAMP()``)."""
        return TimestampTypeInfo()


_PRIMITIVES = (
    BasicType.BOOLEAN,
    BasicType.BYTE,
    BasicType.SHORT,
    BasicType.INT,
    BasicType.LONG,
    BasicType.FLOAT,
    BasicType.DOUBLE,
    BasicType.CHAR,
)


def _check_type_info(what: str, value: object) -> TypeInformation[Any]:
    if not isinstance(value, TypeInformation):
        raise TypeError(
            f"{what} must be a TypeInformation (see Types), got {type(value).__name__}: {value!r}"
        )
    return value


def _basic_element(what: str, element_type: object, allowed: Sequence[BasicType]) -> BasicTypeInfo[Any]:
    _check_type_info(what, element_type)
    if not isinstance(element_type, BasicTypeInfo) or element_type._basic_type not in allowed:
        raise TypeError(f"Invalid element type for a {what}: {element_type!r}")
    return element_type


class PrimitiveArrayTypeInfo(TypeInformation[Any]):
    """Arrays of a primitive type: ``bytes`` for ``Types.BYTE()``, else lists without None.

    >>> Types.PRIMITIVE_ARRAY(Types.BYTE()).codec()
    BytesCodec()
    """

    __slots__ = ("_element_type",)

    def __init__(self, element_type: TypeInformation[Any]) -> None:
        self._element_type = _basic_element("primitive array", element_type, _PRIMITIVES)

    def codec(self) -> Codec[Any]:
        if self._element_type._basic_type is BasicType.BYTE:
            return BytesCodec()
        return ListCodec(self._element_type.codec(), False, repr(self))

    def spark_type(self) -> DataType:
        from pyspark.sql.types import ArrayType, BinaryType

        if self._element_type._basic_type is BasicType.BYTE:
            return BinaryType()
        return ArrayType(self._element_type.spark_type(), containsNull=False)

    def _key(self) -> tuple[Any, ...]:
        return ("primitive_array", self._element_type)

    def __repr__(self) -> str:
        return f"PrimitiveArrayTypeInfo<{self._element_type}>"


class BasicArrayTypeInfo(TypeInformation[list[T]]):
    """Arrays of a basic type (elements may be None), as lists."""

    __slots__ = ("_element_type",)

    def __init__(self, element_type: TypeInformation[T]) -> None:
        self._element_type: TypeInformation[T] = _basic_element(
            "basic array", element_type, (*_PRIMITIVES, BasicType.STRING)
        )

    def codec(self) -> Codec[list[T]]:
        return ListCodec(self._element_type.codec(), True, repr(self))

    def spark_type(self) -> DataType:
        from pyspark.sql.types import ArrayType

        return ArrayType(self._element_type.spark_type(), containsNull=True)

    def _key(self) -> tuple[Any, ...]:
        return ("basic_array", self._element_type)

    def __repr__(self) -> str:
        return f"BasicArrayTypeInfo<{self._element_type}>"


class ObjectArrayTypeInfo(TypeInformation[list[T]]):
    """Arrays of any type (elements may be None), as lists."""

    __slots__ = ("_element_type",)

    def __init__(self, element_type: TypeInformation[T]) -> None:
        self._element_type: TypeInformation[T] = _check_type_info("object array element type", element_type)

    def codec(self) -> Codec[list[T]]:
        return ListCodec(self._element_type.codec(), True, repr(self))

    def spark_type(self) -> DataType:
        from pyspark.sql.types import ArrayType

        return ArrayType(self._element_type.spark_type(), containsNull=True)

    def _key(self) -> tuple[Any, ...]:
        return ("object_array", self._element_type)

    def __repr__(self) -> str:
        return f"ObjectArrayTypeInfo<{self._element_type}>"


class PickledBytesTypeInfo(TypeInformation[Any]):
    """Any picklable Python value (PyFlink's default when no type is given)."""

    __slots__ = ()

    def codec(self) -> Codec[Any]:
        return PickleCodec()

    def spark_type(self) -> DataType:
        from pyspark.sql.types import BinaryType

        return BinaryType()

    def _key(self) -> tuple[Any, ...]:
        return ("pickled",)

    def __repr__(self) -> str:
        return "PickledByteArrayTypeInfo"


def _struct(names: Sequence[str], types: Sequence[TypeInformation[Any]]) -> DataType:
    from pyspark.sql.types import StructField, StructType

    return StructType([StructField(n, t.spark_type(), True) for n, t in zip(names, types, strict=True)])


def _field_types(field_types: object) -> list[TypeInformation[Any]]:
    if isinstance(field_types, (str, bytes)) or not isinstance(field_types, Sequence):
        raise TypeError(f"field_types must be a list of TypeInformation, got {field_types!r}")
    return [_check_type_info(f"field type {i}", t) for i, t in enumerate(field_types)]


class RowTypeInfo(TypeInformation[Row]):
    """Type information for ``Row``; fields are named f0, f1, ... unless names are given.
    Equality compares the field types only, as in PyFlink.

    >>> info = Types.ROW_NAMED(["id", "name"], [Types.INT(), Types.STRING()])
    >>> info, info.get_field_names()
    (RowTypeInfo(id: Integer, name: String), ['id', 'name'])
    >>> info.codec().decode(info.codec().encode(Row(id=1, name="a")))
    Row(id=1, name='a')
    >>> Types.ROW([Types.INT()]).get_field_names()
    ['f0']
    """

    __slots__ = ("_field_names", "_field_types")

    def __init__(
        self, field_types: Sequence[TypeInformation[Any]], field_names: Sequence[str] | None = None
    ) -> None:
        self._field_types = _field_types(field_types)
        self._field_names: list[str] | None = None
        if field_names is not None:
            names = list(field_names)
            if len(names) != len(self._field_types):
                raise ValueError(
                    f"Number of field types and names is different: {len(self._field_types)} types, "
                    f"{len(names)} names {names}"
                )
            for n in names:
                if not isinstance(n, str):
                    raise TypeError(f"field names must be str, got {type(n).__name__}: {n!r}")
            if len(set(names)) != len(names):
                raise ValueError(f"Field names are not unique: {names}")
            self._field_names = names

    def get_field_names(self) -> list[str]:
        """The field names: the given ones, else f0, f1, ..."""
        if self._field_names is not None:
            return list(self._field_names)
        return [f"f{i}" for i in range(len(self._field_types))]

    def get_field_index(self, field_name: str) -> int:
        """The position of ``field_name``, or -1."""
        names = self.get_field_names()
        return names.index(field_name) if field_name in names else -1

    def get_field_types(self) -> list[TypeInformation[Any]]:
        """The type information of each field, in order."""
        return list(self._field_types)

    def codec(self) -> Codec[Row]:
        return RowCodec(self.get_field_names(), [t.codec() for t in self._field_types], repr(self))

    def spark_type(self) -> DataType:
        return _struct(self.get_field_names(), self._field_types)

    def _key(self) -> tuple[Any, ...]:
        return ("row", tuple(self._field_types))

    def __repr__(self) -> str:
        if self._field_names is not None:
            inner = ", ".join(f"{n}: {t}" for n, t in zip(self._field_names, self._field_types, strict=True))
        else:
            inner = ", ".join(str(t) for t in self._field_types)
        return f"RowTypeInfo({inner})"


class TupleTypeInfo(TypeInformation[tuple[Any, ...]]):
    """Type information for tuples (fields f0, f1, ... in Spark).

    >>> info = Types.TUPLE([Types.STRING(), Types.LONG()])
    >>> info, info.codec().decode(info.codec().encode(("a", 1)))
    (TupleTypeInfo(String, Long), ('a', 1))
    """

    __slots__ = ("_field_types",)

    def __init__(self, field_types: Sequence[TypeInformation[Any]]) -> None:
        self._field_types = _field_types(field_types)

    def get_field_types(self) -> list[TypeInformation[Any]]:
        """The type information of each field, in order.

        >>> Types.TUPLE([Types.STRING(), Types.LONG()]).get_field_types()
        [String, Long]
        """
        return list(self._field_types)

    def codec(self) -> Codec[tuple[Any, ...]]:
        return TupleCodec([t.codec() for t in self._field_types], repr(self))

    def spark_type(self) -> DataType:
        return _struct([f"f{i}" for i in range(len(self._field_types))], self._field_types)

    def _key(self) -> tuple[Any, ...]:
        return ("tuple", tuple(self._field_types))

    def __repr__(self) -> str:
        return "TupleTypeInfo({})".format(", ".join(str(t) for t in self._field_types))


class ListTypeInfo(TypeInformation[list[T]]):
    """Type information for lists (elements may be None)."""

    __slots__ = ("elem_type",)

    def __init__(self, element_type: TypeInformation[T]) -> None:
        self.elem_type: TypeInformation[T] = _check_type_info("list element type", element_type)

    def codec(self) -> Codec[list[T]]:
        return ListCodec(self.elem_type.codec(), True, repr(self))

    def spark_type(self) -> DataType:
        from pyspark.sql.types import ArrayType

        return ArrayType(self.elem_type.spark_type(), containsNull=True)

    def _key(self) -> tuple[Any, ...]:
        return ("list", self.elem_type)

    def __repr__(self) -> str:
        return f"ListTypeInfo<{self.elem_type}>"


class MapTypeInfo(TypeInformation[dict[K, V]]):
    """Type information for dicts (keys not None, values may be None)."""

    __slots__ = ("_key_type_info", "_value_type_info")

    def __init__(self, key_type_info: TypeInformation[K], value_type_info: TypeInformation[V]) -> None:
        self._key_type_info: TypeInformation[K] = _check_type_info("map key type", key_type_info)
        self._value_type_info: TypeInformation[V] = _check_type_info("map value type", value_type_info)

    def codec(self) -> Codec[dict[K, V]]:
        return MapCodec(self._key_type_info.codec(), self._value_type_info.codec(), repr(self))

    def spark_type(self) -> DataType:
        from pyspark.sql.types import MapType

        return MapType(self._key_type_info.spark_type(), self._value_type_info.spark_type(), True)

    def _key(self) -> tuple[Any, ...]:
        return ("map", self._key_type_info, self._value_type_info)

    def __repr__(self) -> str:
        return f"MapTypeInfo<{self._key_type_info}, {self._value_type_info}>"


class Types:
    """The type information of the most common types, by PyFlink's names.

    >>> Types.INT().codec().decode(Types.INT().codec().encode(7))
    7
    >>> Types.MAP(Types.STRING(), Types.LIST(Types.INT()))
    MapTypeInfo<String, ListTypeInfo<Integer>>
    """

    @staticmethod
    def STRING() -> TypeInformation[str]:
        """Strings (ordered UTF-8 codec)."""
        return BasicTypeInfo.STRING_TYPE_INFO()

    @staticmethod
    def BYTE() -> TypeInformation[int]:
        """8-bit signed integers (ordered codec, range checked)."""
        return BasicTypeInfo.BYTE_TYPE_INFO()

    @staticmethod
    def BOOLEAN() -> TypeInformation[bool]:
        """Booleans (ordered codec)."""
        return BasicTypeInfo.BOOLEAN_TYPE_INFO()

    @staticmethod
    def SHORT() -> TypeInformation[int]:
        """16-bit signed integers (ordered codec, range checked)."""
        return BasicTypeInfo.SHORT_TYPE_INFO()

    @staticmethod
    def INT() -> TypeInformation[int]:
        """32-bit signed integers (ordered codec, range checked)."""
        return BasicTypeInfo.INT_TYPE_INFO()

    @staticmethod
    def LONG() -> TypeInformation[int]:
        """64-bit signed integers (ordered codec)."""
        return BasicTypeInfo.LONG_TYPE_INFO()

    @staticmethod
    def FLOAT() -> TypeInformation[float]:
        """Floats (ordered codec; state keeps double precision, a step's output declared so is
        rounded to 32 bits, as PyFlink's coder rounds it)."""
        return BasicTypeInfo.FLOAT_TYPE_INFO()

    @staticmethod
    def DOUBLE() -> TypeInformation[float]:
        """Doubles (ordered codec)."""
        return BasicTypeInfo.DOUBLE_TYPE_INFO()

    @staticmethod
    def CHAR() -> TypeInformation[str]:
        """Single characters (ordered codec)."""
        return BasicTypeInfo.CHAR_TYPE_INFO()

    @staticmethod
    def BIG_INT() -> TypeInformation[int]:
        """Arbitrary-precision integers."""
        return BasicTypeInfo.BIG_INT_TYPE_INFO()

    @staticmethod
    def BIG_DEC() -> TypeInformation[Decimal]:
        """``decimal.Decimal`` values."""
        return BasicTypeInfo.BIG_DEC_TYPE_INFO()

    @staticmethod
    def INSTANT() -> TypeInformation[Instant]:
        """``Instant`` values (ordered codec)."""
        return BasicTypeInfo.INSTANT_TYPE_INFO()

    @staticmethod
    def SQL_DATE() -> TypeInformation[datetime.date]:
        """``datetime.date`` values (ordered codec)."""
        return SqlTimeTypeInfo.DATE()

    @staticmethod
    def SQL_TIME() -> TypeInformation[datetime.time]:
        """``datetime.time`` values."""
        return SqlTimeTypeInfo.TIME()

    @staticmethod
    def SQL_TIMESTAMP() -> TypeInformation[datetime.datetime]:
        """``datetime.datetime`` values."""
        return SqlTimeTypeInfo.TIMESTAMP()

    @staticmethod
    def PICKLED_BYTE_ARRAY() -> TypeInformation[Any]:
        """Any picklable value (pickle codec)."""
        return PickledBytesTypeInfo()

    @staticmethod
    def ROW(field_types: Sequence[TypeInformation[Any]]) -> RowTypeInfo:
        """Rows with fields of the given types, named f0, f1, ..."""
        return RowTypeInfo(field_types)

    @staticmethod
    def ROW_NAMED(field_names: Sequence[str], field_types: Sequence[TypeInformation[Any]]) -> RowTypeInfo:
        """Rows with fields of the given names and types."""
        return RowTypeInfo(field_types, field_names)

    @staticmethod
    def TUPLE(field_types: Sequence[TypeInformation[Any]]) -> TupleTypeInfo:
        """Tuples with fields of the given types."""
        return TupleTypeInfo(field_types)

    @staticmethod
    def PRIMITIVE_ARRAY(element_type: TypeInformation[Any]) -> TypeInformation[Any]:
        """Arrays of a primitive type: ``bytes`` for ``Types.BYTE()``, else lists."""
        return PrimitiveArrayTypeInfo(element_type)

    @staticmethod
    def BASIC_ARRAY(element_type: TypeInformation[T]) -> TypeInformation[list[T]]:
        """Arrays of a basic type (such as Integer[]), as lists."""
        return BasicArrayTypeInfo(element_type)

    @staticmethod
    def OBJECT_ARRAY(element_type: TypeInformation[T]) -> TypeInformation[list[T]]:
        """Arrays of any type, as lists."""
        return ObjectArrayTypeInfo(element_type)

    @staticmethod
    def MAP(
        key_type_info: TypeInformation[K], value_type_info: TypeInformation[V]
    ) -> TypeInformation[dict[K, V]]:
        """Dicts (the type of a MapState is ``Types.MAP(key, value)``)."""
        return MapTypeInfo(key_type_info, value_type_info)

    @staticmethod
    def LIST(element_type_info: TypeInformation[T]) -> TypeInformation[list[T]]:
        """Lists (the type of a ListState is ``Types.LIST(element)``)."""
        return ListTypeInfo(element_type_info)
