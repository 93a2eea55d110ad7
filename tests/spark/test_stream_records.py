"""How records travel between the two passes of a streaming job (``fs_compat.spark._stream``):
the pre-pass gives each record its key group and, when the key is an ``int`` or a ``str``, the key
itself (records travel in chunks, one row per key group and batch, with their keys), so the
key-group pass does not run the key selector again; the key-group pass puts the records of its
frames back in input order whatever order and frames Spark hands them in.

The passes run in this process as Spark's workers run them: the pre-pass over the Arrow batches
of a DataFrame, the key-group function per key group over pandas frames, with PySpark's own
``GroupState``."""

from __future__ import annotations

import pickle
from collections import defaultdict
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest
from pyspark import cloudpickle
from pyspark.sql.streaming.state import GroupState
from stream_query import MapStateDict

from fs_compat.common import Duration, TimestampAssigner, Types, WatermarkStrategy
from fs_compat.datastream import MapFunction, StreamExecutionEnvironment
from fs_compat.datastream.state import ValueStateDescriptor
from fs_compat.runtime import ExternalSourceNode, KeyEncoder, LocalConfig, OperatorNode, StepError
from fs_compat.spark import spark_session
from fs_compat.spark._convert import OutputColumns
from fs_compat.spark._routing import chunk_seqs, chunks, read_chunk
from fs_compat.spark._stream import _STATE_FIELDS, Feed, _KeyGroups, _pre, _Records, _spark_schema

pytestmark = [pytest.mark.spark]

OUT = Types.TUPLE([Types.STRING(), Types.LONG(), Types.LONG()])


class RunningSum(MapFunction):
    """``(str(key), count, sum of value)`` per record, keyed by the stream's key."""

    def open(self, runtime_context: Any) -> None:
        self.state = runtime_context.get_state(
            ValueStateDescriptor("cs", Types.TUPLE([Types.LONG(), Types.LONG()]))
        )

    def map(self, value: Any) -> Any:
        count, total = self.state.value() or (0, 0)
        count, total = count + 1, total + value.value
        self.state.update((count, total))
        return (str(value.key), count, total)


class Echo(MapFunction):
    """Each record as it is; counts records per key (so the key group has a state row)."""

    def open(self, runtime_context: Any) -> None:
        self.count = runtime_context.get_state(ValueStateDescriptor("n", Types.LONG()))

    def map(self, value: Any) -> Any:
        self.count.update((self.count.value() or 0) + 1)
        return value


def _state() -> GroupState:
    """A new key group's state, as the key-group pass gets it: the state row (PySpark's
    ``GroupState``) and the buckets' ``MapState`` (``MapStateDict``)."""
    state = GroupState(
        None,  # type: ignore[arg-type]  # no state row yet
        1000,
        -1,
        "NoTimeout",
        False,
        False,
        False,
        False,
        False,
        -1,
        b"",
        _spark_schema(_STATE_FIELDS),
    )
    state.buckets = MapStateDict({})  # type: ignore[attr-defined]
    return state


def _task_copy(fn: _KeyGroups) -> _KeyGroups:
    """``fn`` as a Spark task has it: unpickled anew for every task."""
    copy: _KeyGroups = pickle.loads(cloudpickle.dumps(fn))  # type: ignore[no-untyped-call]
    return copy


def _passes(df: Any, selector: Any) -> tuple[list[pa.RecordBatch], _KeyGroups]:
    """The pre-pass's output batches over ``df`` and the key-group function of a job keyed by
    ``selector`` that runs ``RunningSum`` on ``df``'s rows."""
    env = StreamExecutionEnvironment.get_execution_environment()
    ds = env.from_dataframe(df).key_by(selector).map(RunningSum(), output_type=OUT)
    node = ds._node
    assert isinstance(node, OperatorNode)
    source = node.inputs[0].source
    assert isinstance(source, ExternalSourceNode)
    config = LocalConfig()
    batches = df.toArrow().to_batches(max_chunksize=7)
    pre = list(_pre(Feed(source, (), node), config)(iter(batches)))
    names = [f.name for f in df.schema.fields]
    return pre, _KeyGroups(node, (), config, OutputColumns(OUT), None, row_names=[names])


def _records(pre: list[pa.RecordBatch]) -> list[tuple[int, int, Any, int | None]]:
    """The records of the pre-pass's rows, in input order: ``(seq, kg, key, timestamp)`` each,
    the key None where the pre-pass did not ship it. Every record row of a source's pass is a
    chunk."""
    table = pa.Table.from_batches(pre)
    out = []
    for row in table.filter(pa.compute.field("seq") >= 0).to_pylist():
        assert row["n"] is not None and row["ts"] is None and "ki" not in row and "ks" not in row
        places, values, stamps, keys = read_chunk(row["v"])
        assert places is not None  # the pre-pass's chunks give each record's place
        seqs = chunk_seqs([row["seq"]], [places]).tolist()
        assert len(seqs) == len(values) == len(stamps) == len(keys) == row["n"] and seqs[0] == row["seq"]
        out += [(seq, row["kg"], k, t) for seq, k, t in zip(seqs, keys, stamps, strict=True)]
    return sorted(out)


def _run_groups(pre: list[pa.RecordBatch], fn: _KeyGroups, reverse: bool) -> list[tuple[Any, ...]]:
    """The key-group function over the pre-pass's rows, per key group, as pandas frames of at
    most 3 rows, records in reverse input order when ``reverse``; all outputs."""
    table = pa.Table.from_batches(pre)
    rows: dict[int, list[int]] = defaultdict(list)
    for i, kg in enumerate(table.column("kg").to_pylist()):
        rows[kg].append(i)
    outs = []
    for kg, at in rows.items():
        if reverse:
            at = at[::-1]
        part = table.take(at)
        frames = [part.slice(s, 3).to_pandas() for s in range(0, part.num_rows, 3)]
        task_copy = _task_copy(fn)  # Spark unpickles the function per task
        for frame in task_copy((kg,), iter(frames), _state()):
            outs += [tuple(r) for r in frame.itertuples(index=False)]
    return outs


def _expected(keys: list[Any], values: list[int]) -> list[tuple[Any, ...]]:
    seen: dict[Any, tuple[int, int]] = {}
    out = []
    for k, v in zip(keys, values, strict=True):
        count, total = seen.get(k, (0, 0))
        seen[k] = (count + 1, total + v)
        out.append((str(k), count + 1, total + v))
    return sorted(out)


@pytest.mark.parametrize("reverse", [False, True])
def test_str_int_and_other_keys_reach_the_key_group_pass_and_records_keep_input_order(reverse: bool) -> None:
    spark = spark_session()
    n = 40
    values = list(range(n))
    cases: list[tuple[str, Any, list[Any], str | None]] = [
        ("key STRING, value LONG", lambda r: r.key, [str(i % 5) for i in values], "ks"),
        ("key LONG, value LONG", lambda r: r.key, [i % 5 - 2 for i in values], "ki"),
        ("key LONG, value LONG", lambda r: (r.key,), [i % 5 for i in values], None),  # not shipped
        # A float key read as its field: the chunk names the key column (``column_chunks``).
        ("key DOUBLE, value LONG", lambda r: r.key, [i % 5 / 2 for i in values], "column"),
        (
            "key LONG, value LONG",
            lambda r: r.key if r.key % 2 else str(r.key),
            [i % 5 for i in values],
            "both",
        ),
    ]
    for schema, selector, keys, shipped in cases:
        df = spark.createDataFrame(list(zip(keys, values, strict=True)), schema)
        pre, fn = _passes(df, selector)
        assert fn.values_only  # the step's main output is the job's: values only, no tuple each
        records = _records(pre)
        assert [seq for seq, _kg, _k, _t in records] == list(range(n))
        wanted = [selector(type("R", (), {"key": k})()) for k in keys]
        encoder = KeyEncoder(fn.keyed.inputs[0].key_codec, 128)
        assert [kg for _s, kg, _k, _t in records] == [encoder.locate(k)[1] for k in wanted]
        shipped_keys = [k for _s, _kg, k, _t in records]
        if shipped == "ks":
            assert shipped_keys == wanted and {type(k) for k in shipped_keys} == {str}
        elif shipped == "ki":
            assert shipped_keys == wanted and {type(k) for k in shipped_keys} == {int}
        elif shipped is None:
            assert shipped_keys == [None] * n
        elif shipped == "column":
            assert shipped_keys == wanted and {type(k) for k in shipped_keys} == {float}
        else:
            assert shipped_keys == wanted
        outs = _run_groups(pre, fn, reverse)
        assert sorted(outs) == _expected([w[0] if isinstance(w, tuple) else w for w in wanted], values)


def test_the_markers_timestamps_become_the_key_groups_watermark() -> None:
    """A frame's ``ts`` column is int64 without nulls and float64 with them (pandas); either way
    records keep their order and the markers' value (the channel's watermark, which the pass
    before computed from its largest timestamp) becomes the key group's watermark; records'
    own timestamps do not move it."""
    env = StreamExecutionEnvironment.get_execution_environment()
    ds = env.from_collection([("a", 1)]).key_by(lambda v: v[0]).map(Echo(), output_type=None)
    node = ds._node
    assert isinstance(node, OperatorNode)
    fn = _KeyGroups(node, (), LocalConfig(), OutputColumns(None), None)
    kg = KeyEncoder(node.inputs[0].key_codec, 128).locate("a")[1]
    for ts, marker_ts, top in (([5, 3], 9, 9), ([5, None], None, None), ([None, None], 7, 7)):
        frame = pd.DataFrame(
            {
                "kg": pd.Series([kg] * 3, dtype="int32"),
                "seq": [1, 0, -1],
                "v": [pickle.dumps(("a", 1)), pickle.dumps(("a", 2)), None],
                "ts": pd.array([*ts, marker_ts], dtype="float64" if None in (*ts, marker_ts) else "int64"),
            }
        )
        state = _state()
        out = list(_task_copy(fn)((kg,), iter([frame]), state))
        assert [pickle.loads(v) for f in out for v in f["value"]] == [("a", 2), ("a", 1)]  # seq order
        assert _watermarks(state) == [top]


def _watermarks(state: GroupState) -> Any:
    row = state.getOption
    assert row is not None
    return row[_STATE_FIELDS.index(("wms", "array<long>"))]


class _Stamp(TimestampAssigner):
    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return int(value.value)


@pytest.mark.parametrize("with_filter", [False, True])
def test_a_channels_watermark_follows_every_timestamp_assigned_even_if_a_filter_drops_the_record(
    with_filter: bool,
) -> None:
    """The pre-pass's markers carry the channel's watermark: the largest timestamp the feed's
    ``TimestampNode`` assigned - (out-of-orderness + 1), as Flink's watermark passes a filter
    after it; the records the filter drops still count. Without the filter, the same."""
    spark = spark_session()
    df = spark.createDataFrame([("a", 5), ("b", 90), ("a", 7)], "key STRING, value LONG")
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_millis(10)).with_timestamp_assigner(
        _Stamp()
    )
    ds = StreamExecutionEnvironment.get_execution_environment().from_dataframe(df)
    ds = ds.assign_timestamps_and_watermarks(strategy)
    if with_filter:
        ds = ds.filter(lambda r: r.value < 50)  # drops the record with the largest timestamp
    node = ds.key_by(lambda r: r.key).map(Echo(), output_type=None)._node
    assert isinstance(node, OperatorNode)
    steps: list[tuple[Any, int]] = []
    upstream = node.inputs[0].source
    while not isinstance(upstream, ExternalSourceNode):  # the feed's steps, as stream_shape finds them
        steps.insert(0, (upstream, 0))
        upstream = upstream.inputs[0].source
    feed = Feed(upstream, tuple(steps), node)
    pre = list(_pre(feed, LocalConfig())(iter(df.toArrow().to_batches())))
    rows = pa.Table.from_batches(pre)
    markers = [r for r in rows.to_pylist() if r["v"] is None]
    assert sorted(t for _s, _kg, _k, t in _records(pre)) == ([5, 7] if with_filter else [5, 7, 90])
    assert len(markers) == 128 and {r["ts"] for r in markers} == {90 - 11}
    assert {r["ch"] for r in rows.to_pylist()} == {0}


@pytest.mark.parametrize("each", [True, False])
def test_a_chunk_hands_values_from_user_functions_on_as_copies(each: bool) -> None:
    """A value a user function emitted twice (or two sharing a part) reaches the next keyed step
    as two objects, as across Flink's network boundary and as when each record was its own row
    (``each``: values from the feed's steps or a keyed step); a DataFrame source's tuples of
    column values, which share nothing, travel in one pickle. Either way the values, their
    order, timestamps and keys arrive as sent."""
    part = [1]
    sent = [part, (part, 2), part] if each else [("a", 1), ("b", 2), ("a", 3)]
    kgs, seqs, vs, ns = chunks([4, 4, 4], 10, sent, [5, None, 7], ["k", None, 3], each)
    assert (kgs, seqs, ns) == ([4], [10], [3])
    frame = pd.DataFrame({"kg": kgs, "seq": seqs, "v": vs, "ts": [None], "ch": [0], "n": ns})
    [(ch, values, stamps, keys)] = _Records.of([frame]).ordered()
    assert (ch, values, stamps, keys) == (0, sent, [5, None, 7], ["k", None, 3])
    if each:
        assert values[0] is not values[2] and values[0] is not values[1][0]


def _spark_arrow(out: OutputColumns, frame: pd.DataFrame) -> Any:
    """The rows PySpark's own conversion (``PandasToArrowConversion``, as the
    ``transformWithStateInPandas`` worker calls it, the schema wrapped as it wraps it) makes of
    an output frame, or the type of the error it raises."""
    from pyspark.sql.conversion import PandasToArrowConversion
    from pyspark.sql.types import StructField, StructType

    wrapped = StructType([StructField("_0", out.schema)])
    try:
        batch = PandasToArrowConversion.convert(
            [frame], wrapped, timezone="UTC", safecheck=False, arrow_cast=True, assign_cols_by_name=True
        )
    except (TypeError, ValueError, OverflowError, pa.ArrowException) as exc:
        return type(exc)
    return pa.RecordBatch.from_struct_array(batch.column(0)).to_pylist()


def test_output_frames_hold_arrow_data_that_pyspark_converts_as_it_converted_object_columns() -> None:
    """``OutputColumns.frame`` gives a ``STRING`` or ``LONG`` column as Arrow data of its type
    (``ArrowExtensionArray``), a ``DOUBLE`` column of floats only as ``float64`` and any other
    as Python objects. PySpark's own conversion (``PandasToArrowConversion``, as the
    ``transformWithStateInPandas`` worker calls it) makes of each such frame what it makes of the
    all-object frame the key-group pass gave before: the same values and nulls (NaN in a
    ``DOUBLE`` column: null, as before). A value that does not fit (a bool for a long, an int
    beyond 64 bits), which PySpark refused without naming it, ``frame`` refuses naming the field
    and the record."""
    out = OutputColumns(Types.ROW_NAMED(["k", "n", "x"], [Types.STRING(), Types.LONG(), Types.DOUBLE()]))

    def spark_arrow(frame: pd.DataFrame) -> Any:
        return _spark_arrow(out, frame)

    arrow_string, arrow_long = "string[pyarrow]", "int64[pyarrow]"
    fitting = [
        ({"k": ["a", "b"], "n": [1, -(2**63)], "x": [0.5, float("nan")]}, "float64"),
        ({"k": ["a", None], "n": [1, None], "x": [1, 2.5]}, "object"),
    ]
    results = []
    for columns, x_type in fitting:
        frame = out.frame(columns)
        assert [str(t) for t in frame.dtypes] == [arrow_string, arrow_long, x_type]
        results.append(spark_arrow(frame))
        assert results[-1] == spark_arrow(pd.DataFrame(columns, dtype=object))
    assert results[0] == [{"k": "a", "n": 1, "x": 0.5}, {"k": "b", "n": -(2**63), "x": None}]
    assert results[1] == [{"k": "a", "n": 1, "x": 1.0}, {"k": None, "n": None, "x": 2.5}]
    misfits = [
        ({"k": ["a", "b"], "n": [True, 2**63 - 1], "x": [None, 0.25]}, "field 'n' of ('a', True, None)"),
        ({"k": ["a"], "n": [2**64], "x": [1.0]}, f"field 'n' of ('a', {2**64}, 1.0)"),
    ]
    for columns, named in misfits:
        assert isinstance(spark_arrow(pd.DataFrame(columns, dtype=object)), type)  # refused before
        with pytest.raises(TypeError) as info:
            out.frame(columns)
        assert str(info.value).startswith(f"{named} does not fit the output type RowTypeInfo(k: String")


def test_an_output_frame_refuses_an_int_beyond_its_integer_type_which_pyspark_wrapped() -> None:
    """A value of an ``INT`` output's class (an int) passes its step unchecked; beyond 32 bits,
    PySpark's conversion of an object column wrapped it silently (2**31 became -2**31, as
    ``safecheck`` is off in its worker). ``OutputColumns.frame`` refuses it, naming the value
    and the type, as the bounded target's ``record_batch`` does."""
    out = OutputColumns(Types.INT(), step="m")
    assert _spark_arrow(out, pd.DataFrame({"value": [1, 2**31]}, dtype=object)) == [
        {"value": 1},
        {"value": -(2**31)},
    ]
    with pytest.raises(StepError) as info:
        out.frame({"value": [1, 2**31]})
    assert str(info.value) == (
        "step 'm': the value 2147483648 does not fit the output type Integer: "
        "Value 2147483648 too large to fit in C integer type"
    )
    assert _spark_arrow(out, out.frame({"value": [1, -(2**31), None]})) == [
        {"value": 1},
        {"value": -(2**31)},
        {"value": None},
    ]


def test_an_output_frame_refuses_a_float_in_an_integer_column() -> None:
    """A float in a ``LONG`` column would reach Spark truncated (PySpark converts an object
    column with ``pa.Array.from_pandas``, which makes ``1.5`` ``1`` even with ``safe=True``), so
    ``OutputColumns.frame`` refuses it, naming the field, the record and the type; an integer
    column of ints and None, and a float in a ``DOUBLE`` column, are frames as before."""
    out = OutputColumns(Types.ROW_NAMED(["k", "n", "x"], [Types.STRING(), Types.LONG(), Types.DOUBLE()]))
    assert pa.Array.from_pandas(pd.Series([1.5], dtype=object), type=pa.int64()).to_pylist() == [1]
    with pytest.raises(TypeError) as info:
        out.frame({"k": ["a", "b"], "n": [1, 2.5], "x": [0.5, 1]})
    assert str(info.value) == (
        "field 'n' of ('b', 2.5, 1) does not fit the output type "
        "RowTypeInfo(k: String, n: Long, x: Double): 2.5 is a float, not an integer"
    )
    frame = out.frame({"k": ["a", "b"], "n": [1, None], "x": [0.5, 1]})
    assert pa.array(frame["n"]).to_pylist() == [1, None] and frame["x"].tolist() == [0.5, 1]
    # Inside a list (a struct, a map) too: Arrow truncates there as well.
    nested = OutputColumns(Types.ROW_NAMED(["k", "xs"], [Types.STRING(), Types.LIST(Types.LONG())]))
    assert pa.Array.from_pandas(pd.Series([[1.5]], dtype=object), type=pa.list_(pa.int64())).to_pylist() == [
        [1]
    ]
    with pytest.raises(TypeError) as info:
        nested.frame({"k": ["a"], "xs": [[1, 2.5]]})
    assert str(info.value) == (
        "field 'xs' of ('a', [1, 2.5]) does not fit the output type "
        "RowTypeInfo(k: String, xs: ListTypeInfo<Long>): 2.5 is a float, not an integer"
    )
    assert nested.frame({"k": ["a"], "xs": [[1, None]]})["xs"].tolist() == [[1, None]]


def test_records_read_frames_as_every_pandas_conversion_of_pyspark_gives_them() -> None:
    """A key group's frame of chunks and a marker (a channel's watermark) reads the same whether
    PySpark gave its integer columns with nulls as floats (its default), as objects with None
    (``integer_object_nulls``) or as ``Int64`` extension arrays (``preferIntExtensionDtype``)."""
    kgs, seqs, vs, ns = chunks(
        [4, 4, 4], 10, [("a", 1), ("b", 2), ("a", 3)], [5, None, 7], ["k", None, 3], False
    )
    table = pa.table(
        {
            "kg": pa.array([*kgs, 4], pa.int32()),
            "seq": pa.array([*seqs, -1], pa.int64()),
            "v": pa.array([*vs, None], pa.binary()),
            "ts": pa.array([None, 90], pa.int64()),
            "ch": pa.array([0, 0], pa.int32()),
            "n": pa.array([*ns, None], pa.int32()),
        }
    )
    frames = [
        table.to_pandas(),
        table.to_pandas(integer_object_nulls=True),
        table.to_pandas(types_mapper={pa.int32(): pd.Int32Dtype(), pa.int64(): pd.Int64Dtype()}.get),
    ]
    assert str(frames[2]["n"].dtype) == "Int32"
    for frame in frames:
        records = _Records.of([frame])
        assert records.ordered() == [(0, [("a", 1), ("b", 2), ("a", 3)], [5, None, 7], ["k", None, 3])]
        assert records.wms == {0: 90}
