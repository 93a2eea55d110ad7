"""Codecs: typed values to bytes and back, with order-preserving encodings for keys."""

from __future__ import annotations

import abc
import json
import pickle
import struct
from typing import Any, ClassVar, Generic, TypeVar, overload

import cloudpickle

T = TypeVar("T")

_SIGN = 1 << 63
_MASK = (1 << 64) - 1
_INT_MIN = -(1 << 63)
_INT_MAX = (1 << 63) - 1
_DOUBLE = struct.Struct(">d")
_U64 = struct.Struct(">Q")


class Codec(abc.ABC, Generic[T]):
    """Turns values of type ``T`` into bytes and back.

    ``supports_ordered_keys`` is true when byte order of encodings equals value order, which map
    keys and priority-queue elements need. ``encoded_size()`` is the fixed size of every encoding,
    or ``-1`` when sizes vary.
    """

    supports_ordered_keys: ClassVar[bool] = False

    @abc.abstractmethod
    def encode(self, value: T) -> bytes:
        """The bytes of ``value``."""

    @abc.abstractmethod
    def decode(self, data: bytes) -> T:
        """The value of ``data``; ``ValueError`` when ``data`` is not a valid encoding."""

    def encoded_size(self) -> int:
        """The fixed size of an encoding, or ``-1`` when sizes vary."""
        return -1

    def kept_as_is(self, value: T) -> bool:
        """Whether state may keep ``value`` itself instead of its encoding: True only when
        ``encode`` accepts it, ``decode(encode(value))`` equals it and has its type, and it is
        immutable, so handing out the same object on every read is the same as decoding a
        fresh one. Keyed state without TTL asks on every write (it must be cheap) and encodes
        the value when the answer is False, which the default always gives. A subclass that
        overrides ``encode`` or ``decode`` but not ``kept_as_is`` gets this default back.

        >>> IntCodec().kept_as_is(7), IntCodec().kept_as_is(True), PickleCodec().kept_as_is([1])
        (True, False, False)
        """
        return False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if ("encode" in cls.__dict__ or "decode" in cls.__dict__) and "kept_as_is" not in cls.__dict__:
            cls.kept_as_is = Codec.kept_as_is  # type: ignore[method-assign]

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other)

    def __hash__(self) -> int:
        return hash(type(self))

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class IntCodec(Codec[int]):
    """Signed 64-bit integers as 8 big-endian bytes with the sign bit flipped (ordered).

    >>> IntCodec().encode(-1).hex(), IntCodec().encode(0).hex()
    ('7fffffffffffffff', '8000000000000000')
    >>> IntCodec().decode(IntCodec().encode(-42))
    -42
    """

    supports_ordered_keys = True
    #: The accepted range (subclasses narrow it).
    _lo = _INT_MIN
    _hi = _INT_MAX

    def encode(self, value: int) -> bytes:
        if not isinstance(value, int):
            raise TypeError(f"IntCodec expects an int, got {type(value).__name__}: {value!r}")
        if not _INT_MIN <= value <= _INT_MAX:
            raise ValueError(f"Value out of 64-bit signed integer range: {value}")
        return (value + _SIGN).to_bytes(8, "big")

    def decode(self, data: bytes) -> int:
        if len(data) != 8:
            raise ValueError(f"IntCodec expects 8 bytes, got {len(data)}")
        return int.from_bytes(data, "big") - _SIGN

    def kept_as_is(self, value: int) -> bool:
        return type(value) is int and self._lo <= value <= self._hi

    def encoded_size(self) -> int:
        return 8


class FloatCodec(Codec[float]):
    """IEEE-754 doubles as 8 bytes whose byte order is numeric order (ordered).

    >>> codec = FloatCodec()
    >>> codec.encode(-1.5) < codec.encode(0.0) < codec.encode(2.25)
    True
    """

    supports_ordered_keys = True

    def encode(self, value: float) -> bytes:
        if not isinstance(value, (int, float)):
            raise TypeError(f"FloatCodec expects a float, got {type(value).__name__}: {value!r}")
        try:
            (bits,) = _U64.unpack(_DOUBLE.pack(value))
        except (OverflowError, struct.error) as exc:  # an int too large for a double
            raise ValueError(f"Value out of 64-bit float range: {value}") from exc
        bits = (~bits & _MASK) if bits & _SIGN else bits ^ _SIGN
        return _U64.pack(bits)

    def kept_as_is(self, value: float) -> bool:
        return type(value) is float

    def decode(self, data: bytes) -> float:
        if len(data) != 8:
            raise ValueError(f"FloatCodec expects 8 bytes, got {len(data)}")
        (bits,) = _U64.unpack(data)
        bits = bits ^ _SIGN if bits & _SIGN else (~bits & _MASK)
        value: float = _DOUBLE.unpack(_U64.pack(bits))[0]
        return value

    def encoded_size(self) -> int:
        return 8


class BoolCodec(Codec[bool]):
    """Booleans as one byte, 0 or 1 (ordered); decoding anything else is an error."""

    supports_ordered_keys = True

    def encode(self, value: bool) -> bytes:
        if not isinstance(value, bool):
            raise TypeError(f"BoolCodec expects a bool, got {type(value).__name__}: {value!r}")
        return b"\x01" if value else b"\x00"

    def decode(self, data: bytes) -> bool:
        if data == b"\x01":
            return True
        if data == b"\x00":
            return False
        raise ValueError(f"BoolCodec expects b'\\x00' or b'\\x01', got {bytes(data)!r}")

    def kept_as_is(self, value: bool) -> bool:
        return type(value) is bool

    def encoded_size(self) -> int:
        return 1


class StringCodec(Codec[str]):
    """Strings as UTF-8 (ordered: UTF-8 byte order is code point order)."""

    supports_ordered_keys = True

    def encode(self, value: str) -> bytes:
        if not isinstance(value, str):
            raise TypeError(f"StringCodec expects a str, got {type(value).__name__}: {value!r}")
        return value.encode("utf-8")

    def decode(self, data: bytes) -> str:
        return bytes(data).decode("utf-8")

    def kept_as_is(self, value: str) -> bool:
        return type(value) is str and value.isascii()  # other strings: encoding checks them


class BytesCodec(Codec[bytes]):
    """Bytes as themselves (ordered)."""

    supports_ordered_keys = True

    def encode(self, value: bytes) -> bytes:
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise TypeError(f"BytesCodec expects bytes, got {type(value).__name__}: {value!r}")
        return bytes(value)

    def decode(self, data: bytes) -> bytes:
        return bytes(data)

    def kept_as_is(self, value: bytes) -> bool:
        return type(value) is bytes


class JsonCodec(Codec[Any]):
    """JSON-compatible values as compact UTF-8 JSON (not ordered)."""

    def encode(self, value: Any) -> bytes:
        try:
            return json.dumps(value, separators=(",", ":"), allow_nan=True).encode("utf-8")
        except (TypeError, ValueError) as exc:
            raise TypeError(f"JsonCodec cannot encode {type(value).__name__}: {exc}") from exc

    def decode(self, data: bytes) -> Any:
        try:
            return json.loads(bytes(data).decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"JsonCodec cannot decode {len(data)} bytes: {exc}") from exc


class PickleCodec(Codec[Any]):
    """Any picklable value (not ordered). Plain pickle where it works (it is faster), else
    cloudpickle, so lambdas and locally defined classes work too."""

    def encode(self, value: Any) -> bytes:
        try:
            return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, AttributeError, TypeError):
            pass
        try:
            data: bytes = cloudpickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:
            raise TypeError(f"PickleCodec cannot pickle {type(value).__name__}: {exc}") from exc
        return data

    def decode(self, data: bytes) -> Any:
        try:
            return pickle.loads(data)
        except Exception as exc:
            raise ValueError(f"PickleCodec cannot unpickle {len(data)} bytes: {exc}") from exc

    def kept_as_is(self, value: Any) -> bool:
        """True for ``None``, ``bool``, ``int``, ``float``, ``complex``, ``str`` and ``bytes`` and
        for tuples and frozensets of them (a few levels deep): pickling gives them back equal and
        they cannot change."""
        return _immutable(value, 3)


_ATOMS = frozenset({type(None), bool, int, float, complex, str, bytes})


def _immutable(value: Any, depth: int) -> bool:
    kind = type(value)
    if kind in _ATOMS:
        return True
    if (kind is tuple or kind is frozenset) and depth > 0:
        for item in value:
            if type(item) not in _ATOMS and not _immutable(item, depth - 1):
                return False
        return True
    return False


@overload
def default_codec_for(value_type: type[bool]) -> Codec[bool]: ...
@overload
def default_codec_for(value_type: type[int]) -> Codec[int]: ...
@overload
def default_codec_for(value_type: type[float]) -> Codec[float]: ...
@overload
def default_codec_for(value_type: type[str]) -> Codec[str]: ...
@overload
def default_codec_for(value_type: type[bytes]) -> Codec[bytes]: ...
@overload
def default_codec_for(value_type: type[T]) -> Codec[T]: ...
def default_codec_for(value_type: type[Any]) -> Codec[Any]:
    """The default codec for a Python type: ordered codecs for bool, int (and subclasses),
    float, str and bytes; JSON for list and dict; pickle for anything else.

    >>> default_codec_for(int), default_codec_for(dict), default_codec_for(object)
    (IntCodec(), JsonCodec(), PickleCodec())
    """
    if isinstance(value_type, type):
        if issubclass(value_type, bool):
            return BoolCodec()
        if issubclass(value_type, int):
            return IntCodec()
        if value_type is float:
            return FloatCodec()
        if value_type is str:
            return StringCodec()
        if value_type is bytes:
            return BytesCodec()
        if value_type is list or value_type is dict:
            return JsonCodec()
    return PickleCodec()
