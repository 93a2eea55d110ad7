"""Unbounded plans on Spark Structured Streaming, with the job's keyed state and timers in Spark's
checkpointed state store.

Supported shape: one or more streaming DataFrame sources; non-keyed steps (``map``, ``union``,
non-keyed co-functions, timestamps before the first keyed step); any number of keyed steps, each
with one or more inputs (``connect`` of keyed streams, a ``union`` before ``key_by``), each keyed
step's outputs (main and side, ``Feed.tag``; any step's on the way, ``Feed.reads``) read by one
step or the output, or by several paths that all reach the same keyed step or all the output
(``K.union(K.get_side_output(t).map(f))``: ``_KeyGroups``' branches), or by several keyed steps
(a diamond: ``A`` and ``B`` both read ``K``; they run as one *stage*, below), or by the job's
output and keyed steps (``K.union(K.key_by(f).process(g))``: a *relay*, below), or by keyed steps
of different depths (``K.union(A).key_by(f)`` with ``A`` reading ``K``: a *lane*, below);
broadcast state on keyed streams and on streams that are not keyed, custom partitioning
(``partition_custom``).

A *stage* (``stages_of``) is one ``transformWithStateInPandas`` operator: usually one keyed step,
but the keyed steps that read one stage's outputs are one stage, since a streaming DataFrame read
twice is planned twice (two state operators, the user's code run twice). The steps of a stage
share its groups' range: the step at ``slot`` has groups ``slot * max_parallelism + kg``, so a
stage of one step has exactly its key groups (and a checkpoint the same layout as before stages).
A stage's outputs go either to the job's output or to the next stage: when its steps' outputs go
to both (or it passes on rows of stages before it), the rows bound for the job's output travel
through the next stage's *relay* (``_Relay``, the slot after its steps'; no state, no timers), and
so on to the stage whose outputs are the job's. When grouping the readers of a stage would put a
keyed step in the stage of a step it reads (``B`` reads ``K`` and ``A``, ``A`` reads ``K``), the
stages are the steps' levels instead, one chain, and the records for a step of a later stage than
the next cross the stages between in *lanes* (``_Lane``, a slot after the relay's per such step;
no state): routed to the step's key groups where they are emitted, and passed on with their
channels' watermarks.

A step that is not keyed but reads a broadcast stream (``BroadcastProcessFunction``) or a
custom-partitioned one is run like a keyed step (``_grouped``), in one key group per parallel
instance (``groups_of``): the broadcast records reach each of those groups, the others go
round-robin to them (or where the partitioner says, ``_Spread``), and each instance's broadcast
state is the operator state in its group's state row. A keyed step's broadcast records reach
every key group (each keeps its broadcast state); what ``process_broadcast_element`` emits is
kept from the first key group of each parallel instance only (``_KeyGroups.speaking``), as Flink
calls it once per instance.

The job is cut into *feeds* (``Feed``): paths of records from a source or a keyed step's output,
through non-keyed steps, to one input of a keyed step (or the output). Each feed into a keyed
step is one *channel* of it (an input has as many channels as feeds reach it: a ``union`` before
``key_by`` gives two).

Physical plan:

1. Per feed from a source, ``mapInArrow`` over the source: rows become ``Row`` values, the
   feed's steps run, and each record gets its key's *key group* (Flink's, ``KeyEncoder``: the
   same on every target). Rows out (``_PRE_FIELDS``): one *chunk* per key group and Arrow
   batch (``chunks``): ``kg``, ``seq`` (its first record's order within the micro-batch),
   ``v`` (the pickled records: each one's order, value, timestamp and key when an ``int`` or a
   ``str``; a source's records read straight by the keyed step go column by column,
   ``column_chunks``, their keys as the column the selector reads when it reads one), ``n``
   (how many) and the channel ``ch``; so Spark shuffles and
   ``transformWithStateInPandas`` hands over ~128 rows per 10,000 records, not one per record
   (PySpark loops over its input rows in Python). At the end of its input each partition adds
   one marker row per key group carrying the channel's watermark (the largest timestamp it saw
   - the feed's delay, or none), so every key group is visited in every micro-batch:
   processing-time timers and TTL cleanup run for idle keys too, and every key group learns
   each channel's watermark.
2. Per keyed step, the union of its feeds' rows, grouped by each key group's ``grouping_key``
   (a ``bigint`` Spark hash-partitions key group ``g`` of a stage into partition ``g % p``: as
   many key groups in each partition), ``transformWithStateInPandas`` (time mode None, no Spark
   watermark; processing time is the micro-batch's, ``current_timestamp()``, in a ``now``
   column; Spark chains several of these in one query, each with its own state in the
   checkpoint, where it refuses two ``applyInPandasWithState``):
   one state row (a ``ValueState``) per key group holds that group's timers and operator states
   as one blob, plus a header read without unpickling the blob: a token (the group's version,
   random, new with each write), the watermark of each channel, the earliest event-time and
   processing-time timers, and whether state with TTL holds entries. The group's keyed state is
   in the blob too up to ``INLINE_KEYS`` keys; a bigger group's is cut by key into buckets
   (``_Parts``, a ``MapState``): a bucket is read when a key of it becomes current
   (``_Loader``), which adds just that key's entries to the operator, and written back when a
   touched key's entries changed, so a call costs what it touches; a step
   whose operator may read other keys' state keeps it whole in the blob
   (``KeyedStateBackend.snapshot_key_group``). A call with only markers for a group none of
   whose timers is due (by the new watermark, by processing time) and that holds no TTL state
   returns at once: nothing is
   restored or rewritten (when a channel's watermark grew, the row is written back with only
   that field changed). Otherwise: take the group from this Python worker's cache when it holds
   the row's version (same token), else restore it from the blob into a new operator instance;
   fire due processing-time timers, process the group's records (channel by channel, each in
   input order), advance each channel's watermark (the step's is the smallest of its channels',
   as in Flink; event-time timers fire), run the steps of the feed after the keyed one, and
   write the row back only if it changed (blobs are pickled without pickle's memo, so unchanged
   state gives the same bytes). The last keyed step's output rows follow the stream's output
   type (``_convert.OutputColumns``); a keyed step followed by another writes chunks of the
   pre-pass's form, routed to the next step's key groups on its channel (``_NextStep``), and one
   marker per call and next step (``kg`` ``-1 - slot``) carrying the step's watermark, which
   ``_markers`` turns into one marker per key group of the next step, so that every key group of
   every keyed step is visited in every micro-batch and learns its channels' watermarks. Feeds
   from sources straight to the output are one ``mapInArrow`` each; the output is the union of
   the feeds that reach it.

The watermark is computed here rather than by Spark: Spark drops records behind its watermark
before a stateful step, and it gives a stateful step no watermark unless the step's own input
column carries one. A feed's ``delay`` is the WatermarkStrategy's out-of-orderness + 1 ms
(Flink's watermark is ``max - out_of_orderness - 1``), or the delay of the source's
``withWatermark`` column (Spark's watermark is ``max - delay``). Records are never dropped as
late: as in Flink, a process function sees them. A source with no new data in a micro-batch
sends no markers: its channel keeps its watermark in key groups that hold a state row, and a key
group without one learns it when the source next has data (its new timers wait until then).

Processing time is the micro-batch's timestamp unless the job set a clock
(``env.set_processing_time_clock``). ``open()`` runs when a Python worker first uses a key group,
and again when its cached instance is stale (another worker or an earlier run of the micro-batch
wrote the group since); ``close()`` is not called (a streaming query has no end).

The worker cache (``_WorkerCache``) lives in this module, as Spark unpickles the function anew for
every task while it reuses the Python worker process; it keeps key groups held whole, is used by
calls that touch about every bucket, and is bounded by the total size of the blobs it holds
(``spark.fs_compat.streaming.workerCacheBytes``, 64 MiB by default).
"""

from __future__ import annotations

import itertools
import pickle
import random
import uuid
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, TypeGuard

import attrs

from fs_compat.common.internal import create_row, make_rows
from fs_compat.runtime import (
    ChainLink,
    ExternalSourceNode,
    KeyedStateBackend,
    KeyEncoder,
    LocalConfig,
    Node,
    Operator,
    OperatorNode,
    RuntimeMode,
    SinkNode,
    StateAccessError,
    StateEntry,
    SubtaskRunner,
    TimestampNode,
    overrides,
    route_custom,
    route_keys,
    row_field,
    snapshot_format_error,
    stable_pickle,
    subtask_of,
    upstream_of,
)

from ._convert import OutputColumns, RowReader, dumps
from ._events import watermark_column
from ._progress import METRICS_COLUMN, metric_changes, runner_metrics, watch
from ._routing import (
    chunk,
    chunk_seqs,
    chunks,
    column_chunks,
    grouping_key,
    pack_places,
    place_counts,
    read_chunk,
    selects_field,
    spark_hash_long,
)
from ._ship import check_shippable, ship_user_code
from ._task import micro_batch_id
from ._worker import worker_pass

_MIN = -(2**63)

#: The watermark a source's last marker carries when its input ends (Flink's MAX_WATERMARK,
#: ``Long.MAX_VALUE``): every event-time timer fires, and a key group whose channels all reach
#: it ends its input (``_KeyGroups._end``: ``end_input``, Bytewax's EOF). A bounded source run as
#: a stream (the ``spark-streaming`` target) says where its input ends with a row whose
#: ``END_COLUMN`` holds ``_END`` (``_cut_end``).
_END = 2**63 - 1
#: The column of a source that marks its end-of-input rows (no record): the watermark the end
#: carries, ``_END`` or an ``end_of_run`` (null on a record's row).
END_COLUMN = "_fs_compat_end"
#: Where the ends of runs start (``end_of_run``): far above any event time, exact as a float
#: (a column with nulls is float on the way, ``_stamps``).
_RUN_END = 2**62


def end_of_run(run: int) -> int:
    """The watermark that ends run ``run`` of a job that a later run continues from its
    checkpoint (Bytewax's ``TestingSource.EOF()`` under recovery): like ``_END``, every key group
    it reaches ends its input (``end_input``, Bytewax's EOF), but the next run's end, a higher
    one, ends it again. A multiple of 2**20 above ``_RUN_END``: exact as a float.

    >>> end_of_run(0) < end_of_run(1) < _END
    True
    >>> float(end_of_run(5)) == end_of_run(5)
    True
    """
    if not 0 <= run < 2**40:
        raise ValueError(f"run must be in [0, 2**40); got {run}")
    return _RUN_END + (run << 20)


#: The pre-pass's rows: key group, order, pickled value, timestamp, and the channel of the keyed
#: step it arrives on (``Feed.ch``). A row with ``n`` set is a *chunk*: ``n`` records of one key
#: group, in order, from one batch of a source's pass (``chunks``): ``seq`` is its first
#: record's, ``v`` the pickled records' places in the batch (``pack_places``: a record's ``seq``
#: is the first's plus its place minus the first's, ``chunk_seqs``), values,
#: timestamps and keys where an ``int`` or a ``str``, or all of a column the key selector reads as
#: it is (``column_chunks``; so the key-group pass need not run the key selector); ``ts`` null.
#: A marker (``v`` null) carries a channel's watermark in ``ts``.
_PRE_FIELDS = (
    ("kg", "int"),
    ("seq", "long"),
    ("v", "binary"),
    ("ts", "long"),
    ("ch", "int"),
    ("n", "int"),
)


class StreamPlanError(ValueError):
    """A job a streaming DataFrame cannot run as it is built."""


@attrs.frozen
class Feed:
    """One path of records in a streaming job: from ``start`` (a streaming source, or a keyed
    step's output ``tag``: None for the main output, else a side output) through the non-keyed
    ``steps`` (each with the input of it that the records enter, and in ``reads`` the output of
    it that the next one reads) to input ``inp`` of the keyed step ``end``, as channel ``ch`` of
    that step (``local``: the channel's number among those of input ``inp``), or, ``end`` None,
    to the job's output."""

    start: Node
    steps: tuple[tuple[Node, int], ...] = ()
    end: OperatorNode | None = None
    inp: int = 0
    ch: int = 0
    local: int = 0
    tag: str | None = None
    reads: tuple[str | None, ...] = attrs.field()

    @reads.default
    def _main_outputs(self) -> tuple[str | None, ...]:
        return (None,) * len(self.steps)

    @property
    def links(self) -> tuple[ChainLink, ...]:
        """``steps`` as ``SubtaskRunner``'s chain links: each with the output of the one before
        it (of ``start`` for the first) that it reads."""
        read = (self.tag, *self.reads)
        return tuple((n, i, read[k]) for k, (n, i) in enumerate(self.steps))

    @property
    def out_tag(self) -> str | None:
        """The output of the path's last step (of ``start`` when it has none) that goes on to
        ``end`` or the job's output."""
        return self.reads[-1] if self.steps else self.tag

    @property
    def source(self) -> ExternalSourceNode | None:
        return self.start if isinstance(self.start, ExternalSourceNode) else None

    @property
    def broadcast(self) -> bool:
        """Whether the feed is a broadcast input of its step: every group of the step
        (``groups_of``) gets every record."""
        return self.end is not None and self.end.inputs[self.inp].broadcast

    @property
    def spread(self) -> bool:
        """Whether the feed is a plain (neither keyed nor broadcast) input of a step that is not
        keyed (a ``BroadcastProcessFunction``, a step after ``partition_custom``): its records go
        to the step's groups, one per parallel instance (``groups_of``, ``_Spread``)."""
        return self.end is not None and not self.broadcast and self.end.inputs[self.inp].key_selector is None


@attrs.frozen
class StreamShape:
    """A streaming job as feeds: every keyed step (upstream ones first), every path of records
    between sources, keyed steps and the output (``Feed``), and the keyed steps as *stages*
    (``stages_of``), upstream ones first, with the stage each one's frame goes to (``ahead``):
    the keyed steps that read the same stage's outputs run as one stage, one state operator of
    the query."""

    keyed: tuple[OperatorNode, ...]
    feeds: tuple[Feed, ...]
    stages: tuple[tuple[OperatorNode, ...], ...] = ()
    ahead: tuple[int | None, ...] = ()

    def stage_of(self, step: Node) -> int:
        """The index in ``stages`` of keyed ``step``'s stage."""
        return next(i for i, stage in enumerate(self.stages) if any(m is step for m in stage))

    def onward(self, stage: int) -> int | None:
        """The stage that reads stage ``stage``'s frame (one at most: ``stages_of``), None when
        its rows are the job's output."""
        return self.ahead[stage]

    def _way(self, start: int, stage: int) -> list[int]:
        """The stages from ``start`` up to the one whose frame ``stage`` reads, following each
        stage's frame (``ahead``): ``[start]`` when ``stage`` reads ``start``'s frame."""
        way = [start]
        while self.ahead[way[-1]] != stage:
            on = self.ahead[way[-1]]
            assert on is not None, f"stage {stage} is not ahead of stage {start}"
            way.append(on)
        return way

    def hop(self, start: int, stage: int) -> int:
        """The stage whose frame brings stage ``start``'s rows to stage ``stage``: ``start``
        itself, or the last stage on the way whose lanes pass them on."""
        return self._way(start, stage)[-1]

    def lanes(self, stage: int) -> list[OperatorNode]:
        """The keyed steps of later stages whose records cross stage ``stage`` (``crossing``):
        each has a *lane* in it (``_Lane``), a stateless slot after its steps' and its relay's."""
        ends = {f.end.id for f in self.crossing(stage) if f.end is not None}
        return [k for k in self.keyed if k.id in ends]

    def crossing(self, stage: int) -> list[Feed]:
        """The feeds between keyed steps whose records cross stage ``stage`` in its lanes: stage
        ``stage`` is on the way from the first step's stage to a later stage than the one that
        reads its frame, the second step's."""
        return [
            f
            for f in self.feeds
            if f.end is not None
            and f.source is None
            and stage in self._way(self.stage_of(f.start), self.stage_of(f.end))[1:]
        ]

    def entry(self, stage: int, step: OperatorNode) -> int:
        """The slot of stage ``stage`` where records for keyed ``step`` enter: the step's own
        place when it is a step of the stage, else its lane's, after the steps' and the relay's."""
        members = self.stages[stage]
        for slot, m in enumerate(members):
            if m is step:
                return slot
        lanes = self.lanes(stage)
        return len(members) + int(self.has_relay(stage)) + next(i for i, k in enumerate(lanes) if k is step)

    def relayed(self, stage: int) -> bool:
        """Whether stage ``stage``'s rows bound for the job's output (its steps', its relay's)
        go through the relay of the stage it feeds: its frame is read by that stage only."""
        return self._relayed()[stage]

    def has_relay(self, stage: int) -> bool:
        """Whether stage ``stage`` holds a relay (``_Relay``): rows bound for the job's output
        of a stage before it, whose outputs go to keyed steps too, pass through it."""
        relayed = self._relayed()
        return any(relayed[j] and self.onward(j) == stage for j in range(stage))

    def _relayed(self) -> list[bool]:
        """``relayed`` of every stage, upstream first (a stage with a relay passes its rows on
        as its steps' own)."""
        found: list[bool] = []
        for i, stage in enumerate(self.stages):
            ahead = self.onward(i)
            relay = any(found[j] and self.onward(j) == i for j in range(i))
            to_output = any(f.end is None for m in stage for f in self.out_of(m))
            found.append(ahead is not None and (to_output or relay))
        return found

    def outputs(self) -> list[Feed]:
        """The feeds whose frames the job's output unions: each from a source, and one from each
        stage that feeds the output itself (the others' output rows are relayed)."""
        seen: set[int] = set()
        kept = []
        for f in self.into(None):
            if f.source is None:
                stage = self.stage_of(f.start)
                if stage in seen or self.relayed(stage):
                    continue
                seen.add(stage)
            kept.append(f)
        return kept

    def reads(self, stage: int) -> list[int]:
        """The stages whose frames stage ``stage`` reads, in the order its input unions them
        (those that bring its members' feeds, each in channel order; then its lanes'; then any
        other whose frame comes to it): Spark numbers the state operators so."""
        found: dict[int, None] = {}
        for member in self.stages[stage]:
            for feed in self.into(member):
                if feed.source is None:
                    found[self.hop(self.stage_of(feed.start), stage)] = None
        for feed in self.crossing(stage):
            found[self.hop(self.stage_of(feed.start), stage)] = None
        for up, on in enumerate(self.ahead):
            if on == stage:
                found[up] = None
        return list(found)

    def into(self, step: OperatorNode | None) -> list[Feed]:
        """The feeds that end at ``step`` (None: the job's output), in channel order."""
        return [f for f in self.feeds if f.end is step]

    def out_of(self, step: OperatorNode) -> list[Feed]:
        """The feeds that take keyed ``step``'s outputs on (one, or several that all end at the
        same step, or at the job's output)."""
        return [f for f in self.feeds if f.start is step]


def stream_shape(node: Node, tag: str | None = None) -> StreamShape:
    """The feeds of the job whose output is ``node``'s output ``tag``; refuses what a streaming
    DataFrame cannot run (see the module docstring)."""
    feeds: list[Feed] = []
    order: list[OperatorNode] = []  # keyed steps, each after every keyed step it reads

    def walk(
        upstream: Node,
        steps: list[tuple[Node, int]],
        reads: list[str | None],
        end: OperatorNode | None,
        inp: int,
        tag: str | None,
    ) -> None:
        """Walk up from ``upstream``, whose output ``tag`` the path ``steps`` (``reads``: what
        each of them passes on) leads on to ``end``."""
        if isinstance(upstream, SinkNode):
            raise StreamPlanError(f"step '{upstream.name}' is a sink; it has no output to read")
        if _grouped(upstream):
            if any(isinstance(n, TimestampNode) for n, _i in steps):
                raise StreamPlanError(
                    "assign timestamps before the first keyed (or broadcast) step on a streaming DataFrame"
                )
            first = not any(f.start is upstream for f in feeds)
            feeds.append(Feed(upstream, tuple(steps), end, inp, tag=tag, reads=tuple(reads)))
            if first:  # a later path from it (to the same place) shares its inputs and its place
                keyed_inputs(upstream)
                order.append(upstream)
            return
        if isinstance(upstream, ExternalSourceNode) or not upstream.inputs:
            if not (isinstance(upstream, ExternalSourceNode) and upstream.unbounded):
                raise StreamPlanError(
                    f"source '{upstream.name}' is bounded; on a streaming DataFrame every source "
                    "of the job must be a streaming DataFrame"
                )
            feeds.append(Feed(upstream, tuple(steps), end, inp, reads=tuple(reads)))
            return
        for j, edge in enumerate(upstream.inputs):  # a broadcast edge's step is ``_grouped``
            walk(edge.source, [(upstream, j), *steps], [tag, *reads], end, inp, edge.side_tag)

    def keyed_inputs(step: OperatorNode) -> None:
        for i, edge in enumerate(step.inputs):  # a broadcast input reaches every group of the step
            walk(edge.source, [], [], step, i, edge.side_tag)

    walk(node, [], [], None, 0, tag)
    numbered: list[Feed] = []
    for feed in feeds:
        same_end = [f for f in numbered if f.end is feed.end]
        local = sum(1 for f in same_end if f.inp == feed.inp)
        numbered.append(attrs.evolve(feed, ch=len(same_end), local=local))
    return StreamShape(tuple(order), tuple(numbered), *stages_of(order, numbered))


def stages_of(
    keyed: Sequence[OperatorNode], feeds: Sequence[Feed]
) -> tuple[tuple[tuple[OperatorNode, ...], ...], tuple[int | None, ...]]:
    """The keyed steps ``keyed`` (upstream first) as stages, in an order where each stage comes
    after every stage it reads, and for each stage the stage its frame goes to (``ahead``; None:
    the job's output). A stage's outputs are one streaming DataFrame, and each such DataFrame may
    be read only once (a second read would plan its state operator twice): so the keyed steps
    that read one stage's outputs run together, as one stage (a diamond of keyed steps: ``K``
    read by ``A`` and ``B``; ``A`` and ``B`` are one stage, each in its own range of the stage's
    groups). A stage whose outputs go both to keyed steps and to the job's output sends the
    latter through the next stage's relay (``StreamShape.has_relay``).

    When that grouping would put a keyed step in the stage of a step it reads (``B`` reads ``K``
    and ``A``, ``A`` reads ``K``) or make stages read each other, the stages are the steps'
    levels instead (``_levels``): one chain of stages, each step in the stage of its longest
    path from the sources, each stage's frame read by the next; records for a step further down
    pass the stages between through their *lanes* (``StreamShape.lanes``)."""
    parent = {k.id: k.id for k in keyed}

    def find(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i

    def members() -> dict[int, list[OperatorNode]]:
        found: dict[int, list[OperatorNode]] = {}
        for k in keyed:
            found.setdefault(find(k.id), []).append(k)
        return found

    # (reading step, read step): the feeds between keyed steps.
    between = [(f.start, f.end) for f in feeds if f.end is not None and f.start.id in parent]
    merged = True
    while merged:
        merged = False
        for group in members().values():
            ids = {m.id for m in group}
            steps = [end for start, end in between if start.id in ids]
            if any(e.id in ids for e in steps):
                return _levels(keyed, between)  # a step would read a step of its own stage
            for e in steps[1:]:
                a, b = find(steps[0].id), find(e.id)
                if a != b:
                    parent[b] = a
                    merged = True
    groups = members()
    index = {root: i for i, root in enumerate(groups)}  # in ``keyed`` order of their first member
    reads: dict[int, set[int]] = {i: set() for i in index.values()}
    ahead: dict[int, int] = {}
    for start, end in between:
        ahead[index[find(start.id)]] = index[find(end.id)]  # one: see the merge
        reads[index[find(end.id)]].add(index[find(start.id)])
    ordered: list[int] = []
    while len(ordered) < len(index):
        ready = [i for i in index.values() if i not in ordered and reads[i] <= set(ordered)]
        if not ready:
            return _levels(keyed, between)  # the stages would read each other
        ordered.append(ready[0])
    stages = list(groups.values())
    place = {old: new for new, old in enumerate(ordered)}
    return (
        tuple(tuple(stages[i]) for i in ordered),
        tuple(place[ahead[i]] if i in ahead else None for i in ordered),
    )


def _levels(
    keyed: Sequence[OperatorNode], between: Sequence[tuple[Node, OperatorNode]]
) -> tuple[tuple[tuple[OperatorNode, ...], ...], tuple[int | None, ...]]:
    """``stages_of``'s stages as one chain: stage ``i`` holds the keyed steps whose longest path
    of keyed steps from a source has ``i`` steps before them (``keyed`` is upstream first;
    ``between``: which keyed step reads which), and its frame goes to stage ``i + 1``."""
    level: dict[int, int] = {}
    for k in keyed:
        level[k.id] = max((level[start.id] + 1 for start, end in between if end is k), default=0)
    stages = [tuple(k for k in keyed if level[k.id] == i) for i in range(max(level.values(), default=-1) + 1)]
    return tuple(stages), tuple(i + 1 if i + 1 < len(stages) else None for i in range(len(stages)))


def _is_keyed(node: Node) -> bool:
    return isinstance(node, OperatorNode) and node.keyed


def _grouped(node: Node) -> TypeGuard[OperatorNode]:
    """Whether ``node`` runs in a key-group pass of its own: a keyed step, or a step that is not
    keyed but reads a broadcast stream (``BroadcastProcessFunction``: its broadcast state lives in
    the checkpoint too) or a custom-partitioned one (``partition_custom``: the partitioner picks
    the parallel instance); see ``groups_of``."""
    return isinstance(node, OperatorNode) and (
        node.keyed or any(e.broadcast or e.partitioner is not None for e in node.inputs)
    )


def _kind(node: Node) -> str:
    if _is_keyed(node):
        return "keyed step"
    broadcast = isinstance(node, OperatorNode) and any(e.broadcast for e in node.inputs)
    return "broadcast step" if broadcast else "custom-partitioned step"


def groups_of(step: OperatorNode, config: LocalConfig) -> list[int]:
    """The key groups a ``_grouped`` step runs in: every key group for a keyed step; for one that
    is not keyed, one per parallel instance, the first of the instance's range (Flink's range
    assignment, ``subtask_of``), so that each instance has its own broadcast state and its own
    records, as in Flink.

    >>> groups_of(OperatorNode("s", parallelism=3), LocalConfig(max_parallelism=128))
    [0, 43, 86]
    """
    if step.keyed:
        return list(range(config.max_parallelism))
    return _first_groups(step.parallelism or config.parallelism, config.max_parallelism)


def _first_groups(p: int, n: int) -> list[int]:
    """The first key group of each of ``p`` parallel instances' ranges of ``n``."""
    return [-(-i * n // p) for i in range(p)]


class _Spread:
    """The key groups of records on a ``Feed.spread`` feed, one group per parallel instance of
    its step (``groups_of``): where the edge's custom partitioner says (``partition_custom``),
    else round-robin (Flink's rebalance), continuing from call to call."""

    def __init__(self, feed: Feed, config: LocalConfig, start: int = 0) -> None:
        assert feed.end is not None
        self.step = feed.end.name
        self.partitioner = feed.end.inputs[feed.inp].partitioner
        self.groups = groups_of(feed.end, config)
        self.next = start % len(self.groups)

    def __call__(self, values: Sequence[Any], start: int | None = None) -> list[int]:
        """Each of ``values``' key group; a round-robin round starts at group ``start`` (modulo
        the groups), else where the last call's ended."""
        groups, p = self.groups, len(self.groups)
        if self.partitioner is not None:
            step, partitioner = self.step, self.partitioner
            return [groups[route_custom(step, partitioner, v, p)] for v in values]
        start = self.next if start is None else start % p
        self.next = (start + len(values)) % p
        return [groups[(start + j) % p] for j in range(len(values))]


def _watermark_delay(feed: Feed) -> int | None:
    """``largest timestamp - watermark`` in ms for the records of a source's ``feed``, or None
    when they have no watermark."""
    stamps = [n for n, _i in feed.steps if isinstance(n, TimestampNode)]
    if stamps:
        ooo = stamps[-1].out_of_orderness_ms
        return None if ooo is None else ooo + 1
    assert feed.source is not None
    marked = watermark_column(feed.source.handle.schema)
    return marked[1] if marked else None


def stream_dataframe(
    spark: Any,
    node: Node,
    tag: str | None,
    config: LocalConfig,
    output_type: Any,
    clock: Callable[[], int] | None = None,
    channels: bool = False,
) -> Any:
    """The streaming DataFrame of ``node``'s output ``tag`` (see the module docstring); with
    ``channels``, and a column ``ch``: the subtask of the keyed step a row comes out of (null for
    rows of a stateless pass from a source)."""
    if config.mode is RuntimeMode.BATCH:
        raise StreamPlanError(
            "BATCH execution mode needs bounded input; this job reads a streaming DataFrame"
        )
    del spark  # the source DataFrames know their session
    ship_user_code()
    check_shippable(upstream_of([node]))
    shape = stream_shape(node, tag)
    out = OutputColumns(output_type, node.name)
    sources = [f.source for f in shape.feeds if f.source is not None]
    session = sources[0].handle.sparkSession
    frames: dict[int, Any] = {}  # stage -> its key-group pass's DataFrame
    # The line per micro-batch (``_progress``): counts between the passes (point 0: into the
    # first stage; point i: out of stage i), and the first keyed step's channels' watermarks
    # (its markers carry them).
    first = shape.into(shape.keyed[0] if shape.keyed else None)
    stepped = [
        n
        for keyed in shape.keyed
        for n in (keyed, *dict.fromkeys(s for f in shape.out_of(keyed) for s, _i in f.steps))
    ]
    timed = any(_watermark_delay(f) is not None for f in first if f.source is not None)
    observe = watch(
        sources[0].handle,
        [n.name for n, _i in first[0].steps],
        [" + ".join(m.name for m in stage) for stage in shape.stages],
        0 if timed else None,  # the markers carry the watermark itself
        [(n.id, n.name) for n in stepped],
        len(first),
    )
    if shape.keyed:
        _use_rocksdb(session)
    pre_schema = _spark_schema(_PRE_FIELDS)
    cache_bytes = int(session.conf.get(WORKER_CACHE_CONF, str(DEFAULT_WORKER_CACHE_BYTES)))
    n_groups = config.max_parallelism
    for i, stage in enumerate(shape.stages):
        inputs = []
        targets: dict[int, list[tuple[int, Sequence[int], int]]] = {}  # upstream stage -> markers
        fns: list[_KeyGroups | _Relay | _Lane] = []
        ahead = shape.onward(i)
        # Where this stage's rows bound for the output go: the next stage's relay (after its
        # steps), and where the rows for each keyed step enter the next stage (a slot holds the
        # groups ``slot * max_parallelism + kg``).
        relay_slot = len(shape.stages[ahead]) if ahead is not None and shape.relayed(i) else None
        slots = (
            None
            if ahead is None
            else {k.id: shape.entry(ahead, k) for k in (*shape.stages[ahead], *shape.lanes(ahead))}
        )
        for slot, keyed in enumerate(stage):
            groups = [slot * n_groups + g for g in groups_of(keyed, config)]
            for feed in shape.into(keyed):
                if feed.source is not None:
                    pre = _pre(feed, config, slot * n_groups)
                    inputs.append(feed.source.handle.mapInArrow(pre, pre_schema))
                else:
                    up = shape.hop(shape.stage_of(feed.start), i)
                    targets.setdefault(up, []).append((slot, groups, feed.ch))
            onward = shape.out_of(keyed)
            fns.append(
                _KeyGroups(
                    keyed,
                    onward,
                    config,
                    out,
                    clock,
                    [(f.inp, f.local) for f in shape.into(keyed)],
                    [_source_names(f) for f in shape.into(keyed)],
                    cache_bytes,
                    slots,
                    relay_slot,
                )
            )
        for feed in shape.crossing(i):  # a lane's markers: to its first group, passed on from there
            assert feed.end is not None
            lane = shape.entry(i, feed.end)
            targets.setdefault(shape.hop(shape.stage_of(feed.start), i), []).append(
                (lane, [lane * n_groups], feed.ch)
            )
        if shape.has_relay(i):
            fns.append(_Relay(config, out, relay_slot))
        for step in shape.lanes(i):
            assert ahead is not None  # a lane leads to a later stage
            fns.append(_Lane(shape.entry(ahead, step), n_groups))
        # One pass over each upstream stage's frame (read once), in ``shape.reads`` order.
        for up in shape.reads(i):
            inputs.append(frames[up].mapInArrow(_markers(targets.get(up, [])), pre_schema))
        last = ahead is None  # the stage's outputs (its relay's too) are the job's
        schema = pre_schema
        if last:  # plus the column the calls' metrics travel in (``_progress``; dropped after it)
            schema = _with_metrics(out.schema, channels)
            for fn in fns:
                assert not isinstance(fn, _Lane)
                fn.metrics_column = METRICS_COLUMN
                fn.channel_column = CHANNEL_COLUMN if channels else None
                fn.frame_schema = schema
        df = _union(inputs)
        if i == 0:
            df = observe(df, 0, "events")
        df = (
            df.withColumn("now", _batch_time_ms())
            .withColumn("kg", _grouping_keys(len(fns) * n_groups))
            .groupBy("kg")
            .transformWithStateInPandas(_KeyGroupProcessor(fns, n_groups), schema, "Append", "None")
        )
        frames[i] = observe(df, i + 1, METRICS_COLUMN if last else "events")
    outputs = [
        frames[shape.stage_of(f.start)]
        if f.source is None
        else _no_channel(f.source.handle.mapInArrow(_stateless(f, config, out), out.schema), channels)
        for f in shape.outputs()
    ]
    from ._read_state import remember_job  # that module reads this one's plans

    if not shape.keyed:
        return remember_job(observe(_union(outputs), 0, "rows"), node, config)
    return remember_job(_union(outputs), node, config)


def _union(frames: Sequence[Any]) -> Any:
    """The rows of every one of ``frames`` (same schema), as one DataFrame."""
    df = frames[0]
    for other in frames[1:]:
        df = df.union(other)
    return df


def _source_names(feed: Feed) -> list[str] | None:
    """The field names of the Rows a keyed step's records from ``feed`` are made of when they
    travel as tuples (the feed reads a source with no step in between), else None."""
    if feed.source is None or feed.steps:
        return None
    return _reader(feed.source).names


def _with_metrics(schema: Any, channels: bool = False) -> Any:
    """``schema`` and the column the calls' metrics travel in (``METRICS_COLUMN``); with
    ``channels``, and the emitting subtask's (``CHANNEL_COLUMN``), which stays after the metrics'
    is dropped."""
    from pyspark.sql import types as st

    fields = [*schema.fields, st.StructField(METRICS_COLUMN, st.BinaryType(), True)]
    if channels:
        fields.append(st.StructField(CHANNEL_COLUMN, st.LongType(), True))
    return st.StructType(fields)


#: ``stream_dataframe``'s column of the subtask each row comes out of (``channels``).
CHANNEL_COLUMN = "ch"


def _no_channel(df: Any, channels: bool) -> Any:
    """``df`` (rows of a stateless pass) with a null ``CHANNEL_COLUMN`` when ``channels``."""
    if not channels:
        return df
    from pyspark.sql import functions as F  # noqa: N812

    return df.withColumn(CHANNEL_COLUMN, F.lit(None).cast("long"))


#: The state store provider ``transformWithStateInPandas`` needs, and Spark's default (which it
#: refuses).
ROCKSDB_PROVIDER = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
_DEFAULT_PROVIDER = "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"
_PROVIDER_CONF = "spark.sql.streaming.stateStore.providerClass"


def _use_rocksdb(session: Any) -> None:
    """Make the session's streaming queries use RocksDB state stores (``transformWithState``
    runs on nothing else) unless it names another provider than Spark's default."""
    current = session.conf.get(_PROVIDER_CONF, _DEFAULT_PROVIDER)
    if current == _DEFAULT_PROVIDER:
        session.conf.set(_PROVIDER_CONF, ROCKSDB_PROVIDER)


def _grouping_keys(groups: int) -> Any:
    """The column ``kg``'s group (``0 <= kg < groups``: ``slot * max_parallelism`` + key group)
    as the ``bigint`` a key-group pass groups by (``grouping_key``): its state rows are keyed by
    it, and ``_KeyGroupProcessor`` gets the group back as its Spark hash."""
    from pyspark.sql import functions as F  # noqa: N812 - Spark's convention

    # One string literal, split and cast: Spark folds it into one array constant when it plans a
    # micro-batch. (An array of literals is an expression per group: at max parallelism 32,768
    # building it took 15 s and planning each micro-batch ~400 ms longer.)
    listed = F.lit(",".join(str(grouping_key(g)) for g in range(groups)))
    return F.element_at(F.split(listed, ",").cast("array<bigint>"), F.col("kg") + 1)


def _batch_time_ms() -> Any:
    """The micro-batch's timestamp in ms, as a column: in a streaming query Spark gives
    ``current_timestamp()`` the batch's time (kept in the offset log, so a re-run batch sees the
    same time). The key-group pass's processing time."""
    from pyspark.sql import functions as F  # noqa: N812 - Spark's convention

    # Through ``reflect``, which Spark evaluates outside its generated code: as a literal (what
    # ``current_timestamp()`` becomes in a micro-batch), the time made the stage's code new each
    # micro-batch, for Janino and the JIT to compile again (2-3 classes a micro-batch).
    millis = F.unix_millis(F.current_timestamp())
    return F.reflect(F.lit("java.lang.String"), F.lit("valueOf"), millis).cast("long")


def _markers(targets: Sequence[tuple[int, Sequence[int], int]]) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """Between two stages: the rows of the first stage's key groups go on, but their markers
    (``kg`` ``-1 - slot``: one per call and next step, ``slot`` that step's place in its stage;
    ``ts`` the calling step's watermark; ``ch`` the next step's channel) become, for each of
    ``targets`` (``(slot, groups, ch)``: a channel ``ch`` of the step at ``slot`` of the next
    stage, whose key groups are ``groups``, that the first stage feeds), one marker per group,
    with the largest watermark that channel's markers carry (see ``_pre``)."""

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa
        import pyarrow.compute as pc

        schema = _arrow_schema()
        top: dict[tuple[int, int], int] = {}
        for batch in batches:
            marker = pc.less(batch.column("kg"), 0)
            marks = batch.filter(marker)
            for kg, ch, ts in zip(*(marks.column(c).to_pylist() for c in ("kg", "ch", "ts")), strict=True):
                if ts is not None and ((kg, ch) not in top or ts > top[kg, ch]):
                    top[kg, ch] = ts
            kept = batch.filter(pc.invert(marker))
            if kept.num_rows:
                yield kept.select([f.name for f in schema])
        for slot, groups, ch in targets:
            wm = top.get((-1 - slot, ch))
            yield pa.RecordBatch.from_pydict(_marker_columns(groups, wm, ch), schema=schema)

    return worker_pass(run)


def _marker_columns(groups: Sequence[int], wm: int | None, ch: int) -> dict[str, list[Any]]:
    """One marker row per group of ``groups`` for channel ``ch``: no value, the channel's
    watermark (see ``_pre``)."""
    n_groups = len(groups)
    return {
        "kg": list(groups),
        "seq": [-1] * n_groups,
        "v": [None] * n_groups,
        "ts": [wm] * n_groups,
        "ch": [ch] * n_groups,
        "n": [None] * n_groups,
    }


def _spark_schema(fields: Sequence[tuple[str, str]]) -> Any:
    from pyspark.sql import types as st

    kinds = {
        "int": st.IntegerType(),
        "long": st.LongType(),
        "binary": st.BinaryType(),
        "boolean": st.BooleanType(),
        "string": st.StringType(),
        "array<long>": st.ArrayType(st.LongType(), True),
    }
    return st.StructType([st.StructField(n, kinds[k], True) for n, k in fields])


def _reader(source: ExternalSourceNode) -> RowReader:
    """Reads the source's Arrow batches: Row values, timestamps from its ``withWatermark`` column."""
    schema = _without_end(source.handle.schema)
    marked = watermark_column(schema)
    return RowReader(schema, marked[0] if marked else None)


def _without_end(schema: Any) -> Any:
    """``schema`` without ``END_COLUMN`` (a bounded source run as a stream has it)."""
    from pyspark.sql import types as st

    if END_COLUMN not in schema.fieldNames():
        return schema
    return st.StructType([f for f in schema.fields if f.name != END_COLUMN])


def _cut_end(batch: Any) -> tuple[Any, int | None]:
    """An Arrow ``batch`` of a source without its end-of-input rows and ``END_COLUMN``, and
    the largest watermark such a row carried (``_END`` or an ``end_of_run``; None: no such row).
    A batch without the column is returned as it is."""
    import pyarrow.compute as pc

    names = batch.schema.names
    if END_COLUMN not in names:
        return batch, None
    column = batch.column(END_COLUMN)
    end = pc.is_valid(column)
    top = pc.max(column).as_py()
    if top is not None:
        batch = batch.filter(pc.invert(end))
    return batch.select([n for n in names if n != END_COLUMN]), None if top is None else int(top)


class _Chain:
    """Non-keyed steps run in one pass (``Feed.links``), records entering the first one at its
    input ``entry``; what comes out is the last one's output ``tag`` (None: the main output).
    ``max_ts`` is the largest timestamp the last ``TimestampNode`` among them assigned (None:
    none yet, or no such step): a watermark follows the records that step saw, not those that a
    filter after it lets through (as in Flink, where it passes filters)."""

    def __init__(
        self, links: Sequence[ChainLink], index: int, config: LocalConfig, tag: str | None = None
    ) -> None:
        stamps = [i for i, (n, _j, _r) in enumerate(links) if isinstance(n, TimestampNode)]
        cut = stamps[-1] + 1 if stamps and stamps[-1] + 1 < len(links) else len(links)
        self.stamped = bool(stamps)
        self.max_ts: int | None = None
        self.tag = tag
        #: What the head's last step passes on: to the tail's first step, or out.
        self.head_tag = links[cut][2] if cut < len(links) else tag
        self.head = self._runner(links[:cut], index, config, self.head_tag)
        self.tail = self._runner(links[cut:], index, config, tag) if cut < len(links) else None

    @staticmethod
    def _runner(
        links: Sequence[ChainLink], index: int, config: LocalConfig, tag: str | None
    ) -> tuple[SubtaskRunner, int]:
        head, entry, _read = links[0]
        channels = [1] * max(1, len(head.inputs))
        return SubtaskRunner(head, index, config, channels, [tag] if tag else (), chain=links[1:]), entry

    @staticmethod
    def _run(
        part: tuple[SubtaskRunner, int], value: Any, ts: int | None, tag: str | None
    ) -> list[tuple[Any, int | None]]:
        runner, entry = part
        runner.record(entry, value, ts)
        return [(v, t) for g, v, t, wm in runner.drain() if wm is None and g == tag]

    def records(self, value: Any, ts: int | None) -> list[tuple[Any, int | None]]:
        """What ``value`` becomes after the steps."""
        outs = self._run(self.head, value, ts, self.head_tag)
        if self.stamped:
            top = max((t for _v, t in outs if t is not None), default=None)
            if top is not None and (self.max_ts is None or top > self.max_ts):
                self.max_ts = top
        if self.tail is None:
            return outs
        tail, tag = self.tail, self.tag
        return [out for v, t in outs for out in self._run(tail, v, t, tag)]


def _chain(feed: Feed, index: int, config: LocalConfig) -> _Chain | None:
    """The chain of ``feed``'s steps (None: it has none)."""
    return _Chain(feed.links, index, config, feed.out_tag) if feed.steps else None


def _records(chain: _Chain | None, value: Any, ts: int | None) -> list[tuple[Any, int | None]]:
    """What ``value`` becomes after the steps of ``chain`` (itself when there are none)."""
    return [(value, ts)] if chain is None else chain.records(value, ts)


def _partition_id() -> int:
    from pyspark import TaskContext

    context = TaskContext.get()
    return context.partitionId() if context is not None else 0


def _stateless(
    feed: Feed, config: LocalConfig, out: OutputColumns
) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """The pass of a ``feed`` from a source to the job's output: no keyed step on the way."""
    assert feed.source is not None
    reader = _reader(feed.source)
    arrow_schema = out.arrow_schema()

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        chain = _chain(feed, _partition_id(), config)
        for batch in batches:
            batch, _ended = _cut_end(batch)
            tuples, stamps = reader.tuples(batch)
            values = [reader.row(t) for t in tuples]
            results = [
                v for value, ts in zip(values, stamps, strict=True) for v, _ in _records(chain, value, ts)
            ]
            columns = out.columns(results)
            yield out.record_batch([columns[n] for n in out.names], arrow_schema)

    return worker_pass(run)


def _pre(feed: Feed, config: LocalConfig, offset: int = 0) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """The pass of a ``feed`` from a source to a keyed (or broadcast) step: the steps on the way
    run, and each record becomes a row of the step's (``_PRE_FIELDS``): its key group (plus
    ``offset``, where the step's groups start in its stage), order, pickled value, timestamp,
    key and the feed's channel (a broadcast feed's record: one row per group of the step, no
    key; a ``Feed.spread`` one: no key, ``_Spread``'s group); the partition ends with one marker
    per group carrying the channel's watermark (its largest timestamp - the feed's delay)."""
    assert feed.source is not None and feed.end is not None
    reader = _reader(feed.source)
    steps = feed.steps
    edge = feed.end.inputs[feed.inp]
    broadcast = feed.broadcast
    key_selector = edge.key_selector
    encoder = KeyEncoder(edge.key_codec, config.max_parallelism)
    step = feed.end.name
    targets = [offset + g for g in groups_of(feed.end, config)]
    names = reader.names
    ch = feed.ch
    delay = _watermark_delay(feed)
    # The key as a column when the selector returns one field as it is (``row_field``); checked
    # against the selector on each batch's first record.
    key_field = row_field(key_selector, names) if not steps and key_selector is not None else None

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        pid = _partition_id()
        chain = _chain(feed, pid, config)
        each = chain is not None  # the values come from the feed's steps: ``chunk`` copies them
        spread = _Spread(feed, config, pid) if feed.spread else None
        field = key_field
        seq = pid << 32
        max_ts: int | None = None
        schema = _arrow_schema()
        ended: int | None = None  # the watermark the source's end carries
        for batch in batches:
            batch, saw_end = _cut_end(batch)
            if _above(saw_end, ended):
                ended = saw_end
            kgs: list[int] = []
            keys: list[Any] = []
            if chain is None:  # the keyed step reads the source: values travel as tuples
                cols = reader.columns(batch.columns)
                n = batch.num_rows
                stamps = stamps_seen = reader.stamps(cols, n)
                groups = None
                if field is not None and key_selector is not None and n:
                    if selects_field(key_selector, reader, cols, field):
                        groups = encoder.key_groups(cols[field])  # None: a key to report
                    else:
                        field = None  # not what row_field said: call the selector from now on
                if groups is not None and field is not None:
                    kgs, keys = groups, cols[field]
                elif key_selector is not None:
                    kgs, keys = route_keys(
                        step, key_selector, encoder, make_rows(names, zip(*cols, strict=True))
                    )
                elif spread is not None:
                    kgs, keys = spread(make_rows(names, zip(*cols, strict=True))), [None] * n
                # The records go as their columns (``column_chunks``; a broadcast's as tuples),
                # keyed by their field ``field`` when that is their key: no tuple per record here.
                shipped: list[Any] | int = field if groups is not None and field is not None else keys
                columns: list[list[Any]] | None = cols if cols and not broadcast else None
                items: list[Any] = [] if columns is not None else list(zip(*cols, strict=True))
            else:
                columns = None
                items, stamps = [], []
                tuples, source_stamps = reader.tuples(batch)
                for values, ts in zip(tuples, source_stamps, strict=True):
                    # Each record's outputs are keyed before the next record runs (and pickled
                    # with the batch's, as the batch target's route pass does).
                    outs = chain.records(create_row(names, values), ts)
                    records = [record for record, _ in outs]
                    if key_selector is not None:
                        record_kgs, record_keys = route_keys(step, key_selector, encoder, records)
                        kgs += record_kgs
                        keys += record_keys
                    elif spread is not None:
                        kgs += spread(records)
                        keys += [None] * len(records)
                    items += records
                    stamps += [rts for _, rts in outs]
                n = len(items)
                if not chain.stamped:  # the source's timestamps make the watermark: all of them
                    stamps_seen = source_stamps
            if chain is not None and chain.stamped:
                top = chain.max_ts
            else:
                top = max((t for t in stamps_seen if t is not None), default=None)
            if top is not None and (max_ts is None or top > max_ts):
                max_ts = top
            first, seq = seq, seq + n
            if broadcast:
                kgs, seqs, vs, counts = _chunk_to_every_group(targets, first, items, stamps, each)
            else:
                if offset:
                    kgs = [offset + g for g in kgs]
                if columns is not None:
                    kgs, seqs, vs, counts = column_chunks(kgs, first, columns, stamps, shipped)
                else:
                    kgs, seqs, vs, counts = chunks(kgs, first, items, stamps, keys, each)
            m = len(vs)
            yield pa.RecordBatch.from_arrays(
                [
                    pa.array(kgs, pa.int32()),
                    pa.array(seqs, pa.int64()),
                    pa.array(vs, pa.binary()),
                    pa.nulls(m, pa.int64()),
                    pa.array([ch] * m, pa.int32()),
                    pa.array(counts, pa.int32()),
                ],
                schema=schema,
            )
        wm = None if delay is None or max_ts is None else max_ts - delay
        if ended is not None:
            wm = ended
        yield pa.RecordBatch.from_pydict(_marker_columns(targets, wm, ch), schema=schema)

    return worker_pass(run)


def _chunk_to_every_group(
    groups: Sequence[int], first: int, values: Sequence[Any], stamps: Sequence[int | None], each: bool
) -> tuple[list[int], list[int], list[bytes], list[int]]:
    """Broadcast records as chunk rows (``chunks``, ``each`` as there): all of them, in order,
    once per group of the step (``groups_of``), with no key; one pickle for every group."""
    if not values:
        return [], [], [], []
    n = len(values)
    blob = chunk(pack_places(range(n)), list(values), list(stamps), [None] * n, each)
    return list(groups), [first] * len(groups), [blob] * len(groups), [n] * len(groups)


def _arrow_schema() -> Any:
    import pyarrow as pa

    return pa.schema(
        [
            ("kg", pa.int32()),
            ("seq", pa.int64()),
            ("v", pa.binary()),
            ("ts", pa.int64()),
            ("ch", pa.int32()),
            ("n", pa.int32()),
        ]
    )


#: The state row of a key group: the blob (``_KeyGroups._save``) and a header that says, without
#: unpickling the blob, which version it is and whether an idle micro-batch has work for the group.
_STATE_FIELDS = (
    # pickled (backend snapshot, event-time timers, processing-time timers[, operator states])
    ("blob", "binary"),
    ("token", "long"),  # random, new with every blob written: the blob's version
    ("wms", "array<long>"),  # the watermark of each of the step's channels (null: none yet)
    ("next_event", "long"),  # the earliest event-time timer, or null
    ("next_proc", "long"),  # the earliest processing-time timer, or null
    ("ttl", "boolean"),  # whether state with TTL holds entries (time alone may expire them)
)

#: A bucket of a key group's keyed state (``_Parts``): the step's ``MapState`` "kb" maps the
#: bucket's number to its entries (``_split``) and its number of keys.
_BUCKET_KEY = (("b", "int"),)
_BUCKET_FIELDS = (("blob", "binary"), ("n", "int"))

_EMPTY_STATE = KeyedStateBackend().snapshot_key_group(0)  # what a key group without state gives


@attrs.frozen
class _StateRow:
    """A key group's state row as read from Spark's state store."""

    blob: bytes
    token: int
    wms: tuple[int | None, ...]
    next_event: int | None
    next_proc: int | None
    ttl: bool

    @classmethod
    def read(cls, row: Sequence[Any]) -> _StateRow:
        blob, token, wms, next_event, next_proc, ttl = row
        marks = tuple(_opt(w) for w in wms) if wms is not None else ()
        return cls(bytes(blob), int(token), marks, _opt(next_event), _opt(next_proc), bool(ttl))

    def values(self) -> tuple[Any, ...]:
        return (self.blob, self.token, list(self.wms), self.next_event, self.next_proc, self.ttl)


def _opt(value: Any) -> int | None:
    return None if value is None else int(value)


class _Records:
    """The records of one call of ``_KeyGroups``, from the frames Spark passes (records, chunks
    of records, and markers: ``v`` null), column by column: per-record pandas access is slow."""

    __slots__ = ("chs", "keys", "n", "seqs", "stamps", "values", "wms")

    def __init__(self) -> None:
        self.seqs: list[Any] = []  # numpy arrays
        self.chs: list[Any] = []
        self.values: list[list[Any]] = []  # unpickled
        self.stamps: list[list[int | None]] = []
        self.keys: list[list[Any]] = []
        self.wms: dict[int, int] = {}  # per channel, the largest watermark its markers carry
        self.n = 0

    @classmethod
    def of(cls, pdfs: Iterable[Any]) -> _Records:
        """The records of the frames ``pdfs`` (those with rows)."""
        records = cls()
        for pdf in pdfs:
            if len(pdf):
                records.add(pdf)
        return records

    def add(self, pdf: Any) -> None:
        import numpy as np

        columns = _numpy_columns(pdf)
        ts, v = columns["ts"], columns["v"]
        stamps = _stamps(ts)
        kept = v != None  # noqa: E711 - elementwise: a marker's ``v`` is None
        chs = columns["ch"] if "ch" in columns else np.zeros(len(v), dtype=np.int64)
        n = int(kept.sum())
        if n < len(v):
            for ch, wm, record in zip(chs.tolist(), stamps, kept.tolist(), strict=True):
                if not record and wm is not None and (ch not in self.wms or wm > self.wms[ch]):
                    self.wms[ch] = wm
        if n == 0:
            return
        seq, counts = columns["seq"], columns.get("n")
        if n < len(v):
            v, seq, chs = v[kept], seq[kept], chs[kept]
            stamps = [t for t, k in zip(stamps, kept.tolist(), strict=True) if k]
            counts = None if counts is None else counts[kept]
        loads = pickle.loads
        if counts is None or not _any_set(counts):  # one record a row (its key is not known)
            self._add(seq, chs, [loads(x) for x in v.tolist()], stamps, [None] * n)
            return
        # Chunks (``chunks``), and maybe records (a chunk of one): each chunk's records take its
        # place, each with its own ``seq`` (``chunk_seqs``: for all of them at once).
        all_places: list[bytes] = []
        values: list[Any] = []
        all_stamps: list[int | None] = []
        all_keys: list[Any] = []
        for blob, ts, count in zip(v.tolist(), stamps, counts.tolist(), strict=True):
            if count is None or count != count:  # a record (null: None, or NaN in a float column)
                all_places.append(_ONE_PLACE)
                values.append(loads(blob))
                all_stamps.append(ts)
                all_keys.append(None)
                continue
            places, chunk_values, chunk_stamps, chunk_keys = read_chunk(blob)
            assert places is not None  # the pre-pass's and a step's chunks are placed
            all_places.append(places)
            values += chunk_values
            all_stamps += chunk_stamps
            all_keys += chunk_keys
        sizes = place_counts(all_places)  # each row's records: its channel's, repeated
        self._add(chunk_seqs(seq, all_places, sizes), np.repeat(chs, sizes), values, all_stamps, all_keys)

    def _add(self, seq: Any, chs: Any, values: list[Any], stamps: list[int | None], keys: list[Any]) -> None:
        self.n += len(values)
        self.seqs.append(seq)
        self.chs.append(chs)
        self.values.append(values)
        self.stamps.append(stamps)
        self.keys.append(keys)

    def ordered(self) -> list[tuple[int, list[Any], list[int | None], list[Any]]]:
        """The records as runs of one channel each: the channel, and its records' values,
        timestamps and keys (None: not known), in input order (Spark's shuffle does not keep
        it); channels one after the other."""
        import numpy as np

        if len(self.seqs) == 1:
            seq, chs, values = self.seqs[0], self.chs[0], self.values[0]
            stamps, keys = self.stamps[0], self.keys[0]
        else:
            seq, chs = np.concatenate(self.seqs), np.concatenate(self.chs)
            values = [x for part in self.values for x in part]
            stamps = [t for part in self.stamps for t in part]
            keys = [k for part in self.keys for k in part]
        one = len(chs) == 0 or bool((chs == chs[0]).all())
        if len(seq) > 1 and not (one and bool((seq[1:] > seq[:-1]).all())):
            order = np.lexsort((seq, chs))  # by channel, then by order
            chs = chs[order]
            order_list = order.tolist()
            values = [values[i] for i in order_list]
            stamps = [stamps[i] for i in order_list]
            keys = [keys[i] for i in order_list]
        if one:
            return [(int(chs[0]), values, stamps, keys)]
        cuts = [0, *(np.flatnonzero(chs[1:] != chs[:-1]) + 1).tolist(), len(chs)]
        return [(int(chs[a]), values[a:b], stamps[a:b], keys[a:b]) for a, b in itertools.pairwise(cuts)]


#: The ``places`` of a record in ``_Records``: a chunk of one, at its row's ``seq``.
_ONE_PLACE = pack_places([0])


def _numpy_columns(pdf: Any) -> dict[str, Any]:
    """Each column of the pandas frame ``pdf`` as a NumPy array, without a ``Series`` each: a key
    group's call reads a frame of a few rows per Arrow batch, and ``pdf[name]`` costs ~20-30 us
    whatever the length (a new ``Series`` through pandas' item cache), ``pdf[name].to_numpy()``
    for 7 columns ~4x what this does (``DataFrame._get_column_array``; ``pdf[name]`` where a
    pandas lacks it).

    >>> import pandas as pd
    >>> _numpy_columns(pd.DataFrame({"a": [1, 2], "b": ["x", None]}))
    {'a': array([1, 2]), 'b': array(['x', None], dtype=object)}
    >>> _numpy_columns(pd.DataFrame({"a": pd.array([1, None], dtype="Int64")}))
    {'a': array([1, None], dtype=object)}
    """
    import numpy as np

    names = list(pdf.columns)  # not ``columns.is_unique``: a hash table per frame
    get = getattr(pdf, "_get_column_array", None)
    if get is None or len(set(names)) < len(names):
        columns = {name: pdf[name].to_numpy() for name in names}
    else:
        columns = {name: get(i) for i, name in enumerate(names)}
    for name, column in columns.items():  # an extension array (PySpark's ``Int64`` columns where
        if not isinstance(column, np.ndarray):  # ``preferIntExtensionDtype`` is set): objects, None
            columns[name] = column.to_numpy(dtype=object, na_value=None)  # for its nulls
    return columns


def _first_value(pdf: Any, name: str) -> Any:
    """The first value of column ``name`` of the pandas frame ``pdf``, read as ``_numpy_columns``
    reads columns: ``pdf[name].iloc[0]`` costs ~30 us a fresh frame, and makes a later
    ``_numpy_columns`` of it ~2-3x slower (pandas' item cache).

    >>> import pandas as pd
    >>> int(_first_value(pd.DataFrame({"a": [1, 2], "now": [7, 7]}), "now"))
    7
    """
    get = getattr(pdf, "_get_column_array", None)
    if get is None:
        return pdf[name].iloc[0]
    return get(list(pdf.columns).index(name))[0]


def _stamps(column: Any) -> list[int | None]:
    """The timestamps of a NumPy column of ``ts`` (null: None, or NaN in a float column), as ints.

    >>> import numpy as np
    >>> _stamps(np.array([5, 7])), _stamps(np.array([np.nan, np.nan])), _stamps(np.array([1.0, np.nan]))
    ([5, 7], [None, None], [1, None])
    """
    kind = column.dtype.kind
    if kind in "iu":
        return column.tolist()  # type: ignore[no-any-return]
    if not _any_set(column):
        return [None] * len(column)
    # A column with nulls is float: ``_END`` comes back as 2**63, above any long.
    return [None if t is None or t != t else min(int(t), _END) for t in column.tolist()]


def _any_set(column: Any) -> bool:
    """Whether a NumPy column holds a value that is not null (None, or NaN in a float column)."""
    import numpy as np

    if column.dtype.kind == "f":
        return not bool(np.isnan(column).all())
    if column.dtype.kind in "iub":
        return len(column) > 0
    return any(x is not None and x == x for x in column.tolist())


def _stable_dumps(value: Any) -> bytes:
    """Pickled so that equal values give equal bytes where possible (``stable_pickle``), so an
    unchanged key group is not rewritten; ``dumps`` for values plain pickle cannot take."""
    try:
        return stable_pickle(value)
    except Exception:
        return dumps(value)


class _Group:
    """One key group's operator instance in a Python worker, and the state version it holds:
    ``token`` and ``blob`` of the state row it was restored from or last wrote, ``wms`` the
    watermark of each channel it has seen."""

    __slots__ = ("blob", "now", "parts", "runner", "token", "values", "wms")

    def __init__(
        self, runner: SubtaskRunner, now: list[int], n_channels: int, values: list[Any] | None = None
    ) -> None:
        self.runner = runner
        self.now = now
        self.token: int | None = None
        self.blob: bytes | None = None
        self.wms: list[int | None] = [None] * n_channels
        #: The buckets of the group's keyed state this instance holds (the bucketed layout), or
        #: None: it holds the whole group (the header blob's snapshot).
        self.parts: _Parts | None = None
        #: Where the runner's last step puts its main output's values (``_KeyGroups.values_only``),
        #: or None: its outputs are the runner's (``SubtaskRunner.drain``).
        self.values = values

    def take(self) -> list[Any]:
        """The outputs of records (not watermarks) since the last call: ``(branch, value,
        timestamp)`` each, or the values only (``values``)."""
        values = self.values
        if values is None:
            return [(g, v, t) for g, v, t, wm in self.runner.drain() if wm is None]
        taken = values.copy()
        values.clear()
        return taken

    @property
    def size(self) -> int:
        """The bytes of state it holds, as stored (what the worker cache counts)."""
        held = len(self.blob or b"")
        if self.parts is not None:
            held += sum(len(p[0]) for p in self.parts.stored.values() if p is not None)
        return held


#: Keys per bucket the bucketed layout aims at: a key group's buckets hold between about half and
#: twice this many keys each on average (``_depth_for``), and a call reads and rewrites the
#: buckets of the keys it touches.
PER_BUCKET = 16
#: A key group of at most this many keys keeps them in its state row's blob (one read and one
#: write per call, as cheap as it gets for a group a call touches all over); above, in buckets.
INLINE_KEYS = 256
#: The depth of a key group held in its state row (``INLINE_KEYS``).
_INLINE = -1

#: The layout tag of a bucketed group's header (``_Parts.header``), with the snapshot format's
#: version: "buckets" was format 1's (``runtime.snapshot_format_error``).
_BUCKETS = "buckets-2"


def _bucket_of(key_bytes: bytes, depth: int) -> int:
    """The bucket of a key (its encoded bytes) among a key group's ``2**depth`` (at most 2**16):
    the high half of the key's crc32, a hash apart from the key group's (``KeyEncoder``), so a
    group's keys spread over its buckets."""
    return (zlib.crc32(key_bytes) >> 16) & ((1 << depth) - 1)


def _depth_for(n_keys: int, depth: int) -> int:
    """The bucket depth for a key group of ``n_keys`` keys, from ``depth`` (``_INLINE``: held in
    the state row): inline up to ``INLINE_KEYS`` keys (back inline below half that); in buckets,
    one more level once they average more than ``2 * PER_BUCKET`` keys, one less below
    ``PER_BUCKET / 2`` (between the bounds it stays, so a group at an edge does not split and
    merge by turns).

    >>> _depth_for(10, _INLINE), _depth_for(300, _INLINE), _depth_for(7_812, _INLINE)
    (-1, 4, 8)
    >>> _depth_for(7_812, 8), _depth_for(200, 8), _depth_for(100, 8)
    (8, 4, -1)
    """
    if depth == _INLINE:
        if n_keys <= INLINE_KEYS:
            return _INLINE
        depth = 0
    elif n_keys < INLINE_KEYS // 2:
        return _INLINE
    while n_keys > (2 * PER_BUCKET) << depth and depth < 16:
        depth += 1
    while depth > 0 and n_keys < (PER_BUCKET << depth) // 2:
        depth -= 1
    return depth


class _Parts:
    """What an instance holds of a bucketed key group: a key group's keyed state is cut by key
    into ``2**depth`` buckets (``_bucket_of``), each one entry of the step's ``MapState`` "kb"
    (bucket -> the pickled entries of its keys, and how many keys), so that a call reads and
    rewrites only the buckets of the keys that became current (``_Loader``). ``stored`` maps each
    bucket loaded to what the store holds for it (blob, keys; None: nothing); with ``complete``
    the backend holds every key of every bucket. ``n_keys`` counts the keys of the whole group
    (as last written), ``signatures`` the definitions of its states.

    A call that touches few keys reads their buckets one by one: ``read`` keeps each such
    bucket's entries as stored, and only the keys in ``moved`` (those that became
    current) are added to the backend; the others stay as read and are written back as they
    were."""

    __slots__ = ("complete", "depth", "moved", "n_keys", "read", "signatures", "stored")

    def __init__(self, depth: int, n_keys: int, signatures: dict[str, str], complete: bool) -> None:
        self.depth = depth
        self.n_keys = n_keys
        self.signatures = signatures
        self.complete = complete
        self.stored: dict[int, tuple[bytes, int] | None] = {}
        self.read: dict[int, dict[str, list[StateEntry]]] = {}
        self.moved: set[bytes] = set()

    def header(self) -> tuple[str, int, int, dict[str, str]]:
        """What the state row's blob holds in place of a whole-group snapshot."""
        return (_BUCKETS, self.depth, self.n_keys, self.signatures)


class _Loader:
    """``KeyedStateBackend.key_loader`` for one call of a bucketed key group: when a key becomes
    current, its bucket is read from the step's ``MapState`` (one round trip) unless held, and
    the key's entries are added to the backend."""

    __slots__ = ("backend", "buckets", "kg", "parts", "seen")

    def __init__(self, backend: KeyedStateBackend, parts: _Parts, kg: int, buckets: Any) -> None:
        self.backend = backend
        self.parts = parts
        self.kg = kg
        self.buckets = buckets
        self.seen: set[bytes] = set()  # the keys already current in this call

    def __call__(self, key_bytes: bytes, _kg: int) -> None:
        if key_bytes in self.seen:
            return
        self.seen.add(key_bytes)
        parts = self.parts
        if parts.complete:
            return
        bucket = _bucket_of(key_bytes, parts.depth)
        stores = parts.read.get(bucket)
        if stores is None:
            stores = parts.read[bucket] = self._hold(bucket, self.buckets.getValue((bucket,)))
        parts.moved.add(key_bytes)
        mine = _entries_of(stores, lambda k: k == key_bytes)
        if mine:
            self.backend.add_entries(self.kg, {}, mine)
        if len(parts.stored) == 1 << parts.depth:
            self.load_all()  # every bucket is read: hold all of it

    def load_all(self) -> None:
        """Add every key of every bucket to the backend: the keys of buckets read one by one
        that are not there yet, and every bucket not read yet (one scan of the ``MapState``)."""
        parts = self.parts
        if parts.complete:
            return
        moved = parts.moved
        for stores in parts.read.values():
            self.backend.add_entries(self.kg, {}, _entries_of(stores, lambda k: k not in moved))
        parts.read, parts.moved = {}, set()
        if len(parts.stored) < 1 << parts.depth:
            for (bucket,), found in self.buckets.iterator():
                if int(bucket) not in parts.stored:
                    self.backend.add_entries(self.kg, {}, self._hold(int(bucket), found))
        parts.complete = True

    def _hold(self, bucket: int, found: Any) -> dict[str, list[StateEntry]]:
        """Note what the store holds for ``bucket`` (``found``: its ``MapState`` value, or None)
        and return its entries."""
        if found is None:
            self.parts.stored[bucket] = None
            return {}
        blob, n = bytes(found[0]), int(found[1])
        self.parts.stored[bucket] = (blob, n)
        entries: dict[str, list[StateEntry]] = pickle.loads(blob)
        return entries


def _entries_of(
    stores: dict[str, list[StateEntry]], keys: Callable[[bytes], bool]
) -> dict[str, list[StateEntry]]:
    """The entries (by state name, ``KeyedStateBackend.key_group_entries``' form) of the keys
    that ``keys`` accepts; states left without entries are left out."""
    found = {name: [e for e in entries if keys(e[0])] for name, entries in stores.items()}
    return {name: entries for name, entries in found.items() if entries}


def _cut(stores: dict[str, list[StateEntry]], depth: int) -> dict[int, dict[str, list[StateEntry]]]:
    """Entries (``KeyedStateBackend.key_group_entries``' form) cut by bucket (``_bucket_of``)."""
    cut: dict[int, dict[str, list[StateEntry]]] = {}
    for name, entries in stores.items():
        for entry in entries:
            cut.setdefault(_bucket_of(entry[0], depth), {}).setdefault(name, []).append(entry)
    return cut


def _split(stores: dict[str, list[StateEntry]], depth: int) -> dict[int, tuple[bytes, int]]:
    """Entries (``KeyedStateBackend.key_group_entries``) cut into buckets: each bucket's pickled
    entries and its number of keys."""
    return {b: (_stable_dumps(part), _count_keys(part)) for b, part in _cut(stores, depth).items()}


class _WorkerCache:
    """The key groups a Python worker keeps between micro-batches (Spark reuses Python workers
    across tasks, ``spark.python.worker.reuse``; the key-group function itself
    is unpickled anew for every task, so the cache lives in this module).

    Keyed by (plan, streaming query, key group). A group is taken out while a call uses it and put
    back only after the call has written its state row, so a call that failed half-way leaves
    nothing behind; a group taken is used only when its token is the state row's (see
    ``_KeyGroups._group_for``), so a retried task, a re-run micro-batch or a query restarted from
    an older checkpoint restores from the state store instead. Least recently used groups leave
    once their blobs add up to more than ``limit`` bytes (objects in memory take several times
    their blob's size)."""

    def __init__(self) -> None:
        self.groups: OrderedDict[tuple[str, str, int], _Group] = OrderedDict()
        self.sizes: dict[tuple[str, str, int], int] = {}  # each group's size when put
        self.size = 0

    def take(self, key: tuple[str, str, int]) -> _Group | None:
        group = self.groups.pop(key, None)
        if group is not None:
            self.size -= self.sizes.pop(key)
        return group

    def put(self, key: tuple[str, str, int], group: _Group, limit: int) -> None:
        self.take(key)  # a group it held for the key before is replaced
        size = group.size
        if size > limit:
            return
        self.groups[key] = group
        self.sizes[key] = size
        self.size += size
        while self.size > limit:
            old, _ = self.groups.popitem(last=False)
            self.size -= self.sizes.pop(old)


_CACHE = _WorkerCache()

#: The largest total blob size of the key groups a Python worker keeps (``_WorkerCache``), and
#: the Spark configuration key that sets it (read when the streaming DataFrame is built).
DEFAULT_WORKER_CACHE_BYTES = 64 << 20
WORKER_CACHE_CONF = "spark.fs_compat.streaming.workerCacheBytes"


def _query_id() -> str:
    """The id of the streaming query the current task belongs to ("" outside one)."""
    from pyspark import TaskContext

    context = TaskContext.get()
    found = context.getLocalProperty("sql.streaming.queryId") if context is not None else None
    return found or ""


def _operator(node: Node) -> Operator | None:
    """A new instance of ``node``'s operator (None: the node is not an operator step, or has no
    operator factory)."""
    if isinstance(node, OperatorNode) and node.operator_factory is not None:
        return node.operator_factory()
    return None


def _idle_hooks(ops: Iterable[Operator | None]) -> tuple[bool, bool]:
    """For the operators of a key-group pass's nodes (``ops``, one instance per node, in order,
    made by ``_operator`` as they are needed and dropped after; None: a node without one):
    whether a call with no records, no timer due and no TTL state may be skipped, and whether any
    operator acts when the watermark advances (``on_watermark``), so that the watermark advancing
    is work too.

    ``on_checkpoint`` is work unless it is the base one, or the operator says it does nothing
    without new work (``Operator.idle_checkpoint_is_noop``: a Bytewax ``stateful_batch``
    snapshots the keys touched since the last checkpoint, none in such a call)."""
    skippable, on_watermark = True, False
    for op in ops:
        if op is None:
            return False, True
        if overrides(op, "on_checkpoint") and not op.idle_checkpoint_is_noop:
            skippable = False
        on_watermark = on_watermark or overrides(op, "on_watermark")
    return skippable, on_watermark


class _KeyGroups:
    """The key-group pass of a keyed step: one call per key group per micro-batch
    (``_KeyGroupProcessor``). ``channels[c]`` is the step's input and that input's channel
    number for the records of channel ``c`` (``Feed.ch``), ``row_names[c]`` the Row fields of
    its values when they travel as tuples (else None); ``slots`` the slot of the next stage
    where the records for each keyed step (by node id) enter it (``StreamShape.entry``: the
    step's place in its stage, or its lane's; 0 when not given), which says where the groups of
    the steps the outputs go to are; ``relay_slot`` the place of the next stage's relay
    when the outputs bound for the job's output go through it (``StreamShape.relayed``)."""

    def __init__(
        self,
        keyed: OperatorNode,
        onward: Sequence[Feed],
        config: LocalConfig,
        out: OutputColumns,
        clock: Callable[[], int] | None,
        channels: Sequence[tuple[int, int]] = ((0, 0),),
        row_names: Sequence[list[str] | None] = (None,),
        cache_bytes: int = DEFAULT_WORKER_CACHE_BYTES,
        slots: Mapping[int, int] | None = None,
        relay_slot: int | None = None,
    ) -> None:
        self.keyed = keyed
        #: Where the step's outputs go (``onward``: the feeds out of it, all to one step or all
        #: to the output; none: its main output to the output), as ``SubtaskRunner``'s branches.
        self.branches = tuple((f.links, f.out_tag) for f in onward) or (((), None),)
        self.config = config
        self.out = out
        self.clock = clock
        self.channels = tuple(channels)
        self.row_names = tuple(row_names)
        self.cache_bytes = cache_bytes
        #: This plan, in workers' caches: every task unpickles its own copy of this object.
        self.plan_id = uuid.uuid4().hex
        keyed_op = _operator(keyed)  # one instance per node on the driver, dropped after
        chained = (_operator(n) for links, _tag in self.branches for n, _i, _r in links)
        self.skip_idle, self.watermark_hooks = _idle_hooks(itertools.chain((keyed_op,), chained))
        #: Whether the step's keyed state is kept in buckets (``_Parts``): its operator touches
        #: keyed state only through the current key (``Operator.keyed_state_by_current_key``).
        self.bucketed = keyed.keyed and keyed_op is not None and keyed_op.keyed_state_by_current_key
        #: A keyed step's broadcast inputs, and the key groups that keep what the step outputs
        #: for their records: one per parallel instance (``groups_of``). Every key group gets each
        #: broadcast record and keeps its broadcast state, but Flink calls
        #: ``process_broadcast_element`` once per parallel instance, so the others' outputs of it
        #: are dropped.
        self.muted = {i for i, e in enumerate(keyed.inputs) if e.broadcast} if keyed.keyed else set()
        p = keyed.parallelism or config.parallelism
        self.speaking = set(_first_groups(p, config.max_parallelism)) if self.muted else set()
        #: The keyed step the outputs go to, per branch (None: the output is the job's, as
        #: columns), or, for a branch to the job's output when the stage's rows go on to a next
        #: stage, that stage's relay (at ``relay_slot``).
        last = relay_slot is None and (not onward or onward[0].end is None)
        self.next: tuple[_NextStep | _ToRelay, ...] | None = (
            None
            if last
            else tuple(
                _NextStep(f, config, _slot(f.end, slots))
                if f.end is not None
                else _ToRelay(config, relay_slot, keyed)
                for f in onward
            )
        )
        #: Whether the step's outputs are only the job's output's values: one branch, its main
        #: output, to the output, no broadcast input muted. Its last step then hands its record
        #: values to a list (``SubtaskRunner``'s ``values``), without a timestamp, a branch and a
        #: tuple per record (a map's record path inlined: ``_Task.push_many``'s one sink).
        self.values_only = (
            self.next is None and not self.muted and len(self.branches) == 1 and self.branches[0][1] is None
        )
        #: The output's extra column for the call's metrics (the job's output only; ``_progress``).
        self.metrics_column: str | None = None
        #: The output's column of the subtask the rows come out of (``stream_dataframe``'s
        #: ``channels``), after the metrics'.
        self.channel_column: str | None = None
        #: The Spark schema of the output's frames, those two columns included (None: the
        #: output's own, ``OutputColumns.frame``).
        self.frame_schema: Any = None
        self._metrics: bytes | None = None  # what the current call added to its steps' metrics

    def _new_group(self, kg: int) -> _Group:
        now = [0]
        clock = self.clock or (lambda: now[0])
        config = attrs.evolve(self.config, clock=clock)
        p = self.keyed.parallelism or config.parallelism
        index = subtask_of(kg, p, config.max_parallelism)
        per_input = [0] * max(1, len(self.keyed.inputs))
        for inp, _local in self.channels:
            per_input[inp] += 1
        if not self.values_only:
            runner = SubtaskRunner(self.keyed, index, config, per_input, branches=self.branches)
            return _Group(runner, now, len(self.channels))
        values: list[Any] = []
        runner = SubtaskRunner(
            self.keyed,
            index,
            config,
            per_input,
            chain=self.branches[0][0],
            values=values,
            fields_only=self.out.fields_only,
        )
        return _Group(runner, now, len(self.channels), values)

    @worker_pass
    def __call__(self, key: tuple[Any, ...], pdfs: Iterator[Any], state: Any) -> Iterator[Any]:
        """One key group's call: ``state`` is its state row (Spark's ``GroupState``, or
        ``_TwsState`` over ``transformWithStateInPandas``'s)."""
        kg = int(key[0])
        # Records (v set) and markers (v null, ts = a channel's watermark), as lists: per-record
        # pandas access is slow.
        records = _Records.of(pdfs)
        self._metrics = None
        results, marks = self._run(kg, records, state)
        metrics = self._metrics
        if self.next is not None:
            wm = _combined(marks)
            for b, step in enumerate(self.next):  # the metrics once, with the first branch's
                yield step.frame(kg, [(v, t) for g, v, t in results if g == b], wm, None if b else metrics)
        elif results or metrics is not None:
            cols = self.out.columns(results if self.values_only else [v for _b, v, _t in results])
            frame = {name: cols[name] for name in self.out.names}
            if self.metrics_column is not None:
                tail: list[Any] = [None] if metrics is not None else []  # one more row: the metrics
                frame = {name: [*col, *tail] for name, col in frame.items()}
                frame[self.metrics_column] = [None] * len(results) + ([metrics] if tail else [])
                if self.channel_column is not None:
                    p = self.keyed.parallelism or self.config.parallelism
                    index = subtask_of(kg, p, self.config.max_parallelism)
                    frame[self.channel_column] = [index] * len(results) + tail
            yield self.out.frame(frame, self.frame_schema)

    def _marks(self, row: _StateRow | None, batch: dict[int, int]) -> tuple[int | None, ...]:
        """Each channel's watermark after this call: the row's, or the markers' when above."""
        known = _row_marks(row, len(self.channels))
        return tuple(
            batch[c] if c in batch and _above(batch[c], known[c]) else known[c]
            for c in range(len(self.channels))
        )

    def _run(self, kg: int, records: _Records, state: Any) -> tuple[list[Any], tuple[int | None, ...]]:
        """Run key group ``kg`` over ``records``; its outputs (branch, value and timestamp; the
        values only with ``values_only``) and each channel's watermark after the call."""
        row = _StateRow.read(state.get) if state.exists else None
        marks = self._marks(row, records.wms)
        data = records.n > 0
        if row is None:
            if not data:
                return [], marks  # a marker for a key group that holds nothing
            group = self._new_group(kg)
            if self.bucketed:
                group.parts = _Parts(_INLINE, 0, {}, complete=True)
        elif not data and self._idle(row, state, marks) and not self._ends(row, marks):
            if marks != _row_marks(row, len(self.channels)):
                state.update(attrs.evolve(row, wms=marks).values())  # the blob as it was
            return [], marks
        else:
            group = self._group_for(kg, row, records.n)
        cache_key = (self.plan_id, _query_id(), kg)
        runner = group.runner
        backend = runner.runtime.backend  # None: a broadcast step that is not keyed
        loader = None
        if group.parts is not None:
            assert backend is not None
            loader = _Loader(backend, group.parts, kg, state.buckets)
            parts = group.parts
            if not parts.complete and records.n >= 1 << parts.depth:
                loader.load_all()  # about every bucket is touched: one scan instead of a read each
            if not group.parts.complete:  # (a call per record otherwise: not when all is held)
                backend.key_loader = loader
        try:
            if row is not None:
                # Timers up to the row's watermarks fired before it was written (or were not due).
                self._advance(group, _row_marks(row, len(self.channels)))
                group.take()
            metrics_before = runner_metrics(runner)
            group.now[0] = int(state.getCurrentProcessingTimeMs())
            runner.processing_time_advanced()
            if data:
                for ch, values, stamps, keys in records.ordered():
                    names = self.row_names[ch]
                    if names is not None:
                        values = make_rows(names, values)
                    inp = self.channels[ch][0]
                    mark = runner.pending()
                    runner.records(inp, values, stamps, keys)
                    if inp in self.muted and kg not in self.speaking:
                        runner.discard(mark)
            self._advance(group, marks)
            if self._ends(row, marks):
                self._end(group, loader)
            runner.checkpoint(micro_batch_id())  # Operator.on_checkpoint: the state is saved next
            results = group.take()
            if backend is not None:
                backend.purge_expired()  # expired TTL state leaves the state store
            self._metrics = metric_changes(metrics_before, runner_metrics(runner))
            cacheable = self._save(group, kg, state, row, loader)
        finally:
            if backend is not None:
                backend.key_loader = None
        if cacheable:
            _CACHE.put(cache_key, group, self.cache_bytes)
        return results, marks

    def _advance(self, group: _Group, marks: Sequence[int | None]) -> None:
        """Move the group's channels' watermarks up to ``marks`` (firing event-time timers)."""
        for ch, wm in enumerate(marks):
            if wm is not None and _above(wm, group.wms[ch]):
                group.wms[ch] = wm
                inp, local = self.channels[ch]
                group.runner.watermark(inp, local, wm)

    def _ends(self, row: _StateRow | None, marks: Sequence[int | None]) -> bool:
        """Whether this call ends the key group's input: every channel's watermark reaches
        ``_END`` or an ``end_of_run`` now, a higher one than in ``row``."""
        now = _combined(marks)
        before = _combined(_row_marks(row, len(self.channels)))
        return now is not None and now >= _RUN_END and _above(now, before)

    def _end(self, group: _Group, loader: _Loader | None) -> None:
        """The end of input, as the in-process target ends a bounded run (``SubtaskRunner.finish``):
        every event-time timer has fired (the watermark is ``_END``), then ``end_input`` and
        ``close`` of the keyed step and of the steps after it (Bytewax's EOF). Every key's state
        is loaded first (``end_input`` may visit every key, e.g. Bytewax's ``on_eof``)."""
        if loader is not None:
            loader.load_all()
        group.runner.finish()

    def _idle(self, row: _StateRow, state: Any, marks: tuple[int | None, ...]) -> bool:
        """Whether a call without records has nothing to do for the key group of ``row``: no
        processing-time timer due, no event-time timer at or below the new watermark, no state
        with TTL, and no operator that acts on checkpoints or (when it advances) on the
        watermark."""
        if not self.skip_idle or row.ttl:
            return False
        if row.next_proc is not None:
            if self.clock is None:
                now = int(state.getCurrentProcessingTimeMs())
            elif getattr(self.clock, "for_task", None) is None:
                now = self.clock()
            else:
                return False  # each operator instance has its own clock
            if row.next_proc <= now:
                return False
        if marks == _row_marks(row, len(self.channels)):
            return True  # the watermark stays
        if self.watermark_hooks:
            return False
        wm = _combined(marks)
        return row.next_event is None or wm is None or row.next_event > wm

    def _group_for(self, kg: int, row: _StateRow, n_records: int) -> _Group:
        """The operator instance of key group ``kg`` holding the state of ``row``: this worker's
        cached one when it holds that version (same token, and it has not seen a higher
        watermark than the row) and the call is not a sparse one over bucketed state (fewer
        records than buckets: a new instance reads just the buckets it touches, where the cached
        one, which holds every bucket, would snapshot them all), else a new one restored from the
        row."""
        known = _row_marks(row, len(self.channels))
        group = _CACHE.take((self.plan_id, _query_id(), kg))
        parts = None if group is None else group.parts
        if (
            group is None
            or group.token != row.token
            or any(_above(g, r) for g, r in zip(group.wms, known, strict=True))
            or (parts is not None and parts.depth != _INLINE and n_records < 1 << parts.depth)
        ):
            group = self._new_group(kg)
            self._restore(group, kg, row.blob)
            group.token, group.blob = row.token, row.blob
        return group

    def _restore(self, group: _Group, kg: int, blob: bytes) -> None:
        """Restore the state row's blob into a new instance: its timers, operator states and
        either the whole group's keyed state or (bucketed) what describes its buckets, which
        are read when their keys become current (``_Loader``)."""
        head, event_timers, processing_timers, *operator_states = pickle.loads(blob)
        rt = group.runner.runtime
        if isinstance(head, tuple):
            assert rt.backend is not None
            layout, depth, n_keys, signatures = head
            if layout != _BUCKETS:  # "buckets": format 1's key groups
                raise StateAccessError(snapshot_format_error(kg, 1 if layout == "buckets" else layout))
            rt.backend.add_entries(kg, signatures, {})  # checks the states' definitions
            group.parts = _Parts(depth, n_keys, dict(signatures), complete=False)
        elif rt.backend is not None:
            rt.backend.restore_key_group(kg, head)
            if self.bucketed:  # a group held in its row (small, or written before buckets)
                group.parts = _Parts(_INLINE, 0, {}, complete=True)
        rt.event_timers.restore(event_timers)
        rt.processing_timers.restore(processing_timers)
        if operator_states:
            group.runner.restore_operator_states(operator_states[0])

    def _save(
        self, group: _Group, kg: int, state: Any, row: _StateRow | None, loader: _Loader | None
    ) -> bool:
        """Write the key group's state row (and changed buckets) if it changed; remove it when
        nothing is left. Whether the group may be cached, holding the row's version: only an
        instance holding all of it."""
        rt = group.runner.runtime
        backend = rt.backend  # None: a broadcast step that is not keyed (no keyed state)
        parts = group.parts
        event_timers = rt.event_timers.snapshot()
        processing_timers = rt.processing_timers.snapshot()
        operator_states = group.runner.operator_states()
        held = any(s is not None for s in operator_states)
        buckets_written = False
        head: Any
        if backend is None:
            head, empty = _EMPTY_STATE, True
        elif parts is None:
            head = backend.snapshot_key_group(kg)
            empty = head == _EMPTY_STATE
        else:
            assert loader is not None
            buckets_written, head = _save_buckets(parts, backend, kg, state.buckets, loader)
            empty = parts.n_keys == 0
        if empty and not event_timers and not processing_timers and not held:
            if row is not None:
                state.remove()
            return False
        fields = (head, event_timers, processing_timers)
        blob = _stable_dumps((*fields, operator_states) if held else fields)
        wms = tuple(group.wms)
        if row is None or buckets_written or blob != group.blob or wms != _row_marks(row, len(self.channels)):
            token = random.getrandbits(62)  # a new version: any bucket written changes it too
            # TTL entries in buckets not read this call: as the row said.
            unread_ttl = parts is not None and not parts.complete and row is not None and row.ttl
            ttl = (backend is not None and backend.holds_ttl_state()) or unread_ttl
            written = _StateRow(
                blob,
                token,
                wms,
                event_timers[0][0] if event_timers else None,
                processing_timers[0][0] if processing_timers else None,
                ttl,
            )
            state.update(written.values())
            group.blob, group.token = blob, token
        return parts is None or parts.complete


def _save_buckets(
    parts: _Parts, backend: KeyedStateBackend, kg: int, buckets: Any, loader: _Loader
) -> tuple[bool, Any]:
    """Write the buckets of ``parts`` whose entries changed (remove emptied ones), or, when the
    group's size calls for another depth (``_depth_for``), read every bucket and write the group
    anew at that depth (in buckets, or in its row). Whether any bucket was written, and what the
    row's blob holds for the keyed state: the group's snapshot (held in the row) or ``_Parts``'
    header."""
    stores = backend.key_group_entries(kg)
    signatures = {**parts.signatures, **backend.signatures(stores)}
    changes: dict[int, tuple[bytes, int] | None] = {}
    if parts.depth == _INLINE:  # all of it is held
        n_keys = _count_keys(stores)
    else:
        changes = _changed_buckets(parts, stores, kg)
        n_keys = parts.n_keys
        for bucket, new in changes.items():
            old = parts.stored.get(bucket)
            n_keys += (new[1] if new is not None else 0) - (old[1] if old is not None else 0)
    depth = _depth_for(n_keys, parts.depth)
    if depth != parts.depth and not parts.complete:
        loader.load_all()
        stores = backend.key_group_entries(kg)
        signatures = {**signatures, **backend.signatures(stores)}
        n_keys = _count_keys(stores)
    if depth == _INLINE:
        written = parts.depth != _INLINE
        if written:  # out of the buckets, into the row
            buckets.clear()
        parts.depth, parts.n_keys, parts.signatures, parts.stored = _INLINE, n_keys, signatures, {}
        return written, backend.pack_entries(stores)
    if depth != parts.depth:
        cut = _split(stores, depth)
        if parts.depth != _INLINE:
            buckets.clear()
        for bucket, part in cut.items():
            buckets.updateValue((bucket,), part)
        parts.stored = dict(cut)
        parts.depth, parts.n_keys, parts.signatures = depth, n_keys, signatures
        return True, parts.header()
    for bucket, new in changes.items():
        if new is None:
            buckets.removeKey((bucket,))
        else:
            buckets.updateValue((bucket,), new)
        parts.stored[bucket] = new
    parts.n_keys, parts.signatures = n_keys, signatures
    return bool(changes), parts.header()


def _changed_buckets(
    parts: _Parts, stores: dict[str, list[StateEntry]], kg: int
) -> dict[int, tuple[bytes, int] | None]:
    """The buckets whose entries differ from what the store holds (``parts.stored``), with what
    they hold now (None: nothing). ``stores`` is what the backend holds: with ``complete``, every
    key of the group; else only the keys that became current (``moved``), whose buckets are in
    ``read``: each such bucket changed when those keys' entries did, and keeps its other keys'
    entries as read."""
    if parts.complete:
        cut = _split(stores, parts.depth)
        return {b: cut.get(b) for b in parts.stored.keys() | cut.keys() if cut.get(b) != parts.stored.get(b)}
    held = _cut(stores, parts.depth)
    unread = held.keys() - parts.read.keys()
    if unread:  # writing them would drop the keys of those buckets that were never read
        raise RuntimeError(
            f"fs-compat internal error: key group {kg} holds state of keys in buckets "
            f"{sorted(unread)} that were not read; nothing was written"
        )
    changes: dict[int, tuple[bytes, int] | None] = {}
    moved = parts.moved
    for bucket, read in parts.read.items():
        now = held.get(bucket, {})
        before = _entries_of(read, lambda k: k in moved)
        if {n: sorted(e) for n, e in now.items()} == {n: sorted(e) for n, e in before.items()}:
            continue
        kept = _entries_of(read, lambda k: k not in moved)
        for name, entries in now.items():
            kept.setdefault(name, []).extend(entries)
        stored = parts.stored.get(bucket)
        n = (stored[1] if stored is not None else 0) - _count_keys(before) + _count_keys(now)
        changes[bucket] = (_stable_dumps(kept), n) if kept else None
    return changes


def _count_keys(stores: dict[str, list[StateEntry]]) -> int:
    """The number of keys holding entries in ``stores``."""
    return len({entry[0] for entries in stores.values() for entry in entries})


def _row_marks(row: _StateRow | None, n: int) -> tuple[int | None, ...]:
    """The ``n`` channels' watermarks a state row holds (None: none yet, or no row)."""
    known = row.wms if row is not None else ()
    return (*known[:n], *([None] * (n - len(known))))


def _combined(marks: Sequence[int | None]) -> int | None:
    """A step's watermark from its channels' (Flink: the smallest; None while one has none)."""
    if not marks or any(m is None for m in marks):
        return None
    return min(m for m in marks if m is not None)


def _slot(step: Node | None, slots: Mapping[int, int] | None) -> int:
    """The slot where ``step``'s records enter the next stage (``slots``: by node id; 0 when not
    given)."""
    return 0 if step is None or slots is None else slots[step.id]


class _NextStep:
    """The keyed step a key-group pass's outputs go to (``Feed.end``, through the feed's steps
    run in the key-group pass): they become that step's rows (``_PRE_FIELDS``), routed to its
    key groups, on the feed's channel."""

    def __init__(self, feed: Feed, config: LocalConfig, slot: int = 0) -> None:
        assert feed.end is not None
        edge = feed.end.inputs[feed.inp]
        self.step = feed.end.name
        self.ch = feed.ch
        self.key_selector = edge.key_selector  # None: a broadcast or spread input
        #: Where the step's groups start in its stage (its ``slot``), and its markers' ``kg``.
        self.offset = slot * config.max_parallelism
        self.marker = -1 - slot
        self.groups = [self.offset + g for g in groups_of(feed.end, config)]
        self.encoder = KeyEncoder(edge.key_codec, config.max_parallelism)
        #: A spread input's routing (``Feed.spread``); each call's round starts at its key group.
        self.spread = _Spread(feed, config) if feed.spread else None

    def frame(
        self, kg: int, results: list[tuple[Any, int | None]], wm: int | None, metrics: bytes | None = None
    ) -> Any:
        """The rows of ``results`` (outputs of key group ``kg``, in order: ``seq`` keeps it per
        key group), then this call's marker (``kg`` ``-1 - slot``, ``ts`` the step's watermark,
        ``v`` what the call added to its steps' metrics, for ``_progress``)."""

        values, stamps = [v for v, _t in results], [t for _v, t in results]
        if self.spread is None and self.key_selector is None:  # broadcast: to every group
            rows = _chunk_to_every_group(self.groups, kg << 40, values, stamps, True)
        else:
            if self.spread is not None:
                kgs, keys = self.spread(values, start=kg), [None] * len(values)
            else:
                assert self.key_selector is not None
                kgs, keys = route_keys(self.step, self.key_selector, self.encoder, values)
            if self.offset:
                kgs = [self.offset + g for g in kgs]
            rows = chunks(kgs, kg << 40, values, stamps, keys, True)
        return _rows_frame(rows, self.ch, self.marker, wm, metrics)


def _rows_frame(
    rows: tuple[list[int], list[int], list[bytes], list[int]],
    ch: int,
    marker: int,
    wm: int | None,
    metrics: bytes | None,
) -> Any:
    """Chunk ``rows`` (``chunks``: their ``kg``, ``seq``, ``v`` and ``n``) of the pre-pass's
    form (``_PRE_FIELDS``) for the next stage, all on channel ``ch``, then one marker (``kg``
    ``marker``, ``ts`` ``wm``, ``v`` ``metrics``)."""
    import numpy as np
    import pandas as pd

    kgs, seqs, vs, counts = rows
    m = len(vs) + 1
    last = np.full(m, None, dtype=object)  # null but in the marker's row
    ts = last.copy()
    ts[-1] = wm
    v = np.fromiter([*vs, metrics], object, m)
    n = np.fromiter([*counts, None], object, m)
    # NumPy columns, no copies: a ``Series`` per column costs ~40 us a call (bench/README).
    return pd.DataFrame(
        {
            "kg": np.array([*kgs, marker], dtype=np.int32),
            "seq": np.array([*seqs, -1], dtype=np.int64),
            "v": v,
            "ts": ts,
            "ch": np.full(m, ch, dtype=np.int32),
            "n": n,
        },
        copy=False,
    )


class _ToRelay:
    """A branch of a key-group pass's outputs bound for the job's output, when the stage's rows
    go on to a next stage (``StreamShape.relayed``): they become rows of the next stage's relay
    (``_Relay``, at ``slot``), each in the relay's group of the key group that emitted it, its
    ``ch`` the emitting subtask (of ``step``, when given: the ``N>`` of ``print()``)."""

    def __init__(self, config: LocalConfig, slot: int | None, step: Node | None = None) -> None:
        assert slot is not None
        self.offset = slot * config.max_parallelism
        self.marker = -1 - slot
        self.parallelism = (step.parallelism if step is not None else None) or config.parallelism
        self.max_parallelism = config.max_parallelism

    def frame(
        self,
        kg: int,
        results: list[tuple[Any, int | None]],
        wm: int | None,
        metrics: bytes | None = None,
        subtask: int | None = None,
    ) -> Any:
        """The rows of ``results`` (``_NextStep.frame``'s), then a marker carrying ``metrics``
        (``_markers`` passes no marker on to a relay: it has no timers). ``subtask``: the
        emitting subtask, when it is not key group ``kg``'s."""
        n = len(results)
        ch = subtask_of(kg, self.parallelism, self.max_parallelism) if subtask is None else subtask
        values, stamps = [v for v, _t in results], [t for _v, t in results]
        rows = chunks([self.offset + kg] * n, kg << 40, values, stamps, [None] * n, True)
        return _rows_frame(rows, ch, self.marker, wm, metrics)


class _Relay:
    """The relay of a stage (``StreamShape.has_relay``): it passes on the rows bound for the job's
    output of the stages before it, as the output's columns (``metrics_column`` and
    ``channel_column`` as ``_KeyGroups``'; the channel is each row's emitting subtask) or, when
    this stage's rows go on too, to the next stage's relay (at ``slot``). It holds no state."""

    def __init__(self, config: LocalConfig, out: OutputColumns, slot: int | None) -> None:
        self.config = config
        self.out = out
        self.onward = None if slot is None else _ToRelay(config, slot)
        self.metrics_column: str | None = None
        self.channel_column: str | None = None
        self.frame_schema: Any = None  # as ``_KeyGroups``'

    @worker_pass
    def __call__(self, key: tuple[Any, ...], pdfs: Iterator[Any], state: Any) -> Iterator[Any]:
        del state  # a relay keeps nothing
        records = _Records.of(pdfs)
        if records.n == 0:
            return
        runs = [(ch, values, stamps) for ch, values, stamps, _k in records.ordered()]
        if self.onward is not None:
            for ch, values, stamps in runs:
                yield self.onward.frame(int(key[0]), list(zip(values, stamps, strict=True)), None, None, ch)
            return
        values = [v for _ch, vs, _ts in runs for v in vs]
        cols = self.out.columns(values)
        frame = {name: cols[name] for name in self.out.names}
        if self.metrics_column is not None:
            frame[self.metrics_column] = [None] * len(values)
            if self.channel_column is not None:
                frame[self.channel_column] = [ch for ch, vs, _ts in runs for _v in vs]
        yield self.out.frame(frame, self.frame_schema)


class _Lane:
    """A lane of a stage (``StreamShape.lanes``): it passes on the records for a keyed step of a
    later stage that cross this one, each in the lane's group of the step's key group, to
    ``slot`` of the next stage (the step's, or its lane there), and the watermarks of their
    channels: the lane's first group gets the markers of each channel (``_markers``) and sends
    them on, one per channel, as the step's markers (``kg`` ``-1 - slot``). It holds no state."""

    def __init__(self, slot: int, n_groups: int) -> None:
        self.offset = slot * n_groups
        self.marker = -1 - slot

    @worker_pass
    def __call__(self, key: tuple[Any, ...], pdfs: Iterator[Any], state: Any) -> Iterator[Any]:
        del state  # a lane keeps nothing
        kg = int(key[0])
        records = _Records.of(pdfs)
        runs = {ch: run for ch, *run in records.ordered()} if records.n else {}
        for ch in sorted({*runs, *records.wms}):
            values, stamps, keys = runs.get(ch, [[], [], []])
            groups = [self.offset + kg] * len(values)  # one lane group feeds each (group, ch)
            rows = chunks(groups, kg << 40, values, stamps, keys, True)
            yield _rows_frame(rows, ch, self.marker, records.wms.get(ch), None)


class _TwsState:
    """A key group's state row in ``transformWithStateInPandas``'s ``ValueState``, read and
    written as ``_KeyGroups`` does Spark's ``GroupState``; ``now`` is the processing time. The
    row is read once (each read is a round trip to the state server)."""

    _UNREAD = object()

    def __init__(self, value: Any, now: int, buckets: Any = None) -> None:
        self.value = value
        self.now = now
        #: The step's ``MapState`` of buckets (``_Parts``).
        self.buckets = buckets
        self._row: Any = self._UNREAD

    @property
    def exists(self) -> bool:
        return self.get is not None

    @property
    def get(self) -> Any:
        if self._row is self._UNREAD:
            self._row = self.value.get()
        return self._row

    def update(self, row: tuple[Any, ...]) -> None:
        self.value.update(row)
        self._row = row

    def remove(self) -> None:
        self.value.clear()
        self._row = None

    def getCurrentProcessingTimeMs(self) -> int:  # noqa: N802 - GroupState's name
        return self.now


def _processor_base() -> type:
    from pyspark.sql.streaming.stateful_processor import StatefulProcessor

    return StatefulProcessor


class _KeyGroupProcessor(_processor_base()):  # type: ignore[misc]
    """The ``transformWithStateInPandas`` processor of a stage's key-group pass: one
    ``ValueState`` (the state row, ``_STATE_FIELDS``) per group; each call is the ``_KeyGroups``
    of the stage's step whose range holds the group (``fns[group // n]``, the step's key group
    ``group % n``: a stage of one step has just its key groups), with the micro-batch's time from
    the rows' ``now`` column. Several such passes chain in one query."""

    def __init__(self, fns: Sequence[_KeyGroups | _Relay | _Lane], n: int) -> None:
        self.fns = tuple(fns)
        self.n = n

    def init(self, handle: Any) -> None:
        self.row = handle.getValueState("kg", _spark_schema(_STATE_FIELDS))
        self.buckets = handle.getMapState("kb", _spark_schema(_BUCKET_KEY), _spark_schema(_BUCKET_FIELDS))

    def handleInputRows(self, key: Any, rows: Iterator[Any], timerValues: Any) -> Iterator[Any]:  # noqa: N802,N803
        frames = [pdf for pdf in rows if len(pdf)]
        now = int(_first_value(frames[0], "now")) if frames else 0
        slot, kg = divmod(spark_hash_long(int(key[0])), self.n)  # the group (``_grouping_keys``)
        yield from self.fns[slot]((kg,), iter(frames), _TwsState(self.row, now, self.buckets))

    def close(self) -> None:
        pass


def _above(a: int | None, b: int | None) -> bool:
    """``a > b`` where None is below every timestamp."""
    return a is not None and (b is None or a > b)
