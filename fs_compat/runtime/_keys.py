"""Keys: their bytes, their key group and the subtask that owns them."""

from __future__ import annotations

import functools
import operator
import sys
from array import array
from collections.abc import Callable, Sequence
from typing import Any

from fs_api_advanced import BoolCodec, Codec, IntCodec, PickleCodec, StringCodec

#: Flink's default maximum parallelism: the number of key groups.
MAX_PARALLELISM = 128

_PICKLE = PickleCodec()


#: Key types whose equal values need not pickle to equal bytes (lists and tuples do: PyFlink
#: keys by them too).
_NOT_CANONICAL = frozenset({dict, set, frozenset})

#: How many keys ``KeyEncoder.locate`` remembers before it starts over.
MEMO_SIZE = 1 << 17


class KeyEncoder:
    """Turns stream keys into bytes (with the key type's codec, else pickle) and key groups."""

    __slots__ = ("_codec", "_groups", "_hash", "_memo", "max_parallelism")

    def __init__(self, codec: Codec[Any] | None = None, max_parallelism: int = MAX_PARALLELISM) -> None:
        self._codec: Codec[Any] = codec if codec is not None else _PICKLE
        self._hash = _java_hash(self._codec)
        self.max_parallelism = max_parallelism
        #: ``locate``'s memo, and the key group of the bytes of each key in it (``key_group`` of
        #: a state's cached key, at a flush, is a lookup); one per process for a codec of no
        #: settings (``_memos``).
        self._memo, self._groups = _memos(self._codec, max_parallelism)

    def locate(self, key: Any) -> tuple[bytes, int]:
        """``(key bytes, key group)`` of ``key``. Remembered for ``int`` and ``str`` keys and
        tuples of them (exactly those types, whose equal values encode alike: ``1``, ``1.0`` and
        ``True`` are equal but encode apart), so a key seen before costs a dict lookup and its
        bytes are the same object each time. A dict or set key (whose encoding is not
        canonical), or one the codec cannot encode, is a TypeError."""
        kind = type(key)
        if kind is int or kind is str or (kind is tuple and _plain_parts(key)):
            found = self._memo.get(key)
            if found is not None:
                return found
            kb = self.encode(key)
            memo, groups = self._memo, self._groups
            if len(memo) >= MEMO_SIZE:
                memo.clear()
                groups.clear()
            found = memo[key] = (kb, self.key_group(kb))
            groups[kb] = found[1]
            return found
        if kind in _NOT_CANONICAL:
            raise TypeError(
                f"the key {key!r} is a {kind.__name__}: equal {kind.__name__}s need not encode alike "
                "(their order depends on insertion or on the process's hash seed), so one key could "
                "get two states; use a tuple, e.g. tuple(sorted(...))"
            )
        kb = self.encode(key)
        return kb, self.key_group(kb)

    def remembered(self) -> Callable[[Any], tuple[bytes, int] | None]:
        """``locate``'s memo as a lookup, for a caller's per-record loop (it saves a call per
        record, ~75 ns): ``remembered()(key)`` is ``locate(key)`` for an ``int`` or ``str`` key
        located before, else None. Only for keys of exactly those types (the caller checks):
        ``True`` and ``1.0`` equal ``1`` but encode apart.

        >>> encoder = KeyEncoder()
        >>> located = encoder.locate("a")
        >>> encoder.remembered()("a") == located, encoder.remembered()(1.5)
        (True, None)
        """
        return self._memo.get

    def key_groups(self, keys: Sequence[Any]) -> list[int] | None:
        """The key group of each of ``keys`` (``locate``'s), or None when one of them is None or
        cannot be used as a key (the caller then reports it, naming the record)."""
        locate, remembered = self.locate, self.remembered()
        groups: list[int] = []
        add = groups.append
        for key in keys:
            kind = key.__class__  # ``locate``, its memo inlined for int and str keys
            found = remembered(key) if kind is int or kind is str else None
            if found is not None:
                add(found[1])
                continue
            if key is None:
                return None
            try:
                add(locate(key)[1])
            except TypeError:
                return None
        return groups

    def encode(self, key: Any) -> bytes:
        try:
            return self._codec.encode(key)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"cannot encode key {key!r} with {self._codec!r}: {exc}") from exc

    def decode(self, data: bytes) -> Any:
        return self._codec.decode(data)

    def key_group(self, key_bytes: bytes) -> int:
        """The key group in ``[0, max_parallelism)`` of the key encoded as ``key_bytes``, as
        Flink assigns it (``flink_key_group``): from the Java ``hashCode`` of the key PyFlink
        keys by, the pickled key's bytes or, for a key type of ``STRING``, ``BOOLEAN``, ``BYTE``,
        ``SHORT``, ``INT`` or ``LONG``, the Java value's. The same on every machine and run."""
        group = self._groups.get(key_bytes)
        if group is not None:
            return group
        return flink_key_group(self._hash(key_bytes), self.max_parallelism)

    def __getstate__(self) -> tuple[Codec[Any], int]:
        return self._codec, self.max_parallelism

    def __setstate__(self, state: tuple[Codec[Any], int]) -> None:
        self._codec, self.max_parallelism = state
        self._hash = _java_hash(self._codec)
        self._memo, self._groups = _memos(self._codec, self.max_parallelism)


#: Codec types whose instances have no settings: every instance encodes a key to the same bytes.
_UNSET_CODECS = (PickleCodec, StringCodec, BoolCodec, IntCodec)

_shared_memos: dict[tuple[type, int], tuple[dict[Any, tuple[bytes, int]], dict[bytes, int]]] = {}


def _memos(codec: Codec[Any], max_parallelism: int) -> tuple[dict[Any, tuple[bytes, int]], dict[bytes, int]]:
    """``KeyEncoder``'s two memos: shared by every encoder of the process with a codec of exactly
    one of the ``_UNSET_CODECS`` types and the same ``max_parallelism`` (a key's bytes and group
    depend on nothing else), so that a Spark worker's tasks, each with encoders of its own, find
    the keys earlier tasks located (a new key costs ~2-3 us: its Java hash and Flink's murmur in
    Python); private for any other codec."""
    kind = type(codec)
    if kind in _UNSET_CODECS:
        return _shared_memos.setdefault((kind, max_parallelism), ({}, {}))
    return {}, {}


def _plain_parts(key: tuple[Any, ...]) -> bool:
    """Whether every part of ``key`` is exactly an ``int`` or a ``str`` (``locate`` remembers it)."""
    for part in key:
        kind = type(part)
        if kind is not int and kind is not str:
            return False
    return True


_MASK = 0xFFFFFFFF

#: Lengths up to which ``_java_polynomial`` keeps the powers of 31 it needs (longer: a loop).
_POWERS_UP_TO = 256


@functools.lru_cache(maxsize=_POWERS_UP_TO)
def _powers(n: int) -> tuple[tuple[int, ...], int]:
    """``31**(n-1-i)`` for each position ``i`` of ``n`` bytes, and ``31**n`` (mod 2**32)."""
    return tuple(pow(31, n - 1 - i, 1 << 32) for i in range(n)), pow(31, n, 1 << 32)


def _java_polynomial(values: array[int], h: int) -> int:
    """Java's ``h = 31 * h + v`` over ``values`` from ``h``, as an unsigned 32-bit int: the
    ``hashCode`` of ``Arrays`` (``h`` = 1) and of ``String`` (``h`` = 0)."""
    if len(values) > _POWERS_UP_TO:
        for v in values:
            h = (31 * h + v) & _MASK
        return h
    powers, top = _powers(len(values))
    total: int = sum(map(operator.mul, values, powers))
    return (h * top + total) & _MASK


def java_bytes_hash(data: bytes) -> int:
    """Java's ``Arrays.hashCode(byte[])`` of ``data`` (its bytes signed, as Java's are), as an
    unsigned 32-bit int.

    >>> java_bytes_hash(b""), java_bytes_hash(b"a"), java_bytes_hash(bytes([255]))
    (1, 128, 30)
    """
    return _java_polynomial(array("b", data), 1)


def murmur3_32(value: int, seed: int = 0, size: int = 4) -> int:
    """MurmurHash3 (x86, 32-bit) of the ``size``-byte (4 or 8) int ``value``, its low word first,
    with ``seed``, unsigned: Flink's ``MathUtils.murmurHash`` (seed 0) and Spark's ``hash`` of an
    int (seed 42) or bigint column (seed 42, size 8) are this.

    >>> murmur3_32(0), murmur3_32(1), murmur3_32(1, 42), murmur3_32(0, 42, 8)
    (593689054, 4226891818, 3735386339, 2624043101)
    """
    h1 = seed & _MASK
    for shift in range(0, 8 * size, 32):
        k1 = (value >> shift & _MASK) * 0xCC9E2D51 & _MASK
        k1 = ((k1 << 15) | (k1 >> 17)) & _MASK
        k1 = k1 * 0x1B873593 & _MASK
        h1 ^= k1
        h1 = ((h1 << 13) | (h1 >> 19)) & _MASK
        h1 = (h1 * 5 + 0xE6546B64) & _MASK
    h1 ^= size  # the length in bytes
    h1 ^= h1 >> 16
    h1 = h1 * 0x85EBCA6B & _MASK
    h1 ^= h1 >> 13
    h1 = h1 * 0xC2B2AE35 & _MASK
    return h1 ^ h1 >> 16


def flink_murmur(code: int) -> int:
    """Flink's ``MathUtils.murmurHash`` of the 32-bit ``code``: ``murmur3_32`` made
    non-negative as Java's ``Math.abs`` would (``Integer.MIN_VALUE`` gives 0), as
    ``KeyGroupRangeAssignment`` takes it."""
    h = murmur3_32(code)
    return h if h < 0x80000000 else ((1 << 32) - h) & 0x7FFFFFFF


def java_string_hash(value: str) -> int:
    """Java's ``String.hashCode`` of ``value`` (over its UTF-16 code units), unsigned 32-bit.

    >>> java_string_hash(""), java_string_hash("a"), java_string_hash("ab")
    (0, 97, 3105)
    """
    units = array("H", value.encode("utf-16-be", "surrogatepass"))
    if sys.byteorder == "little":  # the array read the big-endian units byte-swapped
        units.byteswap()
    return _java_polynomial(units, 0)


def _java_hash(codec: Codec[Any]) -> Callable[[bytes], int]:
    """The Java ``hashCode`` of a key from its bytes in ``codec``: of the pickled key for
    PyFlink's default key type (``Arrays.hashCode``), of the Java value for the key types whose
    value PyFlink hands the JVM (``STRING``: ``String``, ``BOOLEAN``: ``Boolean``, ``BYTE``,
    ``SHORT``, ``INT``: the value, ``LONG``: ``Long``); of the codec's bytes for other types."""
    decode = codec.decode
    if isinstance(codec, StringCodec):
        return lambda kb: java_string_hash(decode(kb))
    if isinstance(codec, BoolCodec):
        return lambda kb: 1231 if decode(kb) else 1237
    if isinstance(codec, IntCodec):
        if getattr(codec, "bits", 64) <= 32:  # BYTE, SHORT, INT (``common.RangedIntCodec``)
            return lambda kb: decode(kb) & _MASK
        return lambda kb: _java_long_hash(decode(kb))
    return java_bytes_hash


def _java_long_hash(value: int) -> int:
    """Java's ``Long.hashCode``: ``(int) (value ^ (value >>> 32))``, unsigned 32-bit."""
    bits = value & 0xFFFFFFFFFFFFFFFF
    return (bits ^ bits >> 32) & _MASK


def flink_key_group(key_hash: int, max_parallelism: int = MAX_PARALLELISM) -> int:
    """Flink's key group of a PyFlink key whose Java ``hashCode`` is ``key_hash`` (unsigned
    32-bit; ``KeyEncoder`` says which). The JVM keys by a ``Row`` holding the key, whose
    ``hashCode`` is the key's + 62, and ``KeyGroupRangeAssignment.assignToKeyGroup`` takes
    ``murmurHash`` of that mod ``max_parallelism``. With ``subtask_of`` it puts each key on the
    parallel instance PyFlink 2.3 puts it on (checked on 2.3.0 for str, int and tuple keys without
    a key type, and ``STRING``, ``INT`` and ``LONG`` keys, at parallelism 2 and 4).

    >>> import pickle
    >>> hashes = [java_bytes_hash(pickle.dumps(k, protocol=5)) for k in ("Alice", "key1")]
    >>> [subtask_of(flink_key_group(h), 4) for h in hashes]
    [1, 3]
    """
    return flink_murmur((key_hash + 62) & _MASK) % max_parallelism


def subtask_of(key_group: int, parallelism: int, max_parallelism: int = MAX_PARALLELISM) -> int:
    """Which of ``parallelism`` subtasks owns ``key_group`` (Flink's range assignment)."""
    return key_group * parallelism // max_parallelism


def key_group_bytes(key_group: int) -> bytes:
    return key_group.to_bytes(2, "big")
