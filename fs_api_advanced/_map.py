"""Keyed map state: one store entry per map key, scanned in key order; TTL per entry."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Generic, TypeVar, overload

from fs_api import KvError, KvStore

from ._base import HasStores, KeyedFactoryBase, as_bytes, require
from ._codecs import BytesCodec, Codec, PickleCodec, default_codec_for
from ._ttl import Clock, TtlConfig

MK = TypeVar("MK")
MV = TypeVar("MV")


def ensure_ordered_key_codec(codec: Codec[Any], what: str) -> None:
    """Raise KvError unless ``codec`` keeps value order in byte order (range scans need it)."""
    if not getattr(codec, "supports_ordered_keys", False):
        raise KvError(
            f"{what} key codec must support ordered key encoding for range scans; "
            f"{type(codec).__name__} does not "
            "(use IntCodec, FloatCodec, BoolCodec, StringCodec or BytesCodec)"
        )


class KeyedMapStateFactory(KeyedFactoryBase, Generic[MK, MV]):
    """Makes KeyedMapState views; the map key codec must be ordered.

    >>> from fs_api.testing import LocalContext
    >>> f = KeyedMapStateFactory.from_context_auto_codec(LocalContext(), "s", b"", str, int)
    >>> m = f.new_keyed_map(b"user-1", "clicks")
    >>> m.put("b", 2); m.put("a", 1)
    >>> list(m.all()), m.get("zz")
    ([('a', 1), ('b', 2)], (None, False))
    """

    _kind = "keyed map"

    def __init__(
        self,
        store: KvStore,
        key_group: bytes,
        map_key_codec: Codec[MK],
        map_value_codec: Codec[MV],
        *,
        ttl: TtlConfig | None = None,
        clock: Clock | None = None,
    ) -> None:
        super().__init__(store, key_group, ttl, clock)
        if map_key_codec is None or map_value_codec is None:
            raise KvError("keyed map state factory map_key_codec and map_value_codec must not be None")
        ensure_ordered_key_codec(map_key_codec, "map state")
        self.key_codec = map_key_codec
        self.value_codec = map_value_codec

    @classmethod
    def from_context(
        cls,
        ctx: HasStores,
        store_name: str,
        key_group: bytes,
        map_key_codec: Codec[MK],
        map_value_codec: Codec[MV],
    ) -> KeyedMapStateFactory[MK, MV]:
        return cls(ctx.getOrCreateKVStore(store_name), key_group, map_key_codec, map_value_codec)

    @overload
    @classmethod
    def from_context_auto_codec(
        cls,
        ctx: HasStores,
        store_name: str,
        key_group: bytes,
        map_key_type: type[MK],
        map_value_type: type[MV],
    ) -> KeyedMapStateFactory[MK, MV]: ...
    @overload
    @classmethod
    def from_context_auto_codec(
        cls,
        ctx: HasStores,
        store_name: str,
        key_group: bytes,
        map_key_type: None = None,
        map_value_type: None = None,
    ) -> KeyedMapStateFactory[bytes, Any]: ...
    @overload
    @classmethod
    def from_context_auto_codec(
        cls,
        ctx: HasStores,
        store_name: str,
        key_group: bytes,
        map_key_type: type[Any] | None = None,
        map_value_type: type[Any] | None = None,
    ) -> KeyedMapStateFactory[Any, Any]: ...
    @classmethod
    def from_context_auto_codec(
        cls,
        ctx: HasStores,
        store_name: str,
        key_group: bytes,
        map_key_type: type[Any] | None = None,
        map_value_type: type[Any] | None = None,
    ) -> KeyedMapStateFactory[Any, Any]:
        """Default codecs: bytes keys and pickled values when the types are not given."""
        kc: Codec[Any] = default_codec_for(map_key_type) if map_key_type is not None else BytesCodec()
        vc: Codec[Any] = default_codec_for(map_value_type) if map_value_type is not None else PickleCodec()
        return cls(ctx.getOrCreateKVStore(store_name), key_group, kc, vc)

    def new_keyed_map(self, primary_key: bytes, map_name: bytes | str) -> KeyedMapState[MK, MV]:
        """The map called ``map_name`` (the namespace) of ``primary_key``."""
        if not map_name:
            raise KvError("keyed map state map_name is required")
        return KeyedMapState(self, primary_key, map_name)

    def purge(self, primary_key: bytes, namespace: bytes, now: int) -> bool:
        assert self._ttl is not None
        ttl, left = self._ttl, 0
        with self._store.scan_complex(self._key_group, primary_key, namespace) as it:
            for user_key, raw in it:
                if ttl.expired(ttl.split(raw)[0], now):
                    self._store.delete(self.complex_key(primary_key, namespace, user_key))
                else:
                    left += 1
        return left == 0


class KeyedMapState(Generic[MK, MV]):
    """A map per (primary key, namespace): ``put``, ``get -> (value, found)``, ``delete``,
    ``contains``, ``clear``, ``all()`` in key order, ``keys``, ``values``, ``is_empty``."""

    __slots__ = ("_factory", "_kc", "_ns", "_pk", "_store", "_vc")

    def __init__(
        self, factory: KeyedMapStateFactory[MK, MV], primary_key: bytes, namespace: bytes | str
    ) -> None:
        require("keyed map state factory", factory)
        self._factory = factory
        self._store = factory.store
        self._pk = as_bytes("keyed map state primary_key", primary_key)
        self._ns = as_bytes("keyed map state namespace", namespace)
        self._kc = factory.key_codec
        self._vc = factory.value_codec

    def _ck(self, map_key: MK) -> Any:
        return self._factory.complex_key(self._pk, self._ns, self._kc.encode(map_key))

    def put(self, map_key: MK, value: MV) -> None:
        payload = self._vc.encode(value)
        ttl = self._factory._ttl
        if ttl is None:
            self._store.put(self._ck(map_key), payload)
        else:
            self._store.put(self._ck(map_key), ttl.stamp(payload, ttl.clock()))
            self._factory.note_written(self._pk, self._ns)

    def _live(self, ck: Any, raw: bytes, now: int) -> bytes | None:
        """The payload of a stored entry under TTL rules (None when expired and hidden)."""
        ttl = self._factory._ttl
        assert ttl is not None
        ts, payload = ttl.split(raw)
        if ttl.expired(ts, now):
            self._store.delete(ck)
            return payload if ttl.return_expired else None
        if ttl.refresh_on_read:
            self._store.put(ck, ttl.stamp(payload, now))
        return payload

    def get(self, map_key: MK) -> tuple[MV | None, bool]:
        """``(value, True)``, or ``(None, False)`` when ``map_key`` is missing."""
        ck = self._ck(map_key)
        raw = self._store.get(ck)
        if raw is not None and self._factory._ttl is not None:
            raw = self._live(ck, raw, self._factory._ttl.clock())
            self._factory.cleanup_incrementally()
        if raw is None:
            return (None, False)
        return (self._vc.decode(raw), True)

    def contains(self, map_key: MK) -> bool:
        return self.get(map_key)[1]

    def delete(self, map_key: MK) -> None:
        self._store.delete(self._ck(map_key))

    def clear(self) -> None:
        """Remove every entry of this map."""
        self._store.delete_prefix(self._factory.complex_key(self._pk, self._ns))

    def all(self) -> Iterator[tuple[MK, MV]]:
        """``(key, value)`` pairs in ascending key order (a snapshot taken at the first step)."""
        ttl = self._factory._ttl
        now = ttl.clock() if ttl is not None else 0
        kd, vd = self._kc.decode, self._vc.decode
        with self._store.scan_complex(self._factory.key_group, self._pk, self._ns) as it:
            for user_key, raw in it:
                if ttl is not None:
                    live = self._live(self._factory.complex_key(self._pk, self._ns, user_key), raw, now)
                    if live is None:
                        continue
                    raw = live
                yield (kd(user_key), vd(raw))

    def keys(self) -> Iterator[MK]:
        return (k for k, _ in self.all())

    def values(self) -> Iterator[MV]:
        return (v for _, v in self.all())

    def is_empty(self) -> bool:
        return next(iter(self.all()), None) is None
