"""The run pass of a bounded plan's step on Spark: the mapInArrow function that runs the step's
subtasks (``SubtaskRunner``) over their routed, ordered events and writes their outputs.

Inside a partition, events are handled per subtask in ``seq`` order (the input is sorted by
subtask), so per key the order is the input order, and each subtask's input watermark is the
minimum over its channels, as in Flink. The outputs are written by a writer: as events
(``EventWriter``) for the steps downstream, or as ``to_dataframe``'s columns (``ColumnWriter``).
"""

from __future__ import annotations

import itertools
import pickle
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol

from fs_compat.runtime import LocalConfig, Node, Output, SubtaskRunner

from ._convert import OutputColumns, dumps_events
from ._counters import StepTally, TaskTally
from ._events import BATCH_ROWS, END_ORIGIN, FIELDS, ORIGIN_SHIFT, POSITIONS, FrameSource, arrow_schema
from ._routing import batch_keys, check_routed_key, key_values, read_chunk
from ._worker import worker_pass


class _Writer(Protocol):
    #: The list the runner puts its main output's record values in (None: ``take`` gets them).
    main: list[Any] | None
    #: Whether ``main``'s values are read only field by field (``SinkNode.fields_only``).
    fields_only: bool

    def start(self, part: int) -> None: ...
    def take(self, outs: Sequence[Output], origin: int | Sequence[int] | None = None) -> None: ...
    def __len__(self) -> int: ...
    def flush(self) -> Any: ...


class EventWriter:
    """The outputs of a run pass as events (``FIELDS``): accumulated column by column as the
    subtasks give them, written out as Arrow record batches. A subtask's outputs are on its
    channel (``ch``), numbered in order (``seq``); given their origin (or each one's), their
    ``seq`` carries it (``origin << ORIGIN_SHIFT | position``: ``LocalConfig.origins``)."""

    main: list[Any] | None = None
    fields_only = False  # the values are pickled as they are

    def __init__(self) -> None:
        self.schema = arrow_schema(FIELDS)
        self.tag: list[str | None] = []
        self.v: list[bytes | None] = []
        self.ts: list[int | None] = []
        self.wm: list[int | None] = []
        self.ch: list[int] = []
        self.seq: list[int] = []
        self.part = -1
        self.next_seq = 0

    def start(self, part: int) -> None:
        """The outputs from now on are subtask ``part``'s."""
        self.part, self.next_seq = part, 0

    def take(self, outs: Sequence[Output], origin: int | Sequence[int] | None = None) -> None:
        """Add ``outs``, the current subtask's outputs in order (produced by an event of
        ``origin``, or each by one of its ``origin``, when given)."""
        if not outs:
            return
        tags, values, stamps, marks = zip(*outs, strict=True)
        blobs = dumps_events(values, marks)
        m, seq = len(outs), self.next_seq
        self.tag.extend(tags)
        self.v.extend(blobs)
        self.ts.extend(stamps)
        self.wm.extend(marks)
        self.ch.extend([self.part] * m)
        if origin is None:
            self.seq.extend(range(seq, seq + m))
        elif isinstance(origin, int):  # positions go on across origins: ``seq`` grows as they do
            base = origin << ORIGIN_SHIFT
            self.seq.extend(base | (n & POSITIONS) for n in range(seq, seq + m))
        else:
            shift, positions = ORIGIN_SHIFT, range(seq, seq + m)
            self.seq.extend(o << shift | (n & POSITIONS) for o, n in zip(origin, positions, strict=True))
        self.next_seq = seq + m

    def __len__(self) -> int:
        return len(self.seq)

    def flush(self) -> Any:
        """The events added since the last flush, as a record batch."""
        import pyarrow as pa

        columns = (self.tag, self.v, self.ts, self.wm, self.ch, self.seq)
        arrays = [pa.array(column, field.type) for column, field in zip(columns, self.schema, strict=True)]
        for column in columns:
            column.clear()
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)


class ColumnWriter:
    """The values of one output (``tag``; None: the main output, whose values the runner puts in
    ``main``) of a run pass as ``to_dataframe``'s ``columns``, written out as Arrow record
    batches; a value that does not fit them is the StepError ``columns`` raises (they name the
    step)."""

    def __init__(self, tag: str | None, columns: OutputColumns) -> None:
        self.want = tag
        self.columns = columns
        self.main: list[Any] | None = [] if tag is None else None
        self.fields_only = columns.fields_only
        self.schema = columns.arrow_schema()
        self.cols: list[list[Any]] = [[] for _ in columns.names]

    def start(self, part: int) -> None:
        pass  # the columns say nothing of which subtask wrote a value

    def take(self, outs: Sequence[Output], origin: int | Sequence[int] | None = None) -> None:
        """Add the wanted values: the main output's from ``main``, else those of ``outs``."""
        if self.main is not None:
            wanted = self.main[:]
            self.main.clear()
        else:
            wanted = [v for t, v, _s, w in outs if w is None and t == self.want]
        cols = self.columns.columns(wanted)
        for col, name in zip(self.cols, self.columns.names, strict=True):
            col.extend(cols[name])

    def __len__(self) -> int:
        return len(self.cols[0])

    def flush(self) -> Any:
        """The values added since the last flush, as a record batch."""
        batch = self.columns.record_batch(self.cols, self.schema)
        for col in self.cols:
            col.clear()
        return batch


class _Subtasks:
    """The subtasks of a step one Spark task runs, one after another (its input is sorted by
    subtask), and the writer of their outputs."""

    def __init__(self, run: RunPass, writer: _Writer, counts: TaskTally | None) -> None:
        self.run = run
        self.writer = writer
        self.counts = counts
        self.runner: SubtaskRunner | None = None
        self.part = -1

    def at(self, part: int) -> SubtaskRunner:
        """The runner of subtask ``part``, whose events come next: the current subtask's input
        ends here, if it is another."""
        if part != self.part or self.runner is None:
            self.finish()
            run = self.run
            self.part = part
            self.writer.start(part)
            self.runner = SubtaskRunner(
                run.node,
                part,
                run.config,
                run.channels,
                run.tags,
                run.chain,
                self.writer.main,
                fields_only=self.writer.fields_only,
            )
            if self.counts is not None:
                self.counts.started(self.runner)
        return self.runner

    def take(self, origin: int | Sequence[int] | None = None) -> None:
        """Hand the current subtask's outputs so far (of an event of ``origin``, or each of
        one of its ``origin``, when given) to the writer."""
        if self.runner is not None:
            self.writer.take(self.runner.drain(), origin)

    def finish(self) -> None:
        """The current subtask's input ended: its last outputs go to the writer (with
        origins, after every source batch: ``END_ORIGIN``)."""
        if self.runner is not None:
            self.runner.finish()
            if self.counts is not None:
                self.counts.finished(self.runner)
            self.take(self.run.end_origin if self.run.config.origins else None)


class RunPass:
    """What runs ``node``'s subtasks over their ordered events (and ``chain``, the steps that
    run in the same pass after it); ``tally`` counts them; ``run`` is the pass.

    With ``source``, records carry that DataFrame source's columns instead of ``v``. With
    ``output = (tag, columns)``, the pass writes the values of output ``tag`` as ``columns``
    (``to_dataframe``'s schema) instead of events. With ``key_fields``, Spark routed the
    records by those columns (``direct_route``): they have no ``ts``, ``ki`` or ``ks``, and
    their keys are the columns' values (``key_values``). With ``config.origins``, each event's
    outputs carry its origin in ``seq`` (``EventWriter``), and what the steps emit at the end of
    input ``end_origin``."""

    def __init__(
        self,
        node: Node,
        config: LocalConfig,
        channels: Sequence[int],
        tags: Sequence[str],
        *,
        source: FrameSource | None = None,
        chain: Sequence[Node] = (),
        output: tuple[str | None, OutputColumns] | None = None,
        tally: StepTally | None = None,
        key_fields: tuple[int, ...] | None = None,
        end_origin: int | None = None,
    ) -> None:
        self.node = node
        self.config = config
        self.channels = channels
        self.tags = tags
        self.source = source
        self.chain = chain
        self.output = output
        self.tally = tally
        self.key_fields = key_fields
        #: With origins, that of what the steps emit at the end of input (default: ``END_ORIGIN``).
        self.end_origin = END_ORIGIN if end_origin is None else end_origin
        #: The step whose outputs the pass writes (the last of the chain).
        self.step = (chain[-1] if chain else node).name

    def mapper(self) -> Callable[[Iterator[Any]], Iterator[Any]]:
        """The mapInArrow function: ``run``."""
        return worker_pass(self.run)

    def writer(self) -> _Writer:
        if self.output is None:
            return EventWriter()
        return ColumnWriter(*self.output)

    def run(self, batches: Iterator[Any]) -> Iterator[Any]:
        """The run pass over one Spark partition's ``batches``."""
        node, source, key_fields = self.node, self.source, self.key_fields
        writer = self.writer()
        counts = self.tally.open() if self.tally is not None else None
        subtasks = _Subtasks(self, writer, counts)
        loads = pickle.loads
        width = len(source.fields) if source is not None else 0
        single = len(self.channels) == 1
        origins = self.config.origins
        # A DataFrame source's columns (``COLUMNAR``): records of input 0, channel 0 only.
        plain = source is not None
        for batch in batches:
            n = batch.num_rows
            if n == 0:
                continue
            if not plain and batch.column("n").null_count < n:
                self._packed(subtasks, batch, counts)
                subtasks.take()
                if len(writer) >= BATCH_ROWS:
                    yield writer.flush()
                continue
            if counts is not None:
                if plain:
                    counts.records[0] += n
                else:
                    counts.batch(batch)
            if source is not None:
                cols = source.reader.columns([batch.column(f"c{i}") for i in range(width)])
                values: list[Any] = source.reader.make_rows(cols)
            else:
                values = [None if v is None else loads(v) for v in batch.column("v").to_pylist()]
            ts_col = batch.column("ts") if key_fields is None else None
            stamps: Any = (
                itertools.repeat(None) if ts_col is None or ts_col.null_count == n else ts_col.to_pylist()
            )
            parts = batch.column("part").to_pylist()
            if origins:
                self._with_origins(subtasks, batch, values, stamps, parts, plain)
            elif single and parts[0] == parts[-1] and (plain or batch.column("wm").null_count == n):
                # Records of one subtask only (the input is sorted by subtask): one call.
                runner = subtasks.at(parts[0])
                keys = batch_keys(batch) if key_fields is None else key_values(cols, key_fields)
                if keys is not None and source is not None:
                    check_routed_key(node.name, node.inputs[0].key_selector, values[0], keys[0])
                runner.records(0, values, stamps, keys)
            else:
                if type(stamps) is not list:
                    stamps = [None] * n
                columns: list[list[Any]]
                if plain:
                    columns = [[0] * n, [0] * n, [None] * n]
                else:
                    columns = [batch.column(name).to_pylist() for name in ("inp", "ch", "wm")]
                at, part = subtasks.at, parts[0]
                runner = at(part)
                for row_part, v, ts, inp, ch, wm in zip(parts, values, stamps, *columns, strict=True):
                    if row_part != part:
                        runner, part = at(row_part), row_part
                    if wm is not None:
                        runner.watermark(inp, ch, wm)
                    else:
                        runner.push(inp, v, ts)
            subtasks.take()
            if len(writer) >= BATCH_ROWS:
                yield writer.flush()
        subtasks.finish()
        if counts is not None:
            yield from counts.publish(arrow_schema(FIELDS))
        yield writer.flush()

    def _packed(self, subtasks: _Subtasks, batch: Any, counts: TaskTally | None) -> None:
        """Chunk rows (``RoutePass.packed``: the step's only input, so nothing else sorts
        between their records): each chunk's records, in order, to its subtask."""
        names = ("part", "inp", "v", "n")
        for part, inp, blob, count in zip(*(batch.column(name).to_pylist() for name in names), strict=True):
            if count is None:  # the plan packs only a step's only input
                raise AssertionError(f"step '{self.node.name}': a routed record among chunks")
            _places, values, stamps, keys = read_chunk(blob)
            if counts is not None:
                counts.records[inp] += count
            subtasks.at(part).records(inp, values, stamps, keys)

    @staticmethod
    def _with_origins(
        subtasks: _Subtasks, batch: Any, values: list[Any], stamps: Any, parts: list[int], plain: bool
    ) -> None:
        """The events of ``batch`` one by one, the outputs of each subtask handed to the writer
        with their origins (``LocalConfig.origins``): what a step emits inherits the origin of
        the event it handled."""
        n = batch.num_rows
        if type(stamps) is not list:
            stamps = [None] * n
        if plain:
            columns: list[list[Any]] = [[0] * n, [0] * n, [None] * n]
        else:
            columns = [batch.column(name).to_pylist() for name in ("inp", "ch", "wm")]
        seqs = batch.column("seq").to_pylist()
        at, take = subtasks.at, subtasks.take
        runner, part, origin = at(parts[0]), parts[0], seqs[0] >> ORIGIN_SHIFT
        # The origin of each output so far, filled up to the outputs pending at each change.
        origins: list[int] = []
        for row_part, v, ts, seq, inp, ch, wm in zip(parts, values, stamps, seqs, *columns, strict=True):
            if seq >> ORIGIN_SHIFT != origin or row_part != part:
                origins.extend([origin] * (runner.pending() - len(origins)))
                origin = seq >> ORIGIN_SHIFT
                if row_part != part:
                    take(origins)
                    origins = []
                    runner, part = at(row_part), row_part
            if wm is not None:
                runner.watermark(inp, ch, wm)
            else:
                runner.push(inp, v, ts)
        origins.extend([origin] * (runner.pending() - len(origins)))
        take(origins)
