"""How ``fs_compat.datastream.connectors.number_seq`` reads and writes (its docstring says what it does)."""

from __future__ import annotations

from typing import Any

from fs_compat.common import Types
from fs_compat.common.internal import make_rows
from fs_compat.execution import SourceReader

from ._base import Source, SourcePlan


class _Numbers(SourceReader):
    def __init__(self, start: int, end: int) -> None:
        self.start = start
        self.end = end

    def read_local(self) -> list[Any]:
        return make_rows(["id"], ((n,) for n in range(self.start, self.end + 1)))

    def dataframe(self, spark: Any) -> Any:
        return spark.range(self.start, self.end + 1)


def _first(row: Any) -> tuple[Any]:
    return (row[0],)


class NumberSequenceSource(Source):
    """The numbers ``start`` to ``end`` (both included), as ``Types.LONG()``; bounded. Read in
    this process on ``local``, with ``spark.range`` on ``spark``."""

    def __init__(self, start: int, end: int) -> None:
        if end < start:
            raise ValueError(f"end ({end}) must not be smaller than start ({start})")
        self._start = start
        self._end = end

    def _source_plan(self, type_info: Any) -> SourcePlan:
        return SourcePlan(_Numbers(self._start, self._end), _first, type_info or Types.LONG())
