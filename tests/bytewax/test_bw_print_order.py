"""The order in which ``inspect`` steps and output steps print under ``run_main``.

Bytewax runs the steps of a batch of items in the order they were added to the flow, so with the
whole input in one batch each printing step prints all its lines, step after step in the flow's
order (``("a", 2)``, ``("b", 4)``, then ``order.i: ...`` twice, then ``order.d: ...`` twice for
``_flow``; with one item per batch, the same item by item: both checked on Bytewax 0.21.1).
In-process the steps of a batch run in that order too (``BatchedRunner``). On Spark the inspectors
and sinks are called on the driver after the job, step after step in that order, as if the whole
input were one batch (migration_guide/bytewax.md, "Differences on Spark")."""

from __future__ import annotations

import pytest

import fs_compat.bytewax.operators as op
from fs_compat.bytewax.connectors.stdio import StdOutSink
from fs_compat.bytewax.dataflow import Dataflow
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
def test_on_spark_each_step_prints_all_its_lines_in_the_flows_order(
    capsys: pytest.CaptureFixture[str],
) -> None:
    run_main(_flow(1), _target="spark")
    assert _printed(capsys) == ONE_BATCH
