"""Chaining on Spark: which steps of a bounded plan run in another step's pass instead of a
stage of their own, and running stateless steps in a route pass.

- ``chained``: a single-input, non-keyed step fed by the main output of a step of the same
  parallelism that nobody else reads runs in that step's run pass (Flink's chaining of forward
  edges: subtask ``i`` feeds subtask ``i``, in order, as the shuffle would).
- ``prechained``: stateless steps (``OperatorNode.stateless``: Bytewax's ``map``, ``filter``,
  ``flat_map``, ...) between a source or a step and the keyed step they feed run in that keyed
  step's route pass (``Prechain``), on each record where it is, as Bytewax runs them on whichever
  worker holds the item; their outputs are routed instead.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator, Sequence
from typing import Any

from fs_compat.runtime import LocalConfig, Node, OperatorNode, SubtaskRunner, TimestampNode

from ._convert import dumps_events
from ._counters import StepTally
from ._events import FIELDS, ORIGIN_SHIFT, POSITIONS, arrow_schema, parallelism


def chained(node: Node, nodes: Sequence[Node], uses: dict[int, int], config: LocalConfig) -> Node | None:
    """The step that runs in ``node``'s pass after it, if any: the only reader of ``node``'s
    output, reading its main output through a forward edge (one input, neither keyed, broadcast
    nor custom-partitioned, the same parallelism), as Flink chains operators."""
    if not isinstance(node, (OperatorNode, TimestampNode)) or uses.get(node.id, 0) != 1:
        return None
    for follower in nodes:
        if len(follower.inputs) != 1 or follower.inputs[0].source is not node:
            continue
        edge = follower.inputs[0]
        ok = (
            isinstance(follower, OperatorNode)
            and not follower.keyed
            and edge.side_tag is None
            and edge.plain
            and parallelism(follower, config) == parallelism(node, config)
        )
        return follower if ok else None
    return None


def prechained(node: Node, nodes: Sequence[Node], uses: dict[int, int], config: LocalConfig) -> list[Node]:
    """The steps that run in keyed ``node``'s route pass, before its key selector (first
    first): the ``stateless``, non-keyed steps its only input comes through, one after another,
    each read by the next only (one input, main output, a plain edge: ``Edge.plain``). Records of
    stateless steps may be handled wherever they are, as Bytewax does; steps chained into an
    upstream step's pass (``chained``) stay there."""
    if not isinstance(node, OperatorNode) or not node.keyed or len(node.inputs) != 1:
        return []
    steps: list[Node] = []
    edge = node.inputs[0]
    while True:
        up = edge.source
        ok = (
            isinstance(up, OperatorNode)
            and up.stateless
            and not up.keyed
            and len(up.inputs) == 1
            and uses.get(up.id, 0) == 1
            and edge.side_tag is None
            and up.inputs[0].plain
        )
        if not ok:
            break
        steps.insert(0, up)
        edge = up.inputs[0]
    while steps and chained(steps[0].inputs[0].source, nodes, uses, config) is steps[0]:
        steps.pop(0)
    return steps


class Prechain:
    """Stateless steps (``OperatorNode.stateless``, first first) that run in the route pass of
    the keyed step they feed, before its key selector (see ``prechained``); ``tally`` counts
    them. ``open`` gives what one Spark task runs them with."""

    def __init__(self, steps: Sequence[Node], config: LocalConfig, tally: StepTally | None) -> None:
        self.steps = list(steps)
        self.config = config
        self.tally = tally

    def open(self, channels: int, stamped: bool = True) -> PrechainTask:
        """The steps in one route task; ``stamped``: whether the records may carry timestamps
        (with False, ``records`` hands every output its record's None, see ``PrechainTask``)."""
        return PrechainTask(self, channels, stamped)


class PrechainTask:
    """The stateless steps in one route task: a SubtaskRunner of them, whose outputs replace
    the records. Watermarks pass by them (the steps emit nothing at watermarks or at the end
    of input). Unless ``stamped``, the records have no timestamps, and the outputs are taken
    as bare values (``SubtaskRunner``'s ``values``: a one-to-one step hands each output straight
    to the list, no output tuple per record; ``bench/w1.py``'s Bytewax W1 spends ~10 % less in
    its route pass so); ``events`` then may not be called."""

    def __init__(self, chain: Prechain, channels: int, stamped: bool = True) -> None:
        from pyspark import TaskContext

        context = TaskContext.get()
        task = context.partitionId() if context is not None else 0
        first, config = chain.steps[0], chain.config
        #: Without timestamps: the main output's values (the steps have no side outputs read).
        self.values: list[Any] | None = None if stamped else []
        self.runner = SubtaskRunner(
            first, task % parallelism(first, config), config, [1], (), chain.steps[1:], self.values
        )
        self.counts = chain.tally.open() if chain.tally is not None else None
        if self.counts is not None:
            self.counts.started(self.runner)
        # A frame of one channel may hold it in several partitions (a source's), in partition
        # order; in other frames partition i holds channel i. Outputs are numbered in order
        # (with origins, each after the origin of the record it comes from: ``EventWriter``).
        self.seq = task << 32 if channels == 1 else 0
        self.origins = config.origins

    def records(self, values: list[Any], stamps: list[int | None]) -> tuple[list[Any], list[int | None]]:
        """The outputs of the records ``values`` (with ``stamps``), and their timestamps."""
        if self.counts is not None:
            self.counts.records[0] += len(values)
        self.runner.records(0, values, stamps)
        if self.values is not None:
            outs = self.values[:]
            self.values.clear()
            return outs, [None] * len(outs)
        drained = self.runner.drain()
        return [out[1] for out in drained], [out[2] for out in drained]

    def events(self, batch: Any) -> tuple[Any, list[Any]]:
        """The events of ``batch`` (``FIELDS``) after the steps: each record replaced by its
        outputs (on its channel, with their timestamps), the watermarks as they are, numbered
        anew (``seq``); also the values of the new events (None for watermarks)."""
        import pyarrow as pa

        assert self.values is None, "events of a prechain opened without timestamps"

        loads, push, drain = pickle.loads, self.runner.push, self.runner.drain
        if self.counts is not None:
            self.counts.records[0] += batch.column("wm").null_count
        values: list[Any] = []
        stamps: list[int | None] = []
        marks: list[int | None] = []
        chs: list[int] = []
        origins: list[int] = []
        names = ("v", "ts", "wm", "ch", "seq")
        for v, ts, wm, ch, seq in zip(*(batch.column(name).to_pylist() for name in names), strict=True):
            if wm is not None:
                values.append(None)
                stamps.append(ts)
                marks.append(wm)
                chs.append(ch)
                origins.append(seq >> ORIGIN_SHIFT)
                continue
            push(0, loads(v), ts)
            for _tag, value, stamp, _wm in drain():
                values.append(value)
                stamps.append(stamp)
                marks.append(None)
                chs.append(ch)
                origins.append(seq >> ORIGIN_SHIFT)
        n = len(values)
        first, self.seq = self.seq, self.seq + n
        seqs: Any = range(first, first + n)
        if self.origins:
            seqs = [o << ORIGIN_SHIFT | (k & POSITIONS) for o, k in zip(origins, seqs, strict=True)]
        arrays = [
            pa.nulls(n, pa.string()),
            pa.array(dumps_events(values, marks), pa.binary()),
            pa.array(stamps, pa.int64()),
            pa.array(marks, pa.int64()),
            pa.array(chs, pa.int32()),
            pa.array(seqs, pa.int64()),
        ]
        return pa.RecordBatch.from_arrays(arrays, schema=arrow_schema(FIELDS)), values

    def close(self, schema: Any) -> Iterator[Any]:
        """The route task ended: close the steps (their end-of-input watermark is dropped: the
        keyed step's pass ends its input itself) and hand over the counts (over Connect, as
        a batch of ``schema``, the route pass's output schema)."""
        self.runner.finish()
        self.runner.drain()
        if self.values is not None:
            self.values.clear()
        if self.counts is not None:
            self.counts.finished(self.runner)
            yield from self.counts.publish(schema)
