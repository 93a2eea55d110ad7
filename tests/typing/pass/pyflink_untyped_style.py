"""PyFlink code as PyFlink users write it: function classes subclassed without type arguments
(PyFlink's are not generic, so ``FlatMapFunction[int, int]`` would fail there) and bare ``DataStream``
/ ``ValueState`` annotations. Every type parameter of the PyFlink layer defaults to ``Any``, so this
passes ``mypy --strict`` unchanged, and what a descriptor says is still inferred where it is used.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, assert_type

from fs_compat.common import Types
from fs_compat.datastream import (
    DataStream,
    FlatMapFunction,
    KeyedProcessFunction,
    RuntimeContext,
    StreamExecutionEnvironment,
)
from fs_compat.datastream.state import ValueState, ValueStateDescriptor


class Doubler(FlatMapFunction):
    def flat_map(self, value: int) -> Iterator[int]:
        yield value * 2


class Counter(KeyedProcessFunction):
    def open(self, runtime_context: RuntimeContext) -> None:
        self.count: ValueState = runtime_context.get_state(ValueStateDescriptor("count", Types.LONG()))
        typed = runtime_context.get_state(ValueStateDescriptor("typed", Types.LONG()))
        assert_type(typed, ValueState[int])

    def process_element(self, value: Any, ctx: KeyedProcessFunction.Context) -> Iterator[Any]:
        count = (self.count.value() or 0) + 1
        self.count.update(count)
        yield value, count


def build(numbers: DataStream) -> DataStream:
    return numbers.flat_map(Doubler()).key_by(lambda v: v % 2).process(Counter())


def run_job() -> list[Any]:
    env = StreamExecutionEnvironment.get_execution_environment()
    return list(build(env.from_collection([1, 2, 3])).execute_and_collect())


if __name__ == "__main__":
    assert sorted(run_job()) == [(2, 1), (4, 2), (6, 3)], run_job()
