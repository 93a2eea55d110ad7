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
from .output_tag import OutputTag

__all__ = [
    "AggregateFunction",
    "BroadcastConnectedStream",
    "BroadcastProcessFunction",
    "BroadcastStream",
    "CloseableIterator",
    "CoFlatMapFunction",
    "CoMapFunction",
    "CoProcessFunction",
    "ConnectedStreams",
    "DataStream",
    "DataStreamSink",
    "ExecutionConfig",
    "FilterFunction",
    "FlatMapFunction",
    "Function",
    "JobExecutionResult",
    "KeySelector",
    "KeyedBroadcastProcessFunction",
    "KeyedCoProcessFunction",
    "KeyedProcessFunction",
    "KeyedStream",
    "MapFunction",
    "OutputTag",
    "ProcessFunction",
    "ReduceFunction",
    "RuntimeContext",
    "RuntimeExecutionMode",
    "SinkFunction",
    "StreamExecutionEnvironment",
    "TimeCharacteristic",
    "TimeDomain",
    "TimerService",
]
