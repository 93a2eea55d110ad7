"""Mistakes in PyFlink pipelines that mypy catches: a function must take the stream's value type."""

from __future__ import annotations

from collections.abc import Iterator

from fs_compat.common import Types
from fs_compat.datastream import (
    DataStream,
    KeyedProcessFunction,
    MapFunction,
    ProcessFunction,
    StreamExecutionEnvironment,
)


class Upper(MapFunction[str, str]):
    def map(self, value: str) -> str:
        return value.upper()


class PerKey(KeyedProcessFunction[int, str, str]):
    def process_element(self, value: str, ctx: KeyedProcessFunction.Context) -> Iterator[str]:
        yield value


class Each(ProcessFunction[int, int]):
    def process_element(self, value: int, ctx: ProcessFunction.Context) -> Iterator[int]:
        yield value


def mistakes(env: StreamExecutionEnvironment) -> None:
    numbers: DataStream[int] = env.from_collection([1, 2, 3])
    # A MapFunction[str, str] cannot map ints.
    numbers.map(Upper())  # E: Argument 1 to "map" of "DataStream" has incompatible type "Upper"; expected "MapFunction[int, Never] | Callable[[int], Never]"  [arg-type]
    # The lambda's parameter is the stream's value type.
    numbers.map(lambda x: x.upper())  # E: "int" has no attribute "upper"  [attr-defined]
    # map's result is typed by the function: a DataStream[int] is no DataStream[str].
    words: DataStream[str] = numbers.map(lambda x: x * 2)  # E: Argument 1 to "map" of "DataStream" has incompatible type "Callable[[int], int]"; expected "MapFunction[int, str] | Callable[[int], str]"  [arg-type]  # E: Incompatible return value type (got "int", expected "str")  [return-value]
    # A KeyedProcessFunction on a KeyedStream needs the stream's key and value types.
    numbers.key_by(lambda x: x % 2).process(PerKey())  # E: Argument 1 to "process" of "KeyedStream" has incompatible type "PerKey"; expected "KeyedProcessFunction[int, int, str]"  [arg-type]
    # The element types of a union must match.
    numbers.union(env.from_collection(["a"]))  # E: List item 0 has incompatible type "str"; expected "int"  [list-item]
    # A DataStream takes a ProcessFunction, given its value type.
    numbers.map(str).process(Each())  # E: Argument 1 to "process" of "DataStream" has incompatible type "Each"; expected "ProcessFunction[str, int]"  [arg-type]
    # key_type declares the key's type: the selector must return it.
    numbers.key_by(lambda x: str(x), key_type=Types.INT())  # E: Argument 1 to "key_by" of "DataStream" has incompatible type "Callable[[int], str]"; expected "KeySelector[int, int] | Callable[[int], int]"  [arg-type]  # E: Incompatible return value type (got "str", expected "int")  [return-value]
