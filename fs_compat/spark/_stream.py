"""Unbounded plans on Spark Structured Streaming, with the job's keyed state and timers in Spark's
checkpointed state store.

Supported shape: a streaming DataFrame source, then single-input steps of which at most one is
keyed (``source -> [stateless steps, timestamps] -> keyed step -> [stateless steps] -> output``).

Physical plan:

1. ``mapInArrow`` over the source: rows become ``Row`` values, the steps before the keyed one run,
   and each record gets its key's *key group* (crc32 of the key bytes mod the maximum
   parallelism, as on every target). Rows out: ``kg``, ``seq`` (order within the micro-batch),
   ``v`` (the pickled value) and ``ts`` (its timestamp). At the end of its input each partition
   adds one marker row per key group carrying the largest timestamp it saw (or none), so every
   key group is visited in every micro-batch: processing-time timers and TTL cleanup run for idle
   keys too, and every key group learns the micro-batch's largest timestamp.
2. ``groupBy("kg").applyInPandasWithState`` (no Spark timeout, no Spark watermark): one state row
   per key group holds that group's keyed state, timers and largest timestamp seen, as one blob
   (``KeyedStateBackend.snapshot_key_group``). Per call: restore the group (skipped when this
   Python worker still holds the same version: each write gets a new random token), fire due
   processing-time timers, process the group's records in input order, advance the watermark to
   ``largest timestamp - delay`` (firing event-time timers), run the steps after the keyed one,
   and write the blob back only if it changed. Output rows follow the stream's output type
   (``_convert.OutputColumns``).

The watermark is computed here rather than by Spark: Spark drops records behind its watermark
before a stateful step, and it gives a stateful step no watermark unless the step's own input
column carries one. ``delay`` is the WatermarkStrategy's out-of-orderness + 1 ms (Flink's
watermark is ``max - out_of_orderness - 1``), or the delay of the source's ``withWatermark``
column (Spark's watermark is ``max - delay``). Records are never dropped as late: as in Flink, a
process function sees them.

Processing time is the micro-batch's timestamp unless the job set a clock
(``env.set_processing_time_clock``). ``open()`` runs once per key group per Python worker;
``close()`` is not called (a streaming query has no end).
"""

from __future__ import annotations

import pickle
import random
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import attrs

from fs_compat.common._row import _create_row
from fs_compat.runtime import (
    ExternalSourceNode,
    KeyEncoder,
    LocalConfig,
    Node,
    OperatorNode,
    RuntimeMode,
    SinkNode,
    SubtaskRunner,
    TimestampNode,
    route_key,
    subtask_of,
)

from ._batch import ship_user_code, watermark_column
from ._convert import OutputColumns, RowReader, dumps
from ._task import micro_batch_id

_MIN = -(2**63)

_PRE_FIELDS = (("kg", "int"), ("seq", "long"), ("v", "binary"), ("ts", "long"))


class StreamPlanError(ValueError):
    """A job a streaming DataFrame cannot run as it is built."""


@attrs.frozen
class StreamShape:
    """The steps of a streaming job, in order: before the keyed step, the keyed step, after."""

    source: ExternalSourceNode
    before: tuple[Node, ...]
    keyed: OperatorNode | None
    after: tuple[Node, ...]


def stream_shape(node: Node, tag: str | None) -> StreamShape:
    """Check that the job ending at ``node`` (output ``tag``) has the supported shape."""
    chain: list[Node] = []
    current = node
    while not isinstance(current, ExternalSourceNode):
        if isinstance(current, SinkNode) or len(current.inputs) != 1:
            raise StreamPlanError(
                f"step '{current.name}' has {len(current.inputs)} inputs; on a streaming DataFrame "
                "each step takes one input (union, connect and broadcast need bounded input)"
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
    keyed = [n for n in chain if isinstance(n, OperatorNode) and n.keyed]
    if len(keyed) > 1:
        raise StreamPlanError(
            "a streaming job may have one keyed step; found "
            + ", ".join(f"'{n.name}'" for n in keyed)
            + " (run them as separate queries, joined through a sink)"
        )
    if not current.unbounded:
        raise StreamPlanError("stream_dataframe needs a streaming DataFrame source")
    if keyed:
        at = chain.index(keyed[0])
        before, after = tuple(chain[:at]), tuple(chain[at + 1 :])
        if any(isinstance(n, TimestampNode) for n in after):
            raise StreamPlanError("assign timestamps before the keyed step on a streaming DataFrame")
        return StreamShape(current, before, keyed[0], after)
    return StreamShape(current, tuple(chain), None, ())


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
    shape = stream_shape(node, tag)
    out = OutputColumns(output_type)
    source = shape.source.handle
    if shape.keyed is None:
        return source.mapInArrow(_stateless(shape, tag, config, out), out.schema)
    delay = _watermark_delay(shape)
    pre = source.mapInArrow(_pre(shape, config), _spark_schema(_PRE_FIELDS))
    from pyspark.sql.types import BinaryType, LongType, StructField, StructType

    state_schema = StructType(
        [StructField("blob", BinaryType(), True), StructField("token", LongType(), True)]
    )
    row_names = None if shape.before else _reader(shape).names
    fn = _KeyGroups(shape.keyed, shape.after, tag, config, out, clock, delay, row_names)
    return pre.groupBy("kg").applyInPandasWithState(
        fn,
        outputStructType=out.schema,
        stateStructType=state_schema,
        outputMode="append",
        timeoutConf="NoTimeout",
    )


def _spark_schema(fields: Sequence[tuple[str, str]]) -> Any:
    from pyspark.sql import types as st

    kinds = {
        "int": st.IntegerType(),
        "long": st.LongType(),
        "binary": st.BinaryType(),
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

    return run


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

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        pid = _partition_id()
        runner = _chain_runner(steps, pid, config)
        seq = pid << 32
        max_ts: int | None = None
        schema = _arrow_schema()
        for batch in batches:
            tuples, stamps = reader.tuples(batch)
            cols: dict[str, list[Any]] = {"kg": [], "seq": [], "v": [], "ts": []}
            if runner is None:  # the keyed step reads the source: values travel as tuples
                kgs, vs = cols["kg"], cols["v"]
                for values, ts in zip(tuples, stamps, strict=True):
                    _key, kb, _ = route_key(step, key_selector, encoder, reader.row(values), 1)
                    kgs.append(encoder.key_group(kb))
                    vs.append(dumps(values))
                    if ts is not None and (max_ts is None or ts > max_ts):
                        max_ts = ts
                n = len(tuples)
                cols["seq"] = list(range(seq, seq + n))
                cols["ts"] = stamps
                seq += n
                yield pa.RecordBatch.from_pydict(cols, schema=schema)
                continue
            for values, ts in zip(tuples, stamps, strict=True):
                for record, rts in _records(runner, reader.row(values), ts):
                    _key, kb, _ = route_key(step, key_selector, encoder, record, 1)
                    cols["kg"].append(encoder.key_group(kb))
                    cols["seq"].append(seq)
                    cols["v"].append(dumps(record))
                    cols["ts"].append(rts)
                    seq += 1
                    if rts is not None and (max_ts is None or rts > max_ts):
                        max_ts = rts
            yield pa.RecordBatch.from_pydict(cols, schema=schema)
        markers = {
            "kg": list(range(n_groups)),
            "seq": [-1] * n_groups,
            "v": [None] * n_groups,
            "ts": [max_ts] * n_groups,
        }
        yield pa.RecordBatch.from_pydict(markers, schema=schema)

    return run


def _arrow_schema() -> Any:
    import pyarrow as pa

    return pa.schema([("kg", pa.int32()), ("seq", pa.int64()), ("v", pa.binary()), ("ts", pa.int64())])


_EMPTY_STATE = pickle.dumps((1, {}, {}), protocol=5)


def _first(item: tuple[Any, ...]) -> Any:
    return item[0]


class _Group:
    """One key group's operator instance in a Python worker, and the state version it holds."""

    __slots__ = ("blob", "max_ts", "now", "runner", "token")

    def __init__(self, runner: SubtaskRunner, now: list[int]) -> None:
        self.runner = runner
        self.now = now
        self.token: int | None = None
        self.blob: bytes | None = None
        self.max_ts: int | None = None


class _KeyGroups:
    """The applyInPandasWithState function: one call per key group per micro-batch."""

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
    ) -> None:
        self.row_names = row_names  # records arrive as tuples of a Row's values
        self.keyed = keyed
        self.after = tuple(after)
        self.tag = tag
        self.config = config
        self.out = out
        self.clock = clock
        self.delay = delay
        self._groups: dict[int, _Group] = {}

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_groups"] = {}
        return state

    def _group(self, kg: int) -> _Group:
        now = [0]
        clock = self.clock or (lambda: now[0])
        config = attrs.evolve(self.config, clock=clock)
        p = self.keyed.parallelism or config.parallelism
        index = subtask_of(kg, p, config.max_parallelism)
        runner = SubtaskRunner(
            self.keyed, index, config, [1], [self.tag] if self.tag else (), chain=self.after
        )
        return _Group(runner, now)

    def __call__(self, key: tuple[Any, ...], pdfs: Iterator[Any], state: Any) -> Iterator[Any]:
        import pandas as pd

        kg = int(key[0])
        stored = state.get if state.exists else None
        token = None if stored is None else int(stored[1])
        # Records (v set) and markers (v null, ts = a partition's largest timestamp), as lists:
        # per-record pandas access is slow.
        seqs: list[int] = []
        vs: list[Any] = []
        stamps: list[Any] = []
        for pdf in pdfs:
            if len(pdf):
                seqs += pdf["seq"].tolist()
                vs += pdf["v"].tolist()
                stamps += pdf["ts"].tolist()
        found = [ts for ts in stamps if ts is not None and ts == ts]  # NaN != NaN
        batch_max = int(max(found)) if found else None
        data = [(seq, v, ts) for seq, v, ts in zip(seqs, vs, stamps, strict=True) if v is not None]
        group = self._groups.get(kg)
        if group is None or group.token != token:
            if stored is None and not data:
                return  # a marker for a key group that holds nothing
            group = self._group(kg)
            if stored is not None:
                self._restore(group, kg, bytes(stored[0]))
            group.token, group.blob = token, None if stored is None else bytes(stored[0])
            self._groups[kg] = group
        runner = group.runner
        group.now[0] = int(state.getCurrentProcessingTimeMs())
        runner.processing_time_advanced()
        if data:
            data.sort(key=_first)  # input order (Spark's shuffle does not keep it)
            names, loads, record = self.row_names, pickle.loads, runner.record
            for _seq, v, ts in data:
                value = loads(v) if names is None else _create_row(names, loads(v))
                record(0, value, None if ts is None or ts != ts else int(ts))
        if self.delay is not None and batch_max is not None:
            if group.max_ts is None or batch_max > group.max_ts:
                group.max_ts = batch_max
                runner.watermark(0, 0, batch_max - self.delay)
        runner.checkpoint(micro_batch_id())  # Operator.on_checkpoint: the state is saved next
        results = [v for g, v, _t, wm in runner.drain() if wm is None and g == self.tag]
        runner.runtime.backend.purge_expired()  # expired TTL state leaves the state store
        self._save(group, kg, state)
        if results:
            cols = self.out.columns(results)
            yield pd.DataFrame({name: pd.Series(cols[name], dtype=object) for name in self.out.names})

    def _restore(self, group: _Group, kg: int, blob: bytes) -> None:
        backend_blob, event_timers, processing_timers, max_ts = pickle.loads(blob)
        rt = group.runner.runtime
        rt.backend.restore_key_group(kg, backend_blob)
        rt.event_timers.restore(event_timers)
        rt.processing_timers.restore(processing_timers)
        group.max_ts = max_ts
        if self.delay is not None and max_ts is not None:
            group.runner.watermark(0, 0, max_ts - self.delay)
            group.runner.drain()  # timers up to it fired before the snapshot

    def _save(self, group: _Group, kg: int, state: Any) -> None:
        rt = group.runner.runtime
        backend_blob = rt.backend.snapshot_key_group(kg)
        event_timers = rt.event_timers.snapshot()
        processing_timers = rt.processing_timers.snapshot()
        if backend_blob == _EMPTY_STATE and not event_timers and not processing_timers:
            if group.blob is not None:
                state.remove()
            group.blob, group.token = None, None
            return
        blob = dumps((backend_blob, event_timers, processing_timers, group.max_ts))
        if blob != group.blob:
            token = random.getrandbits(62)
            state.update((blob, token))
            group.blob, group.token = blob, token
