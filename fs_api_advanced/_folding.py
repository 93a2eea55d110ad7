"""Keyed states that fold what is added: ReducingState and AggregatingState."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, Protocol, TypeVar, overload

from fs_api import KvStore

from ._base import HasStores, require
from ._codecs import Codec, PickleCodec, default_codec_for
from ._ttl import Clock, TtlConfig
from ._value import CellFactory, ValueCell

V = TypeVar("V")
T = TypeVar("T")
ACC = TypeVar("ACC")
R = TypeVar("R")
T_contra = TypeVar("T_contra", contravariant=True)
R_co = TypeVar("R_co", covariant=True)

#: Combines the current value and a new one into the next value.
ReduceFunc = Callable[[V, V], V]


class AggregateFunc(Protocol[T_contra, ACC, R_co]):
    """Folds values of type T into an accumulator ACC and reads a result R from it."""

    def create_accumulator(self) -> ACC: ...

    def add(self, value: T_contra, accumulator: ACC) -> ACC: ...

    def get_result(self, accumulator: ACC) -> R_co: ...

    def merge(self, acc_a: ACC, acc_b: ACC) -> ACC: ...


class KeyedReducingStateFactory(CellFactory, Generic[V]):
    """Makes KeyedReducingState views: the first value is stored as is, then
    ``reduce_func(current, value)``.

    >>> from fs_api.testing import LocalContext
    >>> from fs_api_advanced import IntCodec
    >>> f = KeyedReducingStateFactory.from_context(LocalContext(), "s", b"", IntCodec(), max)
    >>> state = f.new_reducing_state(b"k", b"max")
    >>> for v in (3, 9, 4):
    ...     state.add(v)
    >>> state.get()
    (9, True)
    """

    _kind = "keyed reducing"

    def __init__(
        self,
        store: KvStore,
        key_group: bytes,
        value_codec: Codec[V],
        reduce_func: ReduceFunc[V],
        *,
        ttl: TtlConfig | None = None,
        clock: Clock | None = None,
    ) -> None:
        super().__init__(store, key_group, ttl, clock)
        require("keyed reducing state factory value codec", value_codec)
        if not callable(reduce_func):
            raise TypeError(f"reduce_func must be callable, got {type(reduce_func).__name__}")
        self.value_codec = value_codec
        self.reduce_func = reduce_func

    @classmethod
    def from_context(
        cls,
        ctx: HasStores,
        store_name: str,
        key_group: bytes,
        value_codec: Codec[V],
        reduce_func: ReduceFunc[V],
    ) -> KeyedReducingStateFactory[V]:
        return cls(ctx.getOrCreateKVStore(store_name), key_group, value_codec, reduce_func)

    @overload
    @classmethod
    def from_context_auto_codec(
        cls,
        ctx: HasStores,
        store_name: str,
        key_group: bytes,
        reduce_func: ReduceFunc[V],
        value_type: type[V],
    ) -> KeyedReducingStateFactory[V]: ...
    @overload
    @classmethod
    def from_context_auto_codec(
        cls,
        ctx: HasStores,
        store_name: str,
        key_group: bytes,
        reduce_func: ReduceFunc[Any],
        value_type: None = None,
    ) -> KeyedReducingStateFactory[Any]: ...
    @classmethod
    def from_context_auto_codec(
        cls,
        ctx: HasStores,
        store_name: str,
        key_group: bytes,
        reduce_func: ReduceFunc[Any],
        value_type: type[Any] | None = None,
    ) -> KeyedReducingStateFactory[Any]:
        codec = default_codec_for(value_type) if value_type is not None else PickleCodec()
        return cls(ctx.getOrCreateKVStore(store_name), key_group, codec, reduce_func)

    def new_reducing_state(self, primary_key: bytes, namespace: bytes | str) -> KeyedReducingState[V]:
        return KeyedReducingState(self, primary_key, namespace)


class KeyedReducingState(ValueCell, Generic[V]):
    """``add(value)`` folds with the reduce function; ``get() -> (value, found)``; ``clear``."""

    __slots__ = ("_codec", "_reduce")

    def __init__(
        self, factory: KeyedReducingStateFactory[V], primary_key: bytes, namespace: bytes | str
    ) -> None:
        super().__init__(factory, primary_key, namespace)
        self._codec = factory.value_codec
        self._reduce = factory.reduce_func

    def add(self, value: V) -> None:
        raw = self.read_raw(for_update=True)
        new = value if raw is None else self._reduce(self._codec.decode(raw), value)
        self.write_raw(self._codec.encode(new))

    def get(self) -> tuple[V | None, bool]:
        raw = self.read_raw()
        if raw is None:
            return (None, False)
        return (self._codec.decode(raw), True)


class KeyedAggregatingStateFactory(CellFactory, Generic[T, ACC, R]):
    """Makes KeyedAggregatingState views folding values into an accumulator."""

    _kind = "keyed aggregating"

    def __init__(
        self,
        store: KvStore,
        key_group: bytes,
        acc_codec: Codec[ACC],
        agg_func: AggregateFunc[T, ACC, R],
        *,
        ttl: TtlConfig | None = None,
        clock: Clock | None = None,
    ) -> None:
        super().__init__(store, key_group, ttl, clock)
        require("keyed aggregating state factory accumulator codec", acc_codec)
        for method in ("create_accumulator", "add", "get_result"):
            if not callable(getattr(agg_func, method, None)):
                raise TypeError(
                    f"agg_func must provide create_accumulator, add, get_result and merge; "
                    f"{type(agg_func).__name__} has no {method}()"
                )
        self.acc_codec = acc_codec
        self.agg_func = agg_func

    @classmethod
    def from_context(
        cls,
        ctx: HasStores,
        store_name: str,
        key_group: bytes,
        acc_codec: Codec[ACC],
        agg_func: AggregateFunc[T, ACC, R],
    ) -> KeyedAggregatingStateFactory[T, ACC, R]:
        return cls(ctx.getOrCreateKVStore(store_name), key_group, acc_codec, agg_func)

    @classmethod
    def from_context_auto_codec(
        cls,
        ctx: HasStores,
        store_name: str,
        key_group: bytes,
        agg_func: AggregateFunc[T, ACC, R],
        acc_type: type[ACC] | None = None,
    ) -> KeyedAggregatingStateFactory[T, ACC, R]:
        codec: Codec[Any] = default_codec_for(acc_type) if acc_type is not None else PickleCodec()
        return cls(ctx.getOrCreateKVStore(store_name), key_group, codec, agg_func)

    def new_aggregating_state(
        self, primary_key: bytes, state_name: bytes | str = ""
    ) -> KeyedAggregatingState[T, ACC, R]:
        return KeyedAggregatingState(self, primary_key, state_name)


class KeyedAggregatingState(ValueCell, Generic[T, ACC, R]):
    """``add(value)`` folds into the accumulator; ``get() -> (result, found)``; ``clear``."""

    __slots__ = ("_agg", "_codec")

    def __init__(
        self,
        factory: KeyedAggregatingStateFactory[T, ACC, R],
        primary_key: bytes,
        namespace: bytes | str,
    ) -> None:
        super().__init__(factory, primary_key, namespace)
        self._codec = factory.acc_codec
        self._agg = factory.agg_func

    def add(self, value: T) -> None:
        raw = self.read_raw(for_update=True)
        acc = self._agg.create_accumulator() if raw is None else self._codec.decode(raw)
        self.write_raw(self._codec.encode(self._agg.add(value, acc)))

    def get(self) -> tuple[R | None, bool]:
        raw = self.read_raw()
        if raw is None:
            return (None, False)
        return (self._agg.get_result(self._codec.decode(raw)), True)
