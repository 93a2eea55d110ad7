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

__all__ = [
    "BroadcastConnectedStream",
    "BroadcastStream",
    "CloseableIterator",
    "ConnectedStreams",
    "DataStream",
    "DataStreamSink",
    "KeyedStream",
]
