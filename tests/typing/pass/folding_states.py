"""Reducing and aggregating state, keyed and not, with a user-written AggregateFunc."""

from __future__ import annotations

from typing import Any, assert_type

from fs_api import MemoryKvStore
from fs_api.testing import LocalContext
from fs_api_advanced import (
    AggregateFunc,
    AggregatingState,
    IntCodec,
    JsonCodec,
    KeyedAggregatingState,
    KeyedAggregatingStateFactory,
    KeyedReducingState,
    KeyedReducingStateFactory,
    PickleCodec,
    ReduceFunc,
    ReducingState,
)


class Average:
    """The mean of floats; the accumulator is ``[sum, count]`` (a list, so JSON can hold it)."""

    def create_accumulator(self) -> list[float]:
        return [0.0, 0.0]

    def add(self, value: float, accumulator: list[float]) -> list[float]:
        return [accumulator[0] + value, accumulator[1] + 1]

    def get_result(self, accumulator: list[float]) -> float:
        return accumulator[0] / accumulator[1] if accumulator[1] else 0.0

    def merge(self, acc_a: list[float], acc_b: list[float]) -> list[float]:
        return [acc_a[0] + acc_b[0], acc_a[1] + acc_b[1]]


def add_ints(a: int, b: int) -> int:
    return a + b


def keyed() -> None:
    store = MemoryKvStore()
    # JsonCodec is a Codec[Any], so the accumulator type comes from the annotation.
    averages: KeyedAggregatingStateFactory[float, list[float], float] = KeyedAggregatingStateFactory(
        store, b"", JsonCodec(), Average()
    )
    untyped_acc = KeyedAggregatingStateFactory(store, b"", JsonCodec(), Average())
    assert_type(untyped_acc, KeyedAggregatingStateFactory[float, Any, float])
    func: AggregateFunc[float, list[float], float] = Average()
    assert func.get_result(func.add(2.0, func.create_accumulator())) == 2.0
    avg = averages.new_aggregating_state(b"sensor-1", "avg")
    assert_type(avg, KeyedAggregatingState[float, list[float], float])
    for v in (1.0, 2.0, 6):
        avg.add(v)
    assert_type(avg.get(), tuple[float | None, bool])
    assert avg.get() == (3.0, True)

    inferred = KeyedAggregatingStateFactory.from_context_auto_codec(LocalContext(), "avg", b"", Average())
    assert_type(inferred, KeyedAggregatingStateFactory[float, list[float], float])

    totals = KeyedReducingStateFactory(store, b"", IntCodec(), add_ints)
    assert_type(totals, KeyedReducingStateFactory[int])
    total = totals.new_reducing_state(b"k", b"sum")
    assert_type(total, KeyedReducingState[int])
    total.add(2)
    total.add(3)
    value, found = total.get()
    assert_type(value, int | None)
    assert found and value == 5

    maxima = KeyedReducingStateFactory.from_context_auto_codec(LocalContext(), "max", b"", max, int)
    assert_type(maxima, KeyedReducingStateFactory[int])
    longest = KeyedReducingStateFactory.from_context(
        LocalContext(), "longest", b"", PickleCodec(), lambda a, b: a if len(a) >= len(b) else b
    )
    assert_type(longest, KeyedReducingStateFactory[Any])
    reduce_func: ReduceFunc[str] = lambda a, b: a + b  # noqa: E731 - a typed alias in use
    concat: KeyedReducingStateFactory[str] = KeyedReducingStateFactory(store, b"", PickleCodec(), reduce_func)
    assert_type(concat.new_reducing_state(b"k", b"s").get(), tuple[str | None, bool])


def non_keyed() -> None:
    store = MemoryKvStore()
    avg = AggregatingState.from_context_auto_codec(LocalContext(), "avg", Average())
    assert_type(avg, AggregatingState[float, list[float], float])
    assert_type(AggregatingState(store, JsonCodec(), Average()), AggregatingState[float, Any, float])
    avg.add(4.0)
    assert_type(avg.get(), tuple[float | None, bool])
    assert avg.get() == (4.0, True)
    total = ReducingState.from_context(LocalContext(), "total", IntCodec(), add_ints)
    assert_type(total, ReducingState[int])
    total.add(1)
    assert_type(total.get(), tuple[int | None, bool])


def main() -> None:
    keyed()
    non_keyed()


if __name__ == "__main__":
    main()
