"""How a streaming job's keyed steps become stages (``stages_of``): the plan only, no query run.
Each stage is one state operator; its frame is read by one later stage (``ahead``), and records
for a keyed step further down cross the stages between in lanes (``StreamShape.lanes``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest

from fs_compat.common import Configuration, Types
from fs_compat.datastream import KeyedProcessFunction, StreamExecutionEnvironment
from fs_compat.spark import spark_session
from fs_compat.spark._stream import StreamShape, stream_shape

pytestmark = pytest.mark.spark


class Echo(KeyedProcessFunction):
    def process_element(self, value: Any, ctx: Any) -> Iterable[Any]:
        yield value


def _source(env: StreamExecutionEnvironment) -> Any:
    df = spark_session().readStream.format("rate").load()
    return env.from_dataframe(df).map(lambda r: r.value, output_type=Types.LONG())


def _keyed(stream: Any, name: str) -> Any:
    return stream.key_by(lambda v: v % 3).process(Echo(), output_type=Types.LONG()).name(name)


def _env() -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.configure(Configuration().set_string("execution.target", "spark"))
    return env


def _shape(job: Any) -> StreamShape:
    return stream_shape(job._node)


def _names(shape: StreamShape) -> list[list[str]]:
    return [[m.name for m in stage] for stage in shape.stages]


def test_keyed_steps_in_sequence_are_a_chain_of_stages() -> None:
    k = _keyed(_source(_env()), "k")
    shape = _shape(_keyed(k, "a"))
    assert _names(shape) == [["k"], ["a"]]
    assert shape.ahead == (1, None)
    assert [shape.lanes(i) for i in range(2)] == [[], []]


def test_keyed_steps_that_read_one_stage_are_one_stage() -> None:
    k = _keyed(_source(_env()), "k")
    shape = _shape(_keyed(_keyed(k, "a").union(_keyed(k, "b")), "c"))
    assert _names(shape) == [["k"], ["a", "b"], ["c"]]
    assert shape.ahead == (1, 2, None)
    assert shape.reads(2) == [1]


def test_a_step_reading_a_step_and_one_that_reads_it_is_a_stage_after_both() -> None:
    k = _keyed(_source(_env()), "k")
    shape = _shape(_keyed(k.union(_keyed(k, "a")), "b"))
    assert _names(shape) == [["k"], ["a"], ["b"]]
    assert shape.ahead == (1, 2, None)
    # ``k``'s records for ``b`` cross ``a``'s stage in a lane, after ``a``'s slot.
    assert [m.name for m in shape.lanes(1)] == ["b"]
    b = shape.stages[2][0]
    assert (shape.entry(1, b), shape.entry(2, b)) == (1, 0)
    assert [(f.start.name, f.ch) for f in shape.crossing(1)] == [("k", 0)]
    assert [shape.reads(i) for i in range(3)] == [[], [0], [1]]


def test_records_cross_several_stages_where_a_step_reads_one_two_stages_up() -> None:
    # k -> a -> x -> b and k -> b: grouping the readers of k (a and b) would make the stages read
    # each other (a's reads x, x's reads a's), so the stages are the steps' levels.
    k = _keyed(_source(_env()), "k")
    x = _keyed(_keyed(k, "a"), "x")
    shape = _shape(_keyed(k.union(x), "b"))
    assert _names(shape) == [["k"], ["a"], ["x"], ["b"]]
    assert shape.ahead == (1, 2, 3, None)
    assert [[m.name for m in shape.lanes(i)] for i in range(4)] == [[], ["b"], ["b"], []]
    b = shape.stages[3][0]
    assert [shape.entry(i, b) for i in (1, 2, 3)] == [1, 1, 0]
    assert [shape.reads(i) for i in range(4)] == [[], [0], [1], [2]]


def test_a_stage_whose_steps_go_to_the_output_and_on_holds_a_relay_before_its_lanes() -> None:
    k = _keyed(_source(_env()), "k")
    a = _keyed(k, "a")
    shape = _shape(_keyed(k.union(a), "b").union(k))
    assert _names(shape) == [["k"], ["a"], ["b"]]
    assert [shape.relayed(i) for i in range(3)] == [True, True, False]
    assert [shape.has_relay(i) for i in range(3)] == [False, True, True]
    assert shape.entry(1, shape.stages[2][0]) == 2  # a's slot 0, the relay's 1, b's lane 2
    assert [f.start.name for f in shape.outputs()] == ["b"]


def test_keyed_steps_of_two_sources_meet_in_a_stage_after_both() -> None:
    env = _env()
    k1 = _keyed(_source(env), "k1")
    k3 = _keyed(_keyed(_source(env), "k2"), "k3")
    shape = _shape(_keyed(k1.union(k3), "c"))
    stages = _names(shape)
    assert sorted(stages) == [["c"], ["k1"], ["k2"], ["k3"]]
    at = {s[0]: i for i, s in enumerate(stages)}
    assert shape.ahead[at["k1"]] == shape.ahead[at["k3"]] == at["c"]
    assert shape.ahead[at["k2"]] == at["k3"]
    assert all(shape.lanes(i) == [] for i in range(4))
