"""The order in which ``inspect`` steps and output steps print under ``run_main``.

Bytewax runs the steps of a batch of items in the order they were added to the flow, so with the
whole input in one batch each printing step prints all its lines, step after step in the flow's
order (``("a", 2)``, ``("b", 4)``, then ``order.i: ...`` twice, then ``order.d: ...`` twice for
``_flow``, checked on Bytewax 0.21.1). On Spark the inspectors and sinks are called on the driver
after the job in that order. In-process, a batch goes depth-first from the source: when a step's
branches print, their lines may come in another order than Bytewax's (migration_guide/bytewax.md,
"Differences on Spark" and "In-process order")."""

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


def test_in_process_a_batch_goes_depth_first_from_the_source(capsys: pytest.CaptureFixture[str]) -> None:
    run_main(_flow(1), _target="local")
    # Bytewax 0.21.1: ('a', 2), order.i: ('a', 1), order.d: ('a', 2), then the same for b.
    assert _printed(capsys) == [
        "('a', 2)",
        "order.d: ('a', 2)",
        "order.i: ('a', 1)",
        "('b', 4)",
        "order.d: ('b', 4)",
        "order.i: ('b', 2)",
    ]


@pytest.mark.spark
@pytest.mark.slow
def test_on_spark_each_step_prints_all_its_lines_in_the_flows_order(
    capsys: pytest.CaptureFixture[str],
) -> None:
    run_main(_flow(1), _target="spark")
    assert _printed(capsys) == ONE_BATCH
