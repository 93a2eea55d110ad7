"""PyFlink's ``pyflink.datastream``: port by changing ``pyflink.`` to ``fs_compat.``.

>>> from fs_compat.datastream import StreamExecutionEnvironment
>>> env = StreamExecutionEnvironment.get_execution_environment()
>>> env.from_collection([1, 2, 3]).map(lambda x: x * 10).execute_and_collect(limit=3)
[10, 20, 30]
"""

from fs_compat.runtime import TimeDomain, TimerService

from ._data_stream import (
    BroadcastConnectedStream,
    BroadcastStream,
    CloseableIterator,
    ConnectedStreams,
    DataStream,
    DataStreamSink,
    ExecutionConfig,
    JobExecutionResult,
    KeyedStream,
    RuntimeExecutionMode,
    StreamExecutionEnvironment,
    TimeCharacteristic,
)
from ._functions import (
    AggregateFunction,
    BroadcastProcessFunction,
    CoFlatMapFunction,
    CoMapFunction,
    CoProcessFunction,
    FilterFunction,
    FlatMapFunction,
    Function,
    KeyedBroadcastProcessFunction,
    KeyedCoProcessFunction,
    KeyedProcessFunction,
    KeySelector,
    MapFunction,
    ProcessFunction,
    ReduceFunction,
    RuntimeContext,
    SinkFunction,
)
from ._window import (
    CountWindow,
    GlobalWindow,
    MergingWindowAssigner,
    TimeWindow,
    Trigger,
    TriggerResult,
    Window,
    WindowAssigner,
)
from ._window_functions import (
    AllWindowFunction,
    KeyedStateStore,
    ProcessAllWindowFunction,
    ProcessWindowFunction,
    WindowFunction,
)
from ._window_stream import AllWindowedStream, WindowedStream
from .output_tag import OutputTag
from .slot_sharing_group import MemorySize, SlotSharingGroup

__all__ = [
    "AggregateFunction",
    "AllWindowFunction",
    "AllWindowedStream",
    "BroadcastConnectedStream",
    "BroadcastProcessFunction",
    "BroadcastStream",
    "CloseableIterator",
    "CoFlatMapFunction",
    "CoMapFunction",
    "CoProcessFunction",
    "ConnectedStreams",
    "CountWindow",
    "DataStream",
    "DataStreamSink",
    "ExecutionConfig",
    "FilterFunction",
    "FlatMapFunction",
    "Function",
    "GlobalWindow",
    "JobExecutionResult",
    "KeySelector",
    "KeyedBroadcastProcessFunction",
    "KeyedCoProcessFunction",
    "KeyedProcessFunction",
    "KeyedStateStore",
    "KeyedStream",
    "MapFunction",
    "MemorySize",
    "MergingWindowAssigner",
    "OutputTag",
    "ProcessAllWindowFunction",
    "ProcessFunction",
    "ProcessWindowFunction",
    "ReduceFunction",
    "RuntimeContext",
    "RuntimeExecutionMode",
    "SinkFunction",
    "SlotSharingGroup",
    "StreamExecutionEnvironment",
    "TimeCharacteristic",
    "TimeDomain",
    "TimeWindow",
    "TimerService",
    "Trigger",
    "TriggerResult",
    "Window",
    "WindowAssigner",
    "WindowFunction",
    "WindowedStream",
]
