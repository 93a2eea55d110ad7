"""A plan's own sink (``print()``) on a streaming DataFrame: a Structured Streaming query whose
micro-batches hand their values to the sink on the driver (``foreachBatch``), each to the sink's
parallel instance that writes it (``runtime.SinkInstances``), in order within a micro-batch.

Delivery is at least once, as Flink's print sink: a micro-batch that fails after some of its values
were handed over runs again from the checkpoint and hands them over again. Over Spark Connect,
``foreachBatch`` runs in a Python process of the Connect server, so the lines are printed there.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from typing import Any

from fs_compat.runtime import LocalConfig, SinkNode, sink_taker, upstream_width

from ._stream import CHANNEL_COLUMN, stream_dataframe


def batch_rows(batch: Any, channels: bool) -> list[tuple[bytes, int | None]]:
    """A ``foreachBatch`` micro-batch of ``stream_dataframe``'s output (pickled values), in
    order: ``(value, channel)``, the channel None unless ``channels`` (the DataFrame has them)."""
    if channels:
        return [(value, channel) for value, channel in batch.select("value", CHANNEL_COLUMN).collect()]
    return [(value, None) for (value,) in batch.select("value").collect()]


class _SinkBatches:
    """``foreachBatch``: a micro-batch's values (with the subtask each came from, for a sink with
    a ``writer``) to ``sink``."""

    def __init__(self, sink: SinkNode, config: LocalConfig) -> None:
        self.take = sink_taker(sink, config, upstream_width(sink, config))
        self.channels = sink.writer is not None

    def __call__(self, batch: Any, batch_id: int) -> None:
        take = self.take
        for value, channel in batch_rows(batch, self.channels):
            take(pickle.loads(value), channel)


def start_sink_query(
    sink: SinkNode,
    config: LocalConfig,
    checkpoint_location: str,
    trigger: dict[str, Any],
    clock: Callable[[], int] | None = None,
) -> Any:
    """Start the query that feeds ``sink`` (its input reads a streaming DataFrame), checkpointed
    in ``checkpoint_location``, with ``trigger`` (``DataStreamWriter.trigger``'s keywords; empty:
    Spark's default); returns the StreamingQuery."""
    edge = sink.inputs[0]
    channels = sink.writer is not None
    df = stream_dataframe(None, edge.source, edge.side_tag, config, None, clock=clock, channels=channels)
    stream = df.writeStream.foreachBatch(_SinkBatches(sink, config))
    stream = stream.option("checkpointLocation", checkpoint_location)
    if trigger:
        stream = stream.trigger(**trigger)
    return stream.start()
