"""User-written Bytewax sources and sinks on Spark, through Spark's Python data source API
(``pyspark.sql.datasource``).

- :class:`SourceData` (format ``fs_compat_bytewax_source``) reads one input step's
  ``FixedPartitionedSource`` / ``DynamicSource`` (``SimplePollingSource`` is a fixed one):
  as a batch, one Spark input partition per source partition (a ``DynamicSource``: per worker),
  each read to its end in a Spark task; as a stream, with Spark's simple stream reader, whose
  offset is every partition's resume state (:func:`encode`: base64 of a pickle, so that the
  offset is JSON). See ``migration_guide/bytewax.md``, "Custom sources and sinks on Spark".
- :class:`SinkData` (format ``fs_compat_bytewax_sink``) writes a DataFrame of pickled items
  (``to_dataframe`` without an output type) through a ``FixedPartitionedSink`` / ``DynamicSink``,
  batch or streaming; a streaming ``FixedPartitionedSink`` keeps its partitions' snapshots per
  micro-batch in a state folder, so that a micro-batch written again after a failure resumes
  each partition from the snapshot of the micro-batch before.

The source or sink travels in the data source's options, pickled (:func:`encode`), so both work
over Spark Connect too (the classes are registered with ``spark.dataSource.register``).
"""

from __future__ import annotations

import base64
import json
import os
import pickle
import time
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from typing import Any, cast

import attrs
from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamWriter,
    DataSourceWriter,
    InputPartition,
    SimpleDataSourceStreamReader,
    WriterCommitMessage,
)
from pyspark.sql.streaming.datasource import SupportsTriggerAvailableNow

from fs_compat.runtime import unpicklable_message

from ._clocks import system_utc
from ._ops import key_route
from ._parts import call
from .errors import BytewaxRuntimeError
from .inputs import AbortExecution, DynamicSource, FixedPartitionedSource
from .outputs import DynamicSink, FixedPartitionedSink

#: The Spark format names of the two data sources.
SOURCE_FORMAT = "fs_compat_bytewax_source"
SINK_FORMAT = "fs_compat_bytewax_sink"
#: ``next_batch`` calls per partition in one micro-batch, unless ``maxBatchesPerTrigger`` says.
DEFAULT_MAX_BATCHES = 100

#: The source's rows: the pickled item, and where it came from (the round of ``next_batch``
#: calls, the partition's index, the item's index in its batch), so that a batch read can be put
#: in the order the in-process runner reads (a batch of each partition in turn).
SOURCE_SCHEMA = "value BINARY, r LONG, p INT, i LONG"

_THROUGH = (StopIteration, AbortExecution, BytewaxRuntimeError, NotImplementedError)


def _dumps(value: Any) -> bytes:
    from pyspark import cloudpickle

    dumps = cast(Callable[..., bytes], cloudpickle.dumps)
    return dumps(value, protocol=5)


def encode(value: Any, what: str) -> str:
    """``value`` as JSON-safe text: base64 of its pickle (cloudpickle: classes of the job's own
    modules travel by value). A value that cannot be pickled is a ``TypeError`` naming ``what``
    (e.g. ``"step 'flow.inp': partition 'a': the snapshot"``) and the part that cannot.

    >>> decode(encode({"at": 3}, "x"))
    {'at': 3}
    """
    return base64.b64encode(pickled(value, what)).decode("ascii")


def pickled(value: Any, what: str) -> bytes:
    """``value``'s pickle (cloudpickle); a ``TypeError`` naming ``what`` when it cannot be."""
    try:
        return _dumps(value)
    except Exception as exc:
        raise TypeError(unpicklable_message(what, value, _dumps)) from exc


def _rows(step_id: str, name: str, index: int, round_: int, batch: list[Any]) -> list[tuple[Any, ...]]:
    """The source rows of one batch of partition ``name`` (``index``)."""
    what = f"step {step_id!r}: partition {name!r}: an item"
    return [(pickled(item, what), round_, index, i) for i, item in enumerate(batch)]


def decode(text: str) -> Any:
    """The value :func:`encode` made ``text`` of."""
    return pickle.loads(base64.b64decode(text))


# Sources. --------------------------------------------------------------------------------------


def _build(step_id: str, source: Any, name: str, index: int, workers: int, state: Any) -> Any:
    """Partition ``name`` (``index``) of ``source``, resumed from ``state``."""
    if isinstance(source, FixedPartitionedSource):
        build_part = source.build_part
        return call(
            build_part, "`FixedPartitionedSource.build_part`", step_id, step_id, name, state, through=_THROUGH
        )
    return call(source.build, "`DynamicSource.build`", step_id, step_id, index, workers, through=_THROUGH)


def parts_of(step_id: str, source: Any, workers: int) -> list[str]:
    """The names of ``source``'s partitions: ``list_parts()``, or one per worker of a
    ``DynamicSource``."""
    if isinstance(source, FixedPartitionedSource):
        names = call(source.list_parts, "`FixedPartitionedSource.list_parts`", step_id, through=_THROUGH)
        return [str(name) for name in names]
    if isinstance(source, DynamicSource):
        return [str(i) for i in range(workers)]
    raise TypeError("source must subclass `fs_compat.bytewax.inputs.Source`")


def _next_batch(step_id: str, name: str, part: Any) -> list[Any]:
    """The next batch of partition ``name`` (``StopIteration`` at its end)."""
    try:
        return list(call(part.next_batch, "`next_batch`", step_id, through=_THROUGH))
    except AbortExecution as exc:
        raise NotImplementedError(
            f"step {step_id}: partition {name!r}: AbortExecution is in-process only; on Spark a source "
            "ends by raising StopIteration"
        ) from exc


class SourceData(DataSource):
    """A Bytewax source as a Spark data source. Options: ``source`` (the ``(step_id, source)``
    pair, :func:`encode`-d), ``workers`` (a ``DynamicSource``'s worker count in a batch read),
    ``maxBatchesPerTrigger`` (``next_batch`` calls per partition per micro-batch), ``effects``
    (``"1"``: a batch read gives what the source's code prints and changes in metrics as
    ``SourceEffects`` rows)."""

    @classmethod
    def name(cls) -> str:
        return SOURCE_FORMAT

    def schema(self) -> str:
        return SOURCE_SCHEMA

    def _source(self) -> tuple[str, Any]:
        return cast(tuple[str, Any], decode(self.options["source"]))

    def reader(self, schema: Any) -> DataSourceReader:
        step_id, source = self._source()
        effects = self.options.get("effects") == "1"
        return _BatchReader(step_id, source, int(self.options.get("workers", "1")), effects)

    def simpleStreamReader(self, schema: Any) -> SimpleDataSourceStreamReader:  # noqa: N802 - Spark's name
        step_id, source = self._source()
        limit = int(self.options.get("maxBatchesPerTrigger", str(DEFAULT_MAX_BATCHES)))
        return _StreamReader(step_id, source, limit)


@attrs.frozen
class SourceEffects:
    """A row of a batch read with the option ``effects``: what the source's code printed, and
    what it changed in prometheus_client metrics, while building its partition or reading a
    batch (row ``i`` -1, before that batch's items). The step that makes items of the rows
    prints the text and carries the changes in its Spark task, whose printed lines and metric
    changes reach the driver (``fs_compat.spark.internal``)."""

    printed: str
    #: ``fs_compat.spark.internal.worker_metric_changes``: per metric sample, the numbers.
    metrics: dict[tuple[str, str, tuple[str, ...]], tuple[float, ...]]


class _Effects:
    """What the source's code does besides its items, in a batch read with ``effects``: each
    ``rows`` call gives the ``SourceEffects`` row of what it printed and changed since the last."""

    def __init__(self, index: int) -> None:
        from fs_compat.spark.internal import start_capture, worker_metric_values

        self.index = index
        self.at = start_capture()
        self.values = worker_metric_values()

    def rows(self, round_: int) -> list[tuple[Any, ...]]:
        """The row (none when nothing was printed or changed) before round ``round_``'s items."""
        from fs_compat.spark.internal import (
            start_capture,
            take_captured,
            worker_metric_changes,
            worker_metric_values,
        )

        printed = take_captured(self.at)
        self.at = start_capture()
        values = worker_metric_values()
        metrics = worker_metric_changes(self.values, values)
        self.values = values
        if not printed and not metrics:
            return []
        effects = SourceEffects(printed, metrics)
        return [(pickled(effects, "what the source printed and metered"), round_, self.index, -1)]


class _BatchReader(DataSourceReader):
    """A batch read: each Spark input partition reads one source partition to its end; with
    ``effects``, what the source's code prints and changes in metrics comes as ``SourceEffects``
    rows."""

    def __init__(self, step_id: str, source: Any, workers: int, effects: bool = False) -> None:
        self.step_id = step_id
        self.source = source
        self.workers = workers
        self.effects = effects

    def partitions(self) -> list[InputPartition]:
        names = parts_of(self.step_id, self.source, self.workers)
        return [InputPartition((index, name)) for index, name in enumerate(names)]

    def read(self, partition: InputPartition) -> Iterator[tuple[Any, ...]]:
        if partition.value is None:  # no partitions: Spark reads one empty one
            return
        index, name = partition.value
        if not self.effects:
            for _round, rows in self._batches(index, name):
                yield from rows
            return
        from fs_compat.spark.internal import release_captured

        effects = _Effects(index)
        round_ = -1
        try:
            for round_, rows in self._batches(index, name):
                yield from effects.rows(round_)  # of the build or this batch's next_batch
                yield from rows
            yield from effects.rows(round_ + 1)  # of the last next_batch (StopIteration) or close
        finally:
            release_captured()  # a no-op after the last take; a failed read's lines go to stdout

    def _batches(self, index: int, name: str) -> Iterator[tuple[int, list[tuple[Any, ...]]]]:
        """The rows of partition ``name``'s batches, with each batch's round."""
        step_id = self.step_id
        part = _build(step_id, self.source, name, index, self.workers, None)
        try:
            round_ = 0
            while True:
                try:
                    batch = _next_batch(step_id, name, part)
                except StopIteration:
                    return
                yield round_, _rows(step_id, name, index, round_, batch)
                round_ += 1
                wake = call(part.next_awake, "`next_awake`", step_id, through=_THROUGH)
                if wake is not None:
                    delay = (wake - system_utc()).total_seconds()
                    if delay > 0:
                        time.sleep(delay)
        finally:
            call(part.close, "`close`", step_id, through=_THROUGH)


class _Live:
    """An open partition of a streaming read: ``seq`` counts its ``next_batch`` calls since
    the query started; ``eof`` once it raised ``StopIteration``."""

    def __init__(self, part: Any, seq: int, eof: bool) -> None:
        self.part = part
        self.seq = seq
        self.eof = eof
        self.awake: datetime | None = None


def _key(offset: Mapping[str, Any]) -> str:
    return json.dumps(offset, sort_keys=True)


class _StreamReader(SimpleDataSourceStreamReader, SupportsTriggerAvailableNow):
    """A streaming read, in the driver's Python data source process (Spark's simple stream
    reader). The offset maps each partition name to ``{"state": <encoded snapshot or null>,
    "seq": <next_batch calls so far>, "eof": <ended>}``. A micro-batch calls ``next_batch`` at
    most ``limit`` times per partition (none while it waits for its ``next_awake``); its end offset
    holds the partitions' snapshots after those calls. The partitions stay open from one
    micro-batch to the next; they are built again, from the offset's snapshots, when a read does
    not start where the last one ended (a restarted query)."""

    def __init__(self, step_id: str, source: Any, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"step {step_id}: maxBatchesPerTrigger must be positive; got {limit}")
        self.step_id = step_id
        self.source = source
        self.limit = limit
        self.stateful = isinstance(source, FixedPartitionedSource)
        self.live: dict[str, _Live] = {}
        self.at: str | None = None  # the offset (``_key``) the live partitions are at

    def initialOffset(self) -> dict[str, Any]:  # noqa: N802 - Spark's name
        names = parts_of(self.step_id, self.source, 1)
        return {name: {"state": None, "seq": 0, "eof": False} for name in names}

    def prepareForTriggerAvailableNow(self) -> None:  # noqa: N802 - Spark's name
        """``availableNow``: the query ends at the first read that finds nothing (every
        partition at its end, or waiting for its ``next_awake``, or giving empty batches)."""

    def _open(self, start: Mapping[str, Any]) -> None:
        self._close()
        for index, (name, entry) in enumerate(start.items()):
            state = None if entry["state"] is None else decode(entry["state"])
            part = None if entry["eof"] else _build(self.step_id, self.source, name, index, 1, state)
            self.live[name] = _Live(part, int(entry["seq"]), bool(entry["eof"]))
        self.at = _key(start)

    def _close(self) -> None:
        for live in self.live.values():
            if live.part is not None:
                call(live.part.close, "`close`", self.step_id, through=_THROUGH)
        self.live = {}

    def _snapshot(self, name: str, live: _Live) -> str | None:
        if not self.stateful or live.part is None:
            return None
        snap = call(live.part.snapshot, "`StatefulSourcePartition.snapshot`", self.step_id, through=_THROUGH)
        return encode(snap, f"step {self.step_id!r}: partition {name!r}: the snapshot")

    def read(self, start: dict[str, Any]) -> tuple[Iterator[tuple[Any, ...]], dict[str, Any]]:
        if self.at != _key(start):
            self._open(start)
        rows: list[tuple[Any, ...]] = []
        ended = False
        for round_ in range(self.limit):
            called = False
            for index, (name, live) in enumerate(self.live.items()):
                if live.eof or (live.awake is not None and system_utc() < live.awake):
                    continue
                called = True
                live.seq += 1
                try:
                    batch = _next_batch(self.step_id, name, live.part)
                except StopIteration:
                    live.eof = ended = True
                    continue
                live.awake = call(live.part.next_awake, "`next_awake`", self.step_id, through=_THROUGH)
                rows.extend(_rows(self.step_id, name, index, round_, batch))
            if not called:
                break
        if not rows and not ended:
            return iter(()), start  # nothing new: the live partitions stay ahead of ``start``
        end = {
            name: {"state": self._snapshot(name, live), "seq": live.seq, "eof": live.eof}
            for name, live in self.live.items()
        }
        for live in self.live.values():
            if live.eof and live.part is not None:
                call(live.part.close, "`close`", self.step_id, through=_THROUGH)
                live.part = None
        self.at = _key(end)
        return iter(rows), end

    def readBetweenOffsets(  # noqa: N802 - Spark's name
        self, start: dict[str, Any], end: dict[str, Any]
    ) -> Iterator[tuple[Any, ...]]:
        """A micro-batch again (a restarted query runs the micro-batch it had planned but not
        committed): each partition built from ``start``'s snapshot and asked for as many batches
        as it gave then; its snapshot must then be ``end``'s, else the source does not replay
        from its resume state and the query fails naming the partition. A ``DynamicSource`` has
        no resume state: the micro-batch is empty (its items were lost with the reader process)."""
        if not self.stateful:
            return iter(())
        return self._replay(start, end)

    def _replay(self, start: dict[str, Any], end: dict[str, Any]) -> Iterator[tuple[Any, ...]]:
        step_id = self.step_id
        for index, (name, entry) in enumerate(start.items()):
            if entry["eof"]:
                continue
            state = None if entry["state"] is None else decode(entry["state"])
            part = _build(step_id, self.source, name, index, 1, state)
            target = end[name]
            try:
                for round_ in range(int(target["seq"]) - int(entry["seq"])):
                    try:
                        batch = _next_batch(step_id, name, part)
                    except StopIteration:
                        break
                    yield from _rows(step_id, name, index, round_, batch)
                if target["state"] is not None:
                    got = call(part.snapshot, "`StatefulSourcePartition.snapshot`", step_id, through=_THROUGH)
                    if encode(got, "snapshot") != target["state"] and got != decode(target["state"]):
                        raise BytewaxRuntimeError(
                            f"step {step_id}: partition {name!r} did not replay a micro-batch from its "
                            f"resume state: after the same next_batch calls its snapshot is {got!r}, "
                            f"not {decode(target['state'])!r}; a source read as a stream must give the "
                            "same items again when built from a snapshot"
                        )
            finally:
                call(part.close, "`close`", step_id, through=_THROUGH)

    def commit(self, end: dict[str, Any]) -> None:
        """Nothing to do: the offsets are the resume states."""

    def stop(self) -> None:
        """Close the open partitions. (Spark's wrapper of a simple stream reader does not call
        this at the end of a query in pyspark 4.3; the process then ends with the query.)"""
        self._close()


# Sinks. ----------------------------------------------------------------------------------------


class SinkData(DataSource):
    """A Bytewax sink as a Spark data source, for a DataFrame with one binary column ``value``
    of pickled items. Options: ``sink`` (the ``(step_id, sink)`` pair, :func:`encode`-d),
    ``workers`` (a ``DynamicSink``'s worker count: the tasks writing), ``stateLocation`` (a
    folder: a streaming ``FixedPartitionedSink``'s snapshots per micro-batch)."""

    @classmethod
    def name(cls) -> str:
        return SINK_FORMAT

    def schema(self) -> str:
        return "value BINARY"

    def _sink(self) -> tuple[str, Any]:
        return cast(tuple[str, Any], decode(self.options["sink"]))

    def writer(self, schema: Any, overwrite: bool) -> DataSourceWriter:
        step_id, sink = self._sink()
        return _BatchWriter(step_id, sink, int(self.options.get("workers", "1")))

    def streamWriter(self, schema: Any, overwrite: bool) -> DataSourceStreamWriter:  # noqa: N802 - Spark's name
        step_id, sink = self._sink()
        location = self.options.get("stateLocation")
        if isinstance(sink, FixedPartitionedSink) and not location:
            raise ValueError(
                f"step {step_id}: a FixedPartitionedSink written by a streaming query needs the "
                "stateLocation option (fs_compat.bytewax.spark.to_sink sets it from the checkpoint)"
            )
        return _StreamWriter(step_id, sink, int(self.options.get("workers", "1")), location)


class _Written(WriterCommitMessage):
    """What a task wrote: each sink partition's encoded snapshot after it."""

    def __init__(self, snapshots: dict[str, str]) -> None:
        self.snapshots = snapshots


def _items(rows: Iterator[Any]) -> list[Any]:
    return [pickle.loads(row[0]) for row in rows]


def _write_task(
    step_id: str, sink: Any, workers: int, items: list[Any], resume: Callable[[], Mapping[str, str]]
) -> _Written:
    """One task's ``items`` through ``sink``: a ``DynamicSink``'s partition of this task (of
    ``workers``), or
    the ``FixedPartitionedSink`` partitions its ``(key, value)`` items route to, each resumed
    from ``resume()``'s snapshot; the partitions' new snapshots."""
    from pyspark import TaskContext

    context = TaskContext.get()
    task = 0 if context is None else context.partitionId()
    if isinstance(sink, DynamicSink):
        part = call(sink.build, "`DynamicSink.build`", step_id, step_id, task, workers, through=_THROUGH)
        try:
            if items:
                call(
                    part.write_batch, "`StatelessSinkPartition.write_batch`", step_id, items, through=_THROUGH
                )
        finally:
            call(part.close, "`close`", step_id, through=_THROUGH)
        return _Written({})
    if not isinstance(sink, FixedPartitionedSink):
        raise TypeError("sink must subclass `fs_compat.bytewax.outputs.Sink`")
    names = sorted(call(sink.list_parts, "`FixedPartitionedSink.list_parts`", step_id, through=_THROUGH))
    route = key_route(step_id)
    routed: dict[int, list[Any]] = {}
    for item in items:
        routed.setdefault(sink.part_fn(route(item)) % len(names), []).append(item[1])
    states = resume() if routed else {}
    written: dict[str, str] = {}
    for index, values in sorted(routed.items()):
        name = names[index]
        state = decode(states[name]) if name in states else None
        part = call(
            sink.build_part,
            "`FixedPartitionedSink.build_part`",
            step_id,
            step_id,
            name,
            state,
            through=_THROUGH,
        )
        try:
            call(part.write_batch, "`StatefulSinkPartition.write_batch`", step_id, values, through=_THROUGH)
            snap = call(part.snapshot, "`StatefulSinkPartition.snapshot`", step_id, through=_THROUGH)
            written[name] = encode(snap, f"step {step_id!r}: sink partition {name!r}: the snapshot")
        finally:
            call(part.close, "`close`", step_id, through=_THROUGH)
    return _Written(written)


class _BatchWriter(DataSourceWriter):
    """A batch write: every sink partition starts afresh (resume state ``None``), as a Bytewax
    run without recovery does."""

    def __init__(self, step_id: str, sink: Any, workers: int) -> None:
        self.step_id = step_id
        self.sink = sink
        self.workers = workers

    def write(self, iterator: Iterator[Any]) -> WriterCommitMessage:
        return _write_task(self.step_id, self.sink, self.workers, _items(iterator), dict)


def _state_file(location: str, batch_id: int) -> str:
    return os.path.join(location, f"{batch_id}.json")


def _state_ids(location: str) -> list[int]:
    """The micro-batch ids with a state file in ``location``, ascending."""
    try:
        names = os.listdir(location)
    except FileNotFoundError:
        return []
    return sorted(int(n[:-5]) for n in names if n.endswith(".json") and n[:-5].isdigit())


def _state_before(location: str, batch_id: int) -> dict[str, str]:
    """The snapshots committed by the last micro-batch before ``batch_id``."""
    earlier = [i for i in _state_ids(location) if i < batch_id]
    if not earlier:
        return {}
    with open(_state_file(location, max(earlier))) as f:
        return cast(dict[str, str], json.load(f))


class _StreamWriter(DataSourceStreamWriter):
    """A streaming write. A ``FixedPartitionedSink``'s partitions resume from the snapshots the
    last committed micro-batch before this one left in ``location`` (``<batch id>.json``), so a
    micro-batch written again after a failure starts from the same snapshots."""

    def __init__(self, step_id: str, sink: Any, workers: int, location: str | None) -> None:
        self.step_id = step_id
        self.sink = sink
        self.workers = workers
        self.location = location

    def write(self, iterator: Iterator[Any]) -> WriterCommitMessage:
        from fs_compat.spark.internal import micro_batch_id

        location = self.location
        batch = micro_batch_id()

        def resume() -> Mapping[str, str]:
            return {} if location is None or batch < 0 else _state_before(location, batch)

        return _write_task(self.step_id, self.sink, self.workers, _items(iterator), resume)

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:  # noqa: N803 - Spark's name
        if self.location is None:
            return
        states = _state_before(self.location, batchId)
        for message in messages:
            if isinstance(message, _Written):
                states.update(message.snapshots)
        os.makedirs(self.location, exist_ok=True)
        temp = _state_file(self.location, batchId) + ".tmp"
        with open(temp, "w") as f:
            json.dump(states, f)
        os.replace(temp, _state_file(self.location, batchId))
        # Keep what a replay of this micro-batch (the last file before it) or of the next one
        # (this one) resumes from.
        earlier = [i for i in _state_ids(self.location) if i < batchId]
        for old in earlier[:-1] if earlier else []:
            os.remove(_state_file(self.location, old))


class _PartIndex:
    """The ``mapInArrow`` function that adds column ``p``: the ``FixedPartitionedSink``
    partition (index into its sorted partition names) each pickled ``(key, value)`` item goes to."""

    def __init__(self, step_id: str, sink: FixedPartitionedSink[Any, Any], n_parts: int) -> None:
        self.step_id = step_id
        self.sink = sink
        self.n_parts = n_parts

    def __call__(self, batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        route = key_route(self.step_id)
        for batch in batches:
            values = batch.column(0).to_pylist()
            parts = [self.sink.part_fn(route(pickle.loads(v))) % self.n_parts for v in values]
            yield pa.RecordBatch.from_arrays(
                [batch.column(0), pa.array(parts, pa.int32())], names=["value", "p"]
            )


def to_sink(
    df: Any,
    step_id: str,
    sink: Any,
    *,
    checkpoint_location: str | None = None,
    parallelism: int | None = None,
) -> Any:
    """The writer of ``df``'s items through ``sink``, a ``FixedPartitionedSink`` or a
    ``DynamicSink``, on Spark (``SinkData``): ``df`` is what ``to_dataframe(stream)`` gives
    without an output type (one binary column ``value`` of pickled items). A batch ``df`` gives a
    ``DataFrameWriter`` (call ``.save()``), a streaming one a ``DataStreamWriter`` with
    ``checkpointLocation`` = ``checkpoint_location`` (required; add a trigger and call
    ``.start()``). ``step_id`` names the step in errors and is what ``build_part`` / ``build``
    get.

    A ``FixedPartitionedSink``'s items are routed by ``part_fn(key)`` so that one Spark task
    writes each partition; a ``DynamicSink`` gets ``parallelism`` partitions (default: Spark's
    default parallelism), one per task."""
    from fs_compat.spark import default_parallelism
    from fs_compat.spark.internal import ship_user_code

    if not isinstance(sink, (FixedPartitionedSink, DynamicSink)):
        raise TypeError("sink must subclass `fs_compat.bytewax.outputs.Sink`")
    if list(df.dtypes) != [("value", "binary")]:
        raise ValueError(
            f"step {step_id}: to_sink needs a DataFrame of pickled items (one binary column `value`: "
            f"fs_compat.bytewax.spark.to_dataframe(stream) without an output type); got columns {df.dtypes}"
        )
    streaming = bool(df.isStreaming)
    if streaming and not checkpoint_location:
        raise ValueError(f"step {step_id}: a streaming to_sink needs checkpoint_location")
    spark = df.sparkSession
    register(spark)
    ship_user_code()
    if isinstance(sink, FixedPartitionedSink):
        names = call(sink.list_parts, "`FixedPartitionedSink.list_parts`", step_id, through=_THROUGH)
        n = len(names)
        if n == 0:
            raise ValueError(f"step {step_id}: the FixedPartitionedSink has no partitions (list_parts)")
        routed = df.mapInArrow(_PartIndex(step_id, sink, n), "value BINARY, p INT")
        df = routed.repartition(n, "p").drop("p")
        workers = n
    else:
        workers = parallelism or default_parallelism(spark)
        df = df.repartition(workers)
    options = {"sink": encode((step_id, sink), f"step {step_id!r}: the sink"), "workers": str(workers)}
    if not streaming:
        return df.write.format(SINK_FORMAT).mode("append").options(**options)
    assert checkpoint_location is not None
    options["stateLocation"] = os.path.join(checkpoint_location, "fs_compat_sink_state")
    return (
        df.writeStream.format(SINK_FORMAT)
        .options(**options)
        .option("checkpointLocation", checkpoint_location)
    )


# Registration. ---------------------------------------------------------------------------------

_registered: set[str] = set()


def register(spark: Any) -> None:
    """Register both data sources with ``spark`` (a classic or a Connect session), once."""
    from fs_compat.spark import is_connect

    owner = f"connect:{spark.session_id}" if is_connect(spark) else f"classic:{id(spark._jsparkSession)}"
    if owner in _registered:
        return
    spark.dataSource.register(SourceData)
    spark.dataSource.register(SinkData)
    _registered.add(owner)
