"""PyFlink's ``pyflink.datastream.stream_execution_environment``."""

from ._data_stream import StreamExecutionEnvironment

__all__ = ["StreamExecutionEnvironment"]
