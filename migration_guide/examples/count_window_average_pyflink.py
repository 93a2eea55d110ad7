"""Flink's "Using Keyed State" example (CountWindowAverage).

A ``FlatMapFunction`` on a keyed stream keeps ``(count, sum)`` per key in a ``ValueState`` and emits the
average of every two values of a key, then starts over.

The function classes are subclassed without type arguments, as PyFlink needs; ``mypy --strict``
accepts that on the port (see "What porting these showed" in ``migration_guide/pyflink.md``).
"""

from __future__ import annotations

from collections.abc import Iterator

from pyflink.common.typeinfo import Types
from pyflink.datastream import FlatMapFunction, RuntimeContext, StreamExecutionEnvironment
from pyflink.datastream.state import ValueState, ValueStateDescriptor


class CountWindowAverage(FlatMapFunction):
    def open(self, runtime_context: RuntimeContext) -> None:
        descriptor = ValueStateDescriptor(
            "average",  # the state name
            Types.TUPLE([Types.LONG(), Types.LONG()]),  # type information: (count, sum)
        )
        self.sum: ValueState[tuple[int, int]] = runtime_context.get_state(descriptor)

    def flat_map(self, value: tuple[int, int]) -> Iterator[tuple[int, int]]:
        # access the state value
        current_sum = self.sum.value()
        if current_sum is None:
            current_sum = (0, 0)

        # update the count
        current_sum = (current_sum[0] + 1, current_sum[1] + value[1])

        # update the state
        self.sum.update(current_sum)

        # if the count reaches 2, emit the average and clear the state
        if current_sum[0] >= 2:
            self.sum.clear()
            yield value[0], int(current_sum[1] / current_sum[0])


def main() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    pairs = Types.TUPLE([Types.LONG(), Types.LONG()])
    averages = (
        env.from_collection([(1, 3), (1, 5), (2, 10), (1, 7), (2, 20), (1, 4), (2, 6), (1, 2)], pairs)
        .key_by(lambda row: row[0], key_type=Types.LONG())
        .flat_map(CountWindowAverage(), output_type=pairs)
    )
    with averages.execute_and_collect("count window average") as results:
        # One line per average; sorted, as parallel subtasks finish in any order.
        for key, average in sorted(results):
            print(f"key {key}: average {average}")


if __name__ == "__main__":
    main()
