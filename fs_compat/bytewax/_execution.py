"""Runs a Dataflow's plan in this process with Bytewax's execution model: one worker, input
in batches, epochs of ``epoch_interval``, timers at batch boundaries, snapshots at epoch ends,
abort and resume.

The steps run on the runtime's batched schedule (:class:`fs_compat.runtime.BatchedRunner`, over
the in-process target's tasks); what this module adds is Bytewax's policy around it: source
partitions and their polling and awake times, sink partitions, epochs and their snapshots,
recovery and abort.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from fs_compat.runtime import BatchedRunner, LocalConfig, Node, SinkNode, SourceNode, StepError

from ._clocks import system_utc
from ._ops import EPOCH, MsClock, StatefulBatchOperator
from ._parts import call, check_flow, sink_parts, source_parts, write
from .dataflow import Dataflow
from .inputs import AbortExecution
from .outputs import FixedPartitionedSink
from .recovery import RecoveryConfig, _Store

_DEFAULT_EPOCH = timedelta(seconds=10)
#: How long to wait when a pass over the sources gave no items (Bytewax waits 1 ms too).
_IDLE_S = 0.001


class _Source:
    def __init__(self, node: Node, parts: list[tuple[str, Any]], stateful: bool) -> None:
        self.node = node
        self.step_id = node.name
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
        self.now = now_getter or system_utc
        self.store = _Store(recovery_config) if recovery_config is not None else None
        self.steps = BatchedRunner(flow._plan.nodes, LocalConfig(clock=MsClock(self.now)), write=self._write)
        self.sink_parts: dict[int, list[tuple[str, Any]]] = {}
        self.fed = False  # whether the current pass over the sources read any item

    # Set-up. ----------------------------------------------------------------------------------
    def _open(self, states: dict[str, dict[str, Any]]) -> list[_Source]:
        plan = self.flow._plan
        self.steps.start()
        for node, op, rt in self.steps.operators():
            if isinstance(op, StatefulBatchOperator):
                op.epoch_driven = True
                if node.name in states:
                    op.restore(rt, states[node.name])
        sources = []
        for node in plan.nodes:
            if isinstance(node, SourceNode):
                parts, stateful = source_parts(node.name, plan.sources[node.id], states.get(node.name))
                sources.append(_Source(node, parts, stateful))
            elif isinstance(node, SinkNode):
                self.sink_parts[node.id] = sink_parts(node.name, plan.sinks[node.id], states.get(node.name))
        return sources

    # Sinks. ----------------------------------------------------------------------------------
    def _write(self, node: SinkNode, batch: list[Any]) -> None:
        write(node.name, self.flow._plan.sinks[node.id], self.sink_parts[node.id], batch)

    # Epochs. ----------------------------------------------------------------------------------
    def close_epoch(self, epoch: int, sources: list[_Source]) -> None:
        changes: list[tuple[str, str, Any, bool]] = []
        for node, op, rt in self.steps.operators():
            if isinstance(op, StatefulBatchOperator):
                for key, snap, present in op.snapshot_touched(rt):
                    changes.append((node.name, key, snap, present))
        for src in sources:
            if src.stateful:
                for name, part in src.parts:
                    snap = call(part.snapshot, "`StatefulSourcePartition.snapshot`", src.step_id)
                    changes.append((src.step_id, name, snap, True))
        plan = self.flow._plan
        for node in plan.nodes:
            if isinstance(node, SinkNode) and isinstance(plan.sinks[node.id], FixedPartitionedSink):
                for name, part in self.sink_parts[node.id]:
                    changes.append((node.name, name, part.snapshot(), True))
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
                self.fed = False
                for src in list(active):
                    if not self._poll(src, now):
                        active.remove(src)
                        self.steps.end_source(src.node)
                    self.steps.activate()
                if active and not self.fed:
                    time.sleep(_IDLE_S)  # every partition is waiting (next_awake) or empty for now
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
                batch = list(call(part.next_batch, "`next_batch`", src.step_id))
            except StopIteration:
                del src.awake[name]
                continue
            live = True
            src.awake[name] = call(part.next_awake, "`next_awake`", src.step_id)
            self.fed = self.fed or bool(batch)
            self.steps.feed(src.node, batch)
        return live

    def _close(self, sources: list[_Source]) -> None:
        for src in sources:
            for _name, part in src.parts:
                part.close()
        for parts in self.sink_parts.values():
            for _name, part in parts:
                part.close()
        self.steps.close()


def run(
    flow: Dataflow,
    epoch_interval: timedelta | None,
    recovery_config: RecoveryConfig | None,
    now_getter: Callable[[], datetime] | None,
) -> None:
    if not isinstance(flow, Dataflow):
        raise TypeError("dataflow must subclass `fs_compat.bytewax.dataflow.Dataflow`")
    check_flow(flow._plan.nodes)
    failed: BaseException | None = None
    try:
        _Runner(flow, epoch_interval, recovery_config, now_getter).run()
    except StepError as exc:  # an operator's failure: Bytewax raises the operator's own error
        if exc.__cause__ is None:
            raise
        failed = exc.__cause__
    if failed is not None:
        raise failed
