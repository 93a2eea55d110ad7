"""Keyed priority queue: elements are ordered user keys, smallest first, duplicates kept."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import Any, Generic, TypeVar, overload

from fs_api import KvStore

from ._base import HasStores, KeyedFactoryBase, as_bytes, require
from ._codecs import Codec, IntCodec, default_codec_for
from ._map import ensure_ordered_key_codec

V = TypeVar("V")
_COUNT = struct.Struct(">Q")


def _count(raw: bytes) -> int:
    # FunctionStream stores an empty value (one copy); we store how many copies were added.
    if not raw:
        return 1
    if len(raw) != _COUNT.size:
        raise ValueError(f"priority queue entry count must be {_COUNT.size} bytes, got {len(raw)}")
    n: int = _COUNT.unpack(raw)[0]
    return n


class KeyedPriorityQueueStateFactory(KeyedFactoryBase, Generic[V]):
    """Makes KeyedPriorityQueueState views; the element codec must be ordered.

    >>> from fs_api.testing import LocalContext
    >>> f = KeyedPriorityQueueStateFactory.from_context_auto_codec(LocalContext(), "s", b"", int)
    >>> q = f.new_keyed_priority_queue(b"k", b"timers")
    >>> for v in (5, 1, 5):
    ...     q.add(v)
    >>> q.poll(), list(q.all())
    ((1, True), [5, 5])
    """

    _kind = "keyed priority queue"

    def __init__(self, store: KvStore, key_group: bytes, item_codec: Codec[V]) -> None:
        super().__init__(store, key_group)
        require("keyed priority queue state factory item codec", item_codec)
        ensure_ordered_key_codec(item_codec, "priority queue state")
        self.item_codec = item_codec

    @classmethod
    def from_context(
        cls, ctx: HasStores, store_name: str, key_group: bytes, item_codec: Codec[V]
    ) -> KeyedPriorityQueueStateFactory[V]:
        return cls(ctx.getOrCreateKVStore(store_name), key_group, item_codec)

    @overload
    @classmethod
    def from_context_auto_codec(
        cls, ctx: HasStores, store_name: str, key_group: bytes, item_type: type[V]
    ) -> KeyedPriorityQueueStateFactory[V]: ...
    @overload
    @classmethod
    def from_context_auto_codec(
        cls, ctx: HasStores, store_name: str, key_group: bytes, item_type: None = None
    ) -> KeyedPriorityQueueStateFactory[int]: ...
    @classmethod
    def from_context_auto_codec(
        cls, ctx: HasStores, store_name: str, key_group: bytes, item_type: type[Any] | None = None
    ) -> KeyedPriorityQueueStateFactory[Any]:
        """The default codec for ``item_type`` (IntCodec when None)."""
        codec: Codec[Any] = default_codec_for(item_type) if item_type is not None else IntCodec()
        return cls(ctx.getOrCreateKVStore(store_name), key_group, codec)

    def new_keyed_priority_queue(
        self, primary_key: bytes, namespace: bytes | str
    ) -> KeyedPriorityQueueState[V]:
        return KeyedPriorityQueueState(self, primary_key, namespace)


class KeyedPriorityQueueState(Generic[V]):
    """A min-queue per (primary key, namespace): ``add``, ``peek``/``poll -> (element, found)``,
    ``clear``, ``all()`` ascending. Equal elements are all kept (FunctionStream collapses them)."""

    __slots__ = ("_codec", "_factory", "_ns", "_pk", "_store")

    def __init__(
        self, factory: KeyedPriorityQueueStateFactory[V], primary_key: bytes, namespace: bytes | str
    ) -> None:
        require("keyed priority queue state factory", factory)
        self._factory = factory
        self._store = factory.store
        self._pk = as_bytes("keyed priority queue state primary_key", primary_key)
        self._ns = as_bytes("keyed priority queue state namespace", namespace)
        self._codec = factory.item_codec

    def add(self, value: V) -> None:
        ck = self._factory.complex_key(self._pk, self._ns, self._codec.encode(value))
        raw = self._store.get(ck)
        self._store.put(ck, _COUNT.pack(1 if raw is None else _count(raw) + 1))

    def _first(self) -> tuple[bytes, bytes] | None:
        with self._store.scan_complex(self._factory.key_group, self._pk, self._ns) as it:
            return it.next()

    def peek(self) -> tuple[V | None, bool]:
        """``(smallest, True)``, or ``(None, False)`` when empty."""
        first = self._first()
        if first is None:
            return (None, False)
        return (self._codec.decode(first[0]), True)

    def poll(self) -> tuple[V | None, bool]:
        """Remove and return the smallest element: ``(element, found)``."""
        first = self._first()
        if first is None:
            return (None, False)
        user_key, raw = first
        ck = self._factory.complex_key(self._pk, self._ns, user_key)
        n = _count(raw)
        if n > 1:
            self._store.put(ck, _COUNT.pack(n - 1))
        else:
            self._store.delete(ck)
        return (self._codec.decode(user_key), True)

    def clear(self) -> None:
        self._store.delete_prefix(self._factory.complex_key(self._pk, self._ns))

    def all(self) -> Iterator[V]:
        """Every element, ascending, each as often as it was added."""
        decode = self._codec.decode
        with self._store.scan_complex(self._factory.key_group, self._pk, self._ns) as it:
            for user_key, raw in it:
                value = decode(user_key)
                for _ in range(_count(raw)):
                    yield value
