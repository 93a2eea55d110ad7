"""W1: a keyed running count and sum, as a PyFlink user writes it, against the practical limit.

The job: events ``(key, amount)`` with ``key = i % 10,000`` and ``amount = i``, keyed by ``key``,
through a ``MapFunction`` that keeps ``(count, sum)`` in a ``ValueState`` declared with
``Types.TUPLE([Types.LONG(), Types.LONG()])`` (``--state pickled``: ``Types.PICKLED_BYTE_ARRAY()``)
and returns ``(key, count, sum)`` for every event.

Two comparisons, each measured in the same run, reference and ours interleaved:

- Spark (``execution.target=spark``, local[2], parallelism 2): the events are a Spark DataFrame
  (``spark.range``), read with ``env.from_dataframe(df)``; the output is ``ds.to_dataframe()``
  written to Spark's ``noop`` sink, so Spark runs the whole job and nothing is collected.
  Reference: the same DataFrame through a hand-written ``repartition(2, key) ->
  sortWithinPartitions(key, amount) -> mapInArrow`` with a plain dict, written to ``noop``.
- In-process (``execution.target=local``): the events are a list of tuples
  (``env.from_collection``); the output goes to a ``SinkFunction`` that counts. Reference: a
  plain Python loop calling a per-record callback (key function, dict get/set, output tuple)
  and handing each output to a sink callback.

    .venv/bin/python bench/w1.py                                  # the full run (a few minutes)
    .venv/bin/python bench/w1.py --events 200000 --repeat 1       # a quick look
"""

from __future__ import annotations

import argparse
import datetime
import gc
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

from fs_compat.common import Configuration, Types
from fs_compat.datastream import StreamExecutionEnvironment
from fs_compat.datastream.functions import MapFunction, RuntimeContext, SinkFunction
from fs_compat.datastream.state import ValueStateDescriptor

STATE_TYPES = {
    "tuple": lambda: Types.TUPLE([Types.LONG(), Types.LONG()]),
    "pickled": Types.PICKLED_BYTE_ARRAY,
}


# The user's job. -------------------------------------------------------------------------------


class RunningCountSum(MapFunction):
    """W1 as a PyFlink user writes it: per key, the count and the sum of the amounts so far."""

    def __init__(self, state_type: str = "tuple") -> None:
        self.state_type = state_type

    def open(self, runtime_context: RuntimeContext) -> None:
        descriptor = ValueStateDescriptor("count_sum", STATE_TYPES[self.state_type]())
        self.count_sum = runtime_context.get_state(descriptor)

    def map(self, value: Any) -> tuple[int, int, int]:
        key, amount = value[0], value[1]
        current = self.count_sum.value()
        if current is None:
            count, total = 1, amount
        else:
            count, total = current[0] + 1, current[1] + amount
        self.count_sum.update((count, total))
        return key, count, total


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


def events_frame(spark: Any, n: int, keys: int) -> Any:
    from pyspark.sql import functions as F  # noqa: N812

    return spark.range(0, n, 1, 2).select((F.col("id") % keys).alias("key"), F.col("id").alias("amount"))


def spark_ours_frame(spark: Any, n: int, keys: int, state_type: str) -> Any:
    env = environment("spark", 2)
    out_type = Types.TUPLE([Types.LONG(), Types.LONG(), Types.LONG()])
    ds = env.from_dataframe(events_frame(spark, n, keys))
    return ds.key_by(lambda e: e[0]).map(RunningCountSum(state_type), output_type=out_type).to_dataframe()


def _count_sum(state: tuple[int, int] | None, amount: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """W1 as a Bytewax ``stateful_map`` mapper: ``(state, value) -> (state, emit)``."""
    count, total = state or (0, 0)
    state = (count + 1, total + amount)
    return state, state


def _bytewax_key(e: Any) -> tuple[str, int]:
    """The Bytewax W1's first ``map``: a keyed stream's ``(str key, value)``."""
    return (str(e[0]), e[1])


def _bytewax_row(kv: tuple[str, tuple[int, int]]) -> tuple[int, int, int]:
    """The Bytewax W1's last ``map``: ``(key, (count, sum))`` as the output row."""
    return (int(kv[0]), kv[1][0], kv[1][1])


def spark_bytewax_frame(spark: Any, n: int, keys: int) -> Any:
    """W1 as a Bytewax user writes it (``op.stateful_map``), on Spark through the same adapter."""
    import fs_compat.bytewax.operators as op
    from fs_compat.bytewax.dataflow import Dataflow
    from fs_compat.bytewax.spark import DataFrameSource, to_dataframe

    flow = Dataflow("w1")
    events = op.input("events", flow, DataFrameSource(events_frame(spark, n, keys)))
    keyed = op.map("key", events, _bytewax_key)
    counted = op.stateful_map("count_sum", keyed, _count_sum)
    out = op.map("row", counted, _bytewax_row)
    return to_dataframe(out, Types.TUPLE([Types.LONG(), Types.LONG(), Types.LONG()]), parallelism=2)


def spark_reference_frame(spark: Any, n: int, keys: int) -> Any:
    """The practical limit: Spark partitions and orders, a plain dict does the rest."""

    def running(batches: Iterator[Any]) -> Iterator[Any]:
        state: dict[int, tuple[int, int]] = {}
        for batch in batches:
            keys_out, counts, sums = [], [], []
            for key, amount in zip(
                batch.column("key").to_pylist(), batch.column("amount").to_pylist(), strict=True
            ):
                current = state.get(key)
                if current is None:
                    count, total = 1, amount
                else:
                    count, total = current[0] + 1, current[1] + amount
                state[key] = (count, total)
                keys_out.append(key)
                counts.append(count)
                sums.append(total)
            yield _w1_batch(keys_out, counts, sums)

    return _in_key_order(spark, n, keys, running)


def spark_floor_frame(spark: Any, n: int, keys: int, state_type: str) -> Any:
    """The API shape at no runtime cost on Spark: the reference's plan and single pass, but each
    event becomes a ``Row`` (what ``from_dataframe`` hands the user's functions), the user's key
    selector and ``RunningCountSum.map`` run on it over a dict state (``_FloorState``)."""

    def running(batches: Iterator[Any]) -> Iterator[Any]:
        context = _FloorContext()
        fn = RunningCountSum(state_type)
        fn.open(context)  # type: ignore[arg-type]
        state, fn_map = context.state, fn.map
        key_of: Callable[[Any], Any] = lambda e: e[0]  # noqa: E731 - as a user writes it
        for rows in _rows(batches):
            keys_out, counts, sums = [], [], []
            for r in rows:
                state.key = key_of(r)
                key, count, total = fn_map(r)
                keys_out.append(key)
                counts.append(count)
                sums.append(total)
            yield _w1_batch(keys_out, counts, sums)

    from fs_compat.spark._worker import worker_pass

    # With the collector setting fs-compat's passes use (``worker_pass``), so that the floor
    # stays a bound for them; the reference keeps CPython's default.
    return _in_key_order(spark, n, keys, worker_pass(running))


def spark_bytewax_floor_frame(spark: Any, n: int, keys: int) -> Any:
    """The Bytewax API shape at no runtime cost on Spark: the reference's plan and single pass
    (Spark partitions by the key column, so the first ``map`` need not run before the shuffle,
    which no implementation can avoid: the floor is looser than the PyFlink one), each event a
    ``Row``, then the flow's own functions: the first ``map``, the ``stateful_map`` mapper over a
    dict of states and the last ``map``."""

    def running(batches: Iterator[Any]) -> Iterator[Any]:
        states: dict[str, Any] = {}
        for rows in _rows(batches):
            keys_out, counts, sums = [], [], []
            for r in rows:
                key, value = _bytewax_key(r)
                state, emit = _count_sum(states.get(key), value)
                states[key] = state
                out_key, count, total = _bytewax_row((key, emit))
                keys_out.append(out_key)
                counts.append(count)
                sums.append(total)
            yield _w1_batch(keys_out, counts, sums)

    from fs_compat.spark._worker import worker_pass

    return _in_key_order(spark, n, keys, worker_pass(running))


def _rows(batches: Iterator[Any]) -> Iterator[list[Any]]:
    """Each Arrow batch of W1's events as the ``Row``s ``from_dataframe`` hands user functions."""
    from fs_compat.spark._convert import make_rows

    names = ["key", "amount"]
    for batch in batches:
        yield make_rows(
            names, zip(batch.column("key").to_pylist(), batch.column("amount").to_pylist(), strict=True)
        )


def _w1_batch(keys_out: list[int], counts: list[int], sums: list[int]) -> Any:
    """W1's output rows ``(key, count, sum)`` as an Arrow batch."""
    import pyarrow as pa

    arrays = [pa.array(keys_out, pa.int64()), pa.array(counts, pa.int64()), pa.array(sums, pa.int64())]
    return pa.RecordBatch.from_arrays(arrays, names=["key", "count", "sum"])


def _in_key_order(spark: Any, n: int, keys: int, running: Callable[[Iterator[Any]], Iterator[Any]]) -> Any:
    """W1's events partitioned by key (2 partitions) and sorted, through ``running``
    (mapInArrow) into ``(key, count, sum)``."""
    from pyspark.sql.types import LongType, StructField, StructType

    schema = StructType([StructField(c, LongType(), False) for c in ("key", "count", "sum")])
    # ``amount`` is the event's position (``id``): ordering by it keeps each key's arrival order.
    ordered = events_frame(spark, n, keys).repartition(2, "key").sortWithinPartitions("key", "amount")
    return ordered.mapInArrow(running, schema)


def write_noop(df: Any) -> None:
    df.write.format("noop").mode("overwrite").save()


def checksum(df: Any) -> tuple[int, int, int]:
    """Rows, sum of counts and sum of sums of a W1 output (its columns 1 and 2)."""
    from pyspark.sql import functions as F  # noqa: N812

    count_col, sum_col = df.columns[1], df.columns[2]
    row = df.agg(F.count("*"), F.sum(count_col), F.sum(sum_col)).collect()[0]
    return int(row[0]), int(row[1]), int(row[2])


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
    contenders: dict[str, Callable[[], Any]],
    warm_up: Callable[[], Any],
) -> dict[str, float]:
    """Warm up (``warm_up``), then time the contenders in turn, ``repeat`` rounds; the median
    rate of each, in events/s."""
    print(f"{name}: warming up ...", flush=True)
    warm_up()
    times: dict[str, list[float]] = {label: [] for label in contenders}
    for i in range(repeat):
        for label, fn in contenders.items():
            times[label].append(timed(fn))
        runs = ", ".join(f"{label} {t[-1]:.2f} s" for label, t in times.items())
        print(f"  run {i + 1}: {runs}", flush=True)
    return {label: n / statistics.median(t) for label, t in times.items()}


def row(label: str, reference: float, ours: float, target: float | None) -> str:
    ratio = ours / reference
    if target is None:  # a bound, not a target
        return f"{label:<28}{reference:>14,.0f}{ours:>14,.0f}{ratio:>8.2f}{'-':>8}  (bound)"
    verdict = "met" if ratio >= target else "MISSED"
    return f"{label:<28}{reference:>14,.0f}{ours:>14,.0f}{ratio:>8.2f}{target:>8.2f}  {verdict}"


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
        "--check-events",
        type=int,
        help="events of the (untimed) output check on Spark (default: --events; each job runs again)",
    )
    args = parser.parse_args()
    n, keys = args.events, args.keys
    print(
        f"W1 keyed running count+sum: {n:,} events, {keys:,} keys, state {args.state}; "
        f"{datetime.date.today()}, {platform.system()} {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}",
        flush=True,
    )
    rows = []
    if args.only != "spark":
        events = [(i % keys, i) for i in range(n)]
        few = events[: args.warmup_events]
        rates = compare(
            "in-process",
            n,
            args.repeat,
            {
                "reference": lambda: local_reference(events, args.state),
                "ours": lambda: local_ours(events, args.state),
                "floor": lambda: local_floor(events, args.state),
                "checked floor": lambda: local_checked_floor(events, args.state),
            },
            lambda: (
                local_reference(few, args.state),
                local_ours(few, args.state),
                local_floor(few, args.state),
                local_checked_floor(few, args.state),
            ),
        )
        rows.append(row("in-process (local)", rates["reference"], rates["ours"], 0.6))
        rows.append(row("  API-shape floor", rates["reference"], rates["floor"], None))
        rows.append(row("  + checked writes", rates["reference"], rates["checked floor"], None))
        del events
    if args.only != "local":
        import pyspark

        from fs_compat.spark import spark_session

        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        spark = spark_session({"spark.master": "local[2]", "spark.ui.showConsoleProgress": "false"})
        print(f"Spark {pyspark.__version__}, master {spark.sparkContext.master}", flush=True)
        few = min(n, args.warmup_events)
        rates = compare(
            "spark",
            n,
            args.repeat,
            {
                "reference": lambda: write_noop(spark_reference_frame(spark, n, keys)),
                "ours": lambda: write_noop(spark_ours_frame(spark, n, keys, args.state)),
                "floor": lambda: write_noop(spark_floor_frame(spark, n, keys, args.state)),
                "bytewax": lambda: write_noop(spark_bytewax_frame(spark, n, keys)),
                "bytewax floor": lambda: write_noop(spark_bytewax_floor_frame(spark, n, keys)),
            },
            lambda: (
                write_noop(spark_reference_frame(spark, few, keys)),
                write_noop(spark_ours_frame(spark, few, keys, args.state)),
                write_noop(spark_floor_frame(spark, few, keys, args.state)),
                write_noop(spark_bytewax_frame(spark, few, keys)),
                write_noop(spark_bytewax_floor_frame(spark, few, keys)),
            ),
        )
        ref = rates["reference"]
        rows.append(row("Spark batch local[2]", ref, rates["ours"], 0.75))
        rows.append(row("  API-shape floor", ref, rates["floor"], None))
        rows.append(row("Spark, Bytewax stateful_map", ref, rates["bytewax"], 0.75))
        rows.append(row("  API-shape floor", ref, rates["bytewax floor"], None))
        m = args.check_events or n
        expected = checksum(spark_reference_frame(spark, m, keys))
        for name, frame in (
            ("PyFlink MapFunction", spark_ours_frame(spark, m, keys, args.state)),
            ("API-shape floor", spark_floor_frame(spark, m, keys, args.state)),
            ("Bytewax stateful_map", spark_bytewax_frame(spark, m, keys)),
            ("Bytewax API-shape floor", spark_bytewax_floor_frame(spark, m, keys)),
        ):
            got = checksum(frame)
            if got != expected:
                raise SystemExit(
                    f"W1 on Spark ({name}): output differs from the reference: {got} != {expected}"
                )
        print(f"checked: all outputs have {got[0]:,} rows, sum(count) {got[1]:,}, sum(sum) {got[2]:,}")
    print()
    print(f"{'W1':<28}{'reference/s':>14}{'ours/s':>14}{'ratio':>8}{'target':>8}")
    print("-" * 72)
    for line in rows:
        print(line)


if __name__ == "__main__":
    main()
