"""PyFlink's ``pyflink.datastream.tests.test_util``: a sink that keeps what it receives."""

from __future__ import annotations

from typing import Any

from fs_compat.common import TimestampAssigner as _TimestampAssigner
from fs_compat.datastream._format import java_str as _java_str
from fs_compat.datastream._functions import SinkFunction as _SinkFunction


class DataStreamTestSinkFunction(_SinkFunction[Any]):
    """Collects every value; ``get_results`` returns and clears them, as PyFlink's does.

    ``get_results()`` gives them as Flink's Java side prints them (``+I[a, 1]`` for rows, ``(1,hi)``
    for tuples); ``get_results(True)`` as ``str()`` of the Python objects, and
    ``get_results(True, stringify=False)`` as the objects themselves.
    """

    __test__ = False

    def __init__(self) -> None:
        self._values: list[Any] = []

    def invoke(self, value: Any) -> None:
        self._values.append(value)

    def get_results(self, is_python_object: bool = False, stringify: bool = True) -> list[Any]:
        """The values received since the last call (or ``clear``), which it forgets: by default as
        Flink's Java side prints them, else as the class docstring says.

        >>> from fs_compat.common import Row
        >>> sink = DataStreamTestSinkFunction()
        >>> sink.invoke(Row("a", 1))
        >>> sink.invoke((1, "hi"))
        >>> sink.get_results(), sink.get_results()
        (['+I[a, 1]', '(1,hi)'], [])
        """
        values, self._values = self._values, []
        if not is_python_object:
            return [_java_str(v) for v in values]
        return [str(v) for v in values] if stringify else values

    def clear(self) -> None:
        """Forgets the values received so far."""
        self._values.clear()


class SecondColumnTimestampAssigner(_TimestampAssigner):
    """Takes the event time from the record's second field."""

    def extract_timestamp(self, value: Any, record_timestamp: int | None) -> int:
        return int(value[1])


__all__ = ["DataStreamTestSinkFunction", "SecondColumnTimestampAssigner"]
