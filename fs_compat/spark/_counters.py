"""The JobSummary of a bounded plan on Spark: each step's Spark function counts the records
arriving on each of its inputs per Arrow batch (a step chained after another in the same pass
counts what it gets from it), and its keyed state and user metrics (``MetricValue``) once per
subtask at the end. The counts reach
the driver through one Spark accumulator per job on a classic session; over Spark Connect, which
has no accumulators, each task ends its output with one row of its counts (tag ``COUNTS_TAG``,
which no consumer reads) that an ``Observation`` of the step's DataFrame collects
(``observed``).

Spark may run a task more than once (the sampling pass of a sort, a retried task, a recomputed
partition): each task adds its counts under its ``(step, partition)``, and the driver keeps one
value per such key rather than adding them up, so repeated runs are counted once.

Only ``run_batch`` counts (``counting``); plans built outside it (``to_dataframe``) carry no
counters and cost nothing.
"""

from __future__ import annotations

import contextlib
import pickle
import uuid
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from fs_compat.runtime import (
    JobSummary,
    MetricValue,
    Node,
    OperatorNode,
    SinkNode,
    SubtaskRunner,
    counted_push,
    merge_metrics,
    snapshot_metrics,
    state_size,
    summarize,
)

from . import _prom, _stdout
from ._session import is_connect

#: An accumulator entry: ``("in", step id, partition)`` -> records per input,
#: ``("state", step id, partition)`` -> ``(keys, bytes)``, or ``("metrics", step id, partition)``
#: -> the step's metrics in that task (name -> ``MetricValue``), or ``("prom", step id, partition)``
#: -> what the task changed in its worker's prometheus_client metrics (``_prom``), or ``("out",
#: step id, partition)`` -> what the task's user code printed (``_stdout``).
_Key = tuple[str, int, int]

#: The ``tag`` of the row a task's counts travel in over Spark Connect (no output has it).
COUNTS_TAG = "\x00fs-compat-counts"


class _KeepLatest:
    """A PySpark AccumulatorParam over dicts: a key added again replaces its value."""

    def zero(self, value: dict[_Key, Any]) -> dict[_Key, Any]:
        return {}

    def addInPlace(self, value1: dict[_Key, Any], value2: dict[_Key, Any]) -> dict[_Key, Any]:  # noqa: N802
        value1.update(value2)
        return value1


class JobCounters:
    """The counters of one job being run: an accumulator (over Connect: the Observations of
    the steps' DataFrames), plus the sink counts taken on the driver."""

    def __init__(self, spark: Any) -> None:
        connect = is_connect(spark)
        self.accumulator = None if connect else spark.sparkContext.accumulator({}, _KeepLatest())
        self.observations: list[Any] = []
        self.sinks: dict[int, int] = {}
        self._printed: set[_Key] = set()

    def observed(self, df: Any, *, drop: bool) -> Any:
        """``df``, the output of counting tasks, with their counts rows observed (over Connect;
        else ``df`` itself); ``drop``: without those rows from here on (for a pass whose rows
        go on to another pass rather than to consumers that select by ``tag``)."""
        if self.accumulator is not None:
            return df
        from pyspark.sql import Observation
        from pyspark.sql import functions as F  # noqa: N812 - Spark's convention

        tag = F.col("tag")
        observation = Observation(f"fs_compat_counts_{uuid.uuid4().hex}")
        self.observations.append(observation)
        df = df.observe(observation, F.collect_list(F.when(tag == COUNTS_TAG, F.col("v"))).alias("counts"))
        return df.where(~tag.eqNullSafe(COUNTS_TAG)) if drop else df

    def _updates(self) -> dict[_Key, Any]:
        if self.accumulator is not None:
            return dict(self.accumulator.value)
        from pyspark.errors import PySparkAssertionError

        updates: dict[_Key, Any] = {}
        for observation in self.observations:
            try:
                metrics = observation.get
            except PySparkAssertionError:  # never ran (Spark skipped a pass with no input)
                continue
            for blob in metrics.get("counts") or ():  # no metrics at all: the pass had no rows
                updates.update(pickle.loads(blob))
        return updates

    def printed(self, position: Mapping[int, int]) -> str:
        """What the tasks that have ended since the last call printed (``_stdout``), step by
        step in the plan's order (``position``: step id -> place), each step's tasks by
        partition: each task's text once, also when Spark ran the task again."""
        found = {key: text for key, text in self._updates().items() if key[0] == "out"}
        new = sorted(
            (key for key in found if key not in self._printed),
            key=lambda key: (position.get(key[1], len(position)), key[2]),
        )
        self._printed.update(new)
        return "".join(found[key] for key in new)

    def sink_received(self, sink: SinkNode, count: int) -> None:
        self.sinks[sink.id] = count

    def summary(
        self, nodes: Sequence[Node], parallelism: dict[int, int], *, target: str, wall_time_s: float
    ) -> JobSummary:
        """The JobSummary of ``nodes``; ``parallelism`` is each step's number of subtasks (a
        broadcast input reaches every subtask: its rows count once)."""
        edge_in: dict[tuple[int, int], int] = {}
        state: dict[int, tuple[int, int]] = {}
        metrics: dict[int, dict[str, MetricValue]] = {}
        prom: dict[int, list[_prom.Values]] = {}
        for (kind, step, _part), value in self._updates().items():
            if kind == "out":
                continue
            if kind == "prom":
                prom.setdefault(step, []).append(value)
            elif kind == "in":
                for index, count in enumerate(value):
                    edge_in[(step, index)] = edge_in.get((step, index), 0) + count
            elif kind == "metrics":
                metrics[step] = merge_metrics([metrics.get(step, {}), value])
            else:
                keys, size = state.get(step, (0, 0))
                state[step] = (keys + value[0], size + value[1])
        for node in nodes:
            p = parallelism.get(node.id, 1)
            for index, edge in enumerate(node.inputs):
                if edge.broadcast and p > 1 and (node.id, index) in edge_in:
                    edge_in[(node.id, index)] //= p
        for sink_id, count in self.sinks.items():
            edge_in[(sink_id, 0)] = count
        for step, parts in prom.items():
            found = _prom.merge_changes(parts)
            _prom.apply_changes(found)
            metrics[step] = merge_metrics([metrics.get(step, {}), _prom.as_metric_values(found)])
        return summarize(nodes, edge_in, state, target=target, wall_time_s=wall_time_s, metrics=metrics)


_current: list[JobCounters] = []


def observed(df: Any, *, drop: bool = False) -> Any:
    """``JobCounters.observed`` of the job being counted; ``df`` itself when none is."""
    return _current[-1].observed(df, drop=drop) if _current else df


@contextlib.contextmanager
def counting(spark: Any) -> Iterator[JobCounters]:
    """Steps whose Spark functions are built inside the block count into the JobCounters."""
    counters = JobCounters(spark)
    _current.append(counters)
    try:
        yield counters
    finally:
        _current.remove(counters)


class StepTally:
    """What a step's Spark function counts with (picklable; built on the driver with
    ``step_tally``); ``open()`` gives the per-task counts."""

    def __init__(self, node: Node, accumulator: Any) -> None:
        self.step = node.id
        self.inputs = len(node.inputs)
        self.accumulator = accumulator

    def open(self) -> TaskTally:
        return TaskTally(self)


class TaskTally:
    """The counts of one Spark task of one step."""

    def __init__(self, tally: StepTally) -> None:
        self._tally = tally
        self.records = [0] * tally.inputs
        #: Per chained step: the records it got (it has one input).
        self.chained: dict[int, list[int]] = {}
        self.state: dict[int, tuple[int, int]] = {}
        self.metrics: dict[int, dict[str, MetricValue]] = {}
        self.prom_before = _prom.task_started()
        self.printed_at = _stdout.start()

    def batch(self, batch: Any) -> None:
        """Count the records (rows without a watermark, ``wm`` null) of one routed Arrow batch
        of the first step, per input (column ``inp``)."""
        marks = batch.column("wm")
        n = marks.null_count
        if not n:
            return
        if len(self.records) == 1:
            self.records[0] += n
            return
        import pyarrow.compute as pc

        inputs = batch.column("inp")
        if n < batch.num_rows:
            inputs = inputs.filter(pc.is_null(marks))
        for entry in pc.value_counts(inputs).to_pylist():
            self.records[entry["values"]] += entry["counts"]

    def started(self, runner: SubtaskRunner) -> None:
        """A subtask started: the steps chained after the first one count the records they get
        from the step before (they have no Arrow batches of their own)."""
        for task in runner._chain[1:]:
            counter = self.chained.setdefault(task.node.id, [0])
            task.push = counted_push(task.push, counter)  # type: ignore[method-assign,assignment]

    def finished(self, runner: SubtaskRunner) -> None:
        """A subtask ended: add the keyed state its steps hold, and their metrics."""
        for task in runner._chain:
            node = task.node
            found = [snapshot_metrics(inst.rt.metrics) for inst in task.instances]
            if any(found):
                self.metrics[node.id] = merge_metrics([self.metrics.get(node.id, {}), *found])
            if isinstance(node, OperatorNode) and node.keyed:
                keys, size = self.state.get(node.id, (0, 0))
                for inst in task.instances:
                    if inst.backend is not None:
                        k, b = state_size(inst.backend)
                        keys, size = keys + k, size + b
                self.state[node.id] = (keys, size)

    def publish(self, schema: Any) -> Iterator[Any]:
        """The task ended: hand its counts to the driver; over Connect, yield the one-row Arrow
        batch (of ``schema``, the task's output schema) that carries them."""
        from pyspark import TaskContext

        context = TaskContext.get()
        part = context.partitionId() if context is not None else 0
        update: dict[_Key, Any] = {("in", self._tally.step, part): tuple(self.records)}
        for step, counter in self.chained.items():
            update[("in", step, part)] = tuple(counter)
        for step, sizes in self.state.items():
            update[("state", step, part)] = sizes
        for step, values in self.metrics.items():
            update[("metrics", step, part)] = values
        prom = _prom.task_changes(self.prom_before)
        if prom:
            update[("prom", self._tally.step, part)] = prom
        printed = _stdout.take(self.printed_at)
        if printed:
            update[("out", self._tally.step, part)] = printed
        if self._tally.accumulator is not None:
            self._tally.accumulator.add(update)
            return
        import pyarrow as pa

        columns = {field.name: pa.nulls(1, field.type) for field in schema}
        columns["tag"] = pa.array([COUNTS_TAG], pa.string())
        columns["v"] = pa.array([pickle.dumps(update)], pa.binary())
        yield pa.RecordBatch.from_pydict(columns, schema=schema)


def step_tally(node: Node) -> StepTally | None:
    """The tally ``node``'s Spark function counts with, when a job is counting (on the driver,
    while ``run_batch`` builds the job); else None."""
    return StepTally(node, _current[-1].accumulator) if _current else None
