"""Bounded plans on Spark: every step becomes repartition -> sortWithinPartitions -> mapInArrow
running the engine-neutral runtime (``SubtaskRunner``) over each partition.

Rows between steps carry one event each (schema ``EVENTS``): a record (``v`` = the pickled
value, ``ts`` its timestamp) or a watermark (``v`` null, ``wm`` set), the output ``tag`` (null
for the main output), the upstream subtask (``ch``, the channel) and its position in that
subtask's output (``seq``). A step's input is routed to its subtasks (``part``): by key group for
keyed edges, to every subtask for broadcast edges and watermarks, round-robin otherwise. Inside
a partition, events are handled per subtask in ``seq`` order, so per key the order is the input
order, and each subtask's input watermark is the minimum over its channels, as in Flink.
"""

from __future__ import annotations

import functools
import os
import pickle
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import cloudpickle

from fs_compat.runtime import (
    Edge,
    ExternalSourceNode,
    KeyEncoder,
    LocalConfig,
    Node,
    OperatorNode,
    SinkNode,
    SourceNode,
    StepError,
    SubtaskRunner,
    TimestampNode,
    route_key,
    upstream_of,
)

from ._convert import OutputColumns, RowReader, dumps

_FIELDS = (("tag", "string"), ("v", "binary"), ("ts", "long"), ("wm", "long"), ("ch", "int"), ("seq", "long"))
_ROUTED = (*_FIELDS, ("inp", "int"), ("part", "int"))
#: Arrow record batches leave a task at this many rows.
_BATCH_ROWS = 8192


def _schema(fields: Sequence[tuple[str, str]]) -> Any:
    from pyspark.sql.types import BinaryType, IntegerType, LongType, StringType, StructField, StructType

    kinds = {"string": StringType(), "binary": BinaryType(), "long": LongType(), "int": IntegerType()}
    return StructType([StructField(name, kinds[kind], True) for name, kind in fields])


def _arrow_schema(fields: Sequence[tuple[str, str]]) -> Any:
    import pyarrow as pa

    kinds = {"string": pa.string(), "binary": pa.binary(), "long": pa.int64(), "int": pa.int32()}
    return pa.schema([(name, kinds[kind]) for name, kind in fields])


def _batch(columns: dict[str, list[Any]], fields: Sequence[tuple[str, str]]) -> Any:
    import pyarrow as pa

    return pa.RecordBatch.from_pydict(columns, schema=_arrow_schema(fields))


class _Frame:
    """A step's output on Spark: its DataFrame of events and how many channels it has."""

    def __init__(self, df: Any, channels: int) -> None:
        self.df = df
        self.channels = channels


def _parallelism(node: Node, config: LocalConfig) -> int:
    if isinstance(node, OperatorNode):
        return node.parallelism or config.parallelism
    return 1  # a timestamp assigner sees its whole input, as the in-process target does


def _route(
    step: str, edge_index: int, edge: Edge, p: int, max_parallelism: int, channels: int
) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """The mapInArrow function that gives each event of one input of ``step`` its subtask
    (``part``). A non-keyed edge between steps of equal parallelism forwards (upstream subtask
    ``i`` feeds subtask ``i``, so each record keeps its place among its channel's), else it
    rebalances, as Flink's default partitioning does."""
    key_selector = edge.key_selector
    encoder = KeyEncoder(edge.key_codec, max_parallelism) if key_selector is not None else None
    broadcast = edge.broadcast
    forward = key_selector is None and not broadcast and channels == p

    def subtasks(batch: Any) -> list[int]:
        """The subtask of each record of ``batch`` (watermark rows: -1)."""
        n = batch.num_rows
        if broadcast:
            return [-1] * n
        values = batch.column("v").to_pylist()
        if key_selector is None:
            parts = batch.column("ch" if forward else "seq").to_pylist()
            return [-1 if v is None else c % p for v, c in zip(values, parts, strict=True)]
        assert encoder is not None
        memo, locate, loads = encoder._memo, encoder.locate, pickle.loads
        out = []
        for v in values:
            if v is None:
                out.append(-1)
                continue
            value = loads(v)
            try:
                key = key_selector(value)
            except Exception:
                key = None
            if key is None:  # the StepError naming the step and the record
                route_key(step, key_selector, encoder, value, p)
                raise StepError(f"step '{step}': the key selector failed on record {value!r}")
            kind = type(key)  # ``KeyEncoder.locate``, its memo inlined
            found = memo.get(key) if kind is int or kind is str else None
            out.append((found if found is not None else locate(key))[1] * p // max_parallelism)
        return out

    def route(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        schema = _arrow_schema(_ROUTED)
        types = [field.type for field in _arrow_schema(_FIELDS)]
        for batch in batches:
            parts = subtasks(batch)
            if p > 1 and -1 in parts:  # watermarks and broadcast records go to every subtask
                rows, every = [], range(p)
                for i, part in enumerate(parts):
                    if part < 0:
                        rows.extend([i] * p)
                    else:
                        rows.append(i)
                parts = [q for part in parts for q in (every if part < 0 else (part,))]
                batch = batch.take(pa.array(rows, pa.int64()))
            elif p == 1:
                parts = [0] * len(parts)
            columns = [batch.column(name) for name, _ in _FIELDS]
            columns = [c if c.type == t else c.cast(t) for c, t in zip(columns, types, strict=True)]
            inp = pa.array([edge_index] * batch.num_rows, pa.int32())
            yield pa.RecordBatch.from_arrays([*columns, inp, pa.array(parts, pa.int32())], schema=schema)

    return route


def _run_subtasks(
    node: Node, config: LocalConfig, channels: Sequence[int], tags: Sequence[str]
) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """The mapInArrow function that runs ``node``'s subtasks over their ordered events."""

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        schema = _arrow_schema(_FIELDS)
        runner: SubtaskRunner | None = None
        part = -1
        seq = 0
        out_tag: list[str | None] = []
        out_v: list[bytes | None] = []
        out_ts: list[int | None] = []
        out_wm: list[int | None] = []
        out_ch: list[int] = []
        out_seq: list[int] = []

        def take(r: SubtaskRunner) -> None:
            nonlocal seq
            outs = r.drain()
            if not outs:
                return
            tags, values, stamps, marks = zip(*outs, strict=True)
            try:
                blobs = [
                    None if w is not None else _pickle_dumps(v, 5) for v, w in zip(values, marks, strict=True)
                ]
            except Exception:  # a value only cloudpickle can pickle
                blobs = [None if w is not None else dumps(v) for v, w in zip(values, marks, strict=True)]
            m = len(outs)
            out_tag.extend(tags)
            out_v.extend(blobs)
            out_ts.extend(stamps)
            out_wm.extend(marks)
            out_ch.extend([part] * m)
            out_seq.extend(range(seq, seq + m))
            seq += m

        def flush() -> Any:
            arrays = [
                pa.array(out_tag, pa.string()),
                pa.array(out_v, pa.binary()),
                pa.array(out_ts, pa.int64()),
                pa.array(out_wm, pa.int64()),
                pa.array(out_ch, pa.int32()),
                pa.array(out_seq, pa.int64()),
            ]
            for column in (out_tag, out_v, out_ts, out_wm, out_ch, out_seq):
                column.clear()
            return pa.RecordBatch.from_arrays(arrays, schema=schema)

        loads = pickle.loads
        for batch in batches:
            columns = [batch.column(name).to_pylist() for name in ("part", "v", "ts", "inp", "ch", "wm")]
            for row_part, v, ts, inp, ch, wm in zip(*columns, strict=True):
                if row_part != part:
                    if runner is not None:
                        runner.finish()
                        take(runner)
                    part, seq = row_part, 0
                    runner = SubtaskRunner(node, part, config, channels, tags)
                    record = runner.push
                if v is None:
                    assert runner is not None
                    runner.watermark(inp, ch, wm)
                else:
                    record(inp, loads(v), ts)
            if runner is not None:
                take(runner)
            if len(out_seq) >= _BATCH_ROWS:
                yield flush()
        if runner is not None:
            runner.finish()
            take(runner)
        yield flush()

    return run


_pickle_dumps = pickle.dumps


def _source_frame(spark: Any, node: SourceNode, index: int, n_sources: int) -> _Frame:
    """A collection source: one channel; ``seq`` interleaves the sources round-robin, as the
    in-process target reads them. Items are pickled with cloudpickle, which carries classes of
    the job's own modules by value (``ship_user_code``): workers cannot import those."""
    stamps = list(node.timestamps) if node.timestamps is not None else [None] * len(node.items)
    rows = [
        (None, cloudpickle.dumps(item, protocol=5), ts, None, 0, i * n_sources + index)
        for i, (item, ts) in enumerate(zip(node.items, stamps, strict=False))
    ]
    return _Frame(spark.createDataFrame(rows, schema=_schema(_FIELDS)), 1)


def watermark_column(schema: Any) -> tuple[str, int] | None:
    """The event-time column ``withWatermark`` marked in ``schema``, and its delay in ms."""
    for field in schema.fields:
        delay = field.metadata.get("spark.watermarkDelayMs")
        if delay is not None:
            return field.name, int(delay)
    return None


def _dataframe_frame(node: ExternalSourceNode, index: int, n_sources: int) -> _Frame:
    """A bounded DataFrame source: each row becomes a ``Row`` value; its timestamp is the
    ``withWatermark`` column's, when there is one. ``seq`` keeps the DataFrame's order
    (partition by partition) and interleaves the sources as ``_source_frame`` does."""
    df = node.handle
    marked = watermark_column(df.schema)
    reader = RowReader(df.schema, marked[0] if marked else None)

    def events(batches: Iterator[Any]) -> Iterator[Any]:
        from pyspark import TaskContext

        context = TaskContext.get()
        pid = context.partitionId() if context is not None else 0
        row = pid << 32
        for batch in batches:
            values, stamps = reader.tuples(batch)
            n = len(values)
            cols: dict[str, list[Any]] = {
                "tag": [None] * n,
                "v": [dumps(reader.row(v)) for v in values],
                "ts": stamps,
                "wm": [None] * n,
                "ch": [0] * n,
                "seq": [(row + i) * n_sources + index for i in range(n)],
            }
            row += n
            yield _batch(cols, _FIELDS)

    return _Frame(df.mapInArrow(events, _schema(_FIELDS)), 1)


def collect_items(node: ExternalSourceNode) -> list[Any]:
    """A bounded DataFrame source's values, read on the driver (for the in-process target)."""
    reader = RowReader(node.handle.schema)
    return [row for batch in node.handle.toArrow().to_batches() for row in reader.rows(batch)]


def _consumed_tags(nodes: Sequence[Node]) -> dict[int, set[str]]:
    tags: dict[int, set[str]] = {}
    for node in nodes:
        for edge in node.inputs:
            if edge.side_tag is not None:
                tags.setdefault(edge.source.id, set()).add(edge.side_tag)
    return tags


def _stage(node: Node, frames: dict[int, _Frame], config: LocalConfig, tags: Sequence[str]) -> _Frame:
    from pyspark.sql import functions as F  # noqa: N812 - Spark's convention

    p = _parallelism(node, config)
    routed = None
    channels = []
    for index, edge in enumerate(node.inputs):
        src = frames[edge.source.id]
        channels.append(src.channels)
        tag = F.col("tag")
        df = src.df.where(tag.isNull() if edge.side_tag is None else tag == edge.side_tag)
        route = _route(node.name, index, edge, p, config.max_parallelism, src.channels)
        df = df.mapInArrow(route, _schema(_ROUTED))
        routed = df if routed is None else routed.unionByName(df)
    assert routed is not None
    ordered = routed.repartition(p, "part").sortWithinPartitions("part", "seq", "ch", "inp")
    run = _run_subtasks(node, config, channels, sorted(tags))
    return _Frame(ordered.mapInArrow(run, _schema(_FIELDS)), p)


_STEP_ERROR = re.compile(r"(?:fs_compat\.runtime\._local\.)?StepError: (.*)")


def _collect(frame: _Frame, tag: str | None) -> list[Any]:
    from pyspark.sql import functions as F  # noqa: N812

    col = F.col("tag")
    df = frame.df.where((col.isNull() if tag is None else col == tag) & F.col("v").isNotNull())
    try:
        rows = df.orderBy("seq", "ch").select("v").collect()
    except Exception as exc:
        # A failed user function arrives as a Spark exception whose text holds the task's
        # Python traceback; surface it as the StepError it was.
        found = _STEP_ERROR.findall(str(exc))
        if found:
            raise StepError(found[-1].strip()) from exc
        raise
    return [pickle.loads(row[0]) for row in rows]


@functools.cache
def _installed_roots() -> tuple[str, ...]:
    import fs_api
    import fs_api_advanced
    import fs_compat

    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix}
    for pkg in (fs_api, fs_api_advanced, fs_compat):
        assert pkg.__file__ is not None
        roots.add(os.path.dirname(os.path.realpath(pkg.__file__)))
    return tuple(os.path.realpath(r) + os.sep for r in roots)


def ship_user_code() -> None:
    """Functions and classes of the job's own modules (those not installed in this environment,
    e.g. the job file's neighbours or a test module) travel to Spark's workers by value, as
    ``__main__``'s do, so workers need not be able to import them."""
    from pyspark import cloudpickle as spark_cloudpickle  # what PySpark ships functions with

    roots = _installed_roots()
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if name == "__main__" or not path or name in _by_value:
            continue
        if not os.path.realpath(path).startswith(roots):
            for pickler in (cloudpickle, spark_cloudpickle):
                pickler.register_pickle_by_value(module)
            _by_value.add(name)


_by_value: set[str] = set()


def _build_frames(
    spark: Any, nodes: Sequence[Node], config: LocalConfig
) -> tuple[dict[int, _Frame], list[Any]]:
    """The frame of every step of ``nodes`` (topologically ordered); also the DataFrames it
    persisted (steps with several consumers are computed once, so user functions run once
    per record)."""
    ship_user_code()
    tags = _consumed_tags(nodes)
    sources = [n for n in nodes if isinstance(n, SourceNode)]
    uses: dict[int, int] = {}
    for node in nodes:
        for edge in node.inputs:
            uses[edge.source.id] = uses.get(edge.source.id, 0) + 1
    frames: dict[int, _Frame] = {}
    cached = []
    for node in nodes:
        if isinstance(node, ExternalSourceNode):
            frame = _dataframe_frame(node, sources.index(node), len(sources))
        elif isinstance(node, SourceNode):
            frame = _source_frame(spark, node, sources.index(node), len(sources))
        elif isinstance(node, (OperatorNode, TimestampNode)):
            frame = _stage(node, frames, config, sorted(tags.get(node.id, ())))
        else:
            continue
        if uses.get(node.id, 0) > 1:
            frame.df = frame.df.persist()
            cached.append(frame.df)
        frames[node.id] = frame
    return frames, cached


def run_batch(spark: Any, sinks: Sequence[Node], config: LocalConfig) -> None:
    """Run the bounded plan that feeds ``sinks`` on ``spark``; sinks consume on the driver."""
    nodes = upstream_of(sinks)
    frames, cached = _build_frames(spark, nodes, config)
    try:
        for sink in nodes:
            if isinstance(sink, SinkNode):
                assert sink.consume is not None
                edge = sink.inputs[0]
                for value in _collect(frames[edge.source.id], edge.side_tag):
                    sink.consume(value)
    finally:
        for df in cached:
            df.unpersist()


def batch_dataframe(spark: Any, node: Node, tag: str | None, config: LocalConfig, output_type: Any) -> Any:
    """The values of ``node``'s output ``tag`` (None: the main output) as a DataFrame whose
    schema comes from ``output_type`` (see ``_convert``). Lazy: Spark runs the plan when the
    DataFrame is used; steps with several consumers stay persisted."""
    from pyspark.sql import functions as F  # noqa: N812

    frames, _cached = _build_frames(spark, upstream_of([node]), config)
    out = OutputColumns(output_type)
    col = F.col("tag")
    df = frames[node.id].df.where((col.isNull() if tag is None else col == tag) & F.col("v").isNotNull())
    arrow_schema = out.arrow_schema()
    step = node.name

    def decode(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        for batch in batches:
            values = [pickle.loads(v) for v in batch.column("v").to_pylist()]
            try:
                cols = out.columns(values)
            except TypeError as exc:
                raise StepError(f"step '{step}': {exc}") from exc
            yield pa.RecordBatch.from_pydict(cols, schema=arrow_schema)

    return df.select("v").mapInArrow(decode, out.schema)
