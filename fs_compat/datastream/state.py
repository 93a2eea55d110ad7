"""PyFlink's ``pyflink.datastream.state``: state interfaces, descriptors and StateTtlConfig."""

from fs_compat.runtime import (
    AggregatingState,
    AppendingState,
    ListState,
    MapState,
    ReducingState,
    State,
    ValueState,
)

from ._descriptors import (
    AggregatingStateDescriptor,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    StateDescriptor,
    ValueStateDescriptor,
)
from ._functions import BroadcastState, ReadOnlyBroadcastState
from ._ttl import StateTtlConfig

__all__ = [
    "AggregatingState",
    "AggregatingStateDescriptor",
    "AppendingState",
    "BroadcastState",
    "ListState",
    "ListStateDescriptor",
    "MapState",
    "MapStateDescriptor",
    "ReadOnlyBroadcastState",
    "ReducingState",
    "ReducingStateDescriptor",
    "State",
    "StateDescriptor",
    "StateTtlConfig",
    "ValueState",
    "ValueStateDescriptor",
]
