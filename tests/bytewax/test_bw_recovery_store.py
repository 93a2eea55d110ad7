"""Recovery as Bytewax 0.21.1 has it: a run with a ``RecoveryConfig`` resumes where the last one
stopped (after an end of input or an abort), at the last snapshot its epochs took, with each key's
state; the recovery store's partitions are checked before a run starts."""

from __future__ import annotations

import os
import shutil
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

import fs_compat.bytewax.operators as op
from fs_compat.bytewax.dataflow import Dataflow
from fs_compat.bytewax.recovery import (
    InconsistentPartitionsError,
    MissingPartitionsError,
    NoPartitionsError,
    RecoveryConfig,
    init_db_dir,
)
from fs_compat.bytewax.testing import TestingSink, TestingSource, run_main

pytestmark = pytest.mark.in_process(
    "recovery (run_main recovery_config, TestingSource.ABORT)", streaming=True
)

EOF, ABORT = TestingSource.EOF, TestingSource.ABORT
EVERY_ITEM = timedelta(0)  # an epoch, hence a snapshot, after every item
LONG_EPOCH = timedelta(seconds=30)  # no epoch closes during these short runs


class Runs:
    """One flow run again and again against the same recovery store."""

    def __init__(self, items: list[Any], config: RecoveryConfig, epoch: timedelta, keyed_max: bool = False):
        self.out: list[Any] = []
        self.flow = Dataflow("store")
        s = op.input("src", self.flow, TestingSource(items))
        if keyed_max:
            s = op.stateful_map("hi", s, lambda hi, v: (max(hi or 0, v),) * 2)
        op.output("sink", s, TestingSink(self.out))
        self.config, self.epoch = config, epoch

    def next(self) -> list[Any]:
        self.out.clear()
        run_main(self.flow, epoch_interval=self.epoch, recovery_config=self.config)
        return list(self.out)

    def take(self, n: int) -> list[list[Any]]:
        return [self.next() for _ in range(n)]


@pytest.mark.parametrize(
    ("items", "epoch", "expected"),
    [
        # No epoch closed before the abort: nothing was saved, the next run starts over.
        (["a", "b", ABORT(), "c"], LONG_EPOCH, [["a", "b"], ["a", "b", "c"]]),
        # A snapshot after every item: the next run goes on after the abort.
        (["a", "b", ABORT(), "c"], EVERY_ITEM, [["a", "b"], ["c"]]),
        # An end of input is a place to continue from, epochs or not; a finished input stays finished.
        (["a", EOF(), "b", "c"], LONG_EPOCH, [["a"], ["b", "c"], [], []]),
    ],
    ids=["abort-before-any-snapshot", "abort-after-snapshots", "eof-continuations"],
)
def test_where_the_next_run_starts(
    items: list[Any], epoch: timedelta, expected: list[list[Any]], recovery_config: RecoveryConfig
) -> None:
    assert Runs(items, recovery_config, epoch).take(len(expected)) == expected


def test_continuations_with_a_backup_interval_longer_than_the_runs(tmp_path: Path) -> None:
    init_db_dir(tmp_path, 1)
    config = RecoveryConfig(str(tmp_path), backup_interval=timedelta(seconds=20))
    items = [10, EOF(), 11, EOF(), 12, EOF(), 13]
    assert Runs(items, config, LONG_EPOCH).take(5) == [[10], [11], [12], [13], []]


def test_continuations_keep_each_keys_state(recovery_config: RecoveryConfig) -> None:
    items = [("p", 2), ("q", 7), EOF(), ("p", 9), ("q", 3), EOF(), ("p", 1), ("q", 8)]
    assert Runs(items, recovery_config, EVERY_ITEM, keyed_max=True).take(3) == [
        [("p", 2), ("q", 7)],
        [("p", 9), ("q", 7)],
        [("p", 9), ("q", 8)],
    ]


def test_a_store_without_partitions_is_refused(tmp_path: Path) -> None:
    runs = Runs([("p", 1)], RecoveryConfig(str(tmp_path)), EVERY_ITEM, keyed_max=True)
    with pytest.raises(NoPartitionsError):
        runs.next()


def test_a_store_missing_a_partition_is_refused(tmp_path: Path) -> None:
    init_db_dir(tmp_path, 2)
    (tmp_path / "part-1.sqlite3").unlink()
    runs = Runs([("p", 1)], RecoveryConfig(str(tmp_path)), EVERY_ITEM, keyed_max=True)
    with pytest.raises(MissingPartitionsError):
        runs.next()


def test_partitions_from_different_points_in_time_are_refused(tmp_path: Path) -> None:
    init_db_dir(tmp_path, 2)
    fresh = tmp_path / "fresh"
    os.mkdir(fresh)
    for i in range(2):
        shutil.copy(tmp_path / f"part-{i}.sqlite3", fresh)
    # No backup delay: once the first run is over, the store has no state of the first epoch.
    config = RecoveryConfig(str(tmp_path), backup_interval=timedelta(0))
    runs = Runs([("p", 5), ("q", 6), ABORT(), ("p", 7)], config, EVERY_ITEM, keyed_max=True)
    assert runs.next() == [("p", 5), ("q", 6)]
    shutil.copy(fresh / "part-1.sqlite3", tmp_path / "part-1.sqlite3")  # one partition goes back in time
    with pytest.raises(InconsistentPartitionsError):
        runs.next()
