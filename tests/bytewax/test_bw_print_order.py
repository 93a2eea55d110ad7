"""The order in which ``inspect`` steps and output steps print under ``run_main``.

Bytewax runs the steps of a batch of items in the order they were added to the flow, so with the
whole input in one batch each printing step prints all its lines, step after step in the flow's
order (``("a", 2)``, ``("b", 4)``, then ``order.i: ...`` twice, then ``order.d: ...`` twice for
``_flow``; with one item per batch, the same item by item: both checked on Bytewax 0.21.1).
In-process the steps of a batch run in that order too (``BatchedRunner``). On Spark the inspectors
and sinks are called on the driver after the job, batch by batch (each record carries the origin of
its source batch through Spark's passes: ``LocalConfig.origins``) and in each batch in that order,
so the lines come as in-process (migration_guide/bytewax.md, "Differences on Spark")."""

from __future__ import annotations

from typing import Any

import pytest

import fs_compat.bytewax.operators as op
from fs_compat.bytewax.connectors.stdio import StdOutSink
from fs_compat.bytewax.dataflow import Dataflow
from fs_compat.bytewax.inputs import FixedPartitionedSource, StatefulSourcePartition
from fs_compat.bytewax.testing import TestingSource, run_main

ONE_BATCH = [
    "('a', 2)",
    "('b', 4)",
    "order.i: ('a', 1)",
    "order.i: ('b', 2)",
    "order.d: ('a', 2)",
    "order.d: ('b', 4)",
]


def _flow(batch_size: int) -> Dataflow:
    flow = Dataflow("order")
    inp = op.input("inp", flow, TestingSource([("a", 1), ("b", 2)], batch_size=batch_size))
    doubled = op.map("doubled", inp, lambda kv: (kv[0], kv[1] * 2))
    op.output("out", doubled, StdOutSink())  # added before the inspect steps
    op.inspect("i", inp)
    op.inspect("d", doubled)
    return flow


def _printed(capsys: pytest.CaptureFixture[str]) -> list[str]:
    return [line for line in capsys.readouterr().out.splitlines() if not line.startswith("Spark UI")]


def test_in_process_each_batch_passes_the_steps_in_the_flows_order(
    capsys: pytest.CaptureFixture[str],
) -> None:
    run_main(_flow(1), _target="local")
    # As Bytewax 0.21.1 prints it: item by item (one per batch), the steps in the flow's order.
    assert _printed(capsys) == [
        "('a', 2)",
        "order.i: ('a', 1)",
        "order.d: ('a', 2)",
        "('b', 4)",
        "order.i: ('b', 2)",
        "order.d: ('b', 4)",
    ]


def test_in_process_with_the_whole_input_in_one_batch_it_is_step_after_step(
    capsys: pytest.CaptureFixture[str],
) -> None:
    run_main(_flow(2), _target="local")
    assert _printed(capsys) == ONE_BATCH


@pytest.mark.spark
@pytest.mark.slow
def test_on_spark_the_lines_come_batch_by_batch_as_in_process(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for batch_size in (1, 2):
        run_main(_flow(batch_size), _target="local")
        in_process = _printed(capsys)
        run_main(_flow(batch_size), _target="spark")
        assert _printed(capsys) == in_process
    assert in_process == ONE_BATCH


# Several batches from several partitions, a fan-out to three inspected maps, a join of them, an
# output step, an inspected running count and an inspected count at the end of input: the lines
# interleave batch by batch.


class _Batches(StatefulSourcePartition[Any, int]):
    """Batches given up front; the resume state is the next batch's index."""

    def __init__(self, batches: list[list[Any]]) -> None:
        self.batches = batches
        self.at = 0

    def next_batch(self) -> list[Any]:
        if self.at >= len(self.batches):
            raise StopIteration()
        self.at += 1
        return self.batches[self.at - 1]

    def snapshot(self) -> int:
        return self.at


class _TwoParts(FixedPartitionedSource[Any, int]):
    """Partition ``x`` reads batches of 2, 1 and 1 items, ``y`` one batch of 1, then ends."""

    def list_parts(self) -> list[str]:
        return ["x", "y"]

    def build_part(self, step_id: str, for_part: str, resume_state: int | None) -> _Batches:
        if for_part == "x":
            return _Batches([[("a", 1), ("b", 2)], [("c", 3)], [("a", 4)]])
        return _Batches([[("d", 5)]])


def _fan_out(source: Any, of_rows: bool = False) -> Dataflow:
    flow = Dataflow("fan")
    inp = op.input("inp", flow, source)
    if of_rows:  # a DataFrame's rows of ``id``: keys in order in each batch (see below)
        inp = op.map("kv", inp, lambda row: (f"k{row.id // 3}", row.id))
    tens = op.map("tens", inp, lambda kv: (kv[0], kv[1] * 10))
    op.inspect("t", tens)
    names = op.map("names", inp, lambda kv: (kv[0], f"n{kv[1]}"))
    op.inspect("n", names)
    same = op.map("same", inp, lambda kv: kv)
    op.inspect("s", same)
    joined = op.join("join", tens, names, same)
    op.output("out", joined, StdOutSink())
    # A stateless step before a keyed one (on Spark it runs in that step's route pass).
    ones = op.map("one", inp, lambda kv: (kv[0], 1))
    op.inspect("r", op.stateful_map("run", ones, lambda total, one: ((total or 0) + one, (total or 0) + one)))
    op.inspect("c", op.count_final("count", inp, lambda kv: kv[0]))
    return flow


#: In-process, with ``_TwoParts``: x's first batch, y's, then x's next two, then the counts.
FAN_OUT = [
    "fan.t: ('a', 10)",
    "fan.t: ('b', 20)",
    "fan.n: ('a', 'n1')",
    "fan.n: ('b', 'n2')",
    "fan.s: ('a', 1)",
    "fan.s: ('b', 2)",
    "('a', (10, 'n1', 1))",
    "('b', (20, 'n2', 2))",
    "fan.r: ('a', 1)",
    "fan.r: ('b', 1)",
    "fan.t: ('d', 50)",
    "fan.n: ('d', 'n5')",
    "fan.s: ('d', 5)",
    "('d', (50, 'n5', 5))",
    "fan.r: ('d', 1)",
    "fan.t: ('c', 30)",
    "fan.n: ('c', 'n3')",
    "fan.s: ('c', 3)",
    "('c', (30, 'n3', 3))",
    "fan.r: ('c', 1)",
    "fan.t: ('a', 40)",
    "fan.n: ('a', 'n4')",
    "fan.s: ('a', 4)",
    "('a', (40, 'n4', 4))",
    "fan.r: ('a', 2)",
    "fan.c: ('a', 2)",
    "fan.c: ('b', 1)",
    "fan.c: ('c', 1)",
    "fan.c: ('d', 1)",
]


def test_in_process_a_fan_out_prints_batch_by_batch(capsys: pytest.CaptureFixture[str]) -> None:
    run_main(_fan_out(_TwoParts()), _target="local")
    assert _printed(capsys) == FAN_OUT


@pytest.mark.spark
@pytest.mark.slow
def test_on_spark_a_fan_out_of_a_partitioned_source_prints_as_in_process(
    capsys: pytest.CaptureFixture[str],
) -> None:
    run_main(_fan_out(_TwoParts()), _target="spark")
    assert _printed(capsys) == FAN_OUT


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.classic_only  # Connect slice: README
def test_on_spark_a_fan_out_of_a_testing_source_prints_as_in_process(
    capsys: pytest.CaptureFixture[str],
) -> None:
    items = [("a", 1), ("b", 2), ("a", 3), ("c", 4), ("b", 5)]  # each batch's keys in order
    run_main(_fan_out(TestingSource(items, batch_size=2)), _target="local")
    in_process = _printed(capsys)
    # Two items per batch: each step prints both items of a batch before the next step does.
    assert in_process[:4] == [
        "fan.t: ('a', 10)",
        "fan.t: ('b', 20)",
        "fan.n: ('a', 'n1')",
        "fan.n: ('b', 'n2')",
    ]
    run_main(_fan_out(TestingSource(items, batch_size=2)), _target="spark")
    assert _printed(capsys) == in_process


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.classic_only  # Connect slice: README
def test_on_spark_a_fan_out_of_a_dataframe_prints_as_in_process(capsys: pytest.CaptureFixture[str]) -> None:
    from fs_compat.bytewax.spark import DataFrameSource
    from fs_compat.spark import spark_session

    # 7 rows in 3 partitions, read 2 rows a batch. A keyed step handles the keys of a batch in
    # key order in-process and in arrival order on Spark (migration_guide/bytewax.md), so each
    # batch's keys come in order here.
    df = spark_session().range(0, 7, 1, 3)
    run_main(_fan_out(DataFrameSource(df, batch_size=2), of_rows=True), _target="local")
    in_process = _printed(capsys)
    assert in_process[:3] == ["fan.t: ('k0', 0)", "fan.t: ('k0', 10)", "fan.n: ('k0', 'n0')"]
    run_main(_fan_out(DataFrameSource(df, batch_size=2), of_rows=True), _target="spark")
    assert _printed(capsys) == in_process


def _two_ends() -> Dataflow:
    """Two steps that emit at the end of input, their inspect steps added in the other order."""
    flow = Dataflow("ends")
    inp = op.input("inp", flow, TestingSource([("a", 1), ("b", 2), ("a", 3)]))
    counts = op.count_final("count", inp, lambda kv: kv[0])
    sums = op.reduce_final("sum", inp, lambda x, y: x + y)
    op.inspect("s", sums)
    op.inspect("c", counts)
    op.inspect("i", inp)
    return flow


@pytest.mark.spark
@pytest.mark.slow
def test_on_spark_what_steps_emit_at_the_end_comes_in_the_order_they_end(
    capsys: pytest.CaptureFixture[str],
) -> None:
    run_main(_two_ends(), _target="local")
    in_process = _printed(capsys)
    # The items as they come, then the counts (their step ends first), then the sums.
    assert in_process == [
        "ends.i: ('a', 1)",
        "ends.i: ('b', 2)",
        "ends.i: ('a', 3)",
        "ends.c: ('a', 2)",
        "ends.c: ('b', 1)",
        "ends.s: ('a', 4)",
        "ends.s: ('b', 2)",
    ]
    run_main(_two_ends(), _target="spark")
    assert _printed(capsys) == in_process
