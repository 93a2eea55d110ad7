"""fs_api_advanced: typed state over a KvStore (FunctionStream-compatible).

Codecs turn values into bytes (ordered ones keep value order, for map keys and queues); each
state type exists non-keyed (one per store) and keyed (a factory per store and key group, a
view per primary key and namespace). Keyed states optionally take a ``TtlConfig``.

>>> from fs_api.testing import LocalContext
>>> from fs_api_advanced import KeyedValueStateFactory
>>> factory = KeyedValueStateFactory.from_context_auto_codec(LocalContext(), "counters", b"", int)
>>> factory.new_keyed_value(b"user-1", b"count").value()
(None, False)
"""

from fs_api import KvError

from ._base import KeyedFactoryBase
from ._codecs import (
    BoolCodec,
    BytesCodec,
    Codec,
    FloatCodec,
    IntCodec,
    JsonCodec,
    PickleCodec,
    StringCodec,
    default_codec_for,
)
from ._context import StateContextMixin
from ._folding import (
    AggregateFunc,
    KeyedAggregatingState,
    KeyedAggregatingStateFactory,
    KeyedReducingState,
    KeyedReducingStateFactory,
    ReduceFunc,
)
from ._list import KeyedListState, KeyedListStateFactory
from ._map import KeyedMapState, KeyedMapStateFactory, ensure_ordered_key_codec
from ._plain import (
    AggregatingState,
    ListState,
    MapState,
    PriorityQueueState,
    ReducingState,
    ValueState,
    create_map_state_auto_key_codec,
    infer_ordered_key_codec,
)
from ._pq import KeyedPriorityQueueState, KeyedPriorityQueueStateFactory
from ._ttl import Clock, TtlConfig, TtlUpdate, TtlVisibility, system_clock
from ._value import CellFactory, KeyedValueState, KeyedValueStateFactory

__all__ = [
    "AggregateFunc",
    "AggregatingState",
    "BoolCodec",
    "BytesCodec",
    "CellFactory",
    "Clock",
    "Codec",
    "FloatCodec",
    "IntCodec",
    "JsonCodec",
    "KeyedAggregatingState",
    "KeyedAggregatingStateFactory",
    "KeyedFactoryBase",
    "KeyedListState",
    "KeyedListStateFactory",
    "KeyedMapState",
    "KeyedMapStateFactory",
    "KeyedPriorityQueueState",
    "KeyedPriorityQueueStateFactory",
    "KeyedReducingState",
    "KeyedReducingStateFactory",
    "KeyedValueState",
    "KeyedValueStateFactory",
    "KvError",
    "ListState",
    "MapState",
    "PickleCodec",
    "PriorityQueueState",
    "ReduceFunc",
    "ReducingState",
    "StateContextMixin",
    "StringCodec",
    "TtlConfig",
    "TtlUpdate",
    "TtlVisibility",
    "ValueState",
    "create_map_state_auto_key_codec",
    "default_codec_for",
    "ensure_ordered_key_codec",
    "infer_ordered_key_codec",
    "system_clock",
]
