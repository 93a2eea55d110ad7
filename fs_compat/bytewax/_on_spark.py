"""Dataflows on Spark: the plan conversion behind :mod:`fs_compat.bytewax.spark` and
``run_main``'s ``spark`` target."""

from __future__ import annotations

import abc
import functools
import itertools
import pickle
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any, NoReturn

import attrs

from fs_compat.common import Row, TypeInformation
from fs_compat.execution import SPARK, SPARK_STREAMING, run_plan, spark_dataframe
from fs_compat.runtime import (
    Edge,
    ExternalSourceNode,
    LocalConfig,
    Node,
    OperatorNode,
    SinkNode,
    SourceNode,
    StepError,
    publish,
    upstream_of,
)

from . import _recover_on_spark
from ._datasource import (
    DEFAULT_MAX_BATCHES,
    SOURCE_FORMAT,
    SOURCE_SCHEMA,
    SourceEffects,
    encode,
    parts_of,
    pickled,
    register,
)
from ._ops import FlatMapBatchOperator, InspectDebugOperator, PassThroughOperator, PerItem, mark, user_error
from ._ops import MsClock as _MsClock
from ._parts import call, check_flow, inspector_of, sink_parts, write
from .dataflow import Dataflow, Stream
from .errors import BytewaxRuntimeError
from .inputs import (
    AbortExecution,
    DynamicSource,
    FixedPartitionedSource,
    StatefulSourcePartition,
)
from .outputs import DynamicSink
from .recovery import RecoveryConfig


class _RowsPartition(StatefulSourcePartition[Row, int]):
    """A batch DataFrame's rows, read on the driver; the resume state is the next row's index."""

    def __init__(self, rows: list[Row], batch_size: int, resume_state: int | None) -> None:
        self._rows = rows
        self._batch_size = batch_size
        self._index = 0 if resume_state is None else resume_state

    def next_batch(self) -> list[Row]:
        if self._index >= len(self._rows):
            raise StopIteration()
        batch = self._rows[self._index : self._index + self._batch_size]
        self._index += len(batch)
        return batch

    def snapshot(self) -> int:
        return self._index


class DataFrameSource(FixedPartitionedSource[Row, int]):
    """A Spark DataFrame's rows as ``Row`` values with its field names, for
    ``op.input(step_id, flow, DataFrameSource(df))``.

    On Spark (:func:`to_dataframe`, or ``run_main`` with the ``spark`` target) the DataFrame
    stays there: its partitions are read by Spark's tasks, in the DataFrame's order. In-process
    (``run_main``) a batch DataFrame is read on the driver (``toArrow()``), ``batch_size`` rows
    per batch, so keep it small there; a streaming DataFrame runs only through
    :func:`to_dataframe`. Column types map as in ``env.from_dataframe`` (``migration_guide/spark.md``).
    """

    def __init__(self, df: Any, batch_size: int = 1) -> None:
        if not hasattr(df, "isStreaming") or not hasattr(df, "schema"):
            raise TypeError(f"DataFrameSource needs a Spark DataFrame; got a `{type(df).__name__}`")
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive int; got {batch_size!r}")
        self.df = df
        self.batch_size = batch_size

    def list_parts(self) -> list[str]:
        return ["dataframe"]

    def build_part(self, step_id: str, for_part: str, resume_state: int | None) -> _RowsPartition:
        if self.df.isStreaming:
            raise NotImplementedError(
                f"step {step_id}: a DataFrameSource over a streaming DataFrame never ends, so it "
                "cannot run in-process (run_main); use fs_compat.bytewax.spark.to_dataframe(stream) "
                "and start the result with writeStream"
            )
        from fs_compat.spark import collect_items

        rows = collect_items(ExternalSourceNode(step_id, handle=self.df))
        return _RowsPartition(rows, self.batch_size, resume_state)


# Connectors on Spark's own readers and writers. -----------------------------------------------


class SparkReadSource(FixedPartitionedSource[Any, Any]):
    """A source that Spark reads with one of its own readers (a connector such as Kafka): on
    Spark, :meth:`dataframe` is read by Spark's tasks and each of its rows becomes the item
    :meth:`item` makes of it (a module-level function: it travels to the workers). It does not
    run in-process: building a partition raises ``NotImplementedError`` with
    :meth:`in_process_alternative`."""

    @abc.abstractmethod
    def dataframe(self, spark: Any) -> Any:
        """The Spark DataFrame (batch or streaming) to read, in session ``spark``."""

    @abc.abstractmethod
    def item(self) -> Callable[[Row], Any]:
        """The function that makes an item of a row (it must pickle)."""

    @abc.abstractmethod
    def in_process_alternative(self) -> str:
        """What to do instead of running this source in-process."""

    def list_parts(self) -> list[str]:
        return [type(self).__name__]

    def build_part(self, step_id: str, for_part: str, resume_state: Any) -> NoReturn:
        raise NotImplementedError(
            f"step {step_id}: {type(self).__name__} reads through Spark and cannot run in-process; "
            + self.in_process_alternative()
        )


class SparkWriteSink(DynamicSink[Any]):
    """A sink that Spark writes with one of its own writers (a connector such as Kafka): with
    ``run_main`` on Spark the step's items are handed to :meth:`write_items` in this process; it
    does not run in-process (``NotImplementedError`` with :meth:`in_process_alternative`)."""

    @abc.abstractmethod
    def write_items(self, spark: Any, step_id: str, items: list[Any]) -> None:
        """Write ``items`` (the step's output, in order) with Spark session ``spark``."""

    @abc.abstractmethod
    def in_process_alternative(self) -> str:
        """What to do instead of running this sink in-process."""

    def build(self, step_id: str, worker_index: int, worker_count: int) -> NoReturn:
        raise NotImplementedError(
            f"step {step_id}: {type(self).__name__} writes through Spark and cannot run in-process; "
            + self.in_process_alternative()
        )


class _ItemsOf:
    """The ``flat_map_batch`` mapper that makes items of a :class:`SparkReadSource`'s rows
    (``one``: one item per row; else ``fn`` gives each row's items)."""

    def __init__(self, fn: Callable[[Row], Any], one: bool = True) -> None:
        self.fn = fn
        self.one = one
        mark(self, PerItem(fn, one=one))

    def __call__(self, rows: list[Row]) -> list[Any]:
        if self.one:
            return [self.fn(row) for row in rows]
        return [item for row in rows for item in self.fn(row)]


# Plans for Spark. ------------------------------------------------------------------------------

_IN_PROCESS_ONLY = (
    "is in-process only: on Spark a run reads its whole input once; run the flow in-process "
    "(FS_COMPAT_TARGET=local, the default of run_main) to use it"
)
_WITH_RECOVERY = (
    "ends or aborts a run, which a Spark batch run cannot do (it reads its whole input once): use the "
    "spark-streaming target (FS_COMPAT_TARGET=spark-streaming), or run the flow in-process "
    "(FS_COMPAT_TARGET=local)"
)


def _marker_check(step_id: str, item: Any, resumable: bool) -> None:
    """Refuse a ``TestingSource`` marker that a Spark run cannot honour: ``PAUSE()`` (a run on
    Spark does not wait), ``EOF()`` and ``ABORT()`` unless the run is read run by run
    (``_recover_on_spark``: on ``spark-streaming``)."""
    from .testing import TestingSource

    for marker in (TestingSource.EOF, TestingSource.ABORT, TestingSource.PAUSE):
        if isinstance(item, marker):
            if marker is TestingSource.PAUSE:
                raise NotImplementedError(f"step {step_id}: TestingSource.PAUSE() {_IN_PROCESS_ONLY}")
            if not resumable:
                raise NotImplementedError(
                    f"step {step_id}: TestingSource.{marker.__name__}() {_WITH_RECOVERY}"
                )


#: What a source's or sink's call lets through on Spark: also ``NotImplementedError`` (what a
#: run on Spark cannot do).
_THROUGH = (StopIteration, AbortExecution, BytewaxRuntimeError, NotImplementedError)


def _call(fn: Callable[..., Any], what: str, step_id: str, *args: Any) -> Any:
    return call(fn, what, step_id, *args, through=_THROUGH)


def _source_node(node: SourceNode, source: Any, reading: _Reading) -> Node:
    """The node a Bytewax source becomes on Spark: a DataFrame stays a DataFrame, a
    ``TestingSource`` is read here, on the driver, and a user-written source is read by Spark
    (``_data_source_node``)."""
    from .testing import TestingSource

    step_id = node.name
    if isinstance(source, DataFrameSource):
        if reading.origins and not source.df.isStreaming:
            from fs_compat.spark import SourceBatches

            return ExternalSourceNode(step_id, handle=SourceBatches.of_rows(source.df, source.batch_size))
        return ExternalSourceNode(step_id, handle=source.df, unbounded=bool(source.df.isStreaming))
    if isinstance(source, SparkReadSource):
        from fs_compat.spark import spark_session

        df = source.dataframe(spark_session())
        rows = ExternalSourceNode(step_id, handle=df, unbounded=bool(df.isStreaming))
        factory = functools.partial(FlatMapBatchOperator, step_id, _ItemsOf(source.item()))
        return OperatorNode(f"{step_id}.items", [Edge(rows)], operator_factory=factory, stateless=True)
    if isinstance(source, TestingSource):
        items = list(source._ib)
        for item in items:
            _marker_check(step_id, item, reading.resumable)
        if reading.resumable:  # the items are read on the driver, epoch by epoch (``_recover_on_spark``)
            return SourceNode(step_id, items=[])
        if reading.origins:
            return _testing_batches(step_id, items, source._batch_size)
        return SourceNode(step_id, items=items)
    if isinstance(source, (FixedPartitionedSource, DynamicSource)):
        return _data_source_node(step_id, source, reading)
    raise TypeError("source must subclass `fs_compat.bytewax.inputs.Source`")


@attrs.frozen
class _Reading:
    """How a run reads user-written sources: as streams or not, ``DynamicSource`` workers, a
    stream's ``next_batch`` calls per partition per micro-batch, and whether the sources are
    read as batches whose origins the run carries (``LocalConfig.origins``)."""

    streaming: bool = False
    workers: int = 1
    max_batches: int = DEFAULT_MAX_BATCHES
    origins: bool = False
    #: ``run_main`` on ``spark-streaming`` with a ``recovery_config`` or ``EOF()`` / ``ABORT()``
    #: markers: ``TestingSource`` items are read run by run (``_recover_on_spark``), so the markers
    #: are honoured.
    resumable: bool = False
    #: ``run_main`` on ``spark``: what a source's code prints, and changes in prometheus_client
    #: metrics, in a batch read (not one read with ``origins``) reaches the driver
    #: (``SourceEffects``).
    effects: bool = False


def _testing_batches(step_id: str, items: list[Any], batch_size: int) -> Node:
    """A ``TestingSource``'s items in its batches of ``batch_size``, as Spark reads them with
    their origins (``SourceBatches``)."""
    from fs_compat.spark import SourceBatches, spark_session

    what = f"step {step_id!r}: an item"
    rows = [(pickled(item, what), k // batch_size, 0, k % batch_size) for k, item in enumerate(items)]
    df = spark_session().createDataFrame(rows, schema=SOURCE_SCHEMA)
    return ExternalSourceNode(step_id, handle=SourceBatches(df, 1))


def _item_of_row(row: Row) -> Any:
    """The item a ``SourceData`` row holds."""
    return pickle.loads(row.value)


def _items_of_effects_row(row: Row) -> tuple[Any, ...]:
    """The item a ``SourceData`` row read with ``effects`` holds; a ``SourceEffects`` row gives
    no item: what it printed is printed here, and its metric changes are handed on with this
    task's, in the Spark task of the step that reads the rows (whose printed lines and metric
    changes reach the driver under ``run_main``)."""
    item = pickle.loads(row.value)
    if type(item) is SourceEffects:
        from fs_compat.spark.internal import carry_metric_changes

        sys.stdout.write(item.printed)
        carry_metric_changes(item.metrics)
        return ()
    return (item,)


def _data_source_node(step_id: str, source: Any, reading: _Reading) -> Node:
    """A user-written source read by Spark, through the ``SourceData`` Python data source: a
    batch read (in the order the in-process runner reads: a batch of each partition in turn), or
    a stream whose offsets are the partitions' resume states."""
    from fs_compat.spark import spark_session
    from fs_compat.spark.internal import ship_user_code

    spark = spark_session()
    register(spark)
    ship_user_code()
    if reading.origins and not reading.streaming:
        from fs_compat.spark import SourceBatches

        parts = len(parts_of(step_id, source, reading.workers))
        df = (
            spark.read.format(SOURCE_FORMAT)
            .option("source", encode((step_id, source), f"step {step_id!r}: the source"))
            .option("workers", str(reading.workers))
            .load()
        )
        return ExternalSourceNode(step_id, handle=SourceBatches(df, parts))
    reader = spark.readStream if reading.streaming else spark.read
    effects = reading.effects and not reading.streaming  # a stream's stay in the workers
    df = (
        reader.format(SOURCE_FORMAT)
        .option("source", encode((step_id, source), f"step {step_id!r}: the source"))
        .option("workers", str(reading.workers))
        .option("maxBatchesPerTrigger", str(reading.max_batches))
        .option("effects", "1" if effects else "0")
        .load()
    )
    if not reading.streaming:
        # In one partition, sorted there: a global ``orderBy`` samples its input in a job of
        # its own, which reads the source (and builds its partitions) a second time.
        df = df.repartition(1).sortWithinPartitions("r", "p", "i")
    rows = ExternalSourceNode(step_id, handle=df.select("value"), unbounded=reading.streaming)
    items = _ItemsOf(_items_of_effects_row, one=False) if effects else _ItemsOf(_item_of_row)
    factory = functools.partial(FlatMapBatchOperator, step_id, items)
    return OperatorNode(f"{step_id}.items", [Edge(rows)], operator_factory=factory, stateless=True)


def _clone(
    flow: Dataflow,
    targets: Sequence[Node],
    taps: list[_InspectTap] | None = None,
    reading: _Reading = _Reading(),
) -> dict[int, Node]:
    """The steps ``targets`` depend on, copied for one Spark run: sources as Spark reads them,
    the flow's own nodes untouched (a flow can run again, on any target). With ``taps``, each
    ``inspect`` step becomes a pass-through plus a tap whose items reach the driver, where its
    inspector is called (``run_main``: inspectors see the items in this process, as in Bytewax)."""
    plan = flow._plan
    new: dict[int, Node] = {}
    for node in upstream_of(targets):
        if isinstance(node, SourceNode):
            new[node.id] = _source_node(node, plan.sources[node.id], reading)
        elif isinstance(node, SinkNode):
            continue
        else:
            edges = [attrs.evolve(e, source=new[e.source.id]) for e in node.inputs]
            inspector = None if taps is None else inspector_of(node)
            if taps is None or inspector is None or not isinstance(node, OperatorNode):
                new[node.id] = attrs.evolve(node, inputs=edges)
            else:
                new[node.id] = attrs.evolve(node, inputs=edges, operator_factory=PassThroughOperator)
                taps.append(_InspectTap(new[node.id], inspector))
    return new


class _Received:
    """What a step under ``run_main`` on Spark hands the driver: its values in order, each with
    its origin (``LocalConfig.origins``; without origins, all of origin 0)."""

    def __init__(self, origins: bool) -> None:
        self.origins = origins
        self.entries: list[Any] = []

    def consume(self, entry: Any) -> None:
        self.entries.append(entry)

    def values(self) -> list[Any]:
        return [entry[1] for entry in self.entries] if self.origins else self.entries

    def batches(self) -> list[tuple[int, list[Any]]]:
        """The values as ``(origin, values)``, a batch per run of one origin, in order."""
        if not self.origins:
            return [(0, self.entries)] if self.entries else []
        return [(origin, [e[1] for e in group]) for origin, group in itertools.groupby(self.entries, _origin)]


def _origin(entry: tuple[int, Any]) -> int:
    return entry[0]


class _InspectTap:
    """An ``inspect`` step under ``run_main`` on Spark: the step passes items through on Spark,
    its items are collected here and the inspector is called on them after the job, in order."""

    def __init__(self, node: Node, operator: InspectDebugOperator) -> None:
        self.node = node
        self.operator = operator
        self.received = _Received(False)

    def sink(self, origins: bool) -> SinkNode:
        self.received = _Received(origins)
        return SinkNode(f"{self.node.name}.tap", [Edge(self.node)], consume=self.received.consume)

    def calls(self) -> list[tuple[int, Callable[[], None]]]:
        """The inspector's calls, a batch of items each, with the batch's origin."""
        return [(origin, functools.partial(self.call, values)) for origin, values in self.received.batches()]

    def call(self, values: list[Any]) -> None:
        op = self.operator
        for value in values:
            try:
                op.inspector(op.step_id, value, 1, 0)
            except Exception as exc:
                raise user_error(f"error calling inspector in step {op.step_id}", exc) from exc


def _spark_for(nodes: Iterable[Node]) -> Any:
    """The session of the flow's source DataFrames, else the shared one."""
    for node in nodes:
        if isinstance(node, ExternalSourceNode) and node.handle is not None:
            return node.handle.sparkSession
    from fs_compat.spark import spark_session

    return spark_session()


def to_dataframe(
    stream: Stream[Any],
    output_type: TypeInformation[Any] | None = None,
    *,
    parallelism: int | None = None,
    now_getter: Callable[[], datetime] | None = None,
    streaming: bool = False,
    max_batches_per_trigger: int = DEFAULT_MAX_BATCHES,
) -> Any:
    """The items of ``stream`` as a Spark DataFrame, computed on Spark from the steps the
    stream depends on (the flow's ``op.output`` steps do not run).

    The schema comes from ``output_type`` (:class:`fs_compat.common.Types`), as for
    ``DataStream.to_dataframe``: ``Types.ROW_NAMED`` / ``Types.ROW`` give one column per field,
    ``Types.TUPLE`` gives ``f0``, ``f1``, ... (a keyed stream's ``(key, value)`` items), another
    type one column ``value``, and none one binary column ``value`` of pickled items.

    With a :class:`DataFrameSource` over a streaming DataFrame, a tailing Kafka source, or
    ``streaming=True``, the result is a streaming DataFrame; start it with ``writeStream`` and a
    ``checkpointLocation``. Otherwise it is a batch DataFrame. ``parallelism`` is the number of
    Spark tasks per step (default: Spark's default parallelism), and a ``DynamicSource``'s
    worker count in a batch read.

    The flow's own sources (``FixedPartitionedSource``, ``DynamicSource``, and the connectors
    built on them) are read by Spark through a Python data source: as a batch, one Spark task per
    source partition, each read to its end; with ``streaming=True``, as a stream whose offset
    holds every partition's resume state (``snapshot()``), at most ``max_batches_per_trigger``
    ``next_batch`` calls per partition per micro-batch, so that a query restarted from its
    checkpoint resumes every partition where it was (``migration_guide/bytewax.md``, "Custom
    sources and sinks on Spark"). A ``TestingSource`` is read on the driver.

    ``now_getter`` is the processing-time clock against which ``notify_at`` times are checked
    (it travels to Spark's workers pickled). Default: the system clock on a batch DataFrame, the
    micro-batch's start time on a streaming one (due notifications fire at the start of the next
    micro-batch, also for keys that receive nothing).
    """
    if not isinstance(stream, Stream):
        raise TypeError(f"to_dataframe needs a `Stream`; got a `{type(stream).__name__}`")
    if parallelism is None:
        from fs_compat.spark import default_parallelism, spark_session

        parallelism = default_parallelism(spark_session())
    elif not isinstance(parallelism, int) or parallelism < 1:
        raise ValueError(f"parallelism must be a positive int; got {parallelism!r}")
    if not isinstance(max_batches_per_trigger, int) or max_batches_per_trigger < 1:
        raise ValueError(f"max_batches_per_trigger must be a positive int; got {max_batches_per_trigger!r}")
    reading = _Reading(bool(streaming), parallelism, max_batches_per_trigger)
    nodes = _clone(stream.flow(), [stream._node], reading=reading)
    spark = _spark_for(nodes.values())
    clock = None if now_getter is None else _MsClock(now_getter)
    config = LocalConfig(parallelism=parallelism)
    return spark_dataframe(spark, nodes[stream._node.id], stream._side_tag, config, output_type, clock=clock)


# run_main on Spark. ----------------------------------------------------------------------------


class _SinkWriter:
    """One output step on the driver: collects its values during the Spark job, then (``open``,
    ``calls``, ``close``) writes them through the Bytewax sink's partitions (``write_batch``, a
    batch per origin) and closes them."""

    def __init__(self, step_id: str, sink: Any, origins: bool) -> None:
        self.step_id = step_id
        self.sink = sink
        self.received = _Received(origins)
        self.parts: list[tuple[str, Any]] = []

    def open(self) -> None:
        if not isinstance(self.sink, SparkWriteSink):
            self.parts = sink_parts(self.step_id, self.sink)

    def calls(self, spark: Any) -> list[tuple[int, Callable[[], None]]]:
        """The writes, a batch of items each, with the batch's origin (a ``SparkWriteSink``
        gets all items at once, at the first one's origin)."""
        batches = self.received.batches()
        if isinstance(self.sink, SparkWriteSink):
            write_all = functools.partial(self.sink.write_items, spark, self.step_id, self.received.values())
            return [(batches[0][0] if batches else 0, write_all)]
        return [(origin, functools.partial(self.write, values)) for origin, values in batches]

    def write(self, values: list[Any]) -> None:
        write(self.step_id, self.sink, self.parts, values, through=_THROUGH)

    def close(self) -> None:
        for _name, part in self.parts:
            part.close()


_RAISED = re.compile(
    r"^step '(?P<step>[^']*)': (?:function|key selector) raised (?P<kind>\w+): (?P<text>.*)$"
)


_SOURCE_RAISED = re.compile(r"(?:fs_compat\.bytewax\.errors\.)?BytewaxRuntimeError: (.*)")


def _bytewax_error(exc: StepError) -> Exception:
    """The error the in-process runner raises for the same failure: ``BytewaxRuntimeError``
    for user code, ``TypeError`` for routing and type checks (the original exception stayed in
    the Spark task; its type and text are in the message)."""
    found = _RAISED.match(str(exc))
    if found is not None:
        if found["kind"] == "BytewaxRuntimeError":
            return BytewaxRuntimeError(found["text"])
        if found["kind"] == "TypeError":
            return TypeError(found["text"])
    return exc


def run_main(
    flow: Dataflow,
    epoch_interval: timedelta | None,
    recovery_config: RecoveryConfig | None,
    now_getter: Callable[[], datetime] | None,
    *,
    parallelism: int = 1,
    target: str = SPARK,
) -> None:
    """``run_main`` with the ``spark`` target (or ``spark-streaming``, ``target``: one streaming
    query, ``fs_compat.execution``): the steps run as Spark jobs, the flow's own
    sources are read by Spark's tasks (a ``TestingSource`` here), sinks are written here.
    ``epoch_interval`` is accepted (there are no epochs on Spark) except with a
    ``recovery_config``, which only the ``spark-streaming`` target takes, for flows whose inputs
    are ``TestingSource``s: each run is a run of one query kept in the recovery directory, its
    epochs micro-batches (``_recover_on_spark``). ``now_getter`` is the processing-time clock of the
    steps (it travels to Spark's workers pickled, so it cannot be moved during the run).
    ``parallelism`` is the number of Spark tasks per step (``cluster_main``'s workers); with one,
    the sinks get the output in the order the in-process run gives it."""
    if not isinstance(flow, Dataflow):
        raise TypeError("dataflow must subclass `fs_compat.bytewax.dataflow.Dataflow`")
    if epoch_interval is not None and not isinstance(epoch_interval, timedelta):
        raise TypeError("epoch interval must be a `datetime.timedelta`")
    if recovery_config is not None and target != SPARK_STREAMING:
        raise NotImplementedError(
            "run_main(recovery_config=...) on the spark target: a Spark batch run reads its whole "
            "input and either completes or fails (Spark retries failed tasks); run the flow in-process "
            "or on the spark-streaming target (FS_COMPAT_TARGET=spark-streaming), whose runs resume "
            "from the query's checkpoint; for state that survives restarts of a live stream, run the "
            "flow on a streaming DataFrame with fs_compat.bytewax.spark.to_dataframe and a checkpointLocation"
        )
    plan = flow._plan
    check_flow(plan.nodes)
    # Read run by run (``_recover_on_spark``): with a recovery_config, or markers to honour.
    resumable = recovery_config is not None or (
        target == SPARK_STREAMING and _recover_on_spark.has_markers(plan.nodes, plan.sources)
    )
    if resumable:
        _recover_on_spark.check_edges(flow, recovery_config is not None)
    sinks = [n for n in plan.nodes if isinstance(n, SinkNode)]
    # Inspect steps run also when no output step follows them, as in Bytewax.
    inspects = [n for n in plan.nodes if inspector_of(n) is not None]
    # With several steps that print (or write), each record's origin orders their lines as the
    # in-process run does (``LocalConfig.origins``): batch by batch, step by step in each; with
    # several inputs, it also orders what a step gets from them as in-process: batch by batch,
    # not item by item.
    origins = target == SPARK and (len(sinks) + len(inspects) > 1 or len(plan.sources) > 1)
    taps: list[_InspectTap] = []
    reading = _Reading(workers=parallelism, origins=origins, resumable=resumable, effects=target == SPARK)
    nodes = _clone(flow, [*sinks, *inspects], taps, reading)
    upstream = upstream_of(list(nodes.values()))
    streaming = [n.name for n in upstream if isinstance(n, ExternalSourceNode) and n.unbounded]
    if streaming:
        raise NotImplementedError(
            f"step {streaming[0]} reads a streaming DataFrame, which never ends: run_main cannot "
            "run it; use fs_compat.bytewax.spark.to_dataframe(stream) and start it with writeStream"
        )
    writers = []
    spark_sinks = []
    for sink in sinks:
        writer = _SinkWriter(sink.name, plan.sinks[sink.id], origins)
        edges = [attrs.evolve(e, source=nodes[e.source.id]) for e in sink.inputs]
        spark_sinks.append(SinkNode(sink.name, edges, consume=writer.received.consume))
        writers.append(writer)
    spark_sinks += [tap.sink(origins) for tap in taps]
    config = LocalConfig(parallelism=parallelism, origins=origins)
    if now_getter is not None:
        config = attrs.evolve(config, clock=_MsClock(now_getter))
    try:
        if resumable:
            summary = _recover_on_spark.run(
                flow,
                nodes,
                spark_sinks,
                config,
                _spark_for(upstream),
                epoch_interval,
                recovery_config,
                now_getter,
            )
        else:
            summary = run_plan(
                spark_sinks, config, target=target, spark=lambda: _spark_for(upstream), job_name=flow.flow_id
            )
    except StepError as exc:
        error = _bytewax_error(exc)
        if error is exc:
            raise
        raise error from exc
    except Exception as exc:
        # A source read by Spark's tasks (``SourceData``) failed: its named error is in the text.
        found = _SOURCE_RAISED.findall(str(exc))
        if not found:
            raise
        raise BytewaxRuntimeError(found[-1].strip()) from exc
    # The inspect and output steps print (or write) batch by batch (by origin; without origins,
    # as if the whole input were one batch), and in each batch in the order they were added to
    # the flow, as Bytewax runs the steps of a batch of items.
    position = {node.id: index for index, node in enumerate(plan.nodes)}
    spark = _spark_for(upstream)
    finish: list[tuple[int, int, Callable[[], None]]] = [
        (origin, position[tap.node.id], call) for tap in taps for origin, call in tap.calls()
    ]
    finish += [
        (origin, position[sink.id], call)
        for sink, writer in zip(sinks, writers, strict=True)
        for origin, call in writer.calls(spark)
    ]
    for writer in writers:
        writer.open()
    for *_place, done in sorted(finish, key=lambda entry: entry[:2]):
        done()
    for writer in writers:
        writer.close()
    if summary is not None:
        publish(attrs.evolve(summary, job_name=flow.flow_id))  # fs-compat run prints it
