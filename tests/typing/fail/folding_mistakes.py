"""Mistakes with reducing and aggregating state and AggregateFunc implementations."""

from __future__ import annotations

from fs_api import MemoryKvStore
from fs_api_advanced import (
    AggregateFunc,
    IntCodec,
    KeyedAggregatingStateFactory,
    KeyedReducingStateFactory,
    StringCodec,
)


class BadAverage:
    """``add`` takes the accumulator first: the arguments are swapped."""

    def create_accumulator(self) -> list[float]:
        return [0.0, 0.0]

    def add(self, accumulator: list[float], value: float) -> list[float]:
        return [accumulator[0] + value, accumulator[1] + 1]

    def get_result(self, accumulator: list[float]) -> float:
        return accumulator[0] / accumulator[1]

    def merge(self, acc_a: list[float], acc_b: list[float]) -> list[float]:
        return [acc_a[0] + acc_b[0], acc_a[1] + acc_b[1]]


class NoMerge:
    def create_accumulator(self) -> int:
        return 0

    def add(self, value: int, accumulator: int) -> int:
        return value + accumulator

    def get_result(self, accumulator: int) -> int:
        return accumulator


def concat(a: str, b: str) -> str:
    return a + b


store = MemoryKvStore()
# add(value, accumulator) has its arguments swapped.
bad: AggregateFunc[float, list[float], float] = BadAverage()  # E: Incompatible types in assignment (expression has type "BadAverage", variable has type "AggregateFunc[float, list[float], float]")  [assignment]
# merge() is missing.
incomplete: AggregateFunc[int, int, int] = NoMerge()  # E: Incompatible types in assignment (expression has type "NoMerge", variable has type "AggregateFunc[int, int, int]")  [assignment]
# An incomplete AggregateFunc cannot build a factory either.
counts: KeyedAggregatingStateFactory[int, int, int] = KeyedAggregatingStateFactory(store, b"", IntCodec(), NoMerge())  # E: Argument 4 to "KeyedAggregatingStateFactory" has incompatible type "NoMerge"; expected "AggregateFunc[int, int, int]"  [arg-type]
# The reduce function must fold the codec's type.
sums = KeyedReducingStateFactory(store, b"", IntCodec(), concat)  # E: Argument 4 to "KeyedReducingStateFactory" has incompatible type "Callable[[str, str], str]"; expected "Callable[[int, int], int]"  [arg-type]
total = KeyedReducingStateFactory(store, b"", StringCodec(), concat).new_reducing_state(b"k", b"s")
# A reducing state of str.
total.add(3)  # E: Argument 1 to "add" of "KeyedReducingState" has incompatible type "int"; expected "str"  [arg-type]
result: int = total.get()[0]  # E: Incompatible types in assignment (expression has type "str | None", variable has type "int")  [assignment]
