"""W1: a keyed running count and sum, as a PyFlink or Bytewax user writes it, against the practical
limit, on a matrix of job shapes.

Today's W1 (shape ``w1``): events ``(key, amount)`` with ``key = i % 10,000`` and ``amount = i``,
keyed by ``key``, through a ``MapFunction`` that keeps ``(count, sum)`` in a ``ValueState``
declared with ``Types.TUPLE([Types.LONG(), Types.LONG()])`` (``--state pickled``:
``Types.PICKLED_BYTE_ARRAY()``) and returns ``(key, count, sum)`` for every event. The other
shapes (``SHAPES``) vary the key (int, string, tuple), the key selector (by index, by field
name, ``attrgetter``/``itemgetter``), the state read (``value() or default``, ``if v is None``),
the output (a scalar, a tuple, a ``Row``) and the function (``MapFunction``,
``KeyedProcessFunction``), and one is the Bytewax W1 (``op.stateful_map``, ``w1_bytewax.py``).

- Spark (``execution.target=spark``, local[2], parallelism 2), every shape chosen by
  ``--shapes``: the events are a Spark DataFrame (``spark.range``), read with
  ``env.from_dataframe(df)``; the output is ``ds.to_dataframe()`` written to Spark's ``noop``
  sink, so Spark runs the whole job and nothing is collected. Against it, in the same rounds:
  the hand-written loop of the same shape (``repartition(2, key) -> sortWithinPartitions(key,
  amount) -> mapInArrow`` with a plain dict, written to ``noop``), and the shape's API-shape
  floor (the user's own functions in that loop, over ``Row``s and a dict state). Each output
  is checked against the hand-written loop's.
- In-process (``execution.target=local``, the ``w1`` shape): the events are a list of tuples
  (``env.from_collection``); the output goes to a ``SinkFunction`` that counts. Reference: a
  plain Python loop calling a per-record callback (key function, dict get/set, output tuple)
  and handing each output to a sink callback.
- Real Bytewax (``--bytewax-python``, default ``$BYTEWAX_PYTHON``): the Bytewax W1 flow of
  ``w1_bytewax.py`` with Bytewax's own ``run_main`` on that interpreter, in a subprocess,
  against the ``bytewax`` shape on Spark; its output is checked against ours on a small input.

    .venv/bin/python bench/w1.py                                  # the full run
    .venv/bin/python bench/w1.py --events 200000 --repeat 1       # a quick look
    .venv/bin/python bench/w1.py --only spark --shapes w1,bytewax # the earlier Spark comparison
    .venv/bin/python bench/w1.py --only spark --shapes w1 --connect   # + the w1 shape over Connect

- Spark Connect: ``--remote URL`` runs the Spark matrix over that Connect server (``sc://...``, or
  ``local[2]`` for a server in the process) instead of a classic local[2] session. ``--connect``
  runs, after the classic matrix, the ``w1`` shape again over Spark Connect (``--remote
  local[2]``, in a child process: a process cannot hold both kinds of session) and prints its
  rate beside the classic one.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import gc
import json
import operator
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import w1_bytewax

from fs_compat.common import Configuration, Row, TypeInformation, Types
from fs_compat.datastream import StreamExecutionEnvironment
from fs_compat.datastream.functions import (
    KeyedProcessFunction,
    MapFunction,
    RuntimeContext,
    SinkFunction,
)
from fs_compat.datastream.state import ValueStateDescriptor

STATE_TYPES = {
    "tuple": lambda: Types.TUPLE([Types.LONG(), Types.LONG()]),
    "pickled": Types.PICKLED_BYTE_ARRAY,
}


# The user's jobs. ------------------------------------------------------------------------------


class CountSumState:
    """``open`` of the functions below: ``self.count_sum``, a ``ValueState`` of ``(count, sum)``
    of the ``--state`` type."""

    def __init__(self, state_type: str = "tuple") -> None:
        self.state_type = state_type

    def open(self, runtime_context: RuntimeContext) -> None:
        descriptor = ValueStateDescriptor("count_sum", STATE_TYPES[self.state_type]())
        self.count_sum = runtime_context.get_state(descriptor)


class RunningCountSum(CountSumState, MapFunction):
    """W1 as a PyFlink user writes it: per key, the count and the sum of the amounts so far."""

    def map(self, value: Any) -> tuple[int, int, int]:
        key, amount = value[0], value[1]
        current = self.count_sum.value()
        if current is None:
            count, total = 1, amount
        else:
            count, total = current[0] + 1, current[1] + amount
        self.count_sum.update((count, total))
        return key, count, total


class RunningCountSumRow(RunningCountSum):
    """``RunningCountSum`` returning a ``Row(key, count, sum)``."""

    def map(self, value: Any) -> Row:
        current = self.count_sum.value()
        if current is None:
            count, total = 1, value[1]
        else:
            count, total = current[0] + 1, current[1] + value[1]
        self.count_sum.update((count, total))
        return Row(key=value[0], count=count, sum=total)


class CountSumProcess(CountSumState, KeyedProcessFunction):
    """W1 as a ``KeyedProcessFunction`` whose ``process_element`` yields a ``Row(key, count,
    sum)``, reading its state with ``value() or (0, 0)``."""

    def process_element(self, value: Any, ctx: KeyedProcessFunction.Context) -> Iterator[Row]:
        count, total = self.count_sum.value() or (0, 0)
        count, total = count + 1, total + value[1]
        self.count_sum.update((count, total))
        yield Row(key=value[0], count=count, sum=total)


class RunningCount(MapFunction):
    """Per key, the number of events so far (a scalar), in a ``ValueState`` of ``Types.LONG()``
    read with ``value() or 0``."""

    def __init__(self, state_type: str = "tuple") -> None:
        self.state_type = state_type

    def open(self, runtime_context: RuntimeContext) -> None:
        typed = Types.LONG() if self.state_type == "tuple" else Types.PICKLED_BYTE_ARRAY()
        self.count = runtime_context.get_state(ValueStateDescriptor("count", typed))

    def map(self, value: Any) -> int:
        count = (self.count.value() or 0) + 1
        self.count.update(count)
        return count


class CountingSink(SinkFunction[Any]):
    def __init__(self) -> None:
        self.count = 0

    def invoke(self, value: Any) -> None:
        self.count += 1


def environment(target: str, parallelism: int) -> StreamExecutionEnvironment:
    config = Configuration()
    config.set_string("execution.target", target)
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(parallelism)
    return env


# The shapes. ----------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Shape:
    """One W1 job shape: its events' key, the user's key selector and function, its output."""

    name: str
    line: str  # what it is, in one short line
    key: str  # "int", "str" or "tuple": the events' columns (``key_columns``)
    output: str  # "scalar" (the count), "tuple" or "row" (key, count, sum)
    selector: Callable[[Any], Any] | None = None  # None: the Bytewax flow
    function: Callable[[str], Any] | None = None  # the user's function, given ``--state``

    @property
    def columns(self) -> list[str]:
        """The events' columns: ``key`` (int or string) and ``amount``; a tuple key's second
        part is ``region``, a function of ``key`` (so the keys group the events as ``key`` does)."""
        return ["key", "amount", "region"] if self.key == "tuple" else ["key", "amount"]

    @property
    def key_columns(self) -> list[str]:
        return ["key", "region"] if self.key == "tuple" else ["key"]

    def output_type(self) -> TypeInformation[Any]:
        """The ``output_type`` of the user's step (the columns of ``to_dataframe``)."""
        key = Types.STRING() if self.key == "str" else Types.LONG()
        if self.output == "scalar":
            return Types.LONG()
        if self.output == "row":
            return Types.ROW_NAMED(["key", "count", "sum"], [key, Types.LONG(), Types.LONG()])
        return Types.TUPLE([key, Types.LONG(), Types.LONG()])

    def arrow_schema(self) -> Any:
        """The hand-written loop's and the floor's output columns, typed as ``output_type``'s."""
        import pyarrow as pa

        if self.output == "scalar":
            return pa.schema([("count", pa.int64())])
        key = pa.string() if self.key == "str" else pa.int64()
        return pa.schema([("key", key), ("count", pa.int64()), ("sum", pa.int64())])


SHAPES = [
    Shape(
        "w1",
        "int key e[0], MapFunction, if v is None, tuple out",
        "int",
        "tuple",
        lambda e: e[0],
        RunningCountSum,
    ),
    Shape(
        "int-itemgetter",
        "int key itemgetter(0), MapFunction, or 0, scalar out",
        "int",
        "scalar",
        operator.itemgetter(0),
        RunningCount,
    ),
    Shape(
        "str-index",
        "str key e[0], MapFunction, or 0, scalar out",
        "str",
        "scalar",
        lambda e: e[0],
        RunningCount,
    ),
    Shape(
        "str-attr-row",
        "str key r.key, MapFunction, if v is None, Row out",
        "str",
        "row",
        lambda r: r.key,
        RunningCountSumRow,
    ),
    Shape(
        "int-item-process",
        'int key r["key"], KeyedProcessFunction, or (0, 0), Row out',
        "int",
        "row",
        lambda r: r["key"],
        CountSumProcess,
    ),
    Shape(
        "str-attrgetter-process",
        'str key attrgetter("key"), KeyedProcessFunction, or (0, 0), Row out',
        "str",
        "row",
        operator.attrgetter("key"),
        CountSumProcess,
    ),
    Shape(
        "tuple-index",
        "tuple key (e[0], e[2]), MapFunction, or 0, scalar out",
        "tuple",
        "scalar",
        lambda e: (e[0], e[2]),
        RunningCount,
    ),
    Shape(
        "tuple-itemgetter",
        "tuple key itemgetter(0, 2), MapFunction, if v is None, tuple out",
        "tuple",
        "tuple",
        operator.itemgetter(0, 2),
        RunningCountSum,
    ),
    Shape("bytewax", "Bytewax: map to (str key, v), stateful_map, map to a tuple", "int", "tuple"),
]
SHAPE_NAMES = {shape.name: shape for shape in SHAPES}


# In-process. ----------------------------------------------------------------------------------


def local_ours(events: list[tuple[int, int]], state_type: str) -> int:
    env = environment("local", 1)
    sink = CountingSink()
    env.from_collection(events).key_by(lambda e: e[0]).map(RunningCountSum(state_type)).add_sink(sink)
    env.execute("w1")
    return len(events)


def local_reference(events: list[tuple[int, int]], state_type: str) -> int:
    """The same per-event work through a per-record Python callback over a plain dict."""
    state: dict[int, tuple[int, int]] = {}
    key_of: Callable[[tuple[int, int]], int] = lambda e: e[0]  # noqa: E731 - as a user writes it
    outputs = 0

    def on_event(value: tuple[int, int]) -> tuple[int, int, int]:
        key = key_of(value)
        current = state.get(key)
        if current is None:
            count, total = 1, value[1]
        else:
            count, total = current[0] + 1, current[1] + value[1]
        state[key] = (count, total)
        return key, count, total

    def sink(_out: tuple[int, int, int]) -> None:
        nonlocal outputs
        outputs += 1

    for event in events:
        sink(on_event(event))
    assert outputs == len(events)
    return outputs


class _FloorState:
    """The least a ValueState can do: a dict read and write under the current key (no type check,
    no snapshot, no TTL). Used only by the API-shape floor below."""

    __slots__ = ("key", "values")

    def __init__(self) -> None:
        self.values: dict[Any, Any] = {}
        self.key: Any = None

    def value(self) -> Any:
        return self.values.get(self.key)

    def update(self, value: Any) -> None:
        self.values[self.key] = value


class _CheckedFloorState(_FloorState):
    """``_FloorState`` whose ``update`` checks the value as fs-compat's heap state does before it
    keeps it (``Codec.kept_as_is`` of the descriptor's type: of that type, and immutable), and
    nothing else (no fallback, no error text, no dirty tracking)."""

    __slots__ = ("kept",)

    def __init__(self, state_type: str) -> None:
        super().__init__()
        self.kept = STATE_TYPES[state_type]().codec().kept_as_is

    def update(self, value: Any) -> None:
        if value is not None and not self.kept(value):
            raise TypeError(value)
        self.values[self.key] = value


class _FloorContext:
    def __init__(self, state: _FloorState | None = None) -> None:
        self.state = state if state is not None else _FloorState()

    def get_state(self, descriptor: Any) -> _FloorState:
        return self.state


def local_checked_floor(events: list[tuple[int, int]], state_type: str) -> int:
    """``local_floor`` over a state that checks its writes (``_CheckedFloorState``): the least
    any runtime costs that, as fs-compat does, refuses a value of the wrong type when it is
    written and never keeps a mutable one by reference."""
    return local_floor(events, state_type, _CheckedFloorState(state_type))


def local_floor(events: list[tuple[int, int]], state_type: str, state: _FloorState | None = None) -> int:
    """The API shape at no runtime cost: the user's own ``RunningCountSum`` (its ``map`` calls
    ``value()`` and ``update()``) and ``CountingSink.invoke``, driven by a bare loop over a dict
    state. No runtime of this API can beat it; the gap to the reference is the API's."""
    context = _FloorContext(state)
    fn = RunningCountSum(state_type)
    fn.open(context)  # type: ignore[arg-type]
    state, sink = context.state, CountingSink()
    key_of: Callable[[tuple[int, int]], int] = lambda e: e[0]  # noqa: E731 - as a user writes it
    fn_map, invoke = fn.map, sink.invoke
    for event in events:
        state.key = key_of(event)
        invoke(fn_map(event))
    assert sink.count == len(events)
    return sink.count


# On Spark. ------------------------------------------------------------------------------------


def events_frame(spark: Any, n: int, keys: int, key: str = "int") -> Any:
    """W1's events as a DataFrame of 2 partitions: ``key`` (``i % keys``, as a string ``u<n>``
    for ``str`` keys), ``amount`` (``i``) and, for tuple keys, ``region`` (``r<key % 8>``)."""
    from pyspark.sql import functions as F  # noqa: N812

    k = F.col("id") % keys
    columns = [
        (F.concat(F.lit("u"), k.cast("string")) if key == "str" else k).alias("key"),
        F.col("id").alias("amount"),
    ]
    if key == "tuple":
        columns.append(F.concat(F.lit("r"), (k % 8).cast("string")).alias("region"))
    return spark.range(0, n, 1, 2).select(*columns)


def spark_ours_frame(spark: Any, n: int, keys: int, shape: Shape, state_type: str) -> Any:
    """The shape's job on fs-compat: ``from_dataframe``, ``key_by``, ``map`` or ``process``,
    ``to_dataframe``."""
    if shape.function is None:
        return spark_bytewax_frame(spark, n, keys)
    env = environment("spark", 2)
    keyed = env.from_dataframe(events_frame(spark, n, keys, shape.key)).key_by(shape.selector)
    fn = shape.function(state_type)
    step = keyed.process if isinstance(fn, KeyedProcessFunction) else keyed.map
    return step(fn, output_type=shape.output_type()).to_dataframe()


def spark_bytewax_frame(spark: Any, n: int, keys: int) -> Any:
    """W1 as a Bytewax user writes it (``w1_bytewax.w1_steps``), on Spark through the same adapter."""
    from fs_compat.bytewax.spark import DataFrameSource, to_dataframe

    bw = w1_bytewax.load("fs_compat.bytewax")
    out = w1_bytewax.w1_steps(bw, bw.Dataflow("w1"), DataFrameSource(events_frame(spark, n, keys)))
    return to_dataframe(out, Types.TUPLE([Types.LONG(), Types.LONG(), Types.LONG()]), parallelism=2)


def spark_reference_frame(spark: Any, n: int, keys: int, shape: Shape) -> Any:
    """The practical limit of the shape: Spark partitions and orders, a plain dict keyed as the
    shape is does the rest (the count, or the count and sum with the key's ``key`` column)."""
    tuple_key, count_only, schema = shape.key == "tuple", shape.output == "scalar", shape.arrow_schema()

    def running(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        state: dict[Any, Any] = {}
        for batch in batches:
            out_keys = batch.column("key").to_pylist()
            ks = (
                list(zip(out_keys, batch.column("region").to_pylist(), strict=True))
                if tuple_key
                else out_keys
            )
            if count_only:
                counts = []
                for key in ks:
                    count = state.get(key, 0) + 1
                    state[key] = count
                    counts.append(count)
                yield pa.RecordBatch.from_arrays([pa.array(counts, pa.int64())], schema=schema)
                continue
            keys_out, counts, sums = [], [], []
            for key, out_key, amount in zip(ks, out_keys, batch.column("amount").to_pylist(), strict=True):
                current = state.get(key)
                if current is None:
                    count, total = 1, amount
                else:
                    count, total = current[0] + 1, current[1] + amount
                state[key] = (count, total)
                keys_out.append(out_key)
                counts.append(count)
                sums.append(total)
            yield pa.RecordBatch.from_arrays([keys_out, counts, sums], schema=schema)

    return _in_key_order(spark, n, keys, shape, running)


def spark_floor_frame(spark: Any, n: int, keys: int, shape: Shape, state_type: str) -> Any:
    """The API shape at no runtime cost on Spark: the reference's plan and single pass, but each
    event becomes a ``Row`` (what ``from_dataframe`` hands the user's functions), the user's key
    selector and function run on it over a dict state (``_FloorState``)."""
    if shape.function is None:
        return spark_bytewax_floor_frame(spark, n, keys)
    function, key_of, names, schema = shape.function, shape.selector, shape.columns, shape.arrow_schema()

    def running(batches: Iterator[Any]) -> Iterator[Any]:
        context = _FloorContext()
        fn = function(state_type)
        fn.open(context)
        for rows in _rows(batches, names):
            yield _arrow_batch(schema, _drive(fn, context, key_of, rows))

    from fs_compat.spark._worker import worker_pass

    # With the collector setting fs-compat's passes use (``worker_pass``), so that the floor
    # stays a bound for them; the reference keeps CPython's default.
    return _in_key_order(spark, n, keys, shape, worker_pass(running))


def _drive(fn: Any, context: _FloorContext, key_of: Any, rows: Iterable[Any]) -> list[Any]:
    """The outputs of the user's ``fn`` (``map``, or ``process_element``'s items) over ``rows``,
    each under its key (``key_of``) in ``context``'s dict state."""
    state, outs = context.state, []
    if isinstance(fn, KeyedProcessFunction):
        extend, process = outs.extend, fn.process_element
        for r in rows:
            state.key = key_of(r)
            extend(process(r, context))  # type: ignore[arg-type]
    else:
        append, fn_map = outs.append, fn.map
        for r in rows:
            state.key = key_of(r)
            append(fn_map(r))
    return outs


def spark_bytewax_floor_frame(spark: Any, n: int, keys: int) -> Any:
    """The Bytewax API shape at no runtime cost on Spark: the reference's plan and single pass
    (Spark partitions by the key column, so the first ``map`` need not run before the shuffle,
    which no implementation can avoid: the floor is looser than the PyFlink one), each event a
    ``Row``, then the flow's own functions: the first ``map``, the ``stateful_map`` mapper over a
    dict of states and the last ``map``."""
    key_value, count_sum, as_row = w1_bytewax.key_value, w1_bytewax.count_sum, w1_bytewax.as_row
    shape = SHAPE_NAMES["bytewax"]
    schema = shape.arrow_schema()

    def running(batches: Iterator[Any]) -> Iterator[Any]:
        states: dict[str, Any] = {}
        for rows in _rows(batches, shape.columns):
            outs = []
            for r in rows:
                key, value = key_value(r)
                state, emit = count_sum(states.get(key), value)
                states[key] = state
                outs.append(as_row((key, emit)))
            yield _arrow_batch(schema, outs)

    from fs_compat.spark._worker import worker_pass

    return _in_key_order(spark, n, keys, shape, worker_pass(running))


def spark_bytewax_two_pass_frame(spark: Any, n: int, keys: int) -> Any:
    """The Bytewax W1's bound for any plan that shuffles on the key the flow computes: the
    first ``map`` makes the key, so it must run before the shuffle. Pass 1, each event a ``Row``
    through the first ``map``; each batch's ``(key, value)`` pairs pickled as one chunk per
    subtask (the key's CRC-32 picks it; a Bytewax value has no declared type), with the batch's
    place (input partition, position) as a column; Spark moves each chunk to its subtask's
    partition and orders each by place (each key's arrival order); pass 2 unpickles the chunks
    and runs the ``stateful_map`` mapper over a dict of states and the last ``map``. No key
    groups, no state backend, no errors named: fs-compat's route and run passes do this and more
    (its chunks: ``RoutePass.packed``). Until the twenty-third session the bound shuffled one
    row per event, which fs-compat's chunks then came within 0.9 of."""
    key_value, count_sum, as_row = w1_bytewax.key_value, w1_bytewax.count_sum, w1_bytewax.as_row
    shape = SHAPE_NAMES["bytewax"]
    schema = shape.arrow_schema()
    from fs_compat.spark._routing import partition_keys

    subtasks = partition_keys(2)  # for each partition i, a value Spark's hash partitioning sends there

    def first(batches: Iterator[Any]) -> Iterator[Any]:
        import pickle
        import zlib

        import pyarrow as pa
        from pyspark import TaskContext

        context = TaskContext.get()
        place = (context.partitionId() if context is not None else 0) << 40
        dumps, crc = pickle.dumps, zlib.crc32
        for rows in _rows(batches, shape.columns):
            parts: tuple[list[Any], list[Any]] = ([], [])
            for r in rows:
                key, value = key_value(r)
                parts[crc(key.encode()) & 1].append((key, value))
            yield pa.RecordBatch.from_arrays(
                [
                    pa.array(subtasks, pa.int32()),
                    pa.array([dumps(part) for part in parts], pa.binary()),
                    pa.array([place, place], pa.int64()),
                ],
                names=["part", "chunk", "place"],
            )
            place += len(rows)

    def second(batches: Iterator[Any]) -> Iterator[Any]:
        import pickle

        loads, states = pickle.loads, {}
        for batch in batches:
            for blob in batch.column("chunk").to_pylist():
                outs = []
                for key, v in loads(blob):
                    state, emit = count_sum(states.get(key), v)
                    states[key] = state
                    outs.append(as_row((key, emit)))
                yield _arrow_batch(schema, outs)

    from pyspark.sql.types import BinaryType, IntegerType, LongType, StructField, StructType

    from fs_compat.spark._worker import worker_pass

    routed = StructType(
        [
            StructField("part", IntegerType(), False),
            StructField("chunk", BinaryType(), False),
            StructField("place", LongType(), False),
        ]
    )
    out = StructType([StructField(f.name, LongType(), False) for f in schema])
    pass_one = events_frame(spark, n, keys, shape.key).mapInArrow(worker_pass(first), routed)
    return pass_one.repartition(2, "part").sortWithinPartitions("place").mapInArrow(worker_pass(second), out)


def _rows(batches: Iterator[Any], names: list[str]) -> Iterator[list[Any]]:
    """Each Arrow batch of W1's events as the ``Row``s ``from_dataframe`` hands user functions."""
    from fs_compat.spark._convert import make_rows

    for batch in batches:
        yield make_rows(names, zip(*(batch.column(name).to_pylist() for name in names), strict=True))


def _arrow_batch(schema: Any, outs: list[Any]) -> Any:
    """Outputs (counts, or ``(key, count, sum)`` tuples or Rows) as an Arrow batch of ``schema``."""
    import pyarrow as pa

    if len(schema) == 1:
        return pa.RecordBatch.from_arrays([pa.array(outs, pa.int64())], schema=schema)
    columns = list(zip(*outs, strict=True)) if outs else [[] for _ in schema]
    return pa.RecordBatch.from_arrays(
        [pa.array(c, f.type) for c, f in zip(columns, schema, strict=True)], schema=schema
    )


def _in_key_order(
    spark: Any, n: int, keys: int, shape: Shape, running: Callable[[Iterator[Any]], Iterator[Any]]
) -> Any:
    """The shape's events partitioned by its key (2 partitions) and sorted, through ``running``
    (mapInArrow) into the shape's output columns."""
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    types = {"int64": LongType(), "string": StringType()}
    schema = StructType([StructField(f.name, types[str(f.type)], False) for f in shape.arrow_schema()])
    # ``amount`` is the event's position (``id``): ordering by it keeps each key's arrival order.
    key_columns = shape.key_columns
    ordered = events_frame(spark, n, keys, shape.key).repartition(2, *key_columns)
    return ordered.sortWithinPartitions(*key_columns, "amount").mapInArrow(running, schema)


def write_noop(df: Any) -> None:
    df.write.format("noop").mode("overwrite").save()


def checksum(df: Any) -> tuple[int, int]:
    """Rows and the sum of each row's hash (Spark's ``hash`` of its columns in order: their
    values and types, not their names) of an output."""
    from pyspark.sql import functions as F  # noqa: N812

    row = df.agg(F.count("*"), F.sum(F.hash(*df.columns).cast("long"))).collect()[0]
    return int(row[0]), int(row[1])


# Timing. --------------------------------------------------------------------------------------


def timed(fn: Callable[[], Any]) -> float:
    gc.collect()
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def compare(
    name: str,
    n: int,
    repeat: int,
    contenders: dict[tuple[str, str], Callable[[], Any]],
    warm_up: Callable[[], Any],
) -> dict[tuple[str, str], float]:
    """Warm up (``warm_up``), then time the contenders (``(group, label)``: a shape and its
    reference, ours, floor) in turn, ``repeat`` rounds; the median rate of each, in events/s."""
    print(f"{name}: warming up ...", flush=True)
    warm_up()
    times: dict[tuple[str, str], list[float]] = {c: [] for c in contenders}
    for i in range(repeat):
        for group in dict.fromkeys(g for g, _ in contenders):
            for (g, label), fn in contenders.items():
                if g == group:
                    times[g, label].append(timed(fn))
            runs = ", ".join(f"{label} {t[-1]:.2f} s" for (g, label), t in times.items() if g == group)
            print(f"  run {i + 1} {group}: {runs}", flush=True)
    return {c: n / statistics.median(t) for c, t in times.items()}


def row(label: str, reference: float, ours: float, target: float | None) -> str:
    ratio = ours / reference
    if target is None:  # a bound, not a target
        return f"{label:<28}{reference:>14,.0f}{ours:>14,.0f}{ratio:>8.2f}{'-':>8}  (bound)"
    verdict = "met" if ratio >= target else "MISSED"
    return f"{label:<28}{reference:>14,.0f}{ours:>14,.0f}{ratio:>8.2f}{target:>8.2f}  {verdict}"


FLOOR_TARGET = 0.75  # issue 16: every shape >= 0.75x its own API-shape floor (Spark local[2], 4M events)
BYTEWAX_TARGET = 1.5  # issue 16: the Bytewax W1 on Spark >= 1.5x Bytewax 0.21.1's own run_main


def in_process(args: argparse.Namespace) -> list[str]:
    """The in-process comparison (the ``w1`` shape): its table rows."""
    n, keys = args.events, args.keys
    events = [(i % keys, i) for i in range(n)]
    few = events[: args.warmup_events]
    jobs = {
        "reference": local_reference,
        "ours": local_ours,
        "floor": local_floor,
        "checked floor": local_checked_floor,
    }
    rates = compare(
        "in-process",
        n,
        args.repeat,
        {("w1", label): (lambda job=job: job(events, args.state)) for label, job in jobs.items()},
        lambda: [job(few, args.state) for job in jobs.values()],
    )
    ref = rates["w1", "reference"]
    return [
        row("in-process (local)", ref, rates["w1", "ours"], 0.6),
        row("  API-shape floor", ref, rates["w1", "floor"], None),
        row("  + checked writes", ref, rates["w1", "checked floor"], None),
    ]


SPARK_JOBS = {
    "reference": lambda spark, n, keys, shape, state: spark_reference_frame(spark, n, keys, shape),
    "ours": spark_ours_frame,
    "floor": spark_floor_frame,
}


def jobs(shape: Shape) -> dict[str, Callable[..., Any]]:
    """The Spark jobs timed for ``shape``: ``SPARK_JOBS``, and for the Bytewax W1 its two-pass
    bound (``spark_bytewax_two_pass_frame``)."""
    if shape.name != "bytewax":
        return SPARK_JOBS
    two_pass = lambda spark, n, keys, shape, state: spark_bytewax_two_pass_frame(spark, n, keys)  # noqa: E731
    return {**SPARK_JOBS, "two-pass": two_pass}


def on_spark(spark: Any, args: argparse.Namespace, shapes: list[Shape]) -> dict[tuple[str, str], float]:
    """The shape matrix on Spark: each shape's rates (``(shape name, "reference" | "ours" |
    "floor")``), after checking each output against the shape's reference."""
    n, keys, state = args.events, args.keys, args.state
    few = min(n, args.warmup_events)

    def run(job: Callable[..., Any], size: int, shape: Shape) -> None:
        write_noop(job(spark, size, keys, shape, state))

    rates = compare(
        "spark",
        n,
        args.repeat,
        {
            (s.name, label): (lambda job=job, s=s: run(job, n, s))
            for s in shapes
            for label, job in jobs(s).items()
        },
        lambda: [run(job, few, s) for s in shapes for job in jobs(s).values()],
    )
    m = args.check_events or n
    for shape in shapes:
        expected = checksum(spark_reference_frame(spark, m, keys, shape))
        for label, job in jobs(shape).items():
            if label == "reference":
                continue
            got = checksum(job(spark, m, keys, shape, state))
            if got != expected:
                raise SystemExit(
                    f"W1 on Spark, shape {shape.name} ({label}): output differs from the "
                    f"hand-written loop's: rows and hash sum {got} != {expected}"
                )
    print(f"checked: every shape's output equals its hand-written loop's ({m:,} events)", flush=True)
    return rates


def matrix_table(shapes: list[Shape], rates: dict[tuple[str, str], float]) -> list[str]:
    """shape | fs-compat ev/s | hand-written ev/s | ratio | API-shape floor ratio | ours/floor."""
    width = max(len(s.name) for s in shapes) + 2
    lines = [
        f"{'shape':<{width}}{'fs-compat/s':>13}{'hand-written/s':>16}{'ratio':>8}{'floor ratio':>13}"
        f"{'ours/floor':>12}",
        "-" * (width + 62),
    ]
    met = 0
    for s in shapes:
        ref, ours, floor = (rates[s.name, label] for label in ("reference", "ours", "floor"))
        met += ours / floor >= FLOOR_TARGET
        lines.append(
            f"{s.name:<{width}}{ours:>13,.0f}{ref:>16,.0f}{ours / ref:>8.2f}{floor / ref:>13.2f}"
            f"{ours / floor:>12.2f}"
        )
    lines.append(f"target ours/floor >= {FLOOR_TARGET}: met by {met} of {len(shapes)} shapes")
    return lines


def real_bytewax(python: str, args: argparse.Namespace, *extra: str) -> Any:
    """The output (JSON) of ``w1_bytewax.py`` run by real Bytewax on ``python``."""
    script = Path(__file__).with_name("w1_bytewax.py")
    command = [
        python,
        str(script),
        "--package",
        "bytewax",
        "--keys",
        str(args.keys),
        "--batch-size",
        str(args.bytewax_batch_size),
        *extra,
    ]
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    return json.loads(done.stdout)


def bytewax_line(args: argparse.Namespace, ours: float, two_pass: float) -> str:
    """Bytewax on Spark (the ``bytewax`` shape's rate, ``ours``) against real Bytewax's own
    ``run_main`` on the same events, after checking both give the same output on a small input;
    and the bound: the two-pass plan's rate (``two_pass``) against real Bytewax, the most any
    plan that shuffles on the flow's key reaches on this machine."""
    python = args.bytewax_python or os.environ.get("BYTEWAX_PYTHON")
    if not python:
        return "Bytewax 0.21.1 comparison skipped: no --bytewax-python and no BYTEWAX_PYTHON set"
    m = args.bytewax_check_events
    theirs = sorted(tuple(item) for item in real_bytewax(python, args, "--outputs", str(m)))
    bw = w1_bytewax.load("fs_compat.bytewax")
    events = w1_bytewax.events(m, args.keys)
    mine = sorted(w1_bytewax.outputs(bw, events, args.bytewax_batch_size, _target="spark"))
    if mine != theirs:
        raise SystemExit(
            f"W1 Bytewax flow: fs-compat's run_main on Spark and Bytewax's differ on {m:,} events"
        )
    print(f"checked: the Bytewax flow's outputs (run_main, {m:,} events) equal real Bytewax's", flush=True)
    print("real Bytewax: timing in a subprocess ...", flush=True)
    got = real_bytewax(
        python,
        args,
        "--events",
        str(args.events),
        "--repeat",
        str(args.repeat),
        "--warmup-events",
        str(args.warmup_events),
    )
    runs = ", ".join(f"{rate:,.0f}" for rate in got["rates"])
    theirs_rate = statistics.median(got["rates"])
    ratio = ours / theirs_rate
    verdict = "met" if ratio >= BYTEWAX_TARGET else "MISSED"
    return (
        f"Bytewax W1: fs-compat on Spark local[2] {ours:,.0f} ev/s / Bytewax {got['version']} run_main "
        f"(Python {got['python']}, 1 worker, TestingSource batch_size {args.bytewax_batch_size}) "
        f"{theirs_rate:,.0f} ev/s (runs: {runs}) = {ratio:.2f}  target {BYTEWAX_TARGET}  {verdict}\n"
        f"  bound: the two-pass plan (first map + a pickle per subtask and batch | shuffle | "
        f"stateful_map, no runtime) {two_pass:,.0f} ev/s = {two_pass / theirs_rate:.2f} of real "
        f"Bytewax; fs-compat reaches {ours / two_pass:.2f} of it"
    )


#: How a ``--remote`` run reports the ``w1`` shape's rate to the ``--connect`` run that started it.
CONNECT_RATE = "W1-CONNECT-RATE "


def connect_line(args: argparse.Namespace, classic: float | None) -> str:
    """The ``w1`` shape over Spark Connect (``--remote local[2]``, a child process with this
    run's sizes), beside ``classic``, its rate on the classic session of this run."""
    command = [
        sys.executable,
        __file__,
        "--only",
        "spark",
        "--shapes",
        "w1",
        "--remote",
        "local[2]",
        *("--events", str(args.events), "--keys", str(args.keys), "--repeat", str(args.repeat)),
        *("--warmup-events", str(args.warmup_events), "--state", args.state),
        *(("--check-events", str(args.check_events)) if args.check_events else ()),
    ]
    print("spark connect: the w1 shape over Spark Connect (local[2]), in a child process ...", flush=True)
    env = {k: v for k, v in os.environ.items() if k not in ("SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED")}
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    found = [line for line in done.stdout.splitlines() if line.startswith(CONNECT_RATE)]
    if done.returncode != 0 or not found:
        return f"W1 over Spark Connect: the run failed (exit {done.returncode}):\n{done.stderr[-2000:]}"
    rate = float(found[-1][len(CONNECT_RATE) :])
    if classic is None:
        return f"W1 (w1 shape) over Spark Connect local[2]: {rate:,.0f} ev/s"
    return (
        f"W1 (w1 shape) on Spark local[2]: classic session {classic:,.0f} ev/s, over Spark Connect "
        f"{rate:,.0f} ev/s = {rate / classic:.2f} of classic"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events", type=int, default=4_000_000, help="events per run (default 4,000,000)")
    parser.add_argument("--keys", type=int, default=10_000, help="distinct keys (default 10,000)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of each (default 3)")
    parser.add_argument(
        "--warmup-events", type=int, default=400_000, help="events of the untimed first run (default 400,000)"
    )
    parser.add_argument("--state", choices=sorted(STATE_TYPES), default="tuple", help="ValueState type")
    parser.add_argument("--only", choices=("spark", "local"), help="run one comparison only")
    parser.add_argument(
        "--shapes",
        default=",".join(SHAPE_NAMES),
        help=f"the shapes to run on Spark, comma-separated (default: all: {','.join(SHAPE_NAMES)})",
    )
    parser.add_argument(
        "--check-events",
        type=int,
        help="events of the (untimed) output check on Spark (default: --events; each job runs again)",
    )
    parser.add_argument("--remote", help="run the Spark matrix over this Spark Connect server instead")
    parser.add_argument(
        "--connect",
        action="store_true",
        help="also run the w1 shape over Spark Connect (local[2], a child process) and print both rates",
    )
    parser.add_argument(
        "--bytewax-python",
        help="an interpreter with Bytewax 0.21.1 installed, for the comparison with real Bytewax "
        "(default: $BYTEWAX_PYTHON; without either it is skipped)",
    )
    parser.add_argument(
        "--bytewax-batch-size",
        type=int,
        default=1000,
        help="real Bytewax's TestingSource batch_size (default 1000)",
    )
    parser.add_argument(
        "--bytewax-check-events",
        type=int,
        default=20_000,
        help="events of the Bytewax output check (default 20,000)",
    )
    args = parser.parse_args()
    unknown = [name for name in args.shapes.split(",") if name not in SHAPE_NAMES]
    if unknown:
        parser.error(f"unknown shapes {unknown}; the shapes are {', '.join(SHAPE_NAMES)}")
    shapes = [SHAPE_NAMES[name] for name in dict.fromkeys(args.shapes.split(","))]
    print(
        f"W1 keyed running count+sum: {args.events:,} events, {args.keys:,} keys, state {args.state}; "
        f"{datetime.date.today()}, {platform.system()} {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, load average {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    rows = in_process(args) if args.only != "spark" else []
    table: list[str] = []
    bytewax = None
    connect = None
    if args.only != "local":
        import pyspark
        from pyspark import cloudpickle

        from fs_compat.spark import spark_session

        cloudpickle.register_pickle_by_value(w1_bytewax)  # Spark's workers do not import bench/
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        from fs_compat.spark import spark_master

        settings = {"spark.master": "local[2]", "spark.ui.showConsoleProgress": "false"}
        if args.remote:
            settings["spark.remote"] = args.remote
        spark = spark_session(settings)
        over = f" over Spark Connect ({args.remote})" if args.remote else ""
        print(f"Spark {pyspark.__version__}, master {spark_master(spark)}{over}", flush=True)
        rates = on_spark(spark, args, shapes)
        if args.remote and SHAPE_NAMES["w1"] in shapes:
            print(f"{CONNECT_RATE}{rates['w1', 'ours']:.0f}", flush=True)
        table = matrix_table(shapes, rates)
        if args.connect and not args.remote:
            connect = connect_line(args, rates.get(("w1", "ours")))
        if SHAPE_NAMES["bytewax"] in shapes:
            bytewax = bytewax_line(args, rates["bytewax", "ours"], rates["bytewax", "two-pass"])
        else:
            bytewax = "Bytewax 0.21.1 comparison skipped: the bytewax shape is not among --shapes"
    print(f"\nload average at the end {os.getloadavg()[0]:.1f}")
    if rows:
        print()
        print(f"{'W1':<28}{'reference/s':>14}{'ours/s':>14}{'ratio':>8}{'target':>8}")
        print("-" * 72)
        for line in rows:
            print(line)
    if table:
        print("\nSpark local[2], shapes:")
        for shape in shapes:
            print(f"  {shape.name}: {shape.line}")
        print()
        for line in table:
            print(line)
    if bytewax:
        print()
        print(bytewax)
    if connect:
        print()
        print(connect)


if __name__ == "__main__":
    main()
