"""Windows beyond PyFlink's own window tests: processing time with an injected clock, allowed
lateness, evictors, triggers, per-window state, BATCH mode, errors, and the state of closed
windows being gone (counted in the keyed state backend's stores)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from fs_compat.common import Duration, Time, Types, WatermarkStrategy
from fs_compat.common.watermark_strategy import TimestampAssigner
from fs_compat.datastream import (
    AggregateFunction,
    RuntimeExecutionMode,
    StreamExecutionEnvironment,
)
from fs_compat.datastream.functions import (
    AllWindowFunction,
    KeyedStateStore,
    ProcessWindowFunction,
    RuntimeContext,
    WindowFunction,
)
from fs_compat.datastream.output_tag import OutputTag
from fs_compat.datastream.state import ReducingStateDescriptor, ValueStateDescriptor
from fs_compat.datastream.window import (
    ContinuousEventTimeTrigger,
    CountEvictor,
    CountTrigger,
    CountWindow,
    DeltaEvictor,
    EventTimeSessionWindows,
    EventTimeTrigger,
    GlobalWindow,
    GlobalWindows,
    ProcessingTimeSessionWindows,
    SlidingEventTimeWindows,
    SlidingProcessingTimeWindows,
    TimeEvictor,
    TimeWindow,
    Trigger,
    TriggerResult,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
)
from fs_compat.runtime import LocalConfig, StepError, SubtaskRunner


def _env(mode: RuntimeExecutionMode = RuntimeExecutionMode.STREAMING) -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_runtime_mode(mode)
    env.set_parallelism(2)
    return env


class _Second(TimestampAssigner):
    def extract_timestamp(self, value: Any, record_timestamp: int | None) -> int:
        return int(value[1])


def _timed(env: StreamExecutionEnvironment, items: list[tuple[str, int]], per_element: bool = False) -> Any:
    """``items`` with their second field as timestamp. Flink's watermarks are periodic (every
    200 ms of processing time), so a small input sees its first watermark at its end; lateness
    needs watermarks between the records: ``per_element`` emits one after every record (Flink's
    ``PerElementWatermarkGenerator``, as PyFlink's own lateness test uses)."""
    ws = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(_Second())
    if per_element:
        ws = ws.with_per_element_watermarks()
    return env.from_collection(items).assign_timestamps_and_watermarks(ws)


class Describe(ProcessWindowFunction):
    """(key, start, end, sorted second fields) of a TimeWindow."""

    def process(self, key: Any, context: Any, elements: Iterable[Any]) -> Iterable[Any]:
        window = context.window()
        yield (key, window.start, window.end, sorted(e[1] for e in elements))


# Processing time, with a clock the job itself advances (no sleeping). ----------------------------

_CLOCK = [0]


def _now() -> int:
    return _CLOCK[0]


def _tick(value: tuple[str, int]) -> tuple[str, int]:
    """Processing time becomes the record's second field when the record passes."""
    _CLOCK[0] = value[1]
    return value


def _processing_job(assigner: Any, items: list[tuple[str, int]]) -> list[Any]:
    _CLOCK[0] = 0
    env = _env()
    env.set_parallelism(1)
    env.set_processing_time_clock(_now)
    ds = env.from_collection(items).map(_tick).key_by(lambda v: v[0]).window(assigner).process(Describe())
    return list(ds.execute_and_collect())


def test_tumbling_processing_time_windows_fire_when_the_clock_passes_their_end() -> None:
    out = _processing_job(
        TumblingProcessingTimeWindows.of(Time.milliseconds(10)),
        [("a", 1), ("a", 5), ("b", 7), ("a", 12), ("b", 25), ("a", 31)],
    )
    # [30, 40) of "a" is still open when the input ends: processing-time timers do not fire at
    # the end of a bounded input (as in Flink).
    assert sorted(out) == [("a", 0, 10, [1, 5]), ("a", 10, 20, [12]), ("b", 0, 10, [7]), ("b", 20, 30, [25])]


def test_sliding_processing_time_windows() -> None:
    out = _processing_job(
        SlidingProcessingTimeWindows.of(Time.milliseconds(10), Time.milliseconds(5)),
        [("a", 1), ("a", 6), ("a", 30)],
    )
    assert sorted(out) == [("a", -5, 5, [1]), ("a", 0, 10, [1, 6]), ("a", 5, 15, [6])]


def test_processing_time_session_closes_before_a_later_element_can_join_it() -> None:
    # At processing time 8 the session [1, 8) is over (its timer was due at 7): the element of 8
    # starts a new session, as in Flink, although the two windows touch.
    out = _processing_job(
        ProcessingTimeSessionWindows.with_gap(Time.milliseconds(5)),
        [("a", 1), ("a", 3), ("a", 8), ("a", 20), ("a", 21)],
    )
    assert sorted(out) == [("a", 1, 8, [1, 3]), ("a", 8, 13, [8])]


# Event time: lateness, triggers, evictors. ---------------------------------------------------


def test_allowed_lateness_refires_then_drops_to_the_side_output() -> None:
    env = _env()
    env.set_parallelism(1)
    late = OutputTag("late")
    items = [("a", 1), ("a", 2), ("a", 6), ("a", 3), ("a", 9), ("a", 4)]
    windowed = (
        _timed(env, items, per_element=True)
        .key_by(lambda v: v[0])
        .window(TumblingEventTimeWindows.of(Time.milliseconds(5)))
        .allowed_lateness(3)
        .side_output_late_data(late)
        .process(Describe())
    )
    dropped = windowed.get_side_output(late)
    main: list[Any] = []
    side: list[Any] = []
    windowed.add_sink(_Append(main))
    dropped.add_sink(_Append(side))
    env.execute()
    # (a,3) arrives at watermark 5, within the lateness: [0, 5) fires again with it. (a,4) arrives
    # at watermark 8 >= 4 + 3: too late, to the side output.
    assert main == [("a", 0, 5, [1, 2]), ("a", 0, 5, [1, 2, 3]), ("a", 5, 10, [6, 9])]
    assert side == [("a", 4)]


class _Append:
    def __init__(self, out: list[Any]) -> None:
        self.out = out

    def invoke(self, value: Any) -> None:
        self.out.append(value)


def test_late_elements_without_a_side_output_are_dropped_and_counted() -> None:
    env = _env()
    items = [("a", 1), ("a", 9), ("a", 2)]
    out = (
        _timed(env, items, per_element=True)
        .key_by(lambda v: v[0])
        .window(TumblingEventTimeWindows.of(Time.milliseconds(5)))
        .process(Describe())
        .execute_and_collect()
    )
    assert sorted(out) == [("a", 0, 5, [1]), ("a", 5, 10, [9])]


def _continuous(per_element: bool) -> list[Any]:
    env = _env()
    items = [("a", 0), ("a", 3), ("a", 6), ("a", 11), ("a", 25)]
    return list(
        _timed(env, items, per_element)
        .key_by(lambda v: v[0])
        .window(TumblingEventTimeWindows.of(Time.milliseconds(20)))
        .trigger(ContinuousEventTimeTrigger.of(Time.milliseconds(5)))
        .process(Describe())
        .execute_and_collect()
    )


def test_continuous_event_time_trigger_fires_early() -> None:
    # Flink's output: the input is over before the first periodic watermark, so at its end the
    # watermark passes 5, 10, 15 and the end (19) of [0, 20), each firing with all four
    # elements, then 30, 35 and the end of [20, 40).
    assert _continuous(per_element=False) == [
        ("a", 0, 20, [0, 3, 6, 11]),
        ("a", 0, 20, [0, 3, 6, 11]),
        ("a", 0, 20, [0, 3, 6, 11]),
        ("a", 0, 20, [0, 3, 6, 11]),
        ("a", 20, 40, [25]),
        ("a", 20, 40, [25]),
        ("a", 20, 40, [25]),
    ]


def test_continuous_event_time_trigger_with_a_watermark_per_element() -> None:
    # Early firings every 5 ms of event time (the watermark of 6 reaches 5, of 11 reaches 10, of
    # 25 passes 15 and the end), then at the window's end; at the end of input the watermark
    # passes 30, 35 and the end of [20, 40).
    assert _continuous(per_element=True) == [
        ("a", 0, 20, [0, 3, 6]),
        ("a", 0, 20, [0, 3, 6, 11]),
        ("a", 0, 20, [0, 3, 6, 11]),
        ("a", 0, 20, [0, 3, 6, 11]),
        ("a", 20, 40, [25]),
        ("a", 20, 40, [25]),
        ("a", 20, 40, [25]),
    ]


class _FiresOnBang(Trigger[Any, Any]):
    """Fires (and purges) when an element's text is '!'."""

    def on_element(self, element: Any, timestamp: int, window: Any, ctx: Any) -> TriggerResult:
        return TriggerResult.FIRE_AND_PURGE if element[0] == "!" else TriggerResult.CONTINUE

    def on_processing_time(self, time: int, window: Any, ctx: Any) -> TriggerResult:
        return TriggerResult.CONTINUE

    def on_event_time(self, time: int, window: Any, ctx: Any) -> TriggerResult:
        return TriggerResult.CONTINUE

    def on_merge(self, window: Any, ctx: Any) -> None:
        pass

    def clear(self, window: Any, ctx: Any) -> None:
        pass


class _Texts(WindowFunction):
    def apply(self, key: Any, window: Any, inputs: Iterable[Any]) -> Iterable[Any]:
        return ["".join(v[0] for v in inputs)]


def test_custom_trigger_on_global_windows() -> None:
    env = _env()
    items = [("a", 1), ("b", 2), ("!", 3), ("c", 4), ("!", 5), ("d", 6)]
    out = (
        env.from_collection(items)
        .key_by(lambda v: "k")
        .window(GlobalWindows.create())
        .trigger(_FiresOnBang())
        .apply(_Texts())
        .execute_and_collect()
    )
    assert list(out) == ["ab!", "c!"]


def test_count_evictor_keeps_the_last_elements() -> None:
    env = _env()
    items = [(str(i), i) for i in range(1, 8)]
    out = (
        env.from_collection(items)
        .key_by(lambda v: "k")
        .window(GlobalWindows.create())
        .trigger(CountTrigger.of(3))
        .evictor(CountEvictor.of(2))
        .apply(_Texts())
        .execute_and_collect()
    )
    # Fires at the 3rd and the 6th element; each time only the last 2 elements remain (and stay
    # in the window: the second firing sees 2, 3, 4, 5, 6 and keeps 5, 6).
    assert list(out) == ["23", "56"]


def test_time_evictor_with_reduce() -> None:
    env = _env()
    items = [("a", 1), ("a", 2), ("a", 7), ("a", 8), ("a", 30)]
    out = (
        _timed(env, items)
        .key_by(lambda v: v[0])
        .window(TumblingEventTimeWindows.of(Time.milliseconds(10)))
        .evictor(TimeEvictor.of(Duration.of_millis(3)))
        .reduce(lambda a, b: (a[0], a[1] + b[1]))
        .execute_and_collect()
    )
    # [0, 10): only elements newer than 8 - 3 = 5 are kept: 7 + 8.
    assert list(out) == [("a", 15), ("a", 30)]


def test_delta_evictor_after_the_function() -> None:
    env = _env()
    items = [("a", 1), ("a", 2), ("a", 9), ("a", 10)]
    out = (
        env.from_collection(items)
        .key_by(lambda v: v[0])
        .window(GlobalWindows.create())
        .trigger(CountTrigger.of(2))
        .evictor(DeltaEvictor.of(5, lambda old, new: new[1] - old[1], do_evict_after=True))
        .apply(_Texts2())
        .execute_and_collect()
    )
    # After the second firing, 1 and 2 (9 - x >= 5) are evicted; 9, 10 remain.
    assert list(out) == [[1, 2], [1, 2, 9, 10]]


class _Texts2(WindowFunction):
    def apply(self, key: Any, window: Any, inputs: Iterable[Any]) -> Iterable[Any]:
        return [[v[1] for v in inputs]]


class _Average(AggregateFunction):
    def create_accumulator(self) -> tuple[int, int]:
        return 0, 0

    def add(self, value: Any, accumulator: tuple[int, int]) -> tuple[int, int]:
        return accumulator[0] + value[1], accumulator[1] + 1

    def get_result(self, accumulator: tuple[int, int]) -> float:
        return accumulator[0] / accumulator[1]

    def merge(self, acc_a: tuple[int, int], acc_b: tuple[int, int]) -> tuple[int, int]:
        return acc_a[0] + acc_b[0], acc_a[1] + acc_b[1]


def test_aggregate_over_sliding_windows_with_a_window_function() -> None:
    class WithWindow(WindowFunction):
        def apply(self, key: Any, window: Any, inputs: Iterable[Any]) -> Iterable[Any]:
            yield (key, window.start, next(iter(inputs)))

    env = _env()
    out = (
        _timed(env, [("a", 1), ("a", 3), ("b", 4), ("a", 6)])
        .key_by(lambda v: v[0])
        .window(SlidingEventTimeWindows.of(Time.milliseconds(4), Time.milliseconds(2)))
        .aggregate(_Average(), window_function=WithWindow(), accumulator_type=[Types.LONG(), Types.LONG()])
        .execute_and_collect()
    )
    assert sorted(out) == [
        ("a", -2, 1.0),
        ("a", 0, 2.0),
        ("a", 2, 3.0),
        ("a", 4, 6.0),
        ("a", 6, 6.0),
        ("b", 2, 4.0),
        ("b", 4, 4.0),
    ]


# Per-window and per-key state of a ProcessWindowFunction. -------------------------------------


class CountFirings(ProcessWindowFunction):
    """How often this window fired (window state) and how often any window of the key fired
    (global state); the window's count is dropped when the window expires."""

    def __init__(self) -> None:
        self.per_window = ValueStateDescriptor("firings", Types.INT())
        self.per_key = ValueStateDescriptor("all-firings", Types.INT())

    def process(self, key: Any, context: Any, elements: Iterable[Any]) -> Iterable[Any]:
        assert isinstance(context.window_state(), KeyedStateStore)
        assert isinstance(context.global_state(), KeyedStateStore)
        mine = context.window_state().get_state(self.per_window)
        total = context.global_state().get_state(self.per_key)
        mine.update((mine.value() or 0) + 1)
        total.update((total.value() or 0) + 1)
        yield (key, context.window().start, mine.value(), total.value())

    def clear(self, context: Any) -> None:
        context.window_state().get_state(self.per_window).clear()


def test_window_state_and_global_state() -> None:
    env = _env()
    env.set_parallelism(1)
    items = [("a", 1), ("a", 6), ("a", 2), ("a", 3), ("a", 12)]
    out = (
        _timed(env, items, per_element=True)
        .key_by(lambda v: v[0])
        .window(TumblingEventTimeWindows.of(Time.milliseconds(5)))
        .allowed_lateness(10)
        .process(CountFirings())
        .execute_and_collect()
    )
    assert list(out) == [
        ("a", 0, 1, 1),  # watermark 5: [0, 5) fires
        ("a", 0, 2, 2),  # (a,2) is late but allowed: fires again
        ("a", 0, 3, 3),  # (a,3) likewise
        ("a", 5, 1, 4),  # watermark 11: [5, 10) fires
        ("a", 10, 1, 5),  # end of input
    ]


def test_window_state_is_refused_with_merging_windows() -> None:
    env = _env()
    job = (
        _timed(env, [("a", 1)])
        .key_by(lambda v: v[0])
        .window(EventTimeSessionWindows.with_gap(Time.milliseconds(5)))
        .process(CountFirings())
    )
    with pytest.raises(StepError, match="Per-window state is not allowed when using merging windows"):
        job.execute_and_collect()


class _SumPerKey(AllWindowFunction):
    def apply(self, window: Any, inputs: Iterable[Any]) -> Iterable[Any]:
        yield sum(v[1] for v in inputs)


def test_count_window_all() -> None:
    env = _env()
    items = [("a", i) for i in range(1, 8)]
    assert list(env.from_collection(items).count_window_all(3).apply(_SumPerKey()).execute_and_collect()) == [
        6,
        15,
    ]
    sliding = env.from_collection(items).count_window_all(3, 2).apply(_SumPerKey()).execute_and_collect()
    assert list(sliding) == [6, 12, 18]


def test_batch_mode_gives_the_final_windows() -> None:
    env = _env(RuntimeExecutionMode.BATCH)
    items = [("a", 1), ("b", 2), ("a", 3), ("a", 7), ("b", 12)]
    out = (
        _timed(env, items)
        .key_by(lambda v: v[0])
        .window(TumblingEventTimeWindows.of(Time.milliseconds(5)))
        .process(Describe())
        .execute_and_collect()
    )
    assert sorted(out) == [("a", 0, 5, [1, 3]), ("a", 5, 10, [7]), ("b", 0, 5, [2]), ("b", 10, 15, [12])]


def test_batch_mode_session_windows() -> None:
    env = _env(RuntimeExecutionMode.BATCH)
    items = [("a", 1), ("a", 3), ("a", 20), ("a", 2)]
    out = (
        _timed(env, items)
        .key_by(lambda v: v[0])
        .window(EventTimeSessionWindows.with_gap(Time.milliseconds(5)))
        .process(Describe())
        .execute_and_collect()
    )
    assert sorted(out) == [("a", 1, 8, [1, 2, 3]), ("a", 20, 25, [20])]


# Errors name what was wrong. -------------------------------------------------------------------


def test_event_time_windows_need_timestamps() -> None:
    env = _env()
    job = (
        env.from_collection([("a", 1)])
        .key_by(lambda v: v[0])
        .window(TumblingEventTimeWindows.of(Time.seconds(1)))
    )
    with pytest.raises(StepError, match=r"forget to call 'data_stream.assign_timestamps_and_watermarks"):
        job.reduce(lambda a, b: a).execute_and_collect()


def test_argument_errors() -> None:
    keyed = _env().from_collection([1]).key_by(lambda v: v)
    with pytest.raises(TypeError, match="Time"):
        TumblingEventTimeWindows.of(5)
    with pytest.raises(ValueError, match="abs\\(offset\\) < size"):
        TumblingEventTimeWindows.of(Time.seconds(1), Time.seconds(2))
    with pytest.raises(ValueError, match="window size must be a positive int"):
        keyed.count_window(0)
    with pytest.raises(TypeError, match="does not support merging"):
        keyed.window(EventTimeSessionWindows.with_gap(Time.seconds(1))).trigger(_FiresOnBang())
    with pytest.raises(
        TypeError, match="window_function should be a WindowFunction or ProcessWindowFunction"
    ):
        keyed.window(GlobalWindows.create()).reduce(lambda a, b: a, window_function=_SumPerKey())
    with pytest.raises(TypeError, match="AggregateFunction"):
        keyed.window(GlobalWindows.create()).aggregate(lambda a, b: a)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="allowed lateness"):
        keyed.window(GlobalWindows.create()).allowed_lateness(-1)
    with pytest.raises(TypeError, match="WindowAssigner"):
        keyed.window(None)  # type: ignore[arg-type]


# Window classes. ---------------------------------------------------------------------------------


def test_time_window_methods() -> None:
    w = TimeWindow(0, 5)
    assert w.max_timestamp() == 4
    assert w.intersects(TimeWindow(5, 8)) and not w.intersects(TimeWindow(6, 8))
    assert w.cover(TimeWindow(3, 9)) == TimeWindow(0, 9)
    assert TimeWindow.get_window_start_with_offset(-3, 0, 5) == -5
    assert TimeWindow.get_window_start_with_offset(7, 1, 5) == 6
    assert sorted([TimeWindow(2, 3), TimeWindow(0, 9), TimeWindow(0, 1)]) == [
        TimeWindow(0, 1),
        TimeWindow(0, 9),
        TimeWindow(2, 3),
    ]
    merged: list[Any] = []

    class Collect:
        def merge(self, to_be_merged: Any, merge_result: Any) -> None:
            merged.append((sorted(to_be_merged), merge_result))

    TimeWindow.merge_windows([TimeWindow(0, 3), TimeWindow(10, 12), TimeWindow(2, 5)], Collect())  # type: ignore[arg-type]
    assert merged == [([TimeWindow(0, 3), TimeWindow(2, 5)], TimeWindow(0, 5))]
    assert {CountWindow(1), CountWindow(1), GlobalWindow.get(), GlobalWindow()} == {
        CountWindow(1),
        GlobalWindow(),
    }
    assert (
        repr(TimeWindow(1, 2)) == "TimeWindow(start=1, end=2)" and repr(CountWindow(3)) == "CountWindow(id=3)"
    )
    assert TriggerResult.FIRE_AND_PURGE.is_fire() and TriggerResult.FIRE_AND_PURGE.is_purge()
    assert isinstance(EventTimeTrigger.create(), Trigger)


def test_runtime_context_is_a_keyed_state_store() -> None:
    assert issubclass(RuntimeContext, KeyedStateStore)


# State of closed windows is gone. -------------------------------------------------------------


def _entries(runner: SubtaskRunner, ignore: tuple[str, ...] = ()) -> int:
    """How many entries the keyed state backend holds (except in the ``ignore`` states)."""
    backend = runner.runtime.backend
    backend.flush()
    return sum(len(store) for name, store in backend.stores.items() if name not in ignore)


def _runner(windowed: Any) -> SubtaskRunner:
    return SubtaskRunner(windowed._node, 0, LocalConfig(), [1], tags=["late"])


def _keyed(env: StreamExecutionEnvironment) -> Any:
    ws = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(_Second())
    return env.from_collection([]).assign_timestamps_and_watermarks(ws).key_by(lambda v: v[0])


@pytest.mark.parametrize(
    "make",
    [
        lambda k: k.window(TumblingEventTimeWindows.of(Time.milliseconds(10))).allowed_lateness(5),
        lambda k: k.window(SlidingEventTimeWindows.of(Time.milliseconds(10), Time.milliseconds(5))),
        lambda k: k.window(EventTimeSessionWindows.with_gap(Time.milliseconds(3))).allowed_lateness(2),
    ],
    ids=["tumbling", "sliding", "session"],
)
@pytest.mark.parametrize("function", ["process", "reduce", "aggregate", "window_state"])
def test_state_of_closed_windows_is_gone(make: Any, function: str) -> None:
    env = _env()
    windowed = make(_keyed(env)).side_output_late_data(OutputTag("late"))
    if function == "process":
        ds = windowed.process(Describe())
    elif function == "reduce":
        ds = windowed.reduce(lambda a, b: (a[0], a[1] + b[1]))
    elif function == "aggregate":
        ds = windowed.aggregate(_Average())
    elif isinstance(windowed._window_assigner, EventTimeSessionWindows):
        ds = windowed.trigger(CountingEventTimeTrigger()).process(Describe())
    else:
        ds = windowed.process(CountFirings())
    runner = _runner(ds)
    assert _entries(runner) == 0
    for key in ("a", "b"):
        for ts in (1, 2, 4, 8):
            runner.record(0, (key, ts), ts)
    runner.watermark(0, 0, 3)
    assert _entries(runner) > 0
    runner.watermark(0, 0, 14)  # past every window's end + allowed lateness
    assert _entries(runner, ignore=("all-firings",)) == 0  # what is left is per key, not per window
    outputs = [v for tag, v, _ts, wm in runner.drain() if wm is None]
    assert outputs
    # A late element touches no state: it goes to the side output.
    runner.record(0, ("a", 2), 2)
    assert _entries(runner, ignore=("all-firings",)) == 0
    assert [(tag, v) for tag, v, _ts, wm in runner.drain() if wm is None] == [("late", ("a", 2))]


class CountingEventTimeTrigger(Trigger[Any, Any]):
    """An event-time trigger with trigger state (a count) on merging windows."""

    def __init__(self) -> None:
        self.count = ReducingStateDescriptor("count", lambda a, b: a + b, Types.LONG())
        self.inner = EventTimeTrigger()

    def on_element(self, element: Any, timestamp: int, window: Any, ctx: Any) -> TriggerResult:
        ctx.get_partitioned_state(self.count).add(1)
        return self.inner.on_element(element, timestamp, window, ctx)

    def on_processing_time(self, time: int, window: Any, ctx: Any) -> TriggerResult:
        return TriggerResult.CONTINUE

    def on_event_time(self, time: int, window: Any, ctx: Any) -> TriggerResult:
        return self.inner.on_event_time(time, window, ctx)

    def can_merge(self) -> bool:
        return True

    def on_merge(self, window: Any, ctx: Any) -> None:
        ctx.merge_partitioned_state(self.count)
        self.inner.on_merge(window, ctx)

    def clear(self, window: Any, ctx: Any) -> None:
        ctx.get_partitioned_state(self.count).clear()
        self.inner.clear(window, ctx)


def test_merged_trigger_state_follows_the_session() -> None:
    class CountOf(ProcessWindowFunction):
        def process(self, key: Any, context: Any, elements: Iterable[Any]) -> Iterable[Any]:
            yield len(list(elements))

    env = _env()
    ds = (
        _keyed(env)
        .window(EventTimeSessionWindows.with_gap(Time.milliseconds(3)))
        .trigger(CountingEventTimeTrigger())
    )
    runner = _runner(ds.process(CountOf()))
    for ts in (1, 7, 4):  # 4 bridges [1, 4) and [7, 10)
        runner.record(0, ("a", ts), ts)
    backend = runner.runtime.backend
    backend.flush()
    counts = list(backend.stores["count"].complex_items())
    assert len(counts) == 1  # one session, one count: 3
    runner.watermark(0, 0, 20)
    assert [v for _t, v, _ts, wm in runner.drain() if wm is None] == [3]
    assert _entries(runner) == 0


def test_count_windows_free_their_state_when_they_fire() -> None:
    class Sum(WindowFunction):
        def apply(self, key: Any, window: Any, inputs: Iterable[Any]) -> Iterable[Any]:
            yield sum(v[1] for v in inputs)

    env = _env()
    runner = _runner(_keyed(env).count_window(2).apply(Sum()))
    for i in range(1, 5):
        runner.record(0, ("a", i), None)
    assert [v for _t, v, _ts, wm in runner.drain() if wm is None] == [3, 7]
    backend = runner.runtime.backend
    backend.flush()
    # Only the per-key element counter of the assigner is left (as in Flink).
    assert {name for name, store in backend.stores.items() if len(store)} == {"tumble-count-assigner"}


def test_open_windows_survive_a_snapshot_and_restore() -> None:
    """What the Spark streaming target does per key group between micro-batches."""
    env = _env()
    windowed = _keyed(env).window(EventTimeSessionWindows.with_gap(Time.milliseconds(3))).process(Describe())
    first = _runner(windowed)
    for ts in (1, 2, 9):
        first.record(0, ("a", ts), ts)
    rt = first.runtime
    kg = rt.backend.key_encoder.locate("a")[1]
    blob = rt.backend.snapshot_key_group(kg)
    timers = rt.event_timers.snapshot()

    second = _runner(windowed)
    second.runtime.backend.restore_key_group(kg, blob)
    second.runtime.event_timers.restore(timers)
    second.record(0, ("a", 10), 10)
    second.watermark(0, 0, 100)
    assert sorted(v for _t, v, _ts, wm in second.drain() if wm is None) == [
        ("a", 1, 5, [1, 2]),
        ("a", 9, 13, [9, 10]),
    ]
    assert _entries(second) == 0


def test_the_migration_guide_windows_example_prints_what_it_says(capsys: pytest.CaptureFixture[str]) -> None:
    guide = (Path(__file__).parents[2] / "migration_guide" / "pyflink.md").read_text()
    section = guide[guide.index("\n## Windows\n") :]
    code = section[section.index("```python\n") + len("```python\n") :]
    code = code[: code.index("```")]
    expected = [line[2:] for line in code.splitlines() if line.startswith("# ")]
    exec(compile(code, "pyflink.md", "exec"), {"__name__": "guide_example"})
    assert capsys.readouterr().out.splitlines() == expected


# The keyed state backend's namespaced states, which windows are built on. --------------------


def test_namespaced_state_is_scoped_to_key_and_namespace() -> None:
    from fs_api_advanced import PickleCodec
    from fs_compat.runtime import KeyedStateBackend, StateAccessError, StateKind, StateSpec

    backend = KeyedStateBackend()
    items = backend.get_state(StateSpec("items", StateKind.LIST, PickleCodec()), namespaced=True)
    total = backend.get_state(
        StateSpec("total", StateKind.REDUCING, PickleCodec(), reduce_function=lambda a, b: a + b),
        namespaced=True,
    )
    for key, ns, value in [("a", b"w1", 1), ("a", b"w2", 2), ("b", b"w1", 3), ("a", b"w1", 4)]:
        backend.set_current_key(key)
        backend.current_namespace = ns
        items.add(value)
        total.add(value)
    backend.set_current_key("a")
    backend.current_namespace = b"w1"
    assert items.get() == [1, 4] and total.get() == 5 and total.get_internal() == 5
    backend.current_namespace = b"w2"
    assert items.get() == [2] and total.get() == 2
    total.update_internal(7)
    assert total.get() == 7
    backend.set_current_key("b")
    backend.current_namespace = b"w1"
    assert items.get() == [3]
    # A namespaced state's entries are in the store (and so in key-group snapshots) at once.
    assert len(backend.stores["items"]) == 3
    items.clear()
    assert items.get() == [] and len(backend.stores["items"]) == 2
    # One name is either per key or per key and namespace.
    with pytest.raises(StateAccessError, match="already in use for per-window state"):
        backend.get_state(StateSpec("items", StateKind.LIST, PickleCodec()))
    backend.get_state(StateSpec("plain", StateKind.VALUE, PickleCodec()))
    with pytest.raises(StateAccessError, match="already in use for per-key state"):
        backend.get_state(StateSpec("plain", StateKind.VALUE, PickleCodec()), namespaced=True)
