"""Typed PyFlink pipelines: each step's value type follows from the function it is given, so
``assert_type`` pins what mypy infers, and the job runs (in-process) with the same values."""

from __future__ import annotations

from collections.abc import Iterator
from typing import assert_type

from fs_compat.common import Configuration, Row, Types
from fs_compat.datastream import (
    CloseableIterator,
    CoMapFunction,
    ConnectedStreams,
    DataStream,
    KeyedProcessFunction,
    KeyedStream,
    MapFunction,
    OutputTag,
    RuntimeContext,
    StreamExecutionEnvironment,
    WindowedStream,
)
from fs_compat.datastream.state import ValueStateDescriptor

ODD = OutputTag("odd", Types.INT())


class Label(MapFunction[int, str]):
    def map(self, value: int) -> str:
        return f"#{value}"


class RunningCount(KeyedProcessFunction[str, str, tuple[str, int]]):
    def open(self, runtime_context: RuntimeContext) -> None:
        self.count = runtime_context.get_state(ValueStateDescriptor("count", Types.INT()))

    def process_element(self, value: str, ctx: KeyedProcessFunction.Context) -> Iterator[tuple[str, int]]:
        count = (self.count.value() or 0) + 1
        self.count.update(count)
        yield value, count


class Both(CoMapFunction[int, str, str]):
    def map1(self, value: int) -> str:
        return str(value)

    def map2(self, value: str) -> str:
        return value


def run_job() -> None:
    env = StreamExecutionEnvironment.get_execution_environment(
        Configuration().set_string("execution.target", "local")
    )
    numbers = env.from_collection([1, 2, 3])
    assert_type(numbers, DataStream[int])

    plus_one = numbers.map(lambda x: x + 1)
    assert_type(plus_one, DataStream[int])
    labels = numbers.map(Label())
    assert_type(labels, DataStream[str])
    assert_type(numbers.filter(lambda x: x % 2), DataStream[int])
    assert_type(numbers.flat_map(lambda x: [str(x)] * x), DataStream[str])

    keyed = labels.key_by(lambda s: s[:1])
    assert_type(keyed, KeyedStream[str, str])
    counted = keyed.process(RunningCount())
    assert_type(counted, DataStream[tuple[str, int]])
    assert_type(numbers.key_by(lambda x: x % 2).reduce(lambda a, b: a + b), DataStream[int])

    rows = counted.map(
        lambda t: t, output_type=Types.ROW_NAMED(["label", "n"], [Types.STRING(), Types.INT()])
    )
    assert_type(rows, DataStream[Row])

    windowed = numbers.key_by(lambda x: x % 2).count_window(2)
    assert_type(windowed, WindowedStream[int, int])
    assert_type(windowed.reduce(lambda a, b: a + b), DataStream[int])
    assert_type(numbers.count_window_all(3).reduce(max), DataStream[int])

    connected = numbers.connect(labels)
    assert_type(connected, ConnectedStreams[int, str])
    assert_type(connected.map(Both()), DataStream[str])
    assert_type(plus_one.union(numbers), DataStream[int])
    assert_type(numbers.get_side_output(ODD), DataStream[int])

    collected = plus_one.execute_and_collect()
    assert_type(collected, CloseableIterator[int])
    assert sorted(collected) == [2, 3, 4]
    firsts = rows.execute_and_collect(limit=3)
    assert_type(firsts, list[Row])
    assert sorted((r.label, r.n) for r in firsts) == [("#1", 1), ("#2", 2), ("#3", 3)], firsts


if __name__ == "__main__":
    run_job()
