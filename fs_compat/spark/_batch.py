"""Bounded plans on Spark: every step becomes repartition -> sortWithinPartitions -> mapInArrow
running the engine-neutral runtime (``SubtaskRunner``) over each partition.

Rows between steps carry one event each (schema ``EVENTS``): a record (``v`` = the pickled
value, ``ts`` its timestamp, ``wm`` null) or a watermark (``wm`` set), the output ``tag`` (null
for the main output), the upstream subtask (``ch``, the channel) and its position in that
subtask's output (``seq``). A step's input is routed to its subtasks (``part``): by key group for
keyed edges, to every subtask for broadcast edges and watermarks, round-robin otherwise. Inside
a partition, events are handled per subtask in ``seq`` order, so per key the order is the input
order, and each subtask's input watermark is the minimum over its channels, as in Flink.

Four shortcuts keep the per-record work down without changing what a step sees:

- A bounded DataFrame source read by one step has no pass of its own: that step's route pass
  reads the DataFrame's rows (a source several steps read is read once, into events). When
  that step has no other input, the rows cross the shuffle as the DataFrame's own columns
  (``c0``, ``c1``, ... instead of ``v``), with the keys the route pass found (``ki``/``ks``),
  and the run pass makes the ``Row`` values from them; nothing is pickled.
- The step ``to_dataframe`` reads writes the output columns in its run pass (no decode pass).
- A single-input, non-keyed step fed by the main output of a step of the same parallelism that
  nobody else reads runs in that step's run pass (Flink's chaining of forward edges: subtask
  ``i`` feeds subtask ``i``, in order, as the shuffle would).
- Stateless steps (``OperatorNode.stateless``: Bytewax's ``map``, ``filter``, ``flat_map``, ...)
  between a source or a step and the keyed step they feed run in that keyed step's route pass,
  on each record where it is, as Bytewax runs them on whichever worker holds the item; their
  outputs are routed instead (``_prechained``).
"""

from __future__ import annotations

import functools
import itertools
import os
import pickle
import re
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import cloudpickle

from fs_compat.runtime import (
    Edge,
    ExternalSourceNode,
    JobSummary,
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
    row_field,
    upstream_of,
)

from ._convert import OutputColumns, RowReader, dumps
from ._counters import StepTally, counting, step_tally
from ._ship import check_shippable
from ._worker import worker_pass

_FIELDS = (("tag", "string"), ("v", "binary"), ("ts", "long"), ("wm", "long"), ("ch", "int"), ("seq", "long"))
#: A routed event: ``inp`` (which input of the step) and ``part`` (which subtask) added.
#: ``ki``/``ks``: the record's key, when it is an ``int`` (of 64 bits) or a ``str``, so the run
#: pass need not call the key selector again.
_ROUTING = (("inp", "int"), ("part", "int"), ("ki", "long"), ("ks", "string"))
_ROUTED = (*_FIELDS, *_ROUTING)
#: Arrow record batches leave a task at this many rows.
_BATCH_ROWS = 8192


def _schema(fields: Sequence[tuple[str, str]], extra: Sequence[Any] = ()) -> Any:
    """The Spark schema of ``fields``, then the ``extra`` StructFields."""
    from pyspark.sql.types import BinaryType, IntegerType, LongType, StringType, StructField, StructType

    kinds = {"string": StringType(), "binary": BinaryType(), "long": LongType(), "int": IntegerType()}
    return StructType([*(StructField(name, kinds[kind], True) for name, kind in fields), *extra])


def _arrow_schema(fields: Sequence[tuple[str, str]]) -> Any:
    import pyarrow as pa

    kinds = {"string": pa.string(), "binary": pa.binary(), "long": pa.int64(), "int": pa.int32()}
    return pa.schema([(name, kinds[kind]) for name, kind in fields])


class _Source:
    """A bounded DataFrame source, read in place by the route passes of the steps that consume
    it. ``seq`` keeps the DataFrame's order (partition by partition) and interleaves the sources
    round-robin, as the in-process target reads them; a record's timestamp is the
    ``withWatermark`` column's, when there is one."""

    def __init__(self, df: Any, index: int, n_sources: int) -> None:
        from pyspark.sql.types import StructField

        marked = watermark_column(df.schema)
        self.reader = RowReader(df.schema, marked[0] if marked else None)
        #: Whether records take their timestamps from a ``withWatermark`` column.
        self.timed = marked is not None
        self.schema = df.schema
        self.index = index
        self.n_sources = n_sources
        #: The value columns a routed record carries instead of ``v`` (``c0``, ``c1``, ...).
        self.fields = [StructField(f"c{i}", f.dataType, True) for i, f in enumerate(df.schema.fields)]

    def read(self, batch: Any) -> tuple[list[list[Any]], list[int | None]]:
        """The Python columns of ``batch`` and its records' timestamps."""
        cols = self.reader.columns(batch.columns)
        return cols, self.reader.stamps(cols, batch.num_rows)

    def seqs(self, first: int, n: int) -> list[int]:
        """The ``seq``s of ``n`` records from partition-wide position ``first`` on."""
        k, i = self.n_sources, self.index
        return list(range(first * k + i, (first + n) * k + i, k))


class _Frame:
    """A step's output on Spark: its DataFrame of events and how many channels it has. For a
    DataFrame source (``source`` set), ``df`` is the DataFrame itself, read by the consumers'
    route passes; ``events()`` gives it as events where a consumer needs that."""

    def __init__(self, df: Any, channels: int, source: _Source | None = None) -> None:
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

            row = _first_row()
            schema = _arrow_schema(_FIELDS)
            for batch in batches:
                cols, stamps = source.read(batch)
                n = batch.num_rows
                seqs = source.seqs(row, n)
                row += n
                blobs = [dumps(r) for r in source.reader.make_rows(cols)]
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

        return self.df.mapInArrow(worker_pass(events), _schema(_FIELDS))


def _first_row() -> int:
    """The position a DataFrame partition's first row gets in ``seq``: partition-major."""
    from pyspark import TaskContext

    context = TaskContext.get()
    return (context.partitionId() if context is not None else 0) << 32


def _parallelism(node: Node, config: LocalConfig) -> int:
    if isinstance(node, OperatorNode):
        return node.parallelism or config.parallelism
    return 1  # a timestamp assigner sees its whole input, as the in-process target does


def _route(
    step: str,
    edge_index: int,
    edge: Edge,
    p: int,
    max_parallelism: int,
    channels: int,
    source: _Source | None = None,
    columnar: bool = False,
    before: _Prechain | None = None,
) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """The mapInArrow function that gives each event of one input of ``step`` its subtask
    (``part``). A non-keyed edge between steps of equal parallelism forwards (upstream subtask
    ``i`` feeds subtask ``i``, so each record keeps its place among its channel's), else it
    rebalances, as Flink's default partitioning does.

    With ``source``, the input is that DataFrame source's rows: the records keep its columns
    (``columnar``) or become events with pickled Rows. With ``before``, the records first go
    through those stateless steps, and their outputs are routed instead."""
    key_selector = edge.key_selector
    encoder = KeyEncoder(edge.key_codec, max_parallelism) if key_selector is not None else None
    broadcast = edge.broadcast
    forward = key_selector is None and not broadcast and channels == p

    def keyed(values: Sequence[Any]) -> tuple[list[int], list[Any]]:
        """The subtask of each value (None, a watermark row: -1) and its key."""
        assert encoder is not None and key_selector is not None
        groups, keys = locate_keys(step, key_selector, encoder, values)
        return [-1 if g < 0 else g * p // max_parallelism for g in groups], keys

    def folded(cols: list[list[Any]], field: int) -> tuple[list[int], list[Any]] | None:
        """``keyed`` of a DataFrame source's records whose key is their field ``field`` (the
        selector returns it as is, see ``row_field``): no Row and no selector call per record.
        None when a key is missing or unusable: ``keyed`` on the Rows names the record."""
        assert encoder is not None
        groups = encoder.key_groups(cols[field])
        if groups is None:
            return None
        return [g * p // max_parallelism for g in groups], cols[field]

    def subtasks(batch: Any, values: list[Any] | None) -> tuple[list[int], list[Any] | None]:
        """The subtask of each event of ``batch`` (watermark rows: -1), and the keys; ``values``
        are the records' values when known (None for watermarks)."""
        n = batch.num_rows
        if broadcast:
            return [-1] * n, None
        if key_selector is None:
            marks = batch.column("wm").to_pylist()
            parts = batch.column("ch" if forward else "seq").to_pylist()
            return [-1 if w is not None else c % p for w, c in zip(marks, parts, strict=True)], None
        if values is None:
            loads = pickle.loads
            values = [None if v is None else loads(v) for v in batch.column("v").to_pylist()]
        return keyed(values)

    def spread(parts: list[int], n: int) -> tuple[list[int], list[int] | None]:
        """Each event's subtasks: watermarks and broadcast records go to every subtask (the rows
        to take, in order, else None: every row once)."""
        if p > 1 and -1 in parts:
            rows, every = [], range(p)
            for i, part in enumerate(parts):
                if part < 0:
                    rows.extend([i] * p)
                else:
                    rows.append(i)
            return [q for part in parts for q in (every if part < 0 else (part,))], rows
        if p == 1:
            return [0] * n, None
        return parts, None

    def route(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        schema = _arrow_schema(_ROUTED)
        types = [field.type for field in _arrow_schema(_FIELDS)]
        steps = before.open(channels) if before is not None else None
        for batch in batches:
            values = None
            if steps is not None:
                batch, values = steps.events(batch)
            parts, keys = subtasks(batch, values)
            parts, rows = spread(parts, batch.num_rows)
            if rows is not None:
                batch = batch.take(pa.array(rows, pa.int64()))
            columns = [batch.column(name) for name, _ in _FIELDS]
            columns = [c if c.type == t else c.cast(t) for c, t in zip(columns, types, strict=True)]
            routing = _routing(edge_index, parts, keys, rows)
            yield pa.RecordBatch.from_arrays([*columns, *routing], schema=schema)
        if steps is not None:
            steps.close()

    def route_source(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa
        from pyspark.sql.pandas.types import to_arrow_schema

        assert source is not None
        reader = source.reader
        fields = _schema(_COLUMNAR, source.fields) if columnar else _schema(_FIELDS)
        # Arrow timestamps with a zone hold UTC instants whatever the zone's name; Spark reads
        # any zone back as TimestampType, so UTC serves for every session time zone.
        schema = to_arrow_schema(_schema_with_routing(fields, columnar), timezone="UTC")
        types = [f.type for f in schema][len(_COLUMNAR) : len(_COLUMNAR) + len(source.fields)]
        first = _first_row()
        steps = before.open(1) if before is not None else None
        # The key as a column: the records cross the shuffle as columns and the selector returns
        # one field as it is. Checked against the selector on each batch's first record.
        field = None
        if columnar and steps is None and key_selector is not None and not broadcast:
            field = row_field(key_selector, reader.names)
        for batch in batches:
            cols, stamps = source.read(batch)
            keyed_by_field = None
            if field is not None and batch.num_rows:
                assert key_selector is not None
                if selects_field(key_selector, reader, cols, field):
                    keyed_by_field = folded(cols, field)
                else:
                    field = None  # not what row_field said: call the selector from now on
            values = (
                reader.make_rows(cols)
                if keyed_by_field is None and (key_selector is not None or not columnar)
                else None
            )
            if steps is not None:
                assert values is not None
                values, stamps = steps.records(values, stamps)
            n = len(values) if values is not None else batch.num_rows
            seqs = source.seqs(first, n)
            first += n
            keys = None
            if broadcast:
                parts = [-1] * n
            elif keyed_by_field is not None:
                parts, keys = keyed_by_field
            elif key_selector is not None:
                assert values is not None
                parts, keys = keyed(values)
            else:
                parts = [s % p for s in seqs]
            parts, rows = spread(parts, n)
            m = len(parts)
            ts, seq = pa.array(_taken(stamps, rows), pa.int64()), pa.array(_taken(seqs, rows), pa.int64())
            routing = _routing(edge_index, parts, keys, rows)
            if columnar:
                if rows is not None:
                    batch = batch.take(pa.array(rows, pa.int64()))
                arrays = [c if c.type == t else c.cast(t) for c, t in zip(batch.columns, types, strict=True)]
                yield pa.RecordBatch.from_arrays([ts, seq, *arrays, *routing[1:]], schema=schema)
                continue
            assert values is not None
            blobs = pa.array(_taken([dumps(v) for v in values], rows), pa.binary())
            meta = [
                pa.nulls(m, pa.string()),
                blobs,
                ts,
                pa.nulls(m, pa.int64()),
                pa.array([0] * m, pa.int32()),
                seq,
            ]
            yield pa.RecordBatch.from_arrays([*meta, *routing], schema=schema)
        if steps is not None:
            steps.close()

    return worker_pass(route if source is None else route_source)


class _Prechain:
    """Stateless steps (``OperatorNode.stateless``, first first) that run in the route pass of
    the keyed step they feed, before its key selector (see ``_prechained``); ``tally`` counts
    them. ``open`` gives what one Spark task runs them with."""

    def __init__(self, steps: Sequence[Node], config: LocalConfig, tally: StepTally | None) -> None:
        self.steps = list(steps)
        self.config = config
        self.tally = tally

    def open(self, channels: int) -> _PrechainTask:
        return _PrechainTask(self, channels)


class _PrechainTask:
    """The stateless steps in one route task: a SubtaskRunner of them, whose outputs replace
    the records. Watermarks pass by them (the steps emit nothing at watermarks or at the end
    of input)."""

    def __init__(self, chain: _Prechain, channels: int) -> None:
        from pyspark import TaskContext

        context = TaskContext.get()
        task = context.partitionId() if context is not None else 0
        first, config = chain.steps[0], chain.config
        self.runner = SubtaskRunner(
            first, task % _parallelism(first, config), config, [1], (), chain.steps[1:]
        )
        self.counts = chain.tally.open() if chain.tally is not None else None
        if self.counts is not None:
            self.counts.started(self.runner)
        # A frame of one channel may hold it in several partitions (a source's), in partition
        # order; in other frames partition i holds channel i. Outputs are numbered in order.
        self.seq = task << 32 if channels == 1 else 0

    def records(self, values: list[Any], stamps: list[int | None]) -> tuple[list[Any], list[int | None]]:
        """The outputs of the records ``values`` (with ``stamps``), and their timestamps."""
        if self.counts is not None:
            self.counts.records[0] += len(values)
        self.runner.records(0, values, stamps)
        outs = self.runner.drain()
        return [out[1] for out in outs], [out[2] for out in outs]

    def events(self, batch: Any) -> tuple[Any, list[Any]]:
        """The events of ``batch`` (``_FIELDS``) after the steps: each record replaced by its
        outputs (on its channel, with their timestamps), the watermarks as they are, numbered
        anew (``seq``); also the values of the new events (None for watermarks)."""
        import pyarrow as pa

        loads, push, drain = pickle.loads, self.runner.push, self.runner.drain
        if self.counts is not None:
            self.counts.records[0] += batch.column("wm").null_count
        values: list[Any] = []
        stamps: list[int | None] = []
        marks: list[int | None] = []
        chs: list[int] = []
        names = ("v", "ts", "wm", "ch")
        for v, ts, wm, ch in zip(*(batch.column(name).to_pylist() for name in names), strict=True):
            if wm is not None:
                values.append(None)
                stamps.append(ts)
                marks.append(wm)
                chs.append(ch)
                continue
            push(0, loads(v), ts)
            for _tag, value, stamp, _wm in drain():
                values.append(value)
                stamps.append(stamp)
                marks.append(None)
                chs.append(ch)
        n = len(values)
        first, self.seq = self.seq, self.seq + n
        arrays = [
            pa.nulls(n, pa.string()),
            pa.array(
                [None if w is not None else dumps(v) for v, w in zip(values, marks, strict=True)], pa.binary()
            ),
            pa.array(stamps, pa.int64()),
            pa.array(marks, pa.int64()),
            pa.array(chs, pa.int32()),
            pa.array(range(first, first + n), pa.int64()),
        ]
        return pa.RecordBatch.from_arrays(arrays, schema=_arrow_schema(_FIELDS)), values

    def close(self) -> None:
        """The route task ended: close the steps (their end-of-input watermark is dropped: the
        keyed step's pass ends its input itself) and hand over the counts."""
        self.runner.finish()
        self.runner.drain()
        if self.counts is not None:
            self.counts.publish()


def _routing(edge_index: int, parts: list[int], keys: list[Any] | None, rows: list[int] | None) -> list[Any]:
    """The ``_ROUTING`` columns of a routed batch: ``keys`` are the records' keys (None: not
    known), before ``rows`` are taken."""
    import pyarrow as pa

    m = len(parts)
    if keys is None:
        known = [pa.nulls(m, pa.int64()), pa.nulls(m, pa.string())]
    else:
        known = key_columns(_taken(keys, rows))
    return [pa.array([edge_index] * m, pa.int32()), pa.array(parts, pa.int32()), *known]


_INT64 = 1 << 63


def key_columns(keys: list[Any]) -> list[Any]:
    """The ``ki`` and ``ks`` columns of records with ``keys``: an ``int`` key (of exactly that
    type, in the int64 range) in ``ki``, a ``str`` key in ``ks``, other keys (and None) in
    neither: the pass that reads them runs the key selector again for those."""
    import pyarrow as pa

    n = len(keys)
    kinds = set(map(type, keys))
    if kinds == {str}:
        return [pa.nulls(n, pa.int64()), pa.array(keys, pa.string())]
    if kinds == {int} and -_INT64 <= min(keys) and max(keys) < _INT64:
        return [pa.array(keys, pa.int64()), pa.nulls(n, pa.string())]
    ints = [k if type(k) is int and -_INT64 <= k < _INT64 else None for k in keys]
    strs = [k if type(k) is str else None for k in keys]
    return [pa.array(ints, pa.int64()), pa.array(strs, pa.string())]


def locate_keys(
    step: str, key_selector: Callable[[Any], Any], encoder: KeyEncoder, values: Sequence[Any]
) -> tuple[list[int], list[Any]]:
    """The key group of each of ``values`` on the keyed edge into ``step`` (-1 for None, a
    watermark row) and its key (None for those), as ``route_key`` gives them (a failing
    selector or an unusable key is its StepError)."""
    groups: list[int] = []
    keys: list[Any] = []
    add_group, add_key = groups.append, keys.append
    for value in values:
        if value is None:
            add_group(-1)
            add_key(None)
            continue
        key, _, group = route_key(step, key_selector, encoder, value)
        add_group(group)
        add_key(key)
    return groups, keys


def selects_field(
    key_selector: Callable[[Any], Any], reader: RowReader, cols: list[list[Any]], field: int
) -> bool:
    """Whether ``key_selector`` gives field ``field`` of the first record of ``cols``, as
    ``row_field`` said it would (checked once per batch before reading keys from the column)."""
    try:
        return bool(key_selector(reader.row([c[0] for c in cols])) == cols[field][0])
    except Exception:
        return False  # the selector's own error comes when it is called per record


def _taken(values: list[Any], rows: list[int] | None) -> list[Any]:
    """``values`` at ``rows`` (None: all of them)."""
    return values if rows is None else [values[r] for r in rows]


#: A routed record of a DataFrame source that is its step's only input, before the source's
#: columns (instead of ``v``) and ``_ROUTING`` but ``inp``: it has no ``tag``, ``wm``, ``ch`` or
#: ``inp`` (the main output, a record, channel 0, input 0), so they do not cross the shuffle.
_COLUMNAR = (("ts", "long"), ("seq", "long"))


def _schema_with_routing(schema: Any, columnar: bool = False) -> Any:
    """``schema`` with the ``_ROUTING`` fields after it (``columnar``: without ``inp``)."""
    from pyspark.sql.types import StructType

    routing = _ROUTING[1:] if columnar else _ROUTING
    return StructType([*schema.fields, *_schema(routing).fields])


def _run_subtasks(
    node: Node,
    config: LocalConfig,
    channels: Sequence[int],
    tags: Sequence[str],
    *,
    source: _Source | None = None,
    chain: Sequence[Node] = (),
    output: tuple[str | None, OutputColumns] | None = None,
    tally: StepTally | None = None,
    key_field: int | None = None,
) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """The mapInArrow function that runs ``node``'s subtasks over their ordered events (and
    ``chain``, the steps that run in the same pass after it); ``tally`` counts them.

    With ``source``, records carry that DataFrame source's columns instead of ``v``. With
    ``output = (tag, columns)``, the pass writes the values of output ``tag`` as ``columns``
    (``to_dataframe``'s schema) instead of events. With ``key_field``, Spark routed the
    records by that column (``_direct_route``): they have no ``ts``, ``ki`` or ``ks``, and
    their keys are the column's values."""
    step = (chain[-1] if chain else node).name

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
        #: The main output's values, when they are the output columns' (see ``take``).
        main: list[Any] = []
        main_values = main if output is not None and output[0] is None else None
        if output is not None:
            want, columns = output
            out_cols: list[list[Any]] = [[] for _ in columns.names]
            out_schema = columns.arrow_schema()

        def take(r: SubtaskRunner) -> None:
            nonlocal seq
            outs = r.drain()
            if output is not None:
                if want is None:  # the runner put the main output's values in ``main``
                    wanted = main[:]
                    main.clear()
                else:
                    wanted = [v for t, v, _s, w in outs if w is None and t == want]
                try:
                    cols = columns.columns(wanted)
                except TypeError as exc:
                    raise StepError(f"step '{step}': {exc}") from exc
                for col, name in zip(out_cols, columns.names, strict=True):
                    col.extend(cols[name])
                seq += len(wanted)
                return
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

        def pending() -> int:
            return len(out_cols[0]) if output is not None else len(out_seq)

        def flush() -> Any:
            if output is not None:
                try:
                    arrays = [
                        pa.array(col, field.type) for col, field in zip(out_cols, out_schema, strict=True)
                    ]
                except (TypeError, ValueError) as exc:  # Arrow's errors are ones of these too
                    raise StepError(f"step '{step}': {columns.mismatch(out_cols, exc)}") from exc
                for col in out_cols:
                    col.clear()
                return pa.RecordBatch.from_arrays(arrays, schema=out_schema)
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

        counts = tally.open() if tally is not None else None

        def finished(r: SubtaskRunner) -> None:
            r.finish()
            if counts is not None:
                counts.finished(r)
            take(r)

        loads = pickle.loads
        width = len(source.fields) if source is not None else 0
        single = len(channels) == 1
        # A DataFrame source's columns (``_COLUMNAR``): records of input 0, channel 0 only.
        plain = source is not None
        for batch in batches:
            n = batch.num_rows
            if n == 0:
                continue
            if counts is not None:
                if plain:
                    counts.records[0] += n
                else:
                    counts.batch(batch)
            if source is not None:
                cols = source.reader.columns([batch.column(f"c{i}") for i in range(width)])
                values: list[Any] = source.reader.make_rows(cols)
            else:
                values = [None if v is None else loads(v) for v in batch.column("v").to_pylist()]
            ts_col = batch.column("ts") if key_field is None else None
            stamps: Any = (
                itertools.repeat(None) if ts_col is None or ts_col.null_count == n else ts_col.to_pylist()
            )
            parts = batch.column("part").to_pylist()
            if single and parts[0] == parts[-1] and (plain or batch.column("wm").null_count == n):
                # Records of one subtask only (the input is sorted by subtask): one call.
                if parts[0] != part:
                    if runner is not None:
                        finished(runner)
                    part, seq = parts[0], 0
                    runner = SubtaskRunner(node, part, config, channels, tags, chain, main_values)
                    if counts is not None:
                        counts.started(runner)
                assert runner is not None
                keys = _keys(batch) if key_field is None else cols[key_field]
                if keys is not None and source is not None:
                    _check_key(node.name, node.inputs[0].key_selector, values[0], keys[0])
                runner.records(0, values, stamps, keys)
            else:
                if type(stamps) is not list:
                    stamps = [None] * n
                columns_: list[list[Any]]
                if plain:
                    columns_ = [[0] * n, [0] * n, [None] * n]
                else:
                    columns_ = [batch.column(name).to_pylist() for name in ("inp", "ch", "wm")]
                for row_part, v, ts, inp, ch, wm in zip(parts, values, stamps, *columns_, strict=True):
                    if row_part != part:
                        if runner is not None:
                            finished(runner)
                        part, seq = row_part, 0
                        runner = SubtaskRunner(node, part, config, channels, tags, chain, main_values)
                        if counts is not None:
                            counts.started(runner)
                    assert runner is not None
                    if wm is not None:
                        runner.watermark(inp, ch, wm)
                    else:
                        runner.push(inp, v, ts)
            if runner is not None:
                take(runner)
            if pending() >= _BATCH_ROWS:
                yield flush()
        if runner is not None:
            finished(runner)
        if counts is not None:
            counts.publish()
        yield flush()

    return worker_pass(run)


_pickle_dumps = pickle.dumps


def _check_key(step: str, selector: Callable[[Any], Any] | None, value: Any, key: Any) -> None:
    """That ``selector`` gives ``key``, the key a DataFrame source's record was routed by, as
    ``row_field`` said (checked on each batch's first record): a record routed by another key
    than its selector's would share state with the wrong records."""
    if selector is None or key is None:
        return
    try:
        got = selector(value)
    except Exception as exc:
        got = exc
    if got != key:
        raise StepError(
            f"step '{step}': record {value!r} was routed by its key column ({key!r}), but the key "
            f"selector gives {got!r}"
        )


def _keys(batch: Any) -> list[Any] | None:
    """The keys the route pass found for a routed batch's records (None where not known)."""
    ints, strs, n = batch.column("ki"), batch.column("ks"), batch.num_rows
    if ints.null_count == 0:
        return ints.to_pylist()  # type: ignore[no-any-return]
    if strs.null_count == 0:
        return strs.to_pylist()  # type: ignore[no-any-return]
    if ints.null_count == n and strs.null_count == n:
        return None
    return [i if i is not None else s for i, s in zip(ints.to_pylist(), strs.to_pylist(), strict=True)]


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
) -> _Frame:
    """``node``'s frame (with ``chain`` run in the same pass after it, ``before`` in its route
    pass before it; ``tags`` are the last step's consumed side outputs): route -> repartition
    -> sort -> run."""
    from pyspark.sql import functions as F  # noqa: N812 - Spark's convention

    p = _parallelism(node, config)
    routed = None
    channels = []
    # Where each input's records come from: ``before``'s input, else the input itself.
    reads = [before[0].inputs[0]] if before else node.inputs
    prechain = _Prechain(before, config, step_tally(before[0])) if before else None
    # A DataFrame source's rows cross the shuffle as its columns when they are the only input.
    single = reads[0].source.id if len(reads) == 1 and not before else None
    columnar = single is not None and frames[single].source is not None
    # Records keyed by a column of the source: Spark routes them (``_direct_route``).
    field = _key_column(node.inputs[0], frames[single].source) if columnar and single is not None else None
    for index, (edge, read) in enumerate(zip(node.inputs, reads, strict=True)):
        src = frames[read.source.id]
        channels.append(src.channels)
        tag = F.col("tag")
        df = src.df
        if field is not None:
            assert src.source is not None
            routed = _direct_route(df, src.source, field, p)
            continue
        if src.source is not None:
            if read.side_tag is not None:  # a source has no side outputs
                df = df.limit(0)
            route = _route(
                node.name, index, edge, p, config.max_parallelism, 1, src.source, columnar, prechain
            )
            fields = _schema(_COLUMNAR, src.source.fields) if columnar else _schema(_FIELDS)
            df = df.mapInArrow(route, _schema_with_routing(fields, columnar))
        else:
            df = df.where(tag.isNull() if read.side_tag is None else tag == read.side_tag)
            route = _route(node.name, index, edge, p, config.max_parallelism, src.channels, before=prechain)
            df = df.mapInArrow(route, _schema(_ROUTED))
        routed = df if routed is None else routed.unionByName(df)
    assert routed is not None
    # Subtask i to Spark partition i (hashing ``part`` itself can put two subtasks in one task).
    spread = F.element_at(F.array(*[F.lit(v) for v in partition_keys(p)]), F.col("part") + 1)
    # Spark partition i holds subtask i only: with ``field``, ``seq`` alone orders it.
    order = ("seq",) if field is not None else ("part", "seq") if columnar else ("part", "seq", "ch", "inp")
    ordered = routed.repartition(p, spread).sortWithinPartitions(*order)
    source = frames[single].source if columnar and single is not None else None
    run = _run_subtasks(
        node,
        config,
        channels,
        sorted(tags),
        source=source,
        chain=chain,
        output=output,
        tally=step_tally(node),
        key_field=field,
    )
    frame = _Frame(ordered.mapInArrow(run, output[1].schema if output is not None else _schema(_FIELDS)), p)
    frame.output = output is not None
    return frame


#: Spark types whose Python values are exactly ``int`` or ``str`` (keys the run pass finds in
#: ``KeyEncoder``'s memo).
_KEY_COLUMN_TYPES = frozenset({"LongType", "IntegerType", "ShortType", "ByteType", "StringType"})


def _key_column(edge: Edge, source: _Source | None) -> int | None:
    """The field of a DataFrame source's records that the keyed ``edge`` reads them by, when its
    key selector returns that field as it is (``row_field``), the field is an integer or string
    column and the records have no timestamps: then nothing about routing them needs Python
    (``_direct_route``). None otherwise."""
    if source is None or source.timed or edge.key_selector is None or edge.broadcast:
        return None
    field = row_field(edge.key_selector, source.reader.names)
    if field is None or type(source.schema.fields[field].dataType).__name__ not in _KEY_COLUMN_TYPES:
        return None
    return field


def _direct_route(df: Any, source: _Source, field: int, p: int) -> Any:
    """The records of a DataFrame source keyed by their column ``field`` (``_key_column``),
    routed by Spark with no Python pass: ``seq`` keeps the DataFrame's order (partition by
    partition, interleaved with the other sources as ``_Source.seqs`` does), then the source's
    columns (``c0``, ...), and ``part`` is Spark's hash of the key (any stable assignment serves
    a bounded job: each key goes to one subtask). The run pass reads the keys from the column
    (``_run_subtasks(key_field=...)``); a null key is routed too, and the run pass calls the key
    selector for it, which fails naming the record."""
    from pyspark.sql import functions as F  # noqa: N812 - Spark's convention

    names = [f"c{i}" for i in range(len(source.fields))]
    seq = F.monotonically_increasing_id() * source.n_sources + source.index
    part = F.pmod(F.hash(F.col(names[field])), F.lit(p)) if p > 1 else F.lit(0)
    return df.toDF(*names).select(seq.alias("seq"), *names, part.cast("int").alias("part"))


def _spark_hash_int(value: int) -> int:
    """Spark's ``hash`` of an ``int`` column value (Murmur3 x86 32-bit, seed 42), as its hash
    partitioning uses it."""
    mask = 0xFFFFFFFF
    k1 = (value & mask) * 0xCC9E2D51 & mask
    k1 = ((k1 << 15) | (k1 >> 17)) & mask
    k1 = k1 * 0x1B873593 & mask
    h1 = 42 ^ k1
    h1 = ((h1 << 13) | (h1 >> 19)) & mask
    h1 = (h1 * 5 + 0xE6546B64) & mask
    h1 ^= 4  # the length in bytes
    h1 ^= h1 >> 16
    h1 = h1 * 0x85EBCA6B & mask
    h1 ^= h1 >> 13
    h1 = h1 * 0xC2B2AE35 & mask
    h1 ^= h1 >> 16
    return h1 - (1 << 32) if h1 >= 1 << 31 else h1


@functools.cache
def partition_keys(p: int) -> tuple[int, ...]:
    """For each subtask ``i < p``, an ``int`` that Spark's hash partitioning into ``p`` partitions
    sends to partition ``i`` (``pmod(hash(v), p) == i``)."""
    found: dict[int, int] = {}
    v = 0
    while len(found) < p:
        found.setdefault(_spark_hash_int(v) % p, v)
        v += 1
    return tuple(found[i] for i in range(p))


def _chained(node: Node, nodes: Sequence[Node], uses: dict[int, int], config: LocalConfig) -> Node | None:
    """The step that runs in ``node``'s pass after it, if any: the only reader of ``node``'s
    output, reading its main output through a forward edge (one input, not keyed, not
    broadcast, the same parallelism), as Flink chains operators."""
    if not isinstance(node, (OperatorNode, TimestampNode)) or uses.get(node.id, 0) != 1:
        return None
    for follower in nodes:
        if len(follower.inputs) != 1 or follower.inputs[0].source is not node:
            continue
        edge = follower.inputs[0]
        ok = (
            isinstance(follower, OperatorNode)
            and not follower.keyed
            and edge.side_tag is None
            and edge.key_selector is None
            and not edge.broadcast
            and _parallelism(follower, config) == _parallelism(node, config)
        )
        return follower if ok else None
    return None


def _prechained(node: Node, nodes: Sequence[Node], uses: dict[int, int], config: LocalConfig) -> list[Node]:
    """The steps that run in keyed ``node``'s route pass, before its key selector (first
    first): the ``stateless``, non-keyed steps its only input comes through, one after another,
    each read by the next only (one input, main output, not keyed, not broadcast). Records of
    stateless steps may be handled wherever they are, as Bytewax does; steps chained into an
    upstream step's pass (``_chained``) stay there."""
    if not isinstance(node, OperatorNode) or not node.keyed or len(node.inputs) != 1:
        return []
    steps: list[Node] = []
    edge = node.inputs[0]
    while True:
        up = edge.source
        ok = (
            isinstance(up, OperatorNode)
            and up.stateless
            and not up.keyed
            and len(up.inputs) == 1
            and uses.get(up.id, 0) == 1
            and edge.side_tag is None
            and up.inputs[0].key_selector is None
            and not up.inputs[0].broadcast
        )
        if not ok:
            break
        steps.insert(0, up)
        edge = up.inputs[0]
    while steps and _chained(steps[0].inputs[0].source, nodes, uses, config) is steps[0]:
        steps.pop(0)
    return steps


_STEP_ERROR = re.compile(r"(?:fs_compat\.runtime\._local\.)?StepError: (.*)")


def _collect(frame: _Frame, tag: str | None) -> list[Any]:
    from pyspark.sql import functions as F  # noqa: N812

    col = F.col("tag")
    df = frame.events().where((col.isNull() if tag is None else col == tag) & F.col("wm").isNull())
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
    spark: Any,
    nodes: Sequence[Node],
    config: LocalConfig,
    output: tuple[Node, str | None, OutputColumns] | None = None,
) -> tuple[dict[int, _Frame], list[Any]]:
    """The frame of every step of ``nodes`` (topologically ordered) but the chained ones (see
    ``_chained`` and ``_prechained``); also the DataFrames it persisted (steps with several
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
    before = {node.id: _prechained(node, nodes, uses, config) for node in nodes}
    chained: set[int] = {step.id for steps in before.values() for step in steps}
    for node in nodes:
        if node.id in chained:
            continue
        if isinstance(node, ExternalSourceNode):
            frame = _Frame(node.handle, 1, _Source(node.handle, sources.index(node), len(sources)))
            if uses.get(node.id, 0) > 1:  # read once, as events, by all its consumers
                frame = _Frame(frame.events(), 1)
        elif isinstance(node, SourceNode):
            frame = _source_frame(spark, node, sources.index(node), len(sources))
        elif isinstance(node, (OperatorNode, TimestampNode)):
            chain: list[Node] = []
            last: Node = node
            while (follower := _chained(last, nodes, uses, config)) is not None:
                chain.append(follower)
                last = follower
            chained.update(n.id for n in chain)
            wanted = set(tags.get(last.id, ()))
            out = None
            if output is not None and output[0] is last and not uses.get(last.id):
                out = (output[1], output[2])
                if output[1] is not None:
                    wanted.add(output[1])
            frame = _stage(node, frames, config, sorted(wanted), chain, out, before[node.id])
            node = last
        else:
            continue
        if uses.get(node.id, 0) > 1:
            frame.df = frame.df.persist()
            cached.append(frame.df)
        frames[node.id] = frame
    return frames, cached


def run_batch(spark: Any, sinks: Sequence[Node], config: LocalConfig) -> JobSummary:
    """Run the bounded plan that feeds ``sinks`` on ``spark``; sinks consume on the driver.
    Returns the job's summary (``job_name`` empty: the front end names the job)."""
    start = time.perf_counter()
    nodes = upstream_of(sinks)
    with counting(spark) as counters:
        frames, cached = _build_frames(spark, nodes, config)
    try:
        for sink in nodes:
            if isinstance(sink, SinkNode):
                assert sink.consume is not None
                edge = sink.inputs[0]
                values = _collect(frames[edge.source.id], edge.side_tag)
                counters.sink_received(sink, len(values))
                for value in values:
                    sink.consume(value)
    finally:
        for df in cached:
            df.unpersist()
    parallelism = {node.id: _parallelism(node, config) for node in nodes}
    target = f"spark ({spark.sparkContext.master})"
    return counters.summary(nodes, parallelism, target=target, wall_time_s=time.perf_counter() - start)


def batch_dataframe(spark: Any, node: Node, tag: str | None, config: LocalConfig, output_type: Any) -> Any:
    """The values of ``node``'s output ``tag`` (None: the main output) as a DataFrame whose
    schema comes from ``output_type`` (see ``_convert``). Lazy: Spark runs the plan when the
    DataFrame is used; steps with several consumers stay persisted."""
    from pyspark.sql import functions as F  # noqa: N812

    out = OutputColumns(output_type)
    frames, _cached = _build_frames(spark, upstream_of([node]), config, (node, tag, out))
    frame = frames[node.id]
    if frame.output:  # the step's run pass wrote the columns
        return frame.df
    col = F.col("tag")
    df = frame.events().where((col.isNull() if tag is None else col == tag) & F.col("wm").isNull())
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
            try:
                encoded = pa.RecordBatch.from_pydict(cols, schema=arrow_schema)
            except (TypeError, ValueError) as exc:  # Arrow's errors are ones of these too
                raise StepError(f"step '{step}': {out.mismatch([cols[n] for n in out.names], exc)}") from exc
            yield encoded

    return df.select("v").mapInArrow(worker_pass(decode), out.schema)
