"""The streaming tests' query runner (a streaming DataFrame written to parquet files until its
input is used up, from and to a checkpoint), and ``MapStateDict`` for tests that call the
key-group pass in-process."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any, ClassVar

from fs_compat.spark import await_query


def run_to_parquet(df: Any, checkpoint: Path, sink: Path) -> list[Any]:
    """Run ``df`` into parquet files in ``sink`` (``availableNow``) with its checkpoint in
    ``checkpoint``; fails with the user's error when the query failed (``await_query``). The
    query's progress reports, one per micro-batch."""
    query = (
        df.writeStream.format("parquet")
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start(str(sink))
    )
    await_query(query)
    assert query.exception() is None
    return list(query.recentProgress)


class MapStateDict:
    """``transformWithStateInPandas``'s ``MapState`` as the key-group pass uses it (the buckets of
    a key group's state), over a dict: one version of the state store's."""

    #: The calls made on any instance, by name (a test clears it before the call it counts).
    calls: ClassVar[Counter[str]] = Counter()

    def __init__(self, entries: dict[tuple[Any, ...], tuple[Any, ...]]) -> None:
        self.entries = dict(entries)

    def getValue(self, key: tuple[Any, ...]) -> tuple[Any, ...] | None:  # noqa: N802 - Spark's names
        self.calls["getValue"] += 1
        return self.entries.get(key)

    def updateValue(self, key: tuple[Any, ...], value: tuple[Any, ...]) -> None:  # noqa: N802
        self.calls["updateValue"] += 1
        self.entries[key] = value

    def removeKey(self, key: tuple[Any, ...]) -> None:  # noqa: N802
        self.calls["removeKey"] += 1
        del self.entries[key]

    def clear(self) -> None:
        self.calls["clear"] += 1
        self.entries.clear()

    def iterator(self) -> Any:
        self.calls["iterator"] += 1
        return iter(list(self.entries.items()))
