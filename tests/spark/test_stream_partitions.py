"""Which Spark partition runs each key group of a streaming key-group pass: Spark hash-partitions
a stateful operator's groups (``pmod(hash(grouping key), p)``), and the pass groups by each key
group's ``grouping_key``, whose hash is the group itself, so every partition gets the same number
of key groups (by their own numbers, 74 of 128 landed in one of two partitions)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from stream_query import run_to_parquet

from fs_compat.common import Configuration, Types
from fs_compat.datastream import StreamExecutionEnvironment
from fs_compat.runtime import flink_key_group
from fs_compat.spark import spark_session
from fs_compat.spark._routing import grouping_key, spark_hash_long

pytestmark = [pytest.mark.spark]


def test_a_grouping_key_hashes_to_its_group() -> None:
    """``grouping_key`` inverts ``spark_hash_long`` on every group number, at both ends too."""
    groups = [0, 1, 2, 127, 128, 255, 32_767, 65_535, 2**31 - 1]
    groups += random.Random(7).sample(range(2**31), 2_000)
    for g in groups:
        key = grouping_key(g)
        assert 0 <= key < 2**32 and spark_hash_long(key) == g, (g, key)
    assert len({grouping_key(g) for g in range(4_096)}) == 4_096
    with pytest.raises(ValueError, match=r"a group number in \[0, 2\*\*31\) expected, got -1"):
        grouping_key(-1)


def test_the_spark_hash_of_a_bigint_is_sparks_own() -> None:
    """``spark_hash_long`` gives what Spark's ``hash`` gives for ``bigint`` values (small,
    negative, beyond 32 bits, at both ends), and Spark's hash of a grouping key is its group."""
    values = [*range(-200, 200), 2**31, -(2**31) - 1, 2**32 - 1, 2**40 + 3, 2**63 - 1, -(2**63)]
    values += [grouping_key(g) for g in (0, 5, 127, 1_000, 2**31 - 1)]
    frame = spark_session().createDataFrame([(v,) for v in values], "v BIGINT")
    got = [r[0] for r in frame.selectExpr("hash(v)").collect()]
    assert got == [spark_hash_long(v) for v in values]
    assert got[-5:] == [0, 5, 127, 1_000, 2**31 - 1]


@pytest.mark.slow
def test_each_partition_of_a_key_group_pass_runs_as_many_key_groups(tmp_path: Path) -> None:
    """A keyed step over 3,000 int keys (every one of the 128 key groups) in a query with 4 state
    partitions: partition ``i`` runs the key groups ``g`` with ``g % 4 == i``, 32 each."""
    spark = spark_session()
    source, checkpoint, sink = tmp_path / "in", tmp_path / "ck", tmp_path / "out"
    spark.range(3_000).selectExpr("CAST(id AS INT) AS k").coalesce(1).write.parquet(str(source / "1"))
    env = StreamExecutionEnvironment.get_execution_environment()
    env.configure(Configuration().set_string("execution.target", "spark"))
    stream = spark.readStream.schema("k INT").option("maxFilesPerTrigger", 1).parquet(str(source / "*"))
    out_type = Types.ROW_NAMED(["k"], [Types.INT()])
    keyed = env.from_dataframe(stream).key_by(lambda r: r.k, key_type=Types.INT())
    df = keyed.map(lambda r: r, output_type=out_type).to_dataframe()
    before = spark.conf.get("spark.sql.shuffle.partitions")
    spark.conf.set("spark.sql.shuffle.partitions", "4")  # the query keeps it in its checkpoint
    try:
        from pyspark.sql import functions as F  # noqa: N812 - Spark's convention

        run_to_parquet(df.withColumn("part", F.spark_partition_id()), checkpoint, sink)
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", before)
    rows: list[Any] = spark.read.parquet(str(sink)).collect()
    assert sorted(r.k for r in rows) == list(range(3_000))
    groups: dict[int, set[int]] = {}
    for r in rows:  # an INT key's Java hash is its value
        groups.setdefault(r.part, set()).add(flink_key_group(r.k & 0xFFFFFFFF))
    assert {part: len(gs) for part, gs in groups.items()} == {0: 32, 1: 32, 2: 32, 3: 32}
    assert all(g % 4 == part for part, gs in groups.items() for g in gs)
