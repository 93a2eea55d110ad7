"""Codec properties: round trips, byte order equals value order, fixed sizes, defaults, errors."""

from __future__ import annotations

import enum
import math
import struct
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from fs_api_advanced import (
    BoolCodec,
    BytesCodec,
    Codec,
    FloatCodec,
    IntCodec,
    JsonCodec,
    PickleCodec,
    StringCodec,
    default_codec_for,
)

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
int64s = st.integers(min_value=INT64_MIN, max_value=INT64_MAX)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=3), children, max_size=3)
    ),
    max_leaves=10,
)

fast = settings(max_examples=200, deadline=None)


def float_bits(x: float) -> bytes:
    return struct.pack(">d", x)


# Round trips ---------------------------------------------------------------------------------


@fast
@given(int64s)
@example(INT64_MIN)
@example(INT64_MAX)
@example(0)
@example(-1)
def test_int_codec_round_trip(v: int) -> None:
    data = IntCodec().encode(v)
    assert len(data) == 8
    assert IntCodec().decode(data) == v


@fast
@given(st.floats(allow_nan=True, allow_infinity=True))
@example(-0.0)
@example(0.0)
@example(math.inf)
@example(-math.inf)
@example(math.nan)
@example(-math.nan)
@example(struct.unpack(">d", bytes.fromhex("7ff0000000000001"))[0])  # a signalling-NaN pattern
@example(struct.unpack(">d", bytes.fromhex("fff8000000000123"))[0])  # a negative NaN with payload
@example(5e-324)
def test_float_codec_round_trips_bitwise(v: float) -> None:
    """Every double, NaNs and the sign of zero included, decodes to the same bits."""
    data = FloatCodec().encode(v)
    assert len(data) == 8
    assert float_bits(FloatCodec().decode(data)) == float_bits(v)


def test_float_codec_accepts_ints() -> None:
    assert FloatCodec().decode(FloatCodec().encode(3)) == 3.0
    assert FloatCodec().encode(3) == FloatCodec().encode(3.0)


@pytest.mark.parametrize("v", [True, False])
def test_bool_codec_round_trip(v: bool) -> None:
    assert BoolCodec().decode(BoolCodec().encode(v)) is v
    assert BoolCodec().encode(v) == (b"\x01" if v else b"\x00")


@fast
@given(st.text())
def test_string_codec_round_trip(v: str) -> None:
    assert StringCodec().encode(v) == v.encode("utf-8")
    assert StringCodec().decode(StringCodec().encode(v)) == v


@fast
@given(st.binary())
def test_bytes_codec_round_trip_is_identity(v: bytes) -> None:
    assert BytesCodec().encode(v) == v
    assert BytesCodec().decode(v) == v
    assert BytesCodec().encode(bytearray(v)) == v  # type: ignore[arg-type]
    assert type(BytesCodec().decode(memoryview(v))) is bytes  # type: ignore[arg-type]


@fast
@given(json_values)
def test_json_codec_round_trip(v: Any) -> None:
    assert JsonCodec().decode(JsonCodec().encode(v)) == v


def test_json_codec_non_finite_floats() -> None:
    codec = JsonCodec()
    assert codec.decode(codec.encode(math.inf)) == math.inf
    assert codec.decode(codec.encode(-math.inf)) == -math.inf
    assert math.isnan(codec.decode(codec.encode(math.nan)))
    assert codec.encode({"a": [1, 2]}) == b'{"a":[1,2]}', "compact separators"


@fast
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text() | st.binary(),
        lambda c: st.lists(c, max_size=3).map(tuple) | st.lists(c, max_size=3) | st.frozensets(st.integers()),
        max_leaves=10,
    )
)
def test_pickle_codec_round_trip(v: Any) -> None:
    assert PickleCodec().decode(PickleCodec().encode(v)) == v


def test_pickle_codec_handles_lambdas_and_local_classes() -> None:
    class Local:
        def __init__(self, x: int) -> None:
            self.x = x

    codec = PickleCodec()
    fn = codec.decode(codec.encode(lambda x: x + 1))
    assert fn(1) == 2
    obj = codec.decode(codec.encode(Local(7)))
    assert obj.x == 7


# Order ---------------------------------------------------------------------------------------


def assert_same_order(codec: Codec[Any], a: Any, b: Any, key: Any = lambda x: x) -> None:
    ea, eb = codec.encode(a), codec.encode(b)
    assert (key(a) < key(b)) == (ea < eb), (a, b)
    assert (key(a) == key(b)) == (ea == eb), (a, b)


@fast
@given(int64s, int64s)
@example(-1, 0)
@example(INT64_MIN, INT64_MAX)
@example(-(2**32), 2**32)
def test_int_codec_byte_order_is_value_order(a: int, b: int) -> None:
    assert_same_order(IntCodec(), a, b)


def total_float_key(x: float) -> tuple[float, float]:
    """Numeric order, with -0.0 just below 0.0 (the codec keeps them apart)."""
    return (x, math.copysign(1.0, x))


@fast
@given(st.floats(allow_nan=False), st.floats(allow_nan=False))
@example(-0.0, 0.0)
@example(-math.inf, math.inf)
@example(-5e-324, 5e-324)
@example(-1.5, 2.25)
def test_float_codec_byte_order_is_value_order(a: float, b: float) -> None:
    assert_same_order(FloatCodec(), a, b, key=total_float_key)


def test_float_codec_decisions_for_zero_and_nan() -> None:
    """Documented decisions: the encoding is a total order on bit patterns (like Java's
    Double.compare): -0.0 sorts just before 0.0, positive NaNs after +inf and negative NaNs
    before -inf; NaN payloads and signs survive the round trip."""
    codec = FloatCodec()
    assert codec.encode(-0.0) < codec.encode(0.0)
    assert codec.encode(-0.0).hex() == "7fffffffffffffff"
    assert codec.encode(0.0).hex() == "8000000000000000"
    assert codec.encode(math.inf) < codec.encode(math.nan)
    assert codec.encode(-math.nan) < codec.encode(-math.inf)
    assert codec.encode(-1.0) < codec.encode(-5e-324) < codec.encode(-0.0)


@fast
@given(st.text(), st.text())
@example("\uffff", "\U00010000")  # UTF-16 order would get this pair wrong
@example("", "\x00")
def test_string_codec_byte_order_is_value_order(a: str, b: str) -> None:
    assert_same_order(StringCodec(), a, b)


@fast
@given(st.binary(), st.binary())
def test_bytes_codec_byte_order_is_value_order(a: bytes, b: bytes) -> None:
    assert_same_order(BytesCodec(), a, b)


def test_bool_codec_byte_order_is_value_order() -> None:
    assert_same_order(BoolCodec(), False, True)
    assert_same_order(BoolCodec(), True, True)


@pytest.mark.parametrize(
    ("codec", "ordered"),
    [
        (IntCodec(), True),
        (FloatCodec(), True),
        (BoolCodec(), True),
        (StringCodec(), True),
        (BytesCodec(), True),
        (JsonCodec(), False),
        (PickleCodec(), False),
    ],
)
def test_supports_ordered_keys_flags(codec: Codec[Any], ordered: bool) -> None:
    assert codec.supports_ordered_keys is ordered


# IntCodec specifics --------------------------------------------------------------------------


def test_int_codec_known_encodings() -> None:
    codec = IntCodec()
    assert codec.encode(-1).hex() == "7fffffffffffffff"
    assert codec.encode(0).hex() == "8000000000000000"
    assert codec.encode(1).hex() == "8000000000000001"
    assert codec.encode(INT64_MIN).hex() == "0000000000000000"
    assert codec.encode(INT64_MAX).hex() == "ffffffffffffffff"


@fast
@given(int64s)
def test_int_codec_matches_the_functionstream_formula(v: int) -> None:
    expected = struct.pack(">Q", (v & 0xFFFF_FFFF_FFFF_FFFF) ^ (1 << 63))
    assert IntCodec().encode(v) == expected


@pytest.mark.parametrize("v", [INT64_MAX + 1, INT64_MIN - 1, 10**30, -(10**30)])
def test_int_codec_out_of_range(v: int) -> None:
    with pytest.raises(ValueError, match=rf"^Value out of 64-bit signed integer range: {v}$"):
        IntCodec().encode(v)


@fast
@given(st.floats(allow_nan=True))
def test_float_codec_matches_the_functionstream_formula(v: float) -> None:
    (bits,) = struct.unpack(">Q", struct.pack(">d", v))
    expected = (~bits & 0xFFFF_FFFF_FFFF_FFFF) if bits & (1 << 63) else bits ^ (1 << 63)
    assert FloatCodec().encode(v) == struct.pack(">Q", expected)


def test_float_codec_out_of_range_int() -> None:
    with pytest.raises(ValueError, match="out of 64-bit float range"):
        FloatCodec().encode(10**400)


# Sizes and defaults --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("codec", "size", "sample"),
    [
        (IntCodec(), 8, 12345),
        (FloatCodec(), 8, 1.5),
        (BoolCodec(), 1, True),
        (StringCodec(), -1, "abc"),
        (BytesCodec(), -1, b"abc"),
        (JsonCodec(), -1, [1]),
        (PickleCodec(), -1, {1}),
    ],
)
def test_encoded_size(codec: Codec[Any], size: int, sample: Any) -> None:
    assert codec.encoded_size() == size
    if size > 0:
        assert len(codec.encode(sample)) == size


class MyInt(int):
    pass


class Color(enum.IntEnum):
    RED = 1


class MyFloat(float):
    pass


@pytest.mark.parametrize(
    ("value_type", "codec_type"),
    [
        (bool, BoolCodec),
        (int, IntCodec),
        (float, FloatCodec),
        (str, StringCodec),
        (bytes, BytesCodec),
        (MyInt, IntCodec),
        (Color, IntCodec),
        (list, JsonCodec),
        (dict, JsonCodec),
        (tuple, PickleCodec),
        (set, PickleCodec),
        (object, PickleCodec),
        (bytearray, PickleCodec),
        (MyFloat, PickleCodec),
        (type(None), PickleCodec),
    ],
)
def test_default_codec_for(value_type: type[Any], codec_type: type[Codec[Any]]) -> None:
    assert type(default_codec_for(value_type)) is codec_type


def test_default_codec_for_bool_is_checked_before_int() -> None:
    assert default_codec_for(bool) == BoolCodec()
    assert default_codec_for(bool) != IntCodec()


def test_codec_equality_and_repr() -> None:
    assert IntCodec() == IntCodec()
    assert hash(IntCodec()) == hash(IntCodec())
    assert IntCodec() != FloatCodec()
    assert repr(JsonCodec()) == "JsonCodec()"


# Errors --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("codec", "data"),
    [
        (IntCodec(), b"\x00" * 7),
        (IntCodec(), b"\x00" * 9),
        (IntCodec(), b""),
        (FloatCodec(), b"\x00" * 4),
        (BoolCodec(), b"\x02"),
        (BoolCodec(), b""),
        (BoolCodec(), b"\x00\x01"),
        (StringCodec(), b"\xff\xfe"),
        (JsonCodec(), b"{not json"),
        (JsonCodec(), b"\xff"),
        (PickleCodec(), b"not a pickle"),
        (PickleCodec(), b""),
    ],
)
def test_decode_failures_raise_value_error(codec: Codec[Any], data: bytes) -> None:
    with pytest.raises(ValueError):
        codec.decode(data)


@pytest.mark.parametrize(
    ("codec", "value"),
    [
        (IntCodec(), "1"),
        (IntCodec(), 1.0),
        (FloatCodec(), "1.0"),
        (BoolCodec(), 1),
        (StringCodec(), b"bytes"),
        (BytesCodec(), "str"),
        (JsonCodec(), {1, 2}),
        (JsonCodec(), object()),
    ],
)
def test_encode_of_the_wrong_type_raises_type_error(codec: Codec[Any], value: Any) -> None:
    with pytest.raises(TypeError):
        codec.encode(value)
