"""What a finished job did: records in and out per step, the keyed state each step was left
with, wall time (``JobSummary``); how the in-process target counts them
(``run_local_summarized``); and where finished jobs' summaries go (``publish``,
``collect_summaries``: ``fs-compat run`` prints them).

Counts come from the records arriving on each input of each step (``edge_in``, keyed by
``(node id, input index)``): a step's records in are the sum over its inputs; its records out
are what its consumers received of each output it feeds (its main output and each side output
somebody consumes), each output counted once however many steps consume it. A source's records
out are counted the same way. So the figures mean the same on every target.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import attrs

from fs_api import MemoryKvStore

from ._local import CountedConsume, LocalConfig, LocalRunner
from ._metrics import MetricValue, merge_metrics, snapshot_metrics
from ._plan import Node, OperatorNode, SinkNode, SourceNode
from ._state import KeyedStateBackend

#: Per ``(node id, input index)``: how many records arrived on that input.
EdgeCounts = Mapping[tuple[int, int], int]


@attrs.frozen
class StepSummary:
    """One step of a finished job.

    ``kind`` is ``"source"``, ``"step"`` or ``"sink"``; ``records_in`` is None for sources,
    ``records_out`` None for sinks; ``state_keys`` / ``state_bytes`` (the keys holding keyed
    state at the end of the job, and the bytes of their encoded keys and values) are None for
    steps without keyed state. ``metrics`` are the user's metrics of the step (PyFlink's metric
    group), by name, summed over its subtasks (``MetricValue.merged``).
    """

    name: str
    step_id: int
    kind: str
    records_in: int | None
    records_out: int | None
    state_keys: int | None = None
    state_bytes: int | None = None
    uid: str | None = None
    metrics: dict[str, MetricValue] = attrs.field(factory=dict, hash=False)


@attrs.frozen
class JobSummary:
    """What a finished job did, per step (in topological order), and how long it took.

    ``target`` says where it ran (``local``, or ``spark`` and the master); ``wall_time_s`` is
    the time ``execute()`` took, planning and Spark's start-up of the job included.
    """

    job_name: str
    target: str
    wall_time_s: float
    steps: tuple[StepSummary, ...]

    def step(self, name: str) -> StepSummary:
        """The step named (or with the uid) ``name``; a KeyError lists the names there are."""
        found = [s for s in self.steps if name in (s.name, s.uid)]
        if len(found) != 1:
            names = ", ".join(repr(s.name) for s in self.steps)
            what = "no step" if not found else f"{len(found)} steps"
            raise KeyError(f"{what} named {name!r} in job {self.job_name!r}; its steps: {names}")
        return found[0]

    def render(self) -> str:
        """The summary as a small table, one line per step."""

        def cell(value: int | None) -> str:
            return "-" if value is None else f"{value:,}"

        labels = [s.name if s.uid is None else f"{s.name} [{s.uid}]" for s in self.steps]
        width = max([len("step"), *(len(label) for label in labels)])
        head = ("records in", "records out", "state keys", "state bytes")
        lines = [
            f"Job {self.job_name!r} on {self.target}: {len(self.steps)} steps in {self.wall_time_s:.2f} s",
            "  " + "step".ljust(width) + "".join(f"  {h:>12}" for h in head),
        ]
        for label, s in zip(labels, self.steps, strict=True):
            values = (s.records_in, s.records_out, s.state_keys, s.state_bytes)
            lines.append("  " + label.ljust(width) + "".join(f"  {cell(v):>12}" for v in values))
        rows = [
            (label, name, m)
            for label, s in zip(labels, self.steps, strict=True)
            for name, m in s.metrics.items()
        ]
        if rows:
            lines.append("  metrics")
            step_w = max(len(r[0]) for r in rows)
            name_w = max(len(r[1]) for r in rows)
            kind_w = max(len(r[2].kind) for r in rows)
            for label, name, m in rows:
                lines.append(
                    f"    {label.ljust(step_w)}  {name.ljust(name_w)}  {m.kind.ljust(kind_w)}  {m.render()}"
                )
        return "\n".join(lines)


def state_size(backend: KeyedStateBackend) -> tuple[int, int]:
    """``(keys, bytes)`` of ``backend``'s keyed state: the keys that hold any state, and the
    bytes of the encoded keys, namespaces, user keys and values. Writes the values kept as
    objects into the stores first (``flush``). Costs a pass over the state: call it once, at
    the end of a task."""
    backend.flush()
    keys: set[bytes] = set()
    size = 0
    for store in backend.stores.values():
        if not isinstance(store, MemoryKvStore):
            continue
        for ck, value in store.complex_items():
            keys.add(ck.key)
            size += len(ck.key) + len(ck.namespace) + len(ck.user_key) + len(value)
    return len(keys), size


def summarize(
    nodes: Sequence[Node],
    edge_in: EdgeCounts,
    state: Mapping[int, tuple[int, int]],
    *,
    target: str,
    wall_time_s: float,
    job_name: str = "",
    metrics: Mapping[int, Mapping[str, MetricValue]] | None = None,
) -> JobSummary:
    """The JobSummary of a plan (``nodes`` in topological order) from the records that
    arrived on each input (``edge_in``), each keyed step's ``(keys, bytes)`` of state and each
    step's user ``metrics`` (merged over its subtasks)."""
    out: dict[int, dict[str | None, int]] = {}
    for node in nodes:
        for index, edge in enumerate(node.inputs):
            tags = out.setdefault(edge.source.id, {})
            # Consumers of one output all receive all of it: count it once.
            tags.setdefault(edge.side_tag, edge_in.get((node.id, index), 0))
    steps = []
    for node in nodes:
        if isinstance(node, SourceNode):
            kind = "source"
        elif isinstance(node, SinkNode):
            kind = "sink"
        else:
            kind = "step"
        records_in = (
            None if kind == "source" else sum(edge_in.get((node.id, i), 0) for i in range(len(node.inputs)))
        )
        records_out = None if kind == "sink" else sum(out.get(node.id, {}).values())
        keys = size = None
        if isinstance(node, OperatorNode) and node.keyed:
            keys, size = state.get(node.id, (0, 0))
        found = dict(sorted((metrics or {}).get(node.id, {}).items()))
        steps.append(
            StepSummary(node.name, node.id, kind, records_in, records_out, keys, size, node.uid, found)
        )
    return JobSummary(job_name, target, wall_time_s, tuple(steps))


# The in-process target. ---------------------------------------------------------------------


def _count_inputs(runner: LocalRunner) -> dict[int, list[int]]:
    """Make ``runner``'s tasks count the records arriving on each of their inputs; returns the
    counters per node id. A task's ``push`` is wrapped; a sink is given a copy of its node whose
    ``consume`` counts (upstream tasks call a sink's ``consume`` directly). The plan's nodes are
    not changed. A task fed by sources only gets all their items: it is not wrapped."""
    counters: dict[int, list[int]] = {}
    for task in runner.tasks.values():
        node = task.node
        if isinstance(node, SourceNode):
            continue
        sources = [edge.source for edge in node.inputs]
        if all(isinstance(source, SourceNode) for source in sources):
            # Every item of a source reaches each of its consumers: nothing to count.
            counters[node.id] = [len(source.items) for source in sources]  # type: ignore[attr-defined]
            continue
        counter = counters[node.id] = [0] * len(node.inputs)
        if isinstance(node, SinkNode):
            assert node.consume is not None
            consume = CountedConsume(node.consume, counter)
            task.node = attrs.evolve(node, consume=consume, writer=_counted_writer(node.writer, counter))
        else:
            task.push = counted_push(task.push, counter)  # type: ignore[method-assign,assignment]
    return counters


def _counted_writer(
    writer: Callable[[int, int], Callable[[Any], None]] | None, counter: list[int]
) -> Callable[[int, int], Callable[[Any], None]] | None:
    """A sink's ``writer`` whose instances count what they are given in ``counter[0]``."""
    if writer is None:
        return None

    def counted(index: int, parallelism: int) -> Callable[[Any], None]:
        return CountedConsume(writer(index, parallelism), counter)

    return counted


def counted_push(
    push: Callable[[int, Any, int | None], None], counter: list[int]
) -> Callable[[int, Any, int | None], None]:
    """``push`` (a task's), counting the records per input in ``counter``."""

    def counted(input_index: int, value: Any, ts: int | None) -> None:
        counter[input_index] += 1
        push(input_index, value, ts)

    return counted


def run_local_summarized(sinks: Sequence[Node], config: LocalConfig | None = None) -> JobSummary:
    """``run_local``, counting: run the plan that feeds ``sinks`` in this process and return
    its JobSummary (``job_name`` empty: the front end names the job)."""
    start = time.perf_counter()
    runner = LocalRunner(sinks, config)
    counters = _count_inputs(runner)
    runner.run()
    state: dict[int, tuple[int, int]] = {}
    metrics: dict[int, dict[str, MetricValue]] = {}
    for task in runner.tasks.values():
        if isinstance(task.node, OperatorNode) and task.node.keyed:
            sizes = [state_size(inst.backend) for inst in task.instances if inst.backend is not None]
            state[task.node.id] = (sum(k for k, _ in sizes), sum(b for _, b in sizes))
        found = merge_metrics(snapshot_metrics(inst.rt.metrics) for inst in task.instances)
        if found:
            metrics[task.node.id] = found
    edge_in = {(node_id, i): n for node_id, counts in counters.items() for i, n in enumerate(counts)}
    return summarize(
        runner.nodes, edge_in, state, target="local", wall_time_s=time.perf_counter() - start, metrics=metrics
    )


# Where summaries go. ------------------------------------------------------------------------

_listeners: list[list[JobSummary]] = []


#: The latest summary of each job name this process finished (what ``fs_compat.monitoring``
#: exports).
latest_summaries: dict[str, JobSummary] = {}


def publish(summary: JobSummary) -> None:
    """Hand a finished job's summary to every ``collect_summaries`` block that is open, and
    keep it as its job's latest (``latest_summaries``)."""
    latest_summaries[summary.job_name] = summary
    for found in _listeners:
        found.append(summary)


@contextlib.contextmanager
def collect_summaries() -> Iterator[list[JobSummary]]:
    """A list that receives the summary of every job that finishes inside the block.

    >>> with collect_summaries() as found:
    ...     publish(JobSummary("job", "local", 0.0, ()))
    >>> [s.job_name for s in found]
    ['job']
    """
    found: list[JobSummary] = []
    _listeners.append(found)
    try:
        yield found
    finally:
        _listeners.remove(found)
