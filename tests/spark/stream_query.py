"""The streaming tests' query runner: a streaming DataFrame written to parquet files until its
input is used up, from and to a checkpoint."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def run_to_parquet(df: Any, checkpoint: Path, sink: Path) -> list[Any]:
    """Run ``df`` into parquet files in ``sink`` (``availableNow``) with its checkpoint in
    ``checkpoint``; fails when the query failed. The query's progress reports, one per
    micro-batch."""
    query = (
        df.writeStream.format("parquet")
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start(str(sink))
    )
    query.awaitTermination()
    assert query.exception() is None
    return list(query.recentProgress)
