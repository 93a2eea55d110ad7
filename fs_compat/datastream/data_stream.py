"""PyFlink's ``pyflink.datastream.data_stream``."""

from ._data_stream import (
    BroadcastConnectedStream,
    BroadcastStream,
    CloseableIterator,
    ConnectedStreams,
    DataStream,
    DataStreamSink,
    KeyedStream,
)
from ._window_stream import AllWindowedStream, WindowedStream

__all__ = [
    "AllWindowedStream",
    "BroadcastConnectedStream",
    "BroadcastStream",
    "CloseableIterator",
    "ConnectedStreams",
    "DataStream",
    "DataStreamSink",
    "KeyedStream",
    "WindowedStream",
]
