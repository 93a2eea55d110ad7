"""Reading a stopped streaming query's keyed state (Flink's State Processor API, for Python).

``read_state(checkpoint_location, job)`` reads the state rows the query's keyed steps wrote into
its checkpoint (Spark's ``statestore`` data source, one state operator per keyed step) and decodes
them with the job's own state declarations. What is known here of how a key group's state is laid
out in Spark's state store is in one function, ``_group_entries``.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import math
import pickle
import weakref
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import attrs

from fs_api import ComplexKey
from fs_compat.common import Row
from fs_compat.runtime import (
    MIN_TIMESTAMP,
    KeyedStateBackend,
    KeyEncoder,
    LocalConfig,
    Node,
    Operator,
    OperatorNode,
    OperatorRuntime,
    StateKind,
    StateSpec,
    TaskInfo,
    key_group_bytes,
)

from ._stream import StreamShape, stream_shape
from ._worker import worker_pass

#: The plan behind each streaming DataFrame ``stream_dataframe`` built: its output node and
#: configuration (``remember_job``).
_JOBS: weakref.WeakKeyDictionary[Any, tuple[Node, LocalConfig]] = weakref.WeakKeyDictionary()

#: The columns of ``read_state``'s DataFrame; the last four are Spark variants (``parse_json``).
COLUMNS = ("step", "state", "key", "namespace", "user_key", "value")
_VARIANTS = COLUMNS[2:]

#: The name of the state variable of a keyed step's state row per key group, and of the map of
#: its state by bucket where there is one (``_stream._KeyGroupProcessor``).
_HEADER_VAR = "kg"
_BUCKETS_VAR = "kb"


def remember_job(df: Any, node: Node, config: LocalConfig) -> Any:
    """Remember that streaming DataFrame ``df`` runs the plan whose output is ``node`` (for
    ``read_state``); returns ``df``."""
    _JOBS[df] = (node, config)
    return df


# The layout. ----------------------------------------------------------------------------------

#: One stored state entry: state name, key bytes, namespace bytes, user (map) key bytes, value bytes.
Entry = tuple[str, bytes, bytes, bytes, bytes]


def _group_entries(header_blob: bytes, bucket_blobs: Iterable[bytes] = ()) -> Iterator[Entry]:
    """Every keyed state entry of one key group, from its state row's ``blob`` and the blobs of
    its buckets (the values of the step's ``"kb"`` map state for the key group, where it keeps
    one): the layout of ``_stream._KeyGroups._save``.

    The row's blob is a pickle of (head, event timers, processing timers[, operator states]):
    the head is the whole group's keyed state (``KeyedStateBackend.snapshot_key_group``'s bytes:
    version, signatures, {state name: [(key, namespace, user key, value)]}), or, when the group is
    cut into buckets, a tuple describing them (``_Parts.header``); each bucket blob is a pickle
    of its keys' entries, {state name: [(key, namespace, user key, value)]} (``_split``)."""
    head = pickle.loads(header_blob)[0]
    parts: Iterable[dict[str, list[tuple[bytes, bytes, bytes, bytes]]]]
    if isinstance(head, bytes | bytearray):  # the whole group (buckets, if any, are not its state)
        parts = [pickle.loads(head)[2]]
    else:
        parts = (pickle.loads(blob) for blob in bucket_blobs)
    for stores in parts:
        for name, entries in stores.items():
            for key, namespace, user_key, value in entries:
                yield name, key, namespace, user_key, value


def _broadcast_entries(header_blob: bytes) -> dict[str, dict[Any, Any]]:
    """The broadcast state in one key group's state row: the maps, by name, of the step's own
    ``snapshot_operator_state`` (the first of the row's operator states; see ``_group_entries``),
    as ``BroadcastStates.snapshot`` gives them (empty: none)."""
    fields = pickle.loads(header_blob)
    states = fields[3] if len(fields) > 3 else ()
    first = states[0] if states else None
    return dict(first) if isinstance(first, dict) else {}


# Decoding with the job's declarations. --------------------------------------------------------


def _never() -> int:
    """The clock states are read with: no TTL entry has expired (state is shown as stored)."""
    return MIN_TIMESTAMP


class _Step:
    """One keyed step's operator, opened so that it declares its states: their specs, the key
    codec and the namespace decoder."""

    def __init__(self, node: OperatorNode, config: LocalConfig) -> None:
        assert node.operator_factory is not None
        codec = next((e.key_codec for e in node.inputs if e.key_selector is not None), None)
        backend = KeyedStateBackend(KeyEncoder(codec, config.max_parallelism), clock=_never)
        p = node.parallelism or config.parallelism
        task = TaskInfo(node.name, p, 0, config.max_parallelism, 0, dict(config.job_parameters))
        self.op: Operator = node.operator_factory()
        self.op.open(OperatorRuntime(task, backend, _never))
        self.specs = dict(backend.specs)
        self.keys = backend.key_encoder

    def rows(self, kg: int, entries: Iterable[Entry]) -> Iterator[tuple[Any, ...]]:
        """``(state, key, namespace, user key, value)`` of each entry of key group ``kg``, decoded
        (``value``: what the state's ``value()``/``get()`` gives; a map state: one row per entry);
        the key, the namespace (``b""``: None) and, of an undeclared state, the raw bytes."""
        by_state: dict[str, list[tuple[bytes, bytes, bytes, bytes]]] = {}
        for name, key, ns, uk, value in entries:
            by_state.setdefault(name, []).append((key, ns, uk, value))
        for name in sorted(by_state):
            spec = self.specs.get(name)
            stored = by_state[name]
            if spec is None:
                for key, ns, uk, value in stored:
                    yield name, self.keys.decode(key), self._namespace(ns), uk or None, value
                continue
            for key, ns, uk, value in _read(spec, kg, stored):
                yield name, self.keys.decode(key), self._namespace(ns), uk, value

    def _namespace(self, ns: bytes) -> Any:
        return self.op.decode_namespace(ns) if ns else None


def _read(
    spec: StateSpec, kg: int, stored: Sequence[tuple[bytes, bytes, bytes, bytes]]
) -> Iterator[tuple[bytes, bytes, Any, Any]]:
    """``(key bytes, namespace bytes, user key, value)`` of state ``spec``'s entries ``stored``,
    read back through the state type that wrote them (so its framing, TTL and codecs apply)."""
    backend = KeyedStateBackend(clock=_never)
    store, kgb = backend.store(spec.name), key_group_bytes(kg)
    for key, ns, uk, value in stored:
        store.put(ComplexKey(kgb, key, ns, uk), value)
    factory = backend.factory_for(spec, kg)
    for key, ns in dict.fromkeys((key, ns) for key, ns, _uk, _v in stored):
        state = backend.bind(spec, factory, key, ns)
        if spec.kind is StateKind.MAP:
            for user_key, value in state.all():
                yield key, ns, user_key, value
        elif spec.kind is StateKind.LIST:
            yield key, ns, None, state.get()
        elif spec.kind is StateKind.VALUE:
            yield key, ns, None, state.value()[0]
        else:
            yield key, ns, None, state.get()[0]


def _json(value: Any) -> Any:
    """``value`` as JSON-ready data: rows with names and objects' fields become objects, tuples,
    lists and sets arrays, bytes base64 text, what JSON cannot hold its text."""
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return value if -(2**63) <= value < 2**63 else str(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, Row):
        try:
            return {k: _json(v) for k, v in value.as_dict().items()}
        except TypeError:  # a row without names
            return [_json(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _json(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_json(v) for v in value]
    if attrs.has(type(value)):
        return {f.name: _json(getattr(value, f.name)) for f in attrs.fields(type(value))}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _json(getattr(value, f.name)) for f in dataclasses.fields(value)}
    fields = getattr(value, "__dict__", None)
    if isinstance(fields, dict) and fields:
        return {k: _json(v) for k, v in fields.items() if not k.startswith("_")}
    return str(value)


def _text(value: Any) -> str:
    return json.dumps(_json(value), allow_nan=False, separators=(",", ":"))


class _Decode:
    """The ``mapInArrow`` pass that decodes the state rows of one keyed step: rows of ``kg``,
    ``blob`` (the header) and ``buckets`` (a list of bucket blobs, or null) in, rows of
    ``COLUMNS`` (JSON text) out."""

    def __init__(self, label: str, node: OperatorNode, config: LocalConfig) -> None:
        self.label = label
        self.node = node
        self.config = config

    @worker_pass
    def __call__(self, batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        step: _Step | None = None
        schema = _arrow_schema()
        for batch in batches:
            cols: dict[str, list[Any]] = {name: [] for name in COLUMNS}
            for kg, blob, buckets in zip(*(batch.column(i).to_pylist() for i in range(3)), strict=True):
                if step is None:
                    step = _Step(self.node, self.config)
                for state, key, ns, uk, value in step.rows(kg, _group_entries(blob, buckets or ())):
                    cols["step"].append(self.label)
                    cols["state"].append(state)
                    cols["key"].append(_text(key))
                    cols["namespace"].append(None if ns is None else _text(ns))
                    cols["user_key"].append(None if uk is None else _text(uk))
                    cols["value"].append(_text(value))
            yield pa.RecordBatch.from_pydict(cols, schema=schema)


class _DecodeBroadcast:
    """The ``mapInArrow`` pass (over one partition) that reads a step's broadcast state from its
    state rows (``kg``, ``blob``): one copy, that of the lowest key group holding any (every
    parallel instance, every key group of a keyed step, gets every broadcast record), one row
    per map entry."""

    def __init__(self, label: str) -> None:
        self.label = label

    @worker_pass
    def __call__(self, batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        found: tuple[int, dict[str, dict[Any, Any]]] | None = None
        for batch in batches:
            for kg, blob in zip(batch.column(0).to_pylist(), batch.column(1).to_pylist(), strict=True):
                maps = _broadcast_entries(blob)
                if maps and (found is None or kg < found[0]):
                    found = (kg, maps)
        cols: dict[str, list[Any]] = {name: [] for name in COLUMNS}
        for name, entries in sorted(found[1].items()) if found else ():
            for user_key, value in entries.items():
                cols["step"].append(self.label)
                cols["state"].append(name)
                cols["key"].append(None)
                cols["namespace"].append(None)
                cols["user_key"].append(_text(user_key))
                cols["value"].append(_text(value))
        yield pa.RecordBatch.from_pydict(cols, schema=_arrow_schema())


def _arrow_schema() -> Any:
    import pyarrow as pa

    return pa.schema([(name, pa.string()) for name in COLUMNS])


# Steps and Spark's state operators. -----------------------------------------------------------


def operator_order(shape: StreamShape) -> list[tuple[OperatorNode, ...]]:
    """The stages of ``shape`` (``StreamShape.stages``: usually one keyed step each) in the order
    of their state operators' ids in the query's checkpoint. Spark numbers stateful operators as
    it walks the physical plan from the output down, each node before its children, children in
    order: the output's feeds in ``shape.outputs()`` order (``stream_dataframe`` unions them
    so), and each stage before the stages it reads, in ``shape.reads`` order (its input's
    union)."""
    order: list[int] = []

    def visit(stage: int) -> None:
        for up in shape.reads(stage):
            if up not in order:
                order.append(up)
                visit(up)

    for feed in shape.outputs():
        if feed.source is None:
            stage = shape.stage_of(feed.start)
            order.append(stage)
            visit(stage)
    return [shape.stages[i] for i in order]


def _job_of(job: Any) -> tuple[Node, LocalConfig]:
    found = _JOBS.get(job) if _weakrefable(job) else None
    if found is None and callable(getattr(job, "to_dataframe", None)):
        df = job.to_dataframe()
        found = _JOBS.get(df) if _weakrefable(df) else None
    if found is None:
        raise TypeError(
            "read_state needs the job the query ran: the streaming DataFrame fs-compat built for it "
            "(to_dataframe()'s), or the stream it was built from (a DataStream); got "
            f"{type(job).__name__}"
        )
    return found


def _weakrefable(obj: Any) -> bool:
    try:
        weakref.ref(obj)
    except TypeError:
        return False
    return True


def step_labels(steps: Sequence[Node]) -> dict[int, str]:
    """Each step's ``step`` column (by node id): its uid, else its name; a label used again gets
    ``-2``, ``-3`` ... in the order of ``steps`` (the job's, upstream first).

    >>> sorted(step_labels([Node("count"), Node("count", uid="c"), Node("count")]).values())
    ['c', 'count', 'count-2']
    """
    labels: dict[int, str] = {}
    for node in steps:
        base = node.uid or node.name
        label, n = base, 1
        while label in labels.values():
            n += 1
            label = f"{base}-{n}"
        labels[node.id] = label
    return labels


def read_state(checkpoint_location: str, job: Any, *, batch_id: int | None = None) -> Any:
    """The keyed state of a stopped streaming query, as a Spark DataFrame (Flink's State
    Processor API; PyFlink and Bytewax have nothing like it).

    ``checkpoint_location`` is the query's ``checkpointLocation``; ``job`` what the query was
    built from: the streaming DataFrame fs-compat returned (``DataStream.to_dataframe()``,
    ``fs_compat.bytewax.to_dataframe(...)``), or the ``DataStream`` whose ``to_dataframe()`` it
    was (a job started by ``env.execute()`` with a connector sink: the stream given to the sink,
    and the sink's folder under ``execution.checkpointing.dir``). Its steps are opened (their
    ``open()`` runs, in this process and in Spark's workers) so that they declare their states,
    whose descriptors decode what is stored. The state is that of the latest committed
    micro-batch, or of ``batch_id`` while the checkpoint still holds it.

    One row per stored value, with columns:

    - ``step`` (string): the keyed step's uid, else its name (a label used again gets ``-2``,
      ``-3`` ..., in the job's order, upstream first);
    - ``state`` (string): the state's name (a window step also shows its own states:
      ``window-contents``, and ``window-event-timers``/``window-processing-timers``, the windows
      waiting for each timer);
    - ``key``: the key; ``namespace``: the window of per-window state, else null; ``user_key``:
      a ``MapState``'s key (one row per map entry), else null;
    - ``value``: what the state gives the job's code: ``value()`` of a ``ValueState``, ``get()``
      of a ``ListState`` (the whole list, one row per key and window), of a ``ReducingState``
      and of an ``AggregatingState`` (the result, not the accumulator), a map entry's value.

    ``key``, ``namespace``, ``user_key`` and ``value`` are Spark variants (``VariantType``), as
    states hold values of different types: read them with ``variant_get(value, '$.field',
    'int')``, ``cast(key as string)``, or ``row.value.toPython()`` after ``collect()``.
    Values become variants through JSON: a ``Row`` with field names, a window and another
    object with fields become objects, tuples arrays, bytes base64 text. State entries are shown
    as stored: a TTL entry that expired but was not cleaned up yet is there. State a step does
    not declare in ``open()`` (a state first asked for in ``process_element``, a trigger's or a
    ``ProcessWindowFunction``'s per-window state) cannot be decoded: its ``user_key`` and
    ``value`` are the stored bytes (base64), its key and namespace are decoded.

    A step that reads a broadcast stream also gives its broadcast state (Flink's
    ``readBroadcastState``): one row per entry of each broadcast map, ``state`` the
    ``MapStateDescriptor``'s name, ``key`` and ``namespace`` null, ``user_key`` the map's key.
    Every parallel instance (on a keyed step, every key group) keeps its own copy, built from the
    same broadcast records: the copy read is the lowest key group's.
    """
    from pyspark.sql import functions as F  # noqa: N812 - Spark's convention

    from ._session import spark_session

    node, config = _job_of(job)
    shape = stream_shape(node)
    stages, labels = operator_order(shape), step_labels(shape.keyed)
    spark = spark_session()
    schema = ", ".join(f"{c} string" for c in COLUMNS)
    frames = []
    if stages:
        operators = _state_operators(spark, checkpoint_location)
        if len(operators) != len(stages):
            raise ValueError(
                f"the checkpoint at {checkpoint_location} holds the state of {len(operators)} "
                f"stages of keyed steps, the job has {len(stages)} "
                f"({', '.join(' + '.join(labels[s.id] for s in stage) for stage in shape.stages)}): "
                "it is not this job's checkpoint"
            )
        n = config.max_parallelism
        for (op_id, variables), stage in zip(operators, stages, strict=True):
            rows = _state_rows(spark, checkpoint_location, op_id, variables, batch_id)
            for slot, step in enumerate(stage):
                if len(stage) > 1:  # the step's range of the stage's groups, as its key groups
                    kg = F.col("kg")
                    mine = (kg >= slot * n) & (kg < (slot + 1) * n)
                    step_rows = rows.where(mine).withColumn("kg", kg - slot * n)
                else:
                    step_rows = rows
                frames.append(step_rows.mapInArrow(_Decode(labels[step.id], step, config), schema))
                if any(edge.broadcast for edge in step.inputs):
                    heads = step_rows.select("kg", "blob").coalesce(1)  # a row per key group at most
                    frames.append(heads.mapInArrow(_DecodeBroadcast(labels[step.id]), schema))
    df = frames[0] if frames else spark.createDataFrame([], schema)
    for other in frames[1:]:
        df = df.union(other)
    return df.select("step", "state", *(F.parse_json(c).alias(c) for c in _VARIANTS))


def _state_operators(spark: Any, checkpoint_location: str) -> list[tuple[int, set[str]]]:
    """The keyed steps' state operators in the checkpoint: each one's id and state variables,
    by id."""
    meta = spark.read.format("state-metadata").load(checkpoint_location).collect()
    found: list[tuple[int, set[str]]] = []
    for row in sorted(meta, key=lambda r: r.operatorId):
        if "transformWithState" not in row.operatorName:
            continue
        props = json.loads(row.operatorProperties or "{}")
        variables = {v.get("stateName") for v in props.get("stateVariables", [])}
        if _HEADER_VAR in variables:
            found.append((int(row.operatorId), {str(v) for v in variables}))
    return found


def _state_rows(
    spark: Any, checkpoint_location: str, op_id: int, variables: set[str], batch_id: int | None
) -> Any:
    """One row per key group of state operator ``op_id``: ``kg``, ``blob`` (the header's) and
    ``buckets`` (its bucket blobs, or null)."""
    from pyspark.sql import functions as F  # noqa: N812 - Spark's convention

    def read(var: str) -> Any:
        reader = spark.read.format("statestore").option("operatorId", op_id).option("stateVarName", var)
        if batch_id is not None:
            reader = reader.option("batchId", batch_id)
        return reader.load(checkpoint_location)

    # The rows are keyed by each group's ``grouping_key``, whose Spark hash is the group.
    header = read(_HEADER_VAR).select(F.hash("key.kg").alias("kg"), F.col("value.blob").alias("blob"))
    if _BUCKETS_VAR not in variables:
        return header.withColumn("buckets", F.lit(None).cast("array<binary>"))
    buckets = read(_BUCKETS_VAR)
    field = next(
        f.name for f in buckets.schema["user_map_value"].dataType.fields if f.dataType.typeName() == "binary"
    )
    grouped = buckets.groupBy(F.hash("key.kg").alias("kg")).agg(
        F.collect_list(F.col(f"user_map_value.{field}")).alias("buckets")
    )
    return header.join(grouped, "kg", "left")
