"""The codecs behind ``TypeInformation.codec()``: checked variants of the fs_api_advanced codecs
and structured codecs for rows, tuples, lists and maps.

Every codec here is picklable and compares equal to another built from the same description."""

from __future__ import annotations

import datetime
import struct
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn, TypeVar

from fs_api_advanced import Codec, IntCodec, PickleCodec, StringCodec

from ._row import Row, RowKind, _create_row
from ._time import Instant

T = TypeVar("T")
K = TypeVar("K")
V = TypeVar("V")

_SIGN64 = 1 << 63


def _type_error(type_name: str, expected: str, value: object) -> TypeError:
    return TypeError(f"{type_name} expects {expected}, got {type(value).__name__}: {value!r}")


class RangedIntCodec(IntCodec):
    """An ``IntCodec`` (same ordered 8-byte encoding) that refuses values outside a Java integer
    type's range, as Flink would.

    >>> RangedIntCodec("INT", 32).encode(2**31)
    Traceback (most recent call last):
    ...
    ValueError: INT value out of range [-2147483648, 2147483647]: 2147483648
    """

    def __init__(self, type_name: str, bits: int) -> None:
        self.type_name = type_name
        self.bits = bits
        self._lo = -(1 << (bits - 1))
        self._hi = (1 << (bits - 1)) - 1

    def encode(self, value: int) -> bytes:
        if not isinstance(value, int):
            raise _type_error(self.type_name, "an int", value)
        if not self._lo <= value <= self._hi:
            raise ValueError(f"{self.type_name} value out of range [{self._lo}, {self._hi}]: {value}")
        return (value + _SIGN64).to_bytes(8, "big")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RangedIntCodec) and type(other) is type(self) and other.bits == self.bits

    def __hash__(self) -> int:
        return hash((type(self), self.bits))

    def __repr__(self) -> str:
        return f"RangedIntCodec({self.type_name!r}, {self.bits})"

    kept_as_is = IntCodec.kept_as_is  # checks ``self._lo <= value <= self._hi``


#: The ``encode`` methods that write an int in range as its 8-byte ordered form (``_PAIR``).
_INT_ENCODES = (IntCodec.encode, RangedIntCodec.encode)


class CharCodec(StringCodec):
    """A ``StringCodec`` for Java ``char``: exactly one character. A lone surrogate
    (``'\\ud800'``) is one too, as a Java ``char`` is any UTF-16 code unit: it is stored as
    UTF-8 would store its code point (``surrogatepass``), which keeps the code points' order."""

    def encode(self, value: str) -> bytes:
        if not isinstance(value, str) or len(value) != 1:
            raise _type_error("CHAR", "a str of length 1", value)
        return value.encode("utf-8", "surrogatepass")

    def decode(self, data: bytes) -> str:
        return bytes(data).decode("utf-8", "surrogatepass")


class CheckedPickleCodec(PickleCodec):
    """A ``PickleCodec`` that only accepts instances of the declared type."""

    def __init__(self, type_name: str, expected: tuple[type, ...], excluded: tuple[type, ...] = ()) -> None:
        self.type_name = type_name
        self.expected = expected
        self.excluded = excluded

    def encode(self, value: Any) -> bytes:
        if not isinstance(value, self.expected) or isinstance(value, self.excluded):
            raise _type_error(self.type_name, " or ".join(t.__name__ for t in self.expected), value)
        return super().encode(value)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, CheckedPickleCodec)
            and type(other) is type(self)
            and other.type_name == self.type_name
            and other.expected == self.expected
        )

    def __hash__(self) -> int:
        return hash((type(self), self.type_name))

    def __repr__(self) -> str:
        return f"CheckedPickleCodec({self.type_name!r})"


class DateCodec(Codec[datetime.date]):
    """Dates (not datetimes) as their 4-byte big-endian proleptic ordinal (ordered)."""

    supports_ordered_keys = True

    def encode(self, value: datetime.date) -> bytes:
        if not isinstance(value, datetime.date) or isinstance(value, datetime.datetime):
            raise _type_error("SQL_DATE", "a datetime.date", value)
        return value.toordinal().to_bytes(4, "big")

    def decode(self, data: bytes) -> datetime.date:
        if len(data) != 4:
            raise ValueError(f"DateCodec expects 4 bytes, got {len(data)}")
        try:
            return datetime.date.fromordinal(int.from_bytes(data, "big"))
        except ValueError as exc:
            raise ValueError(f"DateCodec cannot decode {bytes(data)!r}: {exc}") from exc

    def encoded_size(self) -> int:
        return 4


class InstantCodec(Codec[Instant]):
    """Instants as 8 bytes of seconds (sign bit flipped) and 4 bytes of nanoseconds (ordered)."""

    supports_ordered_keys = True

    def encode(self, value: Instant) -> bytes:
        if not isinstance(value, Instant):
            raise _type_error("INSTANT", "an Instant", value)
        seconds, nanos = value._key()
        if not -_SIGN64 <= seconds < _SIGN64:
            raise ValueError(f"INSTANT value out of range: {value!r}")
        return (seconds + _SIGN64).to_bytes(8, "big") + nanos.to_bytes(4, "big")

    def decode(self, data: bytes) -> Instant:
        if len(data) != 12:
            raise ValueError(f"InstantCodec expects 12 bytes, got {len(data)}")
        return Instant(int.from_bytes(data[:8], "big") - _SIGN64, int.from_bytes(data[8:], "big"))

    def encoded_size(self) -> int:
        return 12


# Structured codecs. ---------------------------------------------------------------------------
# A value is a sequence of parts; a part is [presence byte, if nullable] [varint length, unless
# the part's codec has a fixed size] [the part's encoding]. Not ordered.


def _write_varint(out: bytearray, n: int) -> None:
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)


class _Reader:
    __slots__ = ("data", "pos", "what")

    def __init__(self, data: bytes, what: str) -> None:
        self.data = bytes(data)
        self.pos = 0
        self.what = what

    def fail(self, reason: str) -> NoReturn:
        raise ValueError(f"{self.what} cannot decode {len(self.data)} bytes: {reason} at byte {self.pos}")

    def byte(self) -> int:
        if self.pos >= len(self.data):
            self.fail("unexpected end")
        b = self.data[self.pos]
        self.pos += 1
        return b

    def varint(self) -> int:
        n = shift = 0
        while True:
            b = self.byte()
            n |= (b & 0x7F) << shift
            if b < 0x80:
                return n
            shift += 7

    def take(self, size: int) -> bytes:
        end = self.pos + size
        if end > len(self.data):
            self.fail("unexpected end")
        chunk = self.data[self.pos : end]
        self.pos = end
        return chunk

    def done(self) -> None:
        if self.pos != len(self.data):
            self.fail("trailing bytes")


def _write_part(
    out: bytearray, codec: Codec[Any], size: int, value: Any, nullable: bool, where: str, *args: Any
) -> None:
    """Append the part ``value`` with ``codec`` (of ``size`` bytes; -1: varying) to ``out``. A
    value that does not fit names the part: ``where.format(*args)``, made only then (a state
    value's fields are written by the ten thousand at a snapshot)."""
    if value is None:
        if not nullable:
            raise TypeError(f"{where.format(*args)} does not support None")
        out.append(0)
        return
    try:
        data = codec.encode(value)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"{where.format(*args)}: {exc}") from exc
    if nullable:
        out.append(1)
    if size < 0:
        _write_varint(out, len(data))
    out += data


def _read_part(reader: _Reader, codec: Codec[Any], size: int, nullable: bool) -> Any:
    if nullable:
        flag = reader.byte()
        if flag == 0:
            return None
        if flag != 1:
            reader.fail(f"bad presence byte {flag}")
    return codec.decode(reader.take(reader.varint() if size < 0 else size))


def _values_of(value: Any, names: Sequence[str], label: str) -> tuple[list[Any], RowKind]:
    """The field values of ``value`` for a row type with ``names``, as PyFlink's RowTypeInfo takes
    them: named rows, dicts and objects by name; positional rows, tuples and lists by position."""
    if isinstance(value, Row):
        fields = value._fields
        if fields is None:
            return list(value._values), value._row_kind
        out = []
        for n in names:
            try:
                out.append(value._values[fields.index(n)])
            except ValueError:
                raise ValueError(f"{label} needs field {n!r}, which {value!r} does not have") from None
        return out, value._row_kind
    if isinstance(value, (tuple, list)):
        return list(value), RowKind.INSERT
    if isinstance(value, Mapping):
        return [value.get(n) for n in names], RowKind.INSERT
    if hasattr(value, "__dict__") and not isinstance(value, type):
        attrs = vars(value)
        return [attrs.get(n) for n in names], RowKind.INSERT
    raise TypeError(f"{label} expects a Row, tuple, list or dict, got {type(value).__name__}: {value!r}")


class _PartsCodec(Codec[T]):
    """Shared equality, hashing and part layout for the structured codecs."""

    _params: tuple[Any, ...]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _PartsCodec) and type(other) is type(self) and other._params == self._params

    def __hash__(self) -> int:
        return hash((type(self), self._params))

    def __repr__(self) -> str:
        return f"{type(self).__name__}{self._params!r}"


class RowCodec(_PartsCodec[Row]):
    """Rows (with their RowKind) of a ``RowTypeInfo``: named Rows, positional Rows, tuples, lists
    and dicts are accepted; decoding gives a Row named by the type's field names."""

    def __init__(self, names: Sequence[str], codecs: Sequence[Codec[Any]], label: str) -> None:
        self.names = tuple(names)
        self.codecs = tuple(codecs)
        self.sizes = tuple(c.encoded_size() for c in self.codecs)
        self.label = label
        self._params = (self.names, self.codecs)

    def encode(self, value: Row) -> bytes:
        values, kind = _values_of(value, self.names, self.label)
        if len(values) != len(self.codecs):
            raise ValueError(f"{self.label} expects {len(self.codecs)} fields, got {len(values)}: {value!r}")
        out = bytearray((kind.value,))
        for name, codec, size, v in zip(self.names, self.codecs, self.sizes, values, strict=True):
            _write_part(out, codec, size, v, True, "field {!r} of {}", name, self.label)
        return bytes(out)

    def decode(self, data: bytes) -> Row:
        reader = _Reader(data, "RowCodec")
        kind = reader.byte()
        if kind > 3:
            reader.fail(f"bad row kind {kind}")
        values = [_read_part(reader, c, s, True) for c, s in zip(self.codecs, self.sizes, strict=True)]
        reader.done()
        return _create_row(self.names, values, RowKind(kind))


#: Two present integers as ``_write_part`` writes them with an ``IntCodec`` (or a ranged one):
#: each a presence byte and ``IntCodec``'s 8 bytes (the value + 2**63, big-endian).
_PAIR = struct.Struct(">BQBQ")


class TupleCodec(_PartsCodec[tuple[Any, ...]]):
    """Tuples of a ``TupleTypeInfo`` (tuples, lists and Rows accepted; decoding gives a tuple)."""

    def __init__(self, codecs: Sequence[Codec[Any]], label: str) -> None:
        self.codecs = tuple(codecs)
        self.sizes = tuple(c.encoded_size() for c in self.codecs)
        self.label = label
        self._params = (self.codecs,)
        # For ``kept_as_is``: each field's check, and the range of integer fields.
        self._width = len(self.codecs)
        self._kept = tuple(c.kept_as_is for c in self.codecs)
        self._ints = tuple(
            (c._lo, c._hi) if isinstance(c, IntCodec) and type(c).kept_as_is is IntCodec.kept_as_is else None
            for c in self.codecs
        )
        self._int_range = self._ints[0] if self._ints and len(set(self._ints)) == 1 else None
        #: The range of a pair of integers of one range (a count and a sum ...): the hot case.
        self._pair = self._int_range if self._width == 2 else None
        #: ``_pair``, when both fields are written as ``IntCodec`` writes them (``encode``'s hot
        #: case: a state value of two integers, written by the ten thousand at a snapshot).
        self._pair_bytes = self._pair if all(type(c).encode in _INT_ENCODES for c in self.codecs) else None
        #: Whether ``decode`` may read ``_PAIR``'s 18 bytes in one ``unpack`` (both fields read
        #: as ``IntCodec`` reads them: each key's value of a key group restored from its snapshot).
        self._pair_read = self._pair_bytes is not None and all(
            type(c).decode is IntCodec.decode for c in self.codecs
        )

    def encode(self, value: tuple[Any, ...]) -> bytes:
        """``value``'s fields, each present (or not) and in its codec's encoding.

        >>> codec = TupleCodec([IntCodec(), IntCodec()], "TupleTypeInfo(Long, Long)")
        >>> codec.encode((1, -1)).hex()
        '018000000000000001017fffffffffffffff'
        >>> codec.encode((1, None)) == codec.encode((1, -1))[:9] + bytes([0])
        True
        """
        pair = self._pair_bytes
        if pair is not None and value.__class__ is tuple and len(value) == 2:  # ``_pair_bytes``
            a, b = value
            lo, hi = pair
            if a.__class__ is int and b.__class__ is int and lo <= a <= hi and lo <= b <= hi:
                return _PAIR.pack(1, a + _SIGN64, 1, b + _SIGN64)
        if not isinstance(value, (tuple, list, Row)):
            raise _type_error(self.label, "a tuple, list or Row", value)
        if len(value) != len(self.codecs):
            raise ValueError(f"{self.label} expects {len(self.codecs)} fields, got {len(value)}: {value!r}")
        out = bytearray()
        for i, (codec, size, v) in enumerate(zip(self.codecs, self.sizes, value, strict=True)):
            _write_part(out, codec, size, v, True, "field {} of {}", i, self.label)
        return bytes(out)

    def decode(self, data: bytes) -> tuple[Any, ...]:
        """The tuple ``encode`` wrote as ``data``.

        >>> codec = TupleCodec([IntCodec(), IntCodec()], "TupleTypeInfo(Long, Long)")
        >>> codec.decode(codec.encode((1, -1))), codec.decode(codec.encode((None, 2)))
        ((1, -1), (None, 2))
        """
        if self._pair_read and len(data) == 18 and data[0] == 1 and data[9] == 1:  # two present ints
            _, a, _, b = _PAIR.unpack(data)
            return a - _SIGN64, b - _SIGN64
        reader = _Reader(data, "TupleCodec")
        values = tuple(_read_part(reader, c, s, True) for c, s in zip(self.codecs, self.sizes, strict=True))
        reader.done()
        return values

    def kept_as_is(self, value: tuple[Any, ...]) -> bool:
        pair = self._pair
        if pair is not None:  # a pair of integers: unrolled, no loop, no call
            if value.__class__ is not tuple or len(value) != 2:
                return False
            a, b = value
            lo, hi = pair
            return ((a.__class__ is int and lo <= a <= hi) or a is None) and (
                (b.__class__ is int and lo <= b <= hi) or b is None
            )
        if type(value) is not tuple or len(value) != self._width:
            return False
        if self._int_range is not None:  # every field an integer of one range (the common case)
            lo, hi = self._int_range
            for v in value:
                if (type(v) is not int or not lo <= v <= hi) and v is not None:
                    return False
            return True
        for ints, kept, v in zip(self._ints, self._kept, value):  # noqa: B905 - lengths checked
            if v is None:
                continue
            if ints is not None:  # an integer field, checked here (the common case)
                if type(v) is not int or not ints[0] <= v <= ints[1]:
                    return False
            elif not kept(v):
                return False
        return True


class ListCodec(_PartsCodec[list[T]]):
    """Lists (or tuples) of elements of one codec; decoding gives a list. ``nullable`` says
    whether elements may be None (not for primitive arrays)."""

    def __init__(self, elem: Codec[T], nullable: bool, label: str) -> None:
        self.elem = elem
        self.size = elem.encoded_size()
        self.nullable = nullable
        self.label = label
        self._params = (elem, nullable)

    def encode(self, value: list[T]) -> bytes:
        if not isinstance(value, (list, tuple)):
            raise _type_error(self.label, "a list", value)
        out = bytearray()
        _write_varint(out, len(value))
        elem, size, nullable = self.elem, self.size, self.nullable
        for i, v in enumerate(value):
            _write_part(out, elem, size, v, nullable, "element {} of {}", i, self.label)
        return bytes(out)

    def decode(self, data: bytes) -> list[T]:
        reader = _Reader(data, "ListCodec")
        count = reader.varint()
        elem, size, nullable = self.elem, self.size, self.nullable
        values = [_read_part(reader, elem, size, nullable) for _ in range(count)]
        reader.done()
        return values


class MapCodec(_PartsCodec[dict[K, V]]):
    """Dicts with non-None keys of one codec and nullable values of another."""

    def __init__(self, key: Codec[K], value: Codec[V], label: str) -> None:
        self.key = key
        self.value = value
        self.sizes = (key.encoded_size(), value.encoded_size())
        self.label = label
        self._params = (key, value)

    def encode(self, value: dict[K, V]) -> bytes:
        if not isinstance(value, Mapping):
            raise _type_error(self.label, "a dict", value)
        out = bytearray()
        _write_varint(out, len(value))
        ksize, vsize = self.sizes
        for k, v in value.items():
            _write_part(out, self.key, ksize, k, False, "key of {}", self.label)
            _write_part(out, self.value, vsize, v, True, "value of key {!r} of {}", k, self.label)
        return bytes(out)

    def decode(self, data: bytes) -> dict[K, V]:
        reader = _Reader(data, "MapCodec")
        count = reader.varint()
        ksize, vsize = self.sizes
        out: dict[K, V] = {}
        for _ in range(count):
            k = _read_part(reader, self.key, ksize, False)
            out[k] = _read_part(reader, self.value, vsize, True)
        reader.done()
        return out
