"""``run_main(flow, recovery_config=...)`` on the ``spark-streaming`` target: Bytewax recovery
mapped onto a Structured Streaming query's checkpoint.

Each ``run_main`` is one run of the same query, kept in the recovery directory
(``<db_dir>/spark-streaming``: its sources' files and its checkpoints, see
``fs_compat.spark.run_stream_epochs``); the recovery partitions (``init_db_dir``) hold, per
``TestingSource`` step, how far into its items the committed runs have gone, and how many runs
ended, as Bytewax's snapshots, so they are checked as in-process (``NoPartitionsError``,
``MissingPartitionsError``, ``InconsistentPartitionsError``) and a run resumes from them.

A run reads each ``TestingSource`` on the driver as the in-process runner does (one batch of each
source in turn, from where the last committed run stopped, up to ``EOF()`` or ``ABORT()``, which
fires once, as in Bytewax) and cuts what it reads into Bytewax's epochs: with ``epoch_interval``
zero, an epoch per pass over the sources (a snapshot after each batch); with a positive one, one
epoch for the run (a ``TestingSource`` is read well within any positive interval). Each epoch is
one micro-batch of the query, committed in its checkpoint with the keys' state. Then:

- at ``EOF()`` (or the end of the items) the input ends for this run: every key group with state
  gets its EOF (``on_eof``: ``collect`` and windows flush), its state stays for the next run,
  whose EOF ends it again (``fs_compat.spark.end_of_run``);
- at ``ABORT()`` the run stops as a crashed execution: the epochs committed before stay done; the
  epoch the abort falls in has reached the sinks (Bytewax is at-least-once) but its state is not
  committed (it runs on a copy of the checkpoint, whose files are dropped), so the next run reads
  its items again.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import attrs

from fs_compat.runtime import JobSummary, LocalConfig, Node, SinkNode, SourceNode

from ._clocks import system_utc
from ._parts import call, source_parts
from .inputs import AbortExecution
from .outputs import FixedPartitionedSink
from .recovery import RecoveryConfig, _Store

#: The recovery partitions' step id for this target's own progress (how many runs ended).
_RUNS_STEP = "__spark_streaming__"
_RUNS_KEY = "ended_runs"
#: Where, in the recovery directory, the query's files and checkpoints live.
QUERY_DIR = "spark-streaming"


def has_markers(flow_nodes: Sequence[Node], sources: dict[int, Any]) -> bool:
    """Whether a ``TestingSource`` of the flow holds ``EOF()`` or ``ABORT()`` markers."""
    from .testing import TestingSource

    return any(
        isinstance(item, (TestingSource.EOF, TestingSource.ABORT))
        for node in flow_nodes
        if isinstance(node, SourceNode) and isinstance(sources[node.id], TestingSource)
        for item in sources[node.id]._ib
    )


def check_edges(flow: Any, recovery: bool) -> None:
    """Runs read run by run on Spark take ``TestingSource`` inputs only (read on the driver);
    with recovery, a ``FixedPartitionedSink``'s partitions would resume from their snapshots,
    which this target does not keep."""
    from .testing import TestingSource

    nodes: Sequence[Node] = flow._plan.nodes
    sources: dict[int, Any] = flow._plan.sources
    sinks: dict[int, Any] = flow._plan.sinks
    if recovery:
        for node in nodes:
            if isinstance(node, SinkNode) and isinstance(sinks[node.id], FixedPartitionedSink):
                raise NotImplementedError(
                    f"step {node.name}: a {type(sinks[node.id]).__name__} (a FixedPartitionedSink) with "
                    "run_main(recovery_config=...) on the spark-streaming target: its partitions' resume "
                    "state is not kept there; run the flow in-process (FS_COMPAT_TARGET=local), or write "
                    "through to_sink on a streaming DataFrame (fs_compat.bytewax.spark)"
                )

    what = "run_main(recovery_config=...)" if recovery else "a TestingSource's EOF() or ABORT()"
    for node in nodes:
        if isinstance(node, SourceNode) and not isinstance(sources[node.id], TestingSource):
            raise NotImplementedError(
                f"step {node.name}: {what} on the spark-streaming target takes TestingSource inputs "
                f"only, not a {type(sources[node.id]).__name__}; run the flow in-process "
                "(FS_COMPAT_TARGET=local), or on a streaming DataFrame with "
                "fs_compat.bytewax.spark.to_dataframe and a checkpointLocation"
            )


@attrs.define
class _Reader:
    """A ``TestingSource``'s partition, read on the driver; ``node_id``: its step on Spark."""

    step_id: str
    name: str  # the partition's
    node_id: int
    part: Any


@attrs.define
class _Epochs:
    """What a run reads: the committed epochs (per Spark source node id, its items), whether
    it aborted and the items of the epoch the abort fell in (none: an abort right after a
    snapshot), and each source's position after the committed epochs."""

    committed: list[dict[int, list[Any]]]
    aborted: bool
    uncommitted: dict[int, list[Any]]
    positions: dict[tuple[str, str], Any]  # by (step id, partition name)


def read_epochs(readers: Sequence[_Reader], interval: timedelta) -> _Epochs:
    """Read the sources as the in-process runner does (``_execution._Runner.run``), with an epoch
    per pass when ``interval`` is zero, else one; an epoch without items is not kept (a
    micro-batch costs), but the last one is when the run ends (it carries the end).

    >>> from fs_compat.bytewax.testing import TestingSource
    >>> items = ["p", TestingSource.EOF(), "q", TestingSource.ABORT(), "r"]
    >>> def read(start, seconds):
    ...     part = TestingSource(items).build_part("s", "iterable", start)
    ...     return read_epochs([_Reader("s", "iterable", 7, part)], timedelta(seconds=seconds))
    >>> read(None, 0)  # up to the EOF; the last epoch carries the end
    _Epochs(committed=[{7: ['p']}, {7: []}], aborted=False, uncommitted={}, positions={('s', 'iterable'): 2})
    >>> read(2, 10)  # the abort falls in the run's one epoch: nothing committed
    _Epochs(committed=[], aborted=True, uncommitted={7: ['q']}, positions={('s', 'iterable'): 2})
    >>> read(2, 10)  # it fired once; a fired ABORT does not count in the index (as in Bytewax)
    _Epochs(committed=[{7: ['q', 'r']}], aborted=False, uncommitted={}, positions={('s', 'iterable'): 4})
    """

    def snapshot() -> dict[tuple[str, str], Any]:
        what = "`StatefulSourcePartition.snapshot`"
        return {(r.step_id, r.name): call(r.part.snapshot, what, r.step_id) for r in readers}

    committed: list[dict[int, list[Any]]] = []
    current: dict[int, list[Any]] = {}
    positions = snapshot()
    active = list(readers)
    first = True
    try:
        while active:
            if not first and interval <= timedelta(0):
                if any(current.values()):
                    committed.append(current)
                    current = {}
                positions = snapshot()
            first = False
            for reader in list(active):
                try:
                    batch = call(reader.part.next_batch, "`next_batch`", reader.step_id)
                except StopIteration:
                    active.remove(reader)
                    continue
                current.setdefault(reader.node_id, []).extend(batch)
    except AbortExecution:
        return _Epochs(committed, True, current, positions)
    committed.append(current)
    return _Epochs(committed, False, {}, snapshot())


def run(
    flow: Any,
    nodes: dict[int, Node],
    sinks: list[SinkNode],
    config: LocalConfig,
    spark: Any,
    epoch_interval: timedelta | None,
    recovery_config: RecoveryConfig | None,
    now_getter: Callable[[], datetime] | None,
) -> JobSummary | None:
    """One run of ``flow`` (its steps on Spark: ``nodes``, by the flow's node ids; ``sinks`` on
    the driver) resumed from and committed to ``recovery_config``; the summary of its query's
    run (None: nothing to run). Without a ``recovery_config``, as in-process: the run reads from
    the start, ends its input for good at ``EOF()``, stops at ``ABORT()``, and keeps nothing."""
    from fs_compat.spark import END_OF_INPUT, end_of_run, run_stream_epochs

    # Bytewax's checks of the recovery partitions.
    store = _Store(recovery_config) if recovery_config is not None else None
    epoch, states = store.resume() if store is not None else (0, {})
    plan = flow._plan
    readers = []
    for node in plan.nodes:
        if isinstance(node, SourceNode):
            parts, _stateful = source_parts(node.name, plan.sources[node.id], states.get(node.name))
            for name, part in parts:
                readers.append(_Reader(node.name, name, nodes[node.id].id, part))
    interval = epoch_interval if epoch_interval is not None else timedelta(seconds=10)
    try:
        epochs = read_epochs(readers, interval)
    finally:
        for reader in readers:
            reader.part.close()
    name = flow.flow_id
    if store is None:
        every = (
            [*epochs.committed, epochs.uncommitted] if any(epochs.uncommitted.values()) else epochs.committed
        )
        directory = Path(tempfile.mkdtemp(prefix="fs-compat-run-"))
        try:
            end = None if epochs.aborted else END_OF_INPUT
            return run_stream_epochs(spark, sinks, config, directory, every, end=end, job_name=name)
        finally:
            shutil.rmtree(directory, ignore_errors=True)
    assert recovery_config is not None
    ended = int(states.get(_RUNS_STEP, {}).get(_RUNS_KEY, 0))
    directory = recovery_config.db_dir / QUERY_DIR
    end = None if epochs.aborted else end_of_run(ended)
    summary = None
    if epochs.committed:
        changes: list[tuple[str, str, Any, bool]] = [
            (step_id, part, position, True) for (step_id, part), position in epochs.positions.items()
        ]
        if end is not None:
            changes.append((_RUNS_STEP, _RUNS_KEY, ended + 1, True))

        def handed_over() -> None:
            # The epochs' files are in the query's sources: its next start reads them, also after
            # a failure, so the sources' positions move on now (a failed micro-batch runs again).
            store.write_epoch(epoch + 1, changes, (now_getter or system_utc)())

        summary = run_stream_epochs(
            spark, sinks, config, directory, epochs.committed, end=end, handed_over=handed_over, job_name=name
        )
    if any(epochs.uncommitted.values()):
        summary = run_stream_epochs(
            spark, sinks, config, directory, [epochs.uncommitted], end=None, commit=False, job_name=name
        )
    return summary
