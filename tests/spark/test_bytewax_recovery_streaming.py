"""``run_main(flow, recovery_config=...)`` on the ``spark-streaming`` target: each run is a run of
one Structured Streaming query kept in the recovery directory, Bytewax's epochs its micro-batches
(``fs_compat.bytewax._recover_on_spark``). An abort loses the state of the epoch it falls in (its
output went out: at-least-once), an EOF ends the run with every key's ``on_eof`` and the next run
continues with the state, and the recovery partitions are checked as in-process."""

from __future__ import annotations

import os
import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

import fs_compat.bytewax.operators as op
from fs_compat.bytewax.connectors.files import FileSink
from fs_compat.bytewax.dataflow import Dataflow
from fs_compat.bytewax.errors import BytewaxRuntimeError
from fs_compat.bytewax.inputs import DynamicSource, StatelessSourcePartition
from fs_compat.bytewax.recovery import (
    InconsistentPartitionsError,
    MissingPartitionsError,
    NoPartitionsError,
    RecoveryConfig,
    init_db_dir,
)
from fs_compat.bytewax.testing import TestingSink, TestingSource, run_main

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.classic_only]  # Connect slice: README

STREAMING = "spark-streaming"
EVERY_ITEM = timedelta(0)  # an epoch (a micro-batch, a snapshot) per item
ONE_EPOCH = timedelta(seconds=30)  # the run's items in one epoch


def _config(tmp_path: Path, parts: int = 1) -> RecoveryConfig:
    tmp_path.mkdir(exist_ok=True)
    init_db_dir(tmp_path, parts)
    return RecoveryConfig(str(tmp_path))


def _running_sum(total: int | None, value: int) -> tuple[int, int]:
    total = (total or 0) + value
    return total, total


def _sum_flow(inp: list[Any], out: list[Any]) -> Dataflow:
    """Running sums per key (``stateful_map``: state kept across runs), and the items ``collect``
    holds, emitted at each run's EOF (``on_eof``) only, as ``("sum", ...)`` and ``("list", ...)``."""
    flow = Dataflow("sums")
    s = op.input("inp", flow, TestingSource(inp))
    sums = op.map("sums", op.stateful_map("sum", s, _running_sum), lambda kv: ("sum", kv))
    lists = op.collect("collect", s, timeout=timedelta(hours=1), max_size=100)
    op.output(
        "out", op.merge("both", sums, op.map("lists", lists, lambda kv: ("list", kv))), TestingSink(out)
    )
    return flow


def _run(flow: Dataflow, interval: timedelta, config: RecoveryConfig, out: list[Any]) -> list[Any]:
    out.clear()
    run_main(flow, epoch_interval=interval, recovery_config=config, _target=STREAMING)
    return sorted(out)


def test_an_abort_without_a_snapshot_loses_the_epochs_state_and_the_resume_replays_it(tmp_path: Path) -> None:
    out: list[Any] = []
    flow = _sum_flow([("a", 1), ("a", 2), TestingSource.ABORT(), ("a", 3)], out)
    config = _config(tmp_path)
    # The abort falls in the run's only epoch: its output went out, its state was not committed,
    # and an abort is no EOF (collect emits nothing).
    assert _run(flow, ONE_EPOCH, config, out) == [("sum", ("a", 1)), ("sum", ("a", 3))]
    # So the resume reads the items again, from the state before them (the abort fired once).
    again = [("list", ("a", [1, 2, 3])), ("sum", ("a", 1)), ("sum", ("a", 3)), ("sum", ("a", 6))]
    assert _run(flow, ONE_EPOCH, config, out) == again
    # As in-process and in Bytewax: a fired ABORT() does not count in the source's resume index,
    # so the next run reads the last item again.
    assert _run(flow, ONE_EPOCH, config, out) == [("list", ("a", [3])), ("sum", ("a", 9))]


def test_an_abort_after_snapshots_resumes_with_their_state(tmp_path: Path) -> None:
    out: list[Any] = []
    flow = _sum_flow([("a", 1), ("a", 2), TestingSource.ABORT(), ("a", 3)], out)
    config = _config(tmp_path)
    # An epoch per item: both are committed, the abort comes right after (no EOF: no list).
    assert _run(flow, EVERY_ITEM, config, out) == [("sum", ("a", 1)), ("sum", ("a", 3))]
    assert _run(flow, EVERY_ITEM, config, out) == [("list", ("a", [1, 2, 3])), ("sum", ("a", 6))]


def test_a_continuation_keeps_the_state_and_gives_each_run_its_eof(tmp_path: Path) -> None:
    """``stateful_map`` keeps its sums across runs; ``collect`` emits what it holds at each run's
    EOF (``on_eof``), and starts afresh in the next run."""
    out: list[Any] = []
    inp = [("a", 1), ("b", 2), TestingSource.EOF(), ("a", 3), TestingSource.EOF(), ("b", 4)]
    flow = _sum_flow(inp, out)
    config = _config(tmp_path)
    first = [("list", ("a", [1])), ("list", ("b", [2])), ("sum", ("a", 1)), ("sum", ("b", 2))]
    assert _run(flow, ONE_EPOCH, config, out) == first
    assert _run(flow, ONE_EPOCH, config, out) == [("list", ("a", [3])), ("sum", ("a", 4))]
    assert _run(flow, ONE_EPOCH, config, out) == [("list", ("b", [4])), ("sum", ("b", 6))]
    assert _run(flow, ONE_EPOCH, config, out) == []


class _FailWhile:
    """A mapper that raises while ``flag`` exists (it runs in Spark's workers: a file tells it)."""

    def __init__(self, flag: Path) -> None:
        self.flag = str(flag)

    def __call__(self, item: Any) -> Any:
        if os.path.exists(self.flag):
            raise ValueError("failing")
        return item


def test_a_failed_run_is_read_again_by_the_next(tmp_path: Path) -> None:
    """A step's error fails the run before its micro-batch commits: the next run's query runs it
    again, as in-process the next run reads the items again from the last snapshot."""
    out: list[Any] = []
    flag = tmp_path / "fail"
    flag.touch()
    flow = Dataflow("failing")
    s = op.map("check", op.input("inp", flow, TestingSource([("a", 1), ("a", 2)])), _FailWhile(flag))
    op.output("out", op.stateful_map("sum", s, _running_sum), TestingSink(out))
    config = _config(tmp_path / "db")
    with pytest.raises(BytewaxRuntimeError, match="failing"):
        _run(flow, ONE_EPOCH, config, out)
    flag.unlink()
    assert _run(flow, ONE_EPOCH, config, out) == [("a", 1), ("a", 3)]
    assert _run(flow, ONE_EPOCH, config, out) == []


def test_the_recovery_partitions_are_checked_as_in_process(tmp_path: Path) -> None:
    flow = _sum_flow([("a", 1)], [])
    with pytest.raises(NoPartitionsError):
        run_main(flow, epoch_interval=EVERY_ITEM, recovery_config=RecoveryConfig(tmp_path), _target=STREAMING)
    config = _config(tmp_path, 3)
    os.remove(tmp_path / "part-0.sqlite3")
    with pytest.raises(MissingPartitionsError):
        run_main(flow, epoch_interval=EVERY_ITEM, recovery_config=config, _target=STREAMING)
    init_db_dir(tmp_path, 2)  # part-0 and part-1 of 2, part-2 of 3
    with pytest.raises(InconsistentPartitionsError):
        run_main(flow, epoch_interval=EVERY_ITEM, recovery_config=config, _target=STREAMING)


def test_without_recovery_a_run_ends_at_eof_or_stops_at_abort_and_keeps_nothing() -> None:
    """As in-process without a recovery_config: the run reads from the start up to the marker; at
    EOF the input ends (collect emits), at ABORT it stops (no EOF); nothing is kept."""
    out: list[Any] = []
    flow = _sum_flow([("a", 1), ("a", 2), TestingSource.EOF(), ("a", 3)], out)
    for _ in range(2):
        out.clear()
        run_main(flow, epoch_interval=EVERY_ITEM, _target=STREAMING)
        assert sorted(out) == [("list", ("a", [1, 2])), ("sum", ("a", 1)), ("sum", ("a", 3))]
    out.clear()
    run_main(_sum_flow([("a", 1), TestingSource.ABORT(), ("a", 2)], out), _target=STREAMING)
    assert out == [("sum", ("a", 1))]


def test_recovery_refuses_a_fixed_partitioned_sink(tmp_path: Path) -> None:
    flow = Dataflow("files")
    s = op.input("inp", flow, TestingSource([("k", "a")]))
    op.output("out", s, FileSink(tmp_path / "out.txt"))
    expected = "step files.out: a FileSink (a FixedPartitionedSink) with run_main(recovery_config=...)"
    with pytest.raises(NotImplementedError, match=re.escape(expected)):
        run_main(flow, recovery_config=_config(tmp_path / "db"), _target=STREAMING)


class _Items(DynamicSource[int]):
    def build(self, step_id: str, worker_index: int, worker_count: int) -> StatelessSourcePartition[int]:
        raise AssertionError("not built")


def test_recovery_resumes_testing_sources_only(tmp_path: Path) -> None:
    flow = Dataflow("other")
    op.output("out", op.input("events", flow, _Items()), TestingSink([]))
    expected = (
        "step other.events: run_main(recovery_config=...) on the spark-streaming target takes TestingSource"
    )
    with pytest.raises(NotImplementedError, match=re.escape(expected)):
        run_main(flow, recovery_config=_config(tmp_path), _target=STREAMING)
