"""Routing on Spark: which subtask of a step each event goes to, and which Spark partition holds
a subtask.

A step's input is routed to its subtasks (``part``): by key group for keyed edges, to every
subtask for broadcast edges and watermarks, round-robin (or forward) otherwise
(``RoutePass``). Records of a DataFrame source keyed by one of its integer or string columns
are routed by Spark alone, by its own hash of the key (``key_fields``, ``direct_route``). The
keys a route pass finds travel with the records (``key_columns``, read back by ``batch_keys``)
so the run pass need not call the key selector again.
"""

from __future__ import annotations

import functools
import operator
import pickle
import sys
from array import array
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from fs_compat.runtime import (
    Edge,
    KeyEncoder,
    StepError,
    murmur3_32,
    route_custom,
    route_keys,
    row_field,
    row_fields,
)

from ._chain import Prechain
from ._convert import RowReader, dumps, dumps_all, dumps_copies, loads_copies
from ._events import (
    COLUMNAR,
    FIELDS,
    ROUTED,
    FrameSource,
    arrow_schema,
    first_row,
    schema_with_routing,
    spark_schema,
)
from ._worker import worker_pass


class RoutePass:
    """What gives each event of one input (``edge``, the ``edge_index``-th) of ``step`` its
    subtask (``part``) among ``p``; ``mapper`` is the pass. A non-keyed edge between steps of
    equal parallelism forwards (upstream subtask ``i`` feeds subtask ``i``, so each record keeps
    its place among its channel's), else it rebalances, as Flink's default partitioning does.

    With ``source``, the input is that DataFrame source's rows: the records keep its columns
    (``columnar``) or become events with pickled Rows (``route_source``); else the input is
    events (``route``). With ``before``, the records first go through those stateless steps,
    and their outputs are routed instead.

    ``packed``: a source's records cross the shuffle as chunks (``chunks``: one row per subtask
    and batch, ``n`` set), for a step whose only input this is, ordered by ``seq`` alone: no
    other row can fall between a chunk's records then. Bytewax's W1 on Spark (``bench/w1.py``,
    its first ``map`` in this pass): Spark moves and sorts ~2 rows per 10,000 records instead
    of 10,000, and the values are pickled and loaded in one call per chunk."""

    def __init__(
        self,
        step: str,
        edge_index: int,
        edge: Edge,
        p: int,
        max_parallelism: int,
        channels: int,
        source: FrameSource | None = None,
        columnar: bool = False,
        before: Prechain | None = None,
        packed: bool = False,
    ) -> None:
        self.step = step
        self.edge_index = edge_index
        self.p = p
        self.max_parallelism = max_parallelism
        self.channels = channels
        self.source = source
        self.columnar = columnar
        self.before = before
        self.packed = packed and source is not None and not columnar and not edge.broadcast
        self.key_selector = edge.key_selector
        self.encoder = KeyEncoder(edge.key_codec, max_parallelism) if edge.key_selector is not None else None
        self.broadcast = edge.broadcast
        self.partitioner = edge.partitioner
        self.forward = edge.plain and channels == p

    def mapper(self) -> Callable[[Iterator[Any]], Iterator[Any]]:
        """The mapInArrow function: ``route``, or ``route_source`` for a DataFrame source."""
        return worker_pass(self.route if self.source is None else self.route_source)

    def keyed(self, values: Sequence[Any]) -> tuple[list[int], list[Any]]:
        """The subtask of each value (None, a watermark row: -1) and its key."""
        assert self.encoder is not None and self.key_selector is not None
        p, most = self.p, self.max_parallelism
        groups, keys = route_keys(self.step, self.key_selector, self.encoder, values)
        return [-1 if g < 0 else g * p // most for g in groups], keys

    def custom(self, values: Sequence[Any]) -> list[int]:
        """The subtask the custom partitioner picks for each value (None, a watermark row: -1)."""
        assert self.partitioner is not None
        step, partitioner, p = self.step, self.partitioner, self.p
        return [-1 if v is None else route_custom(step, partitioner, v, p) for v in values]

    def folded(self, cols: list[list[Any]], field: int) -> tuple[list[int], list[Any]] | None:
        """``keyed`` of a DataFrame source's records whose key is their field ``field`` (the
        selector returns it as is, see ``row_field``): no Row and no selector call per record.
        None when a key is missing or unusable: ``keyed`` on the Rows names the record."""
        assert self.encoder is not None
        p, most = self.p, self.max_parallelism
        groups = self.encoder.key_groups(cols[field])
        if groups is None:
            return None
        return [g * p // most for g in groups], cols[field]

    def subtasks(self, batch: Any, values: list[Any] | None) -> tuple[list[int], list[Any] | None]:
        """The subtask of each event of ``batch`` (watermark rows: -1), and the keys; ``values``
        are the records' values when known (None for watermarks)."""
        n, p = batch.num_rows, self.p
        if self.broadcast:
            return [-1] * n, None
        if self.key_selector is None and self.partitioner is None:
            marks = batch.column("wm").to_pylist()
            parts = batch.column("ch" if self.forward else "seq").to_pylist()
            return [-1 if w is not None else c % p for w, c in zip(marks, parts, strict=True)], None
        if values is None:
            loads = pickle.loads
            values = [None if v is None else loads(v) for v in batch.column("v").to_pylist()]
        if self.partitioner is not None:
            return self.custom(values), None
        return self.keyed(values)

    def spread(self, parts: list[int], n: int) -> tuple[list[int], list[int] | None]:
        """Each event's subtasks: watermarks and broadcast records go to every subtask (the rows
        to take, in order, else None: every row once)."""
        p = self.p
        if p > 1 and -1 in parts:
            rows, every = [], range(p)
            for i, part in enumerate(parts):
                if part < 0:
                    rows.extend([i] * p)
                else:
                    rows.append(i)
            return [q for part in parts for q in (every if part < 0 else (part,))], rows
        if p == 1:
            return [0] * n, None
        return parts, None

    def route(self, batches: Iterator[Any]) -> Iterator[Any]:
        """The pass over events (``FIELDS``): the same events, routed (``ROUTED``)."""
        import pyarrow as pa

        schema = arrow_schema(ROUTED)
        types = [field.type for field in arrow_schema(FIELDS)]
        steps = self.before.open(self.channels) if self.before is not None else None
        for batch in batches:
            values = None
            if steps is not None:
                batch, values = steps.events(batch)
            parts, keys = self.subtasks(batch, values)
            parts, rows = self.spread(parts, batch.num_rows)
            if rows is not None:
                batch = batch.take(pa.array(rows, pa.int64()))
            columns = [batch.column(name) for name, _ in FIELDS]
            columns = [c if c.type == t else c.cast(t) for c, t in zip(columns, types, strict=True)]
            routing = _routing(self.edge_index, parts, keys, rows)
            yield pa.RecordBatch.from_arrays([*columns, *routing], schema=schema)
        if steps is not None:
            yield from steps.close(schema)

    def route_source(self, batches: Iterator[Any]) -> Iterator[Any]:
        """The pass over a DataFrame source's rows: its records, routed, as its columns
        (``columnar``: ``COLUMNAR``, the columns, ``COLUMNAR_ROUTING``) or as events."""
        import pyarrow as pa
        from pyspark.sql.pandas.types import to_arrow_schema

        source, columnar, key_selector, broadcast = (
            self.source,
            self.columnar,
            self.key_selector,
            self.broadcast,
        )
        assert source is not None
        reader = source.reader
        fields = spark_schema(COLUMNAR, source.fields) if columnar else spark_schema(FIELDS)
        # Arrow timestamps with a zone hold UTC instants whatever the zone's name; Spark reads
        # any zone back as TimestampType, so UTC serves for every session time zone.
        schema = to_arrow_schema(schema_with_routing(fields, columnar), timezone="UTC")
        types = [f.type for f in schema][len(COLUMNAR) : len(COLUMNAR) + len(source.fields)]
        first = first_row()
        steps = self.before.open(1, stamped=source.timed) if self.before is not None else None
        # The key as a column: the records cross the shuffle as columns and the selector returns
        # one field as it is. Checked against the selector on each batch's first record.
        field = None
        if columnar and steps is None and key_selector is not None and not broadcast:
            field = row_field(key_selector, reader.names)
        for batch in batches:
            cols, stamps = source.read(batch)
            keyed_by_field = None
            if field is not None and batch.num_rows:
                assert key_selector is not None
                if selects_field(key_selector, reader, cols, field):
                    keyed_by_field = self.folded(cols, field)
                else:
                    field = None  # not what row_field said: call the selector from now on
            values = (
                reader.make_rows(cols)
                if keyed_by_field is None
                and (key_selector is not None or self.partitioner is not None or not columnar)
                else None
            )
            if steps is not None:
                assert values is not None
                values, stamps = steps.records(values, stamps)
            n = len(values) if values is not None else batch.num_rows
            seqs = source.seqs(first, n)
            first += n
            keys = None
            if broadcast:
                parts = [-1] * n
            elif keyed_by_field is not None:
                parts, keys = keyed_by_field
            elif key_selector is not None:
                assert values is not None
                parts, keys = self.keyed(values)
            elif self.partitioner is not None:
                assert values is not None
                parts = self.custom(values)
            else:
                parts = [s % self.p for s in seqs]
            parts, rows = self.spread(parts, n)
            if self.packed:  # before the per-record columns below, which chunks do not need
                assert values is not None
                if parts:
                    yield self._chunked(
                        schema,
                        parts,
                        _taken(values, rows),
                        _taken(stamps, rows),
                        None if keys is None else _taken(keys, rows),
                        _taken(seqs, rows),
                        steps is not None,
                    )
                continue
            m = len(parts)
            ts, seq = pa.array(_taken(stamps, rows), pa.int64()), pa.array(_taken(seqs, rows), pa.int64())
            routing = _routing(self.edge_index, parts, keys, rows)
            if columnar:
                if rows is not None:
                    batch = batch.take(pa.array(rows, pa.int64()))
                arrays = [c if c.type == t else c.cast(t) for c, t in zip(batch.columns, types, strict=True)]
                columnar_routing = routing[1:-1]  # ``COLUMNAR_ROUTING``: no ``inp``, no ``n``
                yield pa.RecordBatch.from_arrays([ts, seq, *arrays, *columnar_routing], schema=schema)
                continue
            assert values is not None
            blobs = pa.array(_taken(dumps_all(values), rows), pa.binary())
            meta = [
                pa.nulls(m, pa.string()),
                blobs,
                ts,
                pa.nulls(m, pa.int64()),
                pa.array([0] * m, pa.int32()),
                seq,
            ]
            yield pa.RecordBatch.from_arrays([*meta, *routing], schema=schema)
        if steps is not None:
            yield from steps.close(schema)

    def _chunked(
        self,
        schema: Any,
        parts: list[int],
        values: list[Any],
        stamps: list[int | None],
        keys: list[Any] | None,
        seqs: list[int],
        each: bool,
    ) -> Any:
        """One batch of records with their subtasks (``parts``; a record ``spread`` to several
        is in each one's chunk) as chunk rows (``ROUTING``'s ``n``): one per subtask, ``seq``
        its first record's; ``each``: the values come from user functions (``chunk``)."""
        import pyarrow as pa

        n = len(values)
        groups, firsts, blobs, counts = chunks(
            parts, 0, values, stamps, keys or [None] * n, each, placed=False
        )
        m = len(groups)
        return pa.RecordBatch.from_arrays(
            [
                pa.nulls(m, pa.string()),
                pa.array(blobs, pa.binary()),
                pa.nulls(m, pa.int64()),
                pa.nulls(m, pa.int64()),
                pa.array([0] * m, pa.int32()),
                pa.array([seqs[i] for i in firsts], pa.int64()),
                pa.array([self.edge_index] * m, pa.int32()),
                pa.array(groups, pa.int32()),
                pa.nulls(m, pa.int64()),
                pa.nulls(m, pa.string()),
                pa.array(counts, pa.int32()),
            ],
            schema=schema,
        )


def _routing(edge_index: int, parts: list[int], keys: list[Any] | None, rows: list[int] | None) -> list[Any]:
    """The ``ROUTING`` columns of a routed batch: ``keys`` are the records' keys (None: not
    known), before ``rows`` are taken."""
    import pyarrow as pa

    m = len(parts)
    if keys is None:
        known = [pa.nulls(m, pa.int64()), pa.nulls(m, pa.string())]
    else:
        known = key_columns(_taken(keys, rows))
    chunk_sizes = pa.nulls(m, pa.int32())  # ``n``: records, not chunks
    return [pa.array([edge_index] * m, pa.int32()), pa.array(parts, pa.int32()), *known, chunk_sizes]


def _taken(values: list[Any], rows: list[int] | None) -> list[Any]:
    """``values`` at ``rows`` (None: all of them)."""
    return values if rows is None else [values[r] for r in rows]


_INT64 = 1 << 63


def key_columns(keys: list[Any]) -> list[Any]:
    """The ``ki`` and ``ks`` columns of records with ``keys``: an ``int`` key (of exactly that
    type, in the int64 range) in ``ki``, a ``str`` key in ``ks``, other keys (and None) in
    neither: the pass that reads them runs the key selector again for those (``batch_keys``)."""
    import pyarrow as pa

    n = len(keys)
    kinds = set(map(type, keys))
    if kinds == {str}:
        return [pa.nulls(n, pa.int64()), pa.array(keys, pa.string())]
    if kinds == {int} and -_INT64 <= min(keys) and max(keys) < _INT64:
        return [pa.array(keys, pa.int64()), pa.nulls(n, pa.string())]
    ints, strs = split_keys(keys)
    return [pa.array(ints, pa.int64()), pa.array(strs, pa.string())]


def split_keys(keys: Sequence[Any]) -> tuple[list[int | None], list[str | None]]:
    """The ``ki`` and ``ks`` values of records with ``keys`` (see ``key_columns``), as lists."""
    ints = [k if type(k) is int and -_INT64 <= k < _INT64 else None for k in keys]
    strs = [k if type(k) is str else None for k in keys]
    return ints, strs


def known_keys(keys: Sequence[Any]) -> list[Any]:
    """``split_keys``' two lists in one (a pass over ``keys``, not three): each key that ``ki``
    or ``ks`` would ship, else None. What a chunk ships (``chunks``).

    >>> keys = ["a", 1, 2**63, 1.5, True, None]
    >>> ints, strs = split_keys(keys)
    >>> known_keys(keys) == [i if i is not None else s for i, s in zip(ints, strs)]
    True
    """
    return [k if k.__class__ is str or (k.__class__ is int and -_INT64 <= k < _INT64) else None for k in keys]


def batch_keys(batch: Any) -> list[Any] | None:
    """The keys ``key_columns`` wrote for a routed batch's records (None where not known; None
    for all: no record's key is known)."""
    ints, strs, n = batch.column("ki"), batch.column("ks"), batch.num_rows
    if ints.null_count == 0:
        return ints.to_pylist()  # type: ignore[no-any-return]
    if strs.null_count == 0:
        return strs.to_pylist()  # type: ignore[no-any-return]
    if ints.null_count == n and strs.null_count == n:
        return None
    return [i if i is not None else s for i, s in zip(ints.to_pylist(), strs.to_pylist(), strict=True)]


def chunks(
    groups: Sequence[int],
    first: int,
    values: Sequence[Any],
    stamps: Sequence[int | None],
    keys: Sequence[Any],
    each: bool,
    placed: bool = True,
) -> tuple[list[int], list[int], list[bytes], list[int]]:
    """Records sent to ``groups`` (a key group or a subtask each; the first record's place
    ``first``, the others' following: one batch of a pass) as *chunks*, one per group in the
    order the groups first occur: the group, the chunk's first record's place, its ``v``
    (``chunk``: the records' places in the batch (``places``), their values, timestamps and keys
    known as ``ki`` and ``ks`` would ship them, in input order) and its record count. Spark then moves,
    sorts and hands the next pass one row per group and batch instead of one per record: the
    streaming pre-pass's ~128 rows per 10,000 records (``bench/w1_stream.py``: PySpark's
    ``transformWithStateInPandas`` spends a Python loop per row on its input), a bounded route
    pass's one per subtask (``RoutePass.packed``). ``each``: the values come from user
    functions, and are pickled as copies (see ``chunk``). ``placed`` False: no places (a
    bounded run pass reads a packed chunk's records in order, and needs none).

    >>> gs, firsts, vs, ns = chunks([3, 5, 3], 100, ["a", "b", "c"], [7, 8, 9], ["x", 1, 2.5], False)
    >>> gs, firsts, ns
    ([3, 5], [100, 101], [2, 1])
    >>> places, values, stamps, keys = read_chunk(vs[0])  # keys: 2.5 is not shipped
    >>> chunk_seqs(firsts[:1], [places]).tolist(), values, stamps, keys
    ([100, 102], ['a', 'c'], [7, 9], ['x', None])
    >>> _gs, _fs, vs, _ns = chunks([3, 3], 0, ["a", "b"], [None, None], [None, None], False, placed=False)
    >>> pickle.loads(vs[0]), read_chunk(vs[0])  # timestamps and keys all None: one None each
    ((None, ['a', 'b'], None, None, False), (None, ['a', 'b'], [None, None], [None, None]))
    """
    known = known_keys(keys)
    some_stamps, some_keys = _some(stamps), _some(known)

    def blob(places: bytes | None, take: Callable[[Sequence[Any]], list[Any]]) -> bytes:
        return chunk(
            places,
            take(values),
            take(stamps) if some_stamps else None,
            take(known) if some_keys else None,
            each,
        )

    return _grouped(groups, first, placed, blob)


def column_chunks(
    groups: Sequence[int],
    first: int,
    columns: Sequence[list[Any]],
    stamps: Sequence[int | None],
    keys: Sequence[Any] | int,
) -> tuple[list[int], list[int], list[bytes], list[int]]:
    """``chunks`` (placed) of a DataFrame source's records given as its ``columns`` (one list
    per field, at least one; the records are the tuples of their values, as ``RowReader.tuples``
    gives them): each chunk holds its records' values column by column (no tuple per record
    made here; a list of plain values pickles and loads in ~2/3 the time of a list of tuples).
    ``keys`` are the records' keys, or the number of the column that holds them (the key
    selector returns that field as it is: ``row_field``), which the chunk then names instead of
    holding the keys twice. ``read_chunk`` gives the records back as tuples, as ``chunks``'.

    >>> gs, firsts, vs, ns = column_chunks([3, 5, 3], 100, [["a", "b", "c"], [1, 2, 3]], [7, 8, 9], 0)
    >>> gs, firsts, ns
    ([3, 5], [100, 101], [2, 1])
    >>> read_chunk(vs[0])[1:]
    ([('a', 1), ('c', 3)], [7, 9], ['a', 'c'])
    >>> read_chunk(column_chunks([3, 3], 0, [["a", "b"], [1, 2]], [None, None], ["k", 2.5])[2][0])[1:]
    ([('a', 1), ('b', 2)], [None, None], ['k', None])
    """
    column = keys if isinstance(keys, int) else None
    known = known_keys(keys) if not isinstance(keys, int) else []
    some_stamps, some_keys = _some(stamps), _some(known)

    def blob(places: bytes | None, take: Callable[[Sequence[Any]], list[Any]]) -> bytes:
        shipped = column if column is not None else take(known) if some_keys else None
        kept = take(stamps) if some_stamps else None
        return chunk(places, [take(c) for c in columns], kept, shipped, _COLUMNS)

    return _grouped(groups, first, True, blob)


def _some(items: Sequence[Any]) -> bool:
    """Whether any of ``items`` is not None: a batch's timestamps or keys that are all None
    need not be gathered per chunk (``chunk`` ships them as one None).

    >>> _some([None, None]), _some([None, 1])
    (False, True)
    """
    return items.count(None) != len(items)


def _grouped(
    groups: Sequence[int],
    first: int,
    placed: bool,
    blob: Callable[[bytes | None, Callable[[Sequence[Any]], list[Any]]], bytes],
) -> tuple[list[int], list[int], list[bytes], list[int]]:
    """What ``chunks`` returns: the records' positions per group, in the order the groups first
    occur, each group's ``v`` made by ``blob(places, take)`` (``places``: the positions packed,
    ``pack_places``; ``take(seq)``: the group's items of a sequence with an item per record,
    gathered in C)."""
    rows: dict[int, list[int]] = {}
    for i, g in enumerate(groups):
        at = rows.get(g)
        if at is None:
            rows[g] = [i]
        else:
            at.append(i)
    blobs = []
    for at in rows.values():
        places = pack_places(at) if placed else None
        if len(at) == 1:
            start = at[0]
            blobs.append(blob(places, lambda seq: [seq[start]]))  # noqa: B023 - called here
            continue
        get = operator.itemgetter(*at)  # a chunk's records gathered in C, not a Python loop each
        blobs.append(blob(places, lambda seq: list(get(seq))))  # noqa: B023 - called here
    return list(rows), [first + at[0] for at in rows.values()], blobs, [len(at) for at in rows.values()]


#: ``chunk``'s ``how`` for values given column by column (``column_chunks``); False and True
#: (0 and 1): values as they are, or as copies.
_COLUMNS = 2


def pack_places(positions: Sequence[int]) -> bytes:
    """A chunk's ``places``: its records' positions in their batch (each below 2**31), as
    little-endian int32s, packed in C (``chunk_seqs`` reads them): no Python int per record to
    compute, pickle or load on either side of the shuffle.

    >>> pack_places([3, 5]).hex()
    '0300000005000000'
    """
    packed = array("i", positions)
    if sys.byteorder == "big":  # the reading side may be another machine: one byte order
        packed.byteswap()
    return packed.tobytes()


def place_counts(places: Sequence[bytes]) -> list[int]:
    """How many records each chunk's ``places`` (``pack_places``) hold.

    >>> place_counts([pack_places([3, 5, 9]), pack_places([0])])
    [3, 1]
    """
    return [len(p) >> 2 for p in places]


def chunk_seqs(seqs: Sequence[int], places: Sequence[bytes], counts: Sequence[int] | None = None) -> Any:
    """The ``seq`` of each record of chunks whose first records' are ``seqs`` (their rows'), from
    their ``places`` (``pack_places``; ``counts``: ``place_counts`` of them, when the caller has
    it), one chunk after the other, as a NumPy int64 array: for all of them at once, in C.

    >>> chunk_seqs([100, 7], [pack_places([3, 5, 9]), pack_places([0])]).tolist()
    [100, 102, 106, 7]
    """
    import numpy as np

    positions = np.frombuffer(b"".join(places), dtype="<i4").astype(np.int64)
    starts = np.frombuffer(b"".join([p[:4] for p in places]), dtype="<i4")
    sizes = place_counts(places) if counts is None else counts
    return positions + np.repeat(np.asarray(seqs, dtype=np.int64) - starts, sizes)


def chunk(
    places: bytes | None,
    values: list[Any],
    stamps: list[int | None] | None,
    keys: list[Any] | int | None,
    each: bool | int,
) -> bytes:
    """A chunk's ``v`` (``read_chunk`` reads it). With ``each``, the values are pickled as
    copies (``dumps_copies``: values from user functions, one emitted twice or two sharing a
    part, reach the next step as two objects, as across a Flink network boundary, where a plain
    pickle would keep them one); else (a DataFrame source's records, which share nothing that
    can change) in the chunk's pickle; ``_COLUMNS``: ``values`` are the records' columns, and
    ``keys`` may be the number of the column holding them (``column_chunks``). Timestamps or
    keys that are all None (no timestamps; no key shipped) are one None, as is ``stamps`` or
    ``keys`` None (the caller knows there are none: ``_some``)."""
    n = len(values[0]) if each == _COLUMNS else len(values)
    return dumps(
        (
            places,
            dumps_copies(values) if each == 1 else values,  # True == 1
            None if stamps is None or stamps.count(None) == n else stamps,
            None if keys is None or (not isinstance(keys, int) and keys.count(None) == n) else keys,
            each,
        )
    )


def read_chunk(blob: bytes) -> tuple[bytes | None, list[Any], list[int | None], list[Any]]:
    """A chunk's places (``pack_places``, ``chunk_seqs``; None: not ``placed``), values, timestamps and keys
    (None where not shipped), from its ``v`` (``chunk``)."""
    places, values, stamps, keys, each = pickle.loads(blob)
    if each == _COLUMNS:
        columns = values
        values = list(zip(*columns, strict=True))
        if keys.__class__ is int:
            keys = columns[keys]
    elif each:
        values = loads_copies(values)
    n = len(values)
    return places, values, [None] * n if stamps is None else stamps, [None] * n if keys is None else keys


def selected_key(key_selector: Callable[[Any], Any], value: Any, key: Any) -> tuple[bool, Any]:
    """Whether ``key_selector`` gives ``key`` for ``value``, and what it gave (the exception it
    raised, if it failed). Reading keys from a column (``row_field``) instead of calling the
    selector per record is checked with this on each batch's first record."""
    try:
        got = key_selector(value)
        return bool(got == key), got
    except Exception as exc:
        return False, exc


def selects_field(
    key_selector: Callable[[Any], Any], reader: RowReader, cols: list[list[Any]], field: int
) -> bool:
    """Whether ``key_selector`` gives field ``field`` of the first record of ``cols``, as
    ``row_field`` said it would (checked once per batch before reading keys from the column;
    the selector's own error, if it fails, comes when it is called per record)."""
    return selected_key(key_selector, reader.row([c[0] for c in cols]), cols[field][0])[0]


def check_routed_key(step: str, key_selector: Callable[[Any], Any] | None, value: Any, key: Any) -> None:
    """That ``key_selector`` gives ``key``, the key a DataFrame source's record was routed by
    (read from its column, as ``row_field`` said), checked on each batch's first record: a
    record routed by another key than its selector's would share state with the wrong records."""
    if key_selector is None or key is None:
        return
    same, got = selected_key(key_selector, value, key)
    if not same:
        raise StepError(
            f"step '{step}': record {value!r} was routed by its key column ({key!r}), but the key "
            f"selector gives {got!r}"
        )


#: Spark types whose Python values are exactly ``int`` or ``str`` (keys the run pass finds in
#: ``KeyEncoder``'s memo).
_KEY_COLUMN_TYPES = frozenset({"LongType", "IntegerType", "ShortType", "ByteType", "StringType"})


def key_fields(edge: Edge, source: FrameSource | None) -> tuple[int, ...] | None:
    """The fields of a DataFrame source's records that the keyed ``edge`` reads them by, when its
    key selector returns one field as it is, or a tuple of fields (``row_fields``: one position
    for a key that is the field, several for a tuple key), the fields are integer or string
    columns and the records have no timestamps: then nothing about routing them needs Python
    (``direct_route``). None otherwise."""
    if source is None or source.timed or edge.key_selector is None or edge.broadcast:
        return None
    fields = row_fields(edge.key_selector, source.reader.names)
    types = source.schema.fields
    if fields is None or any(type(types[f].dataType).__name__ not in _KEY_COLUMN_TYPES for f in fields):
        return None
    return fields


def key_values(cols: list[list[Any]], fields: tuple[int, ...]) -> list[Any]:
    """The keys of a batch of records by their key ``fields`` (``key_fields``): the column's
    values for one field, tuples of the fields' values for several."""
    if len(fields) == 1:
        return cols[fields[0]]
    return list(zip(*(cols[f] for f in fields), strict=True))


def direct_route(df: Any, source: FrameSource, fields: tuple[int, ...], p: int) -> Any:
    """The records of a DataFrame source keyed by their columns ``fields`` (``key_fields``),
    routed by Spark with no Python pass: ``seq`` keeps the DataFrame's order (partition by
    partition, interleaved with the other sources as ``FrameSource.seqs`` does), then the
    source's columns (``c0``, ...), and ``part`` is Spark's hash of the key's columns (any
    stable assignment serves a bounded job: each key goes to one subtask). The run pass reads
    the keys from the columns (``RunPass(key_fields=...)``); a null key is routed too, and the
    run pass calls the key selector for it, which fails naming the record."""
    from pyspark.sql import functions as F  # noqa: N812 - Spark's convention

    names = [f"c{i}" for i in range(len(source.fields))]
    seq = F.monotonically_increasing_id() * source.n_sources + source.index
    part = F.pmod(F.hash(*[F.col(names[f]) for f in fields]), F.lit(p)) if p > 1 else F.lit(0)
    return df.toDF(*names).select(seq.alias("seq"), *names, part.cast("int").alias("part"))


def subtask_partition(p: int) -> Any:
    """The column to hash-partition routed events into ``p`` Spark partitions by so that subtask
    ``i`` (``part``) lands in partition ``i``: hashing ``part`` itself can put two subtasks in one
    partition (0 and 1 of two both go to 1: one task doing all the work)."""
    from pyspark.sql import functions as F  # noqa: N812 - Spark's convention

    return F.element_at(F.array(*[F.lit(v) for v in partition_keys(p)]), F.col("part") + 1)


@functools.cache
def partition_keys(p: int) -> tuple[int, ...]:
    """For each subtask ``i < p``, an ``int`` that Spark's hash partitioning into ``p`` partitions
    sends to partition ``i`` (``pmod(hash(v), p) == i``)."""
    found: dict[int, int] = {}
    v = 0
    while len(found) < p:
        found.setdefault(spark_hash_int(v) % p, v)
        v += 1
    return tuple(found[i] for i in range(p))


_M32 = 0xFFFFFFFF


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _M32


def _unshift(x: int, s: int) -> int:
    """The ``y`` with ``y ^ (y >> s) == x`` (32-bit)."""
    y = x
    for _ in range(32 // s):
        y = x ^ (y >> s)
    return y


def spark_hash_long(value: int) -> int:
    """Spark's ``hash`` of a ``bigint`` column value (Murmur3 over its 8 bytes, seed 42), signed,
    as its hash partitioning uses it (``spark_hash_int``'s, for ``bigint``).

    >>> spark_hash_long(0), spark_hash_long(grouping_key(5))
    (-1670924195, 5)
    """
    return _signed(murmur3_32(value, 42, 8))


@functools.cache
def grouping_key(group: int) -> int:
    """The ``bigint`` (``0 <= v < 2**32``) whose Spark ``hash`` is ``group`` (``0 <= group <
    2**31``): ``spark_hash_long`` undone step by step (each step of Murmur3 on one word is a
    bijection; the high word is 0).

    A streaming key-group pass groups its rows by this value, not by the key group itself: Spark
    hash-partitions a stateful operator's groups into its partitions (``pmod(hash(key), p)``),
    and this puts group ``g`` in partition ``g % p``, the same number of key groups in each for
    any ``p``; the key groups' own numbers put 74 of 128 in one of two partitions (1.16x the
    work of an even split in the slower task), 23 in one of eight (1.44x)."""
    if not 0 <= group < 1 << 31:
        raise ValueError(f"a group number in [0, 2**31) expected, got {group}")
    h = _unshift(group, 16)
    h = h * pow(0xC2B2AE35, -1, 1 << 32) & _M32
    h = _unshift(h, 13)
    h = h * pow(0x85EBCA6B, -1, 1 << 32) & _M32
    h = _unshift(h, 16) ^ 8
    inv5 = pow(5, -1, 1 << 32)
    h = _rotl((h - 0xE6546B64) * inv5 & _M32, 19)  # the high word's block (its k1 is 0)
    k1 = _rotl((h - 0xE6546B64) * inv5 & _M32, 19) ^ 42  # the low word's block
    k1 = _rotl(k1 * pow(0x1B873593, -1, 1 << 32) & _M32, 17)
    return k1 * pow(0xCC9E2D51, -1, 1 << 32) & _M32


def spark_hash_int(value: int) -> int:
    """Spark's ``hash`` of an ``int`` column value (Murmur3 x86 32-bit, seed 42), as its hash
    partitioning uses it (``HashPartitioning``: ``pmod(hash(columns), p)``).

    Computed here rather than asked of Spark: asking costs a Spark job (or a call into Spark's
    JVM internals, which Spark Connect does not have) when a stage is planned; the function is
    fixed (Spark's bucketed tables depend on it) and tested against Spark's own ``hash``."""
    return _signed(murmur3_32(value, 42))


def _signed(h: int) -> int:
    """The unsigned 32-bit ``h`` as Java's signed ``int``."""
    return h - (1 << 32) if h >= 1 << 31 else h
