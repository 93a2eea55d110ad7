"""A batch-at-a-time schedule over the in-process target's tasks.

``LocalRunner`` hands each record on as soon as a step emits it. ``BatchedRunner`` drives the same
tasks (built, opened and run by ``LocalRunner``: one place makes instances, state backends and
``TaskInfo``) a batch at a time, for front ends whose model is batches and activations: a batch
given to a step's input goes through the step's batch hook when its operator has one
(``Operator.process_keyed`` on a keyed step, with the batch grouped by key; ``process_batch`` on
another step), else through the task's per-record path (``_Task.push_many``); the outputs of the
whole batch, main and side, go on to each consumer as one batch. The steps a batch reaches run in
the order they were made (a plan's nodes are numbered as they are made, inputs first): a step runs
once everything before it has handed on what it will, then takes what it got, in arrival order, as
Bytewax runs the operators of an activation (a depth-first walk would run a branch's steps before a
step made earlier that reads the branch point, so their side effects, e.g. printing, would come in
another order). ``activate`` is a batch boundary
(``Operator.on_activation``: e.g. notifications due by now), ``end`` the end of an input. There
are no watermarks: the schedule runs in processing time, on the runtime's clock.

Sources and sinks belong to the caller: it feeds batches (``feed``) and says when a source ends
(``end_source``); a sink's batches go to ``write``. Failures of operator code are the runtime's
``StepError``, naming the step, with the operator's exception as the cause.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from ._local import LocalConfig, LocalRunner, _Task
from ._operator import Operator, OperatorRuntime, SideOutput, overrides
from ._plan import Node, SinkNode, upstream_of

# How a step takes a batch (``BatchedRunner.push``).
_WRITE, _KEYED, _BATCH, _EACH = range(4)


class _Outputs:
    """Takes a task's outputs while its per-record path handles a batch (it stands in for the
    task's consumers): main outputs in ``lists[0]``, side output ``i``'s in ``lists[i]``."""

    __slots__ = ("lists", "node")

    def __init__(self, count: int) -> None:
        self.node = None  # not a sink: the task hands outputs to ``push``
        self.lists: list[list[Any]] = [[] for _ in range(count)]

    def push(self, index: int, value: Any, ts: int | None) -> None:
        self.lists[index].append(value)

    def on_watermark(self, index: int, wm: int) -> None:
        """Watermarks stay in the task: the schedule has none."""

    def on_end(self, index: int) -> None:
        """Ends are the schedule's (``BatchedRunner.end``)."""

    def take(self) -> list[list[Any]]:
        lists = self.lists
        self.lists = [[] for _ in lists]
        return lists


class _Step:
    """A task in the batched schedule: its consumers, how it takes a batch, its ended inputs."""

    __slots__ = ("down", "ended", "hook", "kind", "node", "outputs", "rt", "selectors", "tags", "task")

    def __init__(self, task: _Task) -> None:
        self.task = task
        self.node = task.node
        self.down: list[tuple[str | None, _Step, int]] = []
        self.ended = [False] * max(1, len(task.node.inputs))
        self.selectors = [edge.key_selector for edge in task.node.inputs]
        # The task's outputs, per output tag (None: main), while its per-record path runs.
        self.tags: list[str | None] = [None]
        self.outputs = _Outputs(1)
        self.kind = _EACH
        self.hook: Callable[[Any, OperatorRuntime], Iterable[Any]] | None = None
        self.rt: OperatorRuntime | None = None

    def bind(self) -> None:
        """How the step takes a batch, once its instances are open."""
        if isinstance(self.node, SinkNode):
            self.kind = _WRITE
            return
        instances = self.task.instances
        if len(instances) != 1:  # the per-record path spreads records over the instances
            return
        op, self.rt = instances[0].op, instances[0].rt
        if self.rt.keyed and overrides(op, "process_keyed"):
            self.kind, self.hook = _KEYED, op.process_keyed
        elif not self.rt.keyed and overrides(op, "process_batch"):
            self.kind, self.hook = _BATCH, op.process_batch

    def sides(self, lists: list[list[Any]]) -> dict[str | None, list[Any]]:
        return dict(zip(self.tags, lists, strict=True))


class BatchedRunner:
    """Runs the plan of ``nodes`` (and what feeds them) in this process, a batch at a time;
    ``write(sink node, batch)`` takes each batch that reaches a sink (default: the sink's
    ``consume`` per value)."""

    def __init__(
        self,
        nodes: Sequence[Node],
        config: LocalConfig | None = None,
        write: Callable[[SinkNode, list[Any]], None] | None = None,
    ) -> None:
        self.runner = LocalRunner(nodes, config)
        self.write = write or _consume_each
        self.steps = {node.id: _Step(self.runner.tasks[node.id]) for node in self.runner.nodes}
        self.order = [self.steps[node.id] for node in self.runner.nodes]
        self._active: list[tuple[_Step, Operator, OperatorRuntime]] = []
        #: Batches waiting for a step (``_queue``): by node id, the ids in a heap (``_drain``).
        self._pending: dict[int, list[tuple[int, list[Any]]]] = {}
        self._ready: list[int] = []
        for step in self.order:
            task = step.task
            step.down = [(tag, self.steps[down.node.id], index) for tag, down, index in task.down]
            step.tags += sorted({tag for tag, _down, _index in task.down if tag is not None})
            step.outputs = _Outputs(len(step.tags))
            # The task's consumers become the step's output lists: the schedule forwards them.
            task.down = [(tag, step.outputs, index) for index, tag in enumerate(step.tags)]  # type: ignore[misc]

    def start(self) -> None:
        """Open every step's instances (``LocalRunner.start``)."""
        self.runner.start()
        for step in self.order:
            step.bind()
            for inst in step.task.instances:
                if overrides(inst.op, "on_activation"):
                    self._active.append((step, inst.op, inst.rt))

    def operators(self) -> Iterator[tuple[Node, Operator, OperatorRuntime]]:
        """Every operator instance with its runtime, in plan order."""
        for step in self.order:
            for inst in step.task.instances:
                yield step.node, inst.op, inst.rt

    # Batches.
    def feed(self, source: Node, batch: list[Any]) -> None:
        """A batch read from ``source``: to every consumer of its main output, and on from there."""
        for tag, down, index in self.steps[source.id].down:
            if tag is None:
                self._queue(down, index, batch)
        self._drain()

    def push(self, step: _Step, index: int, batch: list[Any]) -> None:
        """Input ``index`` of ``step`` takes ``batch``; its outputs go on as batches."""
        self._queue(step, index, batch)
        self._drain()

    def _queue(self, step: _Step, index: int, batch: list[Any]) -> None:
        """``batch`` waits for input ``index`` of ``step``."""
        if not batch:
            return
        node_id = step.node.id
        waiting = self._pending.get(node_id)
        if waiting is None:
            self._pending[node_id] = waiting = []
            heapq.heappush(self._ready, node_id)
        waiting.append((index, batch))

    def _drain(self) -> None:
        """Run the steps with waiting batches, the earliest made first, until none waits."""
        ready, pending, steps = self._ready, self._pending, self.steps
        while ready:
            node_id = heapq.heappop(ready)
            for index, batch in pending.pop(node_id):
                self._take(steps[node_id], index, batch)

    def _take(self, step: _Step, index: int, batch: list[Any]) -> None:
        """Input ``index`` of ``step`` takes ``batch`` now; its outputs are queued for their
        consumers."""
        kind = step.kind
        if kind == _WRITE:
            node = step.node
            assert isinstance(node, SinkNode)
            self.write(node, batch)
            return
        if kind == _EACH:
            step.task.push_many(index, batch, itertools.repeat(None))
            lists = step.outputs.take()
            self._forward(step, lists[0], step.sides(lists) if len(lists) > 1 else None)
            return
        rt, hook = step.rt, step.hook
        assert rt is not None and hook is not None
        rt.input_index = index
        if kind == _KEYED:
            values: Any = self._groups(step, index, batch)
        else:
            values = batch
        try:
            outs = hook(values, rt)
        except Exception as exc:
            raise step.task.step_error(exc)  # noqa: B904 - it sets the cause
        self.emit(step, outs)

    def _groups(self, step: _Step, index: int, batch: list[Any]) -> list[tuple[Any, list[Any]]]:
        """``batch`` as ``(key, values in arrival order)`` in key order (arrival order of the
        keys when they do not compare)."""
        selector = step.selectors[index]
        assert selector is not None
        groups: dict[Any, list[Any]] = {}
        for value in batch:
            try:
                key = selector(value)
            except Exception:
                key = None
            if key is None:  # the runtime's error for this record (``route_key`` raises it)
                key = step.task.route(index, value)[0]
            found = groups.get(key)
            if found is None:
                groups[key] = [value]
            else:
                found.append(value)
        try:
            return sorted(groups.items(), key=_first)
        except TypeError:
            return list(groups.items())

    def emit(self, step: _Step, outs: Iterable[Any] | None) -> None:
        """Outputs of ``step`` (``SideOutput`` values to their side outputs) to its consumers."""
        if not outs:
            return
        main: list[Any] = []
        sides: dict[str | None, list[Any]] | None = None
        for out in outs:
            if isinstance(out, SideOutput):
                if sides is None:
                    sides = {}
                sides.setdefault(out.tag_id, []).append(out.value)
            else:
                main.append(out)
        self._forward(step, main, sides)

    def _forward(self, step: _Step, main: list[Any], sides: dict[str | None, list[Any]] | None) -> None:
        for tag, down, index in step.down:
            if tag is None:
                self._queue(down, index, main)
            elif sides is not None:
                self._queue(down, index, sides.get(tag, []))

    def activate(self) -> None:
        """A batch boundary: every operator's ``on_activation``, its outputs sent on."""
        for step, op, rt in self._active:
            try:
                outs = op.on_activation(rt)
            except Exception as exc:
                raise step.task.step_error(exc, "on_activation")  # noqa: B904 - it sets the cause
            self.emit(step, outs)
        self._drain()

    # Ends.
    def end_source(self, source: Node) -> None:
        """``source`` has no more batches."""
        self.end(self.steps[source.id], 0)

    def end(self, step: _Step, index: int) -> None:
        """Input ``index`` of ``step`` ended: once all have, its ``end_input`` outputs go on and
        its consumers' inputs end."""
        step.ended[index] = True
        if not all(step.ended):
            return
        for inst in step.task.instances:
            try:
                outs = inst.op.end_input(inst.rt)
            except Exception as exc:
                raise step.task.step_error(exc, "end_input")  # noqa: B904 - it sets the cause
            self.emit(step, outs)
        self._drain()  # what the step emitted reaches its consumers before their inputs end
        for _tag, down, down_index in step.down:
            self.end(down, down_index)

    def close(self) -> None:
        """Every operator's ``close``."""
        for step in self.order:
            for inst in step.task.instances:
                try:
                    inst.op.close()
                except Exception as exc:
                    raise step.task.step_error(exc, "close")  # noqa: B904 - it sets the cause


def end_order(nodes: Sequence[Node]) -> list[Node]:
    """The steps of the plan of ``nodes`` in the order ``BatchedRunner.end`` ends them when its
    sources end one after another in plan order: a step once all its inputs have ended, then its
    consumers, depth first (what each one emits at the end of input runs through the steps after
    it before the next one ends).

    >>> from ._plan import Edge, SinkNode, SourceNode
    >>> src = SourceNode("src")
    >>> a, b = SinkNode("a", [Edge(src)]), SinkNode("b", [Edge(src)])
    >>> [n.name for n in end_order([b, a])]
    ['src', 'a', 'b']
    """
    plan = sorted(upstream_of(nodes), key=_node_id)  # the order the steps were made in
    consumers: dict[int, list[tuple[Node, int]]] = {node.id: [] for node in plan}
    for node in plan:
        for index, edge in enumerate(node.inputs):
            consumers[edge.source.id].append((node, index))
    ended: dict[int, set[int]] = {node.id: set() for node in plan}
    order: list[Node] = []
    stack = [(node, 0) for node in reversed(plan) if not node.inputs]
    while stack:
        node, index = stack.pop()
        ended[node.id].add(index)
        if len(ended[node.id]) < max(1, len(node.inputs)):
            continue
        order.append(node)
        stack.extend(reversed(consumers[node.id]))
    return order


def _node_id(node: Node) -> int:
    return node.id


def _first(item: tuple[Any, Any]) -> Any:
    return item[0]


def _consume_each(node: SinkNode, batch: list[Any]) -> None:
    consume = node.consume
    assert consume is not None
    for value in batch:
        consume(value)
