"""The ``spark-streaming`` target: a named slice of the PyFlink, window and Bytewax tests runs,
unchanged, on ``local``, ``spark`` and ``spark-streaming``, so each gives the test's expected
results: here the Bytewax ones (``SLICE``, through the ``target`` fixture: ``FS_COMPAT_TARGET``);
the PyFlink and window ones are marked ``streaming_target`` in their modules, whose target
fixtures have a ``spark-streaming`` case (``tests/conftest.py``). On ``spark-streaming`` the job
is a Structured Streaming query over its input cut into micro-batches and restarted from its
checkpoint halfway (``fs_compat.spark.run_bounded_stream``); the input ends as a bounded stream
ends in Flink and Bytewax (watermark to ``Long.MAX_VALUE``, then ``end_input``, Bytewax's EOF).

The slice covers keyed state and timers, windows whose event-time timers fire only at the end of
the input, connect and union, a chain of keyed steps, Bytewax ``stateful_map``, EOF-emitting
operators, ``join`` and windows. A streaming query costs seconds, so only this
slice runs there; the tests of the ported suites that cannot run on ``spark-streaming`` are
listed, with the reason, in migration_guide/spark.md ("The spark-streaming test target").
"""

from __future__ import annotations

import importlib
import inspect
import sys
from pathlib import Path
from typing import Any

import pytest

from fs_compat.execution import LOCAL, SPARK, SPARK_STREAMING, TARGET_ENV
from fs_compat.runtime import LocalConfig, SinkNode, SourceNode
from fs_compat.spark import run_bounded_stream, spark_session
from fs_compat.spark._bounded_stream import split

pytestmark = [pytest.mark.spark, pytest.mark.slow]

for _suite in ("datastream", "bytewax"):  # the ported suites' modules, as pytest imports them
    _path = str(Path(__file__).parents[1] / _suite)
    if _path not in sys.path:
        sys.path.insert(0, _path)

#: (module, test): test functions of the Bytewax suite, which pick their target through
#: ``FS_COMPAT_TARGET`` (``run_main``). The PyFlink and window tests of the slice are marked
#: ``streaming_target`` in their modules, whose target fixtures have a ``spark-streaming`` case
#: (deselected elsewhere: ``tests/conftest.py``).
SLICE = [
    # Bytewax: stateful_flat_map, EOF emission after a restart, join, windows.
    ("test_bw_ops_stateful", "test_stateful_flat_map_emits_what_the_mapper_returns"),
    ("test_bw_ops_stateful", "test_collect_emits_full_lists_and_the_rest_at_the_end"),
    ("test_bw_ops_stateful", "test_max_final"),
    ("test_bw_ops_stateful", "test_join_product_final"),
    ("test_bw_window_ops", "test_collect_window"),
    ("test_bw_window_ops", "test_collect_window_waiting_forever_takes_items_out_of_order"),
]

#: What of the slice also runs over Spark Connect (``make unit-connect``): its ``spark-streaming``
#: case. The ported tests run there on ``spark`` already (the ``*_on_spark`` modules) and a
#: streaming query costs seconds, so the other cases are marked ``classic_only`` (deselected over
#: Connect: ``tests/conftest.py``).
OVER_CONNECT = {"test_bw_ops_stateful::test_collect_emits_full_lists_and_the_rest_at_the_end"}

TARGETS = [
    pytest.param(LOCAL, marks=pytest.mark.classic_only),
    pytest.param(SPARK, marks=pytest.mark.classic_only),
    SPARK_STREAMING,
]

_SLICE_CASES = [
    pytest.param(
        module,
        name,
        id=f"{module}::{name}",
        marks=() if f"{module}::{name}" in OVER_CONNECT else pytest.mark.classic_only,
    )
    for module, name in SLICE
]


@pytest.fixture(params=TARGETS)
def target(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The target every job of the test runs on (``FS_COMPAT_TARGET``: PyFlink environments that
    configure none, and Bytewax's ``run_main``)."""
    monkeypatch.setenv(TARGET_ENV, request.param)
    return str(request.param)


@pytest.mark.streaming_target(connect=True)
@pytest.mark.parametrize(("module", "name"), _SLICE_CASES)
def test_ported_test_passes_on_the_target(
    module: str, name: str, target: str, request: pytest.FixtureRequest
) -> None:
    found = importlib.import_module(module)
    test = getattr(found, name)
    test(**{arg: request.getfixturevalue(arg) for arg in inspect.signature(test).parameters})


# The target's own behaviour. --------------------------------------------------------------------


def test_records_are_cut_into_micro_batches_and_parts() -> None:
    assert split(list(range(6)), 2, 1) == (([0, 1, 2],), ([3, 4, 5],))
    assert split(list(range(7)), 4, 1) == (([0, 1], [2, 3]), ([4, 5], [6]))
    assert split(list(range(3)), 3, 2) == (([0],), ([1],), ([2],))
    assert split([1], 2, 1) == ((), ([1],))


def _collected(micro_batches: int, restarts: int) -> list[Any]:
    out: list[Any] = []
    source = SourceNode("numbers", items=list(range(10)))
    sink = SinkNode("out", [_edge(source)], consume=out.append)
    run_bounded_stream(spark_session(), [sink], LocalConfig(), micro_batches=micro_batches, restarts=restarts)
    return out


def _edge(node: Any) -> Any:
    from fs_compat.runtime import Edge

    return Edge(node)


@pytest.mark.parametrize(("micro_batches", "restarts"), [(1, 0), (5, 2)])
def test_a_stateless_job_gives_every_record_once_whatever_the_cuts(micro_batches: int, restarts: int) -> None:
    assert _collected(micro_batches, restarts) == list(range(10))


def _stateful_map_flow(out: list[Any]) -> Any:
    import fs_compat.bytewax.operators as op
    from fs_compat.bytewax.dataflow import Dataflow
    from fs_compat.bytewax.testing import TestingSink, TestingSource

    flow = Dataflow("totals")
    sales = [("north", 12), ("south", 5), ("north", 3), ("east", 9), ("south", 20), ("north", 7)]
    totals = op.stateful_map("run", op.input("src", flow, TestingSource(sales)), _running_total)
    op.output("sink", totals, TestingSink(out))
    return flow


def _running_total(total: int | None, value: int) -> tuple[int, int]:
    total = (total or 0) + value
    return total, total


@pytest.mark.streaming_target
def test_bytewax_stateful_map_keeps_each_keys_state_and_order(target: str) -> None:
    """Bytewax's ``stateful_map`` over several keys: each key's running totals, in its order
    (keys interleave differently on ``spark-streaming``: key groups run in separate tasks)."""
    from fs_compat.bytewax.testing import run_main

    out: list[Any] = []
    run_main(_stateful_map_flow(out))
    per_key: dict[str, list[int]] = {}
    for key, total in out:
        per_key.setdefault(key, []).append(total)
    assert per_key == {"north": [12, 15, 22], "south": [5, 25], "east": [9]}
