"""Dataflows on Spark: operator tests of this suite re-run with ``run_main`` on the ``spark``
target (``FS_COMPAT_TARGET=spark``; the same switch runs the whole Bytewax suite there), Spark
DataFrames in and out of a flow (``fs_compat.bytewax.spark``), and what stays in-process only.

The tests here re-run are a cheap, representative subset; ``FS_COMPAT_TARGET=spark pytest
tests/bytewax`` runs all of them (see migration_guide/bytewax.md, "On Spark", for the ones that
cannot pass there and why).
"""

from __future__ import annotations

import importlib
import inspect
import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

import fs_compat.bytewax.operators as op
from fs_compat.bytewax.dataflow import Dataflow
from fs_compat.bytewax.inputs import (
    AbortExecution,
    DynamicSource,
    FixedPartitionedSource,
    StatefulSourcePartition,
    StatelessSourcePartition,
)
from fs_compat.bytewax.operators import StatefulLogic
from fs_compat.bytewax.spark import DataFrameSource, to_dataframe
from fs_compat.bytewax.testing import TestingSink, TestingSource, run_main
from fs_compat.common import Types

spark_slow = [pytest.mark.spark, pytest.mark.slow]

#: Tests (module, test) of the in-process suite re-run on Spark: every core stateful operator, EOF
#: emission (``*_final``, ``collect``, ``join``), windows, branches, merges, ``inspect`` as the
#: last step (it prints there too), and the error types.
ON_SPARK = [
    ("test_bw_ops_stateful", "test_stateful_map_threads_each_keys_state"),
    ("test_bw_ops_stateful", "test_stateful_map_mapper_must_return_a_2_tuple"),
    ("test_bw_ops_stateful", "test_stateful_flat_map_emits_what_the_mapper_returns"),
    ("test_bw_ops_stateful", "test_stateful_keeps_one_logic_per_key"),
    ("test_bw_ops_stateful", "test_collect_emits_full_lists_and_the_rest_at_the_end"),
    ("test_bw_ops_stateful", "test_join_running"),
    ("test_bw_ops_stateful", "test_join_product_final"),
    ("test_bw_ops_stateless", "test_inspect_calls_the_inspector_with_the_steps_full_id"),
    ("test_bw_ops_stateless", "test_inspect_debug_also_passes_epoch_and_worker"),
    ("test_bw_ops_stateless", "test_inspect_as_the_last_step_sees_every_item"),
    ("test_bw_ops_stateless", "test_inspect_prints_by_default_also_as_the_last_step"),
    ("test_bw_ops_stateless", "test_branch_splits_by_predicate"),
    ("test_bw_ops_stateless", "test_branch_predicate_must_return_a_bool"),
    ("test_bw_ops_stateful", "test_count_final"),
    ("test_bw_ops_stateful", "test_fold_final"),
    ("test_bw_ops_stateful", "test_reduce_final_over_batches"),
    ("test_bw_ops_stateful", "test_max_final"),
    ("test_bw_ops_stateless", "test_merge_interleaves_its_inputs_item_by_item"),
    ("test_bw_ops_stateless", "test_raises_fails_on_its_first_item"),
    ("test_bw_ops_stateless", "test_a_stateful_step_needs_key_value_pairs"),
    ("test_bw_ops_stateless", "test_a_stateful_step_needs_str_keys"),
    ("test_bw_window_ops", "test_count_window"),
    ("test_bw_window_ops", "test_collect_window"),
    ("test_bw_window_ops", "test_join_window_running"),
]


@pytest.mark.parametrize(("module", "name"), ON_SPARK, ids=[f"{m[8:]}::{n}" for m, n in ON_SPARK])
@pytest.mark.spark
@pytest.mark.slow
def test_suite_test_passes_on_spark(
    module: str, name: str, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    monkeypatch.setenv("FS_COMPAT_TARGET", "spark")
    test = getattr(importlib.import_module(module), name)
    test(**{arg: request.getfixturevalue(arg) for arg in inspect.signature(test).parameters})


# DataFrames in and out. ------------------------------------------------------------------------


def _count(n: int | None, _row: Any) -> tuple[int, int]:
    n = (n or 0) + 1
    return n, n


def _counting_flow(source: Any) -> tuple[Dataflow, Any]:
    flow = Dataflow("df")
    s = op.input("inp", flow, source)
    s = op.key_on("key", s, lambda row: row.user)
    s = op.stateful_map("count", s, _count)
    return flow, s


ROWS = [("a", 1), ("b", 2), ("a", 3)]
COUNTS = [("a", 1), ("b", 1), ("a", 2)]


@pytest.mark.spark
@pytest.mark.slow
def test_dataframe_in_and_out_on_spark() -> None:
    from fs_compat.spark import spark_session

    df = spark_session().createDataFrame(ROWS, "user STRING, n LONG")
    _flow, s = _counting_flow(DataFrameSource(df))
    out = to_dataframe(s, Types.ROW_NAMED(["user", "count"], [Types.STRING(), Types.LONG()]), parallelism=2)
    assert not out.isStreaming
    assert [(f.name, f.dataType.simpleString()) for f in out.schema.fields] == [
        ("user", "string"),
        ("count", "bigint"),
    ]
    assert sorted(tuple(r) for r in out.collect()) == sorted(COUNTS)
    # The items are Rows with the DataFrame's field names; no output type: pickled values.
    rows = to_dataframe(op.map("n", op.input("inp", Dataflow("rows"), DataFrameSource(df)), lambda r: r.n))
    import pickle

    assert [pickle.loads(r.value) for r in rows.collect()] == [1, 2, 3]


@pytest.mark.spark
@pytest.mark.slow
def test_dataframe_source_with_run_main_in_process_and_on_spark() -> None:
    from fs_compat.spark import spark_session

    df = spark_session().createDataFrame(ROWS, "user STRING, n LONG")
    for target in ("local", "spark"):
        out: list[Any] = []
        flow, s = _counting_flow(DataFrameSource(df))
        op.output("out", s, TestingSink(out))
        run_main(flow, _target=target)
        assert out == COUNTS, target


# In-process only. ------------------------------------------------------------------------------


@pytest.mark.parametrize("marker", [TestingSource.EOF(), TestingSource.ABORT()], ids=["EOF", "ABORT"])
def test_eof_and_abort_markers_are_refused_on_the_spark_target(marker: Any) -> None:
    """A Spark batch run reads its whole input once (on spark-streaming they are honoured:
    tests/spark/test_bytewax_recovery_streaming.py)."""
    flow = Dataflow("test_df")
    op.output("out", op.input("inp", flow, TestingSource([1, marker, 2])), TestingSink([]))
    name = type(marker).__name__
    expected = (
        f"step test_df.inp: TestingSource.{name}() ends or aborts a run, which a Spark batch run cannot do"
    )
    with pytest.raises(NotImplementedError, match=re.escape(expected)):
        run_main(flow, _target="spark")


def test_pause_marker_is_in_process_only(recovery_config: Any) -> None:
    flow = Dataflow("test_df")
    inp = TestingSource([1, TestingSource.PAUSE(timedelta(seconds=1)), 2])
    op.output("out", op.input("inp", flow, inp), TestingSink([]))
    for config in (None, recovery_config):
        with pytest.raises(NotImplementedError, match=re.escape("TestingSource.PAUSE() is in-process only")):
            run_main(flow, recovery_config=config, _target="spark-streaming")


def test_recovery_config_is_refused_on_the_spark_target(recovery_config: Any) -> None:
    flow = Dataflow("test_df")
    op.output("out", op.input("inp", flow, TestingSource([1])), TestingSink([]))
    with pytest.raises(
        NotImplementedError, match=re.escape("run_main(recovery_config=...) on the spark target")
    ):
        run_main(flow, recovery_config=recovery_config, _target="spark")
    with pytest.raises(TypeError, match=re.escape("epoch interval must be a `datetime.timedelta`")):
        run_main(flow, epoch_interval=5, _target="spark")  # type: ignore[arg-type]


def test_unknown_target() -> None:
    flow = Dataflow("test_df")
    op.output("out", op.input("inp", flow, TestingSource([1])), TestingSink([]))
    with pytest.raises(ValueError, match="must be 'local', 'spark' or 'spark-streaming', got 'flink'"):
        run_main(flow, _target="flink")


# The in-process runner. -------------------------------------------------------------------------


class KeepLast(StatefulLogic):
    def __init__(self, resume_state: Any) -> None:
        self.state = resume_state

    def on_item(self, value: Any) -> tuple[list[Any], bool]:
        old, self.state = self.state, value
        return [(old, value)], value == "DISCARD"

    def snapshot(self) -> Any:
        return self.state


@pytest.mark.in_process("recovery (run_main recovery_config)", streaming=True)
def test_a_key_discarded_after_a_resume_starts_afresh_within_the_epoch(recovery_config: Any) -> None:
    """The resumed snapshot of a key is gone once its logic is discarded: a later item of the
    key in the same epoch gets ``builder(None)``, as in Bytewax."""
    out: list[Any] = []
    flow = Dataflow("test_df")
    inp = [("a", "a1"), TestingSource.ABORT(), ("a", "DISCARD"), ("a", "a3")]
    op.output("out", op.stateful("s", op.input("inp", flow, TestingSource(inp)), KeepLast), TestingSink(out))
    run_main(flow, epoch_interval=timedelta(0), recovery_config=recovery_config)
    assert out == [("a", (None, "a1"))]
    out.clear()
    run_main(flow, epoch_interval=timedelta(hours=1), recovery_config=recovery_config)
    assert out == [("a", ("a1", "DISCARD")), ("a", (None, "a3"))]


# User-written sources on Spark. ------------------------------------------------------------------


class _Part(StatefulSourcePartition[Any, int]):
    def __init__(self, items: list[Any]) -> None:
        self.batches = [items[i : i + 2] for i in range(0, len(items), 2)]

    def next_batch(self) -> list[Any]:
        if not self.batches:
            raise StopIteration()
        return self.batches.pop(0)

    def snapshot(self) -> int:
        return len(self.batches)


class _Fixed(FixedPartitionedSource[Any, int]):
    def list_parts(self) -> list[str]:
        return ["x", "y"]

    def build_part(self, step_id: str, for_part: str, resume_state: int | None) -> _Part:
        return _Part([f"{for_part}{i}" for i in range(3)])


class _Dynamic(DynamicSource[Any]):
    def build(self, step_id: str, worker_index: int, worker_count: int) -> StatelessSourcePartition[Any]:
        class Part(StatelessSourcePartition[Any]):
            def __init__(self) -> None:
                self.items = [[1, 2], [3]]

            def next_batch(self) -> list[Any]:
                if not self.items:
                    raise StopIteration()
                return self.items.pop(0)

        return Part()


@pytest.mark.spark
@pytest.mark.slow
def test_sources_are_read_by_spark_in_the_order_the_in_process_runner_reads() -> None:
    flow = Dataflow("test_df")
    fixed: list[Any] = []
    dynamic: list[Any] = []
    op.output("a", op.input("fixed", flow, _Fixed()), TestingSink(fixed))
    op.output("b", op.input("dynamic", flow, _Dynamic()), TestingSink(dynamic))
    run_main(flow, _target="spark")  # each partition in a Spark task (a Python data source)
    # As the in-process runner polls them: a batch of each partition in turn.
    assert (fixed, dynamic) == (["x0", "x1", "y0", "y1", "x2", "y2"], [1, 2, 3])


def _arrivals(left_batch: int, right_batch: int, target: str) -> str:
    """The order in which one key's ``stateful_map`` gets the items of two merged sources."""
    out: list[Any] = []
    flow = Dataflow("test_df")
    left = op.input("l", flow, TestingSource([f"L{i}" for i in range(1, 6)], left_batch))
    right = op.input("r", flow, TestingSource([f"R{i}" for i in range(1, 4)], right_batch))
    keyed = op.merge("m", op.key_on("kl", left, lambda _e: "k"), op.key_on("kr", right, lambda _e: "k"))
    seen = op.stateful_map("seen", keyed, lambda s, v: ((s or "") + v, (s or "") + v))
    op.output("out", seen, TestingSink(out))  # one output step: the sources alone ask for the order
    run_main(flow, _target=target)
    return str(out[-1][1])


@pytest.mark.spark
@pytest.mark.slow
def test_a_step_gets_several_sources_items_batch_by_batch_on_spark_as_in_process() -> None:
    # In-process, each source's batch reaches the step whole, the sources' batches in turn.
    expected = {(1, 1): "L1R1L2R2L3R3L4L5", (2, 1): "L1L2R1L3L4R2L5R3", (3, 2): "L1L2L3R1R2L4L5R3"}
    for (left_batch, right_batch), order in expected.items():
        assert _arrivals(left_batch, right_batch, "local") == order
        assert _arrivals(left_batch, right_batch, "spark") == order, (left_batch, right_batch)


class _Counted(DynamicSource[int]):
    """Each build takes the next three numbers of a counter kept in a file, as a source that
    reads a queue would: a second read gets other items."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def build(self, step_id: str, worker_index: int, worker_count: int) -> StatelessSourcePartition[int]:
        start = int(self.path.read_text())
        self.path.write_text(str(start + 3))

        class Part(StatelessSourcePartition[int]):
            def __init__(self) -> None:
                self.items = [[start, start + 1], [start + 2]]

            def next_batch(self) -> list[int]:
                if not self.items:
                    raise StopIteration()
                return self.items.pop(0)

        return Part()


@pytest.mark.spark
@pytest.mark.slow
def test_a_flow_on_spark_reads_its_source_and_calls_each_function_once(tmp_path: Path) -> None:
    counter, calls = tmp_path / "counter", tmp_path / "calls"
    counter.write_text("0")
    calls.write_text("")

    def logged(x: int) -> int:
        with calls.open("a") as f:
            f.write(f"{x}\n")
        return x * 10

    out: list[Any] = []
    flow = Dataflow("test_df")
    op.output("out", op.map("m", op.input("inp", flow, _Counted(counter)), logged), TestingSink(out))
    run_main(flow, _target="spark")
    # One read of the source and one call per item, as in-process: collecting the output in
    # order must not run the plan a second time (a global sort samples its input first).
    assert out == [0, 10, 20]
    assert counter.read_text() == "3"
    assert calls.read_text().split() == ["0", "1", "2"]


class _Aborting(DynamicSource[int]):
    """Gives 1, then raises ``AbortExecution`` (Bytewax's way for a source to stop a run)."""

    def build(self, step_id: str, worker_index: int, worker_count: int) -> StatelessSourcePartition[int]:
        class Part(StatelessSourcePartition[int]):
            def __init__(self) -> None:
                self.done = False

            def next_batch(self) -> list[int]:
                if self.done:
                    raise AbortExecution()
                self.done = True
                return [1]

        return Part()


@pytest.mark.spark
def test_abort_execution_from_a_source_on_spark_raises_the_documented_not_implemented_error() -> None:
    flow = Dataflow("test_df")
    op.output("out", op.input("inp", flow, _Aborting()), TestingSink([]))
    # Raised in a Spark task: the driver gets it back as the NotImplementedError it was, not
    # as pyspark's PythonException.
    with pytest.raises(
        NotImplementedError, match=r"step test_df\.inp: partition '0': AbortExecution is in-process only"
    ):
        run_main(flow, _target="spark")


class _Printing(DynamicSource[int]):
    """Prints when its partition is built and when it ends, as 1brc's source does."""

    def build(self, step_id: str, worker_index: int, worker_count: int) -> StatelessSourcePartition[int]:
        print(f"build {worker_index}/{worker_count}")

        class Part(StatelessSourcePartition[int]):
            def __init__(self) -> None:
                self.left = [[1, 2], [3]]

            def next_batch(self) -> list[int]:
                if not self.left:
                    raise StopIteration()
                return self.left.pop(0)

            def close(self) -> None:
                print("closed")

        return Part()


def _count_and_print(n: int | None, x: int) -> tuple[int, int]:
    n = (n or 0) + 1
    print(f"count {x} {n}")
    return n, n


@pytest.mark.spark
@pytest.mark.slow
def test_on_spark_what_the_functions_print_reaches_the_drivers_stdout(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``print()`` in a source and in the steps' functions (before and after a shuffle): the
    lines come to this process's standard output after the job (each task's lines in order,
    step by step), before the sinks write; also over Spark Connect."""
    out: list[Any] = []
    flow = Dataflow("test_df")
    s = op.map("show", op.input("inp", flow, _Printing()), lambda x: print(f"map {x}") or x)
    counts = op.stateful_map("count", op.key_on("key", s, lambda x: str(x % 2)), _count_and_print)
    op.output("out", counts, TestingSink(out))
    run_main(flow, _target="spark")
    assert sorted(out) == [("0", 1), ("1", 1), ("1", 2)]
    printed = capsys.readouterr().out.splitlines()
    assert printed[:5] == ["build 0/1", "map 1", "map 2", "map 3", "closed"]
    assert printed[5:] == ["count 1 1", "count 2 1", "count 3 2"]


@pytest.mark.spark
@pytest.mark.slow
def test_on_spark_prints_come_before_the_sinks_with_origins_too(capsys: pytest.CaptureFixture[str]) -> None:
    """A flow with two outputs carries its items' origins through Spark's passes; what the
    steps print still reaches standard output, before what the ``StdOutSink`` prints."""
    from fs_compat.bytewax.connectors.stdio import StdOutSink

    out: list[Any] = []
    flow = Dataflow("test_df")
    s = op.map("show", op.input("inp", flow, TestingSource([1, 2])), lambda x: print(f"map {x}") or x * 10)
    op.output("print", s, StdOutSink())
    op.output("out", s, TestingSink(out))
    run_main(flow, _target="spark")
    assert out == [10, 20]
    assert capsys.readouterr().out.splitlines() == ["map 1", "map 2", "10", "20"]
