"""DataFrames in and out: ``env.from_dataframe(df)`` gives ``Row`` values with the DataFrame's
field names; ``ds.to_dataframe()`` gives a DataFrame whose schema comes from the output type.
Both targets give the same values."""

from __future__ import annotations

import pickle
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from fs_compat.common import Configuration, Row, Types
from fs_compat.datastream import KeyedProcessFunction, StreamExecutionEnvironment
from fs_compat.datastream.state import ValueStateDescriptor
from fs_compat.spark import StreamPlanError, spark_session

pytestmark = [pytest.mark.spark, pytest.mark.slow]

TARGETS = ["local", "spark"]


def _env(target: str) -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.configure(Configuration().set_string("execution.target", target))
    return env


@pytest.fixture(scope="module")
def orders() -> Any:
    spark = spark_session()
    rows = [("a", 1, 2.5), ("b", 2, 1.0), ("a", 3, 4.0), ("c", 4, 0.5), ("b", 5, 3.0)]
    return spark.createDataFrame(rows, "customer STRING, id LONG, amount DOUBLE")


class RunningTotal(KeyedProcessFunction):
    def open(self, runtime_context: Any) -> None:
        self.total = runtime_context.get_state(ValueStateDescriptor("total", Types.DOUBLE()))

    def process_element(self, value: Any, ctx: Any) -> Iterable[Any]:
        total = (self.total.value() or 0.0) + value.amount
        self.total.update(total)
        yield Row(customer=value.customer, total=total)


TOTALS = Types.ROW_NAMED(["customer", "total"], [Types.STRING(), Types.DOUBLE()])


@pytest.mark.parametrize("target", TARGETS)
def test_from_dataframe_gives_named_rows_in_input_order(orders: Any, target: str) -> None:
    ds = _env(target).from_dataframe(orders)
    assert ds.get_type() == Types.ROW_NAMED(
        ["customer", "id", "amount"], [Types.STRING(), Types.LONG(), Types.DOUBLE()]
    )
    rows = list(ds.execute_and_collect())
    assert rows == [
        Row(customer="a", id=1, amount=2.5),
        Row(customer="b", id=2, amount=1.0),
        Row(customer="a", id=3, amount=4.0),
        Row(customer="c", id=4, amount=0.5),
        Row(customer="b", id=5, amount=3.0),
    ]
    assert rows[0].customer == "a" and rows[0]["amount"] == 2.5


@pytest.mark.parametrize("target", TARGETS)
def test_keyed_job_to_dataframe_with_named_row_schema(orders: Any, target: str) -> None:
    ds = _env(target).from_dataframe(orders).key_by(lambda r: r.customer)
    df = ds.process(RunningTotal(), output_type=TOTALS).to_dataframe()
    assert [(f.name, f.dataType.simpleString()) for f in df.schema.fields] == [
        ("customer", "string"),
        ("total", "double"),
    ]
    assert sorted(tuple(r) for r in df.collect()) == [
        ("a", 2.5),
        ("a", 6.5),
        ("b", 1.0),
        ("b", 4.0),
        ("c", 0.5),
    ]


@pytest.mark.parametrize("target", TARGETS)
def test_to_dataframe_schema_follows_the_output_type(target: str) -> None:
    env = _env(target)
    pairs = env.from_collection([("x", 1), ("y", 2)], type_info=Types.TUPLE([Types.STRING(), Types.INT()]))
    df = pairs.to_dataframe()
    assert df.columns == ["f0", "f1"]
    assert sorted(tuple(r) for r in df.collect()) == [("x", 1), ("y", 2)]

    longs = env.from_collection([3, 1, 2], type_info=Types.LONG()).map(
        lambda v: v * 10, output_type=Types.LONG()
    )
    df = longs.to_dataframe()
    assert df.columns == ["value"] and df.schema.fields[0].dataType.simpleString() == "bigint"
    assert sorted(r.value for r in df.collect()) == [10, 20, 30]

    # No declared type: pickled values in a binary column, any Python object round-trips.
    objects = env.from_collection([{"k": 1}, {"k": 2}]).map(lambda d: {**d, "seen": True})
    df = objects.to_dataframe()
    assert df.schema.fields[0].dataType.simpleString() == "binary"
    values = sorted((pickle.loads(r.value) for r in df.collect()), key=lambda d: d["k"])
    assert values == [{"k": 1, "seen": True}, {"k": 2, "seen": True}]


def test_a_value_that_does_not_fit_the_output_type_names_the_step(orders: Any) -> None:
    env = _env("spark")
    env.set_parallelism(1)  # one subtask: the first record, ('a', ...), is the one that fails
    ds = env.from_dataframe(orders).map(lambda r: (r.customer,), output_type=TOTALS)
    with pytest.raises(Exception, match=r"step 'Map'.* has 2 fields, got \('a',\)"):
        ds.to_dataframe().collect()


def test_streaming_dataframe_stateless_steps_and_errors(tmp_path: Path) -> None:
    spark = spark_session()
    source = tmp_path / "in"
    spark.createDataFrame([("a", 1), ("b", 2)], "k STRING, n LONG").coalesce(1).write.parquet(
        str(source / "1")
    )
    stream = spark.readStream.schema("k STRING, n LONG").parquet(str(source / "*"))
    env = _env("spark")
    ds = env.from_dataframe(stream)
    doubled = ds.filter(lambda r: r.n > 1).map(
        lambda r: (r.k, r.n * 2), output_type=Types.TUPLE([Types.STRING(), Types.LONG()])
    )
    sink = tmp_path / "out"
    query = (
        doubled.to_dataframe()
        .writeStream.format("parquet")
        .option("checkpointLocation", str(tmp_path / "ck"))
        .trigger(availableNow=True)
        .start(str(sink))
    )
    query.awaitTermination()
    assert [tuple(r) for r in spark.read.parquet(str(sink)).collect()] == [("b", 4)]

    with pytest.raises(ValueError, match="streaming DataFrame, which never ends"):
        ds.map(lambda r: r).execute_and_collect()
    twice = ds.key_by(lambda r: r.k).reduce(lambda a, b: b).key_by(lambda r: r.k).reduce(lambda a, b: a)
    assert twice.to_dataframe().isStreaming  # two keyed steps: one query (test_streaming_chain)
    assert ds.union(ds).map(lambda r: r).to_dataframe().isStreaming  # test_streaming_connect
    with pytest.raises(StreamPlanError, match="bounded; on a streaming DataFrame every source"):
        ds.union(env.from_collection([("x", 1)])).map(lambda r: r).to_dataframe()
