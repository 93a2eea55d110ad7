"""PyFlink's ``pyflink.datastream.time_characteristic``."""

from ._data_stream import TimeCharacteristic

__all__ = ["TimeCharacteristic"]
