"""When a timestamp assigner emits its watermark: periodically, every ``auto_watermark_interval`` of
processing time, as in Flink (a small bounded input sees none before its end), or after every
record with ``with_per_element_watermarks()``. Processing time comes from an injected clock:
nothing sleeps."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from typing import Any

import pytest

from fs_compat.common import Configuration, Types, WatermarkStrategy
from fs_compat.datastream import KeyedProcessFunction, StreamExecutionEnvironment
from fs_compat.runtime import RecordTimeClock

MIN = -(1 << 63)
MAX = (1 << 63) - 1


class SeenWatermark(KeyedProcessFunction):
    """(timestamp, watermark seen) per record; one event-time timer per record at its timestamp
    + 1, reported as ("timer", timestamp, watermark) when it fires."""

    def process_element(self, value: Any, ctx: KeyedProcessFunction.Context) -> Iterable[Any]:
        ctx.timer_service().register_event_time_timer(value[1] + 1)
        yield value[1], ctx.timer_service().current_watermark()

    def on_timer(self, timestamp: int, ctx: KeyedProcessFunction.OnTimerContext) -> Iterable[Any]:
        yield "timer", timestamp, ctx.timer_service().current_watermark()


def _job(
    times: list[int],
    *,
    target: str = "local",
    interval: int | None = None,
    clock: Callable[[], int] | None = None,
    assigner: Callable[[Any, int], int] = lambda value, ts: value[1],
    per_element: bool = False,
    out_of_orderness: bool = False,
) -> list[Any]:
    env = StreamExecutionEnvironment.get_execution_environment(
        Configuration().set_string("execution.target", target)
    )
    env.set_parallelism(1)
    if clock is not None:
        env.set_processing_time_clock(clock)
    if interval is not None:
        env.get_config().set_auto_watermark_interval(interval)
    events = env.from_collection([("k", t) for t in times], Types.TUPLE([Types.STRING(), Types.LONG()]))
    strategy = WatermarkStrategy.for_monotonous_timestamps()
    if out_of_orderness:
        from fs_compat.common import Duration

        strategy = WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_millis(10))
    strategy = strategy.with_timestamp_assigner(assigner)
    if per_element:
        strategy = strategy.with_per_element_watermarks()
    stamped = events.assign_timestamps_and_watermarks(strategy)
    return list(stamped.key_by(lambda v: v[0]).process(SeenWatermark()).execute_and_collect())


def _ticking(ms_per_record: int) -> dict[str, Any]:
    """A fake processing-time clock and a timestamp assigner (second field) that advances it by
    ``ms_per_record`` per record: ``_job``'s ``clock`` and ``assigner``."""
    now = [0]

    def stamp(value: Any, ts: int) -> int:
        now[0] += ms_per_record
        return int(value[1])

    return {"clock": lambda: now[0], "assigner": stamp}


def test_a_small_input_sees_no_watermark_before_its_end() -> None:
    # Flink: the input is handled within the first 200 ms, so every record sees Long.MIN_VALUE and
    # every timer fires at the end of input (PyFlink's event_time_timer.py prints its totals then).
    out = _job([5, 1, 9, 3])
    assert out[:4] == [(5, MIN), (1, MIN), (9, MIN), (3, MIN)]
    assert out[4:] == [("timer", t, MAX) for t in (2, 4, 6, 10)]


def test_the_watermark_follows_processing_time_checked_every_16_records() -> None:
    out = _job(list(range(40)), interval=1_000, **_ticking(100))  # 100 ms per record
    seen = dict(o for o in out if len(o) == 2)
    # The first look (record 0, at 100 ms) starts the interval; the look at record 16 (1,700 ms)
    # finds it passed and emits 15 after that record; the look at 32 (3,300 ms) emits 31.
    assert {seen[t] for t in range(17)} == {MIN}
    assert {seen[t] for t in range(17, 33)} == {15}
    assert {seen[t] for t in range(33, 40)} == {31}
    # Timers fire as the watermark passes them: 1..15 right after record 16, 16..31 after 32.
    at = out.index((16, MIN))
    assert out[at + 1 : at + 16] == [("timer", t, 15) for t in range(1, 16)]
    at = out.index((32, 15))
    assert out[at + 1 : at + 17] == [("timer", t, 31) for t in range(16, 32)]


def test_no_watermark_while_the_interval_has_not_passed() -> None:
    # 40 records take 400 ms of a 1,000 ms interval: nothing before the end.
    out = _job(list(range(40)), interval=1_000, **_ticking(10))
    assert {wm for _, wm in out[:40]} == {MIN}


def test_interval_zero_means_no_periodic_watermarks() -> None:
    out = _job(list(range(40)), interval=0, **_ticking(1_000))
    assert {wm for _, wm in out[:40]} == {MIN}
    assert len(out) == 80


def test_a_negative_interval_is_refused() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    with pytest.raises(ValueError, match="must not be negative"):
        env.get_config().set_auto_watermark_interval(-1)


def test_per_element_watermarks_follow_every_record_that_raises_the_largest_timestamp() -> None:
    out = _job([5, 1, 9, 3], per_element=True)
    # Each record sees the watermark of the records before it; 1 and 3 arrive behind it, and
    # their timers (2 and 4: in the past) fire at the next advance, as in Flink.
    assert out == [
        (5, MIN),
        (1, 4),
        (9, 4),
        ("timer", 2, 8),
        ("timer", 6, 8),
        (3, 8),
        ("timer", 4, MAX),
        ("timer", 10, MAX),
    ]


def test_per_element_with_out_of_orderness() -> None:
    out = _job([50, 45, 70], per_element=True, out_of_orderness=True)
    assert [o for o in out if o[0] != "timer"] == [(50, MIN), (45, 39), (70, 39)]


def test_a_record_time_clock_makes_periodic_watermarks_follow_the_data() -> None:
    out = _job([100 * i for i in range(40)], interval=1_000, clock=RecordTimeClock())
    seen = {o[0] // 100: o[1] for o in out if len(o) == 2}
    # Processing time is the record's timestamp: the look at record 16 (1,600) passes the
    # interval started at 0 and emits 1,599; the look at 32 (3,200) emits 3,199.
    assert {seen[i] for i in range(17)} == {MIN}
    assert {seen[i] for i in range(17, 33)} == {1_599}
    assert {seen[i] for i in range(33, 40)} == {3_199}


@pytest.mark.spark
def test_periodic_watermarks_on_spark_match_the_local_target() -> None:
    times = [100 * i for i in range(40)]
    local = _job(times, interval=1_000, clock=RecordTimeClock())
    assert _job(times, target="spark", interval=1_000, clock=RecordTimeClock()) == local
    assert _job([5, 1, 9, 3], target="spark") == _job([5, 1, 9, 3])


class TimerAt(KeyedProcessFunction):
    """Registers an event-time timer at the record's second field; reports (key, timestamp)."""

    def process_element(self, value: Any, ctx: KeyedProcessFunction.Context) -> Iterable[Any]:
        ctx.timer_service().register_event_time_timer(value[1])
        return ()

    def on_timer(self, timestamp: int, ctx: KeyedProcessFunction.OnTimerContext) -> Iterable[Any]:
        yield ctx.get_current_key(), timestamp


def _fired(events: list[tuple[Any, int]], target: str = "local") -> list[Any]:
    env = StreamExecutionEnvironment.get_execution_environment(
        Configuration().set_string("execution.target", target)
    )
    env.set_parallelism(1)
    rows = [(repr(k), t) for k, t in events]
    stream = env.from_collection(rows, Types.TUPLE([Types.STRING(), Types.LONG()]))
    stamped = stream.assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda v, ts: 0)
    )
    keyed = stamped.key_by(lambda v: ast.literal_eval(v[0]))  # the key, from its repr
    return list(keyed.process(TimerAt()).execute_and_collect())


#: Timers registered, in order, for (key, timestamp); all fire at the end of input. Measured on
#: PyFlink 2.3.0 (the same job, parallelism 1): equal timestamps fire in its heap's order.
_MIXED = [
    ("k8", 1000), ("k16", 1000), ("k31", 4000), ("k30", 4000), (("t", 1), 2000), ("k6", 4000),
    ("k1", 4000), ("k27", 1000), (4, 4000), ("k17", 2000), ("k37", 1000), ("k20", 1000),
    ("k1", 1000), (1, 1000), ("k24", 2000), ("k27", 1000), ("k33", 2000), (8, 4000),
    ("k31", 2000), ("k22", 2000), (3, 2000), (8, 4000), ("k18", 1000), ("k26", 1000),
]  # fmt: skip
_MIXED_FIRED_BY_PYFLINK = [
    ("k8", 1000), ("k16", 1000), ("k27", 1000), ("k37", 1000), ("k18", 1000), ("k26", 1000),
    ("k20", 1000), ("k1", 1000), (1, 1000), (("t", 1), 2000), ("k33", 2000), ("k31", 2000),
    (3, 2000), ("k22", 2000), ("k17", 2000), ("k24", 2000), ("k30", 4000), (8, 4000),
    ("k6", 4000), ("k31", 4000), (4, 4000), ("k1", 4000),
]  # fmt: skip


def test_timers_due_at_the_same_time_fire_in_pyflinks_order() -> None:
    # PyFlink 2.3.0 fires twelve keys' timers for 1000 as k0, k11, k10, ..., k1: a subtask's timers
    # are one binary heap on the timestamp alone, not a queue in registration order.
    twelve = _fired([(f"k{i}", 1000) for i in range(12)])
    assert twelve == [("k0", 1000)] + [(f"k{i}", 1000) for i in range(11, 0, -1)]
    assert _fired(_MIXED) == _MIXED_FIRED_BY_PYFLINK


@pytest.mark.spark
def test_timers_due_at_the_same_time_fire_in_pyflinks_order_on_spark() -> None:
    assert _fired(_MIXED, target="spark") == _MIXED_FIRED_BY_PYFLINK
