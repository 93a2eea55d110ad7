"""PyFlink's ``pyflink.datastream.execution_mode``."""

from ._data_stream import RuntimeExecutionMode

__all__ = ["RuntimeExecutionMode"]
