"""Keyed list state: elements appended with ``merge``, TTL per element."""

from __future__ import annotations

import struct
from collections.abc import Iterable
from typing import Any, Generic, TypeVar, overload

from fs_api import KvStore

from ._base import TS_SIZE, HasStores, KeyedFactoryBase, Ttl, as_bytes, require
from ._codecs import Codec, PickleCodec, default_codec_for
from ._ttl import Clock, TtlConfig

V = TypeVar("V")
_LEN = struct.Struct(">I")
_TS = struct.Struct(">q")


class ListFraming:
    """How elements are laid out in one blob: fixed-size encodings back to back, or each
    preceded by its ``>I`` length; with TTL each also by its 8-byte last-access time."""

    __slots__ = ("fixed", "ttl")

    def __init__(self, codec: Codec[Any], ttl: Ttl | None, *, allow_fixed: bool) -> None:
        size = codec.encoded_size()
        self.fixed = size if allow_fixed and size > 0 and ttl is None else 0
        self.ttl = ttl

    def frame(self, payload: bytes, now: int) -> bytes:
        if self.fixed:
            if len(payload) != self.fixed:
                raise ValueError(f"codec promised {self.fixed}-byte encodings, produced {len(payload)}")
            return payload
        head = _LEN.pack(len(payload))
        return (_TS.pack(now) + head + payload) if self.ttl is not None else head + payload

    def unframe(self, blob: bytes) -> list[tuple[int, bytes]]:
        """``(timestamp, payload)`` pairs (timestamp 0 without TTL)."""
        if self.fixed:
            n = self.fixed
            if len(blob) % n:
                raise ValueError(f"list state blob of {len(blob)} bytes is not a multiple of {n}")
            return [(0, blob[i : i + n]) for i in range(0, len(blob), n)]
        out: list[tuple[int, bytes]] = []
        pos, end, ttl = 0, len(blob), self.ttl is not None
        head = (TS_SIZE if ttl else 0) + 4
        while pos < end:
            if pos + head > end:
                raise ValueError(f"list state blob truncated: {end - pos} bytes left at offset {pos}")
            ts = 0
            if ttl:
                (ts,) = _TS.unpack_from(blob, pos)
                pos += TS_SIZE
            (size,) = _LEN.unpack_from(blob, pos)
            pos += 4
            if pos + size > end:
                raise ValueError(f"list state blob truncated: element of {size} bytes at offset {pos}")
            out.append((ts, blob[pos : pos + size]))
            pos += size
        return out


class KeyedListStateFactory(KeyedFactoryBase, Generic[V]):
    """Makes KeyedListState views of one store and key group.

    >>> from fs_api.testing import LocalContext
    >>> factory = KeyedListStateFactory.from_context_auto_codec(LocalContext(), "s", b"", str)
    >>> items = factory.new_keyed_list(b"k", b"seen")
    >>> items.add("a"); items.add_all(["b", "c"])
    >>> items.get()
    ['a', 'b', 'c']
    """

    _kind = "keyed list"

    def __init__(
        self,
        store: KvStore,
        key_group: bytes,
        value_codec: Codec[V],
        *,
        ttl: TtlConfig | None = None,
        clock: Clock | None = None,
        _fixed_framing: bool = True,
    ) -> None:
        super().__init__(store, key_group, ttl, clock)
        require("keyed list state factory value codec", value_codec)
        self.value_codec = value_codec
        self.framing = ListFraming(value_codec, self._ttl, allow_fixed=_fixed_framing)

    @classmethod
    def from_context(
        cls, ctx: HasStores, store_name: str, key_group: bytes, value_codec: Codec[V]
    ) -> KeyedListStateFactory[V]:
        return cls(ctx.getOrCreateKVStore(store_name), key_group, value_codec)

    @overload
    @classmethod
    def from_context_auto_codec(
        cls, ctx: HasStores, store_name: str, key_group: bytes, value_type: type[V]
    ) -> KeyedListStateFactory[V]: ...
    @overload
    @classmethod
    def from_context_auto_codec(
        cls, ctx: HasStores, store_name: str, key_group: bytes, value_type: None = None
    ) -> KeyedListStateFactory[Any]: ...
    @classmethod
    def from_context_auto_codec(
        cls, ctx: HasStores, store_name: str, key_group: bytes, value_type: type[Any] | None = None
    ) -> KeyedListStateFactory[Any]:
        codec = default_codec_for(value_type) if value_type is not None else PickleCodec()
        return cls(ctx.getOrCreateKVStore(store_name), key_group, codec)

    def new_keyed_list(self, key: bytes, namespace: bytes | str) -> KeyedListState[V]:
        return KeyedListState(self, key, namespace)

    def purge(self, primary_key: bytes, namespace: bytes, now: int) -> bool:
        ck = self.complex_key(primary_key, namespace)
        blob = self._store.get(ck)
        if blob is None:
            return True
        assert self._ttl is not None
        ttl = self._ttl
        entries = self.framing.unframe(blob)
        live = [(ts, p) for ts, p in entries if not ttl.expired(ts, now)]
        if not live:
            self._store.delete(ck)
            return True
        if len(live) != len(entries):
            self._store.put(ck, b"".join(_TS.pack(ts) + _LEN.pack(len(p)) + p for ts, p in live))
        return False


class KeyedListState(Generic[V]):
    """A list per (primary key, namespace): ``add``, ``add_all``, ``get() -> list``, ``update``,
    ``clear``. With TTL every element expires on its own."""

    __slots__ = ("_ck", "_codec", "_factory", "_framing", "_ns", "_pk", "_store")

    def __init__(self, factory: KeyedListStateFactory[V], key: bytes, namespace: bytes | str) -> None:
        require("keyed list state factory", factory)
        self._factory = factory
        self._store = factory.store
        self._pk = as_bytes("keyed list state key", key)
        self._ns = as_bytes("keyed list state namespace", namespace)
        self._ck = factory.complex_key(self._pk, self._ns)
        self._codec = factory.value_codec
        self._framing = factory.framing

    def _now(self) -> int:
        ttl = self._factory._ttl
        return 0 if ttl is None else ttl.clock()

    def _frames(self, values: Iterable[V]) -> bytes:
        now, encode, frame = self._now(), self._codec.encode, self._framing.frame
        return b"".join(frame(encode(v), now) for v in values)

    def _wrote(self) -> None:
        if self._factory._ttl is not None:
            self._factory.note_written(self._pk, self._ns)

    def add(self, value: V) -> None:
        """Append one element."""
        self._store.merge(self._ck, self._framing.frame(self._codec.encode(value), self._now()))
        self._wrote()

    def add_all(self, values: Iterable[V]) -> None:
        """Append every element of ``values``."""
        blob = self._frames(values)
        if blob:
            self._store.merge(self._ck, blob)
            self._wrote()

    def update(self, values: Iterable[V]) -> None:
        """Replace the list with ``values`` (an empty one clears it)."""
        blob = self._frames(values)
        if blob:
            self._store.put(self._ck, blob)
            self._wrote()
        else:
            self._store.delete(self._ck)

    def get(self) -> list[V]:
        """The elements in insertion order (empty when none). With TTL expired elements are
        removed, and returned this once only under ReturnExpiredIfNotCleanedUp."""
        blob = self._store.get(self._ck)
        if blob is None:
            return []
        decode = self._codec.decode
        ttl = self._factory._ttl
        entries = self._framing.unframe(blob)
        if ttl is None:
            return [decode(p) for _, p in entries]
        now = ttl.clock()
        live = [(ts, p) for ts, p in entries if not ttl.expired(ts, now)]
        shown = entries if ttl.return_expired else live
        if ttl.refresh_on_read:
            live = [(now, p) for _, p in live]
        if not live:
            self._store.delete(self._ck)
        elif len(live) != len(entries) or ttl.refresh_on_read:
            self._store.put(self._ck, b"".join(_TS.pack(ts) + _LEN.pack(len(p)) + p for ts, p in live))
        self._factory.cleanup_incrementally()
        return [decode(p) for _, p in shown]

    def clear(self) -> None:
        """Remove every element."""
        self._store.delete(self._ck)
