"""Runs a Dataflow's plan in this process with Bytewax's execution model: one worker, input
in batches, epochs of ``epoch_interval``, timers at batch boundaries, snapshots at epoch ends,
abort and resume.

It drives the plan's :class:`fs_compat.runtime.Operator` objects with the runtime's
``OperatorRuntime`` / ``KeyedStateBackend`` / timer queues; what it adds over the generic local
target is the Bytewax-specific scheduling (batches, activations, epochs, recovery).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC as _UTC
from datetime import datetime, timedelta
from typing import Any

from fs_compat.runtime import (
    KeyedStateBackend,
    KeyEncoder,
    Node,
    Operator,
    OperatorNode,
    OperatorRuntime,
    SideOutput,
    SinkNode,
    SourceNode,
    TaskInfo,
)

from ._ops import EPOCH, StatefulBatchOperator, user_error
from .dataflow import Dataflow
from .errors import BytewaxRuntimeError
from .inputs import AbortExecution, DynamicSource, FixedPartitionedSource
from .outputs import DynamicSink, FixedPartitionedSink
from .recovery import RecoveryConfig, _Store

_DEFAULT_EPOCH = timedelta(seconds=10)


def _system_now() -> datetime:
    return datetime.now(_UTC)


class _Task:
    def __init__(self, node: Node, clock: Callable[[], int]) -> None:
        self.node = node
        self.down: list[tuple[str | None, _Task, int]] = []
        self.ended = [False] * max(1, len(node.inputs))
        self.op: Operator | None = None
        self.rt: OperatorRuntime | None = None
        if isinstance(node, OperatorNode):
            assert node.operator_factory is not None
            backend = KeyedStateBackend(KeyEncoder(), clock=clock) if node.keyed else None
            self.rt = OperatorRuntime(TaskInfo(node.name, 1, 0), backend, clock)
            self.op = node.operator_factory()
            if isinstance(self.op, StatefulBatchOperator):
                self.op.epoch_driven = True


class _Source:
    def __init__(self, step_id: str, task: _Task, parts: list[tuple[str, Any]], stateful: bool) -> None:
        self.step_id = step_id
        self.task = task
        self.parts = parts
        self.stateful = stateful
        self.awake: dict[str, datetime | None] = {name: None for name, _ in parts}


class _Runner:
    def __init__(
        self,
        flow: Dataflow,
        epoch_interval: timedelta | None,
        recovery_config: RecoveryConfig | None,
        now_getter: Callable[[], datetime] | None,
    ) -> None:
        if epoch_interval is not None and not isinstance(epoch_interval, timedelta):
            raise TypeError("epoch interval must be a `datetime.timedelta`")
        self.flow = flow
        self.interval = epoch_interval if epoch_interval is not None else _DEFAULT_EPOCH
        self.now = now_getter or _system_now
        self.store = _Store(recovery_config) if recovery_config is not None else None
        plan = flow._plan

        def clock() -> int:
            return int(self.now().timestamp() * 1000)

        self.tasks: dict[int, _Task] = {n.id: _Task(n, clock) for n in plan.nodes}
        self.order = [self.tasks[n.id] for n in plan.nodes]
        for node in plan.nodes:
            for index, edge in enumerate(node.inputs):
                self.tasks[edge.source.id].down.append((edge.side_tag, self.tasks[node.id], index))
        self.sink_parts: dict[int, list[tuple[str, Any]]] = {}

    # Set-up. ----------------------------------------------------------------------------------
    def _open(self, states: dict[str, dict[str, Any]]) -> list[_Source]:
        plan = self.flow._plan
        for task in self.order:
            if task.op is not None:
                assert task.rt is not None
                task.op.open(task.rt)
                if isinstance(task.op, StatefulBatchOperator) and task.node.name in states:
                    task.op.restore(task.rt, states[task.node.name])
        sources = []
        for task in self.order:
            node = task.node
            if isinstance(node, SourceNode):
                source = plan.sources[node.id]
                step_id = node.name
                if isinstance(source, FixedPartitionedSource):
                    resume = states.get(step_id, {})
                    parts = [
                        (name, source.build_part(step_id, name, resume.get(name)))
                        for name in self._call(
                            source.list_parts, "`FixedPartitionedSource.list_parts`", step_id
                        )
                    ]
                    sources.append(_Source(step_id, task, parts, True))
                elif isinstance(source, DynamicSource):
                    sources.append(_Source(step_id, task, [("0", source.build(step_id, 0, 1))], False))
                else:
                    raise TypeError("source must subclass `fs_compat.bytewax.inputs.Source`")
            elif isinstance(node, SinkNode):
                sink = plan.sinks[node.id]
                if isinstance(sink, DynamicSink):
                    self.sink_parts[node.id] = [("0", sink.build(node.name, 0, 1))]
                elif isinstance(sink, FixedPartitionedSink):
                    resume = states.get(node.name, {})
                    self.sink_parts[node.id] = [
                        (name, sink.build_part(node.name, name, resume.get(name)))
                        for name in sink.list_parts()
                    ]
                else:
                    raise TypeError("sink must subclass `fs_compat.bytewax.outputs.Sink`")
        return sources

    @staticmethod
    def _call(fn: Callable[..., Any], what: str, step_id: str, *args: Any) -> Any:
        try:
            return fn(*args)
        except (StopIteration, AbortExecution, BytewaxRuntimeError):
            raise
        except Exception as exc:
            raise user_error(f"error calling {what} in step {step_id}", exc) from exc

    # Data flow. -------------------------------------------------------------------------------
    def push(self, task: _Task, index: int, batch: list[Any]) -> None:
        if not batch:
            return
        node = task.node
        if isinstance(node, SinkNode):
            self._write(task, batch)
            return
        op, rt = task.op, task.rt
        assert op is not None and rt is not None
        rt.input_index = index
        if isinstance(op, StatefulBatchOperator):
            edge = node.inputs[index]
            assert edge.key_selector is not None
            groups: dict[str, list[Any]] = {}
            for item in batch:
                groups.setdefault(edge.key_selector(item), []).append(item)
            outs: list[Any] = op.process_keyed(sorted(groups.items()), rt)
        elif hasattr(op, "process_batch"):
            outs = op.process_batch(batch, rt)
        else:
            outs = []
            for item in batch:
                outs.extend(op.process(item, rt))
        self._emit(task, outs)

    def _emit(self, task: _Task, outs: list[Any]) -> None:
        if not outs:
            return
        main: list[Any] = []
        sides: dict[str, list[Any]] = {}
        for out in outs:
            if isinstance(out, SideOutput):
                sides.setdefault(out.tag_id, []).append(out.value)
            else:
                main.append(out)
        for tag, down, index in task.down:
            self.push(down, index, main if tag is None else sides.get(tag, []))

    def _write(self, task: _Task, batch: list[Any]) -> None:
        node = task.node
        sink = self.flow._plan.sinks[node.id]
        parts = self.sink_parts[node.id]
        if isinstance(sink, FixedPartitionedSink):
            routed: dict[int, list[Any]] = {}
            for item in batch:
                routed.setdefault(sink.part_fn(item[0]) % len(parts), []).append(item[1])
            for i, values in sorted(routed.items()):
                self._call(parts[i][1].write_batch, "`StatefulSinkPartition.write_batch`", node.name, values)
        else:
            self._call(
                parts[0][1].write_batch, "`StatelessSinkPartition.write_batch`", node.name, list(batch)
            )

    def tick(self) -> None:
        """Fire the due notifications of every stateful step (a batch boundary)."""
        for task in self.order:
            if isinstance(task.op, StatefulBatchOperator):
                assert task.rt is not None
                self._emit(task, task.op.fire_due(task.rt))

    def end(self, task: _Task, index: int) -> None:
        task.ended[index] = True
        if not all(task.ended):
            return
        if task.op is not None:
            assert task.rt is not None
            self._emit(task, list(task.op.end_input(task.rt)))
        for _tag, down, down_index in task.down:
            self.end(down, down_index)

    # Epochs. ----------------------------------------------------------------------------------
    def close_epoch(self, epoch: int, sources: list[_Source]) -> None:
        changes: list[tuple[str, str, Any, bool]] = []
        for task in self.order:
            if isinstance(task.op, StatefulBatchOperator):
                assert task.rt is not None
                for key, snap, present in task.op.snapshot_touched(task.rt):
                    changes.append((task.node.name, key, snap, present))
        for src in sources:
            if src.stateful:
                for name, part in src.parts:
                    snap = self._call(part.snapshot, "`StatefulSourcePartition.snapshot`", src.step_id)
                    changes.append((src.step_id, name, snap, True))
        for node_id, parts in self.sink_parts.items():
            if isinstance(self.flow._plan.sinks[node_id], FixedPartitionedSink):
                name_of = self.tasks[node_id].node.name
                for name, part in parts:
                    changes.append((name_of, name, part.snapshot(), True))
        if self.store is not None:
            self.store.write_epoch(epoch, changes, self.now())

    def run(self) -> None:
        epoch, states = self.store.resume() if self.store is not None else (0, {})
        epoch += 1
        sources = self._open(states)
        all_sources = list(sources)
        token = EPOCH.set(epoch)
        try:
            active = list(sources)
            epoch_start = self.now()
            first = True
            while active:
                now = self.now()
                if not first and now - epoch_start >= self.interval:
                    self.close_epoch(epoch, all_sources)
                    epoch += 1
                    EPOCH.set(epoch)
                    epoch_start = now
                first = False
                for src in list(active):
                    if not self._poll(src, now):
                        active.remove(src)
                        self.end(src.task, 0)
                    self.tick()
            self.close_epoch(epoch, all_sources)
        except AbortExecution:
            return
        finally:
            EPOCH.reset(token)
            self._close(all_sources)

    def _poll(self, src: _Source, now: datetime) -> bool:
        """Read one batch from each live partition of a source; False once all are done."""
        live = False
        for name, part in list(src.parts):
            if name not in src.awake:
                continue
            wake = src.awake[name]
            if wake is not None and now < wake:
                live = True
                continue
            try:
                batch = list(self._call(part.next_batch, "`next_batch`", src.step_id))
            except StopIteration:
                del src.awake[name]
                continue
            live = True
            src.awake[name] = self._call(part.next_awake, "`next_awake`", src.step_id)
            for tag, down, index in src.task.down:
                if tag is None:
                    self.push(down, index, batch)
        return live

    def _close(self, sources: list[_Source]) -> None:
        for src in sources:
            for _name, part in src.parts:
                part.close()
        for parts in self.sink_parts.values():
            for _name, part in parts:
                part.close()
        for task in self.order:
            if task.op is not None:
                task.op.close()


def run(
    flow: Dataflow,
    epoch_interval: timedelta | None,
    recovery_config: RecoveryConfig | None,
    now_getter: Callable[[], datetime] | None,
) -> None:
    if not isinstance(flow, Dataflow):
        raise TypeError("dataflow must subclass `fs_compat.bytewax.dataflow.Dataflow`")
    _Runner(flow, epoch_interval, recovery_config, now_getter).run()
