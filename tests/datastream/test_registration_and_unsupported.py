"""State registration rules and the APIs fs-compat refuses, each with PyFlink's or a clear
message."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from fs_compat.common import Types
from fs_compat.datastream import (
    KeyedProcessFunction,
    MapFunction,
    RuntimeContext,
    StreamExecutionEnvironment,
)
from fs_compat.datastream.state import ListStateDescriptor, ValueStateDescriptor
from fs_compat.runtime import StepError


def _env() -> StreamExecutionEnvironment:
    return StreamExecutionEnvironment.get_execution_environment()


class _TwoKinds(KeyedProcessFunction[Any, int, int]):
    def open(self, runtime_context: RuntimeContext) -> None:
        runtime_context.get_state(ValueStateDescriptor("s", Types.INT()))
        runtime_context.get_list_state(ListStateDescriptor("s", Types.INT()))

    def process_element(self, value: int, ctx: Any) -> Iterator[int]:
        yield value


def test_same_state_name_with_another_type_is_refused() -> None:
    env = _env()
    env.from_collection([1]).key_by(lambda v: v).process(_TwoKinds()).add_sink(_Drop())
    with pytest.raises(StepError, match=r"The state name 's' is already in use and not a list state\."):
        env.execute()


class _Unkeyed(MapFunction[int, int]):
    def open(self, runtime_context: RuntimeContext) -> None:
        runtime_context.get_state(ValueStateDescriptor("v", Types.INT()))

    def map(self, value: int) -> int:
        return value


def test_state_outside_a_keyed_stream_is_refused() -> None:
    env = _env()
    env.from_collection([1]).map(_Unkeyed()).add_sink(_Drop())
    with pytest.raises(
        StepError, match=r"This state is only accessible by functions executed on a KeyedStream\."
    ):
        env.execute()


class _Drop:
    def invoke(self, value: Any) -> None:
        pass


def test_project_keeps_the_named_fields() -> None:
    env = _env()
    ds = env.from_collection([(1, 2, 3, 4), (5, 6, 7, 8)]).project(1, 3)
    assert ds.execute_and_collect(limit=10) == [(2, 4), (6, 8)]


@pytest.mark.parametrize(
    ("call", "api"),
    [
        (lambda env: env.get_execution_plan(), "StreamExecutionEnvironment.get_execution_plan"),
        (lambda env: env.execute_async(), "StreamExecutionEnvironment.execute_async"),
        (lambda env: env.add_jars("x.jar"), "StreamExecutionEnvironment.add_jars"),
        (lambda env: env.from_source(None, None, "s"), "StreamExecutionEnvironment.from_source"),
        (lambda env: env.from_collection([1]).cache(), "DataStream.cache"),
    ],
)
def test_unsupported_apis_name_themselves_and_the_alternative(call: Any, api: str) -> None:
    with pytest.raises(NotImplementedError, match=rf"^{api} is not supported by fs-compat; \w"):
        call(_env())


def test_checkpointing_is_accepted() -> None:
    env = _env()
    assert env.enable_checkpointing(1000) is env
