"""PyFlink's DataStream API, behaviour by behaviour: stateless steps with function classes and
callables, keyed state of every kind (with TTL), timers, connected and broadcast streams, side
outputs from every kind of process function, rolling aggregations, metrics, ``execute_and_collect``,
type information as Flink prints it, and user errors. Written for fs-compat; the behaviours are
those PyFlink's own ``test_data_stream.py`` checks.

Every test runs in-process and, marked ``spark``, on Spark with the same expectations; the ones
PyFlink checks in both runtime modes run in STREAMING and BATCH.
"""

from __future__ import annotations

import datetime
import decimal
import os
import uuid
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

import pytest

from fs_compat.common import Configuration, Row, Time, Types, WatermarkStrategy
from fs_compat.common.watermark_strategy import TimestampAssigner
from fs_compat.datastream import RuntimeContext, RuntimeExecutionMode, StreamExecutionEnvironment
from fs_compat.datastream.data_stream import DataStream
from fs_compat.datastream.functions import (
    AggregateFunction,
    BroadcastProcessFunction,
    CoFlatMapFunction,
    CoMapFunction,
    CoProcessFunction,
    FilterFunction,
    FlatMapFunction,
    KeyedBroadcastProcessFunction,
    KeyedCoProcessFunction,
    KeyedProcessFunction,
    KeySelector,
    MapFunction,
    ProcessFunction,
    ReduceFunction,
)
from fs_compat.datastream.output_tag import OutputTag
from fs_compat.datastream.state import (
    AggregatingStateDescriptor,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    StateTtlConfig,
    ValueStateDescriptor,
)
from fs_compat.datastream.tests.test_util import DataStreamTestSinkFunction
from fs_compat.runtime import StepError

MIN = -(1 << 63)
_SPARK = [pytest.mark.spark, pytest.mark.slow]
#: The spark-streaming case runs for tests marked ``streaming_target`` only (tests/conftest.py).
_TARGETS = [
    "local",
    pytest.param("spark", marks=_SPARK),
    pytest.param("spark-streaming", marks=_SPARK, id="streaming-target"),
]


def _make(target: str, mode: RuntimeExecutionMode) -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment(
        Configuration().set_string("execution.target", target)
    )
    env.set_parallelism(2)
    env.set_runtime_mode(mode)
    return env


@pytest.fixture(params=_TARGETS)
def env(request: pytest.FixtureRequest) -> StreamExecutionEnvironment:
    """A STREAMING environment, parallelism 2."""
    return _make(request.param, RuntimeExecutionMode.STREAMING)


@pytest.fixture(
    params=[
        pytest.param(("local", RuntimeExecutionMode.STREAMING), id="local-streaming"),
        pytest.param(("local", RuntimeExecutionMode.BATCH), id="local-batch"),
        pytest.param(("spark", RuntimeExecutionMode.STREAMING), id="spark-streaming", marks=_SPARK),
        pytest.param(("spark", RuntimeExecutionMode.BATCH), id="spark-batch", marks=_SPARK),
        pytest.param(
            ("spark-streaming", RuntimeExecutionMode.STREAMING), id="streaming-target", marks=_SPARK
        ),
    ]
)
def any_env(request: pytest.FixtureRequest) -> StreamExecutionEnvironment:
    """An environment in either runtime mode, parallelism 2."""
    return _make(*request.param)


def _batch(env: StreamExecutionEnvironment) -> bool:
    return env._mode is RuntimeExecutionMode.BATCH


def _run(env: StreamExecutionEnvironment, stream: Any, *, python: bool = False) -> list[str]:
    """What ``stream`` gives, sorted: as Flink's Java side prints it, or ``str()`` of the values."""
    sink = DataStreamTestSinkFunction()
    stream.add_sink(sink)
    env.execute()
    return sorted(sink.get_results(python))


def _sinks(*streams: Any) -> list[DataStreamTestSinkFunction]:
    sinks = [DataStreamTestSinkFunction() for _ in streams]
    for stream, sink in zip(streams, sinks, strict=True):
        stream.add_sink(sink)
    return sinks


class AtField(TimestampAssigner):
    def __init__(self, index: int) -> None:
        self.index = index

    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return int(value[self.index])


def _stamped(stream: DataStream[Any], index: int) -> DataStream[Any]:
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(AtField(index))
    return stream.assign_timestamps_and_watermarks(strategy)


# Stateless steps. ------------------------------------------------------------------------------


class NameLength(MapFunction):
    def map(self, value: Any) -> Any:
        return value[0], len(value[0]), value[1][1]


class EvenLengths(FlatMapFunction):
    def flat_map(self, value: Any) -> Iterable[Any]:
        if value[1] % 2 == 0:
            yield value


class Dearer(FilterFunction):
    def filter(self, value: Any) -> bool:
        return value[2] > 6


def test_map_flat_map_and_filter_functions_with_declared_types(any_env: StreamExecutionEnvironment) -> None:
    fruit = [
        ("kiwi", Row("k", decimal.Decimal(7))),
        ("fig", Row("f", decimal.Decimal(2))),
        ("banana", Row("b", decimal.Decimal(5))),
        ("plum", Row("p", decimal.Decimal(8))),
    ]
    ds = any_env.from_collection(
        fruit, Types.TUPLE([Types.STRING(), Types.ROW([Types.STRING(), Types.BIG_DEC()])])
    )
    triple = Types.TUPLE([Types.STRING(), Types.INT(), Types.BIG_DEC()])
    out = (
        ds.map(NameLength(), output_type=triple)
        .flat_map(EvenLengths(), output_type=triple)
        .filter(Dearer())
        .map(
            lambda v: Row(v[0], v[1] * 10, v[2]),
            output_type=Types.ROW([Types.STRING(), Types.INT(), Types.BIG_DEC()]),
        )
    )
    assert _run(any_env, out) == ["+I[kiwi, 40, 7]", "+I[plum, 40, 8]"]


def test_plain_callables_and_python_objects(any_env: StreamExecutionEnvironment) -> None:
    ds = any_env.from_collection(
        [("kiwi", decimal.Decimal(7)), ("fig", decimal.Decimal(9))],
        Types.ROW([Types.STRING(), Types.BIG_DEC()]),
    )

    def doubled_if_short(v: Any) -> Iterable[Any]:
        if len(v[0]) < 4:
            yield v[0] * 2, v[1]

    out = ds.flat_map(doubled_if_short).map(lambda v: Row(v[0], v[1] + 1))
    assert _run(any_env, out, python=True) == ["<Row('figfig', Decimal('10'))>"]


class Parcel:
    def __init__(self, label: str, copies: int) -> None:
        self.label, self.copies = label, copies


def test_instances_of_a_user_class_flow_between_steps(any_env: StreamExecutionEnvironment) -> None:
    ds = any_env.from_collection([("p", 2), ("q", 0), ("r", 1)], Types.ROW([Types.STRING(), Types.INT()]))
    out = ds.map(lambda r: Parcel(r[0], r[1])).flat_map(lambda p: [p.label] * p.copies)
    assert _run(any_env, out, python=True) == ["p", "p", "r"]


def test_collection_and_time_types_print_as_in_java(any_env: StreamExecutionEnvironment) -> None:
    row_type = Types.ROW(
        [
            Types.INT(),
            Types.PRIMITIVE_ARRAY(Types.DOUBLE()),
            Types.BASIC_ARRAY(Types.STRING()),
            Types.OBJECT_ARRAY(Types.INT()),
            Types.SQL_DATE(),
            Types.SQL_TIME(),
            Types.SQL_TIMESTAMP(),
            Types.LIST(Types.INT()),
        ]
    )
    value = (
        7,
        [0.5, 2.25],
        ["x", None],
        [None, 3],
        datetime.date(2024, 2, 29),
        datetime.time(23, 59, 58),
        datetime.datetime(2024, 2, 29, 23, 59, 58, 123000),
        [4, 5],
    )
    out = any_env.from_collection([value], row_type).map(lambda v: v, output_type=row_type)
    assert _run(any_env, out) == [
        "+I[7, [0.5, 2.25], [x, null], [null, 3], 2024-02-29, 23:59:58, 2024-02-29 23:59:58.123, [4, 5]]"
    ]


# Keyed state. ----------------------------------------------------------------------------------


class History(KeyedProcessFunction):
    """Reports the key's previous value, all values and a value -> key map (with TTL), then adds
    the current one."""

    def open(self, runtime_context: RuntimeContext) -> None:
        self.last = runtime_context.get_state(ValueStateDescriptor("last", Types.INT()))
        self.all = runtime_context.get_list_state(ListStateDescriptor("all", Types.INT()))
        by_value = MapStateDescriptor("by_value", Types.INT(), Types.STRING())
        by_value.enable_time_to_live(
            StateTtlConfig.new_builder(Time.seconds(1))
            .set_update_type(StateTtlConfig.UpdateType.OnReadAndWrite)
            .set_state_visibility(StateTtlConfig.StateVisibility.ReturnExpiredIfNotCleanedUp)
            .disable_cleanup_in_background()
            .build()
        )
        self.by_value = runtime_context.get_map_state(by_value)

    def process_element(self, value: Any, ctx: KeyedProcessFunction.Context) -> Iterable[str]:
        entries = ", ".join(f"{k}: {v}" for k, v in sorted(self.by_value.items()))
        key, last, values = ctx.get_current_key(), self.last.value(), list(self.all.get())
        yield f"{key}: last={last} all={values} map={{{entries}}}"
        self.last.update(value[0])
        self.all.add(value[0])
        self.by_value.put(value[0], value[1])


@pytest.mark.streaming_target
def test_value_list_and_map_state_per_key(any_env: StreamExecutionEnvironment) -> None:
    readings = [
        (1, "red", "1000"),
        (2, "blue", "1500"),
        (3, "red", "2500"),
        (4, "red", "2600"),
        (5, "blue", "9000"),
    ]
    ds = _stamped(
        any_env.from_collection(readings, Types.ROW([Types.INT(), Types.STRING(), Types.STRING()])), 2
    )
    out = ds.key_by(lambda r: r[1], key_type=Types.STRING()).process(History(), output_type=Types.STRING())
    assert _run(any_env, out) == sorted(
        [
            "red: last=None all=[] map={}",
            "red: last=1 all=[1] map={1: red}",
            "red: last=3 all=[1, 3] map={1: red, 3: red}",
            "blue: last=None all=[] map={}",
            "blue: last=2 all=[2] map={2: blue}",
        ]
    )


class RunningTotal(KeyedProcessFunction):
    def open(self, runtime_context: RuntimeContext) -> None:
        self.total = runtime_context.get_reducing_state(
            ReducingStateDescriptor("total", lambda a, b: a + b, Types.LONG())
        )

    def process_element(self, value: Any, ctx: KeyedProcessFunction.Context) -> Iterable[Any]:
        self.total.add(value[0])
        yield self.total.get(), value[1]


@pytest.mark.streaming_target
def test_reducing_state(any_env: StreamExecutionEnvironment) -> None:
    ds = any_env.from_collection(
        [(10, "x"), (1, "y"), (20, "x"), (2, "y"), (30, "x")], Types.TUPLE([Types.INT(), Types.STRING()])
    )
    out = ds.key_by(lambda v: v[1], key_type=Types.STRING()).process(
        RunningTotal(), Types.TUPLE([Types.LONG(), Types.STRING()])
    )
    assert _run(any_env, out) == sorted(["(10,x)", "(30,x)", "(60,x)", "(1,y)", "(3,y)"])


class Mean(AggregateFunction):
    def create_accumulator(self) -> tuple[int, int]:
        return 0, 0

    def add(self, value: int, accumulator: tuple[int, int]) -> tuple[int, int]:
        return accumulator[0] + value, accumulator[1] + 1

    def get_result(self, accumulator: tuple[int, int]) -> int:
        return accumulator[0] // accumulator[1]

    def merge(self, a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
        return a[0] + b[0], a[1] + b[1]


class RunningMean(KeyedProcessFunction):
    def open(self, runtime_context: RuntimeContext) -> None:
        descriptor = AggregatingStateDescriptor("mean", Mean(), Types.TUPLE([Types.LONG(), Types.LONG()]))
        descriptor.enable_time_to_live(
            StateTtlConfig.new_builder(Time.seconds(1))
            .set_update_type(StateTtlConfig.UpdateType.OnReadAndWrite)
            .disable_cleanup_in_background()
            .build()
        )
        self.mean = runtime_context.get_aggregating_state(descriptor)

    def process_element(self, value: Any, ctx: KeyedProcessFunction.Context) -> Iterable[Any]:
        self.mean.add(value[0])
        yield self.mean.get(), value[1]


def test_aggregating_state_with_ttl(any_env: StreamExecutionEnvironment) -> None:
    ds = any_env.from_collection(
        [(4, "x"), (8, "x"), (5, "y"), (9, "x"), (7, "y")], Types.TUPLE([Types.INT(), Types.STRING()])
    )
    out = ds.key_by(lambda v: v[1], key_type=Types.STRING()).process(
        RunningMean(), Types.TUPLE([Types.LONG(), Types.STRING()])
    )
    assert _run(any_env, out) == sorted(["(4,x)", "(6,x)", "(7,x)", "(5,y)", "(6,y)"])


class BySecondField(KeySelector):
    def get_key(self, value: Any) -> Any:
        return value[1]


class CountSoFar(MapFunction):
    """(name, how many elements of its key so far); checks the per-key order."""

    def open(self, runtime_context: RuntimeContext) -> None:
        self.seen = runtime_context.get_state(ValueStateDescriptor("seen", Types.INT()))

    def map(self, value: Any) -> Any:
        n = (self.seen.value() or 0) + 1
        assert (value[0], n) in {("m", 1), ("n", 1), ("o", 2), ("p", 2), ("q", 1)}, value
        self.seen.update(n)
        return value[0], n


_NAMES = [("m", 3), ("n", 4), ("o", 3), ("p", 4), ("q", 5)]


@pytest.mark.streaming_target
def test_keyed_map_keeps_state_per_key(env: StreamExecutionEnvironment) -> None:
    keyed = env.from_collection(_NAMES, Types.ROW([Types.STRING(), Types.INT()])).key_by(
        BySecondField(), key_type=Types.INT()
    )
    with pytest.raises(Exception, match="KeyedStream"):
        keyed.name("not for keyed streams")
    assert _run(env, keyed.map(CountSoFar()), python=True) == sorted(
        ["('m', 1)", "('n', 1)", "('o', 2)", "('p', 2)", "('q', 1)"]
    )


class EveryOther(FlatMapFunction):
    """The 1st, 3rd ... element of each key, with its position."""

    def open(self, runtime_context: RuntimeContext) -> None:
        self.seen = runtime_context.get_state(ValueStateDescriptor("seen", Types.INT()))

    def flat_map(self, value: Any) -> Iterable[Any]:
        n = (self.seen.value() or 0) + 1
        self.seen.update(n)
        if n % 2:
            yield value[0], n


def test_keyed_flat_map_keeps_state_per_key(env: StreamExecutionEnvironment) -> None:
    keyed = env.from_collection(_NAMES, Types.ROW([Types.STRING(), Types.INT()])).key_by(
        BySecondField(), key_type=Types.INT()
    )
    assert _run(env, keyed.flat_map(EveryOther()), python=True) == sorted(
        ["('m', 1)", "('n', 1)", "('q', 1)"]
    )


class FirstOfKey(FilterFunction):
    def open(self, runtime_context: RuntimeContext) -> None:
        self.seen = runtime_context.get_state(ValueStateDescriptor("seen", Types.BOOLEAN()))

    def filter(self, value: Any) -> bool:
        first = not self.seen.value()
        self.seen.update(True)
        return first


def test_keyed_filter_keeps_state_per_key(env: StreamExecutionEnvironment) -> None:
    keyed = env.from_collection(_NAMES, Types.ROW([Types.STRING(), Types.INT()])).key_by(BySecondField())
    assert _run(env, keyed.filter(FirstOfKey())) == ["+I[m, 3]", "+I[n, 4]", "+I[q, 5]"]


@pytest.mark.streaming_target
def test_a_keyed_stream_keyed_again(env: StreamExecutionEnvironment) -> None:
    ds = env.from_collection(_NAMES, Types.ROW([Types.STRING(), Types.INT()]))
    rekeyed = ds.key_by(BySecondField(), key_type=Types.INT()).key_by(lambda r: r[0])
    assert _run(env, rekeyed) == sorted(f"+I[{n}, {v}]" for n, v in _NAMES)


class Concat(ReduceFunction):
    """Joins the names of a key; a ValueState counts the calls, which must match the length."""

    def open(self, runtime_context: RuntimeContext) -> None:
        self.calls = runtime_context.get_state(ValueStateDescriptor("calls", Types.INT()))

    def reduce(self, value1: Any, value2: Any) -> Any:
        calls = (self.calls.value() or 0) + 1
        self.calls.update(calls)
        joined = value1[0] + value2[0]
        assert len(joined) == calls + 1, (joined, calls)
        return Row(joined, value1[1])


@pytest.mark.streaming_target
def test_reduce_with_state(any_env: StreamExecutionEnvironment) -> None:
    ds = any_env.from_collection(
        [("x", 1), ("y", 2), ("z", 1), ("w", 2), ("q", 1)], Types.ROW([Types.STRING(), Types.INT()])
    )
    keyed = ds.key_by(BySecondField(), key_type=Types.INT())
    with pytest.raises(Exception, match="KeyedStream"):
        keyed.name("not for keyed streams")
    finals = ["+I[xzq, 1]", "+I[yw, 2]"]
    rolling = ["+I[x, 1]", "+I[xz, 1]", "+I[y, 2]"]
    assert _run(any_env, keyed.reduce(Concat())) == sorted(finals if _batch(any_env) else rolling + finals)


def test_reduce_with_a_lambda(any_env: StreamExecutionEnvironment) -> None:
    ds = any_env.from_collection(
        [(5, "a"), (1, "b"), (2, "a"), (7, "b"), (3, "a")], Types.ROW([Types.INT(), Types.STRING()])
    )
    out = ds.key_by(lambda r: r[1]).reduce(lambda x, y: Row(x[0] * y[0], y[1]))
    finals = ["+I[30, a]", "+I[7, b]"]
    rolling = ["+I[5, a]", "+I[10, a]", "+I[1, b]"]
    assert _run(any_env, out) == sorted(finals if _batch(any_env) else rolling + finals)


# Rolling aggregations. -------------------------------------------------------------------------


@pytest.mark.streaming_target
def test_rolling_sums_by_name_index_and_default(env: StreamExecutionEnvironment) -> None:
    env.set_parallelism(1)
    ds = env.from_collection(
        [(1, 10), (1, 20), (2, 5), (1, 1)], Types.ROW_NAMED(["k", "n"], [Types.INT(), Types.INT()])
    )
    out = (
        ds.key_by(lambda r: r[0])
        .sum("n")
        .key_by(lambda r: r[0])
        .sum(1)
        .map(lambda r: (r[1], r[0]), output_type=Types.TUPLE([Types.INT(), Types.INT()]))
        .key_by(lambda t: t[1])
        .sum()
    )
    # n per k: 10, 30, 31 | 5; summed again: 10, 40, 71 | 5; and again: 10, 50, 121 | 5.
    assert _run(env, out) == sorted(["(10,1)", "(50,1)", "(121,1)", "(5,2)"])


def test_sums_in_batch_mode_give_one_total_per_key() -> None:
    env = _make("local", RuntimeExecutionMode.BATCH)
    ds = env.from_collection(
        [(1, 10), (1, 20), (2, 5), (1, 1)], Types.ROW_NAMED(["k", "n"], [Types.INT(), Types.INT()])
    )
    totals = ds.key_by(lambda r: r[0]).sum("n")
    grand = (
        totals.map(lambda r: (7, r[1]), output_type=Types.TUPLE([Types.INT(), Types.INT()]))
        .key_by(lambda t: t[0])
        .sum(1)
    )
    first, last = _sinks(totals, grand)
    env.execute()
    assert sorted(first.get_results()) == ["+I[1, 31]", "+I[2, 5]"]
    assert last.get_results() == ["(7,36)"]


_TRIPLES = [("a", 3, 1), ("a", 1, 8), ("b", 5, 7), ("b", 2, 6)]


def _min_by_then_max(env: StreamExecutionEnvironment) -> tuple[Any, Any]:
    env.set_parallelism(1)
    ds = env.from_collection(
        _TRIPLES, Types.ROW_NAMED(["k", "p", "q"], [Types.STRING(), Types.INT(), Types.INT()])
    )
    maxed = (
        ds.key_by(lambda r: r[0])
        .min_by("p")
        .map(
            lambda r: (r[0], r[1], r[2]), output_type=Types.TUPLE([Types.STRING(), Types.INT(), Types.INT()])
        )
        .key_by(lambda t: t[0])
        .max(2)
    )
    best = maxed.map(lambda t: (t[2], t[0]), output_type=Types.TUPLE([Types.INT(), Types.STRING()]))
    return maxed, best.key_by(lambda t: 0).max_by(0)


def test_min_by_max_and_max_by(env: StreamExecutionEnvironment) -> None:
    maxed, best = _min_by_then_max(env)
    first, last = _sinks(maxed, best)
    env.execute()
    # min_by keeps whole elements: a (a,3,1) then (a,1,8). max(2) keeps the first element's other
    # fields and updates q: (a,3,1), (a,3,8).
    assert sorted(first.get_results()) == sorted(["(a,3,1)", "(a,3,8)", "(b,5,7)", "(b,5,7)"])
    # max_by(0) over (1,a) (8,a) (7,b) (7,b), in that order within the one key.
    assert sorted(last.get_results()) == sorted(["(1,a)", "(8,a)", "(8,a)", "(8,a)"])


def test_min_by_max_and_max_by_in_batch_mode() -> None:
    env = _make("local", RuntimeExecutionMode.BATCH)
    maxed, best = _min_by_then_max(env)
    first, last = _sinks(maxed, best)
    env.execute()
    assert sorted(first.get_results()) == ["(a,1,8)", "(b,2,6)"]
    assert last.get_results() == ["(8,a)"]


# Time: timestamps, watermarks and timers. ------------------------------------------------------


class Stamp(ProcessFunction):
    def process_element(self, value: Any, ctx: ProcessFunction.Context) -> Iterable[str]:
        yield f"{value[0]}@{ctx.timestamp()} wm {ctx.timer_service().current_watermark()}"


def test_process_function_sees_timestamps_and_no_watermark_yet(env: StreamExecutionEnvironment) -> None:
    env.set_parallelism(1)
    env.get_config().set_auto_watermark_interval(2000)
    ds = _stamped(
        env.from_collection(
            [(1, "5000"), (2, "7000"), (3, "6000")], Types.ROW([Types.INT(), Types.STRING()])
        ),
        1,
    )
    # The input is over before the first periodic watermark: every element sees Long.MIN_VALUE.
    assert _run(env, ds.process(Stamp(), output_type=Types.STRING())) == [
        f"{n}@{t} wm {MIN}" for n, t in [(1, 5000), (2, 7000), (3, 6000)]
    ]


class TimerPerKey(KeyedProcessFunction):
    def process_element(self, value: Any, ctx: KeyedProcessFunction.Context) -> Iterable[str]:
        ctx.timer_service().register_event_time_timer(ctx.timestamp() + 100)
        yield f"{ctx.get_current_key()}@{ctx.timestamp()} wm {ctx.timer_service().current_watermark()}"

    def on_timer(self, timestamp: int, ctx: KeyedProcessFunction.OnTimerContext) -> Iterable[str]:
        yield f"timer {ctx.get_current_key()} at {timestamp}"


@pytest.mark.streaming_target
def test_event_time_timers_fire_at_the_end_of_a_small_input(any_env: StreamExecutionEnvironment) -> None:
    any_env.set_parallelism(1)
    ds = _stamped(
        any_env.from_collection(
            [(1, "5000"), (2, "7000"), (1, "6000")], Types.ROW([Types.INT(), Types.STRING()])
        ),
        1,
    )
    out = ds.key_by(lambda r: r[0], key_type=Types.INT()).process(TimerPerKey(), output_type=Types.STRING())
    assert _run(any_env, out) == sorted(
        [
            f"1@5000 wm {MIN}",
            f"1@6000 wm {MIN}",
            f"2@7000 wm {MIN}",
            "timer 1 at 5100",
            "timer 1 at 6100",
            "timer 2 at 7100",
        ]
    )


class CountBoth(KeyedCoProcessFunction):
    """Counts a key's elements over both inputs; an element of the first input sets a timer."""

    def open(self, runtime_context: RuntimeContext) -> None:
        self.count = runtime_context.get_state(ValueStateDescriptor("count", Types.INT()))

    def _next(self) -> int:
        n = (self.count.value() or 0) + 1
        self.count.update(n)
        return n

    def process_element1(self, value: Any, ctx: KeyedCoProcessFunction.Context) -> Iterable[Any]:
        ctx.timer_service().register_event_time_timer(value[1] + 2)
        return [Row(value[0], self._next())]

    def process_element2(self, value: Any, ctx: KeyedCoProcessFunction.Context) -> Iterable[Any]:
        return [Row(value[0], self._next())]

    def on_timer(self, timestamp: int, ctx: KeyedCoProcessFunction.OnTimerContext) -> Iterable[Any]:
        return [Row("timer:" + ctx.get_current_key(), timestamp)]


@pytest.mark.streaming_target
def test_keyed_co_process_with_state_and_timers(any_env: StreamExecutionEnvironment) -> None:
    any_env.set_parallelism(1)
    pairs = Types.ROW([Types.STRING(), Types.INT()])
    left = _stamped(any_env.from_collection([("p", 1), ("q", 2), ("r", 5)], pairs), 1)
    right = _stamped(any_env.from_collection([("q", 3), ("r", 4), ("s", 6)], pairs), 1)
    out = left.connect(right).key_by(lambda r: r[0], lambda r: r[0]).process(CountBoth())
    assert _run(any_env, out, python=True) == sorted(
        str(Row(*v))
        for v in [
            ("p", 1),
            ("q", 1),
            ("q", 2),
            ("r", 1),
            ("r", 2),
            ("s", 1),
            ("timer:p", 3),
            ("timer:q", 4),
            ("timer:r", 7),
        ]
    )


# Connected streams. ----------------------------------------------------------------------------


class PlusMinus(CoFlatMapFunction):
    def flat_map1(self, value: int) -> Iterable[int]:
        yield value + 1

    def flat_map2(self, value: int) -> Iterable[int]:
        yield value - 10


def _helper_module(tmp: str) -> str:
    """A module the job imports from a file shipped with ``add_python_file``."""
    name = f"pfh_helper_{uuid.uuid4().hex}"
    folder = os.path.join(tmp, name)
    os.mkdir(folder)
    with open(os.path.join(folder, f"{name}.py"), "w") as f:
        f.write("def triple(a):\n    return a * 3\n")
    return os.path.join(folder, f"{name}.py")


def test_co_map_and_co_flat_map_with_a_shipped_module(
    any_env: StreamExecutionEnvironment, tmp_path: Any
) -> None:
    path = _helper_module(str(tmp_path))
    module = os.path.basename(path)[:-3]

    class TripleOrShift(CoMapFunction):
        def map1(self, value: int) -> int:
            return __import__(module).triple(value)

        def map2(self, value: int) -> int:
            return value + 100

    any_env.add_python_file(path)
    first = any_env.from_collection([1, 2, 3])
    second = first.map(lambda v: v + 10)
    out = first.connect(second).flat_map(PlusMinus()).connect(second).map(TripleOrShift())
    # flat_map: 2, 3, 4 and 1, 2, 3; map: tripled, and 111, 112, 113.
    assert _run(any_env, out, python=True) == sorted(str(v) for v in [6, 9, 12, 3, 6, 9, 111, 112, 113])


def test_co_functions_with_declared_output_types(env: StreamExecutionEnvironment) -> None:
    class Shift(CoMapFunction):
        def map1(self, value: int) -> int:
            return value * 2

        def map2(self, value: int) -> int:
            return value + 100

    first = env.from_collection([1, 2, 3])
    second = first.map(lambda v: v + 10)
    out = (
        first.connect(second)
        .flat_map(PlusMinus(), output_type=Types.INT())
        .connect(second)
        .map(Shift(), output_type=Types.INT())
    )
    assert _run(env, out) == sorted(str(v) for v in [4, 6, 8, 2, 4, 6, 111, 112, 113])


class PreviousPerInput(CoMapFunction):
    """Remembers the previous name of each input per key and checks the order within a key."""

    def open(self, runtime_context: RuntimeContext) -> None:
        self.prev = [
            runtime_context.get_state(ValueStateDescriptor(f"prev{i}", Types.STRING())) for i in (1, 2)
        ]

    def _check(self, i: int, value: Any) -> Any:
        expected = {"q": "p", "s": "r"}.get(value[0])
        if expected is not None:
            assert self.prev[i].value() == expected, (value, self.prev[i].value())
        self.prev[i].update(value[0])
        return value

    def map1(self, value: Any) -> Any:
        return self._check(0, value)

    def map2(self, value: Any) -> Any:
        return self._check(1, value)


@pytest.mark.streaming_target
def test_keyed_co_map_keeps_state_per_key_and_input(env: StreamExecutionEnvironment) -> None:
    names = [("p", 7), ("q", 7), ("r", 8), ("s", 8), ("t", 9)]
    rows = Types.ROW([Types.STRING(), Types.INT()])
    left = env.from_collection(names, rows).key_by(BySecondField(), key_type=Types.INT())
    right = env.from_collection(names, rows)
    out = (
        left.connect(right)
        .key_by(BySecondField(), BySecondField(), key_type=Types.INT())
        .map(PreviousPerInput())
    )
    out = out.map(lambda r: (r[0], r[1] * 2))
    assert _run(env, out, python=True) == sorted(2 * [f"('{n}', {v * 2})" for n, v in names])


class Distinct(CoFlatMapFunction):
    def open(self, runtime_context: RuntimeContext) -> None:
        self.seen = runtime_context.get_map_state(MapStateDescriptor("seen", Types.STRING(), Types.BOOLEAN()))

    def flat_map1(self, value: Any) -> Iterable[str]:
        yield str(value[0] * 2)
        yield str(value[0] * 2)

    def flat_map2(self, value: Any) -> Iterable[str]:
        if value[0] not in self.seen:
            self.seen[value[0]] = True
            yield value[0]


@pytest.mark.streaming_target
def test_keyed_co_flat_map_with_map_state(env: StreamExecutionEnvironment) -> None:
    numbers = env.from_collection([(5, 5), (6, 6)], Types.ROW([Types.INT(), Types.INT()]))
    words = env.from_collection(
        [("k", "k"), ("m", "m"), ("k", "k")], Types.ROW([Types.STRING(), Types.STRING()])
    )
    out = (
        numbers.connect(words)
        .key_by(lambda r: 0, lambda r: 0)
        .flat_map(Distinct(), output_type=Types.STRING())
    )
    assert _run(env, out.filter(lambda s: s != "12")) == ["10", "10", "k", "m"]


class ParityLabels(BroadcastProcessFunction):
    """Labels numbers by parity once the parity's label is broadcast; caches them until then."""

    def __init__(self, rules: MapStateDescriptor) -> None:
        self.rules = rules
        self.waiting: dict[int, list[int]] = defaultdict(list)

    def process_element(self, value: int, ctx: BroadcastProcessFunction.ReadOnlyContext) -> Iterable[str]:
        rules = ctx.get_broadcast_state(self.rules)
        if rules.contains(value % 2):
            yield f"{rules.get(value % 2)}:{value}"
        else:
            self.waiting[value % 2].append(value)

    def process_broadcast_element(self, value: Any, ctx: BroadcastProcessFunction.Context) -> Iterable[str]:
        yield f"rule {value[0]}={value[1]}"
        ctx.get_broadcast_state(self.rules).put(value[0], value[1])
        for v in self.waiting.pop(value[0], []):
            yield f"{value[1]}:{v}"


def test_broadcast_state(any_env: StreamExecutionEnvironment) -> None:
    rules = MapStateDescriptor("rules", key_type_info=Types.INT(), value_type_info=Types.STRING())
    numbers = any_env.from_collection([10, 11, 12, 13], Types.INT())
    labels = any_env.from_collection([(0, "even"), (1, "odd")], Types.TUPLE([Types.INT(), Types.STRING()]))
    out = numbers.connect(labels.broadcast(rules)).process(ParityLabels(rules), output_type=Types.STRING())
    # Every parallel instance (2) gets every broadcast element.
    assert _run(any_env, out) == sorted(
        ["even:10", "even:12", "odd:11", "odd:13", "rule 0=even", "rule 0=even", "rule 1=odd", "rule 1=odd"]
    )


class KeyedParityLabels(KeyedBroadcastProcessFunction):
    def __init__(self, rules: MapStateDescriptor) -> None:
        self.rules = rules

    def open(self, runtime_context: RuntimeContext) -> None:
        self.waiting: dict[int, list[Any]] = defaultdict(list)

    def process_element(
        self, value: Any, ctx: KeyedBroadcastProcessFunction.ReadOnlyContext
    ) -> Iterable[str]:
        rules = ctx.get_broadcast_state(self.rules)
        if rules.contains(value[0] % 2):
            yield f"{rules.get(value[0] % 2)}{value[0]}@{value[1]}"
        else:
            self.waiting[value[0] % 2].append(value)
        ctx.timer_service().register_event_time_timer(ctx.timestamp() + 500)

    def process_broadcast_element(
        self, value: Any, ctx: KeyedBroadcastProcessFunction.Context
    ) -> Iterable[str]:
        yield f"rule {value[0]}@{ctx.timestamp()}"
        ctx.get_broadcast_state(self.rules).put(value[0], value[2])
        for v in self.waiting.pop(value[0], []):
            yield f"{value[2]}{v[0]}@{v[1]}"

    def on_timer(self, timestamp: int, ctx: KeyedBroadcastProcessFunction.OnTimerContext) -> Iterable[str]:
        yield f"timer {ctx.get_current_key()} at {timestamp}"


def test_keyed_broadcast_state_with_timestamps_and_timers(any_env: StreamExecutionEnvironment) -> None:
    rules = MapStateDescriptor("rules", key_type_info=Types.INT(), value_type_info=Types.STRING())
    numbers = _stamped(
        any_env.from_collection(
            [(1, "1000"), (2, "2000"), (3, "3000")], Types.ROW([Types.INT(), Types.STRING()])
        ),
        1,
    )
    labels = _stamped(
        any_env.from_collection(
            [(0, "5000", "zero"), (1, "5000", "one")],
            Types.ROW([Types.INT(), Types.STRING(), Types.STRING()]),
        ),
        1,
    )
    out = (
        numbers.key_by(lambda r: r[0])
        .connect(labels.broadcast(rules))
        .process(KeyedParityLabels(rules), output_type=Types.STRING())
    )
    assert _run(any_env, out) == sorted(
        [
            "rule 0@5000",
            "rule 0@5000",
            "rule 1@5000",
            "rule 1@5000",
            "one1@1000",
            "zero2@2000",
            "one3@3000",
            "timer 1 at 1500",
            "timer 2 at 2500",
            "timer 3 at 3500",
        ]
    )


# Side outputs. ---------------------------------------------------------------------------------

_NUM = OutputTag("num", Types.INT())
_TEXT = OutputTag("text", Types.STRING())
_LETTERS = [("u", 5), ("v", 6), ("w", 7)]


class Split(ProcessFunction):
    def process_element(self, value: Any, ctx: ProcessFunction.Context) -> Iterable[Any]:
        yield value[0]
        yield _NUM, value[1] * 2
        yield _TEXT, f"{value[0]}{value[1]}"


def _letters(env: StreamExecutionEnvironment) -> DataStream[Any]:
    return env.from_collection(_LETTERS, Types.ROW([Types.STRING(), Types.INT()]))


def test_process_function_side_outputs(any_env: StreamExecutionEnvironment) -> None:
    split = _letters(any_env).process(Split(), output_type=Types.STRING())
    main, nums, texts = _sinks(split, split.get_side_output(_NUM), split.get_side_output(_TEXT))
    any_env.execute()
    assert sorted(main.get_results()) == ["u", "v", "w"]
    assert sorted(nums.get_results()) == ["10", "12", "14"]
    assert sorted(texts.get_results()) == ["u5", "v6", "w7"]


def test_side_output_of_a_step_chained_to_a_map(any_env: StreamExecutionEnvironment) -> None:
    split = (
        _letters(any_env).map(lambda r: (r[0].upper(), r[1] + 1)).process(Split(), output_type=Types.STRING())
    )
    main, nums = _sinks(split, split.get_side_output(_NUM))
    any_env.execute()
    assert sorted(main.get_results()) == ["U", "V", "W"]
    assert sorted(nums.get_results()) == ["12", "14", "16"]


class CoSplit(CoProcessFunction):
    def process_element1(self, value: Any, ctx: CoProcessFunction.Context) -> Iterable[Any]:
        yield value[0]
        yield _NUM, value[1]

    def process_element2(self, value: Any, ctx: CoProcessFunction.Context) -> Iterable[Any]:
        yield value[1].upper()
        yield _NUM, value[0] * 10


def test_co_process_function_side_output(any_env: StreamExecutionEnvironment) -> None:
    left = any_env.from_collection([("m", 1), ("n", 2)], Types.ROW([Types.STRING(), Types.INT()]))
    right = any_env.from_collection([(3, "o"), (4, "p")], Types.ROW([Types.INT(), Types.STRING()]))
    split = left.connect(right).process(CoSplit(), output_type=Types.STRING())
    main, nums = _sinks(split, split.get_side_output(_NUM))
    any_env.execute()
    assert sorted(main.get_results()) == ["O", "P", "m", "n"]
    assert sorted(nums.get_results()) == ["1", "2", "30", "40"]


class BroadcastSplit(BroadcastProcessFunction):
    def process_element(self, value: Any, ctx: Any) -> Iterable[Any]:
        yield value[0]
        yield _NUM, value[1]

    def process_broadcast_element(self, value: Any, ctx: Any) -> Iterable[Any]:
        yield value[1]
        yield _NUM, value[0]


@pytest.mark.streaming_target
def test_broadcast_process_function_side_output(any_env: StreamExecutionEnvironment) -> None:
    dummy = MapStateDescriptor("dummy", key_type_info=Types.INT(), value_type_info=Types.STRING())
    items = any_env.from_collection([("m", 1), ("n", 2)], Types.ROW([Types.STRING(), Types.INT()]))
    rules = any_env.from_collection([(7, "x")], Types.ROW([Types.INT(), Types.STRING()]))
    split = items.connect(rules.broadcast(dummy)).process(BroadcastSplit(), output_type=Types.STRING())
    main, nums = _sinks(split, split.get_side_output(_NUM))
    any_env.execute()
    assert sorted(main.get_results()) == ["m", "n", "x", "x"]
    assert sorted(nums.get_results()) == ["1", "2", "7", "7"]


class MaxSoFar(KeyedProcessFunction):
    def open(self, runtime_context: RuntimeContext) -> None:
        self.max = runtime_context.get_reducing_state(ReducingStateDescriptor("max", max, Types.INT()))

    def process_element(self, value: Any, ctx: KeyedProcessFunction.Context) -> Iterable[Any]:
        yield value[1]
        self.max.add(value[1])
        yield _NUM, self.max.get()


@pytest.mark.streaming_target
def test_keyed_process_function_side_output(any_env: StreamExecutionEnvironment) -> None:
    ds = any_env.from_collection(
        [("a", 2), ("b", 5), ("a", 4), ("b", 1)], Types.ROW([Types.STRING(), Types.INT()])
    )
    split = ds.key_by(lambda r: r[0]).process(MaxSoFar(), output_type=Types.INT())
    main, maxima = _sinks(split, split.get_side_output(_NUM))
    any_env.execute()
    assert sorted(main.get_results()) == ["1", "2", "4", "5"]
    assert sorted(maxima.get_results()) == ["2", "4", "5", "5"]


class CountPerKey(KeyedCoProcessFunction):
    def open(self, runtime_context: RuntimeContext) -> None:
        self.count = runtime_context.get_reducing_state(
            ReducingStateDescriptor("count", lambda a, b: a + b, Types.INT())
        )

    def _emit(self, key: str, n: int) -> Iterable[Any]:
        yield key, n
        self.count.add(1)
        yield _NUM, self.count.get()

    def process_element1(self, value: Any, ctx: KeyedCoProcessFunction.Context) -> Iterable[Any]:
        return self._emit(ctx.get_current_key(), value[1])

    def process_element2(self, value: Any, ctx: KeyedCoProcessFunction.Context) -> Iterable[Any]:
        return self._emit(ctx.get_current_key(), value[0])


def test_keyed_co_process_function_side_output(any_env: StreamExecutionEnvironment) -> None:
    left = any_env.from_collection([("a", 1), ("b", 2)], Types.ROW([Types.STRING(), Types.INT()]))
    right = any_env.from_collection([(3, "a"), (4, "b"), (5, "a")], Types.ROW([Types.INT(), Types.STRING()]))
    split = (
        left.key_by(lambda r: r[0])
        .connect(right.key_by(lambda r: r[1]))
        .process(CountPerKey(), output_type=Types.TUPLE([Types.STRING(), Types.INT()]))
    )
    main, counts = _sinks(split, split.get_side_output(_NUM))
    any_env.execute()
    assert sorted(main.get_results()) == ["(a,1)", "(a,3)", "(a,5)", "(b,2)", "(b,4)"]
    assert sorted(counts.get_results()) == ["1", "1", "2", "2", "3"]


class KeyedBroadcastSplit(KeyedBroadcastProcessFunction):
    def open(self, runtime_context: RuntimeContext) -> None:
        self.total = runtime_context.get_reducing_state(
            ReducingStateDescriptor("total", lambda a, b: a + b, Types.INT())
        )

    def process_element(self, value: Any, ctx: Any) -> Iterable[Any]:
        self.total.add(value[1])
        yield value[0]
        yield _NUM, self.total.get()

    def process_broadcast_element(self, value: Any, ctx: Any) -> Iterable[Any]:
        yield value[1]
        yield _NUM, value[0]


@pytest.mark.streaming_target
def test_keyed_broadcast_process_function_side_output(any_env: StreamExecutionEnvironment) -> None:
    dummy = MapStateDescriptor("dummy", key_type_info=Types.INT(), value_type_info=Types.STRING())
    items = any_env.from_collection([("a", 1), ("b", 2), ("a", 3)], Types.ROW([Types.STRING(), Types.INT()]))
    rules = any_env.from_collection([(9, "z")], Types.ROW([Types.INT(), Types.STRING()]))
    split = (
        items.key_by(lambda r: r[0])
        .connect(rules.broadcast(dummy))
        .process(KeyedBroadcastSplit(), output_type=Types.STRING())
    )
    main, nums = _sinks(split, split.get_side_output(_NUM))
    any_env.execute()
    assert sorted(main.get_results()) == ["a", "a", "b", "z", "z"]
    assert sorted(nums.get_results()) == ["1", "2", "4", "9", "9"]


class Squares(ProcessFunction):
    def process_element(self, value: int, ctx: ProcessFunction.Context) -> Iterable[Any]:
        yield value
        yield _NUM, value * value


def test_a_side_output_collected_with_execute_and_collect(env: StreamExecutionEnvironment) -> None:
    squares = env.from_collection([2, 3], Types.INT()).process(Squares()).get_side_output(_NUM)
    assert sorted(squares.execute_and_collect()) == [4, 9]


def test_one_tag_used_by_two_steps(env: StreamExecutionEnvironment) -> None:
    first = env.from_collection([1, 2], Types.INT()).process(Squares())
    second = first.map(lambda v: v * 10).process(Squares())
    one, two = _sinks(first.get_side_output(_NUM), second.get_side_output(_NUM))
    env.execute()
    assert sorted(one.get_results(stringify=False)) == ["1", "4"]
    assert sorted(two.get_results(stringify=False)) == ["100", "400"]


# Metrics. --------------------------------------------------------------------------------------


class Measured(MapFunction):
    def open(self, runtime_context: RuntimeContext) -> None:
        group = runtime_context.get_metrics_group()
        self.counter = group.counter("seen")
        self.meter = group.meter("rate", 1)
        self.exposed = 0
        group.gauge("exposed", lambda: self.exposed)
        self.sizes = group.distribution("sizes")
        self.expected = 0

    def map(self, value: Any) -> Any:
        self.expected += 1
        self.counter.inc()
        assert self.counter.get_count() == self.expected
        self.meter.mark_event(1)
        assert self.meter.get_count() == self.expected
        self.exposed += 1
        self.sizes.update(int(value[2]))
        return Row(value[0], self.counter.get_count(), value[2])


def test_metrics_in_a_keyed_map(env: StreamExecutionEnvironment) -> None:
    env.set_parallelism(1)
    ds = env.from_collection(
        [
            ("one", "k", decimal.Decimal(3)),
            ("two", "k", decimal.Decimal(1)),
            ("six", "k", decimal.Decimal(6)),
        ],
        Types.TUPLE([Types.STRING(), Types.STRING(), Types.BIG_DEC()]),
    )
    out = ds.key_by(lambda v: v[1]).map(
        Measured(), output_type=Types.ROW([Types.STRING(), Types.INT(), Types.BIG_DEC()])
    )
    assert _run(env, out) == ["+I[one, 1, 3]", "+I[six, 3, 6]", "+I[two, 2, 1]"]


# The stream itself, collecting, errors. --------------------------------------------------------


def test_names_and_keyed_stream_partitioning(env: StreamExecutionEnvironment) -> None:
    ds = env.from_collection([(1, "x")]).name("readings")
    assert ds.get_name() == "readings"
    keyed = ds.key_by(lambda v: v[1])
    for repartition in (keyed.shuffle, keyed.rebalance, keyed.rescale, keyed.broadcast, keyed.forward):
        with pytest.raises(Exception, match="KeyedStream"):
            repartition()


def test_execute_and_collect(env: StreamExecutionEnvironment) -> None:
    words = ["alpha", "beta", "gamma", "delta"]
    assert list(env.from_collection(words).execute_and_collect(limit=2)) == ["alpha", "beta"]
    with env.from_collection(words, Types.STRING()).execute_and_collect() as results:
        assert list(results) == words
    pairs = [("x", 1), ("y", 2), ("x", 3)]
    keyed = env.from_collection(pairs, Types.TUPLE([Types.STRING(), Types.INT()])).key_by(
        lambda p: p[0], Types.STRING()
    )
    with keyed.execute_and_collect() as results:
        assert list(results) == [Row(f0=k, f1=(k, n)) for k, n in pairs]


def test_values_of_many_types_come_back_unchanged(env: StreamExecutionEnvironment) -> None:
    record = (
        3,
        None,
        True,
        -32768,
        2147483647,
        2.5,
        bytearray(b"\x00bytes"),
        "text",
        datetime.date(1999, 12, 31),
        datetime.time(hour=6, minute=30, second=1, microsecond=500000),
        datetime.datetime(2001, 2, 3, 4, 5, 6, 789000),
        [7, 8],
        [["a"], ["b", "c"]],
        decimal.Decimal("12345678901234567890.125"),
    )
    with env.from_collection([record]).map(lambda v: v).execute_and_collect() as results:
        assert list(results) == [record]
    arrays = [[1, 2, 3], [4]]
    with env.from_collection(arrays, Types.PRIMITIVE_ARRAY(Types.INT())).execute_and_collect() as results:
        assert sorted(results) == arrays
    objects = [(["p", None], [0.5]), ([], [1.5, 2.0])]
    typed = Types.TUPLE([Types.OBJECT_ARRAY(Types.STRING()), Types.OBJECT_ARRAY(Types.DOUBLE())])
    with env.from_collection(objects, typed).execute_and_collect() as results:
        assert sorted(results, key=str) == sorted(objects, key=str)


def test_an_error_in_a_function_names_the_step_key_and_record(env: StreamExecutionEnvironment) -> None:
    ds = env.from_collection([("a", 1), ("b", 2)], Types.ROW([Types.STRING(), Types.INT()]))

    def explode(value: Any) -> Iterable[Any]:
        raise ValueError(f"cannot split {value[0]}")
        yield value

    ds.key_by(BySecondField(), key_type=Types.INT()).flat_map(explode).print()
    with pytest.raises(StepError, match=r"cannot split [ab].*key [12]"):
        env.execute()


@pytest.mark.streaming_target
def test_the_union_of_keyed_streams_is_a_plain_stream(any_env: StreamExecutionEnvironment) -> None:
    left = any_env.from_collection([1, 2, 3]).key_by(lambda v: v % 2)
    right = any_env.from_collection([4, 5]).key_by(lambda v: v % 2)
    union = left.union(right)
    assert _run(any_env, union.map(lambda v: v * 10)) == ["10", "20", "30", "40", "50"]
