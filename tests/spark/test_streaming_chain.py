"""Streaming DataFrames through several keyed steps: a job with two keyed steps in sequence (each
with keyed state and event-time timers) runs as one Structured Streaming query, each step's state
in its own state operator of the query's checkpoint; stopped and restarted from the checkpoint
between micro-batches, it gives the batch target's output on the same input."""

from __future__ import annotations

import datetime
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from stream_query import run_to_parquet

from fs_compat.common import Configuration, Duration, TimestampAssigner, Types, WatermarkStrategy
from fs_compat.datastream import KeyedProcessFunction, StreamExecutionEnvironment
from fs_compat.datastream.state import ListStateDescriptor, ValueStateDescriptor
from fs_compat.spark import StreamPlanError, read_state, spark_session

pytestmark = [pytest.mark.spark, pytest.mark.slow]

OUT = Types.ROW_NAMED(["key", "count", "kind"], [Types.STRING(), Types.LONG(), Types.STRING()])
SCHEMA = "key STRING, n LONG, ts TIMESTAMP"
END = "~end"  # a record far ahead in event time: moves the watermark past every timer


class PerKey(KeyedProcessFunction):
    """Per key: the number of records so far with each record; a timer 1 s after the key's first
    record reports how many of its records are at or before the timer."""

    def open(self, runtime_context: Any) -> None:
        self.stamps = runtime_context.get_list_state(ListStateDescriptor("stamps", Types.LONG()))

    def process_element(self, value: Any, ctx: Any) -> Iterable[Any]:
        if value.key == END:
            return
        stamps = [*self.stamps.get(), ctx.timestamp()]
        self.stamps.add(ctx.timestamp())
        if len(stamps) == 1:
            ctx.timer_service().register_event_time_timer(ctx.timestamp() + 1000)
        yield (value.key, len(stamps), "element")

    def on_timer(self, timestamp: int, ctx: Any) -> Iterable[Any]:
        before = sum(1 for t in self.stamps.get() if t <= timestamp)
        yield (ctx.get_current_key(), before, f"timer@{timestamp}")


class PerKind(KeyedProcessFunction):
    """Keyed by the kind of the first step's outputs ("element" or "timer"): at the end of every
    second that saw one, how many of its records are at or before it."""

    def open(self, runtime_context: Any) -> None:
        self.stamps = runtime_context.get_list_state(ListStateDescriptor("stamps", Types.LONG()))

    def process_element(self, value: Any, ctx: Any) -> Iterable[Any]:
        self.stamps.add(ctx.timestamp())
        ctx.timer_service().register_event_time_timer(ctx.timestamp() // 1000 * 1000 + 999)
        return ()

    def on_timer(self, timestamp: int, ctx: Any) -> Iterable[Any]:
        before = sum(1 for t in self.stamps.get() if t <= timestamp)
        yield (ctx.get_current_key(), before, f"second@{timestamp}")


FILES = [
    [("a", 1, 1000), ("b", 1, 1500), ("a", 2, 1200)],
    [("a", 3, 2000), ("c", 1, 2600)],
    [("b", 2, 3100), ("d", 1, 3050), ("a", 4, 4000)],
    [("c", 2, 5200), ("e", 1, 6000), (END, 0, 100_000)],
]


def _job(env: StreamExecutionEnvironment, df: Any) -> Any:
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(
        Duration.of_millis(500)
    ).with_timestamp_assigner(_Stamp())
    return (
        env.from_dataframe(df)
        .assign_timestamps_and_watermarks(strategy)
        .key_by(lambda r: r.key)
        .process(PerKey(), output_type=OUT)
        .key_by(lambda r: r[2].split("@")[0])
        .process(PerKind(), output_type=OUT)
    )


class _Stamp(TimestampAssigner):
    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return int(value.ts.timestamp() * 1000)


def _env() -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.configure(Configuration().set_string("execution.target", "spark"))
    return env


def _write(spark: Any, folder: Path, name: str, rows: list[tuple[str, int, int]]) -> None:
    data = [(k, n, datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.UTC)) for k, n, ms in rows]
    spark.createDataFrame(data, SCHEMA).coalesce(1).write.parquet(str(folder / name))


def _batch(spark: Any) -> Any:
    """Every file's rows as one batch DataFrame: the batch target's input."""
    rows = [
        (k, n, datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.UTC)) for f in FILES for k, n, ms in f
    ]
    return spark.createDataFrame(rows, SCHEMA)


def _run(spark: Any, source: Path, checkpoint: Path, sink: Path) -> int:
    df = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).parquet(str(source / "*"))
    return len(run_to_parquet(_job(_env(), df).to_dataframe(), checkpoint, sink))


def test_two_keyed_steps_with_timers_restart_from_the_checkpoint_and_match_the_batch_target(
    tmp_path: Path,
) -> None:
    spark = spark_session()
    source, checkpoint, sink = tmp_path / "in", tmp_path / "ck", tmp_path / "out"
    for i, rows in enumerate(FILES[:2]):
        _write(spark, source, str(i), rows)
    assert _run(spark, source, checkpoint, sink) >= 2
    first = Counter(tuple(r) for r in spark.read.parquet(str(sink)).collect())
    # Two micro-batches in, the watermark is 2600 - 501: the second step's timer at 1999 fired
    # (the first step's records at 1000, 1200 and 1500 before it); the first step's timer at
    # 2000 fired too, but the second step's timer for its output (2999) is not due yet.
    assert first == Counter({("element", 3, "second@1999"): 1})

    for i, rows in enumerate(FILES[2:], start=2):
        _write(spark, source, str(i), rows)
    _run(spark, source, checkpoint, sink)  # restarted from the checkpoint
    streamed = Counter(tuple(r) for r in spark.read.parquet(str(sink)).collect())

    batch = _batch(spark)
    expected = Counter(tuple(r) for r in _job(_env(), batch).to_dataframe().collect())
    assert streamed == expected
    # The first step's timers (at 2000, 2500, 3600, 4050, 7000) reached the second step's.
    assert expected[("timer", 2, "second@2999")] == 1
    assert expected[("timer", 5, "second@7999")] == 1
    # One timer of the second step per second with a record of the first step's: 1 s .. 6 s.
    assert sum(1 for key, _n, _kind in expected.elements() if key == "element") == 6
    assert expected[("element", 10, "second@6999")] == 1


def _counted(env: StreamExecutionEnvironment, df: Any) -> Any:
    """``df`` with its timestamps (500 ms out of order), keyed by ``key``, through ``PerKey``."""
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_millis(500))
    stamped = env.from_dataframe(df).assign_timestamps_and_watermarks(
        strategy.with_timestamp_assigner(_Stamp())
    )
    return stamped.key_by(lambda r: r.key).process(PerKey(), output_type=OUT)


def _forks(env: StreamExecutionEnvironment, df: Any) -> tuple[Any, Any]:
    """Two jobs in which a keyed step's output is read twice: unioned with a mapped copy of
    itself into the output, and, as two channels, into one next keyed step (``PerKind``)."""
    counted = _counted(env, df)
    doubled = counted.map(lambda r: (r[0], r[1] * 2, "doubled"), output_type=OUT)
    rejoined = counted.union(doubled).key_by(lambda r: r[2].split("@")[0]).process(PerKind(), output_type=OUT)
    return counted.union(doubled), rejoined


@pytest.mark.classic_only  # Connect slice: README
def test_a_keyed_steps_output_read_twice_into_one_place_restarts_and_matches_the_batch_target(
    tmp_path: Path,
) -> None:
    spark = spark_session()
    for i in range(2):
        _write(spark, tmp_path / "in", str(i), FILES[i])
    found: list[Counter[tuple[Any, ...]]] = [Counter(), Counter()]
    for more in (range(0), range(2, 4)):  # the second run restarts from the checkpoints
        for i in more:
            _write(spark, tmp_path / "in", str(i), FILES[i])
        df = (
            spark.readStream.schema(SCHEMA)
            .option("maxFilesPerTrigger", 1)
            .parquet(str(tmp_path / "in" / "*"))
        )
        for k, job in enumerate(_forks(_env(), df)):
            progress = run_to_parquet(job.to_dataframe(), tmp_path / f"ck{k}", tmp_path / f"out{k}")
            # The keyed step is one state operator of the query: its frame is read once.
            assert all(len(p["stateOperators"]) == k + 1 for p in progress)
            found[k] = Counter(tuple(r) for r in spark.read.parquet(str(tmp_path / f"out{k}")).collect())
    batch = _batch(spark)
    expected = [Counter(tuple(r) for r in job.to_dataframe().collect()) for job in _forks(_env(), batch)]
    assert found == expected
    assert expected[0][("a", 4, "element")] == expected[0][("a", 8, "doubled")] == 1
    # The doubled copies of all the first step's outputs, by 6999: its 10 elements and 4 timers.
    assert expected[1][("doubled", 14, "second@6999")] == expected[1][("element", 10, "second@6999")] == 1


class Latest(KeyedProcessFunction):
    """Keyed by the first step's key: the highest count it reported, in a ValueState, once, by
    a timer past every record's time (it fires at the end of the input)."""

    def open(self, runtime_context: Any) -> None:
        self.top = runtime_context.get_state(ValueStateDescriptor("top", Types.LONG()))

    def process_element(self, value: Any, ctx: Any) -> Iterable[Any]:
        self.top.update(max(self.top.value() or 0, value[1]))
        ctx.timer_service().register_event_time_timer(50_000)
        return ()

    def on_timer(self, timestamp: int, ctx: Any) -> Iterable[Any]:
        yield (ctx.get_current_key(), self.top.value(), "latest")


def _diamond(env: StreamExecutionEnvironment, df: Any) -> Any:
    """A keyed step (``PerKey``) read by two keyed steps (``PerKind`` by the kind of its outputs,
    ``Latest`` by their key), whose outputs meet again in a fourth (``PerKind`` by their kind)."""
    counted = _counted(env, df).name("counted")
    by_kind = counted.key_by(lambda r: r[2].split("@")[0]).process(PerKind(), output_type=OUT).name("kinds")
    latest = counted.key_by(lambda r: r[0]).process(Latest(), output_type=OUT).name("latest")
    kinds = by_kind.union(latest).key_by(lambda r: r[2].split("@")[0])
    return kinds.process(PerKind(), output_type=OUT).name("again")


def _restarted(spark: Any, tmp_path: Path, build: Any, operators: int) -> tuple[Any, Counter[Any]]:
    """The job ``build`` makes, run on the first two files, then restarted from its checkpoint
    (``tmp_path / "ck"``) on all four; every micro-batch had ``operators`` state operators. The
    job as last built, and what the two runs wrote."""
    source, sink = tmp_path / "in", tmp_path / "out"
    for i in range(2):
        _write(spark, source, str(i), FILES[i])
    for more in (range(0), range(2, 4)):
        for i in more:
            _write(spark, source, str(i), FILES[i])
        df = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).parquet(str(source / "*"))
        job = build(_env(), df)
        progress = run_to_parquet(job.to_dataframe(), tmp_path / "ck", sink)
        assert progress and all(len(p["stateOperators"]) == operators for p in progress)
    return job, Counter(tuple(r) for r in spark.read.parquet(str(sink)).collect())


@pytest.mark.classic_only  # Connect slice: README
def test_a_keyed_step_read_by_two_keyed_steps_restarts_and_matches_the_batch_target(tmp_path: Path) -> None:
    spark = spark_session()
    # Three state operators: the first step's, one for the two steps that read it, the last's.
    job, streamed = _restarted(spark, tmp_path, _diamond, 3)
    expected = Counter(tuple(r) for r in _diamond(_env(), _batch(spark)).to_dataframe().collect())
    assert streamed == expected
    # From one side: the 10 per-second reports of ``kinds`` (elements' and timers'), by 7999;
    # from the other: the 5 keys' tops, at the end.
    assert expected[("second", 10, "second@7999")] == 1
    assert expected[("latest", 5, "second@50999")] == 1
    # Each of the two steps has its own state, read back from the shared state operator.
    rows = read_state(str(tmp_path / "ck"), job).collect()
    state = {(r.step, r.state, r.key.toPython()) for r in rows}
    tops = {r.key.toPython(): r.value.toPython() for r in rows if r.step == "latest"}
    assert tops == {"a": 4, "b": 2, "c": 2, "d": 1, "e": 1}
    assert {k for s, _n, k in state if s == "kinds"} == {"element", "timer"}
    assert {s for s, _n, _k in state} == {"counted", "kinds", "latest", "again"}


def _to_output_and_on(env: StreamExecutionEnvironment, df: Any) -> Any:
    """Keyed steps whose outputs go both to the output and to the next keyed step, twice:
    ``PerKey``'s, ``PerKind``'s (by the kind of ``PerKey``'s outputs) and ``Latest``'s (by the
    key of ``PerKind``'s), all three in the output."""
    counted = _counted(env, df).name("counted")
    by_kind = counted.key_by(lambda r: r[2].split("@")[0]).process(PerKind(), output_type=OUT).name("kinds")
    latest = by_kind.key_by(lambda r: r[0]).process(Latest(), output_type=OUT).name("latest")
    return counted.union(by_kind, latest)


@pytest.mark.classic_only  # Connect slice: README
def test_keyed_steps_read_by_the_output_and_the_next_keyed_step_restart_and_match_the_batch_target(
    tmp_path: Path,
) -> None:
    spark = spark_session()
    # One state operator per keyed step: the rows bound for the output pass the later ones.
    job, streamed = _restarted(spark, tmp_path, _to_output_and_on, 3)
    expected = Counter(tuple(r) for r in _to_output_and_on(_env(), _batch(spark)).to_dataframe().collect())
    assert streamed == expected
    assert expected[("a", 4, "element")] == 1  # the first step's,
    assert expected[("element", 10, "second@6999")] == 1  # the second's,
    assert expected[("element", 10, "latest")] == expected[("timer", 5, "latest")] == 1  # the third's
    tops = {
        r.key.toPython(): r.value.toPython()
        for r in read_state(str(tmp_path / "ck"), job).collect()
        if r.step == "latest"
    }
    assert tops == {"element": 10, "timer": 5}


def _past_two_steps(env: StreamExecutionEnvironment, df: Any) -> Any:
    """A keyed step (``kinds``: ``PerKind`` by kind) that reads both a keyed step (``counted``:
    ``PerKey``) and a keyed step two steps after it (``again``, after ``latest``), and the job's
    output both ``kinds``' and ``counted``'s: four stages in a chain, ``counted``'s records for
    ``kinds`` crossing the two stages between in lanes, and its rows for the output crossing
    the three after it in relays."""
    counted = _counted(env, df).name("counted")
    latest = counted.key_by(lambda r: r[0]).process(Latest(), output_type=OUT).name("latest")
    again = latest.key_by(lambda r: r[2]).process(PerKind(), output_type=OUT).name("again")
    both = counted.union(again).key_by(lambda r: r[2].split("@")[0])
    return both.process(PerKind(), output_type=OUT).name("kinds").union(counted)


@pytest.mark.classic_only  # Connect slice: README
def test_a_keyed_step_reading_a_keyed_step_and_one_further_down_restarts_and_matches_the_batch_target(
    tmp_path: Path,
) -> None:
    spark = spark_session()
    job, streamed = _restarted(spark, tmp_path, _past_two_steps, 4)  # one state operator per step
    expected = Counter(tuple(r) for r in _past_two_steps(_env(), _batch(spark)).to_dataframe().collect())
    assert streamed == expected
    # ``counted``'s records, through the lanes, by the second in which they are (10 elements and
    # 5 timers by 7999); ``again``'s one report of ``latest``'s 5 tops, at the end (its
    # watermark came through the lanes); and ``counted``'s own outputs, through the relays.
    assert expected[("element", 10, "second@6999")] == expected[("timer", 5, "second@7999")] == 1
    assert expected[("second", 1, "second@50999")] == 1
    assert expected[("a", 4, "element")] == expected[("e", 1, "timer@7000")] == 1
    assert len(expected) == 26
    tops = {
        r.key.toPython(): r.value.toPython()
        for r in read_state(str(tmp_path / "ck"), job).collect()
        if r.step == "latest"
    }
    assert tops == {"a": 4, "b": 2, "c": 2, "d": 1, "e": 1}


def test_timestamps_assigned_on_a_second_path_out_of_a_keyed_step_are_refused(tmp_path: Path) -> None:
    spark = spark_session()
    _write(spark, tmp_path / "in", "0", FILES[0])
    df = spark.readStream.schema(SCHEMA).parquet(str(tmp_path / "in" / "*"))
    counted = _env().from_dataframe(df).key_by(lambda r: r.key).process(PerKey(), output_type=OUT)
    restamped = counted.assign_timestamps_and_watermarks(
        WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_millis(0)).with_timestamp_assigner(
            _Stamp()
        )
    )
    with pytest.raises(StreamPlanError, match="assign timestamps before the first keyed"):
        counted.union(restamped).to_dataframe()
