"""The streaming tests' query runner: a streaming DataFrame written to parquet files until its
input is used up, from and to a checkpoint."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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
