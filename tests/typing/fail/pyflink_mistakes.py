"""Mistakes in ported PyFlink code that mypy catches: the descriptor's TypeInformation types the state."""

from __future__ import annotations

from fs_compat.common import Types
from fs_compat.datastream import AggregateFunction, ReduceFunction, RuntimeContext
from fs_compat.datastream.state import (
    AggregatingStateDescriptor,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    ValueStateDescriptor,
)


class Average(AggregateFunction[int, tuple[int, int], float]):
    def create_accumulator(self) -> tuple[int, int]:
        return 0, 0

    def add(self, value: int, accumulator: tuple[int, int]) -> tuple[int, int]:
        return accumulator[0] + value, accumulator[1] + 1

    def get_result(self, accumulator: tuple[int, int]) -> float:
        return accumulator[0] / accumulator[1]


class Concat(ReduceFunction[str]):
    def reduce(self, value1: str, value2: str) -> str:
        return value1 + value2


def mistakes(ctx: RuntimeContext) -> None:
    state = ctx.get_state(ValueStateDescriptor("count", Types.INT()))
    # A ValueState[int] holds ints.
    state.update("x")  # E: Argument 1 to "update" of "ValueState" has incompatible type "str"; expected "int | None"  [arg-type]
    # value() is None until the first update.
    x: int = state.value()  # E: Incompatible types in assignment (expression has type "int | None", variable has type "int")  [assignment]

    list_state = ctx.get_list_state(ListStateDescriptor("names", Types.STRING()))
    list_state.add(1)  # E: Argument 1 to "add" of "ListState" has incompatible type "int"; expected "str"  [arg-type]
    list_state.update([1, 2])  # E: List item 0 has incompatible type "int"; expected "str"  [list-item]  # E: List item 1 has incompatible type "int"; expected "str"  [list-item]

    map_state = ctx.get_map_state(MapStateDescriptor("m", Types.STRING(), Types.INT()))
    map_state.put(1, 2)  # E: Argument 1 to "put" of "MapState" has incompatible type "int"; expected "str"  [arg-type]
    map_state["a"] = "b"  # E: Incompatible types in assignment (expression has type "str", target has type "int")  [assignment]
    n: int = map_state.get("a")  # E: Incompatible types in assignment (expression has type "int | None", variable has type "int")  [assignment]

    # Each getter takes its own descriptor kind.
    ctx.get_state(ListStateDescriptor("l", Types.STRING()))  # E: Argument 1 to "get_state" of "RuntimeContext" has incompatible type "ListStateDescriptor[str]"; expected "ValueStateDescriptor[Any]"  [arg-type]

    # An AggregatingStateDescriptor needs an AggregateFunction, not a callable ...
    AggregatingStateDescriptor("avg", lambda v, acc: acc, Types.LONG())  # E: Argument 2 to "AggregatingStateDescriptor" has incompatible type "Callable[[Any, Any], Any]"; expected "AggregateFunction[Any, int, Any]"  [arg-type]
    # ... and its type info is the accumulator's type.
    AggregatingStateDescriptor("avg", Average(), Types.STRING())  # E: Cannot infer value of type parameter "ACC" of "AggregatingStateDescriptor"  [misc]
    avg = ctx.get_aggregating_state(
        AggregatingStateDescriptor("avg", Average(), Types.TUPLE([Types.LONG(), Types.LONG()]))
    )
    avg.add("3")  # E: Argument 1 to "add" of "AppendingState" has incompatible type "str"; expected "int"  [arg-type]

    # The reducing state's type is the type info's: an int, not a str.
    total = ctx.get_reducing_state(ReducingStateDescriptor("total", lambda a, b: a + b, Types.LONG()))
    label: str = total.get() or ""  # E: Incompatible types in assignment (expression has type "int | str", variable has type "str")  [assignment]
    # A ReduceFunction[str] cannot reduce ints.
    ReducingStateDescriptor("concat", Concat(), Types.INT())  # E: Argument 2 to "ReducingStateDescriptor" has incompatible type "Concat"; expected "ReduceFunction[int] | Callable[[int, int], int]"  [arg-type]
