"""Helpers for testing dataflows (``bytewax.testing``).

>>> from fs_compat.bytewax.dataflow import Dataflow
>>> import fs_compat.bytewax.operators as op
>>> out = []
>>> flow = Dataflow("eg")
>>> s = op.input("inp", flow, TestingSource([1, 2, TestingSource.EOF(), 3]))
>>> op.output("out", s, TestingSink(out))
>>> run_main(flow)
>>> out
[1, 2]
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC as _UTC
from datetime import datetime, timedelta
from itertools import islice
from typing import Any, Generic, TypeVar

from fs_compat.execution import LOCAL as _LOCAL
from fs_compat.execution import SPARK as _SPARK
from fs_compat.execution import SPARK_STREAMING as _SPARK_STREAMING
from fs_compat.execution import resolve_target as _resolve_target

from . import _execution
from .dataflow import Dataflow as _Dataflow
from .inputs import AbortExecution as _AbortExecution
from .inputs import FixedPartitionedSource as _FixedPartitionedSource
from .inputs import StatefulSourcePartition as _StatefulSourcePartition
from .outputs import DynamicSink as _DynamicSink
from .outputs import StatelessSinkPartition as _StatelessSinkPartition
from .recovery import RecoveryConfig as _RecoveryConfig

__all__ = [
    "TestingSink",
    "TestingSource",
    "TimeTestingGetter",
    "cluster_main",
    "ffwd_iter",
    "poll_next_batch",
    "run_main",
]

_X = TypeVar("_X")


@dataclass
class TimeTestingGetter:
    """A settable clock for tests: ``get()`` returns ``now``; ``advance(td)`` moves it.

    >>> from datetime import datetime, timedelta, timezone
    >>> clock = TimeTestingGetter(datetime(2024, 1, 1, tzinfo=timezone.utc))
    >>> clock.advance(timedelta(seconds=5))
    >>> clock.get().second
    5
    """

    __test__ = False

    now: datetime

    def advance(self, td: timedelta) -> None:
        """Move the current time forward by ``td``."""
        self.now += td

    def get(self) -> datetime:
        """The current time."""
        return self.now


def ffwd_iter(it: Iterator[Any], n: int) -> None:
    """Skip ``n`` items of an iterator."""
    next(islice(it, n, n), None)


class _IterPartition(_StatefulSourcePartition[_X, int]):
    """Reads the iterable in batches; the resume state is the index of the next item."""

    def __init__(self, items: Iterable[Any], batch_size: int, resume_state: int | None) -> None:
        self._index = 0 if resume_state is None else resume_state
        self._batch_size = batch_size
        self._it = iter(items)
        ffwd_iter(self._it, self._index)
        self._pending: BaseException | None = None
        self._awake: datetime | None = None

    def next_batch(self) -> list[_X]:
        if self._pending is not None:
            raise self._pending
        self._awake = None
        batch: list[_X] = []
        for item in self._it:
            if isinstance(item, TestingSource.EOF):
                self._pending = StopIteration()
                self._index += 1  # continue after the marker next time
                break
            if isinstance(item, TestingSource.ABORT):
                if not item._triggered:
                    item._triggered = True  # each abort triggers once
                    self._pending = _AbortExecution()
                    break
                # A triggered abort is skipped; like Bytewax, it does not advance the index.
                continue
            if isinstance(item, TestingSource.PAUSE):
                self._awake = datetime.now(_UTC) + item.for_duration
                break
            batch.append(item)
            if len(batch) >= self._batch_size:
                break
        if batch or self._pending is not None or self._awake is not None:
            self._index += len(batch)
            return batch
        raise StopIteration()

    def next_awake(self) -> datetime | None:
        return self._awake

    def snapshot(self) -> int:
        return self._index


class TestingSource(_FixedPartitionedSource[_X, int]):
    """Items from a Python iterable, in batches of ``batch_size`` (one partition).

    Markers in the iterable: ``TestingSource.EOF()`` ends this execution (the next one continues
    after it), ``TestingSource.ABORT()`` aborts this execution once (a resumed execution continues
    from the last snapshot), ``TestingSource.PAUSE(for_duration)`` emits nothing for a while.
    """

    __test__ = False

    @dataclass
    class EOF:
        """End this execution here; the next one continues after this item."""

    @dataclass
    class ABORT:
        """Abort the execution here, once; a resume continues from the last snapshot."""

        _triggered: bool = False

    @dataclass
    class PAUSE:
        """Emit nothing for ``for_duration``."""

        for_duration: timedelta

    def __init__(self, ib: Iterable[_X | EOF | ABORT | PAUSE], batch_size: int = 1) -> None:
        self._ib = ib
        self._batch_size = batch_size

    def list_parts(self) -> list[str]:
        return ["iterable"]

    def build_part(self, step_id: str, for_part: str, resume_state: int | None) -> _IterPartition[_X]:
        return _IterPartition(self._ib, self._batch_size, resume_state)


class _ListPartition(_StatelessSinkPartition[_X], Generic[_X]):
    def __init__(self, ls: list[_X]) -> None:
        self._ls = ls

    def write_batch(self, items: list[_X]) -> None:
        self._ls += items


class TestingSink(_DynamicSink[_X]):
    """Appends every output item to a list (never cleared between executions)."""

    __test__ = False

    def __init__(self, ls: list[_X]) -> None:
        self._ls = ls

    def build(self, step_id: str, worker_index: int, worker_count: int) -> _ListPartition[_X]:
        return _ListPartition(self._ls)


def run_main(
    flow: _Dataflow,
    *,
    epoch_interval: timedelta | None = None,
    recovery_config: _RecoveryConfig | None = None,
    _now_getter: Callable[[], datetime] | None = None,
    _target: str | None = None,
) -> None:
    """Run a dataflow on one worker until its input ends (or aborts).

    ``epoch_interval`` (default 10 s) is the system time between snapshots; with a
    ``recovery_config`` the run resumes from the last snapshot of the previous run.
    ``_now_getter`` (not in Bytewax) replaces the system clock for epochs and notifications,
    e.g. ``TimeTestingGetter.get``.

    ``_target`` (not in Bytewax), else the ``FS_COMPAT_TARGET`` environment variable, picks
    where: ``local`` (the default) runs in this process; ``spark`` runs the steps as a Spark job
    (sources read and sinks written in this process; see :mod:`fs_compat.bytewax.spark`);
    ``spark-streaming`` runs them as a Structured Streaming query over the input cut into
    micro-batches, restarted from its checkpoint on the way (a test target); there a
    ``recovery_config`` makes each call a run of one query kept in the recovery directory
    (``TestingSource`` inputs; ``EOF()`` and ``ABORT()`` as in-process, epochs as micro-batches).
    The target is checked by :func:`fs_compat.execution.resolve_target`.
    """
    _run(flow, epoch_interval, recovery_config, _now_getter, _target, workers=1)


def _run(
    flow: _Dataflow,
    epoch_interval: timedelta | None,
    recovery_config: _RecoveryConfig | None,
    now_getter: Callable[[], datetime] | None,
    target: str | None,
    *,
    workers: int,
) -> None:
    chosen = _resolve_target(target, default=_LOCAL)
    if chosen in (_SPARK, _SPARK_STREAMING):
        from . import _on_spark

        _on_spark.run_main(
            flow, epoch_interval, recovery_config, now_getter, parallelism=workers, target=chosen
        )
    else:
        _execution.run(flow, epoch_interval, recovery_config, now_getter)


def cluster_main(
    flow: _Dataflow,
    addresses: list[str],
    proc_id: int,
    *,
    epoch_interval: timedelta | None = None,
    recovery_config: _RecoveryConfig | None = None,
    worker_count_per_proc: int = 1,
    _target: str | None = None,
) -> None:
    """Run a dataflow as (one process of) a cluster of ``worker_count_per_proc`` workers per
    process, until its input ends.

    fs-compat runs one process: ``addresses`` may be empty or name this process alone
    (``proc_id`` 0); a cluster of several processes raises ``NotImplementedError``. In-process
    (the default target) the workers run as one worker: every item and every key's state is
    the same as with several workers, only which worker handles what (``inspect_debug``'s
    worker index, a ``DynamicSource`` built once with ``worker_count`` 1) and the interleaving
    of the output differ. On Spark (``FS_COMPAT_TARGET=spark``) each step runs as
    ``worker_count_per_proc`` Spark tasks. ``epoch_interval``, ``recovery_config`` and
    ``_target`` as :func:`run_main`.
    """
    if not isinstance(addresses, list | tuple) or not all(isinstance(a, str) for a in addresses):
        raise TypeError("addresses must be a list of `host:port` strings")
    if not isinstance(proc_id, int) or not 0 <= proc_id < max(1, len(addresses)):
        raise ValueError(f"proc_id must be the index of this process in addresses; got {proc_id!r}")
    if len(addresses) > 1:
        raise NotImplementedError(
            f"cluster_main with {len(addresses)} processes: fs-compat runs a dataflow in one process; "
            "use cluster_main(flow, [], 0, worker_count_per_proc=n), or run it on Spark "
            "(FS_COMPAT_TARGET=spark), whose executors are the cluster"
        )
    if not isinstance(worker_count_per_proc, int) or worker_count_per_proc < 1:
        raise ValueError(f"worker_count_per_proc must be a positive int; got {worker_count_per_proc!r}")
    _run(flow, epoch_interval, recovery_config, None, _target, workers=worker_count_per_proc)


def poll_next_batch(part: Any, timeout: timedelta = timedelta(seconds=5)) -> list[Any]:
    """Call ``part.next_batch()`` until it returns a non-empty batch (a busy loop, for tests of
    partitions that read asynchronously); ``TimeoutError`` after ``timeout``."""
    start = datetime.now(_UTC)
    while True:
        found = list(part.next_batch())
        if found:
            return found
        if datetime.now(_UTC) - start > timeout:
            raise TimeoutError()


if __name__ == "__main__":
    from .run import main as _main

    _main(testing=True)
