"""Ported PyFlink user code (``pyflink.`` -> ``fs_compat.``): keyed state from a RuntimeContext.

The descriptor's type argument is inferred from its TypeInformation (``Types.INT()`` ->
``ValueStateDescriptor[int]``) and flows to the state the RuntimeContext returns.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, assert_type

from fs_compat.common import Time, Types
from fs_compat.datastream import (
    AggregateFunction,
    KeyedProcessFunction,
    ReduceFunction,
    RuntimeContext,
    StreamExecutionEnvironment,
)
from fs_compat.datastream.state import (
    AggregatingState,
    AggregatingStateDescriptor,
    ListState,
    ListStateDescriptor,
    MapState,
    MapStateDescriptor,
    ReducingState,
    ReducingStateDescriptor,
    StateTtlConfig,
    ValueState,
    ValueStateDescriptor,
)


class Average(AggregateFunction[int, tuple[int, int], float]):
    """Mean of the values: the accumulator is (sum, count)."""

    def create_accumulator(self) -> tuple[int, int]:
        return 0, 0

    def add(self, value: int, accumulator: tuple[int, int]) -> tuple[int, int]:
        return accumulator[0] + value, accumulator[1] + 1

    def get_result(self, accumulator: tuple[int, int]) -> float:
        return accumulator[0] / accumulator[1] if accumulator[1] else 0.0


class Max(ReduceFunction[int]):
    def reduce(self, value1: int, value2: int) -> int:
        return max(value1, value2)


class Stats(KeyedProcessFunction[str, tuple[str, int], tuple[str, int, int, float, int]]):
    """Per user: a count, the values seen, the count per value, the max and the mean."""

    def open(self, runtime_context: RuntimeContext) -> None:
        ttl = StateTtlConfig.new_builder(Time.seconds(1)).build()
        assert_type(ttl, StateTtlConfig)
        count_desc = ValueStateDescriptor("count", Types.LONG())
        assert_type(count_desc, ValueStateDescriptor[int])
        count_desc.enable_time_to_live(StateTtlConfig.new_builder(Time.hours(1)).build())
        self.count = runtime_context.get_state(count_desc)
        assert_type(self.count, ValueState[int])

        self.seen = runtime_context.get_list_state(ListStateDescriptor("seen", Types.STRING()))
        assert_type(self.seen, ListState[str])
        self.per_value = runtime_context.get_map_state(
            MapStateDescriptor("per_value", Types.STRING(), Types.INT())
        )
        assert_type(self.per_value, MapState[str, int])
        self.max = runtime_context.get_reducing_state(ReducingStateDescriptor("max", Max(), Types.INT()))
        assert_type(self.max, ReducingState[int])
        self.total = runtime_context.get_reducing_state(
            ReducingStateDescriptor("total", lambda a, b: a + b, Types.LONG())
        )
        assert_type(self.total, ReducingState[int])
        self.mean = runtime_context.get_aggregating_state(
            AggregatingStateDescriptor("mean", Average(), Types.TUPLE([Types.LONG(), Types.LONG()]))
        )
        assert_type(self.mean, AggregatingState[int, float])

    def process_element(
        self, value: tuple[str, int], ctx: KeyedProcessFunction.Context
    ) -> Iterator[tuple[str, int, int, float, int]]:
        current = self.count.value()
        assert_type(current, int | None)
        count = (current or 0) + 1
        self.count.update(count)

        self.seen.add(str(value[1]))
        assert_type(self.seen.get(), list[str])
        seen = [s.upper() for s in self.seen]

        word = str(value[1])
        before = self.per_value.get(word)
        assert_type(before, int | None)
        self.per_value.put(word, (before or 0) + 1)
        self.per_value[word + "!"] = 1
        for k, v in self.per_value.items():
            assert_type(k, str)
            assert_type(v, int)
        assert_type(list(self.per_value.keys()), list[str])
        assert "x" not in self.per_value

        self.max.add(value[1])
        biggest = self.max.get()
        assert_type(biggest, int | None)
        self.total.add(value[1])
        self.mean.add(value[1])
        mean = self.mean.get()
        assert_type(mean, float | None)
        assert biggest is not None and mean is not None
        yield value[0], count, biggest, mean, len(seen)


def explicit_type_arguments(runtime_context: RuntimeContext) -> None:
    """Type arguments written out, as in annotated PyFlink code."""
    assert_type(runtime_context.get_state(ValueStateDescriptor[int]("c", Types.LONG())), ValueState[int])
    desc = ValueStateDescriptor("c", Types.INT())
    assert_type(desc, ValueStateDescriptor[int])
    assert_type(runtime_context.get_state(desc), ValueState[int])
    assert_type(runtime_context.get_state(desc).value(), int | None)
    assert_type(
        runtime_context.get_state(ValueStateDescriptor("any", Types.PICKLED_BYTE_ARRAY())).value(),
        Any | None,
    )


def run_job() -> list[object]:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    data = [("alice", 3), ("bob", 5), ("alice", 7), ("alice", 3)]
    ds = (
        env.from_collection(data, Types.TUPLE([Types.STRING(), Types.INT()]))
        .key_by(lambda row: row[0], key_type=Types.STRING())
        .process(Stats())
    )
    out: list[object] = list(ds.execute_and_collect())
    return out


def ttl_config() -> None:
    builder = StateTtlConfig.new_builder(Time.seconds(1))
    config = (
        builder.set_update_type(StateTtlConfig.UpdateType.OnReadAndWrite)
        .set_state_visibility(StateTtlConfig.StateVisibility.NeverReturnExpired)
        .cleanup_incrementally(10, False)
        .build()
    )
    assert_type(config, StateTtlConfig)
    assert config.is_enabled()
    assert_type(config.get_ttl(), Time)


if __name__ == "__main__":
    ttl_config()
    rows = sorted(run_job(), key=repr)
    assert rows == [
        ("alice", 1, 3, 3.0, 1),
        ("alice", 2, 7, 5.0, 2),
        ("alice", 3, 7, 13 / 3, 3),
        ("bob", 1, 5, 5.0, 1),
    ], rows
