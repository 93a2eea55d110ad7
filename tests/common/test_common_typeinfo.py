"""Types / TypeInformation: equality, repr, codecs (round trips, order, errors) and Spark types."""

from __future__ import annotations

import datetime
import math
import pickle
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pyspark.sql import types as sql

from fs_api_advanced import BoolCodec, BytesCodec, Codec, FloatCodec, IntCodec, PickleCodec, StringCodec
from fs_compat.common import (
    BasicTypeInfo,
    Instant,
    ListTypeInfo,
    MapTypeInfo,
    Row,
    RowKind,
    RowTypeInfo,
    TupleTypeInfo,
    TypeInformation,
    Types,
)


def all_types() -> list[TypeInformation[Any]]:
    return [
        Types.STRING(),
        Types.BYTE(),
        Types.BOOLEAN(),
        Types.SHORT(),
        Types.INT(),
        Types.LONG(),
        Types.FLOAT(),
        Types.DOUBLE(),
        Types.CHAR(),
        Types.BIG_INT(),
        Types.BIG_DEC(),
        Types.INSTANT(),
        Types.SQL_DATE(),
        Types.SQL_TIME(),
        Types.SQL_TIMESTAMP(),
        Types.PICKLED_BYTE_ARRAY(),
        Types.ROW([Types.INT(), Types.STRING()]),
        Types.ROW_NAMED(["a", "b"], [Types.INT(), Types.STRING()]),
        Types.TUPLE([Types.INT(), Types.DOUBLE()]),
        Types.PRIMITIVE_ARRAY(Types.BYTE()),
        Types.PRIMITIVE_ARRAY(Types.INT()),
        Types.BASIC_ARRAY(Types.STRING()),
        Types.OBJECT_ARRAY(Types.ROW([Types.INT()])),
        Types.MAP(Types.STRING(), Types.LONG()),
        Types.LIST(Types.DOUBLE()),
    ]


# Equality, hash, repr ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("info", "text"),
    [
        (Types.STRING(), "String"),
        (Types.BYTE(), "Byte"),
        (Types.BOOLEAN(), "Boolean"),
        (Types.SHORT(), "Short"),
        (Types.INT(), "Integer"),
        (Types.LONG(), "Long"),
        (Types.FLOAT(), "Float"),
        (Types.DOUBLE(), "Double"),
        (Types.CHAR(), "Char"),
        (Types.BIG_INT(), "BigInteger"),
        (Types.BIG_DEC(), "BigDecimal"),
        (Types.INSTANT(), "Instant"),
        (Types.SQL_DATE(), "DateTypeInfo"),
        (Types.SQL_TIME(), "TimeTypeInfo"),
        (Types.SQL_TIMESTAMP(), "TimestampTypeInfo"),
        (Types.PICKLED_BYTE_ARRAY(), "PickledByteArrayTypeInfo"),
        (Types.ROW([Types.INT(), Types.STRING()]), "RowTypeInfo(Integer, String)"),
        (Types.ROW_NAMED(["a", "b"], [Types.INT(), Types.STRING()]), "RowTypeInfo(a: Integer, b: String)"),
        (Types.TUPLE([Types.INT(), Types.DOUBLE()]), "TupleTypeInfo(Integer, Double)"),
        (Types.PRIMITIVE_ARRAY(Types.BYTE()), "PrimitiveArrayTypeInfo<Byte>"),
        (Types.BASIC_ARRAY(Types.STRING()), "BasicArrayTypeInfo<String>"),
        (Types.OBJECT_ARRAY(Types.INT()), "ObjectArrayTypeInfo<Integer>"),
        (Types.MAP(Types.STRING(), Types.LONG()), "MapTypeInfo<String, Long>"),
        (Types.LIST(Types.DOUBLE()), "ListTypeInfo<Double>"),
    ],
)
def test_repr_is_pyflinks(info: TypeInformation[Any], text: str) -> None:
    assert repr(info) == text
    assert str(info) == text


def test_equal_descriptions_are_equal_and_hash_alike() -> None:
    for a, b in zip(all_types(), all_types(), strict=True):
        assert a == b
        assert hash(a) == hash(b)
        assert pickle.loads(pickle.dumps(a)) == a
    distinct = all_types()
    for i, a in enumerate(distinct):
        for j, b in enumerate(distinct):
            if i != j and {i, j} != {16, 17}:  # ROW and ROW_NAMED of the same field types are equal
                assert a != b, (a, b)


def test_row_type_equality_ignores_names_as_in_pyflink() -> None:
    assert Types.ROW([Types.INT()]) == Types.ROW_NAMED(["x"], [Types.INT()])
    assert Types.ROW([Types.INT()]) != Types.TUPLE([Types.INT()])
    assert Types.INT() != "Integer"
    assert BasicTypeInfo.INT_TYPE_INFO() == Types.INT()


def test_row_and_tuple_type_accessors() -> None:
    unnamed = Types.ROW([Types.INT(), Types.STRING()])
    assert isinstance(unnamed, RowTypeInfo)
    assert unnamed.get_field_names() == ["f0", "f1"]
    assert unnamed.get_field_types() == [Types.INT(), Types.STRING()]
    assert unnamed.get_field_index("f1") == 1
    assert unnamed.get_field_index("nope") == -1
    named = Types.ROW_NAMED(["id", "name"], [Types.INT(), Types.STRING()])
    assert named.get_field_names() == ["id", "name"]
    tup = Types.TUPLE([Types.INT(), Types.STRING()])
    assert isinstance(tup, TupleTypeInfo)
    assert tup.get_field_types() == [Types.INT(), Types.STRING()]
    assert isinstance(Types.LIST(Types.INT()), ListTypeInfo)
    assert Types.LIST(Types.INT()).elem_type == Types.INT()  # type: ignore[attr-defined]
    assert isinstance(Types.MAP(Types.INT(), Types.INT()), MapTypeInfo)


def test_bad_descriptions_are_refused() -> None:
    with pytest.raises(ValueError, match="Number of field types and names"):
        Types.ROW_NAMED(["a"], [Types.INT(), Types.INT()])
    with pytest.raises(ValueError, match="not unique"):
        Types.ROW_NAMED(["a", "a"], [Types.INT(), Types.INT()])
    with pytest.raises(TypeError, match="must be a TypeInformation"):
        Types.ROW([int])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="must be a TypeInformation"):
        Types.LIST(str)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Invalid element type for a primitive array"):
        Types.PRIMITIVE_ARRAY(Types.STRING())
    with pytest.raises(TypeError, match="Invalid element type for a basic array"):
        Types.BASIC_ARRAY(Types.LIST(Types.INT()))


def test_no_jvm() -> None:
    with pytest.raises(NotImplementedError, match="codec\\(\\)"):
        Types.INT().get_java_type_info()


# Codecs ---------------------------------------------------------------------------------------


def test_codec_classes() -> None:
    assert isinstance(Types.INT().codec(), IntCodec)
    assert isinstance(Types.SHORT().codec(), IntCodec)
    assert isinstance(Types.BYTE().codec(), IntCodec)
    assert Types.LONG().codec() == IntCodec()
    assert Types.FLOAT().codec() == FloatCodec()
    assert Types.DOUBLE().codec() == FloatCodec()
    assert Types.BOOLEAN().codec() == BoolCodec()
    assert Types.STRING().codec() == StringCodec()
    assert isinstance(Types.CHAR().codec(), StringCodec)
    assert Types.PRIMITIVE_ARRAY(Types.BYTE()).codec() == BytesCodec()
    assert Types.PICKLED_BYTE_ARRAY().codec() == PickleCodec()


def test_codecs_pickle_and_compare_equal_when_built_from_equal_descriptions() -> None:
    for a, b in zip(all_types(), all_types(), strict=True):
        codec = a.codec()
        assert codec == b.codec()
        assert hash(codec) == hash(b.codec())
        assert pickle.loads(pickle.dumps(codec)) == codec
    assert Types.INT().codec() != Types.SHORT().codec()
    assert Types.ROW([Types.INT()]).codec() != Types.ROW([Types.LONG()]).codec()


SAMPLES: list[tuple[TypeInformation[Any], list[Any]]] = [
    (Types.STRING(), ["", "a", "héllo", "日本"]),
    (Types.BYTE(), [-128, 0, 127]),
    (Types.BOOLEAN(), [False, True]),
    (Types.SHORT(), [-(2**15), 0, 2**15 - 1]),
    (Types.INT(), [-(2**31), -1, 0, 2**31 - 1]),
    (Types.LONG(), [-(2**63), 0, 2**63 - 1]),
    (Types.FLOAT(), [-1.5, 0.0, 3.25]),
    (Types.DOUBLE(), [-math.inf, -1e300, 0.0, 1e-300, math.inf]),
    (Types.CHAR(), ["a", "é"]),
    (Types.BIG_INT(), [0, -(10**40), 10**40]),
    (Types.BIG_DEC(), [Decimal("0"), Decimal("-1.25"), Decimal("123456789012345678901234567890.5")]),
    (Types.INSTANT(), [Instant.of_epoch_milli(-1), Instant(0, 0), Instant(1_700_000_000, 5)]),
    (Types.SQL_DATE(), [datetime.date(1, 1, 1), datetime.date(1970, 1, 1), datetime.date(9999, 12, 31)]),
    (Types.SQL_TIME(), [datetime.time(0, 0), datetime.time(23, 59, 59, 999_999)]),
    (Types.SQL_TIMESTAMP(), [datetime.datetime(2024, 1, 2, 3, 4, 5, 6)]),
    (Types.PICKLED_BYTE_ARRAY(), [None, {"a": [1, (2, 3)]}, Row(a=1)]),
    (Types.PRIMITIVE_ARRAY(Types.BYTE()), [b"", b"\x00\xff"]),
    (Types.PRIMITIVE_ARRAY(Types.INT()), [[], [1, -2, 3]]),
    (Types.BASIC_ARRAY(Types.STRING()), [[], ["a", None, ""]]),
    (Types.OBJECT_ARRAY(Types.ROW([Types.INT()])), [[Row(f0=1), None]]),
    (Types.LIST(Types.DOUBLE()), [[], [1.5, None, -2.0]]),
    (Types.LIST(Types.LIST(Types.STRING())), [[["a"], [], None]]),
    (Types.MAP(Types.STRING(), Types.LONG()), [{}, {"a": 1, "b": None}]),
    (Types.MAP(Types.INT(), Types.MAP(Types.STRING(), Types.BOOLEAN())), [{1: {"x": True}, 2: {}}]),
    (Types.TUPLE([Types.INT(), Types.STRING()]), [(1, "a"), (None, None)]),
]


@pytest.mark.parametrize(("info", "values"), SAMPLES, ids=[repr(i) for i, _ in SAMPLES])
def test_codec_round_trips(info: TypeInformation[Any], values: list[Any]) -> None:
    codec = info.codec()
    size = codec.encoded_size()
    for value in values:
        data = codec.encode(value)
        assert isinstance(data, bytes)
        assert codec.decode(data) == value
        assert type(codec.decode(data)) is type(value)
        if size >= 0:
            assert len(data) == size


def test_row_codec_names_fields_f0_f1_and_keeps_the_row_kind() -> None:
    codec = Types.ROW([Types.STRING(), Types.INT()]).codec()
    row = codec.decode(codec.encode(("a", 1)))  # type: ignore[arg-type]
    assert repr(row) == "Row(f0='a', f1=1)"
    assert row.f0 == "a" and row[1] == 1
    assert row.get_row_kind() is RowKind.INSERT
    retract = Row.of_kind(RowKind.UPDATE_BEFORE, "b", 2)
    back = codec.decode(codec.encode(retract))
    assert back.get_row_kind() is RowKind.UPDATE_BEFORE
    assert list(back) == ["b", 2]
    assert codec.decode(codec.encode(Row(None, None))) == Row(f0=None, f1=None)


def test_named_row_codec_takes_fields_by_name_from_rows_dicts_and_objects() -> None:
    codec = Types.ROW_NAMED(["id", "name"], [Types.INT(), Types.STRING()]).codec()
    expected = Row(id=1, name="a")
    assert codec.decode(codec.encode(Row(name="a", id=1))) == expected
    assert repr(codec.decode(codec.encode(Row(name="a", id=1)))) == "Row(id=1, name='a')"
    assert codec.decode(codec.encode({"id": 1, "name": "a"})) == expected  # type: ignore[arg-type]
    assert codec.decode(codec.encode([1, "a"])) == expected  # type: ignore[arg-type]

    class Person:
        def __init__(self) -> None:
            self.id = 1
            self.name = "a"

    assert codec.decode(codec.encode(Person())) == expected  # type: ignore[arg-type]


def test_row_codec_errors_name_the_type_field_and_value() -> None:
    codec = Types.ROW_NAMED(["id", "name"], [Types.INT(), Types.STRING()]).codec()
    with pytest.raises(TypeError, match=r"field 'name' of RowTypeInfo\(id: Integer, name: String\).*7"):
        codec.encode(Row(id=1, name=7))
    with pytest.raises(ValueError, match=r"field 'id'.*INT value out of range.*2147483648"):
        codec.encode(Row(id=2**31, name="a"))
    with pytest.raises(ValueError, match="expects 2 fields, got 3"):
        codec.encode(Row(1, "a", "extra"))
    with pytest.raises(ValueError, match="needs field 'id'"):
        codec.encode(Row(other=1, name="a"))
    with pytest.raises(TypeError, match="expects a Row, tuple, list or dict"):
        codec.encode(5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="RowCodec cannot decode"):
        codec.decode(b"\x00\x01")


def test_tuple_codec_accepts_lists_and_rows_and_gives_tuples() -> None:
    codec = Types.TUPLE([Types.STRING(), Types.LONG()]).codec()
    assert codec.decode(codec.encode(["a", 1])) == ("a", 1)  # type: ignore[arg-type]
    assert codec.decode(codec.encode(Row("a", 1))) == ("a", 1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="expects 2 fields, got 1"):
        codec.encode(("a",))
    with pytest.raises(TypeError, match=r"field 1 of TupleTypeInfo\(String, Long\)"):
        codec.encode(("a", "b"))


def _encoded(codec: Any, value: Any) -> Any:
    """``codec.encode(value)``, or the class and message of what it raised."""
    try:
        return codec.encode(value)
    except (TypeError, ValueError) as exc:
        return type(exc), str(exc)


_PAIR_PARTS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**64), max_value=2**64),
    st.sampled_from([2**31 - 1, 2**31, -(2**31), -(2**31) - 1, 2**63 - 1, 2**63, -(2**63), 0]),
    st.floats(allow_nan=False),
    st.text(max_size=2),
)


@given(
    st.sampled_from(["LONG", "INT", "SHORT"]),
    st.tuples(_PAIR_PARTS, _PAIR_PARTS) | st.lists(_PAIR_PARTS, max_size=3).map(tuple),
)
def test_a_tuple_codec_writes_a_pair_of_integers_as_it_writes_any_tuple(kind: str, value: Any) -> None:
    """``TupleCodec``'s pair of integers (a state value's count and sum, written at every snapshot)
    takes a path of its own: the same bytes, and the same errors, as field by field."""
    field = getattr(Types, kind)()
    codec = Types.TUPLE([field, field]).codec()
    general = Types.TUPLE([field, field]).codec()
    general._pair_bytes = None  # type: ignore[attr-defined]
    assert codec._pair_bytes is not None  # type: ignore[attr-defined]
    assert _encoded(codec, value) == _encoded(general, value)


def _decoded(codec: Any, data: bytes) -> Any:
    """``codec.decode(data)``, or the error it raised (type and message)."""
    try:
        return codec.decode(data)
    except Exception as exc:
        return type(exc), str(exc)


@given(
    st.sampled_from(["LONG", "INT", "SHORT"]),
    st.binary(min_size=17, max_size=19)
    | st.tuples(
        st.integers(0, 2),
        st.binary(min_size=8, max_size=8),
        st.integers(0, 2),
        st.binary(min_size=8, max_size=8),
    ).map(lambda p: bytes([p[0]]) + p[1] + bytes([p[2]]) + p[3]),
)
def test_a_tuple_codec_reads_a_pair_of_integers_as_it_reads_any_tuple(kind: str, data: bytes) -> None:
    """``TupleCodec``'s pair of integers is read in one ``unpack`` (each key's value of a key
    group restored from its snapshot): the same values, and the same errors, as field by field."""
    field = getattr(Types, kind)()
    codec = Types.TUPLE([field, field]).codec()
    general = Types.TUPLE([field, field]).codec()
    general._pair_read = False  # type: ignore[attr-defined]
    assert codec._pair_read  # type: ignore[attr-defined]
    assert _decoded(codec, data) == _decoded(general, data)


@pytest.mark.parametrize(
    ("info", "bad", "error", "pattern"),
    [
        (Types.INT(), 2**31, ValueError, r"INT value out of range \[-2147483648, 2147483647\]: 2147483648"),
        (Types.INT(), -(2**31) - 1, ValueError, "INT value out of range"),
        (Types.SHORT(), 2**15, ValueError, r"SHORT value out of range \[-32768, 32767\]: 32768"),
        (Types.BYTE(), 128, ValueError, r"BYTE value out of range \[-128, 127\]: 128"),
        (Types.LONG(), 2**63, ValueError, "out of 64-bit"),
        (Types.INT(), "1", TypeError, "INT expects an int, got str: '1'"),
        (Types.INT(), 1.0, TypeError, "INT expects an int, got float: 1.0"),
        (Types.STRING(), 1, TypeError, "expects a str"),
        (Types.BOOLEAN(), 1, TypeError, "expects a bool"),
        (Types.DOUBLE(), "x", TypeError, "expects a float"),
        (Types.CHAR(), "ab", TypeError, "CHAR expects a str of length 1, got str: 'ab'"),
        (Types.BIG_INT(), 1.5, TypeError, "BIG_INT expects int, got float: 1.5"),
        (Types.BIG_INT(), True, TypeError, "BIG_INT expects int"),
        (Types.BIG_DEC(), 1.5, TypeError, "BIG_DEC expects Decimal, got float"),
        (Types.SQL_DATE(), datetime.datetime(2024, 1, 1), TypeError, "SQL_DATE expects a datetime.date"),
        (Types.SQL_TIME(), "12:00", TypeError, "SQL_TIME expects time"),
        (Types.SQL_TIMESTAMP(), datetime.date(2024, 1, 1), TypeError, "SQL_TIMESTAMP expects datetime"),
        (Types.INSTANT(), 5, TypeError, "INSTANT expects an Instant"),
        (Types.PRIMITIVE_ARRAY(Types.BYTE()), [1, 2], TypeError, "expects bytes"),
        (Types.PRIMITIVE_ARRAY(Types.INT()), [1, None], TypeError, "element 1 of .* does not support None"),
        (Types.LIST(Types.INT()), [1, "x"], TypeError, r"element 1 of ListTypeInfo<Integer>: INT expects"),
        (Types.LIST(Types.INT()), "abc", TypeError, "ListTypeInfo<Integer> expects a list"),
        (
            Types.MAP(Types.STRING(), Types.INT()),
            {None: 1},
            TypeError,
            "key of MapTypeInfo.* does not support None",
        ),
        (Types.MAP(Types.STRING(), Types.INT()), {"k": 2**40}, ValueError, "value of key 'k'.*out of range"),
        (Types.MAP(Types.STRING(), Types.INT()), [("k", 1)], TypeError, "expects a dict"),
    ],
)
def test_values_not_matching_the_type_are_refused(
    info: TypeInformation[Any], bad: Any, error: type[Exception], pattern: str
) -> None:
    with pytest.raises(error, match=pattern):
        info.codec().encode(bad)


def test_corrupt_bytes_are_refused_on_decode() -> None:
    for info, data in [
        (Types.LIST(Types.STRING()), b"\x02\x01\x01a"),
        (Types.LIST(Types.STRING()), b"\x00\x00"),
        (Types.MAP(Types.STRING(), Types.INT()), b"\x01"),
        (Types.SQL_DATE(), b"\x00"),
        (Types.INSTANT(), b"\x00" * 11),
        (Types.TUPLE([Types.INT()]), b"\x07"),
    ]:
        with pytest.raises(ValueError):
            info.codec().decode(data)


ORDERED: list[tuple[TypeInformation[Any], st.SearchStrategy[Any]]] = [
    (Types.BYTE(), st.integers(-128, 127)),
    (Types.SHORT(), st.integers(-(2**15), 2**15 - 1)),
    (Types.INT(), st.integers(-(2**31), 2**31 - 1)),
    (Types.LONG(), st.integers(-(2**63), 2**63 - 1)),
    (Types.DOUBLE(), st.floats(allow_nan=False)),
    (Types.FLOAT(), st.floats(allow_nan=False)),
    (Types.BOOLEAN(), st.booleans()),
    (Types.STRING(), st.text()),
    (Types.CHAR(), st.characters()),
    (Types.PRIMITIVE_ARRAY(Types.BYTE()), st.binary()),
    (Types.SQL_DATE(), st.dates()),
    (
        Types.INSTANT(),
        st.builds(Instant, st.integers(-(2**40), 2**40), st.integers(0, 999_999_999)),
    ),
]


def _key(value: Any) -> Any:
    if isinstance(value, Instant):
        return (value.seconds, value.nanos)
    if isinstance(value, float) and value == 0:
        return 0.0
    return value


@pytest.mark.parametrize(("info", "values"), ORDERED, ids=[repr(i) for i, _ in ORDERED])
def test_ordered_codecs_keep_value_order_in_byte_order(
    info: TypeInformation[Any], values: st.SearchStrategy[Any]
) -> None:
    codec: Codec[Any] = info.codec()
    assert codec.supports_ordered_keys

    @given(values, values)
    def check(a: Any, b: Any) -> None:
        ea, eb = codec.encode(a), codec.encode(b)
        assert codec.decode(ea) == a
        if _key(a) < _key(b):
            assert ea < eb
        elif _key(a) > _key(b):
            assert ea > eb

    check()


def test_a_char_may_be_a_lone_surrogate_as_a_java_char_may() -> None:
    # Found by the property above: a Java char is any UTF-16 code unit, '\ud800' included.
    codec: Codec[Any] = Types.CHAR().codec()
    chars = ["0", "\ud7ff", "\ud800", "\udfff", "\ue000", "\U0001f600"]
    encoded = [codec.encode(c) for c in chars]
    assert [codec.decode(e) for e in encoded] == chars
    assert encoded == sorted(encoded)  # code point order


def test_unordered_codecs_say_so() -> None:
    for info in [
        Types.PICKLED_BYTE_ARRAY(),
        Types.ROW([Types.INT()]),
        Types.LIST(Types.INT()),
        Types.BIG_DEC(),
    ]:
        assert not info.codec().supports_ordered_keys


@given(
    st.lists(
        st.tuples(
            st.one_of(st.none(), st.integers(-(2**31), 2**31 - 1)),
            st.one_of(st.none(), st.text()),
            st.lists(st.one_of(st.none(), st.floats(allow_nan=False))),
            st.dictionaries(st.text(), st.one_of(st.none(), st.booleans())),
        ),
        max_size=3,
    ),
    st.sampled_from(list(RowKind)),
)
def test_nested_row_codec_round_trips(rows: list[tuple[Any, ...]], kind: RowKind) -> None:
    inner = Types.ROW_NAMED(
        ["i", "s", "xs", "m"],
        [Types.INT(), Types.STRING(), Types.LIST(Types.DOUBLE()), Types.MAP(Types.STRING(), Types.BOOLEAN())],
    )
    outer = Types.ROW_NAMED(["rows", "n"], [Types.LIST(inner), Types.LONG()])
    value = Row.of_kind(kind, rows=[Row(i=r[0], s=r[1], xs=r[2], m=r[3]) for r in rows], n=len(rows))
    codec = outer.codec()
    back = codec.decode(codec.encode(value))
    assert back == value
    assert back.get_row_kind() is kind


# Spark types ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("info", "expected"),
    [
        (Types.STRING(), sql.StringType()),
        (Types.BYTE(), sql.ByteType()),
        (Types.BOOLEAN(), sql.BooleanType()),
        (Types.SHORT(), sql.ShortType()),
        (Types.INT(), sql.IntegerType()),
        (Types.LONG(), sql.LongType()),
        (Types.FLOAT(), sql.FloatType()),
        (Types.DOUBLE(), sql.DoubleType()),
        (Types.CHAR(), sql.StringType()),
        (Types.BIG_INT(), sql.DecimalType(38, 0)),
        (Types.BIG_DEC(), sql.DecimalType(38, 18)),
        (Types.INSTANT(), sql.TimestampType()),
        (Types.SQL_DATE(), sql.DateType()),
        (Types.SQL_TIME(), sql.TimeType()),
        (Types.SQL_TIMESTAMP(), sql.TimestampType()),
        (Types.PICKLED_BYTE_ARRAY(), sql.BinaryType()),
        (Types.PRIMITIVE_ARRAY(Types.BYTE()), sql.BinaryType()),
        (Types.PRIMITIVE_ARRAY(Types.INT()), sql.ArrayType(sql.IntegerType(), containsNull=False)),
        (Types.BASIC_ARRAY(Types.STRING()), sql.ArrayType(sql.StringType(), containsNull=True)),
        (Types.OBJECT_ARRAY(Types.LONG()), sql.ArrayType(sql.LongType(), containsNull=True)),
        (Types.LIST(Types.DOUBLE()), sql.ArrayType(sql.DoubleType(), containsNull=True)),
        (Types.MAP(Types.STRING(), Types.INT()), sql.MapType(sql.StringType(), sql.IntegerType(), True)),
        (
            Types.ROW([Types.INT(), Types.STRING()]),
            sql.StructType(
                [sql.StructField("f0", sql.IntegerType()), sql.StructField("f1", sql.StringType())]
            ),
        ),
        (
            Types.ROW_NAMED(["id", "tags"], [Types.LONG(), Types.LIST(Types.STRING())]),
            sql.StructType(
                [
                    sql.StructField("id", sql.LongType()),
                    sql.StructField("tags", sql.ArrayType(sql.StringType())),
                ]
            ),
        ),
        (
            Types.TUPLE([Types.STRING(), Types.DOUBLE()]),
            sql.StructType(
                [sql.StructField("f0", sql.StringType()), sql.StructField("f1", sql.DoubleType())]
            ),
        ),
    ],
)
def test_spark_type(info: TypeInformation[Any], expected: sql.DataType) -> None:
    assert info.spark_type() == expected
