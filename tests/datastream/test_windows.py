"""PyFlink's window API, behaviour by behaviour, on both targets: event-time tumbling, sliding and
session windows (fixed and dynamic gaps, merging, a late element bridging two sessions), count
windows (tumbling and sliding), reduce / aggregate with and without a window function (and a
typed accumulator), custom triggers (purging event-time and count triggers on global windows),
the non-keyed ``window_all`` forms, late data to a side output, and a window chained to a map.

Results are read through ``DataStreamTestSinkFunction.get_results()`` (Flink's Java text). Every
test runs in-process and, marked ``spark``, on Spark with the same expectations.

fs-compat's own window tests (processing time with an injected clock, allowed lateness, evictors,
custom triggers with state, BATCH mode) are in ``test_windows_fs_compat.py``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest

from fs_compat.common import Configuration, Time, Types, WatermarkStrategy
from fs_compat.common.watermark_strategy import TimestampAssigner
from fs_compat.datastream import StreamExecutionEnvironment
from fs_compat.datastream.data_stream import DataStream
from fs_compat.datastream.functions import (
    AggregateFunction,
    ProcessAllWindowFunction,
    ProcessWindowFunction,
    WindowFunction,
)
from fs_compat.datastream.output_tag import OutputTag
from fs_compat.datastream.tests.test_util import DataStreamTestSinkFunction
from fs_compat.datastream.window import (
    CountSlidingWindowAssigner,
    CountTrigger,
    CountWindow,
    EventTimeSessionWindows,
    EventTimeTrigger,
    GlobalWindows,
    PurgingTrigger,
    SessionWindowTimeGapExtractor,
    SlidingEventTimeWindows,
    TimeWindow,
    TumblingEventTimeWindows,
)

_PAIR = Types.TUPLE([Types.STRING(), Types.INT()])
#: (key, window start, window end, number of elements)
_SPAN = Types.TUPLE([Types.STRING(), Types.LONG(), Types.LONG(), Types.INT()])


_SPARK = [pytest.mark.spark, pytest.mark.slow]


#: The spark-streaming case runs for tests marked ``streaming_target`` only (tests/conftest.py).
@pytest.fixture(
    params=[
        "local",
        pytest.param("spark", marks=_SPARK),
        pytest.param("spark-streaming", marks=_SPARK, id="streaming-target"),
    ]
)
def env(request: pytest.FixtureRequest) -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment(
        Configuration().set_string("execution.target", request.param)
    )
    env.set_parallelism(2)
    return env


class AtSecondField(TimestampAssigner):
    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return int(value[1])


def _stamped(
    env: StreamExecutionEnvironment, items: list[tuple[str, int]], strategy: WatermarkStrategy | None = None
) -> DataStream[Any]:
    """``(key, time)`` pairs with their time as event timestamp; watermarks as Flink's default
    (periodic: a small input gets its first one at its end) unless ``strategy`` says otherwise."""
    strategy = strategy or WatermarkStrategy.for_monotonous_timestamps()
    return env.from_collection(items, type_info=_PAIR).assign_timestamps_and_watermarks(
        strategy.with_timestamp_assigner(AtSecondField())
    )


def _run(env: StreamExecutionEnvironment, stream: DataStream[Any]) -> list[str]:
    sink = DataStreamTestSinkFunction()
    stream.add_sink(sink)
    env.execute()
    return sorted(sink.get_results())


class Span(ProcessWindowFunction[tuple, tuple, str, TimeWindow]):
    def process(
        self, key: str, context: ProcessWindowFunction.Context, elements: Iterable[tuple]
    ) -> Iterable[tuple]:
        window = context.window()
        return [(key, window.start, window.end, sum(1 for _ in elements))]


class SpanAll(ProcessAllWindowFunction[tuple, tuple, TimeWindow]):
    def process(
        self, context: ProcessAllWindowFunction.Context, elements: Iterable[tuple]
    ) -> Iterable[tuple]:
        window = context.window()
        return [(window.start, window.end, sum(1 for _ in elements))]


class SumFirstFields(WindowFunction[tuple, tuple, str, CountWindow]):
    def apply(self, key: str, window: CountWindow, inputs: Iterable[tuple]) -> Iterable[tuple]:
        return [(key, sum(i[0] for i in inputs))]


def _by_key(stream: DataStream[Any]) -> Any:
    return stream.key_by(lambda v: v[0], key_type=Types.STRING())


# Event-time windows. ---------------------------------------------------------------------------


@pytest.mark.streaming_target
def test_tumbling_event_time_windows(env: StreamExecutionEnvironment) -> None:
    items = [("x", 0), ("x", 2), ("y", 1), ("x", 4), ("x", 6), ("x", 7), ("y", 8), ("x", 13), ("x", 20)]
    windows = _by_key(_stamped(env, items)).window(TumblingEventTimeWindows.of(Time.milliseconds(6)))
    assert _run(env, windows.process(Span(), _SPAN)) == sorted(
        ["(x,0,6,3)", "(x,6,12,2)", "(x,12,18,1)", "(x,18,24,1)", "(y,0,6,1)", "(y,6,12,1)"]
    )


@pytest.mark.streaming_target
def test_sliding_event_time_windows(env: StreamExecutionEnvironment) -> None:
    # size 4, slide 2: every element is in two windows, starting at even times.
    items = [("x", 1), ("x", 3), ("x", 5), ("x", 10)]
    windows = _by_key(_stamped(env, items)).window(
        SlidingEventTimeWindows.of(Time.milliseconds(4), Time.milliseconds(2))
    )
    assert _run(env, windows.process(Span(), _SPAN)) == sorted(
        ["(x,-2,2,1)", "(x,0,4,2)", "(x,2,6,2)", "(x,4,8,1)", "(x,8,12,1)", "(x,10,14,1)"]
    )


@pytest.mark.streaming_target
def test_session_windows_merge_touching_sessions(env: StreamExecutionEnvironment) -> None:
    # gap 4: [1, 5) and [2, 6) merge; [6, 10) touches [1, 6) and joins it; 12 and 13 make
    # [12, 17); 20 is alone.
    items = [("x", 1), ("x", 2), ("x", 6), ("x", 12), ("x", 13), ("x", 20)]
    windows = _by_key(_stamped(env, items)).window(EventTimeSessionWindows.with_gap(Time.milliseconds(4)))
    assert _run(env, windows.process(Span(), _SPAN)) == sorted(["(x,1,10,3)", "(x,12,17,2)", "(x,20,24,1)"])


class GapByTime(SessionWindowTimeGapExtractor):
    """A short gap (2) early on, a long one (8) from time 10."""

    def extract(self, element: tuple) -> int:
        return 2 if element[1] < 10 else 8


def test_session_windows_with_a_dynamic_gap(env: StreamExecutionEnvironment) -> None:
    env.set_parallelism(1)
    items = [("x", 1), ("x", 2), ("x", 5), ("x", 11), ("x", 15)]
    windows = _by_key(_stamped(env, items)).window(EventTimeSessionWindows.with_dynamic_gap(GapByTime()))
    assert _run(env, windows.process(Span(), _SPAN)) == sorted(["(x,1,4,2)", "(x,5,7,1)", "(x,11,23,2)"])


@pytest.mark.parametrize(
    ("strategy", "expected"),
    [
        # Flink's periodic watermark comes after all three: 5 bridges [0, 6) and [10, 16).
        (WatermarkStrategy.for_monotonous_timestamps(), ["(x,0,16,3)"]),
        (WatermarkStrategy.no_watermarks(), ["(x,0,16,3)"]),
        # A watermark after every element: 10 moves it to 9, [0, 6) has fired before 5 arrives;
        # 5 is not late for its own session [5, 11), which merges with [10, 16).
        (
            WatermarkStrategy.for_monotonous_timestamps().with_per_element_watermarks(),
            ["(x,0,6,1)", "(x,5,16,2)"],
        ),
    ],
    ids=["periodic", "no-watermarks", "per-element"],
)
def test_a_late_element_bridges_two_sessions(
    env: StreamExecutionEnvironment, strategy: WatermarkStrategy, expected: list[str]
) -> None:
    items = [("x", 0), ("x", 10), ("x", 5)]
    windows = _by_key(_stamped(env, items, strategy)).window(
        EventTimeSessionWindows.with_gap(Time.milliseconds(6))
    )
    assert _run(env, windows.process(Span(), _SPAN)) == sorted(expected)


# Count windows. --------------------------------------------------------------------------------


@pytest.mark.streaming_target
def test_tumbling_count_windows_fire_when_full(env: StreamExecutionEnvironment) -> None:
    items = [(v, "p") for v in range(1, 8)] + [(10, "q"), (20, "q")]
    stream = env.from_collection(items, type_info=Types.TUPLE([Types.INT(), Types.STRING()]))
    counted = stream.key_by(lambda v: v[1], key_type=Types.STRING()).count_window(3)
    # p: [1, 2, 3] and [4, 5, 6]; 7 and q's two elements never fill a window.
    assert _run(env, counted.apply(SumFirstFields(), _PAIR)) == ["(p,15)", "(p,6)"]


def test_sliding_count_windows(env: StreamExecutionEnvironment) -> None:
    # Windows of 3 elements starting every 2 elements, each firing once full.
    items = [(v, "a") for v in range(1, 7)] + [(10, "b"), (20, "b"), (30, "b")]
    stream = env.from_collection(items, type_info=Types.TUPLE([Types.INT(), Types.STRING()]))
    counted = stream.key_by(lambda v: v[1], key_type=Types.STRING()).window(CountSlidingWindowAssigner(3, 2))
    assert _run(env, counted.apply(SumFirstFields(), _PAIR)) == sorted(["(a,6)", "(a,12)", "(b,60)"])


# Reduce and aggregate, on merging (session) windows. ------------------------------------------

_SESSIONS = [("a", 1), ("b", 2), ("a", 3), ("b", 7), ("b", 8), ("a", 9), ("a", 10)]
# gap 3: a: [1, 6) and [9, 13); b: [2, 5) and [7, 11).


def _sessions(env: StreamExecutionEnvironment) -> Any:
    return _by_key(_stamped(env, _SESSIONS)).window(EventTimeSessionWindows.with_gap(Time.milliseconds(3)))


def test_reduce(env: StreamExecutionEnvironment) -> None:
    summed = _sessions(env).reduce(lambda x, y: (y[0], x[1] + y[1]), output_type=_PAIR)
    assert _run(env, summed) == sorted(["(a,4)", "(a,19)", "(b,2)", "(b,15)"])


class Describe(ProcessWindowFunction):
    def process(
        self, key: str, context: ProcessWindowFunction.Context, elements: Iterable[Any]
    ) -> Iterable[str]:
        window = context.window()
        (result,) = list(elements)
        yield f"{key} [{window.start}, {window.end}): {result}"


@pytest.mark.streaming_target
def test_reduce_with_a_process_window_function(env: StreamExecutionEnvironment) -> None:
    described = _sessions(env).reduce(
        lambda x, y: (y[0], x[1] + y[1]), window_function=Describe(), output_type=Types.STRING()
    )
    assert _run(env, described) == sorted(
        ["a [1, 6): ('a', 4)", "a [9, 13): ('a', 19)", "b [2, 5): ('b', 2)", "b [7, 11): ('b', 15)"]
    )


class CountAndLatest(AggregateFunction):
    """(key, count, largest time); accumulators merge when sessions do."""

    def create_accumulator(self) -> list[Any]:
        return ["", 0, None]

    def add(self, value: tuple[str, int], accumulator: list[Any]) -> list[Any]:
        latest = value[1] if accumulator[2] is None else max(accumulator[2], value[1])
        return [value[0], accumulator[1] + 1, latest]

    def get_result(self, accumulator: list[Any]) -> tuple[str, int, int]:
        return accumulator[0], accumulator[1], accumulator[2]

    def merge(self, a: list[Any], b: list[Any]) -> list[Any]:
        latest = [t for t in (a[2], b[2]) if t is not None]
        return [a[0] or b[0], a[1] + b[1], max(latest) if latest else None]


def test_aggregate(env: StreamExecutionEnvironment) -> None:
    triples = Types.TUPLE([Types.STRING(), Types.INT(), Types.INT()])
    aggregated = _sessions(env).aggregate(CountAndLatest(), output_type=triples)
    assert _run(env, aggregated) == sorted(["(a,2,3)", "(a,2,10)", "(b,1,2)", "(b,2,8)"])


class TypedSum(AggregateFunction):
    """The accumulator is ``(sum, key)``, declared as ``Types.TUPLE([INT, STRING])``."""

    def create_accumulator(self) -> tuple[int, str]:
        return 0, ""

    def add(self, value: tuple[str, int], accumulator: tuple[int, str]) -> tuple[int, str]:
        return accumulator[0] + value[1], value[0]

    def get_result(self, accumulator: tuple[int, str]) -> tuple[str, int]:
        return accumulator[1], accumulator[0]

    def merge(self, a: tuple[int, str], b: tuple[int, str]) -> tuple[int, str]:
        return a[0] + b[0], a[1] or b[1]


def test_aggregate_with_a_declared_accumulator_type(env: StreamExecutionEnvironment) -> None:
    aggregated = _sessions(env).aggregate(
        TypedSum(), accumulator_type=Types.TUPLE([Types.INT(), Types.STRING()]), output_type=_PAIR
    )
    assert _run(env, aggregated) == sorted(["(a,4)", "(a,19)", "(b,2)", "(b,15)"])


@pytest.mark.streaming_target
def test_aggregate_with_a_process_window_function(env: StreamExecutionEnvironment) -> None:
    described = _sessions(env).aggregate(
        TypedSum(),
        window_function=Describe(),
        accumulator_type=Types.TUPLE([Types.INT(), Types.STRING()]),
        output_type=Types.STRING(),
    )
    assert _run(env, described) == sorted(
        ["a [1, 6): ('a', 4)", "a [9, 13): ('a', 19)", "b [2, 5): ('b', 2)", "b [7, 11): ('b', 15)"]
    )


# Triggers. -------------------------------------------------------------------------------------


def test_session_windows_with_a_purging_event_time_trigger(env: StreamExecutionEnvironment) -> None:
    items = [("x", 1), ("x", 2), ("x", 6), ("x", 7), ("x", 8), ("x", 15)]
    windows = (
        _by_key(_stamped(env, items))
        .window(EventTimeSessionWindows.with_gap(Time.milliseconds(2)))
        .trigger(PurgingTrigger.of(EventTimeTrigger.create()))
    )
    assert _run(env, windows.process(Span(), _SPAN)) == sorted(["(x,1,4,2)", "(x,6,10,3)", "(x,15,17,1)"])


class CountOnly(ProcessWindowFunction):
    def process(
        self, key: str, context: ProcessWindowFunction.Context, elements: Iterable[Any]
    ) -> Iterable[tuple]:
        return [(key, sum(1 for _ in elements))]


@pytest.mark.streaming_target
def test_global_windows_with_a_purging_count_trigger(env: StreamExecutionEnvironment) -> None:
    env.set_parallelism(1)
    items = [("x", t) for t in range(8)] + [("y", t) for t in range(3)]
    windows = (
        _by_key(_stamped(env, items))
        .window(GlobalWindows.create())
        .trigger(PurgingTrigger.of(CountTrigger.of(3)))
    )
    # Every third element of a key fires and empties its window; x's last two never fire.
    assert _run(env, windows.process(CountOnly(), _PAIR)) == ["(x,3)", "(x,3)", "(y,3)"]


# Non-keyed windows (window_all), parallelism 1 as Flink runs them. -----------------------------

_ALL = [("a", 1), ("b", 2), ("c", 8), ("a", 9), ("b", 20)]
# gap 3: [1, 5) holds a and b; [8, 12) c and a; [20, 23) b.


def test_tumbling_window_all(env: StreamExecutionEnvironment) -> None:
    items = [("a", 3), ("b", 8), ("a", 12), ("c", 15), ("b", 19), ("a", 31)]
    windows = _stamped(env, items).window_all(TumblingEventTimeWindows.of(Time.milliseconds(10)))
    spans = Types.TUPLE([Types.LONG(), Types.LONG(), Types.INT()])
    assert _run(env, windows.process(SpanAll(), spans)) == sorted(["(0,10,2)", "(10,20,3)", "(30,40,1)"])


def _all_sessions(env: StreamExecutionEnvironment) -> Any:
    env.set_parallelism(1)
    return _stamped(env, _ALL).window_all(EventTimeSessionWindows.with_gap(Time.milliseconds(3)))


def test_window_all_reduce(env: StreamExecutionEnvironment) -> None:
    joined = _all_sessions(env).reduce(lambda x, y: (x[0] + y[0], x[1] + y[1]), output_type=_PAIR)
    assert _run(env, joined) == sorted(["(ab,3)", "(ca,17)", "(b,20)"])


class DescribeAll(ProcessAllWindowFunction):
    def process(self, context: ProcessAllWindowFunction.Context, elements: Iterable[Any]) -> Iterable[str]:
        window = context.window()
        (result,) = list(elements)
        yield f"[{window.start}, {window.end}): {result}"


def test_window_all_reduce_with_a_process_function(env: StreamExecutionEnvironment) -> None:
    described = _all_sessions(env).reduce(
        lambda x, y: (x[0] + y[0], x[1] + y[1]), window_function=DescribeAll(), output_type=Types.STRING()
    )
    assert _run(env, described) == sorted(["[1, 5): ('ab', 3)", "[8, 12): ('ca', 17)", "[20, 23): ('b', 20)"])


class SortedKeys(AggregateFunction):
    def create_accumulator(self) -> list[str]:
        return []

    def add(self, value: tuple[str, int], accumulator: list[str]) -> list[str]:
        return [*accumulator, value[0]]

    def get_result(self, accumulator: list[str]) -> str:
        return "".join(sorted(accumulator))

    def merge(self, a: list[str], b: list[str]) -> list[str]:
        return a + b


def test_window_all_aggregate(env: StreamExecutionEnvironment) -> None:
    aggregated = _all_sessions(env).aggregate(SortedKeys(), output_type=Types.STRING())
    assert _run(env, aggregated) == ["ab", "ac", "b"]


def test_window_all_aggregate_with_a_process_function(env: StreamExecutionEnvironment) -> None:
    described = _all_sessions(env).aggregate(
        SortedKeys(), window_function=DescribeAll(), output_type=Types.STRING()
    )
    assert _run(env, described) == sorted(["[1, 5): ab", "[8, 12): ac", "[20, 23): b"])


# Late data and chaining. -----------------------------------------------------------------------


def test_late_elements_go_to_the_side_output(env: StreamExecutionEnvironment) -> None:
    env.set_parallelism(1)
    rows = Types.ROW([Types.STRING(), Types.INT()])
    late = OutputTag("too-late", type_info=rows)
    strategy = (
        WatermarkStrategy.for_monotonous_timestamps()
        .with_timestamp_assigner(AtSecondField())
        .with_per_element_watermarks()
    )
    items = [("k", 2), ("k", 14), ("k", 7), ("k", 12)]
    windows = (
        env.from_collection(items, type_info=rows)
        .assign_timestamps_and_watermarks(strategy)
        .key_by(lambda r: r[0])
        .window(TumblingEventTimeWindows.of(Time.milliseconds(10)))
        .allowed_lateness(0)
        .side_output_late_data(late)
        .process(Span(), _SPAN)
    )
    side = DataStreamTestSinkFunction()
    windows.get_side_output(late).add_sink(side)
    # 14 moves the watermark to 13: [0, 10) fires, and 7 comes too late for it.
    assert _run(env, windows) == ["(k,0,10,1)", "(k,10,20,2)"]
    assert side.get_results() == ["+I[k, 7]"]


class AtFirstField(TimestampAssigner):
    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return int(value[0])


@pytest.mark.streaming_target
def test_a_window_keyed_by_a_tuple_chained_to_a_map(env: StreamExecutionEnvironment) -> None:
    minute = 60_000
    visits = [
        (0, "ann", "home", 1),
        (10, "ann", "home", 1),
        (20, "ann", "cart", 1),
        (30, "bob", "home", 1),
        (minute + 5, "ann", "home", 1),
        (minute + 9, "bob", "home", 1),
    ]
    stream = env.from_collection(visits).assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(AtFirstField())
    )
    per_minute = (
        stream.key_by(lambda v: (v[0] // minute, v[1], v[2]))
        .window(TumblingEventTimeWindows.of(Time.minutes(1)))
        .reduce(
            lambda x, y: (x[0], x[1], x[2], x[3] + y[3]),
            output_type=Types.TUPLE([Types.LONG(), Types.STRING(), Types.STRING(), Types.INT()]),
        )
        .map(
            lambda v: (v[0] // minute, f"{v[1]}/{v[2]}", v[3]),
            output_type=Types.TUPLE([Types.LONG(), Types.STRING(), Types.INT()]),
        )
    )
    assert _run(env, per_minute) == sorted(
        ["(0,ann/home,2)", "(0,ann/cart,1)", "(0,bob/home,1)", "(1,ann/home,1)", "(1,bob/home,1)"]
    )
