"""Non-keyed states: one state per store, at ComplexKey(b"", b"", b"", ...).

Each is a thin view over the keyed implementation with empty key group, key and namespace, so
the logic exists once.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, Generic, TypeVar

from fs_api import KvStore

from ._base import HasStores
from ._codecs import BytesCodec, Codec, IntCodec, PickleCodec, default_codec_for
from ._folding import (
    ACC,
    AggregateFunc,
    KeyedAggregatingStateFactory,
    KeyedReducingStateFactory,
    R,
    ReduceFunc,
    T,
)
from ._list import KeyedListStateFactory
from ._map import KeyedMapState, KeyedMapStateFactory, ensure_ordered_key_codec
from ._pq import KeyedPriorityQueueStateFactory
from ._value import KeyedValueStateFactory

V = TypeVar("V")
K = TypeVar("K")


class ValueState(Generic[V]):
    """One value per store: ``update``, ``value()`` (the value or ``None``), ``clear``.

    >>> from fs_api.testing import LocalContext
    >>> state = ValueState.from_context_auto_codec(LocalContext(), "my-store")
    >>> state.value() is None
    True
    >>> state.update(1); state.value()
    1
    """

    def __init__(self, store: KvStore, codec: Codec[V]) -> None:
        self._state = KeyedValueStateFactory(store, b"", codec).new_keyed_value(b"", b"")

    @classmethod
    def from_context(cls, ctx: HasStores, store_name: str, codec: Codec[V]) -> ValueState[V]:
        return cls(ctx.getOrCreateKVStore(store_name), codec)

    @classmethod
    def from_context_auto_codec(cls, ctx: HasStores, store_name: str) -> ValueState[Any]:
        """A ValueState that pickles its value."""
        return ValueState(ctx.getOrCreateKVStore(store_name), PickleCodec())

    def update(self, value: V) -> None:
        self._state.update(value)

    def value(self) -> V | None:
        return self._state.value()[0]

    def clear(self) -> None:
        self._state.clear()


class ListState(Generic[V]):
    """One list per store: ``add``, ``add_all``, ``get() -> list``, ``update``, ``clear``."""

    def __init__(self, store: KvStore, codec: Codec[V]) -> None:
        factory = KeyedListStateFactory(store, b"", codec, _fixed_framing=False)
        self._state = factory.new_keyed_list(b"", b"")

    @classmethod
    def from_context(cls, ctx: HasStores, store_name: str, codec: Codec[V]) -> ListState[V]:
        return cls(ctx.getOrCreateKVStore(store_name), codec)

    @classmethod
    def from_context_auto_codec(cls, ctx: HasStores, store_name: str) -> ListState[Any]:
        return ListState(ctx.getOrCreateKVStore(store_name), PickleCodec())

    def add(self, value: V) -> None:
        self._state.add(value)

    def add_all(self, values: Iterable[V]) -> None:
        self._state.add_all(values)

    def get(self) -> list[V]:
        return self._state.get()

    def update(self, values: Iterable[V]) -> None:
        self._state.update(values)

    def clear(self) -> None:
        self._state.clear()


def infer_ordered_key_codec(key_type: type[K]) -> Codec[K]:
    """The default codec of ``key_type`` if it is ordered, else KvError."""
    codec = default_codec_for(key_type)
    ensure_ordered_key_codec(codec, f"map state ({key_type.__name__})")
    return codec


class MapState(Generic[K, V]):
    """One map per store, keys in order: ``put``, ``get`` (value or ``None``), ``delete``,
    ``clear``, ``all()``. The key codec must be ordered (KvError otherwise)."""

    def __init__(self, store: KvStore, key_codec: Codec[K], value_codec: Codec[V]) -> None:
        self._state = KeyedMapState(KeyedMapStateFactory(store, b"", key_codec, value_codec), b"", b"")

    @classmethod
    def from_context(
        cls, ctx: HasStores, store_name: str, key_codec: Codec[K], value_codec: Codec[V]
    ) -> MapState[K, V]:
        return cls(ctx.getOrCreateKVStore(store_name), key_codec, value_codec)

    @classmethod
    def from_context_auto_key_codec(
        cls, ctx: HasStores, store_name: str, value_codec: Codec[V]
    ) -> MapState[bytes, V]:
        """A MapState with bytes keys."""
        return MapState(ctx.getOrCreateKVStore(store_name), BytesCodec(), value_codec)

    @classmethod
    def with_auto_key_codec(cls, store: KvStore, value_codec: Codec[V]) -> MapState[bytes, V]:
        return MapState(store, BytesCodec(), value_codec)

    def put(self, key: K, value: V) -> None:
        self._state.put(key, value)

    def get(self, key: K) -> V | None:
        return self._state.get(key)[0]

    def delete(self, key: K) -> None:
        self._state.delete(key)

    def clear(self) -> None:
        self._state.clear()

    def all(self) -> Iterator[tuple[K, V]]:
        return self._state.all()


def create_map_state_auto_key_codec(store: KvStore, value_codec: Codec[V]) -> MapState[bytes, V]:
    """A MapState with bytes keys over ``store``."""
    return MapState(store, BytesCodec(), value_codec)


class PriorityQueueState(Generic[V]):
    """One min-queue per store: ``add``, ``peek``/``poll -> (element, found)``, ``clear``,
    ``all()`` ascending. Equal elements are all kept (FunctionStream collapses them)."""

    def __init__(self, store: KvStore, codec: Codec[V]) -> None:
        self._state = KeyedPriorityQueueStateFactory(store, b"", codec).new_keyed_priority_queue(b"", b"")

    @classmethod
    def from_context(cls, ctx: HasStores, store_name: str, codec: Codec[V]) -> PriorityQueueState[V]:
        return cls(ctx.getOrCreateKVStore(store_name), codec)

    @classmethod
    def from_context_auto_codec(cls, ctx: HasStores, store_name: str) -> PriorityQueueState[int]:
        """A queue of ints."""
        return PriorityQueueState(ctx.getOrCreateKVStore(store_name), IntCodec())

    def add(self, value: V) -> None:
        self._state.add(value)

    def peek(self) -> tuple[V | None, bool]:
        return self._state.peek()

    def poll(self) -> tuple[V | None, bool]:
        return self._state.poll()

    def clear(self) -> None:
        self._state.clear()

    def all(self) -> Iterator[V]:
        return self._state.all()


class AggregatingState(Generic[T, ACC, R]):
    """One accumulator per store: ``add``, ``get() -> (result, found)``, ``clear``."""

    def __init__(self, store: KvStore, acc_codec: Codec[ACC], agg_func: AggregateFunc[T, ACC, R]) -> None:
        factory = KeyedAggregatingStateFactory(store, b"", acc_codec, agg_func)
        self._state = factory.new_aggregating_state(b"", b"")

    @classmethod
    def from_context(
        cls, ctx: HasStores, store_name: str, acc_codec: Codec[ACC], agg_func: AggregateFunc[T, ACC, R]
    ) -> AggregatingState[T, ACC, R]:
        return cls(ctx.getOrCreateKVStore(store_name), acc_codec, agg_func)

    @classmethod
    def from_context_auto_codec(
        cls, ctx: HasStores, store_name: str, agg_func: AggregateFunc[T, ACC, R]
    ) -> AggregatingState[T, ACC, R]:
        """An AggregatingState that pickles its accumulator."""
        codec: Codec[Any] = PickleCodec()
        return cls(ctx.getOrCreateKVStore(store_name), codec, agg_func)

    def add(self, value: T) -> None:
        self._state.add(value)

    def get(self) -> tuple[R | None, bool]:
        return self._state.get()

    def clear(self) -> None:
        self._state.clear()


class ReducingState(Generic[V]):
    """One reduced value per store: ``add``, ``get() -> (value, found)``, ``clear``."""

    def __init__(self, store: KvStore, value_codec: Codec[V], reduce_func: ReduceFunc[V]) -> None:
        factory = KeyedReducingStateFactory(store, b"", value_codec, reduce_func)
        self._state = factory.new_reducing_state(b"", b"")

    @classmethod
    def from_context(
        cls, ctx: HasStores, store_name: str, value_codec: Codec[V], reduce_func: ReduceFunc[V]
    ) -> ReducingState[V]:
        return cls(ctx.getOrCreateKVStore(store_name), value_codec, reduce_func)

    @classmethod
    def from_context_auto_codec(
        cls, ctx: HasStores, store_name: str, reduce_func: ReduceFunc[Any]
    ) -> ReducingState[Any]:
        """A ReducingState that pickles its value."""
        return ReducingState(ctx.getOrCreateKVStore(store_name), PickleCodec(), reduce_func)

    def add(self, value: V) -> None:
        self._state.add(value)

    def get(self) -> tuple[V | None, bool]:
        return self._state.get()

    def clear(self) -> None:
        self._state.clear()
