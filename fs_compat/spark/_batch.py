"""Bounded plans on Spark: every step becomes repartition -> sortWithinPartitions -> mapInArrow
running the engine-neutral runtime (``SubtaskRunner``) over each partition.

Rows between steps carry one event each (``_events``), or a chunk of records (the fifth
shortcut below). A step's input is routed to its subtasks (``part``) by its route pass
(``_routing``): by key group for keyed edges, to every subtask for broadcast edges and
watermarks, round-robin otherwise. Its run pass (``_run_pass``) handles the
events per subtask in ``seq`` order, so per key the order is the input order, and each subtask's
input watermark is the minimum over its channels, as in Flink. This module plans the stages.

Five shortcuts keep the per-record work down without changing what a step sees:

- A bounded DataFrame source read by one step has no pass of its own: that step's route pass
  reads the DataFrame's rows (a source several steps read is read once, into events). When
  that step has no other input, the rows cross the shuffle as the DataFrame's own columns
  (``c0``, ``c1``, ... instead of ``v``), with the keys the route pass found (``ki``/``ks``),
  and the run pass makes the ``Row`` values from them; nothing is pickled. Keyed by one of its
  integer or string columns as it is, or by a tuple of them, the rows are routed by Spark alone
  (``direct_route``).
- The step ``to_dataframe`` reads writes the output columns in its run pass (no decode pass).
- A single-input, non-keyed step fed by the main output of a step of the same parallelism that
  nobody else reads runs in that step's run pass (``_chain.chained``).
- Stateless steps (``OperatorNode.stateless``: Bytewax's ``map``, ``filter``, ``flat_map``, ...)
  between a source or a step and the keyed step they feed run in that keyed step's route pass
  (``_chain.prechained``). When they and their source are the keyed step's only input, their
  outputs cross the shuffle as chunks, one row per subtask and source batch (``RoutePass.packed``,
  ``_routing.chunks``; the streaming pre-pass's format): Spark moves and sorts a few rows
  instead of one per record, and the records are pickled and loaded one chunk at a time.

With ``LocalConfig.origins`` every event's ``seq`` carries its origin, the source batch it comes
from (``_events``): sources number their items so (``SourceBatches``: a source read in batches;
a collection's items are a batch each), a run pass and a route pass's stateless steps number
each output after the event that produced it, what a step emits at the end of input comes after
every batch in the order the in-process schedule ends the steps (``runtime.end_order``), a step
takes one origin's events input by input, and sinks get ``(origin, value)`` pairs. A front end
orders the outputs of several sinks by them (Bytewax's ``run_main``: its inspect and output
steps print as in-process). It costs a hand-over of outputs per run of one origin in the run
pass, so only runs that ask for it pay.
"""

from __future__ import annotations

import itertools
import pickle
import sys
import time
from collections.abc import Iterator, Sequence
from typing import Any

import cloudpickle

from fs_compat.runtime import (
    ExternalSourceNode,
    JobSummary,
    LocalConfig,
    Node,
    OperatorNode,
    SinkNode,
    SourceNode,
    TimestampNode,
    end_order,
    sink_taker,
    upstream_of,
)

from ._bar import watching
from ._chain import Prechain, chained, prechained
from ._convert import OutputColumns, RowReader, dumps_all
from ._counters import counting, observed, step_tally
from ._errors import user_error
from ._events import (
    COLUMNAR,
    END_ORIGIN,
    FIELDS,
    ORIGIN_SHIFT,
    ROUTED,
    FrameSource,
    SourceBatches,
    arrow_schema,
    first_row,
    origin_of,
    parallelism,
    schema_with_routing,
    spark_schema,
)
from ._routing import RoutePass, direct_route, key_fields, subtask_partition
from ._run_pass import RunPass
from ._session import described_jobs, spark_master
from ._ship import check_shippable, ship_user_code
from ._worker import worker_pass


class _Frame:
    """A step's output on Spark: its DataFrame of events and how many channels it has. For a
    DataFrame source (``source`` set), ``df`` is the DataFrame itself, read by the consumers'
    route passes; ``events()`` gives it as events where a consumer needs that."""

    def __init__(self, df: Any, channels: int, source: FrameSource | None = None) -> None:
        self.df = df
        self.channels = channels
        self.source = source
        #: The DataFrame is ``to_dataframe``'s output already (columns, not events).
        self.output = False

    def events(self) -> Any:
        source = self.source
        if source is None:
            return self.df

        def events(batches: Iterator[Any]) -> Iterator[Any]:
            import pyarrow as pa

            row = first_row()
            schema = arrow_schema(FIELDS)
            for batch in batches:
                cols, stamps = source.read(batch)
                n = batch.num_rows
                seqs = source.seqs(row, n)
                row += n
                blobs = dumps_all(source.reader.make_rows(cols))
                nulls = pa.nulls(n, pa.int64())
                yield pa.RecordBatch.from_arrays(
                    [
                        pa.nulls(n, pa.string()),
                        pa.array(blobs, pa.binary()),
                        pa.array(stamps, pa.int64()),
                        nulls,
                        pa.array([0] * n, pa.int32()),
                        pa.array(seqs, pa.int64()),
                    ],
                    schema=schema,
                )

        return self.df.mapInArrow(worker_pass(events), spark_schema(FIELDS))


def _source_frame(
    spark: Any, node: SourceNode, index: int, n_sources: int, origins: tuple[int, int] | None = None
) -> _Frame:
    """A collection source: one channel; ``seq`` interleaves the sources round-robin, as the
    in-process target reads them. With ``origins = (width, offset)`` (``LocalConfig.origins``),
    each item is a batch of its own: item ``i``'s origin is ``i * width + offset``. Items are
    pickled with cloudpickle, which carries classes of the job's own modules by value
    (``ship_user_code``): workers cannot import those."""
    stamps = list(node.timestamps) if node.timestamps is not None else [None] * len(node.items)
    if origins is None:
        seqs: Any = range(index, len(stamps) * n_sources + index, n_sources)
    else:
        width, offset = origins
        seqs = [(i * width + offset) << ORIGIN_SHIFT for i in range(len(stamps))]
    rows = [
        (None, cloudpickle.dumps(item, protocol=5), ts, None, 0, seq)
        for item, ts, seq in zip(node.items, stamps, seqs, strict=False)
    ]
    return _Frame(spark.createDataFrame(rows, schema=spark_schema(FIELDS)), 1)


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


def _stage(
    node: Node,
    frames: dict[int, _Frame],
    config: LocalConfig,
    tags: Sequence[str],
    chain: Sequence[Node] = (),
    output: tuple[str | None, OutputColumns] | None = None,
    before: Sequence[Node] = (),
    end_origin: int | None = None,
) -> _Frame:
    """``node``'s frame (with ``chain`` run in the same pass after it, ``before`` in its route
    pass before it; ``tags`` are the last step's consumed side outputs; ``end_origin``, with
    origins, that of what the steps emit at the end of input): route -> repartition
    -> sort -> run."""
    from pyspark.sql import functions as F  # noqa: N812 - Spark's convention

    p = parallelism(node, config)
    routed = None
    channels = []
    # Where each input's records come from: ``before``'s input, else the input itself.
    reads = [before[0].inputs[0]] if before else node.inputs
    prechain = Prechain(before, config, step_tally(before[0])) if before else None
    # A DataFrame source's rows cross the shuffle as its columns when they are the only input.
    single = reads[0].source.id if len(reads) == 1 and not before else None
    columnar = single is not None and frames[single].source is not None
    # Records keyed by a column of the source: Spark routes them (``direct_route``).
    key_cols = key_fields(node.inputs[0], frames[single].source) if columnar and single is not None else None
    for index, (edge, read) in enumerate(zip(node.inputs, reads, strict=True)):
        src = frames[read.source.id]
        channels.append(src.channels)
        tag = F.col("tag")
        df = src.df
        if key_cols is not None:
            assert src.source is not None
            routed = direct_route(df, src.source, key_cols, p)
            continue
        if src.source is not None:
            if read.side_tag is not None:  # a source has no side outputs
                df = df.limit(0)
            # Chunks when nothing else reaches the step: no other row sorts between their records.
            packed = len(reads) == 1 and not config.origins
            route = RoutePass(
                node.name, index, edge, p, config.max_parallelism, 1, src.source, columnar, prechain, packed
            ).mapper()
            fields = spark_schema(COLUMNAR, src.source.fields) if columnar else spark_schema(FIELDS)
            df = df.mapInArrow(route, schema_with_routing(fields, columnar))
        else:
            df = df.where(tag.isNull() if read.side_tag is None else tag == read.side_tag)
            route = RoutePass(
                node.name, index, edge, p, config.max_parallelism, src.channels, before=prechain
            ).mapper()
            df = df.mapInArrow(route, spark_schema(ROUTED))
        routed = df if routed is None else routed.unionByName(df)
    assert routed is not None
    if prechain is not None and prechain.tally is not None:
        routed = observed(routed, drop=True)
    # Spark partition i holds subtask i only: with ``key_cols``, ``seq`` alone orders it.
    order: tuple[Any, ...] = (
        ("seq",) if key_cols is not None else ("part", "seq") if columnar else ("part", "seq", "ch", "inp")
    )
    if config.origins and key_cols is None and not columnar:
        # The batches of one origin reach a step input by input, as in the batched schedule.
        order = ("part", F.shiftright("seq", ORIGIN_SHIFT), "inp", "seq", "ch")
    ordered = routed.repartition(p, subtask_partition(p)).sortWithinPartitions(*order)
    source = frames[single].source if columnar and single is not None else None
    run = RunPass(
        node,
        config,
        channels,
        sorted(tags),
        source=source,
        chain=chain,
        output=output,
        tally=step_tally(node),
        key_fields=key_cols,
        end_origin=end_origin,
    ).mapper()
    out = ordered.mapInArrow(run, output[1].schema if output is not None else spark_schema(FIELDS))
    frame = _Frame(observed(out) if output is None else out, p)
    frame.output = output is not None
    return frame


def _collect(frame: _Frame, tag: str | None, origins: bool = False, channels: bool = False) -> list[Any]:
    """The values of ``frame``'s output ``tag``, in order; with ``origins``, ``(origin, value)``
    pairs (``LocalConfig.origins``); with ``channels``, ``(channel, value)`` pairs (the channel:
    the subtask that emitted the value)."""
    from pyspark.sql import functions as F  # noqa: N812

    col = F.col("tag")
    df = frame.events().where((col.isNull() if tag is None else col == tag) & F.col("wm").isNull())
    try:
        # Sorted on the driver: a global ``orderBy`` first samples its input in a job of its
        # own, which runs the whole plan (sources, user functions) a second time.
        table = df.select("v", "seq", "ch").toArrow()
    except Exception as exc:
        # A failed user function arrives as a Spark exception whose text holds the task's
        # Python traceback; surface it as the StepError (...) it was.
        error = user_error(exc)
        if error is exc:
            raise
        raise error  # noqa: B904 - user_error chose how Spark's exception is chained
    import pyarrow as pa
    import pyarrow.compute as pc

    first = -(2**63)  # nulls first, as Spark sorts them ascending
    order = pc.sort_indices(
        pa.table({k: pc.fill_null(table.column(k).cast(pa.int64()), first) for k in ("seq", "ch")}),
        sort_keys=[("seq", "ascending"), ("ch", "ascending")],
    )
    table = table.take(order)
    values = [pickle.loads(v) for v in table.column("v").to_pylist()]
    if origins:
        return [(origin_of(seq), v) for seq, v in zip(table.column("seq").to_pylist(), values, strict=True)]
    if channels:
        return list(zip(table.column("ch").to_pylist(), values, strict=True))
    return values


def _build_frames(
    spark: Any,
    nodes: Sequence[Node],
    config: LocalConfig,
    output: tuple[Node, str | None, OutputColumns] | None = None,
) -> tuple[dict[int, _Frame], list[Any]]:
    """The frame of every step of ``nodes`` (topologically ordered) but the chained ones (see
    ``chained`` and ``prechained``); also the DataFrames it persisted (steps with several
    consumers are computed once, so user functions run once per record). ``output = (step,
    tag, columns)``: that step's run pass writes its output ``tag`` as ``columns``
    (``_Frame.output``)."""
    ship_user_code()
    check_shippable(nodes)
    tags = _consumed_tags(nodes)
    sources = [n for n in nodes if isinstance(n, SourceNode)]
    uses: dict[int, int] = {}
    for node in nodes:
        for edge in node.inputs:
            uses[edge.source.id] = uses.get(edge.source.id, 0) + 1
    frames: dict[int, _Frame] = {}
    cached = []
    # With origins, each source's partitions have their place in a round of reads.
    counts = [_partitions(n) for n in sources]
    width = sum(counts)
    starts = itertools.accumulate(counts, initial=0)
    offsets = {n.id: offset for n, offset in zip(sources, starts, strict=False)}
    # What a step emits at the end of input comes after every batch, in the order the steps end.
    ends = {n.id: END_ORIGIN + rank for rank, n in enumerate(end_order(nodes))} if config.origins else {}
    before = {node.id: prechained(node, nodes, uses, config) for node in nodes}
    inside: set[int] = {step.id for steps in before.values() for step in steps}
    for node in nodes:
        if node.id in inside:
            continue
        if isinstance(node, ExternalSourceNode) and isinstance(node.handle, SourceBatches):
            frame = _Frame(node.handle.events(width, offsets[node.id]), 1)
        elif isinstance(node, ExternalSourceNode):
            frame = _Frame(node.handle, 1, FrameSource(node.handle, sources.index(node), len(sources)))
            if uses.get(node.id, 0) > 1:  # read once, as events, by all its consumers
                frame = _Frame(frame.events(), 1)
        elif isinstance(node, SourceNode):
            origins = (width, offsets[node.id]) if config.origins else None
            frame = _source_frame(spark, node, sources.index(node), len(sources), origins)
        elif isinstance(node, (OperatorNode, TimestampNode)):
            chain: list[Node] = []
            last: Node = node
            while (follower := chained(last, nodes, uses, config)) is not None:
                chain.append(follower)
                last = follower
            inside.update(n.id for n in chain)
            wanted = set(tags.get(last.id, ()))
            out = None
            if output is not None and output[0] is last and not uses.get(last.id):
                out = (output[1], output[2])
                if output[1] is not None:
                    wanted.add(output[1])
            end = ends.get(node.id)
            frame = _stage(node, frames, config, sorted(wanted), chain, out, before[node.id], end)
            node = last
        else:
            continue
        if uses.get(node.id, 0) > 1:
            frame.df = frame.df.persist()
            cached.append(frame.df)
        frames[node.id] = frame
    return frames, cached


def _partitions(node: Node) -> int:
    """How many partitions source ``node`` reads in a round (``SourceBatches``), else 1."""
    handle = getattr(node, "handle", None)
    return handle.partitions if isinstance(handle, SourceBatches) else 1


def run_batch(spark: Any, sinks: Sequence[Node], config: LocalConfig, job_name: str = "") -> JobSummary:
    """Run the bounded plan that feeds ``sinks`` on ``spark``; sinks consume on the driver
    (with ``config.origins``, ``(origin, value)`` pairs: ``LocalConfig.origins``). Returns the
    job's summary (``job_name`` empty: the front end names the job). The Spark jobs carry
    ``job_name`` and the names of the steps they run (``described_jobs``)."""
    start = time.perf_counter()
    nodes = upstream_of(sinks)
    with counting(spark) as counters:
        frames, cached = _build_frames(spark, nodes, config)
    names = {node.id: node.name for node in nodes if not isinstance(node, (SourceNode, SinkNode))}
    position = {node.id: index for index, node in enumerate(nodes)}
    try:
        with watching(spark, counters.accumulator, names):  # a bar on a terminal
            for sink in nodes:
                if isinstance(sink, SinkNode):
                    assert sink.consume is not None
                    edge = sink.inputs[0]
                    frame = frames[edge.source.id]
                    parallel = sink.writer is not None and not config.origins
                    with described_jobs(spark, job_name, _description(job_name, sink)):
                        values = _collect(frame, edge.side_tag, config.origins, channels=parallel)
                    printed = counters.printed(position)
                    if printed:  # what the job's tasks printed, here, before the sinks write
                        sys.stdout.write(printed)
                        sys.stdout.flush()
                    counters.sink_received(sink, len(values))
                    if parallel:  # each value to the sink's instance that writes it
                        take = sink_taker(sink, config, frame.channels)
                        for ch, value in values:
                            take(value, ch)
                        continue
                    for value in values:
                        sink.consume(value)
    finally:
        for df in cached:
            df.unpersist()
    widths = {node.id: parallelism(node, config) for node in nodes}
    target = f"spark ({spark_master(spark)})"
    return counters.summary(nodes, widths, target=target, wall_time_s=time.perf_counter() - start)


def _description(job_name: str, sink: Node) -> str:
    """What Spark's UI shows for the jobs that feed ``sink``: the job's name and its steps."""
    steps = " -> ".join(node.name for node in upstream_of([sink]))
    return f"{job_name}: {steps}" if job_name else steps


def batch_dataframe(spark: Any, node: Node, tag: str | None, config: LocalConfig, output_type: Any) -> Any:
    """The values of ``node``'s output ``tag`` (None: the main output) as a DataFrame whose
    schema comes from ``output_type`` (see ``_convert``). Lazy: Spark runs the plan when the
    DataFrame is used; steps with several consumers stay persisted."""
    from pyspark.sql import functions as F  # noqa: N812

    out = OutputColumns(output_type, node.name)  # its errors name the step
    frames, _cached = _build_frames(spark, upstream_of([node]), config, (node, tag, out))
    frame = frames[node.id]
    if frame.output:  # the step's run pass wrote the columns
        return frame.df
    col = F.col("tag")
    df = frame.events().where((col.isNull() if tag is None else col == tag) & F.col("wm").isNull())
    schema = out.arrow_schema()

    def decode(batches: Iterator[Any]) -> Iterator[Any]:
        for batch in batches:
            values = [pickle.loads(v) for v in batch.column("v").to_pylist()]
            cols = out.columns(values)
            yield out.record_batch([cols[n] for n in out.names], schema)

    return df.select("v").mapInArrow(worker_pass(decode), out.schema)
