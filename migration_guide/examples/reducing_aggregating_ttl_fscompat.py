"""ReducingState and AggregatingState with a state TTL: the maximum and the mean per sensor and window.

Readings are keyed by sensor and 10-second event-time window. A ``ReducingState`` keeps the window's
maximum, an ``AggregatingState`` its mean (the accumulator is ``(sum, count)``); an event-time timer
at the window's end emits both and clears the state. Both states have a one-hour TTL, counted in
processing time from the last write: the state of a window whose timer never fires (its sensor stops
before the watermark passes the window's end) is dropped after an hour. The job runs in far less than
that, so no state expires here and the output does not depend on the clock.

The function classes are subclassed without type arguments, as PyFlink needs; ``mypy --strict``
accepts that on the port (see "What porting these showed" in ``migration_guide/pyflink.md``).
"""

from __future__ import annotations

from collections.abc import Iterator

from fs_compat.common import Types, WatermarkStrategy
from fs_compat.common.time import Time
from fs_compat.common.watermark_strategy import TimestampAssigner
from fs_compat.datastream import (
    AggregateFunction,
    KeyedProcessFunction,
    RuntimeContext,
    StreamExecutionEnvironment,
)
from fs_compat.datastream.state import (
    AggregatingState,
    AggregatingStateDescriptor,
    ReducingState,
    ReducingStateDescriptor,
    StateTtlConfig,
)

WINDOW_MS = 10_000

# (sensor, temperature, event time in ms)
READING = Types.TUPLE([Types.STRING(), Types.LONG(), Types.LONG()])
READINGS = [
    ("s1", 20, 1_000),
    ("s2", 31, 1_500),
    ("s1", 24, 4_000),
    ("s1", 22, 9_999),
    ("s2", 29, 10_000),
    ("s1", 19, 12_000),
    ("s2", 35, 14_000),
    ("s2", 33, 21_000),
    ("s1", 18, 25_000),
    ("s1", 21, 26_000),
]


class ThirdField(TimestampAssigner):
    def extract_timestamp(self, value: tuple[str, int, int], record_timestamp: int) -> int:
        return value[2]


class Mean(AggregateFunction):
    """The mean of the values added; the accumulator is (sum, count)."""

    def create_accumulator(self) -> tuple[int, int]:
        return 0, 0

    def add(self, value: int, accumulator: tuple[int, int]) -> tuple[int, int]:
        return accumulator[0] + value, accumulator[1] + 1

    def get_result(self, accumulator: tuple[int, int]) -> float:
        return accumulator[0] / accumulator[1]

    def merge(self, acc_a: tuple[int, int], acc_b: tuple[int, int]) -> tuple[int, int]:
        return acc_a[0] + acc_b[0], acc_a[1] + acc_b[1]


class WindowStats(KeyedProcessFunction):
    def open(self, runtime_context: RuntimeContext) -> None:
        ttl = (
            StateTtlConfig.new_builder(Time.hours(1))
            .set_update_type(StateTtlConfig.UpdateType.OnCreateAndWrite)
            .set_state_visibility(StateTtlConfig.StateVisibility.NeverReturnExpired)
            .build()
        )
        max_descriptor = ReducingStateDescriptor("max", lambda a, b: max(a, b), Types.LONG())
        max_descriptor.enable_time_to_live(ttl)
        mean_descriptor = AggregatingStateDescriptor(
            "mean", Mean(), Types.TUPLE([Types.LONG(), Types.LONG()])
        )
        mean_descriptor.enable_time_to_live(ttl)
        self.max: ReducingState[int] = runtime_context.get_reducing_state(max_descriptor)
        self.mean: AggregatingState[int, float] = runtime_context.get_aggregating_state(mean_descriptor)

    def process_element(
        self, value: tuple[str, int, int], ctx: KeyedProcessFunction.Context
    ) -> Iterator[str]:
        self.max.add(value[1])
        self.mean.add(value[1])
        # The window's last millisecond; registering the same timer again has no effect.
        window_start = value[2] - value[2] % WINDOW_MS
        ctx.timer_service().register_event_time_timer(window_start + WINDOW_MS - 1)
        yield from ()

    def on_timer(self, timestamp: int, ctx: KeyedProcessFunction.OnTimerContext) -> Iterator[str]:
        sensor, window_start = ctx.get_current_key()
        yield (
            f"{sensor} [{window_start}, {timestamp + 1}): max {self.max.get()}, mean {self.mean.get():.2f}"
        )
        self.max.clear()
        self.mean.clear()


def main() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    readings = env.from_collection(READINGS, READING).assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(ThirdField())
    )
    stats = readings.key_by(
        lambda r: (r[0], r[2] - r[2] % WINDOW_MS), key_type=Types.TUPLE([Types.STRING(), Types.LONG()])
    ).process(WindowStats(), output_type=Types.STRING())
    with stats.execute_and_collect("window stats") as results:
        for line in sorted(results):
            print(line)


if __name__ == "__main__":
    main()
