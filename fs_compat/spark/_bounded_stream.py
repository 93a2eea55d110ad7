"""The ``spark-streaming`` target: a bounded plan (collections, ``TestingSource``, batch
DataFrames) run as a Structured Streaming query, so that every bounded job can exercise the
streaming path (``_stream``): key groups in Spark's state store, markers, watermarks, restarts.

How a run goes (``run_bounded_stream``):

1. Each source's records are read on the driver (a batch DataFrame's rows as the in-process
   target reads them) and written, pickled, into parquet files in a temporary directory, one
   file per micro-batch (``maxFilesPerTrigger`` 1): ``micro_batches`` files of about equal size
   (fewer when there are fewer records). The last file ends with an end-of-input row
   (``END_COLUMN``, holding the watermark the end carries; a source without records has a file
   of that row alone), so its micro-batch
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

``run_stream_epochs`` runs a job that later runs continue (Bytewax's ``run_main`` with a
``recovery_config``): its query's files and checkpoints stay in a directory, each call adds a
micro-batch per epoch it is given, and its input ends for the run (``end_of_run``: ``end_input``
again at the next run's end), for good (``END_OF_INPUT``) or not at all; an uncommitted call runs
on a copy of the checkpoints and removes its files (an aborted epoch: its state is not kept).

The output is the other targets' (same records); the order is the same per key, not across keys:
key groups run in separate tasks. A sink with several outputs runs one query per sink.
``run_bounded_stream``'s ``micro_batches`` and ``restarts`` default to the session's
``spark.fs_compat.boundedStream.microBatches`` (2) and ``spark.fs_compat.boundedStream.restarts``
(1). BATCH execution mode, sources with their own timestamps and unbounded sources are refused.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import pickle
import shutil
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
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
    sink_taker,
    summarize,
    upstream_of,
    upstream_width,
)

from ._batch import collect_items
from ._errors import await_query
from ._events import watermark_column
from ._session import spark_master
from ._ship import ship_user_code
from ._sink_query import batch_rows
from ._stream import _END as END
from ._stream import END_COLUMN, StreamPlanError, stream_dataframe

#: The watermark of the end of the input for good (``run_stream_epochs``'s ``end``): Flink's
#: ``Long.MAX_VALUE``.
END_OF_INPUT = END

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
    modification-time order), named in sequence from ``count``."""

    def __init__(self, count: int = 0, mtime: float | None = None) -> None:
        self.mtime = time.time() - 1_000_000 if mtime is None else mtime
        self.count = count

    def write(self, folder: Path, rows: list[bytes | None], end: int | None = None) -> Path:
        """A file of ``rows`` (pickled records), then an end-of-input row carrying ``end``."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        folder.mkdir(parents=True, exist_ok=True)
        values = [*rows, None] if end is not None else rows
        ends = [None] * len(rows) + ([end] if end is not None else [])
        table = pa.table({_VALUE: pa.array(values, pa.binary()), END_COLUMN: pa.array(ends, pa.int64())})
        path = folder / f"part-{self.count:06d}.parquet"
        scratch = folder.parent / f".{path.name}.tmp"
        pq.write_table(table, scratch)
        self.mtime += 1
        os.utime(scratch, (self.mtime, self.mtime))
        scratch.rename(path)  # the file source never sees a half-written file
        self.count += 1
        return path


def _schema() -> Any:
    from pyspark.sql import types as st

    return st.StructType(
        [st.StructField(_VALUE, st.BinaryType(), True), st.StructField(END_COLUMN, st.LongType(), True)]
    )


class _Collect:
    """``foreachBatch``: each micro-batch's values (pickled), in order, into a file of their own
    named by the micro-batch's id (a re-run micro-batch replaces it), each with its channel
    (``batch_rows``; None without ``channels``)."""

    def __init__(self, folder: str, channels: bool = False) -> None:
        self.folder = folder
        self.channels = channels

    def __call__(self, batch: Any, batch_id: int) -> None:
        rows = batch_rows(batch, self.channels)
        _write_atomically(Path(self.folder) / f"{batch_id:09d}.pkl", pickle.dumps(rows, protocol=5))


def _collected(folder: Path) -> list[tuple[int | None, Any]]:
    """What ``_Collect`` wrote to ``folder``: ``(channel, value)`` pairs, in order."""
    rows = [row for path in sorted(folder.glob("*.pkl")) for row in pickle.loads(path.read_bytes())]
    return [(channel, pickle.loads(value)) for value, channel in rows]


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


class _Job:
    """A bounded plan as a streaming query over its sources' files in ``root``: one directory
    of files per source (``source-<i>``), one query per sink (its checkpoint ``checkpoint-<k>``),
    whose values reach the driver through ``foreachBatch``."""

    def __init__(self, spark: Any, sinks: Sequence[Node], config: LocalConfig, root: Path) -> None:
        self.spark = spark
        self.config = config
        self.root = root
        self.nodes = upstream_of(sinks)
        self.folders: dict[int, Path] = {}
        handles: dict[int, Any] = {}
        for i, node in enumerate(n for n in self.nodes if isinstance(n, SourceNode)):
            folder = root / f"source-{i}"
            folder.mkdir(exist_ok=True)
            self.folders[node.id] = folder
            handles[node.id] = (
                spark.readStream.schema(_schema()).option("maxFilesPerTrigger", 1).parquet(str(folder))
            )
        self.plan = _plan(self.nodes, handles)
        self.outputs = [s for s in sinks if isinstance(s, SinkNode)]
        self.counts: dict[tuple[int, int], int] = {}  # records read per (step, input), as summarize's

    def count(self, source_id: int, n: int) -> None:
        """Count ``n`` more records of source ``source_id`` as read by the steps it feeds."""
        for node in self.nodes:
            for i, e in enumerate(node.inputs):
                if e.source.id == source_id:
                    self.counts[(node.id, i)] = self.counts.get((node.id, i), 0) + n

    def run(self, checkpoints: Path) -> list[list[tuple[int | None, Any]]]:
        """Start each sink's query from its checkpoint in ``checkpoints`` and run it over the files
        it has not read (``availableNow``); each sink's ``(channel, value)`` pairs, in order."""
        results = []
        for k, sink in enumerate(self.outputs):
            edge = sink.inputs[0]
            channels = sink.writer is not None
            out = Path(tempfile.mkdtemp(prefix=f"out-{k}-", dir=self.root))
            # Built anew for each run: the run restores its key groups from the checkpoint.
            df = stream_dataframe(
                self.spark,
                self.plan[edge.source.id],
                edge.side_tag,
                self.config,
                None,
                clock=self.config.clock,
                channels=channels,
            )
            query = (
                df.writeStream.foreachBatch(_Collect(str(out), channels))
                .option("checkpointLocation", str(checkpoints / f"checkpoint-{k}"))
                .trigger(availableNow=True)
                .start()
            )
            await_query(query)
            results.append(_collected(out))
            shutil.rmtree(out, ignore_errors=True)
        return results

    def consume(self, results: Sequence[list[tuple[int | None, Any]]]) -> None:
        """Hand each sink its ``(channel, value)`` pairs (``sink_taker``: a sink with a
        ``writer``, each value to the instance that writes it)."""
        for sink, values in zip(self.outputs, results, strict=True):
            self.counts[(sink.id, 0)] = self.counts.get((sink.id, 0), 0) + len(values)
            take = sink_taker(sink, self.config, upstream_width(sink, self.config))
            for channel, value in values:
                take(value, channel)

    def summary(self, job_name: str, start: float) -> JobSummary:
        return summarize(
            self.nodes,
            self.counts,
            {},
            target=f"spark-streaming ({spark_master(self.spark)})",
            wall_time_s=time.perf_counter() - start,
            job_name=job_name,
        )


def _refuse_batch_mode(config: LocalConfig) -> None:
    if config.mode is RuntimeMode.BATCH:
        raise NotImplementedError(
            "BATCH execution mode on the spark-streaming target: a streaming query runs in "
            "STREAMING mode; use the spark or local target for BATCH jobs"
        )


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
    _refuse_batch_mode(config)
    start = time.perf_counter()
    micro_batches = micro_batches or _setting(spark, MICRO_BATCHES_CONF, DEFAULT_MICRO_BATCHES)
    restarts = _setting(spark, RESTARTS_CONF, DEFAULT_RESTARTS) if restarts is None else restarts
    ship_user_code()  # before the records are pickled: classes of the job's modules go by value
    root = Path(tempfile.mkdtemp(prefix="fs-compat-stream-", dir=workdir))
    try:
        job = _Job(spark, sinks, config, root)
        files = _Files()
        parts: dict[int, tuple[tuple[list[Any], ...], ...]] = {}
        for node in job.nodes:
            if isinstance(node, SourceNode):
                records = _records(node)
                parts[node.id] = split(records, micro_batches, restarts)
                job.count(node.id, len(records))
        results: list[list[tuple[int | None, Any]]] = [[] for _ in job.outputs]
        for part in range(restarts + 1):
            for source_id, folder in job.folders.items():
                chunks: list[list[bytes | None]] = [
                    [cloudpickle.dumps(v, protocol=5) for v in chunk] for chunk in parts[source_id][part]
                ]
                last = part == restarts  # the end of the input, after the last records
                if last:
                    chunks = chunks or [[]]
                for i, chunk_rows in enumerate(chunks):
                    files.write(folder, chunk_rows, END_OF_INPUT if last and i == len(chunks) - 1 else None)
            for values, more in zip(results, job.run(root), strict=True):
                values += more
        job.consume(results)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return job.summary(job_name, start)


#: The state of a ``run_stream_epochs`` directory's file names (``_Files``).
_FILES_STATE = "files.json"


def run_stream_epochs(
    spark: Any,
    sinks: Sequence[Node],
    config: LocalConfig,
    directory: str | Path,
    epochs: Sequence[Mapping[int, Sequence[Any]]],
    *,
    end: int | None,
    commit: bool = True,
    handed_over: Callable[[], None] | None = None,
    job_name: str = "",
) -> JobSummary:
    """One run of a bounded plan that later runs continue: the plan that feeds ``sinks`` as a
    Structured Streaming query on ``spark``, kept in ``directory`` (its sources' files and its
    checkpoints, from the runs before), over the records of ``epochs``: one micro-batch per
    epoch, holding each source's records of that epoch (``epochs[i][source node id]``; a source
    left out has none). After the last epoch, the input ends with watermark ``end`` (``END_OF_INPUT``: for
    good; ``end_of_run(n)``: for this run, the next run's end ends it again), or, None, does not end.

    ``commit=False``: the run leaves the query as it found it, as an execution that fails before
    its micro-batch commits: the sinks get its output, but it runs on a copy of the checkpoints
    and its files are removed afterwards, so the next run starts from the same state.
    Otherwise ``handed_over`` is called once the files are in place, before the query starts:
    from then on the query reads them at its next start, even if this one fails (the caller
    records there that the records were handed over).
    """
    _refuse_batch_mode(config)
    start = time.perf_counter()
    ship_user_code()
    root = Path(directory)
    root.mkdir(parents=True, exist_ok=True)
    job = _Job(spark, sinks, config, root)
    known = root / _FILES_STATE
    saved = json.loads(known.read_text()) if known.exists() else {}
    files = _Files(saved.get("count", 0), saved.get("mtime"))
    written: list[Path] = []
    batches = list(epochs) or ([{}] if end is not None else [])
    for i, epoch in enumerate(batches):
        last = i == len(batches) - 1
        for source_id, folder in job.folders.items():
            records = list(epoch.get(source_id, ()))
            job.count(source_id, len(records))
            rows: list[bytes | None] = [cloudpickle.dumps(v, protocol=5) for v in records]
            written.append(files.write(folder, rows, end if last else None))
    if not written:
        return job.summary(job_name, start)
    if commit:
        _write_atomically(known, json.dumps({"count": files.count, "mtime": files.mtime}).encode())
        if handed_over is not None:
            handed_over()
        job.consume(job.run(root))
        return job.summary(job_name, start)
    scratch = Path(tempfile.mkdtemp(prefix="uncommitted-", dir=root))
    try:
        for k in range(len(job.outputs)):
            checkpoint = root / f"checkpoint-{k}"
            if checkpoint.exists():
                shutil.copytree(checkpoint, scratch / checkpoint.name)
        results = job.run(scratch)
    finally:
        for path in written:
            path.unlink(missing_ok=True)
        shutil.rmtree(scratch, ignore_errors=True)
    job.consume(results)
    return job.summary(job_name, start)


def _write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` whole: readers see the old file or the new one, never a part."""
    scratch = path.with_name(f".{path.name}.tmp")
    scratch.write_bytes(data)
    scratch.rename(path)
