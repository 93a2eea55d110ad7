"""Streaming DataFrames: a keyed job with a ValueState counter and event-time timers runs as a
Structured Streaming query with its state in Spark's checkpointed state store, is stopped and
restarted from its ``checkpointLocation``, and continues with the right counts; timers registered
before the restart fire after it."""

from __future__ import annotations

import datetime
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from stream_query import run_to_parquet

from fs_compat.common import Configuration, Types
from fs_compat.datastream import KeyedProcessFunction, StreamExecutionEnvironment
from fs_compat.datastream.state import ValueStateDescriptor
from fs_compat.spark import spark_session

pytestmark = [pytest.mark.spark, pytest.mark.slow]

OUT = Types.ROW_NAMED(["key", "count", "kind"], [Types.STRING(), Types.LONG(), Types.STRING()])


class CountWithTimer(KeyedProcessFunction):
    """Counts records per key; the first record of a key sets an event-time timer 1 s later,
    which reports the count then."""

    def open(self, runtime_context: Any) -> None:
        self.count = runtime_context.get_state(ValueStateDescriptor("count", Types.LONG()))

    def process_element(self, value: Any, ctx: Any) -> Iterable[Any]:
        count = (self.count.value() or 0) + 1
        self.count.update(count)
        if count == 1:
            ctx.timer_service().register_event_time_timer(ctx.timestamp() + 1000)
        yield (value.key, count, "element")

    def on_timer(self, timestamp: int, ctx: Any) -> Iterable[Any]:
        yield (ctx.get_current_key(), self.count.value(), f"timer@{timestamp}")


SCHEMA = "key STRING, n LONG, ts TIMESTAMP"


def _write(spark: Any, folder: Path, name: str, rows: list[tuple[str, int, int]]) -> None:
    data = [(k, n, datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.UTC)) for k, n, ms in rows]
    spark.createDataFrame(data, SCHEMA).coalesce(1).write.parquet(str(folder / name))


def _run_query(spark: Any, source: Path, checkpoint: Path, sink: Path) -> int:
    """One run of the job until the input is used up; returns the number of micro-batches."""
    env = StreamExecutionEnvironment.get_execution_environment()
    env.configure(Configuration().set_string("execution.target", "spark"))
    df = (
        spark.readStream.schema(SCHEMA)
        .option("maxFilesPerTrigger", 1)
        .parquet(str(source / "*"))
        .withWatermark("ts", "1 second")
    )
    out = env.from_dataframe(df).key_by(lambda r: r.key).process(CountWithTimer(), output_type=OUT)
    return len(run_to_parquet(out.to_dataframe(), checkpoint, sink))


def _sink(spark: Any, sink: Path) -> Counter[tuple[Any, ...]]:
    return Counter(tuple(r) for r in spark.read.parquet(str(sink)).collect())


def test_keyed_state_and_timers_survive_a_restart_from_the_checkpoint(tmp_path: Path) -> None:
    spark = spark_session()
    source, checkpoint, sink = tmp_path / "in", tmp_path / "ck", tmp_path / "out"
    _write(spark, source, "1", [("a", 1, 1000), ("b", 1, 1500)])
    _write(spark, source, "2", [("a", 2, 2000)])
    _write(spark, source, "3", [("c", 3, 2500)])
    batches = _run_query(spark, source, checkpoint, sink)
    assert batches >= 3
    first = Counter(
        {("a", 1, "element"): 1, ("b", 1, "element"): 1, ("a", 2, "element"): 1, ("c", 1, "element"): 1}
    )
    assert _sink(spark, sink) == first  # the watermark (1500) has not reached a timer yet

    # Restart from the checkpoint with more input: counts continue, old timers fire.
    _write(spark, source, "4", [("a", 4, 5000), ("d", 4, 5000)])
    _write(spark, source, "5", [("e", 5, 6000)])
    _run_query(spark, source, checkpoint, sink)
    second = first + Counter(
        {
            ("a", 3, "element"): 1,
            ("d", 1, "element"): 1,
            ("e", 1, "element"): 1,
            ("a", 3, "timer@2000"): 1,
            ("b", 1, "timer@2500"): 1,
            ("c", 1, "timer@3500"): 1,
        }
    )
    assert _sink(spark, sink) == second


class FileClock:
    """A processing-time clock the test drives: epoch ms read from a file (no sleeping)."""

    def __init__(self, path: Path) -> None:
        self.path = str(path)

    def __call__(self) -> int:
        with open(self.path) as f:
            return int(f.read())


class RememberWithTtl(KeyedProcessFunction):
    """Remembers each key for 1 s of processing time (TTL); its first record also sets a
    processing-time timer 500 ms later."""

    def open(self, runtime_context: Any) -> None:
        from fs_compat.common import Time
        from fs_compat.datastream.state import StateTtlConfig

        descriptor = ValueStateDescriptor("seen", Types.LONG())
        descriptor.enable_time_to_live(StateTtlConfig.new_builder(Time.seconds(1)).build())
        self.seen = runtime_context.get_state(descriptor)

    def process_element(self, value: Any, ctx: Any) -> Iterable[Any]:
        seen = (self.seen.value() or 0) + 1
        self.seen.update(seen)
        if seen == 1:
            ctx.timer_service().register_processing_time_timer(
                ctx.timer_service().current_processing_time() + 500
            )
        yield (value.key, seen, "element")

    def on_timer(self, timestamp: int, ctx: Any) -> Iterable[Any]:
        yield (ctx.get_current_key(), self.seen.value() or 0, f"ptimer@{timestamp}")


def test_processing_time_timers_fire_and_ttl_empties_the_state_store(tmp_path: Path) -> None:
    spark = spark_session()
    source, checkpoint, sink, clock_file = (
        tmp_path / "in",
        tmp_path / "ck",
        tmp_path / "out",
        tmp_path / "now",
    )

    def run() -> list[dict[str, Any]]:
        env = StreamExecutionEnvironment.get_execution_environment()
        env.configure(Configuration().set_string("execution.target", "spark"))
        env.set_processing_time_clock(FileClock(clock_file))
        df = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).parquet(str(source / "*"))
        out = env.from_dataframe(df).key_by(lambda r: r.key).process(RememberWithTtl(), output_type=OUT)
        query = (
            out.to_dataframe()
            .writeStream.format("parquet")
            .option("checkpointLocation", str(checkpoint))
            .trigger(availableNow=True)
            .start(str(sink))
        )
        query.awaitTermination()
        assert query.exception() is None
        return [p["stateOperators"][0] for p in query.recentProgress if p["stateOperators"]]

    keys = [f"k{i}" for i in range(40)]
    clock_file.write_text("10000")
    _write(spark, source, "1", [(k, 1, 0) for k in keys])
    first = run()
    rows_after_first = first[-1]["numRowsTotal"]
    assert rows_after_first > 10  # 40 keys over many key groups: one state row per key group
    # 1.2 s later (more than the TTL, more than the timers' 500 ms): one record of a new key.
    clock_file.write_text("11200")
    _write(spark, source, "2", [("new", 2, 0)])
    second = run()
    assert second[-1]["numRowsTotal"] == 1  # every idle key's state expired and was removed
    results = _sink(spark, sink)
    assert results == Counter(
        {
            **{(k, 1, "element"): 1 for k in keys},
            **{(k, 0, "ptimer@10500"): 1 for k in keys},
            ("new", 1, "element"): 1,
        }
    )
