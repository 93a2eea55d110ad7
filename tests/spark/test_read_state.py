"""``fs_compat.spark.read_state``: a stopped streaming query's keyed state, read from its
checkpoint and decoded with the job's state declarations: per-window state of a window job,
map and value state of a KeyedProcessFunction, each step's own state in jobs with several keyed
steps (Spark numbers their state operators from the output down), and a Bytewax flow's."""

from __future__ import annotations

import base64
import datetime
import struct
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
from fs_compat.datastream.state import MapStateDescriptor, ValueStateDescriptor
from fs_compat.datastream.window import TumblingEventTimeWindows
from fs_compat.spark import read_state, spark_session

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SCHEMA = "key STRING, n LONG, ts TIMESTAMP"
PAIR = Types.TUPLE([Types.STRING(), Types.LONG()])
COUNTED = Types.ROW_NAMED(["key", "count"], [Types.STRING(), Types.LONG()])


def _env() -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.configure(Configuration().set_string("execution.target", "spark"))
    return env


def _source(spark: Any, folder: Path, files: list[list[tuple[str, int, int]]]) -> Any:
    """A streaming DataFrame over ``files`` (one micro-batch each)."""
    for i, rows in enumerate(files):
        data = [(k, n, datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.UTC)) for k, n, ms in rows]
        spark.createDataFrame(data, SCHEMA).coalesce(1).write.parquet(str(folder / str(i)))
    return spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).parquet(str(folder / "*"))


def _rows(df: Any) -> set[tuple[Any, ...]]:
    """The state rows, variants as Python values (lists made tuples, to be hashable)."""

    def plain(v: Any) -> Any:
        value = None if v is None else v.toPython()
        if isinstance(value, list):
            return tuple(plain_value(x) for x in value)
        if isinstance(value, dict):
            return tuple(sorted(value.items()))
        return value

    def plain_value(x: Any) -> Any:
        return tuple(x) if isinstance(x, list) else x

    assert df.columns == ["step", "state", "key", "namespace", "user_key", "value"]
    return {
        (r.step, r.state, *(plain(r[c]) for c in ("key", "namespace", "user_key", "value")))
        for r in df.collect()
    }


class _Stamp(TimestampAssigner):
    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return int(value.ts.timestamp() * 1000)


def test_read_state_of_a_window_job_shows_the_open_windows_state_per_window(tmp_path: Path) -> None:
    spark = spark_session()
    files = [
        [("a", 1, 100), ("a", 2, 900), ("b", 5, 1500)],
        [("a", 3, 1200), ("b", 1, 2500)],
    ]
    df = _source(spark, tmp_path / "in", files)
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_millis(0)).with_timestamp_assigner(
        _Stamp()
    )
    windowed = (
        _env()
        .from_dataframe(df)
        .assign_timestamps_and_watermarks(strategy)
        .map(lambda r: (r.key, r.n), output_type=PAIR)
        .key_by(lambda p: p[0])
        .window(TumblingEventTimeWindows.of(Duration.of_seconds(1)))
        .reduce(lambda x, y: (x[0], x[1] + y[1]))
        .uid("sums")
    )
    out = windowed.to_dataframe()
    run_to_parquet(out, tmp_path / "ck", tmp_path / "out")
    fired = sorted(tuple(r) for r in spark.read.parquet(str(tmp_path / "out")).collect())
    # By the end (watermark 2499), a's windows [0, 1000) and [1000, 2000) and b's [1000, 2000) fired.
    assert fired == [("a", 3), ("a", 3), ("b", 5)]

    state = _rows(read_state(str(tmp_path / "ck"), out))
    # b's window [2000, 3000) is open: its reduced value, and its event-time timer at 2999 (the
    # window operator's own map state: timestamp -> the namespaces of the windows waiting for it).
    window_bytes = b"T" + struct.pack(">qq", 2000, 3000)
    assert state == {
        ("sums", "window-contents", "b", (("end", 3000), ("start", 2000)), None, ("b", 1)),
        ("sums", "window-event-timers", "b", None, 2999, (base64.b64encode(window_bytes).decode(),)),
    }


class _Counts(KeyedProcessFunction):
    """Per key: how often each ``n`` came (a MapState) and how many records (a ValueState); the
    ``last`` state is first asked for in ``process_element``, so a reader cannot decode it."""

    def open(self, runtime_context: Any) -> None:
        self.ctx = runtime_context
        self.counts = runtime_context.get_map_state(MapStateDescriptor("counts", Types.LONG(), Types.LONG()))
        self.total = runtime_context.get_state(ValueStateDescriptor("total", Types.LONG()))

    def process_element(self, value: Any, ctx: Any) -> Iterable[Any]:
        self.counts.put(value.n, (self.counts.get(value.n) or 0) + 1)
        self.total.update((self.total.value() or 0) + 1)
        self.ctx.get_state(ValueStateDescriptor("last", Types.STRING())).update(value.key.upper())
        yield (value.key, self.total.value())


def test_read_state_of_a_map_state_job_shows_one_row_per_map_entry(tmp_path: Path) -> None:
    spark = spark_session()
    files = [
        [("a", 1, 0), ("a", 1, 0), ("a", 2, 0), ("b", 7, 0)],
        [("a", 2, 0), ("c", 3, 0)],
    ]
    df = _source(spark, tmp_path / "in", files)
    counted = (
        _env()
        .from_dataframe(df)
        .key_by(lambda r: r.key)
        .process(_Counts(), output_type=COUNTED)
        .uid("counter")
    )
    run_to_parquet(counted.to_dataframe(), tmp_path / "ck", tmp_path / "out")

    state = _rows(read_state(str(tmp_path / "ck"), counted))  # the DataStream the query was built from
    raw = {
        k: base64.b64encode(
            ValueStateDescriptor("last", Types.STRING())._spec().value_codec.encode(k.upper())
        )
        for k in "abc"
    }
    assert state == {
        ("counter", "counts", "a", None, 1, 2),
        ("counter", "counts", "a", None, 2, 2),
        ("counter", "counts", "b", None, 7, 1),
        ("counter", "counts", "c", None, 3, 1),
        ("counter", "total", "a", None, None, 4),
        ("counter", "total", "b", None, None, 1),
        ("counter", "total", "c", None, None, 1),
        # Not declared in open(): the stored bytes, base64.
        *(("counter", "last", k, None, None, raw[k].decode()) for k in "abc"),
    }


class _Seen(KeyedProcessFunction):
    """Counts records per key in ValueState ``name``; emits (key, count so far)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def open(self, runtime_context: Any) -> None:
        self.seen = runtime_context.get_state(ValueStateDescriptor(self.name, Types.LONG()))

    def process_element(self, value: Any, ctx: Any) -> Iterable[Any]:
        n = (self.seen.value() or 0) + 1
        self.seen.update(n)
        yield (str(value[0]), n)


@pytest.mark.classic_only  # Connect slice: README
def test_read_state_of_two_keyed_steps_gives_each_step_its_own_state(tmp_path: Path) -> None:
    spark = spark_session()
    files = [[("a", 0, 0), ("a", 0, 0), ("b", 0, 0)], [("a", 0, 0), ("c", 0, 0)]]
    df = _source(spark, tmp_path / "in", files)
    job = (
        _env()
        .from_dataframe(df)
        .key_by(lambda r: r.key)
        .process(_Seen("seen"), output_type=COUNTED)
        .uid("per-key")
        .key_by(lambda r: r.count)
        .process(_Seen("times"), output_type=COUNTED)
        .name("per count")
    )
    out = job.to_dataframe()
    run_to_parquet(out, tmp_path / "ck", tmp_path / "out")

    state = _rows(read_state(str(tmp_path / "ck"), out))
    assert state == {
        ("per-key", "seen", "a", None, None, 3),
        ("per-key", "seen", "b", None, None, 1),
        ("per-key", "seen", "c", None, None, 1),
        # Keyed by the first step's counts: (a, 1), (b, 1), (c, 1), (a, 2), (a, 3).
        ("per count", "times", 1, None, None, 3),
        ("per count", "times", 2, None, None, 1),
        ("per count", "times", 3, None, None, 1),
    }


class _Both(KeyedCoProcessFunction):
    """Counts, per key, the records of both inputs in ValueState ``both``."""

    def open(self, runtime_context: Any) -> None:
        self.both = runtime_context.get_state(ValueStateDescriptor("both", Types.LONG()))

    def _count(self) -> Iterable[Any]:
        self.both.update((self.both.value() or 0) + 1)
        return ()

    def process_element1(self, value: Any, ctx: Any) -> Iterable[Any]:
        return self._count()

    def process_element2(self, value: Any, ctx: Any) -> Iterable[Any]:
        return self._count()


@pytest.mark.classic_only  # Connect slice: README
def test_read_state_of_a_step_connecting_two_keyed_steps_tells_the_three_apart(tmp_path: Path) -> None:
    spark = spark_session()
    left = _source(spark, tmp_path / "left", [[("a", 0, 0), ("a", 0, 0)], [("b", 0, 0)]])
    right = _source(spark, tmp_path / "right", [[("a", 0, 0)], [("c", 0, 0), ("c", 0, 0)]])
    env = _env()
    firsts = env.from_dataframe(left).key_by(lambda r: r.key).process(_Seen("left"), output_type=COUNTED)
    seconds = env.from_dataframe(right).key_by(lambda r: r.key).process(_Seen("right"), output_type=COUNTED)
    job = (
        firsts.uid("L")
        .connect(seconds.uid("R"))
        .key_by(lambda r: r.key, lambda r: r.key)
        .process(_Both(), output_type=COUNTED)
        .uid("both")
    )
    out = job.to_dataframe()
    run_to_parquet(out, tmp_path / "ck", tmp_path / "out")

    assert _rows(read_state(str(tmp_path / "ck"), out)) == {
        ("L", "left", "a", None, None, 2),
        ("L", "left", "b", None, None, 1),
        ("R", "right", "a", None, None, 1),
        ("R", "right", "c", None, None, 2),
        ("both", "both", "a", None, None, 3),
        ("both", "both", "b", None, None, 1),
        ("both", "both", "c", None, None, 2),
    }


def test_read_state_needs_the_job_the_query_ran(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="read_state needs the job the query ran"):
        read_state(str(tmp_path), object())


def test_read_state_of_a_bytewax_flow_shows_each_keys_logic_snapshot(tmp_path: Path) -> None:
    import fs_compat.bytewax.operators as op
    from fs_compat.bytewax.dataflow import Dataflow
    from fs_compat.bytewax.spark import DataFrameSource, to_dataframe

    spark = spark_session()
    events = _source(spark, tmp_path / "in", [[("a", 1, 0), ("b", 10, 0)], [("a", 2, 0)]])

    def running_total(state: tuple[int, int] | None, row: Any) -> tuple[tuple[int, int], int]:
        count, total = state or (0, 0)
        return (count + 1, total + row.n), total + row.n

    flow = Dataflow("counts")
    s: Any = op.input("inp", flow, DataFrameSource(events))
    s = op.key_on("user", s, lambda row: row.key)
    s = op.stateful_map("running", s, running_total)
    out = to_dataframe(s, Types.TUPLE([Types.STRING(), Types.LONG()]))
    run_to_parquet(out, tmp_path / "ck", tmp_path / "out")

    # The step's inner Bytewax id; its one state, each key's logic snapshot (in a 1-tuple: a
    # snapshot may be None).
    step = "counts.running.stateful_flat_map.stateful.stateful_batch"
    assert _rows(read_state(str(tmp_path / "ck"), out)) == {
        (step, "bytewax_logic_snapshot", "a", None, None, ((2, 3),)),
        (step, "bytewax_logic_snapshot", "b", None, None, ((1, 10),)),
    }


LIMITS = MapStateDescriptor("limits", Types.STRING(), Types.LONG())


class _KeyedLimits(KeyedBroadcastProcessFunction):
    """Keyed: counts records per key; broadcast: limits per key."""

    def open(self, runtime_context: Any) -> None:
        self.count = runtime_context.get_state(ValueStateDescriptor("count", Types.LONG()))

    def process_element(self, value: Any, ctx: Any) -> Iterable[Any]:
        self.count.update((self.count.value() or 0) + 1)
        yield (value.key, self.count.value())

    def process_broadcast_element(self, value: Any, ctx: Any) -> Iterable[Any]:
        ctx.get_broadcast_state(LIMITS).put(value.key, value.n)
        return ()


class _Limits(BroadcastProcessFunction):
    """Not keyed: records pass; broadcast: limits per key, doubled."""

    def process_element(self, value: Any, ctx: Any) -> Iterable[Any]:
        yield value

    def process_broadcast_element(self, value: Any, ctx: Any) -> Iterable[Any]:
        ctx.get_broadcast_state(LIMITS).put(value.key, value.n * 2)
        return ()


@pytest.mark.classic_only  # CI time: the streaming plan is the same over Connect
def test_read_state_shows_broadcast_state_once_for_keyed_and_non_keyed_steps(tmp_path: Path) -> None:
    spark = spark_session()
    events = _source(spark, tmp_path / "events", [[("a", 1, 100), ("b", 1, 200)], [("a", 1, 300)]])
    limits = _source(spark, tmp_path / "limits", [[("a", 5, 100), ("b", 7, 100)], [("b", 9, 200)]])
    env = _env().set_parallelism(2)
    counted = (
        env.from_dataframe(events)
        .key_by(lambda r: r.key)
        .connect(env.from_dataframe(limits).broadcast(LIMITS))
        .process(_KeyedLimits(), output_type=COUNTED)
        .uid("keyed")
    )
    out = counted.connect(env.from_dataframe(limits).broadcast(LIMITS)).process(
        _Limits(), output_type=COUNTED
    )
    df = out.uid("plain").to_dataframe()
    run_to_parquet(df, tmp_path / "ck", tmp_path / "out")
    # One copy per step, though every key group (keyed) and every instance (plain) holds one.
    assert _rows(read_state(str(tmp_path / "ck"), df)) == {
        ("keyed", "count", "a", None, None, 2),
        ("keyed", "count", "b", None, None, 1),
        ("keyed", "limits", None, None, "a", 5),
        ("keyed", "limits", None, None, "b", 9),
        ("plain", "limits", None, None, "a", 10),
        ("plain", "limits", None, None, "b", 18),
    }
