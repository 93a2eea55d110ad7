"""Unbounded plans on Spark Structured Streaming, with the job's keyed state and timers in Spark's
checkpointed state store.

Supported shape: a streaming DataFrame source, then single-input steps, any number of them keyed
(``source -> [stateless steps, timestamps] -> keyed step -> [stateless steps] -> keyed step ...
-> output``).

Physical plan:

1. ``mapInArrow`` over the source: rows become ``Row`` values, the steps before the keyed one run,
   and each record gets its key's *key group* (crc32 of the key bytes mod the maximum
   parallelism, as on every target). Rows out: ``kg``, ``seq`` (order within the micro-batch),
   ``v`` (the pickled value) and ``ts`` (its timestamp). At the end of its input each partition
   adds one marker row per key group carrying the largest timestamp it saw (or none), so every
   key group is visited in every micro-batch: processing-time timers and TTL cleanup run for idle
   keys too, and every key group learns the micro-batch's largest timestamp.
2. Per keyed step, ``groupBy("kg").transformWithStateInPandas`` (time mode None, no Spark
   watermark; processing time is the micro-batch's, ``current_timestamp()``, in a ``now``
   column; Spark chains several of these in one query, each with its own state in the
   checkpoint, where it refuses two ``applyInPandasWithState``): one state row (a ``ValueState``)
   per key group holds that group's keyed state and timers as one blob
   (``KeyedStateBackend.snapshot_key_group``), plus a header read without unpickling the blob:
   a token (the blob's version, random, new with each write), the largest timestamp seen, the
   earliest event-time and processing-time timers, and whether state with TTL holds entries.
   A call with only markers for a group none of whose timers is due (by the new watermark, by
   processing time) and that holds no TTL state returns at once: nothing is restored or
   rewritten (when the largest timestamp grew, the row is written back with only that field
   changed). Otherwise: take the group from this Python worker's cache when it holds the row's
   version (same token), else restore it from the blob into a new operator instance; fire due
   processing-time timers, process the group's records in input order, advance the watermark to
   ``largest timestamp - delay`` (firing event-time timers), run the steps after the keyed one,
   and write the row back only if it changed (blobs are pickled without pickle's memo, so
   unchanged state gives the same bytes). The last keyed step's output rows follow the stream's
   output type (``_convert.OutputColumns``); a keyed step followed by another writes rows of the
   pre-pass's form, routed to the next step's key groups (``_NextStep``), and one marker per call
   that ``_markers`` turns into one marker per key group of the next step, so that every key
   group of every keyed step is visited in every micro-batch and learns its largest timestamp.

The watermark is computed here rather than by Spark: Spark drops records behind its watermark
before a stateful step, and it gives a stateful step no watermark unless the step's own input
column carries one. ``delay`` is the WatermarkStrategy's out-of-orderness + 1 ms (Flink's
watermark is ``max - out_of_orderness - 1``), or the delay of the source's ``withWatermark``
column (Spark's watermark is ``max - delay``). Records are never dropped as late: as in Flink, a
process function sees them.

Processing time is the micro-batch's timestamp unless the job set a clock
(``env.set_processing_time_clock``). ``open()`` runs when a Python worker first uses a key group,
and again when its cached instance is stale (another worker or an earlier run of the micro-batch
wrote the group since); ``close()`` is not called (a streaming query has no end).

The worker cache (``_WorkerCache``) lives in this module, as Spark unpickles the function anew for
every task while it reuses the Python worker process; it is bounded by the total size of the blobs
it holds (``spark.fs_compat.streaming.workerCacheBytes``, 64 MiB by default).
"""

from __future__ import annotations

import pickle
import random
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import attrs

from fs_compat.common.internal import create_row, make_rows
from fs_compat.runtime import (
    ExternalSourceNode,
    KeyedStateBackend,
    KeyEncoder,
    LocalConfig,
    Node,
    OperatorNode,
    RuntimeMode,
    SinkNode,
    SubtaskRunner,
    TimestampNode,
    overrides,
    row_field,
    stable_pickle,
    subtask_of,
    upstream_of,
)

from ._convert import OutputColumns, RowReader, dumps
from ._events import watermark_column
from ._progress import METRICS_COLUMN, metric_changes, runner_metrics, watch
from ._routing import key_columns, locate_keys, selects_field, split_keys
from ._ship import check_shippable, ship_user_code
from ._task import micro_batch_id
from ._worker import worker_pass

_MIN = -(2**63)

#: The pre-pass's rows: key group, order, pickled value, timestamp, and the record's key when it
#: is an ``int`` (``ki``) or a ``str`` (``ks``), so the key-group pass need not run the key selector.
_PRE_FIELDS = (
    ("kg", "int"),
    ("seq", "long"),
    ("v", "binary"),
    ("ts", "long"),
    ("ki", "long"),
    ("ks", "string"),
)


class StreamPlanError(ValueError):
    """A job a streaming DataFrame cannot run as it is built."""


@attrs.frozen
class StreamShape:
    """The steps of a streaming job, in order: the stateless ones before the first keyed step,
    then each keyed step with the non-keyed steps after it (up to the next keyed step)."""

    source: ExternalSourceNode
    before: tuple[Node, ...]
    stages: tuple[tuple[OperatorNode, tuple[Node, ...]], ...] = ()

    @property
    def keyed(self) -> OperatorNode | None:
        """The first keyed step (None: the job has none)."""
        return self.stages[0][0] if self.stages else None


def stream_shape(node: Node, tag: str | None) -> StreamShape:
    """Check that the job ending at ``node`` (output ``tag``) has the supported shape."""
    chain: list[Node] = []
    current = node
    while not isinstance(current, ExternalSourceNode):
        if isinstance(current, SinkNode) or len(current.inputs) != 1:
            raise StreamPlanError(
                f"step '{current.name}' has {len(current.inputs)} inputs; on a streaming DataFrame "
                "each step takes one input for now (union, connect and broadcast need bounded input)"
            )
        edge = current.inputs[0]
        if edge.side_tag is not None:
            raise StreamPlanError(
                f"step '{current.name}' reads side output '{edge.side_tag}'; on a streaming "
                "DataFrame, a side output can only be the job's output "
                "(ds.get_side_output(tag).to_dataframe())"
            )
        chain.append(current)
        current = edge.source
    chain.reverse()
    if not current.unbounded:
        raise StreamPlanError("stream_dataframe needs a streaming DataFrame source")
    at = [i for i, n in enumerate(chain) if isinstance(n, OperatorNode) and n.keyed]
    if not at:
        return StreamShape(current, tuple(chain))
    stages = []
    for start, end in zip(at, [*at[1:], len(chain)], strict=True):
        keyed = chain[start]
        assert isinstance(keyed, OperatorNode)
        stages.append((keyed, tuple(chain[start + 1 : end])))
    if any(isinstance(n, TimestampNode) for n in chain[at[0] :]):
        raise StreamPlanError("assign timestamps before the first keyed step on a streaming DataFrame")
    return StreamShape(current, tuple(chain[: at[0]]), tuple(stages))


def _watermark_delay(shape: StreamShape) -> int | None:
    """``largest timestamp - watermark`` for the job in ms, or None when it has no watermark."""
    stamps = [n for n in shape.before if isinstance(n, TimestampNode)]
    if stamps:
        ooo = stamps[-1].out_of_orderness_ms
        return None if ooo is None else ooo + 1
    marked = watermark_column(shape.source.handle.schema)
    return marked[1] if marked else None


def stream_dataframe(
    spark: Any,
    node: Node,
    tag: str | None,
    config: LocalConfig,
    output_type: Any,
    clock: Callable[[], int] | None = None,
) -> Any:
    """The streaming DataFrame of ``node``'s output ``tag`` (see the module docstring)."""
    if config.mode is RuntimeMode.BATCH:
        raise StreamPlanError(
            "BATCH execution mode needs bounded input; this job reads a streaming DataFrame"
        )
    del spark  # the source DataFrame knows its session
    ship_user_code()
    check_shippable(upstream_of([node]))
    shape = stream_shape(node, tag)
    out = OutputColumns(output_type)
    source = shape.source.handle
    delay = _watermark_delay(shape)
    # The line per micro-batch (``_progress``): counts between the passes.
    stepped = [n for keyed, after in shape.stages for n in (keyed, *after)]
    observe = watch(
        source,
        [n.name for n in shape.before],
        [k.name for k, _after in shape.stages],
        delay,
        [(n.id, n.name) for n in stepped],
    )
    if shape.keyed is None:
        return observe(source.mapInArrow(_stateless(shape, tag, config, out), out.schema), 0, "rows")
    session = source.sparkSession
    _use_rocksdb(session)
    pre_schema = _spark_schema(_PRE_FIELDS)
    df = observe(source.mapInArrow(_pre(shape, config), pre_schema), 0, "events")
    row_names = None if shape.before else _reader(shape).names
    cache_bytes = int(session.conf.get(WORKER_CACHE_CONF, str(DEFAULT_WORKER_CACHE_BYTES)))
    for i, (keyed, after) in enumerate(shape.stages):
        last = i + 1 == len(shape.stages)
        fn = _KeyGroups(
            keyed,
            after,
            tag if last else None,
            config,
            out,
            clock,
            delay,
            row_names if i == 0 else None,
            cache_bytes,
            next_step=None if last else shape.stages[i + 1][0],
        )
        schema = pre_schema
        if last:  # plus the column the calls' metrics travel in (``_progress``; dropped after it)
            fn.metrics_column = METRICS_COLUMN
            schema = _with_metrics(out.schema)
        df = (
            df.withColumn("now", _batch_time_ms())
            .groupBy("kg")
            .transformWithStateInPandas(_KeyGroupProcessor(fn), schema, "Append", "None")
        )
        df = observe(df, i + 1, METRICS_COLUMN if last else "events")
        if not last:
            df = df.mapInArrow(_markers(config.max_parallelism), pre_schema)
    return df


def _with_metrics(schema: Any) -> Any:
    """``schema`` and the column the calls' metrics travel in (``METRICS_COLUMN``)."""
    from pyspark.sql import types as st

    return st.StructType([*schema.fields, st.StructField(METRICS_COLUMN, st.BinaryType(), True)])


#: The state store provider ``transformWithStateInPandas`` needs, and Spark's default (which it
#: refuses).
ROCKSDB_PROVIDER = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
_DEFAULT_PROVIDER = "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"
_PROVIDER_CONF = "spark.sql.streaming.stateStore.providerClass"


def _use_rocksdb(session: Any) -> None:
    """Make the session's streaming queries use RocksDB state stores (``transformWithState``
    runs on nothing else) unless it names another provider than Spark's default."""
    current = session.conf.get(_PROVIDER_CONF, _DEFAULT_PROVIDER)
    if current == _DEFAULT_PROVIDER:
        session.conf.set(_PROVIDER_CONF, ROCKSDB_PROVIDER)


def _batch_time_ms() -> Any:
    """The micro-batch's timestamp in ms, as a column: in a streaming query Spark gives
    ``current_timestamp()`` the batch's time (kept in the offset log, so a re-run batch sees the
    same time). The key-group pass's processing time."""
    from pyspark.sql import functions as F  # noqa: N812 - Spark's convention

    return F.unix_millis(F.current_timestamp())


def _markers(n_groups: int) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """Between two keyed steps: the rows of the first step's key groups go on, but their
    markers (``kg`` -1, one per call, ``ts`` the largest timestamp it saw) become one marker per
    key group of the next step, with the largest of those timestamps (see ``_pre``)."""

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa
        import pyarrow.compute as pc

        schema = _arrow_schema()
        top: int | None = None
        for batch in batches:
            marker = pc.equal(batch.column("kg"), -1)
            seen = pc.max(batch.filter(marker).column("ts")).as_py()
            if seen is not None and (top is None or seen > top):
                top = seen
            kept = batch.filter(pc.invert(marker))
            if kept.num_rows:
                yield kept.select([f.name for f in schema])
        yield pa.RecordBatch.from_pydict(_marker_columns(n_groups, top), schema=schema)

    return worker_pass(run)


def _marker_columns(n_groups: int, max_ts: int | None) -> dict[str, list[Any]]:
    """One marker row per key group: no value, the largest timestamp seen (see ``_pre``)."""
    return {
        "kg": list(range(n_groups)),
        "seq": [-1] * n_groups,
        "v": [None] * n_groups,
        "ts": [max_ts] * n_groups,
        "ki": [0] * n_groups,  # not a key: keeps the column's type int where keys are ints
        "ks": [None] * n_groups,
    }


def _spark_schema(fields: Sequence[tuple[str, str]]) -> Any:
    from pyspark.sql import types as st

    kinds = {
        "int": st.IntegerType(),
        "long": st.LongType(),
        "binary": st.BinaryType(),
        "boolean": st.BooleanType(),
        "string": st.StringType(),
    }
    return st.StructType([st.StructField(n, kinds[k], True) for n, k in fields])


def _reader(shape: StreamShape) -> RowReader:
    """Reads the source's Arrow batches: Row values, timestamps from its ``withWatermark`` column."""
    schema = shape.source.handle.schema
    marked = watermark_column(schema)
    return RowReader(schema, marked[0] if marked else None)


def _chain_runner(
    nodes: Sequence[Node], index: int, config: LocalConfig, tags: Sequence[str] = ()
) -> SubtaskRunner | None:
    if not nodes:
        return None
    return SubtaskRunner(nodes[0], index, config, [1], tags, chain=nodes[1:])


def _records(
    runner: SubtaskRunner | None, value: Any, ts: int | None, tag: str | None = None
) -> list[tuple[Any, int | None]]:
    """What ``value`` becomes after the steps of ``runner`` (itself when there are none)."""
    if runner is None:
        return [(value, ts)]
    runner.record(0, value, ts)
    return [(v, t) for g, v, t, wm in runner.drain() if wm is None and g == tag]


def _partition_id() -> int:
    from pyspark import TaskContext

    context = TaskContext.get()
    return context.partitionId() if context is not None else 0


def _stateless(
    shape: StreamShape, tag: str | None, config: LocalConfig, out: OutputColumns
) -> Callable[[Iterator[Any]], Iterator[Any]]:
    reader = _reader(shape)
    steps = shape.before
    arrow_schema = out.arrow_schema()

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        runner = _chain_runner(steps, _partition_id(), config, [tag] if tag else ())
        for batch in batches:
            tuples, stamps = reader.tuples(batch)
            values = [reader.row(t) for t in tuples]
            results = [
                v
                for value, ts in zip(values, stamps, strict=True)
                for v, _ in _records(runner, value, ts, tag)
            ]
            yield pa.RecordBatch.from_pydict(out.columns(results), schema=arrow_schema)

    return worker_pass(run)


def _pre(shape: StreamShape, config: LocalConfig) -> Callable[[Iterator[Any]], Iterator[Any]]:
    reader = _reader(shape)
    steps = shape.before
    keyed = shape.keyed
    assert keyed is not None
    edge = keyed.inputs[0]
    assert edge.key_selector is not None
    key_selector = edge.key_selector
    encoder = KeyEncoder(edge.key_codec, config.max_parallelism)
    step = keyed.name
    n_groups = config.max_parallelism
    names = reader.names
    # The key as a column when the selector returns one field as it is (``row_field``); checked
    # against the selector on each batch's first record.
    key_field = row_field(key_selector, names) if not steps else None

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        pid = _partition_id()
        runner = _chain_runner(steps, pid, config)
        field = key_field
        seq = pid << 32
        max_ts: int | None = None
        schema = _arrow_schema()
        for batch in batches:
            if runner is None:  # the keyed step reads the source: values travel as tuples
                cols = reader.columns(batch.columns)
                n = batch.num_rows
                stamps = reader.stamps(cols, n)
                groups = None
                if field is not None and n:
                    if selects_field(key_selector, reader, cols, field):
                        groups = encoder.key_groups(cols[field])  # None: a key to report
                    else:
                        field = None  # not what row_field said: call the selector from now on
                if groups is not None and field is not None:
                    kgs, keys = groups, cols[field]
                else:
                    kgs, keys = locate_keys(
                        step, key_selector, encoder, make_rows(names, zip(*cols, strict=True))
                    )
                vs = _dumps_all(list(zip(*cols, strict=True)))
            else:
                kgs, keys, vs, stamps = [], [], [], []
                for values, ts in zip(*reader.tuples(batch), strict=True):
                    # Each record's outputs are keyed and pickled before the next record runs.
                    outs = _records(runner, create_row(names, values), ts)
                    records = [record for record, _ in outs]
                    record_kgs, record_keys = locate_keys(step, key_selector, encoder, records)
                    kgs += record_kgs
                    keys += record_keys
                    vs += _dumps_all(records)
                    stamps += [rts for _, rts in outs]
                n = len(vs)
            top = max((t for t in stamps if t is not None), default=None)
            if top is not None and (max_ts is None or top > max_ts):
                max_ts = top
            seqs = pa.array(range(seq, seq + n), pa.int64())
            seq += n
            yield pa.RecordBatch.from_arrays(
                [
                    pa.array(kgs, pa.int32()),
                    seqs,
                    pa.array(vs, pa.binary()),
                    pa.array(stamps, pa.int64()),
                    *key_columns(keys),
                ],
                schema=schema,
            )
        yield pa.RecordBatch.from_pydict(_marker_columns(n_groups, max_ts), schema=schema)

    return worker_pass(run)


def _dumps_all(values: list[Any]) -> list[bytes]:
    """``dumps`` of each of ``values`` (pickle, in one loop while it takes them all)."""
    try:
        pdumps = pickle.dumps
        return [pdumps(v, protocol=5) for v in values]
    except Exception:
        return [dumps(v) for v in values]


def _arrow_schema() -> Any:
    import pyarrow as pa

    return pa.schema(
        [
            ("kg", pa.int32()),
            ("seq", pa.int64()),
            ("v", pa.binary()),
            ("ts", pa.int64()),
            ("ki", pa.int64()),
            ("ks", pa.string()),
        ]
    )


#: The state row of a key group: the blob (``_KeyGroups._save``) and a header that says, without
#: unpickling the blob, which version it is and whether an idle micro-batch has work for the group.
_STATE_FIELDS = (
    ("blob", "binary"),  # pickled (backend snapshot, event-time timers, processing-time timers)
    ("token", "long"),  # random, new with every blob written: the blob's version
    ("max_ts", "long"),  # the largest timestamp the key group has seen (its watermark + delay)
    ("next_event", "long"),  # the earliest event-time timer, or null
    ("next_proc", "long"),  # the earliest processing-time timer, or null
    ("ttl", "boolean"),  # whether state with TTL holds entries (time alone may expire them)
)

_EMPTY_STATE = KeyedStateBackend().snapshot_key_group(0)  # what a key group without state gives


@attrs.frozen
class _StateRow:
    """A key group's state row as read from Spark's state store."""

    blob: bytes
    token: int
    max_ts: int | None
    next_event: int | None
    next_proc: int | None
    ttl: bool

    @classmethod
    def read(cls, row: Sequence[Any]) -> _StateRow:
        blob, token, max_ts, next_event, next_proc, ttl = row
        return cls(bytes(blob), int(token), _opt(max_ts), _opt(next_event), _opt(next_proc), bool(ttl))

    def values(self) -> tuple[Any, ...]:
        return (self.blob, self.token, self.max_ts, self.next_event, self.next_proc, self.ttl)


def _opt(value: Any) -> int | None:
    return None if value is None else int(value)


class _Records:
    """The records of one call of ``_KeyGroups``, from the frames Spark passes (records, and
    markers: ``v`` null), column by column: per-record pandas access is slow."""

    __slots__ = ("keys", "max_ts", "n", "seqs", "stamps", "values")

    def __init__(self) -> None:
        self.seqs: list[Any] = []  # numpy arrays
        self.values: list[Any] = []
        self.stamps: list[Any] = []
        self.keys: list[Any] = []
        self.max_ts: int | None = None  # the largest timestamp of records and markers
        self.n = 0

    def add(self, pdf: Any) -> None:
        import pandas as pd

        stamps = _stamps(pdf["ts"])
        top = max((t for t in stamps if t is not None), default=None)
        if top is not None and (self.max_ts is None or top > self.max_ts):
            self.max_ts = top
        v = pdf["v"].to_numpy()
        kept = pd.notna(v)
        n = int(kept.sum())
        if n == 0:
            return
        seq = pdf["seq"].to_numpy()
        ki = pdf["ki"] if "ki" in pdf else None
        ks = pdf["ks"] if "ks" in pdf else None
        if n < len(v):
            v, seq = v[kept], seq[kept]
            stamps = [t for t, k in zip(stamps, kept.tolist(), strict=True) if k]
            ki = None if ki is None else ki[kept]
            ks = None if ks is None else ks[kept]
        self.n += n
        self.seqs.append(seq)
        self.values.append(v)
        self.stamps.append(stamps)
        if ki is not None and ki.dtype.kind in "iu":  # every record's key is an int
            self.keys.append(ki.tolist())
        elif ks is not None:  # str keys are known; others (ints among them, as floats) not: None
            self.keys.append([k if type(k) is str else None for k in ks.tolist()])
        else:
            self.keys.append([None] * n)

    def ordered(self) -> tuple[list[Any], list[int | None], list[Any]]:
        """The records' pickled values, timestamps and keys (None: not known), in input order
        (Spark's shuffle does not keep it)."""
        import numpy as np

        if len(self.seqs) == 1:
            seq, values, stamps, keys = self.seqs[0], self.values[0], self.stamps[0], self.keys[0]
        else:
            seq, values = np.concatenate(self.seqs), np.concatenate(self.values)
            stamps = [t for part in self.stamps for t in part]
            keys = [k for part in self.keys for k in part]
        if len(seq) > 1 and not bool((seq[1:] > seq[:-1]).all()):
            order = np.argsort(seq, kind="stable")
            values = values[order]
            order_list = order.tolist()
            stamps = [stamps[i] for i in order_list]
            keys = [keys[i] for i in order_list]
        return values.tolist(), stamps, keys


def _stamps(column: Any) -> list[int | None]:
    """The timestamps of a pandas column of ``ts`` (null: None), as ints."""
    import pandas as pd

    kind = column.dtype.kind
    if kind in "iu":
        return column.tolist()  # type: ignore[no-any-return]
    if kind == "f" and column.isna().all():
        return [None] * len(column)
    return [None if t is None or pd.isna(t) else int(t) for t in column.tolist()]


def _stable_dumps(value: Any) -> bytes:
    """Pickled so that equal values give equal bytes where possible (``stable_pickle``), so an
    unchanged key group is not rewritten; ``dumps`` for values plain pickle cannot take."""
    try:
        return stable_pickle(value)
    except Exception:
        return dumps(value)


class _Group:
    """One key group's operator instance in a Python worker, and the state version it holds:
    ``token`` and ``blob`` of the state row it was restored from or last wrote, ``max_ts`` the
    largest timestamp it has seen."""

    __slots__ = ("blob", "max_ts", "now", "runner", "token")

    def __init__(self, runner: SubtaskRunner, now: list[int]) -> None:
        self.runner = runner
        self.now = now
        self.token: int | None = None
        self.blob: bytes | None = None
        self.max_ts: int | None = None


class _WorkerCache:
    """The key groups a Python worker keeps between micro-batches (Spark reuses Python workers
    across tasks, ``spark.python.worker.reuse``; the key-group function itself
    is unpickled anew for every task, so the cache lives in this module).

    Keyed by (plan, streaming query, key group). A group is taken out while a call uses it and put
    back only after the call has written its state row, so a call that failed half-way leaves
    nothing behind; a group taken is used only when its token is the state row's (see
    ``_KeyGroups._group_for``), so a retried task, a re-run micro-batch or a query restarted from
    an older checkpoint restores from the state store instead. Least recently used groups leave
    once their blobs add up to more than ``limit`` bytes (objects in memory take several times
    their blob's size)."""

    def __init__(self) -> None:
        self.groups: OrderedDict[tuple[str, str, int], _Group] = OrderedDict()
        self.size = 0

    def take(self, key: tuple[str, str, int]) -> _Group | None:
        group = self.groups.pop(key, None)
        if group is not None:
            self.size -= len(group.blob or b"")
        return group

    def put(self, key: tuple[str, str, int], group: _Group, limit: int) -> None:
        size = len(group.blob or b"")
        if size > limit:
            return
        self.groups[key] = group
        self.size += size
        while self.size > limit:
            _, old = self.groups.popitem(last=False)
            self.size -= len(old.blob or b"")


_CACHE = _WorkerCache()

#: The largest total blob size of the key groups a Python worker keeps (``_WorkerCache``), and
#: the Spark configuration key that sets it (read when the streaming DataFrame is built).
DEFAULT_WORKER_CACHE_BYTES = 64 << 20
WORKER_CACHE_CONF = "spark.fs_compat.streaming.workerCacheBytes"


def _query_id() -> str:
    """The id of the streaming query the current task belongs to ("" outside one)."""
    from pyspark import TaskContext

    context = TaskContext.get()
    found = context.getLocalProperty("sql.streaming.queryId") if context is not None else None
    return found or ""


def _idle_hooks(nodes: Sequence[Node]) -> tuple[bool, bool]:
    """For the operators of ``nodes`` (instances made here, then dropped): whether a call with no
    records, no timer due and no TTL state may be skipped, and whether any operator acts when the
    watermark advances (``on_watermark``), so that the watermark advancing is work too.

    ``on_checkpoint`` is work unless it is the base one, or the operator says it does nothing
    without new work (``Operator.idle_checkpoint_is_noop``: a Bytewax ``stateful_batch``
    snapshots the keys touched since the last checkpoint, none in such a call)."""
    skippable, on_watermark = True, False
    for node in nodes:
        if not isinstance(node, OperatorNode) or node.operator_factory is None:
            return False, True
        op = node.operator_factory()
        if overrides(op, "on_checkpoint") and not op.idle_checkpoint_is_noop:
            skippable = False
        on_watermark = on_watermark or overrides(op, "on_watermark")
    return skippable, on_watermark


class _KeyGroups:
    """The key-group pass of a keyed step: one call per key group per micro-batch (``_KeyGroupProcessor``)."""

    def __init__(
        self,
        keyed: OperatorNode,
        after: Sequence[Node],
        tag: str | None,
        config: LocalConfig,
        out: OutputColumns,
        clock: Callable[[], int] | None,
        delay: int | None,
        row_names: list[str] | None = None,
        cache_bytes: int = DEFAULT_WORKER_CACHE_BYTES,
        next_step: OperatorNode | None = None,
    ) -> None:
        self.row_names = row_names  # records arrive as tuples of a Row's values
        self.keyed = keyed
        self.after = tuple(after)
        self.tag = tag
        self.config = config
        self.out = out
        self.clock = clock
        self.delay = delay
        self.cache_bytes = cache_bytes
        #: This plan, in workers' caches: every task unpickles its own copy of this object.
        self.plan_id = uuid.uuid4().hex
        self.skip_idle, self.watermark_hooks = _idle_hooks((keyed, *self.after))
        #: The keyed step the main output goes to (None: the output is the job's, as columns).
        self.next: _NextStep | None = None if next_step is None else _NextStep(next_step, config)
        #: The output's extra column for the call's metrics (the job's output only; ``_progress``).
        self.metrics_column: str | None = None
        self._metrics: bytes | None = None  # what the current call added to its steps' metrics

    def _new_group(self, kg: int) -> _Group:
        now = [0]
        clock = self.clock or (lambda: now[0])
        config = attrs.evolve(self.config, clock=clock)
        p = self.keyed.parallelism or config.parallelism
        index = subtask_of(kg, p, config.max_parallelism)
        runner = SubtaskRunner(
            self.keyed, index, config, [1], [self.tag] if self.tag else (), chain=self.after
        )
        return _Group(runner, now)

    @worker_pass
    def __call__(self, key: tuple[Any, ...], pdfs: Iterator[Any], state: Any) -> Iterator[Any]:
        """One key group's call: ``state`` is its state row (Spark's ``GroupState``, or
        ``_TwsState`` over ``transformWithStateInPandas``'s)."""
        kg = int(key[0])
        # Records (v set) and markers (v null, ts = a partition's largest timestamp), as lists:
        # per-record pandas access is slow.
        records = _Records()
        for pdf in pdfs:
            if len(pdf):
                records.add(pdf)
        self._metrics = None
        results = self._run(kg, records, state)
        metrics = self._metrics
        if self.next is not None:
            yield self.next.frame(kg, results, records.max_ts, metrics)
        elif results or metrics is not None:
            import pandas as pd

            cols = self.out.columns([v for v, _t in results])
            frame = {name: pd.Series(cols[name], dtype=object) for name in self.out.names}
            if self.metrics_column is not None:
                if metrics is not None:  # one more row: no values, the metrics
                    frame = {name: pd.Series([*col, None], dtype=object) for name, col in frame.items()}
                frame[self.metrics_column] = pd.Series(
                    [None] * len(results) + ([metrics] if metrics is not None else []), dtype=object
                )
            yield pd.DataFrame(frame)

    def _run(self, kg: int, records: _Records, state: Any) -> list[tuple[Any, int | None]]:
        """Run key group ``kg`` over ``records``; its outputs (values and timestamps)."""
        row = _StateRow.read(state.get) if state.exists else None
        batch_max = records.max_ts
        data = records.n > 0
        if row is None:
            if not data:
                return []  # a marker for a key group that holds nothing
            group = self._new_group(kg)
        elif not data and self._idle(row, state, batch_max):
            if self.delay is not None and batch_max is not None and _above(batch_max, row.max_ts):
                state.update(attrs.evolve(row, max_ts=batch_max).values())  # the blob as it was
            return []
        else:
            group = self._group_for(kg, row)
        cache_key = (self.plan_id, _query_id(), kg)
        runner = group.runner
        metrics_before = runner_metrics(runner)
        group.now[0] = int(state.getCurrentProcessingTimeMs())
        runner.processing_time_advanced()
        if data:
            values, stamps, keys = records.ordered()
            loads = pickle.loads
            names = self.row_names
            if names is None:
                values = [loads(v) for v in values]
            else:
                values = make_rows(names, map(loads, values))
            runner.records(0, values, stamps, keys)
        if self.delay is not None and batch_max is not None and _above(batch_max, group.max_ts):
            group.max_ts = batch_max
            runner.watermark(0, 0, batch_max - self.delay)
        runner.checkpoint(micro_batch_id())  # Operator.on_checkpoint: the state is saved next
        results = [(v, t) for g, v, t, wm in runner.drain() if wm is None and g == self.tag]
        runner.runtime.backend.purge_expired()  # expired TTL state leaves the state store
        self._metrics = metric_changes(metrics_before, runner_metrics(runner))
        if self._save(group, kg, state, row):
            _CACHE.put(cache_key, group, self.cache_bytes)
        return results

    def _idle(self, row: _StateRow, state: Any, batch_max: int | None) -> bool:
        """Whether a call without records has nothing to do for the key group of ``row``: no
        processing-time timer due, no event-time timer at or below the new watermark, no state
        with TTL, and no operator that acts on checkpoints or (when it advances) on the
        watermark."""
        if not self.skip_idle or row.ttl:
            return False
        if row.next_proc is not None:
            if self.clock is None:
                now = int(state.getCurrentProcessingTimeMs())
            elif getattr(self.clock, "for_task", None) is None:
                now = self.clock()
            else:
                return False  # each operator instance has its own clock
            if row.next_proc <= now:
                return False
        if self.delay is None or batch_max is None or not _above(batch_max, row.max_ts):
            return True  # the watermark stays
        if self.watermark_hooks:
            return False
        return row.next_event is None or row.next_event > batch_max - self.delay

    def _group_for(self, kg: int, row: _StateRow) -> _Group:
        """The operator instance of key group ``kg`` holding the state of ``row``: this worker's
        cached one when it holds that version (same token, and it has not seen a larger
        timestamp than the row), else a new one restored from the row."""
        group = _CACHE.take((self.plan_id, _query_id(), kg))
        if group is None or group.token != row.token or _above(group.max_ts, row.max_ts):
            group = self._new_group(kg)
            self._restore(group, kg, row.blob)
            group.token, group.blob = row.token, row.blob
        if self.delay is not None and row.max_ts is not None and _above(row.max_ts, group.max_ts):
            # Timers up to the row's watermark fired before it was written (or were not due).
            group.runner.watermark(0, 0, row.max_ts - self.delay)
            group.runner.drain()
        group.max_ts = row.max_ts if _above(row.max_ts, group.max_ts) else group.max_ts
        return group

    def _restore(self, group: _Group, kg: int, blob: bytes) -> None:
        backend_blob, event_timers, processing_timers = pickle.loads(blob)
        rt = group.runner.runtime
        rt.backend.restore_key_group(kg, backend_blob)
        rt.event_timers.restore(event_timers)
        rt.processing_timers.restore(processing_timers)

    def _save(self, group: _Group, kg: int, state: Any, row: _StateRow | None) -> bool:
        """Write the key group's state row if it changed (remove it when nothing is left);
        whether the group may be cached, holding the row's version."""
        rt = group.runner.runtime
        backend_blob = rt.backend.snapshot_key_group(kg)
        event_timers = rt.event_timers.snapshot()
        processing_timers = rt.processing_timers.snapshot()
        if backend_blob == _EMPTY_STATE and not event_timers and not processing_timers:
            if row is not None:
                state.remove()
            return False
        blob = _stable_dumps((backend_blob, event_timers, processing_timers))
        if row is None or blob != group.blob or group.max_ts != row.max_ts:
            token = random.getrandbits(62)
            written = _StateRow(
                blob,
                token,
                group.max_ts,
                event_timers[0][0] if event_timers else None,
                processing_timers[0][0] if processing_timers else None,
                rt.backend.holds_ttl_state(),
            )
            state.update(written.values())
            group.blob, group.token = blob, token
        return True


class _NextStep:
    """The keyed step after a key-group pass: its outputs become that step's rows (``_PRE_FIELDS``),
    routed to its key groups."""

    def __init__(self, node: OperatorNode, config: LocalConfig) -> None:
        edge = node.inputs[0]
        assert edge.key_selector is not None
        self.step = node.name
        self.key_selector = edge.key_selector
        self.encoder = KeyEncoder(edge.key_codec, config.max_parallelism)

    def frame(
        self, kg: int, results: list[tuple[Any, int | None]], max_ts: int | None, metrics: bytes | None = None
    ) -> Any:
        """The rows of ``results`` (outputs of key group ``kg``, in order: ``seq`` keeps it per
        key group), then this call's marker (``kg`` -1, ``ts`` the largest timestamp it saw, ``v``
        what the call added to its steps' metrics, for ``_progress``)."""
        import pandas as pd

        values = [v for v, _t in results]
        kgs, keys = locate_keys(self.step, self.key_selector, self.encoder, values)
        n = len(values)
        ints, strs = split_keys(keys)
        return pd.DataFrame(
            {
                "kg": pd.Series([*kgs, -1], dtype="int32"),
                "seq": pd.Series([*range(kg << 40, (kg << 40) + n), -1], dtype="int64"),
                "v": pd.Series([*_dumps_all(values), metrics], dtype=object),
                "ts": pd.Series([*(t for _v, t in results), max_ts], dtype=object),
                "ki": pd.Series([*ints, None], dtype=object),
                "ks": pd.Series([*strs, None], dtype=object),
            }
        )


class _TwsState:
    """A key group's state row in ``transformWithStateInPandas``'s ``ValueState``, read and
    written as ``_KeyGroups`` does Spark's ``GroupState``; ``now`` is the processing time. The
    row is read once (each read is a round trip to the state server)."""

    _UNREAD = object()

    def __init__(self, value: Any, now: int) -> None:
        self.value = value
        self.now = now
        self._row: Any = self._UNREAD

    @property
    def exists(self) -> bool:
        return self.get is not None

    @property
    def get(self) -> Any:
        if self._row is self._UNREAD:
            self._row = self.value.get()
        return self._row

    def update(self, row: tuple[Any, ...]) -> None:
        self.value.update(row)
        self._row = row

    def remove(self) -> None:
        self.value.clear()
        self._row = None

    def getCurrentProcessingTimeMs(self) -> int:  # noqa: N802 - GroupState's name
        return self.now


def _processor_base() -> type:
    from pyspark.sql.streaming.stateful_processor import StatefulProcessor

    return StatefulProcessor


class _KeyGroupProcessor(_processor_base()):  # type: ignore[misc]
    """The ``transformWithStateInPandas`` processor of a key-group pass: one ``ValueState`` (the
    state row, ``_STATE_FIELDS``) per key group; each call is ``_KeyGroups``' with the
    micro-batch's time from the rows' ``now`` column. Several such passes chain in one query."""

    def __init__(self, fn: _KeyGroups) -> None:
        self.fn = fn

    def init(self, handle: Any) -> None:
        self.row = handle.getValueState("kg", _spark_schema(_STATE_FIELDS))

    def handleInputRows(self, key: Any, rows: Iterator[Any], timerValues: Any) -> Iterator[Any]:  # noqa: N802,N803
        frames = [pdf for pdf in rows if len(pdf)]
        now = int(frames[0]["now"].iloc[0]) if frames else 0
        yield from self.fn(key, iter(frames), _TwsState(self.row, now))

    def close(self) -> None:
        pass


def _above(a: int | None, b: int | None) -> bool:
    """``a > b`` where None is below every timestamp."""
    return a is not None and (b is None or a > b)
