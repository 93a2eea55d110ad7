"""Single-value keyed states: ValueState, plus the cell that Reducing/Aggregating share."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Generic, TypeVar, overload

from fs_api import KvStore, MemoryKvStore

from ._base import HasStores, KeyedFactoryBase, as_bytes, require
from ._codecs import Codec, PickleCodec, default_codec_for
from ._ttl import Clock, TtlConfig

V = TypeVar("V")


class ValueCell:
    """One stored blob under (key_group, primary_key, namespace, b""), TTL rules applied."""

    __slots__ = ("_ck", "_factory", "_ns", "_pk", "_store")

    def __init__(self, factory: KeyedFactoryBase, primary_key: bytes, namespace: bytes | str) -> None:
        kind = factory._kind
        require(f"{kind} state factory", factory)
        self._factory = factory
        self._store = factory.store
        self._pk = as_bytes(f"{kind} state primary_key", primary_key)
        self._ns = as_bytes(f"{kind} state namespace", namespace)
        self._ck = factory.complex_key(self._pk, self._ns)

    def read_raw(self, *, for_update: bool = False) -> bytes | None:
        """The stored payload or None. With TTL an expired payload is removed, and returned this
        once only under ReturnExpiredIfNotCleanedUp: then a ``for_update`` read (reducing and
        aggregating ``add``) folds it in, as Flink's ``getUnexpired`` does; a ``for_update`` read
        does not refresh the timestamp, the write that follows does."""
        raw = self._store.get(self._ck)
        ttl = self._factory._ttl
        if ttl is None or raw is None:
            return raw
        now = ttl.clock()
        ts, payload = ttl.split(raw)
        if ttl.expired(ts, now):
            self._store.delete(self._ck)
            self._factory.cleanup_incrementally()
            return payload if ttl.return_expired else None
        if ttl.refresh_on_read and not for_update:
            self._store.put(self._ck, ttl.stamp(payload, now))
        self._factory.cleanup_incrementally()
        return payload

    def write_raw(self, payload: bytes) -> None:
        ttl = self._factory._ttl
        if ttl is None:
            self._store.put(self._ck, payload)
        else:
            self._store.put(self._ck, ttl.stamp(payload, ttl.clock()))
            self._factory.note_written(self._pk, self._ns)

    def clear(self) -> None:
        """Remove the stored value."""
        self._store.delete(self._ck)


class CellFactory(KeyedFactoryBase):
    """A factory whose views each hold one stored value (a ``ValueCell``): value, reducing and
    aggregating state. ``write_cells`` writes many of them at once."""

    def write_cells(self, cells: Iterable[tuple[bytes, bytes | None]], namespace: bytes | str = b"") -> None:
        """Write the stored payload of each ``(primary key, payload)`` of ``cells`` in
        ``namespace``, as a view of that key would (``write_raw``, TTL stamped), or clear it when
        the payload is None: for writing back many keys' values at once (a snapshot of values a
        cache kept as objects), without a view per key.

        >>> from fs_api.testing import LocalContext
        >>> from fs_api_advanced import IntCodec
        >>> factory = KeyedValueStateFactory.from_context(LocalContext(), "counters", b"", IntCodec())
        >>> factory.write_cells([(b"a", IntCodec().encode(1)), (b"b", IntCodec().encode(2))])
        >>> factory.write_cells([(b"a", None)])
        >>> factory.new_keyed_value(b"a", b"").value(), factory.new_keyed_value(b"b", b"").value()
        ((None, False), (2, True))
        """
        ns = as_bytes(f"{self._kind} state namespace", namespace)
        store, ttl = self._store, self._ttl
        if ttl is None and isinstance(store, MemoryKvStore):  # in bulk: no ComplexKey per cell
            puts: list[tuple[bytes, bytes, bytes, bytes]] = []
            for primary_key, payload in cells:
                pk = as_bytes(f"{self._kind} state primary_key", primary_key)
                if payload is not None:
                    puts.append((pk, ns, b"", payload))
                    continue
                store.put_entries(self._key_group, puts)  # the writes before it, first
                puts = []
                store.delete(self.complex_key(pk, ns))
            store.put_entries(self._key_group, puts)
            return
        for primary_key, payload in cells:
            pk = as_bytes(f"{self._kind} state primary_key", primary_key)
            if ttl is not None:  # stamped and tracked for cleanup, as a view does it
                cell = ValueCell(self, pk, ns)
                if payload is None:
                    cell.clear()
                else:
                    cell.write_raw(payload)
            elif payload is None:
                store.delete(self.complex_key(pk, ns))
            else:
                store.put(self.complex_key(pk, ns), payload)


class KeyedValueStateFactory(CellFactory, Generic[V]):
    """Makes KeyedValueState views of one store and key group.

    >>> from fs_api.testing import LocalContext
    >>> factory = KeyedValueStateFactory.from_context_auto_codec(LocalContext(), "counters", b"", int)
    >>> state = factory.new_keyed_value(b"user-1", b"count")
    >>> state.value()
    (None, False)
    >>> state.update(3)
    >>> state.value()
    (3, True)
    """

    _kind = "keyed value"

    def __init__(
        self,
        store: KvStore,
        key_group: bytes,
        value_codec: Codec[V],
        *,
        ttl: TtlConfig | None = None,
        clock: Clock | None = None,
    ) -> None:
        super().__init__(store, key_group, ttl, clock)
        require("keyed value state factory value codec", value_codec)
        self.value_codec = value_codec

    @classmethod
    def from_context(
        cls, ctx: HasStores, store_name: str, key_group: bytes, value_codec: Codec[V]
    ) -> KeyedValueStateFactory[V]:
        """A factory over the context's store ``store_name``."""
        return cls(ctx.getOrCreateKVStore(store_name), key_group, value_codec)

    @overload
    @classmethod
    def from_context_auto_codec(
        cls, ctx: HasStores, store_name: str, key_group: bytes, value_type: type[V]
    ) -> KeyedValueStateFactory[V]: ...
    @overload
    @classmethod
    def from_context_auto_codec(
        cls, ctx: HasStores, store_name: str, key_group: bytes, value_type: None = None
    ) -> KeyedValueStateFactory[Any]: ...
    @classmethod
    def from_context_auto_codec(
        cls, ctx: HasStores, store_name: str, key_group: bytes, value_type: type[Any] | None = None
    ) -> KeyedValueStateFactory[Any]:
        """A factory with the default codec for ``value_type`` (pickle when None)."""
        codec = default_codec_for(value_type) if value_type is not None else PickleCodec()
        return cls(ctx.getOrCreateKVStore(store_name), key_group, codec)

    def new_keyed_value(self, primary_key: bytes, namespace: bytes | str) -> KeyedValueState[V]:
        """The value state of ``primary_key`` in ``namespace``."""
        return KeyedValueState(self, primary_key, namespace)


class KeyedValueState(ValueCell, Generic[V]):
    """A single value per (primary key, namespace): ``update``, ``value() -> (value, found)``,
    ``clear``."""

    __slots__ = ("_codec",)

    def __init__(
        self, factory: KeyedValueStateFactory[V], primary_key: bytes, namespace: bytes | str
    ) -> None:
        super().__init__(factory, primary_key, namespace)
        self._codec = factory.value_codec

    def update(self, value: V) -> None:
        """Set the value."""
        self.write_raw(self._codec.encode(value))

    def value(self) -> tuple[V | None, bool]:
        """``(value, True)``, or ``(None, False)`` when nothing is stored."""
        raw = self.read_raw()
        if raw is None:
            return (None, False)
        return (self._codec.decode(raw), True)
