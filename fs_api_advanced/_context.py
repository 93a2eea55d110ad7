"""The runtime Context's state conveniences (``getOrCreateValueState`` and friends)."""

from __future__ import annotations

import abc
from typing import Any

from fs_api import KvStore

from ._codecs import Codec
from ._folding import (
    AggregateFunc,
    KeyedAggregatingStateFactory,
    KeyedReducingStateFactory,
    ReduceFunc,
)
from ._list import KeyedListStateFactory
from ._map import KeyedMapStateFactory
from ._plain import (
    AggregatingState,
    ListState,
    MapState,
    PriorityQueueState,
    ReducingState,
    ValueState,
)
from ._pq import KeyedPriorityQueueStateFactory
from ._value import KeyedValueStateFactory


class StateContextMixin(abc.ABC):
    """Adds FunctionStream's ``getOrCreate*`` state methods to a Context; each delegates to the
    state type's ``from_context`` / ``from_context_auto_codec``. List it after a concrete Context
    base, as ``fs_api_advanced.testing.LocalContext`` does."""

    @abc.abstractmethod
    def getOrCreateKVStore(self, name: str) -> KvStore:  # noqa: N802 - FunctionStream name
        """The store called ``name``."""

    # Non-keyed.
    def getOrCreateValueState(self, store_name: str, codec: Codec[Any]) -> ValueState[Any]:  # noqa: N802
        return ValueState.from_context(self, store_name, codec)

    def getOrCreateValueStateAutoCodec(self, store_name: str) -> ValueState[Any]:  # noqa: N802
        return ValueState.from_context_auto_codec(self, store_name)

    def getOrCreateListState(self, store_name: str, codec: Codec[Any]) -> ListState[Any]:  # noqa: N802
        return ListState.from_context(self, store_name, codec)

    def getOrCreateListStateAutoCodec(self, store_name: str) -> ListState[Any]:  # noqa: N802
        return ListState.from_context_auto_codec(self, store_name)

    def getOrCreateMapState(  # noqa: N802
        self, store_name: str, key_codec: Codec[Any], value_codec: Codec[Any]
    ) -> MapState[Any, Any]:
        return MapState.from_context(self, store_name, key_codec, value_codec)

    def getOrCreateMapStateAutoKeyCodec(  # noqa: N802
        self, store_name: str, value_codec: Codec[Any]
    ) -> MapState[bytes, Any]:
        return MapState.from_context_auto_key_codec(self, store_name, value_codec)

    def getOrCreatePriorityQueueState(  # noqa: N802
        self, store_name: str, codec: Codec[Any]
    ) -> PriorityQueueState[Any]:
        return PriorityQueueState.from_context(self, store_name, codec)

    def getOrCreatePriorityQueueStateAutoCodec(self, store_name: str) -> PriorityQueueState[int]:  # noqa: N802
        return PriorityQueueState.from_context_auto_codec(self, store_name)

    def getOrCreateAggregatingState(  # noqa: N802
        self, store_name: str, acc_codec: Codec[Any], agg_func: AggregateFunc[Any, Any, Any]
    ) -> AggregatingState[Any, Any, Any]:
        return AggregatingState.from_context(self, store_name, acc_codec, agg_func)

    def getOrCreateAggregatingStateAutoCodec(  # noqa: N802
        self, store_name: str, agg_func: AggregateFunc[Any, Any, Any]
    ) -> AggregatingState[Any, Any, Any]:
        return AggregatingState.from_context_auto_codec(self, store_name, agg_func)

    def getOrCreateReducingState(  # noqa: N802
        self, store_name: str, value_codec: Codec[Any], reduce_func: ReduceFunc[Any]
    ) -> ReducingState[Any]:
        return ReducingState.from_context(self, store_name, value_codec, reduce_func)

    def getOrCreateReducingStateAutoCodec(  # noqa: N802
        self, store_name: str, reduce_func: ReduceFunc[Any]
    ) -> ReducingState[Any]:
        return ReducingState.from_context_auto_codec(self, store_name, reduce_func)

    # Keyed factories.
    def getOrCreateKeyedValueStateFactory(  # noqa: N802
        self, store_name: str, key_group: bytes, value_codec: Codec[Any]
    ) -> KeyedValueStateFactory[Any]:
        return KeyedValueStateFactory.from_context(self, store_name, key_group, value_codec)

    def getOrCreateKeyedValueStateFactoryAutoCodec(  # noqa: N802
        self, store_name: str, key_group: bytes, value_type: type[Any] | None = None
    ) -> KeyedValueStateFactory[Any]:
        return KeyedValueStateFactory.from_context_auto_codec(self, store_name, key_group, value_type)

    def getOrCreateKeyedListStateFactory(  # noqa: N802
        self, store_name: str, key_group: bytes, value_codec: Codec[Any]
    ) -> KeyedListStateFactory[Any]:
        return KeyedListStateFactory.from_context(self, store_name, key_group, value_codec)

    def getOrCreateKeyedListStateFactoryAutoCodec(  # noqa: N802
        self, store_name: str, key_group: bytes, value_type: type[Any] | None = None
    ) -> KeyedListStateFactory[Any]:
        return KeyedListStateFactory.from_context_auto_codec(self, store_name, key_group, value_type)

    def getOrCreateKeyedMapStateFactory(  # noqa: N802
        self, store_name: str, key_group: bytes, key_codec: Codec[Any], value_codec: Codec[Any]
    ) -> KeyedMapStateFactory[Any, Any]:
        return KeyedMapStateFactory.from_context(self, store_name, key_group, key_codec, value_codec)

    def getOrCreateKeyedMapStateFactoryAutoCodec(  # noqa: N802
        self,
        store_name: str,
        key_group: bytes,
        map_key_type: type[Any] | None = None,
        map_value_type: type[Any] | None = None,
    ) -> KeyedMapStateFactory[Any, Any]:
        return KeyedMapStateFactory.from_context_auto_codec(
            self,
            store_name,
            key_group,
            map_key_type,
            map_value_type,
        )

    def getOrCreateKeyedPriorityQueueStateFactory(  # noqa: N802
        self, store_name: str, key_group: bytes, item_codec: Codec[Any]
    ) -> KeyedPriorityQueueStateFactory[Any]:
        return KeyedPriorityQueueStateFactory.from_context(self, store_name, key_group, item_codec)

    def getOrCreateKeyedPriorityQueueStateFactoryAutoCodec(  # noqa: N802
        self, store_name: str, key_group: bytes, item_type: type[Any] | None = None
    ) -> KeyedPriorityQueueStateFactory[Any]:
        return KeyedPriorityQueueStateFactory.from_context_auto_codec(self, store_name, key_group, item_type)

    def getOrCreateKeyedAggregatingStateFactory(  # noqa: N802
        self,
        store_name: str,
        key_group: bytes,
        acc_codec: Codec[Any],
        agg_func: AggregateFunc[Any, Any, Any],
    ) -> KeyedAggregatingStateFactory[Any, Any, Any]:
        return KeyedAggregatingStateFactory.from_context(self, store_name, key_group, acc_codec, agg_func)

    def getOrCreateKeyedAggregatingStateFactoryAutoCodec(  # noqa: N802
        self,
        store_name: str,
        key_group: bytes,
        agg_func: AggregateFunc[Any, Any, Any],
        acc_type: type[Any] | None = None,
    ) -> KeyedAggregatingStateFactory[Any, Any, Any]:
        return KeyedAggregatingStateFactory.from_context_auto_codec(
            self,
            store_name,
            key_group,
            agg_func,
            acc_type,
        )

    def getOrCreateKeyedReducingStateFactory(  # noqa: N802
        self, store_name: str, key_group: bytes, value_codec: Codec[Any], reduce_func: ReduceFunc[Any]
    ) -> KeyedReducingStateFactory[Any]:
        return KeyedReducingStateFactory.from_context(self, store_name, key_group, value_codec, reduce_func)

    def getOrCreateKeyedReducingStateFactoryAutoCodec(  # noqa: N802
        self,
        store_name: str,
        key_group: bytes,
        reduce_func: ReduceFunc[Any],
        value_type: type[Any] | None = None,
    ) -> KeyedReducingStateFactory[Any]:
        return KeyedReducingStateFactory.from_context_auto_codec(
            self,
            store_name,
            key_group,
            reduce_func,
            value_type,
        )
