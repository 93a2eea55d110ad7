"""Which path a bounded plan takes on Spark, and that each gives what the in-process target gives:

- a DataFrame source read by its only consumer crosses the shuffle as its own columns, read by
  a step with other inputs too it becomes pickled Rows (``_batch._stage``);
- keys the route pass found travel to the run pass (``ki`` for ints, ``ks`` for strings, none
  for other keys: the run pass calls the key selector);
- a non-keyed step fed through a forward edge runs in its upstream step's pass (chaining), and
  the step ``to_dataframe`` reads writes the output columns itself.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Iterable
from typing import Any

import pytest
from plans import optimized_plan

from fs_compat.common import Configuration, Types
from fs_compat.datastream import (
    KeyedProcessFunction,
    OutputTag,
    ProcessFunction,
    StreamExecutionEnvironment,
)
from fs_compat.datastream.state import ValueStateDescriptor
from fs_compat.runtime import upstream_of
from fs_compat.spark import spark_session
from fs_compat.spark._batch import _build_frames
from fs_compat.spark._convert import OutputColumns
from fs_compat.spark._routing import partition_keys, spark_hash_int

pytestmark = [pytest.mark.spark, pytest.mark.slow]

ODD: OutputTag[tuple[str, int]] = OutputTag("odd", Types.TUPLE([Types.STRING(), Types.LONG()]))
OUT = Types.TUPLE([Types.STRING(), Types.LONG(), Types.LONG()])


def _env(target: str) -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.configure(Configuration().set_string("execution.target", target))
    env.set_parallelism(2)
    return env


class Count(KeyedProcessFunction):
    """Per key: how many records so far; emits ``(repr(key), id, count)``."""

    def open(self, runtime_context: Any) -> None:
        self.count = runtime_context.get_state(ValueStateDescriptor("count", Types.LONG()))

    def process_element(self, value: Any, ctx: Any) -> Iterable[Any]:
        count = (self.count.value() or 0) + 1
        self.count.update(count)
        yield repr(ctx.get_current_key()), value[1], count


class SplitOdd(ProcessFunction):
    """Main output as is; odd counts also to the side output ``odd``."""

    def process_element(self, value: Any, ctx: Any) -> Iterable[Any]:
        yield value
        if value[2] % 2:
            yield ODD, (value[0], value[2])


def _mixed_key(row: Any) -> Any:
    """Ints, strings and tuples as keys (the last travel to the run pass as no key)."""
    k = row[0]
    return k if k % 3 == 0 else str(k) if k % 3 == 1 else (k, "t")


@pytest.fixture(scope="module")
def events() -> Any:
    rows = [(i % 7, i) for i in range(60)]
    return spark_session().createDataFrame(rows, "k LONG, id LONG").repartition(3)


def _job(target: str, events: Any) -> tuple[Any, Any]:
    env = _env(target)
    counted = env.from_dataframe(events).key_by(_mixed_key).process(Count(), output_type=OUT)
    split = counted.map(lambda v: v, output_type=OUT).process(SplitOdd(), output_type=OUT)
    return split, split.get_side_output(ODD)


def test_columnar_source_keys_chaining_and_output_columns_agree_with_local(events: Any) -> None:
    local_main, local_odd = _job("local", events)
    spark_main, spark_odd = _job("spark", events)
    expected = sorted(tuple(r) for r in local_main.to_dataframe().collect())
    assert len(expected) == 60 and max(r[2] for r in expected) == 9
    assert sorted(tuple(r) for r in spark_main.to_dataframe().collect()) == expected
    odd = sorted(tuple(r) for r in local_odd.to_dataframe().collect())
    assert odd and sorted(tuple(r) for r in spark_odd.to_dataframe().collect()) == odd

    # The plan: Count reads the source's columns; the map and SplitOdd run in its pass, the last
    # writing the output columns.
    config = _env("spark")._runtime_config()
    node = spark_main._node
    frames, _ = _build_frames(spark_session(), upstream_of([node]), config, (node, None, OutputColumns(OUT)))
    assert frames[node.id].output
    steps = [n for n in upstream_of([node]) if n.inputs]
    assert [n.id in frames for n in steps] == [False, False, True]  # Count, map: chained


def test_a_dataframe_source_beside_another_input_goes_as_pickled_rows(events: Any) -> None:
    """A step with two inputs (a union of the DataFrame source and a collection) and a keyed step
    after it: both targets give the same counts."""

    def job(target: str) -> list[tuple[Any, ...]]:
        env = _env(target)
        more = env.from_collection([(i % 7, 100 + i) for i in range(20)])
        both = env.from_dataframe(events).union(more).key_by(lambda v: v[0]).process(Count(), output_type=OUT)
        return sorted(tuple(r) for r in both.to_dataframe().collect())

    local = job("local")
    assert len(local) == 80
    assert job("spark") == local


def test_several_arrow_batches_per_subtask_with_watermarks_after_them() -> None:
    """A keyed step whose input fills several Arrow batches per subtask, its upstream's
    end-of-input watermarks arriving after them: the batch-at-a-time path and the row-by-row
    path (watermarks) take turns on the same subtask."""
    from pyspark.sql import functions as F  # noqa: N812

    frame = spark_session().range(0, 25_000, 1, 2).select((F.col("id") % 5).alias("k"), F.col("id"))

    def job(target: str) -> list[tuple[Any, ...]]:
        env = _env(target)
        pairs = env.from_dataframe(frame).map(lambda r: (r.k, r.id))
        counted = pairs.key_by(lambda v: v[0]).process(Count(), output_type=OUT)
        df = counted.to_dataframe()
        return [tuple(r) for r in df.groupBy("f0").agg(F.count("*"), F.max("f2"), F.sum("f1")).collect()]

    local = sorted(job("local"))
    assert local == [(repr(k), 5_000, 5_000, sum(range(k, 25_000, 5))) for k in range(5)]
    assert sorted(job("spark")) == local


def test_each_subtask_gets_its_own_spark_partition() -> None:
    """The shuffle sends subtask ``i`` to Spark partition ``i`` (hashing the subtask number itself
    would put subtasks 0 and 1 of two both in partition 1: one task doing all the work)."""
    spark = spark_session()
    for p in (1, 2, 3, 5, 8):
        keys = partition_keys(p)
        frame = spark.createDataFrame([(v,) for v in keys], "v INT")
        got = [r[0] for r in frame.selectExpr(f"pmod(hash(v), {p})").collect()]
        assert got == list(range(p)), (p, keys, got)


def test_the_spark_hash_of_an_int_is_sparks_own() -> None:
    """``spark_hash_int`` (Murmur3, seed 42, which ``partition_keys`` inverts) gives what Spark's
    ``hash`` gives for ``int`` values: small, negative and at both ends of the range."""
    values = [*range(-300, 300), 2**31 - 1, -(2**31), 2**30, -(2**30) - 7, 123_456_789, -987_654_321]
    frame = spark_session().createDataFrame([(v,) for v in values], "v INT")
    got = [r[0] for r in frame.selectExpr("hash(v)").collect()]
    assert got == [spark_hash_int(v) for v in values]


def test_timestamp_columns_cross_the_columnar_path_in_any_session_time_zone() -> None:
    """A DataFrame source with a TIMESTAMP column keeps its instants through the columnar route
    pass (Arrow needs a zone for the shuffle schema; the session's is not UTC here)."""
    import datetime

    spark = spark_session()
    instants = [datetime.datetime(2026, 1, 1, 12, 0, i, tzinfo=datetime.UTC) for i in range(4)]
    old = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "America/New_York")
    try:
        df = spark.createDataFrame(
            [(f"k{i % 2}", t) for i, t in enumerate(instants)], "k STRING, t TIMESTAMP"
        )
        env = _env("spark")
        out = (
            env.from_dataframe(df)
            .key_by(lambda r: r.k)
            .map(
                lambda r: (r.k, int(r.t.timestamp())), output_type=Types.TUPLE([Types.STRING(), Types.LONG()])
            )
        )
        got = sorted(out.execute_and_collect())
    finally:
        spark.conf.set("spark.sql.session.timeZone", old)
    assert got == sorted((f"k{i % 2}", int(t.timestamp())) for i, t in enumerate(instants))


def test_a_columnar_shuffle_carries_no_constant_columns(events: Any) -> None:
    """A DataFrame source read by its only consumer: its records cross the shuffle as ``ts``,
    ``seq``, the source's columns and the routing (``part``, ``ki``, ``ks``); the columns that
    are the same for all of them (``tag``, ``wm``, ``ch``, ``inp``) are left out."""

    def job(target: str) -> Any:
        env = _env(target)
        counted = env.from_dataframe(events).key_by(lambda r: r[0] % 7).process(Count(), output_type=OUT)
        return counted.to_dataframe()

    out = job("spark")
    plan = optimized_plan(out)
    route = next(line for line in plan.splitlines() if "route_source" in line)
    shuffled = re.findall(r"(\w+)#\d+", route.split("route_source", 1)[1].split(", [", 1)[1])
    assert shuffled == ["ts", "seq", "c0", "c1", "part", "ki", "ks"]
    assert sorted(tuple(r) for r in out.collect()) == sorted(tuple(r) for r in job("local").collect())


def _route_columns(events: Any, selector: Any) -> dict[str, list[Any]]:
    """The route pass of a keyed step reading ``events`` through ``selector``, run here on the
    DataFrame's rows as one Arrow batch: its ``part``/``ki``/``ks`` columns."""
    from fs_compat.runtime import Edge, SourceNode
    from fs_compat.spark._events import FrameSource
    from fs_compat.spark._routing import RoutePass

    table = events.toArrow()
    batch = table.combine_chunks().to_batches()[0]
    edge = Edge(SourceNode("events"), key_selector=selector)
    route = RoutePass("Count", 0, edge, 2, 128, 1, FrameSource(events, 0, 1), True).mapper()
    (out,) = list(route(iter([batch])))
    return {name: out.column(name).to_pylist() for name in ("part", "ki", "ks")}


def test_a_selector_that_returns_a_field_is_read_from_its_column(events: Any) -> None:
    """``lambda r: r[0]``, ``lambda r: r.k`` and ``itemgetter("k")`` return a field as it is:
    the route pass takes the key from the column (no Row, no call per record) and routes
    exactly as a selector it must call (``lambda r: r[0] * 1``); both targets agree."""
    import operator

    called = _route_columns(events, lambda r: r[0] * 1)
    for selector in (lambda r: r[0], lambda r: r.k, operator.itemgetter("k")):
        assert _route_columns(events, selector) == called

        def job(target: str, selector: Any = selector) -> list[tuple[Any, ...]]:
            env = _env(target)
            counted = env.from_dataframe(events).key_by(selector).process(Count(), output_type=OUT)
            return sorted(tuple(r) for r in counted.to_dataframe().collect())

        assert job("spark") == job("local")


def test_a_null_key_in_a_key_column_names_the_record() -> None:
    """A null in the key column: the route pass goes back to the Rows and fails naming the step
    and the record, as for any selector that returns None."""
    from fs_compat.runtime import StepError

    rows = spark_session().createDataFrame([(1, 10), (None, 11)], "k LONG, id LONG").coalesce(1)
    with pytest.raises(
        StepError, match=re.escape("the key selector returned None for record Row(k=None, id=11)")
    ):
        _route_columns(rows, lambda r: r.k)


def _python_passes(df: Any) -> list[str]:
    """The Python passes (mapInArrow) in ``df``'s optimized plan, outermost first."""
    plan = optimized_plan(df)
    return [
        line.split("MapInArrow ", 1)[1].split("(", 1)[0] for line in plan.splitlines() if "MapInArrow" in line
    ]


@pytest.mark.parametrize(
    ("selector", "most"),
    [
        (lambda r: r["k"], 12),
        (lambda r: r.s, 16),
        (lambda r: (r.k, r.s), 3),
        (operator.itemgetter(1, 0), 3),
        (operator.attrgetter("s", "k", "id"), 1),
    ],
    ids=["int", "str", "tuple-lambda", "tuple-itemgetter", "tuple-attrgetter"],
)
def test_records_keyed_by_an_int_or_string_column_are_routed_by_spark_alone(selector: Any, most: int) -> None:
    """A selector that returns an integer or string column as it is, or a tuple of them
    (``row_fields``), on a source without timestamps: Spark computes ``seq`` and ``part`` (its
    own hash of the key's columns) itself and the run pass reads the keys from the columns, so
    the job is one Python pass; both targets give the same counts, in each key's arrival order."""
    frame = spark_session().range(0, 80, 1, 3).selectExpr("id % 7 AS k", "concat('s', id % 5) AS s", "id")

    def job(target: str) -> Any:
        env = _env(target)
        keyed = env.from_dataframe(frame).key_by(selector)
        return keyed.process(CountId(), output_type=OUT).to_dataframe()

    spark = job("spark")
    assert _python_passes(spark) == ["run"]
    got = sorted(tuple(r) for r in spark.collect())
    assert got == sorted(tuple(r) for r in job("local").collect())
    assert len(got) == 80 and max(r[2] for r in got) == most


class CountId(KeyedProcessFunction):
    """Per key: ``(repr(key), id, count)``, and that the ids arrive in order (the source's)."""

    def open(self, runtime_context: Any) -> None:
        self.count = runtime_context.get_state(ValueStateDescriptor("count", Types.LONG()))
        self.last = runtime_context.get_state(ValueStateDescriptor("last", Types.LONG()))

    def process_element(self, value: Any, ctx: Any) -> Iterable[Any]:
        last = self.last.value()
        assert last is None or last < value.id, (last, value)
        self.last.update(value.id)
        count = (self.count.value() or 0) + 1
        self.count.update(count)
        yield repr(ctx.get_current_key()), value.id, count


def test_a_null_in_a_tuple_key_routed_by_spark_is_a_part_of_the_key_as_in_process() -> None:
    """A tuple key read from its columns: a null column is a ``None`` part of the key, which is
    what the selector gives in-process too (only a key that is None itself is refused)."""
    frame = spark_session().createDataFrame(
        [(1, "a", 10), (None, "a", 11), (None, "a", 12), (1, None, 13)], "k LONG, s STRING, id LONG"
    )

    def job(target: str) -> Any:
        env = _env(target)
        keyed = env.from_dataframe(frame.coalesce(1)).key_by(lambda r: (r.k, r.s))
        return keyed.process(CountId(), output_type=OUT).to_dataframe()

    spark = job("spark")
    assert _python_passes(spark) == ["run"]
    got = sorted(tuple(r) for r in spark.collect())
    assert got == sorted(tuple(r) for r in job("local").collect())
    assert got == [("(1, 'a')", 10, 1), ("(1, None)", 13, 1), ("(None, 'a')", 11, 1), ("(None, 'a')", 12, 2)]


def test_a_null_in_a_key_column_routed_by_spark_names_the_record() -> None:
    """A null key routed without a Python pass: the run pass calls the selector for it and fails
    naming the step and the record."""
    from fs_compat.runtime import StepError

    frame = spark_session().createDataFrame([(1, 10), (None, 11)], "k LONG, id LONG").coalesce(1)
    env = _env("spark")
    counted = env.from_dataframe(frame).key_by(lambda r: r.k).process(Count(), output_type=OUT)
    with pytest.raises(
        StepError, match=re.escape("the key selector returned None for record Row(k=None, id=11)")
    ):
        counted.execute_and_collect()


def _shown(x: int) -> int:
    print(f"in map {x}")
    return x * 2


@pytest.mark.parametrize("target", ["local", "spark"])
def test_what_a_user_function_prints_reaches_stdout(target: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``print()`` in a PyFlink function prints to this process's standard output on both
    targets: in-process as the records move, on Spark (the function runs in Spark's workers)
    after the job that ran it, before ``print()``'s lines (pyflink.md's differences table)."""
    env = _env(target)
    env.set_parallelism(1)
    env.from_collection([1, 2, 3]).map(_shown, output_type=Types.LONG()).print()
    env.execute("shown")
    lines = capsys.readouterr().out.splitlines()
    if target == "local":
        assert lines == ["in map 1", "2", "in map 2", "4", "in map 3", "6"]
    else:
        assert lines == ["in map 1", "in map 2", "in map 3", "2", "4", "6"]
