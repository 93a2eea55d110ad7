"""Streaming jobs with several inputs: two streaming DataFrames unioned into a keyed step, a keyed
step ``connect``ed to a third streaming source (a ``KeyedCoProcessFunction`` with event-time
timers), a keyed stream connected to a broadcast one (``KeyedBroadcastProcessFunction``), each as
one Structured Streaming query. A step's watermark is the smallest of its inputs'
(Flink's rule): a timer waits for the input that lags behind. Stopped and restarted from the
checkpoint between micro-batches, the job gives the batch target's output on the same input."""

from __future__ import annotations

import datetime
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from stream_query import run_to_parquet

from fs_compat.common import Configuration, Duration, TimestampAssigner, Types, WatermarkStrategy
from fs_compat.datastream import (
    BroadcastProcessFunction,
    KeyedBroadcastProcessFunction,
    KeyedCoProcessFunction,
    KeyedProcessFunction,
    StreamExecutionEnvironment,
)
from fs_compat.datastream.state import ListStateDescriptor, MapStateDescriptor
from fs_compat.spark import spark_session

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SCHEMA = "key STRING, n LONG, ts TIMESTAMP"
COUNTED = Types.ROW_NAMED(["key", "count", "kind"], [Types.STRING(), Types.LONG(), Types.STRING()])
OUT = Types.ROW_NAMED(
    ["key", "events", "rules", "kind"], [Types.STRING(), Types.LONG(), Types.LONG(), Types.STRING()]
)
END = "~end"  # a record far ahead in event time: moves its input's watermark past every timer

# Per micro-batch (one file of each source): events from two sources, and rules that lag behind
# in event time: in micro-batch 0 the events' watermark passes 2000 while the rules' is below.
EVENTS_A = [
    [("a", 1, 1000), ("b", 1, 1500)],
    [("a", 2, 2200)],
    [("c", 1, 3100)],
    [("a", 3, 5000), (END, 0, 100_000)],
]
EVENTS_B = [
    [("a", 9, 1200), ("c", 9, 2600)],
    [("b", 9, 2500)],
    [("b", 9, 4000)],
    [(END, 0, 100_000)],
]
RULES = [
    [("a", 5, 200)],
    [("a", 7, 1800), ("b", 2, 2400)],
    [("c", 1, 3000)],
    [("b", 4, 4500), (END, 0, 100_000)],
]


class CountPerKey(KeyedProcessFunction):
    """The number of records of its key so far, with each record."""

    def open(self, runtime_context: Any) -> None:
        self.stamps = runtime_context.get_list_state(ListStateDescriptor("stamps", Types.LONG()))

    def process_element(self, value: Any, ctx: Any) -> Iterable[Any]:
        if value.key != END:
            self.stamps.add(ctx.timestamp())
            yield (value.key, len(list(self.stamps.get())), "counted")


class EventsAndRules(KeyedCoProcessFunction):
    """Input 1: the first step's counts; input 2: rules. A timer at the end of each second with a
    count of the key reports how many counts and rules of the key are at or before it: the same
    on every target only if the timer fires after both inputs' records up to it have arrived."""

    def open(self, runtime_context: Any) -> None:
        self.events = runtime_context.get_list_state(ListStateDescriptor("events", Types.LONG()))
        self.rules = runtime_context.get_list_state(ListStateDescriptor("rules", Types.LONG()))

    def process_element1(self, value: Any, ctx: Any) -> Iterable[Any]:
        ctx.timer_service().register_event_time_timer(ctx.timestamp() // 1000 * 1000 + 1000)
        self.events.add(ctx.timestamp())
        return ()

    def process_element2(self, value: Any, ctx: Any) -> Iterable[Any]:
        if value.key != END:
            self.rules.add(ctx.timestamp())
        return ()

    def on_timer(self, timestamp: int, ctx: Any) -> Iterable[Any]:
        events = sum(1 for t in self.events.get() if t <= timestamp)
        rules = sum(1 for t in self.rules.get() if t <= timestamp)
        yield (ctx.get_current_key(), events, rules, f"timer@{timestamp}")


class _Stamp(TimestampAssigner):
    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return int(value.ts.timestamp() * 1000)


def _timed(env: StreamExecutionEnvironment, df: Any) -> Any:
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(
        Duration.of_millis(100)
    ).with_timestamp_assigner(_Stamp())
    return env.from_dataframe(df).assign_timestamps_and_watermarks(strategy)


def _job(env: StreamExecutionEnvironment, a: Any, b: Any, rules: Any) -> Any:
    counts = (
        _timed(env, a)
        .union(_timed(env, b))
        .key_by(lambda r: r.key)
        .process(CountPerKey(), output_type=COUNTED)
    )
    return (
        counts.connect(_timed(env, rules))
        .key_by(lambda c: c[0], lambda r: r.key)
        .process(EventsAndRules(), output_type=OUT)
    )


def _env() -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.configure(Configuration().set_string("execution.target", "spark"))
    return env


def _rows(rows: list[tuple[str, int, int]]) -> list[tuple[str, int, datetime.datetime]]:
    return [(k, n, datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.UTC)) for k, n, ms in rows]


def _write(spark: Any, folder: Path, name: str, rows: list[tuple[str, int, int]]) -> None:
    spark.createDataFrame(_rows(rows), SCHEMA).coalesce(1).write.parquet(str(folder / name))


def _stream(spark: Any, folder: Path) -> Any:
    return spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).parquet(str(folder / "*"))


@pytest.mark.classic_only  # Connect slice: README
def test_union_and_connect_of_three_streaming_sources_restart_and_match_the_batch_target(
    tmp_path: Path,
) -> None:
    spark = spark_session()
    inputs = {"a": EVENTS_A, "b": EVENTS_B, "rules": RULES}
    checkpoint, sink = tmp_path / "ck", tmp_path / "out"

    def run(files: range) -> None:
        for name, per_batch in inputs.items():
            for i in files:
                _write(spark, tmp_path / name, str(i), per_batch[i])
        job = _job(_env(), *(_stream(spark, tmp_path / name) for name in inputs))
        run_to_parquet(job.to_dataframe(), checkpoint, sink)

    run(range(2))
    first = Counter(tuple(r) for r in spark.read.parquet(str(sink)).collect())
    # After micro-batch 0 the first step's watermark is 1399 (source a's, below b's 2499) and the
    # rules' 99: nothing fires (with the larger input's watermark, a's timer at 2000 would have
    # fired before the rule at 1800 arrived). After micro-batch 1: 2099 and 2299, both timers
    # at 2000 fire, each with the counts and rules up to it.
    assert first == Counter({("a", 2, 2, "timer@2000"): 1, ("b", 1, 0, "timer@2000"): 1})

    run(range(2, 4))  # restarted from the checkpoint
    streamed = Counter(tuple(r) for r in spark.read.parquet(str(sink)).collect())
    batch = _job(
        _env(),
        *(spark.createDataFrame(_rows([r for f in files for r in f]), SCHEMA) for files in inputs.values()),
    )
    expected = Counter(tuple(r) for r in batch.to_dataframe().collect())
    assert streamed == expected
    assert expected == Counter(
        {
            ("a", 2, 2, "timer@2000"): 1,
            ("a", 3, 2, "timer@3000"): 1,
            ("a", 4, 2, "timer@6000"): 1,
            ("b", 1, 0, "timer@2000"): 1,
            ("b", 2, 1, "timer@3000"): 1,
            ("b", 3, 2, "timer@5000"): 1,  # the rule at 4500 came with the watermark past 5000
            ("c", 1, 1, "timer@3000"): 1,
            ("c", 2, 1, "timer@4000"): 1,
        }
    )


def test_two_streaming_sources_unioned_without_a_keyed_step(tmp_path: Path) -> None:
    spark = spark_session()
    _write(spark, tmp_path / "a", "0", EVENTS_A[0])
    _write(spark, tmp_path / "b", "0", EVENTS_B[0])
    env = _env()
    a, b = (env.from_dataframe(_stream(spark, tmp_path / n)) for n in "ab")
    job = a.union(b.map(lambda r: r)).map(
        lambda r: (r.key, r.n * 10), output_type=Types.TUPLE([Types.STRING(), Types.LONG()])
    )
    run_to_parquet(job.to_dataframe(), tmp_path / "ck", tmp_path / "out")
    got = sorted(tuple(r) for r in spark.read.parquet(str(tmp_path / "out")).collect())
    assert got == [("a", 10), ("a", 90), ("b", 10), ("c", 90)]


class Limits(KeyedBroadcastProcessFunction):
    """Input 1: events, keyed; input 2: limits per key, broadcast. A timer at the end of each
    second with an event of the key reports the key's events up to it and its limit then (-1:
    none)."""

    def open(self, runtime_context: Any) -> None:
        self.events = runtime_context.get_list_state(ListStateDescriptor("events", Types.LONG()))

    def process_element(self, value: Any, ctx: Any) -> Iterable[Any]:
        if value.key != END:
            ctx.timer_service().register_event_time_timer(ctx.timestamp() // 1000 * 1000 + 1000)
            self.events.add(ctx.timestamp())
        return ()

    def process_broadcast_element(self, value: Any, ctx: Any) -> Iterable[Any]:
        ctx.get_broadcast_state(LIMITS).put(value.key, value.n)
        return ()

    def on_timer(self, timestamp: int, ctx: Any) -> Iterable[Any]:
        events = sum(1 for t in self.events.get() if t <= timestamp)
        limit = ctx.get_broadcast_state(LIMITS).get(ctx.get_current_key())
        yield (ctx.get_current_key(), events, -1 if limit is None else limit, f"timer@{timestamp}")


LIMITS = MapStateDescriptor("limits", Types.STRING(), Types.LONG())


def _limits_job(env: StreamExecutionEnvironment, events: Any, limits: Any) -> Any:
    return (
        _timed(env, events)
        .key_by(lambda r: r.key)
        .connect(_timed(env, limits).broadcast(LIMITS))
        .process(Limits(), output_type=OUT)
    )


def test_broadcast_state_lives_in_the_checkpoint_and_matches_the_batch_target(tmp_path: Path) -> None:
    spark = spark_session()
    events = [
        [("a", 1, 1000), ("b", 1, 1500), ("a", 1, 1200)],
        [("b", 1, 2100), ("c", 1, 2600), ("a", 1, 2500), (END, 0, 100_000)],
    ]
    # The limits' watermark moves past every timer in the first run; b's limit changes in the second.
    limits = [[("a", 5, 100), ("b", 7, 200), (END, 0, 100_000)], [("b", 9, 2200)]]
    checkpoint, sink = tmp_path / "ck", tmp_path / "out"
    for i in range(2):  # the second run restarts from the checkpoint: a's limit is in it only
        _write(spark, tmp_path / "events", str(i), events[i])
        _write(spark, tmp_path / "limits", str(i), limits[i])
        job = _limits_job(_env(), _stream(spark, tmp_path / "events"), _stream(spark, tmp_path / "limits"))
        run_to_parquet(job.to_dataframe(), checkpoint, sink)
    streamed = Counter(tuple(r) for r in spark.read.parquet(str(sink)).collect())
    batch = _limits_job(
        _env(),
        *(spark.createDataFrame(_rows([r for f in files for r in f]), SCHEMA) for files in (events, limits)),
    )
    expected = Counter(tuple(r) for r in batch.to_dataframe().collect())
    assert (
        streamed
        == expected
        == Counter(
            {
                ("a", 2, 5, "timer@2000"): 1,
                ("a", 3, 5, "timer@3000"): 1,
                ("b", 1, 9, "timer@2000"): 1,
                ("b", 2, 9, "timer@3000"): 1,
                ("c", 1, -1, "timer@3000"): 1,
            }
        )
    )


class Limited(BroadcastProcessFunction):
    """Input 1: a keyed step's counts, not keyed any more; input 2: limits per key, broadcast.
    Each count comes out with its key's limit (-1: none yet), and each limit once per parallel
    instance (each instance gets every broadcast record, as in Flink)."""

    def open(self, runtime_context: Any) -> None:
        self.index = runtime_context.get_index_of_this_subtask()

    def process_element(self, value: Any, ctx: Any) -> Iterable[Any]:
        limit = ctx.get_broadcast_state(LIMITS).get(value[0])
        yield (value[0], value[1], -1 if limit is None else limit, f"counted@{self.index}")

    def process_broadcast_element(self, value: Any, ctx: Any) -> Iterable[Any]:
        ctx.get_broadcast_state(LIMITS).put(value.key, value.n)
        yield (value.key, 0, value.n, f"limit@{self.index}")


@pytest.mark.classic_only  # Connect slice: README
def test_broadcast_state_on_a_stream_that_is_not_keyed_lives_in_the_checkpoint(tmp_path: Path) -> None:
    """A ``BroadcastProcessFunction`` after a keyed step: one group per parallel instance, each
    with its broadcast state in the checkpoint. The limit comes in the first run only; after
    the restart both instances still have it."""
    spark = spark_session()
    events = [[("b", 1, 1000)], [("b", 1, 1500)], [("a", 1, 2000)], [("a", 1, 2500), ("c", 1, 2600)]]
    limits = [[("a", 5, 100)]]  # with the first micro-batch, whose events are b's (no limit)
    checkpoint, sink = tmp_path / "ck", tmp_path / "out"
    _write(spark, tmp_path / "limits", "0", limits[0])
    for run in (range(2), range(2, 4)):
        for i in run:
            _write(spark, tmp_path / "events", str(i), events[i])
        env = _env().set_parallelism(2)
        counts = (
            _timed(env, _stream(spark, tmp_path / "events"))
            .key_by(lambda r: r.key)
            .process(CountPerKey(), output_type=COUNTED)
        )
        limited = counts.connect(_timed(env, _stream(spark, tmp_path / "limits")).broadcast(LIMITS))
        run_to_parquet(limited.process(Limited(), output_type=OUT).to_dataframe(), checkpoint, sink)
    got = [tuple(r) for r in spark.read.parquet(str(sink)).collect()]
    assert Counter((k, n, lim, kind.split("@")[0]) for k, n, lim, kind in got) == Counter(
        {
            ("a", 0, 5, "limit"): 2,  # once per instance
            ("b", 1, -1, "counted"): 1,
            ("b", 2, -1, "counted"): 1,
            ("a", 1, 5, "counted"): 1,  # after the restart: the limit is in the checkpoint
            ("a", 2, 5, "counted"): 1,
            ("c", 1, -1, "counted"): 1,
        }
    )
    assert sorted(kind for _k, _n, _lim, kind in got if kind.startswith("limit")) == ["limit@0", "limit@1"]


@pytest.mark.classic_only  # CI time: the streaming plan is the same over Connect
def test_a_custom_partitioner_picks_the_broadcast_steps_instance_on_a_streaming_dataframe(
    tmp_path: Path,
) -> None:
    spark = spark_session()
    _write(spark, tmp_path / "events", "0", [("a", 1, 1000), ("b", 2, 1100), ("c", 3, 1200), ("d", 4, 1300)])
    _write(spark, tmp_path / "limits", "0", [("a", 7, 100)])
    env = _env().set_parallelism(2)
    events = env.from_dataframe(_stream(spark, tmp_path / "events")).map(
        lambda r: (r.key, r.n), output_type=Types.TUPLE([Types.STRING(), Types.LONG()])
    )
    spread = events.partition_custom(lambda n, p: n % p, lambda e: e[1])  # odd n: instance 1
    limits = env.from_dataframe(_stream(spark, tmp_path / "limits")).broadcast(LIMITS)
    job = spread.connect(limits).process(Limited(), output_type=OUT)
    run_to_parquet(job.to_dataframe(), tmp_path / "ck", tmp_path / "out")
    got = sorted(tuple(r) for r in spark.read.parquet(str(tmp_path / "out")).collect())
    # Within a micro-batch an instance takes its input 1's records before input 2's: no limit yet.
    assert got == [
        ("a", 0, 7, "limit@0"),
        ("a", 0, 7, "limit@1"),
        ("a", 1, -1, "counted@1"),
        ("b", 2, -1, "counted@0"),
        ("c", 3, -1, "counted@1"),
        ("d", 4, -1, "counted@0"),
    ]


@pytest.mark.classic_only  # CI time: the streaming plan is the same over Connect
def test_a_failing_custom_partitioner_names_the_broadcast_step_on_a_streaming_dataframe(
    tmp_path: Path,
) -> None:
    spark = spark_session()
    _write(spark, tmp_path / "events", "0", [("a", 1, 1000)])
    _write(spark, tmp_path / "limits", "0", [("a", 7, 100)])
    env = _env().set_parallelism(2)
    events = env.from_dataframe(_stream(spark, tmp_path / "events"))
    spread = events.partition_custom(lambda key, p: 5, lambda r: r.key)
    limits = env.from_dataframe(_stream(spark, tmp_path / "limits")).broadcast(LIMITS)
    job = spread.connect(limits).process(Limited(), output_type=OUT)
    with pytest.raises(Exception, match=r"the custom partitioner returned 5 for record .*\[0, 2\)"):
        run_to_parquet(job.to_dataframe(), tmp_path / "ck", tmp_path / "out")
