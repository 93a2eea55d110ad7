"""The ``spark-streaming`` target: a bounded plan (collections, ``TestingSource``, batch
DataFrames) run as a Structured Streaming query, so that every bounded job can exercise the
streaming path (``_stream``): key groups in Spark's state store, markers, watermarks, restarts.

How a run goes (``run_bounded_stream``):

1. Each source's records are read on the driver (a batch DataFrame's rows as the in-process
   target reads them) and written, pickled, into parquet files in a temporary directory, one
   file per micro-batch (``maxFilesPerTrigger`` 1): ``micro_batches`` files of about equal size
   (fewer when there are fewer records). The last file ends with an end-of-input row
   (``END_COLUMN``; a source without records has a file of that row alone), so its micro-batch
   carries the end of the input after its records.
2. Each source becomes a streaming DataFrame over its directory, followed by a step that unpickles
   the records; the plan is the bounded one with those sources, run by ``stream_dataframe``
   with a real ``checkpointLocation``; the output values reach the driver through
   ``foreachBatch`` (one file of values per micro-batch, so a re-run micro-batch replaces its
   own; this also works over Spark Connect, where the function runs in the server's Python).
3. The files are written in ``restarts + 1`` parts: the query runs (``trigger(availableNow=True)``)
   over the first part and stops; the next part is added and the query is started again from
   its checkpoint (a new DataFrame, so its key groups are restored from Spark's state store, not
   taken from a Python worker's cache). By default once, halfway.
4. The end-of-input row ends each source as a bounded stream ends in Flink: its channel's
   watermark goes to ``Long.MAX_VALUE`` (every event-time timer fires), and once all of a key
   group's channels are there, its operators' ``end_input`` runs (Bytewax's EOF), as the
   in-process target ends a bounded run (``_stream._KeyGroups._end``).

The output is the other targets' (same records); the order is the same per key, not across keys:
key groups run in separate tasks. A sink with several outputs runs one query per sink.
``run_bounded_stream``'s ``micro_batches`` and ``restarts`` default to the session's
``spark.fs_compat.boundedStream.microBatches`` (2) and ``spark.fs_compat.boundedStream.restarts``
(1). BATCH execution mode, sources with their own timestamps and unbounded sources are refused.
"""

from __future__ import annotations

import itertools
import math
import os
import pickle
import shutil
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
import cloudpickle

from fs_compat.runtime import (
    Edge,
    ExternalSourceNode,
    JobSummary,
    LocalConfig,
    Node,
    Operator,
    OperatorNode,
    OperatorRuntime,
    RuntimeMode,
    SinkNode,
    SourceNode,
    summarize,
    upstream_of,
)

from ._batch import collect_items
from ._errors import await_query
from ._events import watermark_column
from ._session import spark_master
from ._ship import ship_user_code
from ._stream import END_COLUMN, StreamPlanError, stream_dataframe

#: The session settings that give ``run_bounded_stream``'s defaults.
MICRO_BATCHES_CONF = "spark.fs_compat.boundedStream.microBatches"
RESTARTS_CONF = "spark.fs_compat.boundedStream.restarts"
DEFAULT_MICRO_BATCHES = 2
DEFAULT_RESTARTS = 1

_VALUE = "v"


class _Unpickle(Operator):
    """The step after a source's files: the record a row holds (``v``, pickled)."""

    def __init__(self) -> None:
        self.one_to_one = _record

    def process(self, value: Any, runtime: OperatorRuntime) -> Any:
        return (_record(value),)


def _record(row: Any) -> Any:
    return pickle.loads(row[0])


def _unpickle() -> Operator:
    return _Unpickle()


@attrs.frozen
class _Source:
    """A bounded source as files: its directory and the files of each part of the run."""

    folder: Path
    parts: tuple[tuple[list[Any], ...], ...]  # per part, the chunks of records (a file each)


def _records(node: SourceNode) -> list[Any]:
    """The records of a bounded source, read on the driver."""
    if isinstance(node, ExternalSourceNode):
        if node.unbounded:
            raise StreamPlanError(
                f"source '{node.name}' is a streaming DataFrame; run_plan runs bounded jobs"
            )
        if watermark_column(node.handle.schema):
            raise NotImplementedError(
                f"source '{node.name}': a DataFrame with a watermark column on the spark-streaming "
                "target; assign timestamps with assign_timestamps_and_watermarks, or use the spark target"
            )
        return collect_items(node)
    if node.timestamps is not None and any(ts is not None for ts in node.timestamps):
        raise NotImplementedError(
            f"source '{node.name}': records with their own timestamps on the spark-streaming "
            "target; assign timestamps with assign_timestamps_and_watermarks"
        )
    return list(node.items)


def split(records: Sequence[Any], micro_batches: int, restarts: int) -> tuple[tuple[list[Any], ...], ...]:
    """``records`` as ``restarts + 1`` parts of chunks (one micro-batch each): ``micro_batches``
    chunks of about equal size (fewer when there are fewer records), the parts cut as evenly as
    the chunks allow.

    >>> split(list(range(8)), 4, 1)
    (([0, 1], [2, 3]), ([4, 5], [6, 7]))
    >>> split(list(range(5)), 4, 1)
    (([0, 1],), ([2, 3], [4]))
    >>> split([], 4, 1)
    ((), ())
    """
    size = max(1, math.ceil(len(records) / micro_batches))
    chunks = [list(records[i : i + size]) for i in range(0, len(records), size)]
    n_parts = restarts + 1
    cuts = [len(chunks) * p // n_parts for p in range(n_parts + 1)]
    return tuple(tuple(chunks[a:b]) for a, b in itertools.pairwise(cuts))


class _Files:
    """Writes sources' files, each later than the one before (the file source takes them in
    modification-time order)."""

    def __init__(self) -> None:
        self.mtime = time.time() - 1_000_000
        self.count = 0

    def write(self, folder: Path, rows: list[bytes | None]) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        folder.mkdir(parents=True, exist_ok=True)
        table = pa.table(
            {_VALUE: pa.array(rows, pa.binary()), END_COLUMN: pa.array([r is None for r in rows], pa.bool_())}
        )
        path = folder / f"part-{self.count:06d}.parquet"
        scratch = folder.parent / f".{path.name}.tmp"
        pq.write_table(table, scratch)
        self.mtime += 1
        os.utime(scratch, (self.mtime, self.mtime))
        scratch.rename(path)  # the file source never sees a half-written file
        self.count += 1


def _schema() -> Any:
    from pyspark.sql import types as st

    return st.StructType(
        [st.StructField(_VALUE, st.BinaryType(), True), st.StructField(END_COLUMN, st.BooleanType(), True)]
    )


class _Collect:
    """``foreachBatch``: each micro-batch's values (pickled), in order, into a file of their own
    named by the micro-batch's id (a re-run micro-batch replaces it)."""

    def __init__(self, folder: str) -> None:
        self.folder = folder

    def __call__(self, batch: Any, batch_id: int) -> None:
        values = [row[0] for row in batch.select("value").collect()]
        path = Path(self.folder) / f"{batch_id:09d}.pkl"
        scratch = path.with_suffix(".tmp")
        scratch.write_bytes(pickle.dumps(values, protocol=5))
        scratch.rename(path)


def _collected(folder: Path) -> list[Any]:
    return [pickle.loads(v) for path in sorted(folder.glob("*.pkl")) for v in pickle.loads(path.read_bytes())]


def _setting(spark: Any, key: str, default: int) -> int:
    value = int(spark.conf.get(key, str(default)))
    if value < 0 or (key == MICRO_BATCHES_CONF and value < 1):
        raise ValueError(f"{key} must be a positive number, got {value}")
    return value


def _plan(nodes: Sequence[Node], handles: dict[int, Any]) -> dict[int, Node]:
    """The steps of ``nodes`` with each source replaced by its streaming DataFrame (``handles``,
    by source id) and a step that unpickles its records; sinks are left out."""
    new: dict[int, Node] = {}
    for node in nodes:
        if isinstance(node, SourceNode):
            files = ExternalSourceNode(f"{node.name}.files", handle=handles[node.id], unbounded=True)
            new[node.id] = OperatorNode(
                node.name,
                [Edge(files)],
                operator_factory=_unpickle,
                stateless=True,
                parallelism=node.parallelism,
            )
        elif not isinstance(node, SinkNode):
            edges = [attrs.evolve(e, source=new[e.source.id]) for e in node.inputs]
            new[node.id] = attrs.evolve(node, inputs=edges)
    return new


def run_bounded_stream(
    spark: Any,
    sinks: Sequence[Node],
    config: LocalConfig,
    job_name: str = "",
    *,
    micro_batches: int | None = None,
    restarts: int | None = None,
    workdir: str | None = None,
) -> JobSummary:
    """Run the bounded plan that feeds ``sinks`` as a Structured Streaming query on ``spark``
    (see the module docstring): its input cut into ``micro_batches`` micro-batches per source,
    the query stopped and restarted from its checkpoint ``restarts`` times, evenly spread;
    sinks consume on the driver. ``workdir``: where the files and checkpoints go (a temporary
    directory, removed afterwards)."""
    if config.mode is RuntimeMode.BATCH:
        raise NotImplementedError(
            "BATCH execution mode on the spark-streaming target: a streaming query runs in "
            "STREAMING mode; use the spark or local target for BATCH jobs"
        )
    start = time.perf_counter()
    micro_batches = micro_batches or _setting(spark, MICRO_BATCHES_CONF, DEFAULT_MICRO_BATCHES)
    restarts = _setting(spark, RESTARTS_CONF, DEFAULT_RESTARTS) if restarts is None else restarts
    nodes = upstream_of(sinks)
    ship_user_code()  # before the records are pickled: classes of the job's modules go by value
    root = Path(tempfile.mkdtemp(prefix="fs-compat-stream-", dir=workdir))
    try:
        files = _Files()
        sources: dict[int, _Source] = {}
        handles: dict[int, Any] = {}
        for i, source_node in enumerate(n for n in nodes if isinstance(n, SourceNode)):
            folder = root / f"source-{i}"
            folder.mkdir()
            sources[source_node.id] = _Source(folder, split(_records(source_node), micro_batches, restarts))
            handles[source_node.id] = (
                spark.readStream.schema(_schema()).option("maxFilesPerTrigger", 1).parquet(str(folder))
            )
        new = _plan(nodes, handles)
        outputs = [s for s in sinks if isinstance(s, SinkNode)]
        for part in range(restarts + 1):
            for source in sources.values():
                chunks: list[list[bytes | None]] = [
                    [cloudpickle.dumps(v, protocol=5) for v in chunk] for chunk in source.parts[part]
                ]
                if part == restarts:  # the end of the input, after the last records
                    chunks = chunks or [[]]
                    chunks[-1].append(None)
                for chunk_rows in chunks:
                    files.write(source.folder, chunk_rows)
            for k, sink in enumerate(outputs):
                edge = sink.inputs[0]
                out = root / f"out-{k}"
                out.mkdir(exist_ok=True)
                # Built anew for each run: the run restores its key groups from the checkpoint.
                df = stream_dataframe(
                    spark, new[edge.source.id], edge.side_tag, config, None, clock=config.clock
                )
                query = (
                    df.writeStream.foreachBatch(_Collect(str(out)))
                    .option("checkpointLocation", str(root / f"checkpoint-{k}"))
                    .trigger(availableNow=True)
                    .start()
                )
                await_query(query)
        counts: dict[tuple[int, int], int] = {}
        for node in nodes:
            for i, e in enumerate(node.inputs):
                if e.source.id in sources:
                    counts[(node.id, i)] = sum(len(c) for p in sources[e.source.id].parts for c in p)
        for k, sink in enumerate(outputs):
            values = _collected(root / f"out-{k}")
            counts[(sink.id, 0)] = len(values)
            assert sink.consume is not None
            for value in values:
                sink.consume(value)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return summarize(
        nodes,
        counts,
        {},
        target=f"spark-streaming ({spark_master(spark)})",
        wall_time_s=time.perf_counter() - start,
        job_name=job_name,
    )
