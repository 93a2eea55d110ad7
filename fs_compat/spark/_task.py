"""What a Spark task knows about where it runs."""

from __future__ import annotations


def micro_batch_id() -> int:
    """The id of the Structured Streaming micro-batch the current task belongs to (Spark's
    ``batchId``, the ``epoch_id`` ``foreachBatch`` sees): it grows by one per micro-batch and
    continues after a restart from the checkpoint. -1 outside a streaming task."""
    from pyspark import TaskContext

    context = TaskContext.get()
    found = context.getLocalProperty("streaming.sql.batchId") if context is not None else None
    return int(found) if found else -1
