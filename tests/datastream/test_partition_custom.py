"""``DataStream.partition_custom(partitioner, key_selector)`` with Flink's semantics: each value
goes to the parallel instance of the next step that the partitioner picks from the value's key
and the next step's parallelism; a bad index fails the job naming the step, the record and the
partitioner. In-process here; one Spark test runs the same job on the ``spark`` target."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fs_compat.common import Configuration, Types
from fs_compat.datastream import StreamExecutionEnvironment
from fs_compat.datastream.functions import KeySelector, MapFunction, Partitioner, RuntimeContext
from fs_compat.runtime import StepError

ROWS = [("a", 0), ("b", 0), ("c", 1), ("d", 1), ("e", 2), ("f", 7), ("g", 7), ("h", 8), ("i", 8), ("j", 9)]


class Where(MapFunction):
    """Tags each value with the index of the instance that saw it, and how many values that
    instance saw before it (per-instance state, which is where partitioning shows)."""

    def open(self, runtime_context: RuntimeContext) -> None:
        self.index = runtime_context.get_index_of_this_subtask()
        self.parallelism = runtime_context.get_number_of_parallel_subtasks()
        self.seen = 0

    def map(self, value: Any) -> Any:
        self.seen += 1
        return value[0], value[1], self.index, self.parallelism, self.seen


class ModPartitioner(Partitioner):
    def partition(self, key: int, num_partitions: int) -> int:
        return key % num_partitions


class Second(KeySelector):
    def get_key(self, value: Any) -> int:
        return int(value[1])


def _env(target: str = "local") -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.configure(Configuration().set_string("execution.target", target))
    env.set_parallelism(2)
    return env


def _job(env: StreamExecutionEnvironment, partitioner: Any, key_selector: Any, p: int = 5) -> list[Any]:
    ds = env.from_collection(ROWS, type_info=Types.ROW([Types.STRING(), Types.INT()]))
    partitioned = ds.map(lambda x: x, output_type=Types.ROW([Types.STRING(), Types.INT()]))
    partitioned = partitioned.set_parallelism(4).partition_custom(partitioner, key_selector)
    return sorted(partitioned.map(Where()).set_parallelism(p).execute_and_collect(limit=len(ROWS)))


def _expected(p: int = 5) -> list[tuple[str, int, int, int, int]]:
    # In order per instance: every instance receives its values in the source's order here
    # (one upstream instance feeds each downstream one through the partitioner in order).
    seen: dict[int, int] = {}
    out = []
    for name, n in ROWS:
        index = n % p
        seen[index] = seen.get(index, 0) + 1
        out.append((name, n, index, p, seen[index]))
    return sorted(out)


def _instances(result: list[Any]) -> dict[str, int]:
    return {name: index for name, _, index, _, _ in result}


def test_each_value_goes_to_the_instance_the_partitioner_picks_from_its_key_and_the_parallelism() -> None:
    result = _job(_env(), ModPartitioner(), Second())
    assert result == _expected()
    assert _instances(result) == {name: n % 5 for name, n in ROWS}
    assert {r[3] for r in result} == {5}
    # Each instance saw exactly the values routed to it (its own count runs 1..k).
    for index in range(5):
        counts = sorted(r[4] for r in result if r[2] == index)
        assert counts == list(range(1, len(counts) + 1))


def test_callables_serve_as_partitioner_and_key_selector_and_num_partitions_is_the_next_parallelism() -> None:
    calls: list[int] = []

    def by_second(key: int, num_partitions: int) -> int:
        calls.append(num_partitions)
        return (key * 7) % num_partitions

    result = _job(_env(), by_second, lambda row: row[1], p=3)
    assert _instances(result) == {name: (n * 7) % 3 for name, n in ROWS}
    assert set(calls) == {3}


def test_the_stream_is_not_keyed_and_key_by_after_it_partitions_by_its_own_key() -> None:
    env = _env()
    ds = env.from_collection([1, 2, 3, 4, 5, 6]).partition_custom(lambda k, n: 0, lambda v: v)
    summed = ds.key_by(lambda v: v % 2).reduce(lambda a, b: a + b)
    assert sorted(summed.execute_and_collect(limit=6)) == [1, 2, 4, 6, 9, 12]


@pytest.mark.parametrize("bad", [5, -1, True, "0", None])
def test_an_index_outside_the_next_steps_instances_fails_naming_the_step_record_and_partitioner(
    bad: Any,
) -> None:
    def partition(key: Any, num_partitions: int) -> Any:
        return bad

    with pytest.raises(StepError) as info:
        _job(_env(), partition, lambda row: row[1])
    text = str(info.value)
    assert "step 'Map'" in text
    assert f"returned {bad!r} for record Row(f0='a', f1=0)" in text
    assert "[0, 5)" in text
    assert "partition (test_partition_custom.py:" in text


def test_a_failing_partitioner_fails_the_job_with_its_error_as_the_cause() -> None:
    def partition(key: Any, num_partitions: int) -> int:
        raise ValueError(f"no partition for {key}")

    with pytest.raises(StepError, match=r"custom partitioner raised ValueError: no partition for 0") as info:
        _job(_env(), partition, lambda row: row[1])
    assert isinstance(info.value.__cause__, ValueError)


def test_arguments_are_checked_as_pyflink_checks_them() -> None:
    ds = _env().from_collection([1])
    with pytest.raises(TypeError, match="partitioner should be type of Partitioner or a callable"):
        ds.partition_custom(3, lambda v: v)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="key_selector should be type of KeySelector or a callable"):
        ds.partition_custom(lambda k, n: 0, "f0")  # type: ignore[arg-type]
    with pytest.raises(Exception, match="Cannot override partitioning for KeyedStream"):
        ds.key_by(lambda v: v).partition_custom(lambda k, n: 0, lambda v: v)


@pytest.mark.spark
@pytest.mark.classic_only  # Connect slice: README
def test_on_spark_each_value_reaches_the_same_instance_as_in_process() -> None:
    local = _job(_env(), ModPartitioner(), Second())
    assert _job(_env("spark"), ModPartitioner(), Second()) == local == _expected()
    assert _job(_env("spark"), ModPartitioner(), Second(), p=1) == _expected(1)


@pytest.mark.spark
@pytest.mark.classic_only  # CI time: the streaming plan is the same over Connect
def test_on_a_streaming_source_each_value_reaches_the_same_instance_as_in_process(tmp_path: Path) -> None:
    """On a streaming DataFrame the partitioned step runs one group per parallel instance
    (``fs_compat.spark._stream.groups_of``): the partitioner picks the instance, as in-process."""
    from stream_query import run_to_parquet

    from fs_compat.spark import spark_session

    spark = spark_session()
    schema = "f0 STRING, f1 INT"
    spark.createDataFrame(ROWS, schema).coalesce(1).write.parquet(str(tmp_path / "in"))
    env = _env("spark")
    ds = env.from_dataframe(spark.readStream.schema(schema).parquet(str(tmp_path / "in")))
    partitioned = ds.map(lambda x: x, output_type=Types.ROW([Types.STRING(), Types.INT()]))
    partitioned = partitioned.set_parallelism(4).partition_custom(ModPartitioner(), Second())
    out_type = Types.TUPLE([Types.STRING(), Types.INT(), Types.INT(), Types.INT(), Types.INT()])
    job = partitioned.map(Where(), output_type=out_type).set_parallelism(5)
    run_to_parquet(job.to_dataframe(), tmp_path / "ck", tmp_path / "out")
    got = sorted(tuple(r) for r in spark.read.parquet(str(tmp_path / "out")).collect())
    assert got == _expected()
