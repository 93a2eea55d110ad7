"""DataStream, KeyedStream, ConnectedStreams, broadcast streams and StreamExecutionEnvironment:
PyFlink's names over the runtime's logical plan."""

from __future__ import annotations

import enum
import functools
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, NoReturn, overload

import attrs
from typing_extensions import TypeVar

from fs_compat.common import ExecutionConfig, JobExecutionResult, Row, Types
from fs_compat.common.internal import (
    DeclaredTypeError,
    JavaConfiguration,
    conformer,
    exact_class,
    has_float32,
)
from fs_compat.execution import SPARK, job_defaults, resolve_target, run_plan, sink_query, spark_dataframe
from fs_compat.java_gateway import JavaObjectStandIn
from fs_compat.runtime import (
    Edge,
    ExternalSourceNode,
    JobSummary,
    LocalConfig,
    Node,
    OperatorNode,
    RuntimeMode,
    SinkNode,
    SourceNode,
    TimestampNode,
    describe_callable,
    publish,
    upstream_of,
)

from ._adapters import FunctionOperator, FunctionTemplate, ReduceOperator, h_map
from ._checkpointing import CheckpointConfig, CheckpointingMode
from ._errors import job_failure
from ._format import collected, print_prefix, printed_text
from ._functions import (
    BroadcastProcessFunction,
    CoFlatMapFunction,
    CoMapFunction,
    CoProcessFunction,
    FilterFunction,
    FlatMapFunction,
    KeyedBroadcastProcessFunction,
    KeyedCoProcessFunction,
    KeyedProcessFunction,
    KeySelector,
    MapFunction,
    Partitioner,
    ProcessFunction,
    ReduceFunction,
    SinkFunction,
)
from .output_tag import OutputTag

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from fs_compat.common import Configuration, RowTypeInfo, TypeInformation, WatermarkStrategy

    from ._descriptors import MapStateDescriptor
    from ._window import WindowAssigner
    from ._window_stream import AllWindowedStream, WindowedStream
    from .connectors._base import Sink, SinkWriter, Source
    from .slot_sharing_group import SlotSharingGroup

T2 = TypeVar("T2", default=Any)
K = TypeVar("K", default=Any)
K2 = TypeVar("K2")
R = TypeVar("R")
S = TypeVar("S")
T = TypeVar("T", default=Any)


class RuntimeExecutionMode(enum.Enum):
    """STREAMING: every rolling result as records arrive. BATCH: Flink's batch semantics (one
    key at a time, final results only)."""

    STREAMING = 0
    BATCH = 1
    AUTOMATIC = 2


class TimeCharacteristic(enum.Enum):
    """Deprecated in Flink; accepted and ignored (event time is used when watermarks exist)."""

    ProcessingTime = 0
    IngestionTime = 1
    EventTime = 2


def _unsupported(api: str, instead: str) -> NotImplementedError:
    return NotImplementedError(f"{api} is not supported by fs-compat; {instead}")


def _check_fn(func: Any, base: type, method: str, what: str) -> Any:
    """A user function of class ``base`` or a plain callable (wrapped as ``base``)."""
    if isinstance(func, base):
        return func
    if callable(func):
        return _Lambda(func, method)
    raise TypeError(f"The input must be a {what} or a callable function!")


class _Lambda:
    """A plain callable standing in for a MapFunction/FlatMapFunction/FilterFunction/..."""

    def __init__(self, fn: Callable[..., Any], method: str) -> None:
        self._fn = fn
        setattr(self, method, fn)

    def __repr__(self) -> str:
        return repr(self._fn)


@functools.cache
def local_parallelism() -> int:
    """Flink's default parallelism of a local environment (what a PyFlink program started with
    ``python job.py`` runs at): the cores this process may use, as the JVM's
    ``availableProcessors`` counts them (CPU affinity, capped by a cgroup CPU quota). Read once
    per process, not at every environment."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    try:
        with open("/sys/fs/cgroup/cpu.max") as f:
            quota, period = f.read().split()[:2]
        if quota != "max":
            cores = min(cores, max(1, -(-int(quota) // int(period))))
    except (OSError, ValueError):
        pass
    return max(1, cores)


def _checked_parallelism(parallelism: int) -> int:
    if parallelism < 1:
        raise ValueError(f"parallelism must be >= 1, got {parallelism}")
    return parallelism


def _key_fn(key_selector: Any) -> Callable[[Any], Any]:
    if isinstance(key_selector, KeySelector):
        return key_selector.get_key
    if callable(key_selector):
        return key_selector  # type: ignore[no-any-return]
    raise TypeError("Parameter key_selector should be type of KeySelector or a callable function!")


class _RoundedKey:
    """A key selector whose keys of a ``key_type`` with a ``FLOAT`` in it are rounded to 32 bits,
    as PyFlink's coder of the key type rounds them (two keys that round alike are one key). A key
    that does not fit ``key_type`` is handed on as it is, for the key codec's own error."""

    def __init__(self, key_selector: Callable[[Any], Any], conform: Callable[[Any], Any]) -> None:
        self._fn = key_selector  # what errors name (``describe_callable``)
        self._conform = conform

    def __call__(self, value: Any) -> Any:
        key = self._fn(value)
        try:
            return self._conform(key)
        except DeclaredTypeError:
            return key


def _rounded_key(key_selector: Callable[[Any], Any], key_type: Any) -> Callable[[Any], Any]:
    """``key_selector``, or a ``_RoundedKey`` of it when ``key_type`` has a ``FLOAT`` in it."""
    conform = conformer(key_type) if has_float32(key_type) else None
    return key_selector if conform is None else _RoundedKey(key_selector, conform)


class _CustomPartition:
    """``partition_custom``'s routing (``Edge.partitioner``): the partition ``_fn`` (the
    partitioner, which errors name) picks for the key ``get_key`` gives a value, among ``n``."""

    def __init__(self, partition: Callable[[Any, int], int], get_key: Callable[[Any], Any]) -> None:
        self._fn = partition
        self._get_key = get_key

    def __call__(self, value: Any, n: int) -> int:
        return self._fn(self._get_key(value), n)


def _element(conform: Callable[[Any], Any], index: int, value: Any) -> Any:
    """Element ``index`` of a ``from_collection`` as its declared type makes it; one that does not
    fit is a DeclaredTypeError naming the source step, the element and the type."""
    try:
        return conform(value)
    except DeclaredTypeError as exc:
        raise DeclaredTypeError(
            exc.value, exc.declared, exc.detail, where=f"step 'Collection Source': element {index}"
        ) from None


# Handlers: how each function kind handles one element. -----------------------------------------


def _h_flat_map(fn: Any, v: Any, ctx: Any, i: int) -> Any:
    return fn.flat_map(v)


def _h_filter(fn: Any, v: Any, ctx: Any, i: int) -> Any:
    return (v,) if fn.filter(v) else ()


def _h_process(fn: Any, v: Any, ctx: Any, i: int) -> Any:
    return fn.process_element(v, ctx)


def _h_co_map(fn: Any, v: Any, ctx: Any, i: int) -> Any:
    return (fn.map1(v),) if i == 0 else (fn.map2(v),)


def _h_co_flat_map(fn: Any, v: Any, ctx: Any, i: int) -> Any:
    return fn.flat_map1(v) if i == 0 else fn.flat_map2(v)


def _h_co_process(fn: Any, v: Any, ctx: Any, i: int) -> Any:
    return fn.process_element1(v, ctx) if i == 0 else fn.process_element2(v, ctx)


def _h_broadcast(fn: Any, v: Any, ctx: Any, i: int) -> Any:
    return fn.process_element(v, ctx) if i == 0 else fn.process_broadcast_element(v, ctx)


def _h_identity(fn: Any, v: Any, ctx: Any, i: int) -> Any:
    return (v,)


class DataStream(Generic[T]):
    """A stream of values (PyFlink's DataStream). Build steps on it; ``env.execute()`` or
    ``execute_and_collect()`` runs them. ``T`` is the type of its values."""

    #: Prefix of the names of the steps built on this stream ("Keyed " on a KeyedStream).
    _prefix = ""

    def __init__(
        self,
        env: StreamExecutionEnvironment,
        node: Node,
        output_type: Any = None,
        side_tag: str | None = None,
    ) -> None:
        self._env = env
        self._node = node
        self._output_type = output_type
        self._side_tag = side_tag
        self._slot_sharing_group: str | SlotSharingGroup | None = None
        #: ``partition_custom``'s routing of this stream's values to the next step's instances.
        self._partitioner: _CustomPartition | None = None

    @property
    def _j_data_stream(self) -> JavaObjectStandIn:
        """PyFlink's handle on the JVM's DataStream: Java methods on it (``map`` with a Java
        function, ``getTransformation``) raise ``NotImplementedError`` naming the JVM."""
        return JavaObjectStandIn("DataStream")

    # Plumbing.
    def _edge(self) -> Edge:
        return Edge(self._node, side_tag=self._side_tag, partitioner=self._partitioner)

    def _keyed(self) -> bool:
        return False

    def _step(
        self,
        name: str,
        fn: Any,
        handler: Any,
        output_type: Any,
        *,
        side_outputs: bool = False,
        extra: Sequence[Edge] = (),
        broadcast_states: Sequence[str] = (),
        keyed: bool | None = None,
    ) -> DataStream[Any]:
        keyed = self._keyed() if keyed is None else keyed
        conform, shape = conformer(output_type), exact_class(output_type)
        fields = conformer(output_type, fields=True) if shape is Row else None
        template = FunctionTemplate(fn, f"step '{name}'")

        def factory() -> FunctionOperator:
            return FunctionOperator(
                template.copy(),
                handler,
                side_outputs=side_outputs,
                broadcast_states=broadcast_states,
                conform=conform,
                shape=shape,
                fields=fields,
            )

        node = OperatorNode(
            name,
            [self._edge(), *extra],
            operator_factory=factory,
            keyed=keyed,
            function=describe_callable(fn),
        )
        return DataStream(self._env, node, output_type)

    # PyFlink's DataStream API.
    def get_name(self) -> str:
        """The name of the step that produces this stream."""
        return self._node.name

    def name(self, name: str) -> DataStream[T]:
        """Name the step that produces this stream (shown in the job summary)."""
        self._node.name = name
        return self

    def uid(self, uid: str) -> DataStream[T]:
        """The step's id; here it only labels the step in the job summary."""
        self._node.uid = uid
        return self

    def set_uid_hash(self, uid_hash: str) -> DataStream[T]:
        """Accepted and ignored: there is no JVM job graph whose savepoints it would match."""
        return self

    def set_parallelism(self, parallelism: int) -> DataStream[T]:
        """How many parallel instances run the step that produces this stream (>= 1)."""
        self._node.parallelism = _checked_parallelism(parallelism)
        return self

    def set_max_parallelism(self, max_parallelism: int) -> DataStream[T]:
        """Accepted and ignored: the number of key groups is the environment's."""
        return self

    def get_type(self) -> TypeInformation[T] | None:
        """The stream's declared output type; None when its values are pickled Python objects."""
        output_type: TypeInformation[T] | None = self._output_type
        return output_type

    def force_non_parallel(self) -> DataStream[T]:
        """Run the step that produces this stream in one instance (parallelism 1)."""
        self._node.parallelism = 1
        return self

    def slot_sharing_group(self, slot_sharing_group: str | SlotSharingGroup) -> DataStream[T]:
        """Accepted and kept as a no-op hint (a name or a ``SlotSharingGroup``): Spark schedules
        tasks, there are no task slots."""
        self._slot_sharing_group = slot_sharing_group
        return self

    def set_description(self, description: str) -> DataStream[T]:
        """Accepted and ignored."""
        return self

    def disable_chaining(self) -> DataStream[T]:
        """Accepted and ignored: steps are chained by the runtime."""
        return self

    def start_new_chain(self) -> DataStream[T]:
        """Accepted and ignored: steps are chained by the runtime."""
        return self

    # Partitioning has no effect on results; keyed steps partition by key themselves.
    def forward(self) -> DataStream[T]:
        """Accepted: partitioning has no effect on results here."""
        return self

    def rebalance(self) -> DataStream[T]:
        """Accepted: partitioning has no effect on results here."""
        return self

    def rescale(self) -> DataStream[T]:
        """Accepted: partitioning has no effect on results here."""
        return self

    def shuffle(self) -> DataStream[T]:
        """Accepted: partitioning has no effect on results here."""
        return self

    def global_(self) -> DataStream[T]:
        """Accepted: partitioning has no effect on results here."""
        return self

    def partition_custom(
        self,
        partitioner: Partitioner[K2] | Callable[[K2, int], int],
        key_selector: KeySelector[T, K2] | Callable[[T], K2],
    ) -> DataStream[T]:
        """This stream with each value sent to the parallel instance of the next step that
        ``partitioner`` (a Partitioner or a callable) picks for the value's key (what
        ``key_selector`` gives): ``partition(key, num_partitions)``, where ``num_partitions`` is
        the next step's parallelism, returns an index in ``[0, num_partitions)``. As in Flink,
        the stream is not keyed (no keyed state), and a step that keys it again (``key_by``)
        partitions by its own key.

        >>> env = StreamExecutionEnvironment.get_execution_environment()
        >>> class Where(MapFunction):
        ...     def open(self, runtime_context):
        ...         self.index = runtime_context.get_index_of_this_subtask()
        ...
        ...     def map(self, value):
        ...         return value, self.index
        >>> ds = env.from_collection([1, 2, 3, 4]).partition_custom(lambda key, n: key % n, lambda v: v)
        >>> sorted(ds.map(Where()).set_parallelism(2).execute_and_collect(limit=4))
        [(1, 1), (2, 0), (3, 1), (4, 0)]
        """
        if isinstance(partitioner, Partitioner):
            partition: Callable[[Any, int], int] = partitioner.partition
        elif callable(partitioner):
            partition = partitioner
        else:
            raise TypeError("Parameter partitioner should be type of Partitioner or a callable function.")
        if not isinstance(key_selector, KeySelector) and not callable(key_selector):
            raise TypeError("Parameter key_selector should be type of KeySelector or a callable function.")
        stream: DataStream[T] = DataStream(self._env, self._node, self._output_type, self._side_tag)
        stream._partitioner = _CustomPartition(partition, _key_fn(key_selector))
        return stream

    @overload
    def map(
        self, func: MapFunction[T, Any] | Callable[[T], Any], output_type: RowTypeInfo
    ) -> DataStream[Row]: ...
    @overload
    def map(
        self, func: MapFunction[T, R] | Callable[[T], R], output_type: TypeInformation[R] | None = None
    ) -> DataStream[R]: ...
    def map(
        self, func: MapFunction[T, Any] | Callable[[T], Any], output_type: TypeInformation[Any] | None = None
    ) -> DataStream[Any]:
        """One output per value: ``func`` (a MapFunction or a callable) applied to it.
        ``output_type`` declares the outputs' type; with a ``Types.ROW``/``ROW_NAMED`` type, tuples
        become ``Row`` values.

        >>> env = StreamExecutionEnvironment.get_execution_environment()
        >>> env.from_collection([1, 2, 3]).map(lambda x: x + 1).execute_and_collect(limit=3)
        [2, 3, 4]
        """
        fn = _check_fn(func, MapFunction, "map", "MapFunction")
        return self._step(self._prefix + "Map", fn, h_map, output_type)

    @overload
    def flat_map(
        self, func: FlatMapFunction[T, Any] | Callable[[T], Iterable[Any] | None], output_type: RowTypeInfo
    ) -> DataStream[Row]: ...
    @overload
    def flat_map(
        self,
        func: FlatMapFunction[T, R] | Callable[[T], Iterable[R] | None],
        output_type: TypeInformation[R] | None = None,
    ) -> DataStream[R]: ...
    def flat_map(
        self,
        func: FlatMapFunction[T, Any] | Callable[[T], Iterable[Any] | None],
        output_type: TypeInformation[Any] | None = None,
    ) -> DataStream[Any]:
        """Any number of outputs per value: the values ``func`` (a FlatMapFunction or a callable)
        returns or yields for it.

        >>> env = StreamExecutionEnvironment.get_execution_environment()
        >>> env.from_collection(["a b", "c"]).flat_map(str.split).execute_and_collect(limit=3)
        ['a', 'b', 'c']
        """
        fn = _check_fn(func, FlatMapFunction, "flat_map", "FlatMapFunction")
        return self._step(self._prefix + "FlatMap", fn, _h_flat_map, output_type)

    def filter(self, func: FilterFunction[T] | Callable[[T], object]) -> DataStream[T]:
        """The values for which ``func`` (a FilterFunction or a callable) is true."""
        fn = _check_fn(func, FilterFunction, "filter", "FilterFunction")
        return self._step(self._prefix + "Filter", fn, _h_filter, self._output_type)

    @overload
    def process(self, func: ProcessFunction[T, Any], output_type: RowTypeInfo) -> DataStream[Row]: ...
    @overload
    def process(
        self, func: ProcessFunction[T, R], output_type: TypeInformation[R] | None = None
    ) -> DataStream[R]: ...
    def process(
        self, func: ProcessFunction[T, Any], output_type: TypeInformation[Any] | None = None
    ) -> DataStream[Any]:
        """The values ``func.process_element(value, ctx)`` returns or yields for each value;
        ``yield tag, value`` with an ``OutputTag`` sends ``value`` to that side output."""
        if not isinstance(func, ProcessFunction):
            raise TypeError("ProcessFunction is required for DataStream.")
        return self._step("Process", func, _h_process, output_type, side_outputs=True)

    def key_by(
        self,
        key_selector: KeySelector[T, K2] | Callable[[T], K2],
        key_type: TypeInformation[K2] | None = None,
    ) -> KeyedStream[T, K2]:
        """This stream partitioned by the key ``key_selector`` (a KeySelector or a callable) gives
        each value: steps on the KeyedStream get keyed state and timers. ``key_type`` declares the
        key's type (and its encoding)."""
        return KeyedStream(self, _key_fn(key_selector), key_type)

    def union(self, *streams: DataStream[T]) -> DataStream[T]:
        """The values of this stream and of ``streams``, in one stream. The union of keyed
        streams is a plain stream, as in PyFlink: its records no longer travel by key."""
        edges = [attrs.evolve(s._edge(), key_selector=None, key_codec=None) for s in (self, *streams)]

        def factory() -> FunctionOperator:
            return FunctionOperator(None, _h_identity)

        return DataStream(
            self._env, OperatorNode("Union", edges, operator_factory=factory), self._output_type
        )

    @overload
    def connect(self, ds: BroadcastStream[T2]) -> BroadcastConnectedStream[T, T2]: ...
    @overload
    def connect(self, ds: DataStream[T2]) -> ConnectedStreams[T, T2]: ...
    def connect(
        self, ds: DataStream[T2] | BroadcastStream[T2]
    ) -> ConnectedStreams[T, T2] | BroadcastConnectedStream[T, T2]:
        """This stream and ``ds`` together, for a Co* function (or, with a BroadcastStream, a
        (Keyed)BroadcastProcessFunction)."""
        if isinstance(ds, BroadcastStream):
            return BroadcastConnectedStream(self, ds)
        return ConnectedStreams(self, ds)

    @overload
    def broadcast(self, broadcast_state_descriptor: None = None) -> DataStream[T]: ...
    @overload
    def broadcast(
        self,
        broadcast_state_descriptor: MapStateDescriptor[Any, Any],
        *other_broadcast_state_descriptors: MapStateDescriptor[Any, Any],
    ) -> BroadcastStream[T]: ...
    def broadcast(
        self,
        broadcast_state_descriptor: MapStateDescriptor[Any, Any] | None = None,
        *other_broadcast_state_descriptors: MapStateDescriptor[Any, Any],
    ) -> DataStream[T] | BroadcastStream[T]:
        """With descriptors: a BroadcastStream (every parallel instance sees every value) with
        those broadcast states, to ``connect`` to another stream. Without: this stream."""
        if broadcast_state_descriptor is None:
            return self
        return BroadcastStream(self, [broadcast_state_descriptor, *other_broadcast_state_descriptors])

    def assign_timestamps_and_watermarks(self, watermark_strategy: WatermarkStrategy) -> DataStream[T]:
        """This stream with event timestamps and watermarks from ``watermark_strategy``."""
        node = TimestampNode(
            "Timestamps/Watermarks",
            [self._edge()],
            extract=watermark_strategy.extract_timestamp,
            out_of_orderness_ms=watermark_strategy.max_out_of_orderness_ms,
            per_element=watermark_strategy.per_element,
        )
        return DataStream(self._env, node, self._output_type)

    def get_side_output(self, output_tag: OutputTag[S]) -> DataStream[S]:
        """The values this stream's step sent to the side output ``output_tag``."""
        return DataStream(self._env, self._node, output_tag.type_info, side_tag=output_tag.tag_id)

    def add_sink(self, sink_func: SinkFunction[T]) -> DataStreamSink:
        """Hand every value to ``sink_func.invoke`` when the job runs; the legacy connector
        sinks (``StreamingFileSink``, ``FlinkKafkaProducer``) write as ``sink_to`` does."""
        if _is_connector_sink(sink_func):
            return self._sink_through(sink_func, "Sink: Unnamed")
        # PyFlink's sink functions are Java's: a FLOAT arrives as Java's Float (collected()).
        as_pyflink, invoke = collected(self._output_type), sink_func.invoke
        consume = invoke if as_pyflink is None else lambda v: invoke(as_pyflink(v))
        return self._env._add_sink(SinkNode("Sink", [self._edge()], consume=consume))

    def sink_to(self, sink: Sink | SinkFunction[T]) -> DataStreamSink:
        """Write every value with a connector sink (``FileSink``, ``KafkaSink``:
        ``fs_compat.datastream.connectors``); a SinkFunction as ``add_sink``."""
        if _is_connector_sink(sink):
            return self._sink_through(sink, "Sink: Writer")
        if isinstance(sink, SinkFunction):
            return self.add_sink(sink)
        raise _unsupported(
            f"DataStream.sink_to({type(sink).__name__})",
            "use FileSink or KafkaSink (fs_compat.datastream.connectors), or ds.to_dataframe() and "
            "Spark's writers (parquet, Kafka, foreachBatch)",
        )

    def _sink_through(self, sink: Any, name: str) -> DataStreamSink:
        """A connector sink: bounded jobs hand every value to its writer (on the driver), which
        commits when the job succeeded; unbounded ones write through Spark (``_stream_write``)."""
        output_type = self._output_type
        writer = sink._writer(output_type)
        node = SinkNode(name, [self._edge()], consume=writer.write)
        return self._env._add_connector_sink(node, sink, writer, self)

    def _stateless_map(
        self, name: str, fn: Callable[[Any], Any], output_type: Any, *, flat: bool = False
    ) -> DataStream[Any]:
        """A step of fs-compat's own (decoding a source's records, encoding a sink's): one
        output per value (``flat``: the values ``fn`` returns), no state, so an engine may run it
        wherever the records are."""
        template = _Lambda(fn, "flat_map" if flat else "map")
        handler = _h_flat_map if flat else h_map

        def factory() -> FunctionOperator:
            return FunctionOperator(template, handler)

        node = OperatorNode(name, [self._edge()], operator_factory=factory, stateless=True)
        return DataStream(self._env, node, output_type)

    def print(self, sink_identifier: str | None = None) -> DataStreamSink:
        """Print every value when the job runs, prefixed as Flink's print sink does: with
        ``sink_identifier> ``, and when the sink runs in parallel (the job's parallelism, or the
        sink's ``set_parallelism``) with the printing instance's number, ``N> `` or
        ``sink_identifier:N> `` (N from 1). The instance is its input's when the two have the same
        parallelism (Flink chains them), the key's on a ``KeyedStream``, else round-robin."""
        # PyFlink prints pickled values (no declared output type) with Python's ``str``, rows
        # as its Python side makes them text, other values of a declared type as Flink's Java
        # side shows them.
        show = printed_text(self._output_type)

        def writer(index: int, parallelism: int) -> Callable[[Any], None]:
            prefix = print_prefix(sink_identifier, index, parallelism)

            def emit(value: Any) -> None:
                print(prefix + show(value))

            return emit

        node = SinkNode("Print", [self._edge()], consume=writer(0, 1), writer=writer)
        return self._env._add_sink(node)

    @overload
    def execute_and_collect(
        self, job_execution_name: str | None = None, limit: None = None
    ) -> CloseableIterator[T]: ...
    @overload
    def execute_and_collect(self, job_execution_name: str | None, limit: int) -> list[T]: ...
    @overload
    def execute_and_collect(self, job_execution_name: str | None = None, *, limit: int) -> list[T]: ...
    def execute_and_collect(
        self, job_execution_name: str | None = None, limit: int | None = None
    ) -> CloseableIterator[T] | list[T]:
        """Run the job and return its values: a closeable iterator, or a list of at most
        ``limit`` values when ``limit`` is given."""
        results: list[T] = []
        as_pyflink = collected(self._output_type)  # FLOAT parts as PyFlink's collect gives them
        keep = results.append if as_pyflink is None else lambda v: results.append(as_pyflink(v))
        sink = SinkNode("Collect", [self._edge()], consume=keep)
        self._env._run([*self._env._take_sinks(), sink], job_execution_name or "collect")
        if limit is not None:
            return results[:limit]
        return CloseableIterator(iter(results))

    def to_dataframe(self) -> DataFrame:
        """fs-compat extension: this stream as a Spark DataFrame, to write with Spark's own writers
        (parquet, Delta, Kafka, ``foreachBatch``). Its schema comes from the stream's output type:
        a ``ROW``/``ROW_NAMED`` as its fields, a ``TUPLE`` as ``f0``, ``f1``, ...; another type as one
        column ``value``; no type (pickled values) as a binary column ``value``. On a streaming
        DataFrame source it is a streaming DataFrame: start it with ``writeStream`` (with a
        ``checkpointLocation``, which holds the job's state)."""
        df: DataFrame = self._env._to_dataframe(self._node, self._side_tag, self._output_type)
        return df

    def project(self, *field_indexes: int) -> DataStream[tuple[Any, ...]]:
        """The fields at ``field_indexes`` of each tuple, as a tuple (PyFlink's projection)."""
        indexes = tuple(field_indexes)

        def pick(value: Any) -> tuple[Any, ...]:
            return tuple(value[i] for i in indexes)

        return self.map(pick)

    def cache(self) -> DataStream[T]:
        """Not supported (raises NotImplementedError): build the stream once and consume it from
        several steps."""
        raise _unsupported("DataStream.cache", "build the stream once and consume it from several steps")

    def window_all(self, window_assigner: WindowAssigner[T, Any]) -> AllWindowedStream[T]:
        """Windows over the whole (non-keyed) stream, evaluated by one task."""
        from ._window_stream import AllWindowedStream

        return AllWindowedStream(self, window_assigner)

    def count_window_all(self, size: int, slide: int = 0) -> AllWindowedStream[T]:
        """Tumbling (``slide == 0``) or sliding windows of ``size`` elements over the whole stream
        (Java Flink's ``countWindowAll``)."""
        from ._window import CountSlidingWindowAssigner, CountTumblingWindowAssigner

        if slide == 0:
            return self.window_all(CountTumblingWindowAssigner(size))
        return self.window_all(CountSlidingWindowAssigner(size, slide))


_NO_REPARTITION = "Cannot override partitioning for KeyedStream."

#: The setting that picks the trigger of the streaming queries ``execute()`` starts.
_TRIGGER_KEY = "fs_compat.streaming.trigger"


def _trigger(value: str) -> dict[str, Any]:
    """The ``DataStreamWriter.trigger`` arguments for the ``fs_compat.streaming.trigger``
    setting: ``available-now`` (process what is there, then stop), or none (Spark's default)."""
    if not value:
        return {}
    if value == "available-now":
        return {"availableNow": True}
    raise ValueError(f"{_TRIGGER_KEY} must be 'available-now' or unset, got {value!r}")


def _checkpoint_folders(sinks: Sequence[SinkNode]) -> list[str]:
    """The checkpoint folder of each sink's streaming query: its uid, else its name, with what
    is not a letter, digit, ``.``, ``_`` or ``-`` replaced by ``_``; a name used again gets
    ``-2``, ``-3`` ... in program order, so a restarted job finds its queries' checkpoints.

    >>> sinks = [SinkNode("Sink: Writer"), SinkNode("Sink: Writer", uid="out"), SinkNode("Sink: Writer")]
    >>> _checkpoint_folders(sinks)
    ['Sink__Writer', 'out', 'Sink__Writer-2']
    """
    import re

    folders: list[str] = []
    for node in sinks:
        base = re.sub(r"[^A-Za-z0-9._-]", "_", node.uid or node.name)
        folder, n = base, 1
        while folder in folders:
            n += 1
            folder = f"{base}-{n}"
        folders.append(folder)
    return folders


def _is_connector_sink(sink: object) -> bool:
    """A sink of ``fs_compat.datastream.connectors`` (it writes through ``_writer``)."""
    from .connectors._base import Sink
    from .connectors._file_system import StreamingFileSink
    from .connectors._kafka import FlinkKafkaProducer

    return isinstance(sink, (Sink, StreamingFileSink, FlinkKafkaProducer))


class KeyedStream(DataStream[T], Generic[T, K]):
    """A stream partitioned by key (``DataStream.key_by``): steps on it get keyed state and
    timers. ``T`` is the values' type, ``K`` the keys'."""

    _prefix = "Keyed "

    def __init__(
        self, origin: DataStream[T], key_selector: Callable[[T], K], key_type: TypeInformation[K] | None
    ) -> None:
        super().__init__(origin._env, origin._node, origin._output_type, origin._side_tag)
        self._origin = origin
        self._key_selector = _rounded_key(key_selector, key_type)
        self._key_type = key_type

    def _edge(self) -> Edge:
        codec = self._key_type.codec() if self._key_type is not None else None
        return Edge(self._node, side_tag=self._side_tag, key_selector=self._key_selector, key_codec=codec)

    def _keyed(self) -> bool:
        return True

    def uid(self, uid: str) -> DataStream[T]:
        """Accepted: ``key_by`` is no step of its own here."""
        return self

    @overload  # type: ignore[override]
    def execute_and_collect(
        self, job_execution_name: str | None = None, limit: None = None
    ) -> CloseableIterator[Row]: ...
    @overload
    def execute_and_collect(self, job_execution_name: str | None, limit: int) -> list[Row]: ...
    @overload
    def execute_and_collect(self, job_execution_name: str | None = None, *, limit: int) -> list[Row]: ...
    def execute_and_collect(
        self, job_execution_name: str | None = None, limit: int | None = None
    ) -> CloseableIterator[Row] | list[Row]:
        """As PyFlink: a KeyedStream collects as ``Row(f0=key, f1=value)``, of type
        ``Types.ROW([key_type, the stream's type])`` (a FLOAT part as PyFlink collects it)."""
        from fs_compat.common import Row

        key_of, value_type = self._key_selector, self._origin._output_type
        row_type = None
        if value_type is not None or self._key_type is not None:
            pickled = Types.PICKLED_BYTE_ARRAY()
            row_type = Types.ROW([self._key_type or pickled, value_type or pickled])
        pairs = self._origin.map(lambda v: Row(f0=key_of(v), f1=v), output_type=row_type)
        return pairs.execute_and_collect(job_execution_name, limit)

    # PyFlink refuses these on a KeyedStream.
    def name(self, name: str) -> DataStream[T]:
        """Refused, as in PyFlink: a KeyedStream is no step of its own."""
        raise Exception("Set name for KeyedStream is not supported.")

    def set_parallelism(self, parallelism: int) -> DataStream[T]:
        """Refused, as in PyFlink: a KeyedStream is no step of its own."""
        raise Exception("Set parallelism for KeyedStream is not supported.")

    def shuffle(self) -> DataStream[T]:
        """Refused, as in PyFlink: a KeyedStream is partitioned by its key."""
        raise Exception(_NO_REPARTITION)

    def rescale(self) -> DataStream[T]:
        """Refused, as in PyFlink: a KeyedStream is partitioned by its key."""
        raise Exception(_NO_REPARTITION)

    def rebalance(self) -> DataStream[T]:
        """Refused, as in PyFlink: a KeyedStream is partitioned by its key."""
        raise Exception(_NO_REPARTITION)

    def forward(self) -> DataStream[T]:
        """Refused, as in PyFlink: a KeyedStream is partitioned by its key."""
        raise Exception(_NO_REPARTITION)

    def global_(self) -> DataStream[T]:
        """Refused, as in PyFlink: a KeyedStream is partitioned by its key."""
        raise Exception(_NO_REPARTITION)

    def broadcast(
        self,
        broadcast_state_descriptor: MapStateDescriptor[Any, Any] | None = None,
        *other_broadcast_state_descriptors: MapStateDescriptor[Any, Any],
    ) -> NoReturn:
        """Refused, as in PyFlink: a KeyedStream is partitioned by its key."""
        raise Exception(_NO_REPARTITION)

    def partition_custom(
        self, partitioner: object, key_selector: KeySelector[T, Any] | Callable[[T], Any]
    ) -> DataStream[T]:
        """Refused, as in PyFlink: a KeyedStream is partitioned by its key."""
        raise Exception(_NO_REPARTITION)

    @overload  # type: ignore[override]
    def process(self, func: KeyedProcessFunction[K, T, Any], output_type: RowTypeInfo) -> DataStream[Row]: ...
    @overload
    def process(
        self, func: KeyedProcessFunction[K, T, R], output_type: TypeInformation[R] | None = None
    ) -> DataStream[R]: ...
    def process(
        self, func: KeyedProcessFunction[K, T, Any], output_type: TypeInformation[Any] | None = None
    ) -> DataStream[Any]:
        """The values ``func.process_element(value, ctx)`` (and ``func.on_timer``) return or yield,
        with keyed state and timers for the current key; ``yield tag, value`` with an ``OutputTag``
        sends ``value`` to that side output.

        >>> from fs_compat.common import Types
        >>> from fs_compat.datastream.state import ValueStateDescriptor
        >>> class Count(KeyedProcessFunction):
        ...     def open(self, runtime_context):
        ...         self.seen = runtime_context.get_state(ValueStateDescriptor("seen", Types.INT()))
        ...
        ...     def process_element(self, value, ctx):
        ...         seen = (self.seen.value() or 0) + 1
        ...         self.seen.update(seen)
        ...         yield ctx.get_current_key(), seen
        >>> env = StreamExecutionEnvironment.get_execution_environment()
        >>> words = env.from_collection(["a", "b", "a"])
        >>> words.key_by(lambda w: w).process(Count()).execute_and_collect(limit=3)
        [('a', 1), ('b', 1), ('a', 2)]
        """
        if not isinstance(func, KeyedProcessFunction):
            raise TypeError("KeyedProcessFunction is required for KeyedStream.")
        return self._step("Keyed Process", func, _h_process, output_type, side_outputs=True)

    def reduce(self, func: ReduceFunction[T] | Callable[[T, T], T]) -> DataStream[T]:
        """The rolling reduction per key: every value combined with the key's previous result
        (in BATCH mode, only each key's final result)."""
        if isinstance(func, ReduceFunction):
            fn: Any = func
            reduce: Callable[[T, T], T] = func.reduce
        elif callable(func):
            fn, reduce = None, func
        else:
            raise TypeError("The input must be a ReduceFunction or a callable function!")
        template = FunctionTemplate((reduce, fn), "step 'Keyed Reduce'")
        env, conform = self._env, conformer(self._output_type)

        def factory() -> ReduceOperator:
            r, f = template.copy()
            return ReduceOperator(r, f, env._mode is RuntimeExecutionMode.BATCH, conform)

        node = OperatorNode("Keyed Reduce", [self._edge()], operator_factory=factory, keyed=True)
        return DataStream(self._env, node, self._output_type)

    def _accumulate(self, position: int | str, kind: str) -> DataStream[T]:
        if not isinstance(position, (int, str)):
            raise TypeError(
                "The field position must be of int or str type to locate the value to calculate for "
                f"min, max, min_by, max_by and sum.The given type is: {type(position)}"
            )
        return self.reduce(_Accumulate(position, kind))

    def sum(self, position_to_sum: int | str = 0) -> DataStream[T]:
        """The rolling sum per key of the field at ``position_to_sum`` (index or name)."""
        return self._accumulate(position_to_sum, "sum")

    def min(self, position_to_min: int | str = 0) -> DataStream[T]:
        """The rolling minimum per key of the field at ``position_to_min`` (other fields as in the
        key's first value)."""
        return self._accumulate(position_to_min, "min")

    def max(self, position_to_max: int | str = 0) -> DataStream[T]:
        """The rolling maximum per key of the field at ``position_to_max`` (other fields as in the
        key's first value)."""
        return self._accumulate(position_to_max, "max")

    def min_by(self, position_to_min_by: int | str = 0) -> DataStream[T]:
        """Per key, the value with the smallest field at ``position_to_min_by`` so far."""
        return self._accumulate(position_to_min_by, "min_by")

    def max_by(self, position_to_max_by: int | str = 0) -> DataStream[T]:
        """Per key, the value with the largest field at ``position_to_max_by`` so far."""
        return self._accumulate(position_to_max_by, "max_by")

    def key_by(
        self,
        key_selector: KeySelector[T, K2] | Callable[[T], K2],
        key_type: TypeInformation[K2] | None = None,
    ) -> KeyedStream[T, K2]:
        """The stream this one was keyed from, keyed by ``key_selector`` instead."""
        return self._origin.key_by(key_selector, key_type)

    def window(self, window_assigner: WindowAssigner[T, Any]) -> WindowedStream[T, K]:
        """Windows per key: elements are grouped by key and by the windows the assigner gives."""
        from ._window_stream import WindowedStream

        return WindowedStream(self, window_assigner)

    def count_window(self, size: int, slide: int = 0) -> WindowedStream[T, K]:
        """Tumbling (``slide == 0``) or sliding windows of ``size`` elements per key."""
        from ._window import CountSlidingWindowAssigner, CountTumblingWindowAssigner

        if slide == 0:
            return self.window(CountTumblingWindowAssigner(size))
        return self.window(CountSlidingWindowAssigner(size, slide))


class _Accumulate(ReduceFunction[Any]):
    """sum / min / max / min_by / max_by at a position of tuples, lists, Rows or basic values."""

    def __init__(self, position: int | str, kind: str) -> None:
        self.pos = position
        self.kind = kind

    def reduce(self, value1: Any, value2: Any) -> Any:
        from fs_compat.common import Row

        pos, kind = self.pos, self.kind
        composite = isinstance(value1, (tuple, list, Row))
        if not composite and pos != 0:
            raise TypeError(f"The position must be 0 for basic values, got {pos!r}")
        a = value1[pos] if composite else value1
        b = value2[pos] if composite else value2
        if kind == "min_by":
            return value2 if b < a else value1
        if kind == "max_by":
            return value2 if b > a else value1
        new = a + b if kind == "sum" else (b if (b < a if kind == "min" else b > a) else a)
        if not composite:
            return new
        if isinstance(value1, tuple):
            items = list(value1)
            items[pos if isinstance(pos, int) else 0] = new
            return tuple(items)
        value1[pos] = new
        return value1


class ConnectedStreams(Generic[T, T2]):
    """Two streams processed together by Co* functions (keyed when both are keyed): ``T`` is the
    first stream's value type, ``T2`` the second's."""

    def __init__(self, stream1: DataStream[T], stream2: DataStream[T2]) -> None:
        self.stream1 = stream1
        self.stream2 = stream2

    def key_by(
        self,
        key_selector1: KeySelector[T, K2] | Callable[[T], K2],
        key_selector2: KeySelector[T2, K2] | Callable[[T2], K2],
        key_type: TypeInformation[K2] | None = None,
    ) -> ConnectedStreams[T, T2]:
        """Both streams keyed, each by its own key selector (the keys must match to meet)."""
        return ConnectedStreams(
            self.stream1.key_by(key_selector1, key_type), self.stream2.key_by(key_selector2, key_type)
        )

    def _keyed(self) -> bool:
        return self.stream1._keyed() and self.stream2._keyed()

    @overload
    def map(self, func: CoMapFunction[T, T2, Any], output_type: RowTypeInfo) -> DataStream[Row]: ...
    @overload
    def map(
        self, func: CoMapFunction[T, T2, R], output_type: TypeInformation[R] | None = None
    ) -> DataStream[R]: ...
    def map(
        self, func: CoMapFunction[T, T2, Any], output_type: TypeInformation[Any] | None = None
    ) -> DataStream[Any]:
        """One output per value: ``func.map1`` for the first stream's, ``func.map2`` for the
        second's."""
        if not isinstance(func, CoMapFunction):
            raise TypeError("The input must be a CoMapFunction!")
        return self.stream1._step(
            "Co-Map", func, _h_co_map, output_type, extra=[self.stream2._edge()], keyed=self._keyed()
        )

    @overload
    def flat_map(self, func: CoFlatMapFunction[T, T2, Any], output_type: RowTypeInfo) -> DataStream[Row]: ...
    @overload
    def flat_map(
        self, func: CoFlatMapFunction[T, T2, R], output_type: TypeInformation[R] | None = None
    ) -> DataStream[R]: ...
    def flat_map(
        self, func: CoFlatMapFunction[T, T2, Any], output_type: TypeInformation[Any] | None = None
    ) -> DataStream[Any]:
        """Any number of outputs per value: ``func.flat_map1`` for the first stream's values,
        ``func.flat_map2`` for the second's."""
        if not isinstance(func, CoFlatMapFunction):
            raise TypeError("The input must be a CoFlatMapFunction!")
        return self.stream1._step(
            "Co-Flat Map",
            func,
            _h_co_flat_map,
            output_type,
            extra=[self.stream2._edge()],
            keyed=self._keyed(),
        )

    @overload
    def process(
        self,
        func: CoProcessFunction[T, T2, Any] | KeyedCoProcessFunction[Any, T, T2, Any],
        output_type: RowTypeInfo,
    ) -> DataStream[Row]: ...
    @overload
    def process(
        self,
        func: CoProcessFunction[T, T2, R] | KeyedCoProcessFunction[Any, T, T2, R],
        output_type: TypeInformation[R] | None = None,
    ) -> DataStream[R]: ...
    def process(
        self,
        func: CoProcessFunction[T, T2, Any] | KeyedCoProcessFunction[Any, T, T2, Any],
        output_type: TypeInformation[Any] | None = None,
    ) -> DataStream[Any]:
        """``func.process_element1`` for the first stream's values, ``process_element2`` for the
        second's: a KeyedCoProcessFunction (with keyed state and timers) when both streams are
        keyed, else a CoProcessFunction."""
        if self._keyed():
            if not isinstance(func, KeyedCoProcessFunction):
                raise TypeError("KeyedCoProcessFunction is required for keyed ConnectedStreams.")
        elif not isinstance(func, CoProcessFunction):
            raise TypeError("CoProcessFunction is required for non-keyed ConnectedStreams.")
        return self.stream1._step(
            "Co-Process",
            func,
            _h_co_process,
            output_type,
            extra=[self.stream2._edge()],
            side_outputs=True,
            keyed=self._keyed(),
        )


class BroadcastStream(Generic[T]):
    """A stream whose elements reach every parallel instance, with its broadcast state names."""

    def __init__(self, stream: DataStream[T], descriptors: Sequence[MapStateDescriptor[Any, Any]]) -> None:
        self.stream = stream
        self.descriptors = list(descriptors)


class BroadcastConnectedStream(Generic[T, T2]):
    """A (keyed or non-keyed) stream of ``T`` connected with a BroadcastStream of ``T2``."""

    def __init__(self, stream: DataStream[T], broadcast_stream: BroadcastStream[T2]) -> None:
        self.stream = stream
        self.broadcast_stream = broadcast_stream

    @overload
    def process(
        self,
        func: BroadcastProcessFunction[T, T2, Any] | KeyedBroadcastProcessFunction[Any, T, T2, Any],
        output_type: RowTypeInfo,
    ) -> DataStream[Row]: ...
    @overload
    def process(
        self,
        func: BroadcastProcessFunction[T, T2, R] | KeyedBroadcastProcessFunction[Any, T, T2, R],
        output_type: TypeInformation[R] | None = None,
    ) -> DataStream[R]: ...
    def process(
        self,
        func: BroadcastProcessFunction[T, T2, Any] | KeyedBroadcastProcessFunction[Any, T, T2, Any],
        output_type: TypeInformation[Any] | None = None,
    ) -> DataStream[Any]:
        """``func.process_element`` for the stream's values (broadcast state read-only),
        ``process_broadcast_element`` for the broadcast values (broadcast state writable): a
        KeyedBroadcastProcessFunction on a keyed stream, else a BroadcastProcessFunction."""
        keyed = self.stream._keyed()
        if keyed and not isinstance(func, KeyedBroadcastProcessFunction):
            raise TypeError("KeyedBroadcastProcessFunction is required for a keyed BroadcastConnectedStream.")
        if not keyed and not isinstance(func, BroadcastProcessFunction):
            raise TypeError("BroadcastProcessFunction is required for a non-keyed BroadcastConnectedStream.")
        bs = self.broadcast_stream.stream
        edge = Edge(bs._node, side_tag=bs._side_tag, broadcast=True)
        names = [d.get_name() for d in self.broadcast_stream.descriptors]
        return self.stream._step(
            "Broadcast Process",
            func,
            _h_broadcast,
            output_type,
            extra=[edge],
            broadcast_states=names,
            side_outputs=True,
            keyed=keyed,
        )


class DataStreamSink:
    """What ``add_sink`` / ``print`` return."""

    def __init__(self, node: SinkNode) -> None:
        self._node = node

    def name(self, name: str) -> DataStreamSink:
        """Name the sink step (shown in the job summary)."""
        self._node.name = name
        return self

    def uid(self, uid: str) -> DataStreamSink:
        """The sink step's id; here it only labels the step in the job summary."""
        self._node.uid = uid
        return self

    def set_parallelism(self, parallelism: int) -> DataStreamSink:
        """The sink's parallelism: a ``print()`` names its printing instance in each line when it
        is above 1. Other sinks write where their input's step runs: accepted and ignored."""
        self._node.parallelism = _checked_parallelism(parallelism)
        return self

    def set_description(self, description: str) -> DataStreamSink:
        """Accepted and ignored."""
        return self

    def slot_sharing_group(self, slot_sharing_group: str | SlotSharingGroup) -> DataStreamSink:
        """Accepted and ignored (a name or a ``SlotSharingGroup``): Spark schedules tasks, there
        are no task slots."""
        return self

    def disable_chaining(self) -> DataStreamSink:
        """Accepted and ignored: steps are chained by the runtime."""
        return self


class CloseableIterator(Iterator[T]):
    """The iterator ``execute_and_collect()`` returns; usable as a context manager."""

    def __init__(self, it: Iterator[T]) -> None:
        self._it = it

    def __iter__(self) -> CloseableIterator[T]:
        return self

    def __next__(self) -> T:
        return next(self._it)

    def next(self) -> T:
        """The next value (PyFlink's name for ``next(it)``)."""
        return next(self._it)

    def close(self) -> None:
        """Drop the values not read yet."""
        self._it = iter(())

    def __enter__(self) -> CloseableIterator[T]:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


class StreamExecutionEnvironment:
    """Builds and runs jobs. ``execution.target`` (or ``FS_COMPAT_TARGET``) picks where: ``spark``
    (the default) runs on Spark, ``local`` runs in this process."""

    def __init__(self, configuration: Configuration | None = None) -> None:
        self._parallelism = local_parallelism()  # Flink's local default
        self._max_parallelism = 128
        self._mode = RuntimeExecutionMode.STREAMING
        self._config = ExecutionConfig()
        self._settings: dict[str, str] = {}
        self._sinks: list[SinkNode] = []
        self._clock: Callable[[], int] | None = None
        self._python_files: list[str] = []
        self._slot_sharing_groups: dict[str, SlotSharingGroup] = {}
        self._checkpoint_config = CheckpointConfig()
        #: Connector sinks by their SinkNode's id: the sink, its bounded writer, its input stream.
        self._connector_sinks: dict[int, tuple[Any, SinkWriter, DataStream[Any]]] = {}
        self._j_env: JavaObjectStandIn | None = None
        defaults = job_defaults()
        if defaults:
            self._apply(defaults)
        if configuration is not None:
            self.configure(configuration)

    @property
    def _j_stream_execution_environment(self) -> JavaObjectStandIn:
        """PyFlink's handle on the JVM's environment. Here it serves
        ``fs_compat.util.java_utils.get_j_env_configuration`` (the environment's configuration,
        written through to it); Java methods on it raise ``NotImplementedError`` naming the JVM."""
        if self._j_env is None:
            conf = JavaConfiguration(lambda key, value: self._apply({key: value}))
            self._j_env = JavaObjectStandIn("StreamExecutionEnvironment", _fs_compat_configuration=conf)
        return self._j_env

    @staticmethod
    def get_execution_environment(configuration: Configuration | None = None) -> StreamExecutionEnvironment:
        """A new environment, configured with ``configuration`` when given."""
        return StreamExecutionEnvironment(configuration)

    def configure(self, configuration: Configuration) -> None:
        """Apply ``configuration``'s settings (``execution.target``, ``parallelism.default``,
        ``execution.runtime-mode``, ``spark.*`` ...) over the current ones."""
        self._apply(configuration.to_dict())

    def _apply(self, settings: Mapping[str, str]) -> None:
        self._settings.update(settings)
        if "parallelism.default" in self._settings:
            self._parallelism = int(self._settings["parallelism.default"])
        mode = self._settings.get("execution.runtime-mode")
        if mode:
            self._mode = RuntimeExecutionMode[mode.upper()]

    def get_config(self) -> ExecutionConfig:
        """The environment's ExecutionConfig (watermark interval, job parameters)."""
        return self._config

    def set_parallelism(self, parallelism: int) -> StreamExecutionEnvironment:
        """The default number of parallel instances of every step (>= 1)."""
        self._parallelism = _checked_parallelism(parallelism)
        return self

    def get_parallelism(self) -> int:
        """The default number of parallel instances of every step: ``set_parallelism``'s, else
        ``parallelism.default``, else the machine's cores (``local_parallelism``), as in Flink."""
        return self._parallelism

    def set_max_parallelism(self, max_parallelism: int) -> StreamExecutionEnvironment:
        """The number of key groups (Flink's maximum parallelism; 128 by default)."""
        self._max_parallelism = max_parallelism
        return self

    def get_max_parallelism(self) -> int:
        """The number of key groups."""
        return self._max_parallelism

    def set_runtime_mode(self, execution_mode: RuntimeExecutionMode) -> StreamExecutionEnvironment:
        """STREAMING (every rolling result) or BATCH (final results, one key at a time)."""
        self._mode = execution_mode
        return self

    def register_slot_sharing_group(self, slot_sharing_group: SlotSharingGroup) -> StreamExecutionEnvironment:
        """Accepted and kept as a no-op hint: Spark schedules tasks, there are no task slots
        (``fs_compat.datastream.slot_sharing_group``)."""
        self._slot_sharing_groups[slot_sharing_group.get_name()] = slot_sharing_group
        return self

    def set_stream_time_characteristic(self, characteristic: TimeCharacteristic) -> None:
        """Deprecated in Flink and ignored here."""

    def add_python_file(self, file_path: str) -> None:
        """Make a module (or a folder of modules) importable by the job's functions."""
        folder = file_path if os.path.isdir(file_path) else os.path.dirname(os.path.abspath(file_path))
        if folder not in sys.path:
            sys.path.append(folder)
        self._python_files.append(os.path.abspath(file_path))

    def set_processing_time_clock(self, clock: Callable[[], int]) -> StreamExecutionEnvironment:
        """fs-compat extension: the processing-time clock (epoch ms) for timers and TTL, e.g. a
        fake clock in tests, so nothing has to sleep."""
        self._clock = clock
        return self

    @overload
    def from_collection(self, collection: Iterable[Any], type_info: RowTypeInfo) -> DataStream[Row]: ...
    @overload
    def from_collection(
        self, collection: Iterable[T], type_info: TypeInformation[T] | None = None
    ) -> DataStream[T]: ...
    def from_collection(
        self, collection: Iterable[Any], type_info: TypeInformation[Any] | None = None
    ) -> DataStream[Any]:
        """A bounded stream of the values of ``collection``, in order. ``type_info`` declares their
        type; with ``Types.ROW``/``ROW_NAMED`` tuples become ``Row`` values.

        >>> from fs_compat.common import Types
        >>> env = StreamExecutionEnvironment.get_execution_environment()
        >>> env.from_collection([1, 2, 3]).execute_and_collect(limit=3)
        [1, 2, 3]
        >>> rows = env.from_collection([("a", 1)], Types.ROW_NAMED(["k", "n"], [Types.STRING(), Types.INT()]))
        >>> rows.map(lambda r: r.n * 10).execute_and_collect(limit=1)
        [10]
        """
        items = list(collection)
        conform = conformer(type_info, full=True)
        if conform is not None:
            items = [_element(conform, i, v) for i, v in enumerate(items)]
        return DataStream(self, SourceNode("Collection Source", items=items), type_info)

    def from_dataframe(self, df: DataFrame) -> DataStream[Row]:
        """fs-compat extension: a Spark DataFrame, batch or streaming, as a stream of ``Row``
        values with the DataFrame's field names (type ``Types.ROW_NAMED`` of its fields). A column
        marked with ``df.withWatermark(column, delay)`` gives the records' timestamps and, on a
        streaming DataFrame, the watermark."""
        from fs_compat.spark import row_type_of

        node = ExternalSourceNode("DataFrame Source", handle=df, unbounded=bool(df.isStreaming))
        return DataStream(self, node, row_type_of(df.schema))

    def from_source(
        self,
        source: Source,
        watermark_strategy: WatermarkStrategy,
        source_name: str,
        type_info: TypeInformation[Any] | None = None,
    ) -> DataStream[Any]:
        """A stream of the records of a connector source (``FileSource``, ``KafkaSource``,
        ``NumberSequenceSource``: ``fs_compat.datastream.connectors``), read in this process on
        the ``local`` target and with Spark's readers on ``spark``; timestamps and watermarks
        from ``watermark_strategy`` (none with ``WatermarkStrategy.no_watermarks()``).
        ``type_info`` declares the records' type where the source does not."""
        from .connectors._base import Source

        if not isinstance(source, Source):
            raise _unsupported(
                "StreamExecutionEnvironment.from_source",
                f"{type(source).__name__} is no connector source: use FileSource, KafkaSource or "
                "NumberSequenceSource (fs_compat.datastream.connectors), or read with Spark and "
                "env.from_dataframe(df)",
            )
        return self._read_source(source, watermark_strategy, source_name, type_info)

    def _read_source(
        self, source: Any, watermark_strategy: WatermarkStrategy | None, name: str, type_info: Any
    ) -> DataStream[Any]:
        from fs_compat.execution import ReaderSourceNode

        plan = source._source_plan(type_info)
        node = ReaderSourceNode(name, reader=plan.reader, unbounded=plan.reader.unbounded)
        ds: DataStream[Any] = DataStream(self, node, plan.output_type if plan.decode is None else None)
        if plan.decode is not None:
            ds = ds._stateless_map(f"{name}: Records", plan.decode, plan.output_type, flat=True)
        if watermark_strategy is not None and watermark_strategy.max_out_of_orderness_ms is not None:
            ds = ds.assign_timestamps_and_watermarks(watermark_strategy)
        return ds

    def add_source(
        self,
        source_func: object,
        source_name: str = "Custom Source",
        type_info: TypeInformation[Any] | None = None,
    ) -> DataStream[Any]:
        """The legacy form of ``from_source`` for Flink's source functions
        (``FlinkKafkaConsumer``); other source functions are not supported
        (NotImplementedError): use ``from_collection`` or ``from_source``."""
        from .connectors._base import Source

        if isinstance(source_func, Source):
            return self._read_source(source_func, None, source_name, type_info)
        raise _unsupported(
            "StreamExecutionEnvironment.add_source",
            "use env.from_collection(...), or env.from_source(FileSource/KafkaSource ...)",
        )

    def _add_sink(self, node: SinkNode) -> DataStreamSink:
        self._sinks.append(node)
        return DataStreamSink(node)

    def _add_connector_sink(
        self, node: SinkNode, sink: Any, writer: SinkWriter, stream: DataStream[Any]
    ) -> DataStreamSink:
        self._connector_sinks[node.id] = (sink, writer, stream)
        return self._add_sink(node)

    def _take_sinks(self) -> list[SinkNode]:
        sinks, self._sinks = self._sinks, []
        return sinks

    def _target(self) -> str:
        """``execution.target`` set through ``configure``, else ``FS_COMPAT_TARGET``, else ``spark``
        (``fs_compat.execution.resolve_target``); an unknown target is a ValueError."""
        return resolve_target(settings=self._settings, default=SPARK)

    def _runtime_config(self) -> LocalConfig:
        from fs_api_advanced import system_clock

        return LocalConfig(
            mode=RuntimeMode.BATCH if self._mode is RuntimeExecutionMode.BATCH else RuntimeMode.STREAMING,
            parallelism=self._parallelism,
            max_parallelism=self._max_parallelism,
            clock=self._clock or system_clock,
            job_parameters=self._config.get_global_job_parameters(),
            watermark_interval_ms=self._config.get_auto_watermark_interval(),
        )

    def _spark(self) -> Any:
        from fs_compat.spark import ship_python_files, spark_session

        spark = spark_session(self._settings)
        ship_python_files(spark, self._python_files)
        return spark

    def _run(self, sinks: Sequence[Node], job_name: str) -> JobSummary:
        """Run the plan that feeds ``sinks``; returns its summary, also handed to
        ``fs_compat.runtime.collect_summaries`` blocks (``fs-compat run`` prints them)."""
        target = self._target()
        for node in upstream_of(sinks):
            if isinstance(node, ExternalSourceNode) and node.unbounded:
                raise ValueError(
                    "this job reads a streaming DataFrame, which never ends: start it with "
                    "ds.to_dataframe().writeStream...start() instead of execute()/execute_and_collect()"
                )
        writers = [self._connector_sinks.pop(s.id)[1] for s in sinks if s.id in self._connector_sinks]
        try:
            summary = run_plan(
                sinks, self._runtime_config(), target=target, spark=self._spark, job_name=job_name
            )
        except BaseException as exc:
            for writer in writers:
                writer.abort()
            job_failure(exc)  # also a Py4JJavaError, as PyFlink's execute() raises it
            raise
        for writer in writers:
            writer.finish()
        summary = attrs.evolve(summary, job_name=job_name)
        publish(summary)
        return summary

    def _to_dataframe(self, node: Node, tag: str | None, output_type: Any) -> Any:
        target = self._target()
        spark = self._spark()
        unbounded = any(isinstance(n, ExternalSourceNode) and n.unbounded for n in upstream_of([node]))
        if unbounded or target == SPARK:
            return spark_dataframe(spark, node, tag, self._runtime_config(), output_type, clock=self._clock)
        import pyarrow as pa

        from fs_compat.spark import OutputColumns

        values: list[Any] = []
        self._run([SinkNode("Collect", [Edge(node, side_tag=tag)], consume=values.append)], "to_dataframe")
        # The values as Arrow, as both Spark targets convert them: a misfit is a StepError naming
        # the step (``OutputColumns.refused``), never a value Spark's row conversion changes.
        out = OutputColumns(output_type, node.name)
        cols = out.columns(values)
        batch = out.record_batch([cols[name] for name in out.names])
        return spark.createDataFrame(pa.Table.from_batches([batch]), schema=out.schema)

    def enable_checkpointing(
        self, interval: int, mode: CheckpointingMode | None = None
    ) -> StreamExecutionEnvironment:
        """Accepted and kept (``get_checkpoint_config()``): in-process runs need no checkpoints;
        on Spark, streaming queries checkpoint at every micro-batch to their checkpoint location
        (``execution.checkpointing.dir``)."""
        self._checkpoint_config.set_checkpoint_interval(interval)
        if mode is not None:
            self._checkpoint_config.set_checkpointing_mode(mode)
        return self

    def get_checkpoint_config(self) -> CheckpointConfig:
        """The checkpoint settings (``fs_compat.datastream.checkpoint_config``): kept, no effect
        on results."""
        return self._checkpoint_config

    def get_checkpoint_interval(self) -> int:
        """The checkpoint interval in ms (-1: checkpointing off)."""
        return self._checkpoint_config.get_checkpoint_interval()

    def get_checkpointing_mode(self) -> CheckpointingMode:
        """The checkpointing mode (``AT_LEAST_ONCE`` while checkpointing is off, as in Flink 2)."""
        return self._checkpoint_config.get_checkpointing_mode()

    def get_checkpointing_consistency_mode(self) -> CheckpointingMode:
        """The checkpointing mode (Flink 2's name for ``get_checkpointing_mode``)."""
        return self.get_checkpointing_mode()

    def get_execution_plan(self) -> str:
        """Not supported (raises NotImplementedError): there is no JVM job graph."""
        raise _unsupported("StreamExecutionEnvironment.get_execution_plan", "there is no JVM job graph")

    def execute_async(self, job_name: str = "Flink Streaming Job") -> NoReturn:
        """Not supported (raises NotImplementedError): use ``execute()``."""
        raise _unsupported("StreamExecutionEnvironment.execute_async", "use execute()")

    def add_jars(self, *jars_path: str) -> None:
        """Not supported (raises NotImplementedError): JVM jars do not apply; use Spark's ``--jars``."""
        raise _unsupported("StreamExecutionEnvironment.add_jars", "JVM jars do not apply; use Spark's --jars")

    def add_classpaths(self, *classpaths: str) -> None:
        """Not supported (raises NotImplementedError): use Spark's ``--jars``."""
        raise _unsupported("StreamExecutionEnvironment.add_classpaths", "use Spark's --jars")

    def execute(self, job_name: str | None = None) -> JobExecutionResult:
        """Run the job that feeds the sinks added so far (``print``, ``add_sink``, ``sink_to``)
        and return its result. A job reading an unbounded connector source
        (``monitor_continuously``, Kafka) whose sinks are connector sinks runs as Spark
        Structured Streaming queries, one per sink, until they stop (see ``_execute_streaming``)."""
        sinks = self._take_sinks()
        if not sinks:
            raise RuntimeError("No operators defined in streaming topology. Cannot execute.")
        name = job_name or "Flink Streaming Job"
        if any(isinstance(n, ExternalSourceNode) and n.unbounded for n in upstream_of(sinks)):
            return self._execute_streaming(sinks, name)
        return JobExecutionResult(name, self._run(sinks, name))

    def _execute_streaming(self, sinks: Sequence[SinkNode], job_name: str) -> JobExecutionResult:
        """Start one Structured Streaming query per connector sink and per ``print()`` (which
        prints each micro-batch on the driver: ``fs_compat.spark.start_sink_query``) and wait
        until they stop.

        Each query checkpoints to ``<dir>/<sink uid or name>`` (``_checkpoint_folders``), where
        ``<dir>`` is the configured ``execution.checkpointing.dir`` (Flink's key; ``state.checkpoints.dir`` is
        read too), else a new temporary directory (a restart then starts over). The setting
        ``fs_compat.streaming.trigger`` = ``available-now`` makes the queries process what is
        there and stop (tests, catch-up runs); otherwise they run until stopped, with Spark's
        default trigger (a micro-batch as soon as the previous one ended)."""
        import tempfile

        # Connector sinks write through Spark; print() prints each micro-batch on the driver.
        plain = [s for s in sinks if s.id not in self._connector_sinks and s.writer is None]
        if plain:
            raise ValueError(
                f"this job reads an unbounded source (a streaming query), and sink {plain[0].name!r} "
                "needs the job to end: write with a connector sink (ds.sink_to(FileSink/KafkaSink ...)) "
                "or print(), or start ds.to_dataframe().writeStream...start() yourself"
            )
        if self._target() != SPARK:
            raise NotImplementedError(
                "a job reading an unbounded source (FileSource.monitor_continuously, Kafka) runs as Spark "
                "Structured Streaming queries: run it on the spark target (execution.target=spark), or "
                "read a bounded source (process_static_file_set(), KafkaSource set_bounded(...))"
            )
        spark = self._spark()
        config = self._runtime_config()
        base = (
            self._settings.get("execution.checkpointing.dir")
            or self._settings.get("state.checkpoints.dir")
            or tempfile.mkdtemp(prefix="fs-compat-checkpoints-")
        )
        base = base.removeprefix("file://")
        trigger = _trigger(self._settings.get(_TRIGGER_KEY, ""))
        queries = []
        for node, folder in zip(sinks, _checkpoint_folders(sinks), strict=True):
            if node.id not in self._connector_sinks:  # print()
                path = os.path.join(base, folder)
                queries.append(sink_query(spark, node, config, path, trigger, clock=self._clock))
                continue
            sink, _writer, stream = self._connector_sinks.pop(node.id)
            write = sink._stream_write(stream._output_type)
            records = stream._stateless_map(f"{node.name}: Records", write.encode, write.record_type)
            df = spark_dataframe(spark, records._node, None, config, write.record_type, clock=self._clock)
            query = write.start(df, os.path.join(base, folder), trigger)
            queries.append(query)
        from fs_compat.spark import await_query

        for query in queries:
            try:
                await_query(query)  # a failed query raises the user's error (StepError ...)
            except BaseException as exc:
                job_failure(exc)
                raise
        return JobExecutionResult(job_name)
